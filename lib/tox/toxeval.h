/*
 * toxeval.h — precision, recall, F1 and false-positive rate of the toxicity rules and model,
 * per language, over thresholds and at chosen operating points (what `llm-tox eval` prints).
 *
 * Scored documents are added one by one with the policy that applied to each (llm_tox_policy:
 * the word rule's verdict under it and the document's own threshold are kept) and the gold
 * label. The report then counts, for every language and for all of them, the confusion of
 * three predictors: the word lists alone, the model alone and words OR model, each at every
 * threshold of a sweep and at the thresholds in effect. Languages are keyed by their primary
 * subtag ("zh-Hant" is "zh", no lang is "und"); past 63 distinct languages the last row
 * gathers the rest.
 *
 * Operating points (llm_toxeval_target): per language, the threshold with the highest recall
 * whose false-positive rate is at most X (max_fpr), or the highest threshold whose recall is
 * at least X (min_recall), for the stage in use (words OR model when there are word lists).
 * They are found exactly from the scores, and written as the shortest decimal that gives the
 * same decisions on the data, so that the printed `--threshold` reproduces the counts.
 *
 * Memory: 24 bytes per document, and a sorted copy of one language's scores while a target is
 * computed. Not thread safe.
 */
#ifndef LLM_TOXEVAL_H
#define LLM_TOXEVAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "tox.h"

typedef struct llm_toxeval llm_toxeval;

enum { LLM_TOXEVAL_MAX_FPR = 1, LLM_TOXEVAL_MIN_RECALL = 2 };

typedef struct {
	int kind;     /* LLM_TOXEVAL_MAX_FPR or LLM_TOXEVAL_MIN_RECALL */
	double value; /* the rate to meet, in [0, 1] */
} llm_toxeval_target;

typedef struct {
	const double *thresholds;  /* the model thresholds of the sweep */
	int nthresholds;
	const llm_toxeval_target *targets; /* when ntargets > 0: the operating points instead */
	int ntargets;
	double default_threshold;  /* the bare value of the --threshold specs targets print */
	double words_per_1k;       /* for the footer */
	int words, model;          /* which stages exist */
	int json;                  /* one JSON object instead of the text table */
} llm_toxeval_opts;

llm_toxeval *llm_toxeval_new(void);
void llm_toxeval_free(llm_toxeval *e);
/* One document: its lang field (NULL when it has none), its score, the policy it was judged
 * under and its label (0 or 1). */
void llm_toxeval_add(llm_toxeval *e, const char *lang, size_t lang_len, const llm_tox_result *r,
                     const llm_tox_policy *p, int label);
/* Records that could not be scored, reported as "skipped". */
void llm_toxeval_skip(llm_toxeval *e);
size_t llm_toxeval_count(const llm_toxeval *e);
/* Append the report to out. */
void llm_toxeval_report(const llm_toxeval *e, const llm_toxeval_opts *o, llm_buf *out);

#endif
