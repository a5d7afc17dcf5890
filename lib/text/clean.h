/*
 * clean.h — the per-document pipeline of llm-clean: HTML to text, normalisation, line
 * patterns, language id, length / Gopher / C4 / FineWeb / pattern filters, PII and time
 * masking, freshness weight. One JSONL record in, one decision and one output record out.
 *
 * Order (fixed; each step switchable in llm_clean_cfg):
 *   parse -> text field -> html (format "html" or cfg.html) -> normalise -> drop lines
 *   matching line patterns -> language id (adds lang, lang_score; --lang filter)
 *   -> the recipe's filter steps (filter.h, in the table's order; C4 may drop lines)
 *   -> drop patterns -> PII mask -> time mask -> freshness weight -> write.
 * Masking comes after filtering so that filters judge the text, not the placeholders.
 *
 * The recipe chooses the filter set, thresholds and normalisation per record from its
 * "domain" and "lang" fields. A record without "lang" gets the built-in detector's language
 * (on its first 4 KiB) for that choice; with language id on (cfg.lid) the filters use the
 * detected language and normalisation the record's own or the script detector's.
 *
 * The configuration is shared read-only; an llm_cleaner holds one thread's scratch state,
 * including a small cache of resolved recipe settings per (domain, lang).
 */
#ifndef LLM_CLEAN_H
#define LLM_CLEAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/json.h"
#include "html.h"
#include "filter.h"
#include "normalize.h"
#include "pii.h"
#include "quality.h"
#include "recipe.h"

typedef struct llm_fasttext llm_fasttext;
typedef struct llm_timemask llm_timemask;
typedef struct llm_patterns llm_patterns;

/* Regular expressions (PCRE2, JIT, UTF, one per line of a file; '#' lines are comments). */
int llm_patterns_load(llm_patterns **p, const char *path);
void llm_patterns_free(llm_patterns *p);

typedef struct {
	const char *field;          /* text field ("text") */
	bool html;                  /* treat every record as HTML (else only "format": "html") */
	llm_html_opts html_opts;
	const llm_recipe *recipe;   /* filters, thresholds, normalisation (NULL: built-in) */
	const llm_wordset *stop_words; /* Gopher's stop words for every language, or NULL */
	const llm_patterns *drop_pattern, *drop_line_pattern;
	/* language id */
	bool lid;                   /* detect and add lang, lang_score */
	const llm_fasttext *lang_model; /* NULL: built-in detector */
	const char *const *langs;   /* keep only these (NULL-terminated), or NULL */
	double lang_threshold;      /* 0.65 */
	/* masking */
	bool mask_pii;
	llm_pii_opts pii;
	const llm_timemask *timemask; /* NULL: no time masking */
	/* freshness */
	bool freshness;
	int ref_year;
	double default_weight, min_weight;
	/* llm_cleaner_new loads what the recipe's Chinese records need (jieba's dictionary, once
	 * per process) on the calling thread: for cleaners that run on the threads of a pool, so
	 * that no worker spends its share on it. Without it the cleaner of the first such record
	 * loads it, and a run without one never does. */
	bool preload;
} llm_clean_cfg;

void llm_clean_cfg_init(llm_clean_cfg *cfg);

/* Outcome of one record. */
typedef struct {
	enum { LLM_CLEAN_KEEP, LLM_CLEAN_DROP, LLM_CLEAN_BAD } status;
	const char *reason;     /* DROP/BAD: reason code */
	double value, threshold;
	bool has_value;
	const char *err_msg;    /* BAD: what is wrong */
	size_t err_pos;
	bool changed;           /* KEEP: text changed */
	uint64_t counts[LLM_FILTER_NCOUNTERS]; /* lines dropped by line rules (C4) */
	size_t pii[5], times;   /* masks made */
	char lang[16];          /* detected or given language, "" if none */
	char domain[32];        /* the record's domain, "" if none */
	bool html;              /* the text was HTML (converted to text first) */
} llm_clean_result;

typedef struct llm_cleaner llm_cleaner;
llm_cleaner *llm_cleaner_new(const llm_clean_cfg *cfg);
void llm_cleaner_free(llm_cleaner *c);

/*
 * Clean one record line[0..len). rec receives the parse (valid until the next call with the
 * same rec and while line lives); out receives the output record (KEEP, no newline), or,
 * for a dropped HTML record, the text that was judged: extracted, normalised, as the filter
 * that dropped it saw it.
 */
void llm_clean_record(llm_cleaner *c, const char *line, size_t len, llm_json_rec *rec,
                      llm_buf *out, llm_clean_result *r);

/*
 * Outcomes per (domain, language) for --stats: records in and out and the reject reasons of
 * each pair. Memory: a few hundred bytes per pair seen. Not thread safe (the writer thread
 * accounts).
 */
typedef struct llm_clean_tally llm_clean_tally;
llm_clean_tally *llm_clean_tally_new(void);
void llm_clean_tally_free(llm_clean_tally *t);
/* One record: reason NULL when it was kept. */
void llm_clean_tally_add(llm_clean_tally *t, const char *domain, const char *lang, const char *reason);
/* Append the JSON member "domain_langs": {DOMAIN: {LANG: {"records_in": N, "records_out": N,
 * "rejected": {REASON: N, ...}}}} (domain "unknown" and lang "und" for empty names). */
void llm_clean_tally_json(const llm_clean_tally *t, llm_buf *out);

#endif
