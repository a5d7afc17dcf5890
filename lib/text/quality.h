/*
 * quality.h — document quality heuristics: word splitting (CJK aware), Gopher quality, Gopher
 * repetition, C4 line/page rules and FineWeb line rules, with their published defaults.
 *
 * Every rule mirrors the reference its name comes from, including its arithmetic, so that the
 * same thresholds give the same keep/drop decisions:
 *   Gopher  Rae et al. 2021 (arXiv:2112.11446) §A.1.1, Table A1; as datatrove's
 *           GopherQualityFilter / GopherRepetitionFilter compute them.
 *   C4      Raffel et al. 2020 (JMLR 21:140) §2.2; datatrove's C4QualityFilter defaults.
 *   FineWeb Penedo et al. 2024 (arXiv:2406.17557) §3.5; datatrove's FineWebQualityFilter.
 *   CJK     FineWeb-2 per-language configs (huggingface/fineweb-2 configs/cmn_Hani.yml,
 *           jpn_Jpan.yml): the thresholds of llm_quality_defaults(p, "zh"/"ja").
 * Lengths are counted in code points (as Python's len), ratios use the same numerators and
 * denominators as the references, and the first failing rule, in the reference's order,
 * decides the reason.
 *
 * Words (llm_quality_set_text): the text is split on white space, then punctuation is split
 * off by rules modelled on spaCy's English tokenizer (the one datatrove uses for English):
 * leading quotes/brackets/currency, trailing punctuation and "'s", contractions ("don't" ->
 * "do" "n't"), hyphens and slashes between letters; URLs, e-mail addresses, numbers such as
 * "3.5" and abbreviations such as "U.S." stay whole. Han and Kana characters are one word each
 * (Chinese and Japanese have no spaces; counting characters is the documented segmentation);
 * Hangul words are space separated like Latin ones. Because FineWeb-2's CJK thresholds count
 * the words of a segmenter (about two characters each), the repetition rules take an n-gram
 * of a zh/ja document as a run of 2n characters, joined without spaces.
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

/* A set of words (stop words), exact byte comparison. */
typedef struct llm_wordset llm_wordset;
llm_wordset *llm_wordset_new(void);
void llm_wordset_free(llm_wordset *ws);
void llm_wordset_add(llm_wordset *ws, const char *w, size_t n);
/* Add one word per line of a file; blank lines and lines starting with '#' are skipped.
 * LLM_EIO / LLM_EFORMAT (invalid UTF-8) with detail naming the file and line. */
int llm_wordset_load(llm_wordset *ws, const char *path);
/* Index of w (0..size-1) or -1. */
int llm_wordset_find(const llm_wordset *ws, const char *w, size_t n);
size_t llm_wordset_size(const llm_wordset *ws);

/* A rule that a document failed: reason code (static string), the measured value and the
 * threshold it crossed. */
typedef struct {
	const char *reason;
	double value;
	double threshold;
} llm_verdict;

typedef struct {
	/* Gopher quality (0 or a negative value disables a rule, as None does in datatrove). */
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
	                                            zh, ja: FineWeb-2's cmn_Hani, jpn_Jpan lists */
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
	/* CJK: terminal punctuation also includes 。！？；… for the C4 line rule */
	bool cjk;
} llm_quality_params;

/* Published defaults for a language: "en" (and anything not listed) gets the Gopher, C4 and
 * FineWeb values above; "zh" and "ja" get the FineWeb-2 cmn_Hani / jpn_Jpan thresholds where
 * those configs have them and cjk = true. stop_words is NULL (the built-in list is used). */
void llm_quality_defaults(llm_quality_params *p, const char *lang);

typedef struct llm_quality llm_quality;
llm_quality *llm_quality_new(void);
void llm_quality_free(llm_quality *q);

/* Set the document the next calls inspect and split it into words. s must stay valid and
 * unchanged until the next set_text; it must be valid UTF-8 (ill-formed bytes count as one
 * U+FFFD code point each). */
void llm_quality_set_text(llm_quality *q, const char *s, size_t n);

/* Words of the current text: count, and word i as bytes. */
size_t llm_quality_nwords(const llm_quality *q);
const char *llm_quality_word(const llm_quality *q, size_t i, size_t *len);

/* The filters. Each returns true to keep; false fills *v with the first rule failed. */
bool llm_gopher_quality(llm_quality *q, const llm_quality_params *p, llm_verdict *v);
bool llm_gopher_repetition(llm_quality *q, const llm_quality_params *p, llm_verdict *v);
bool llm_fineweb_quality(llm_quality *q, const llm_quality_params *p, llm_verdict *v);
/*
 * C4: line rules first (lines are trimmed; a kept line is written to out, lines joined by
 * '\n'), then page rules. Counts of lines dropped per rule are added to stats[] in the order
 * of llm_c4_line_rules (may be NULL). Sentences are counted per kept line by the sentencizer
 * rule (a new sentence after a '.', '!', '?' or CJK terminal token followed by a word).
 */
bool llm_c4_filter(llm_quality *q, const llm_quality_params *p, llm_buf *out, uint64_t stats[5],
                   llm_verdict *v);
/* Names of the per-line counters of llm_c4_filter: too_long_word, no_terminal_punct,
 * too_few_words, javascript, policy. */
extern const char *const llm_c4_line_rules[5];

/* True when cp is in datatrove's PUNCTUATION_SET (the "symbol" words of Gopher quality). */
bool llm_quality_is_punct(uint32_t cp);
/* True when cp is a terminal punctuation mark (datatrove's TERMINAL_PUNCTUATION). */
bool llm_quality_is_terminal(uint32_t cp);

#endif
