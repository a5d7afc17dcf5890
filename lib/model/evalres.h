/*
 * evalres.h — results of an evaluation as llm-eval reports them: multiple-choice tallies per
 * domain, and the JSON objects of loss sums (eval.h) and of tallies.
 *
 * A tally counts scored items per domain, in first-seen order, and their hits under acc and
 * acc_norm (eval.h's definitions); its "all" row is the sum over the domains. The JSON shapes
 * are those of llm-eval's --json (llmkit-formats(5)):
 *   sums:   {"documents", "tokens", "loss", "ppl", "bytes", "bits_per_byte"
 *            [, "words", "word_perplexity", "byte_perplexity" when words were counted]}
 *   choice: {"items", "acc", "acc_stderr", "acc_norm", "acc_norm_stderr"}
 * Numbers as llm_json_put_f64 writes them (NaN as null).
 */
#ifndef LLM_EVALRES_H
#define LLM_EVALRES_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "eval.h"

typedef struct {
	char *name;
	uint64_t items, acc, acc_norm;
} llm_choice_dom;

typedef struct {
	llm_choice_dom *d;
	size_t n;
	uint64_t bad; /* items that could not be scored (the caller's count) */
} llm_choice_tally;

/* The row of domain (created empty on first use); the pointer is valid until the next call. */
llm_choice_dom *llm_choice_tally_domain(llm_choice_tally *t, const char *domain);
/* One scored item of domain: hit and hit_norm 1 when pred and pred_norm were the gold. */
void llm_choice_tally_add(llm_choice_tally *t, const char *domain, int hit, int hit_norm);
/* The "all" row (its name is a literal: not to be freed). */
void llm_choice_tally_total(const llm_choice_tally *t, llm_choice_dom *all);
void llm_choice_tally_release(llm_choice_tally *t);

/* a / b; NaN when b is 0. */
double llm_eval_ratio(uint64_t a, uint64_t b);

void llm_evalres_sums_json(llm_buf *b, const llm_eval_sums *s);
void llm_evalres_choice_json(llm_buf *b, const llm_choice_dom *d);

#endif
