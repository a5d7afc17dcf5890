/*
 * filter.h — llm-clean's filter steps as data.
 *
 * One table row per step (llm_filter_steps, in the order they run): its name (--filters and
 * the recipes' "filters" key), the reject reasons it can give, the per-line counters it keeps
 * and the function that runs it; one table of parameters (llm_filter_params: the --set names
 * and recipe keys, each with its type, bounds and unit, the step it belongs to, its place in
 * llm_quality_params and its built-in default per language). llm_clean_record, --set,
 * --explain, --list-filters, the statistics and the man page's list all come from these two
 * tables: adding a filter is a rule in quality.c, a row here with the reasons it gives
 * (t1003 checks them against quality.c), its parameters, its test and its man page entry.
 *
 * The order is FineWeb's (length, Gopher repetition, Gopher quality, C4, FineWeb) with the
 * other steps around it; the first step that fails decides the reason.
 *
 * Tables are constant; the functions are pure or write only to their arguments (thread safe).
 */
#ifndef LLM_FILTER_H
#define LLM_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "fineweb2.h"
#include "quality.h"

/* Step indices: bit (1u << LLM_FILTER_X) of a filter set. */
enum {
	LLM_FILTER_LENGTH,
	LLM_FILTER_ENCODING,
	LLM_FILTER_GOPHER_REP,
	LLM_FILTER_GOPHER_QUALITY,
	LLM_FILTER_C4,
	LLM_FILTER_FINEWEB,
	LLM_FILTER_CWT,
	LLM_FILTER_CODE,
	LLM_FILTER_NSTEPS
};

/* The web set ("default"): length, gopher-rep, gopher-quality, c4, fineweb. */
#define LLM_FILTER_DEFAULT                                                                         \
	((1u << LLM_FILTER_LENGTH) | (1u << LLM_FILTER_GOPHER_REP) |                               \
	 (1u << LLM_FILTER_GOPHER_QUALITY) | (1u << LLM_FILTER_C4) | (1u << LLM_FILTER_FINEWEB))

/* Per-line counters of all steps, one flat list (the C4 line rules). */
#define LLM_FILTER_NCOUNTERS LLM_QUALITY_C4_NLINES

typedef struct {
	const char *name;            /* "gopher-quality" */
	const char *title;           /* "Gopher quality (Rae et al. 2021)" */
	const char *const *reasons;  /* NULL-terminated */
	int counter0, ncounters;     /* its counters in llm_filter_counters */
	/* Judge q's current text: true keeps; false fills v. A step is one of the two kinds:
	 * judge, or judge_edit for a step that changes the text (C4 removes lines), which writes
	 * the text it keeps to edit and adds to its own counters. */
	bool (*judge)(llm_quality *q, const llm_quality_params *p, llm_verdict *v);
	bool (*judge_edit)(llm_quality *q, const llm_quality_params *p, llm_buf *edit,
	                   uint64_t *counts, llm_verdict *v);
} llm_filter_step;

extern const llm_filter_step llm_filter_steps[LLM_FILTER_NSTEPS];
/* "c4_lines_too_long_word", ...: the names the statistics count lines under. */
extern const char *const llm_filter_counters[LLM_FILTER_NCOUNTERS];

enum { LLM_PARAM_DOUBLE, LLM_PARAM_INT, LLM_PARAM_BOOL };

/* The language columns of the defaults: English (and the languages without settings), then
 * FineWeb-2's languages in the order of LLM_FW2_LANGS (fineweb2.h); llm_quality_defaults
 * picks the column. */
enum { LLM_FILTER_EN, LLM_FILTER_NLANGS = 1 + LLM_FW2_NLANGS };

typedef struct {
	const char *name;   /* "min_doc_words" */
	int step;           /* LLM_FILTER_* */
	int type;           /* LLM_PARAM_* */
	size_t off;         /* in llm_quality_params */
	double lo, hi;      /* the bounds, both in; hi INFINITY or INT_MAX: no top */
	const char *unit;   /* "a fraction", "words", "per word": for messages and --list-filters */
	double def[LLM_FILTER_NLANGS];  /* the built-in default per language (bools 0 or 1) */
} llm_filter_param;

extern const llm_filter_param llm_filter_params[];
extern const size_t llm_filter_nparams;

/* Step names to a set: comma- or space-separated names, "default" (the web set), "all",
 * "none". LLM_EINVAL names the unknown word and the closest name. */
int llm_filter_parse(const char *list, unsigned *bits);
/* The names of a set, space-separated ("none" for the empty set), appended to out. */
void llm_filter_format(unsigned bits, llm_buf *out);

/* The parameter called name[0..n), or NULL. */
const llm_filter_param *llm_filter_param_find(const char *name, size_t n);
/* LLM_EINVAL "unknown threshold 'x' (did you mean 'y'?)", or with every valid name when none
 * is close: the message for an unknown parameter. */
int llm_filter_param_unknown(const char *name, size_t n);
/* Parse value into the parameter (numbers; "off" for 0; true/false, yes/no, on/off, 1/0 for
 * booleans). LLM_EINVAL with a message naming the parameter and, for a number outside
 * [lo, hi], its bounds ("min_alpha_words_ratio: 7 is outside [0, 1] (a fraction)"); *p is
 * unchanged then. */
int llm_filter_param_set(llm_quality_params *p, const llm_filter_param *par, const char *value);
/* Every parameter's built-in default for the language column lang (LLM_FILTER_*). */
void llm_filter_param_defaults(llm_quality_params *p, int lang);
/* The parameter's value as text ("0.287", "1000", "true"). */
void llm_filter_param_get(const llm_quality_params *p, const llm_filter_param *par, llm_buf *out);

/* --list-filters: every step with its title, reasons, counters and parameters with their
 * English defaults and, where they differ, those of FineWeb-2's languages, appended to out
 * as text. */
void llm_filter_list(llm_buf *out);

/* The closest of names[0..n) to word (edit distance), or NULL when none is close. */
const char *llm_filter_closest(const char *word, size_t len, const char *const *names, size_t n);

/*
 * Run the steps of bits on *text (llm_quality_set_text is called here, with seg): true keeps
 * the document. An editing step leaves its text in *text (scratch is swapped in). counts[]
 * (LLM_FILTER_NCOUNTERS) receives the per-line counters; *v the failed rule.
 */
bool llm_filter_run(unsigned bits, llm_quality *q, const llm_quality_params *p,
                    const llm_segmenter *seg, llm_buf *text, llm_buf *scratch,
                    uint64_t counts[LLM_FILTER_NCOUNTERS], llm_verdict *v);

#endif
