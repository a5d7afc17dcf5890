/*
 * toxeval.h — precision, recall, F1 and false-positive rate of the toxicity rules and model,
 * per language and over thresholds (what `llm-tox eval` prints).
 *
 * Scored documents are added one by one (the word-list hits, the model's score and the gold
 * label); the report then counts, for every language and for all of them, the confusion of
 * three predictors: the word lists alone, the model alone at each threshold, and words OR
 * model at each threshold. Languages are keyed by their primary subtag ("zh-Hant" is "zh",
 * no lang is "und"); past 63 distinct languages the last row gathers the rest.
 * Memory: 32 bytes per document. Not thread safe.
 */
#ifndef LLM_TOXEVAL_H
#define LLM_TOXEVAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "tox.h"

typedef struct llm_toxeval llm_toxeval;

typedef struct {
	double words_per_1k;       /* the word rule's density */
	double threshold;          /* the model threshold in use (marked in the table) */
	const double *thresholds;  /* the model thresholds to report */
	int nthresholds;
	int words, model;          /* which stages exist */
	int json;                  /* one JSON object instead of the text table */
} llm_toxeval_opts;

llm_toxeval *llm_toxeval_new(void);
void llm_toxeval_free(llm_toxeval *e);
/* One document: its lang field (NULL when it has none), its score and its label (0 or 1). */
void llm_toxeval_add(llm_toxeval *e, const char *lang, size_t lang_len, const llm_tox_result *r,
                     int label);
/* Records that could not be scored, reported as "skipped". */
void llm_toxeval_skip(llm_toxeval *e);
size_t llm_toxeval_count(const llm_toxeval *e);
/* Append the report to out. */
void llm_toxeval_report(const llm_toxeval *e, const llm_toxeval_opts *o, llm_buf *out);

#endif
