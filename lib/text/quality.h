/*
 * quality.h — the document quality rules of llm-clean, with their published defaults:
 * length, Gopher quality and repetition, C4, FineWeb, ChineseWebText, source-code rules and
 * encoding damage. lib/text/filter.h turns them into the table of filter steps that recipes
 * and --set name.
 *
 * Every web rule mirrors the reference its name comes from, including its arithmetic, so that
 * the same thresholds give the same keep/drop decisions:
 *   Gopher  Rae et al. 2021 (arXiv:2112.11446) §A.1.1, Table A1; as datatrove's
 *           GopherQualityFilter / GopherRepetitionFilter compute them.
 *   C4      Raffel et al. 2020 (JMLR 21:140) §2.2; datatrove's C4QualityFilter defaults.
 *   FineWeb Penedo et al. 2024 (arXiv:2406.17557) §3.5; datatrove's FineWebQualityFilter.
 *   FW2     FineWeb-2 (huggingface/fineweb-2: fineweb-2-pipeline.py and configs/LANG.yml, in
 *           lib/text/fineweb2/): the values and stop words of llm_quality_defaults(p, lang)
 *           for its languages (ar zh de fr id it ja ko nl pl pt ru es tr vi).
 *   ChineseWebText  Chen et al. 2023 (arXiv:2311.01149) §3.1, CASIA-LM/ChineseWebText
 *           preprocess.py: mean line length, share of Han characters, repeated 13-grams.
 *   Code    StarCoder2 / The Stack v2 (Lozhkov et al. 2024, arXiv:2402.19173) §2.1, "Basic
 *           filters": line counts and lengths, alphabetic share, auto-generated files, encoded
 *           data.
 * Lengths are counted in code points (as Python's len), ratios use the same numerators and
 * denominators as the references, and the first failing rule, in the reference's order,
 * decides the reason.
 *
 * Words come from lib/text/words.h: spaCy's English rules, or a segmenter's words for
 * Chinese. Without a segmenter a Han or kana character is one word; since FineWeb-2's CJK
 * thresholds count the words of a segmenter (about two characters each), the repetition
 * rules then take an n-gram of a zh/ja document as a run of 2n characters, joined without
 * spaces. With a segmenter n-grams are n words joined by spaces, as datatrove joins them.
 *
 * Memory: an llm_quality holds scratch arrays that grow to the largest document seen (about
 * 40 bytes per word). Not thread safe: one llm_quality per thread; parameters are read only.
 */
#ifndef LLM_QUALITY_H
#define LLM_QUALITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "words.h"
#include "wordset.h"

/* A rule that a document failed: reason code (static string), the measured value and the
 * threshold it crossed. */
typedef struct {
	const char *reason;
	double value;
	double threshold;
} llm_verdict;

/* The thresholds of every rule (0 disables a ratio rule, as None does in datatrove; the
 * parameter table's bounds refuse negative values). The comments give the English defaults. */
typedef struct {
	/* length */
	int min_chars, max_chars;                /* 50 code points, 0 = no maximum */
	int min_words;                           /* 0 */
	/* Gopher quality */
	double min_doc_words, max_doc_words;     /* 50, 100000 words that are not only punctuation */
	double min_avg_word_len, max_avg_word_len; /* 3, 10 */
	double max_symbol_word_ratio;            /* 0.1: '#' per word, and ("..." + "…") per word */
	double max_bullet_lines_ratio;           /* 0.9: lines starting with '•' or '-' */
	double max_ellipsis_lines_ratio;         /* 0.3: lines ending with "..." or "…" */
	double min_alpha_words_ratio;            /* 0.8: words containing a letter */
	int min_stop_words;                      /* 2 distinct stop words */
	const llm_wordset *stop_words;           /* a list, or NULL for builtin_stop */
	const char *const *builtin_stop;         /* NULL-terminated; set by llm_quality_defaults:
	                                            en: Gopher's the be to of and that have with;
	                                            others: their FineWeb-2 config's list */
	bool reject_unconfigured_lang;           /* true: a language without settings is
	                                            rejected as lang_not_configured */
	bool lang_configured;                    /* the language has settings: built in, or a
	                                            recipe section names it (not a parameter) */
	unsigned word_rules;                     /* LLM_WORDS_* of the language (0: English, and
	                                            languages judged as English) */
	/* Gopher repetition */
	double dup_para_frac, dup_para_char_frac;  /* 0.3, 0.2 */
	double dup_line_frac, dup_line_char_frac;  /* 0.3, 0.2 */
	double top_ngram_frac[3];                  /* n = 2, 3, 4: 0.20, 0.18, 0.16 */
	double dup_ngram_frac[6];                  /* n = 5..10: 0.15 0.14 0.13 0.12 0.11 0.10 */
	/* C4 (line rules drop lines; page rules drop the document) */
	bool c4_remove_citations;          /* "[1]", "[edit]", "[citation needed]" removed */
	bool c4_terminal_punct;            /* keep only lines ending in . ? ! " ' (not "...") */
	int c4_min_words_per_line;         /* 3 (white-space separated words) */
	int c4_max_word_len;               /* 1000: drop lines with a longer word */
	int c4_min_sentences;              /* 5 (after line filtering); -1 disables */
	bool c4_lorem_ipsum, c4_javascript, c4_curly_bracket, c4_policy;
	/* FineWeb */
	double fw_line_punct_thr;          /* 0.12: fraction of lines ending in terminal punctuation */
	double fw_short_line_thr;          /* 0.67 */
	int fw_short_line_len;             /* 30 code points */
	double fw_char_dup_ratio;          /* 0.01 (FineWeb-2: 0.1) */
	double fw_new_line_ratio;          /* 0.3: newlines per word */
	/* ChineseWebText */
	double cwt_min_avg_line_len;       /* 10 code points per line (text length / lines) */
	double cwt_min_han_ratio;          /* 0.3: U+4E00..U+9FA5 over all code points */
	double cwt_max_rep_ngram_frac;     /* 0.5: character n-grams seen more than once */
	int cwt_ngram;                     /* 13 */
	/* source code */
	int code_max_lines;                /* 100000 lines */
	int code_max_line_len;             /* 1000 code points */
	double code_max_mean_line_len;     /* 100 */
	double code_min_alpha_ratio;       /* 0.25: letters over all code points */
	bool code_autogenerated;           /* "auto-generated", ... in the first five lines */
	double code_max_encoded_frac;      /* 0.5: base64, hex and \u escape runs over the text */
	int code_max_encoded_run;          /* 1024: ... or one run that long */
	/* encoding damage */
	double max_replacement_ratio;      /* 0.01: U+FFFD per code point */
	double max_mojibake_ratio;         /* 0.01: UTF-8 read as Latin-1/cp1252, per code point */
	/* CJK: the C4 line rule also ends lines at 。！？；…」』 and counts characters as words */
	bool cjk;
} llm_quality_params;

/* Published defaults for a language tag (its primary subtag, two or three letters: "de",
 * "de-AT", "deu", "deu_Latn"): English and no language (NULL, "", "und") get the Gopher, C4 and
 * FineWeb values above; each FineWeb-2 language gets its config's values where FineWeb-2 has
 * them (including the rules its pipeline disables: duplicate paragraphs, duplicate line
 * characters, short lines) and its stop words; every Chinese tag (llm_quality_is_zh) is
 * cmn_Hani. zh and ja get cjk = true. Any other language gets the English column with
 * lang_configured = false. stop_words is NULL (the built-in list is used). The values are the
 * columns of the parameter table (filter.h, llm_filter_params), the one place they are
 * written. */
void llm_quality_defaults(llm_quality_params *p, const char *lang);

/* The column of the parameter table for a language tag (LLM_FILTER_EN for English, no
 * language and languages without settings), and whether it has settings. */
int llm_quality_lang_column(const char *lang, bool *configured);

/* false with "lang_not_configured" when the document's language has no settings and
 * reject_unconfigured_lang is on: run before the steps whose stop words and word lengths are
 * per language (gopher-quality). */
bool llm_quality_lang(const llm_quality_params *p, llm_verdict *v);

/* True for the language tags llm_quality_defaults treats as Chinese. */
bool llm_quality_is_zh(const char *lang);

typedef struct llm_quality llm_quality;
llm_quality *llm_quality_new(void);
/* Words of the next texts split with the LLM_WORDS_* rules of a language (0, the default:
 * English): llm_filter_run sets them from llm_quality_params.word_rules. */
void llm_quality_set_word_rules(llm_quality *q, unsigned rules);
void llm_quality_free(llm_quality *q);

/* Set the document the next calls inspect and split it into words (seg: NULL, or the
 * segmenter for text written without spaces, see words.h). s must stay valid and unchanged
 * until the next set_text; it must be valid UTF-8 (ill-formed bytes count as one U+FFFD code
 * point each). */
void llm_quality_set_text(llm_quality *q, const char *s, size_t n, const llm_segmenter *seg);

/* Make the output of the last llm_quality_c4 that kept its document (now at s[0..n), moved but
 * unchanged) the current text, with the same segmenter. Its code points, and the words of the
 * lines C4 kept, are carried over, so the rules that follow neither count nor split the text
 * again; the result is the same as llm_quality_set_text's. */
void llm_quality_set_edited(llm_quality *q, const char *s, size_t n);

/* Words of the current text: count, and word i as bytes. */
size_t llm_quality_nwords(llm_quality *q);
const char *llm_quality_word(llm_quality *q, size_t i, size_t *len);

/* The rules. Each returns true to keep; false fills *v with the first rule failed. */
bool llm_quality_length(llm_quality *q, const llm_quality_params *p, llm_verdict *v);
bool llm_quality_gopher(llm_quality *q, const llm_quality_params *p, llm_verdict *v);
bool llm_quality_repetition(llm_quality *q, const llm_quality_params *p, llm_verdict *v);
bool llm_quality_fineweb(llm_quality *q, const llm_quality_params *p, llm_verdict *v);
bool llm_quality_cwt(llm_quality *q, const llm_quality_params *p, llm_verdict *v);
bool llm_quality_code(llm_quality *q, const llm_quality_params *p, llm_verdict *v);
bool llm_quality_encoding(llm_quality *q, const llm_quality_params *p, llm_verdict *v);
/*
 * C4: line rules first (lines are trimmed; a kept line is written to out, lines joined by
 * '\n'), then page rules. Counts of lines dropped per rule are added to stats[] in the order
 * of llm_quality_c4_lines (may be NULL). Sentences are counted per kept line by the
 * sentencizer rule (a new sentence after a '.', '!', '?' or CJK terminal token followed by a
 * word).
 */
#define LLM_QUALITY_C4_NLINES 5
bool llm_quality_c4(llm_quality *q, const llm_quality_params *p, llm_buf *out,
                    uint64_t stats[LLM_QUALITY_C4_NLINES], llm_verdict *v);
/* Names of the per-line counters of llm_quality_c4: too_long_word, no_terminal_punct,
 * too_few_words, javascript, policy. */
extern const char *const llm_quality_c4_lines[LLM_QUALITY_C4_NLINES];

#endif
