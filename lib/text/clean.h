/*
 * clean.h — the per-document pipeline of llm-clean: HTML to text, normalisation, line
 * patterns, language id, length / Gopher / C4 / FineWeb / pattern filters, PII and time
 * masking, freshness weight. One JSONL record in, one decision and one output record out.
 *
 * Order (fixed; each step switchable in llm_clean_cfg):
 *   parse -> text field -> html (format "html" or cfg.html) -> normalise -> drop lines
 *   matching line patterns -> language id (adds lang, lang_score; --lang filter)
 *   -> filters in FineWeb's order: length, gopher_rep, gopher_quality, c4 (may drop lines),
 *   fineweb, drop patterns -> PII mask -> time mask -> freshness weight -> write.
 * Masking comes after filtering so that filters judge the text, not the placeholders.
 *
 * The configuration is shared read-only; an llm_cleaner holds one thread's scratch state.
 */
#ifndef LLM_CLEAN_H
#define LLM_CLEAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/json.h"
#include "html.h"
#include "normalize.h"
#include "pii.h"
#include "quality.h"

enum {
	LLM_FILTER_LENGTH = 1u << 0,
	LLM_FILTER_GOPHER_REP = 1u << 1,
	LLM_FILTER_GOPHER_QUALITY = 1u << 2,
	LLM_FILTER_C4 = 1u << 3,
	LLM_FILTER_FINEWEB = 1u << 4,
	LLM_FILTER_DEFAULT = 0x1F
};

/* "length,gopher-rep,gopher-quality,c4,fineweb", "default", "none" -> bits. */
int llm_filter_parse(const char *list, unsigned *bits);

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
	bool normalize;
	llm_norm_opts norm;
	unsigned filters;           /* LLM_FILTER_* */
	size_t min_chars, max_chars; /* code points; 50, 0 = no maximum */
	size_t min_words;           /* 0 */
	llm_quality_params qp_en, qp_zh, qp_ja; /* thresholds per language */
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
	size_t c4_lines[5];     /* lines dropped by the C4 line rules */
	size_t pii[5], times;   /* masks made */
	char lang[16];          /* detected or given language, "" if none */
} llm_clean_result;

typedef struct llm_cleaner llm_cleaner;
llm_cleaner *llm_cleaner_new(const llm_clean_cfg *cfg);
void llm_cleaner_free(llm_cleaner *c);

/*
 * Clean one record line[0..len). rec receives the parse (valid until the next call with the
 * same rec and while line lives); out receives the output record (KEEP only, no newline).
 */
void llm_clean_record(llm_cleaner *c, const char *line, size_t len, llm_json_rec *rec,
                      llm_buf *out, llm_clean_result *r);

#endif
