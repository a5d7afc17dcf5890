/*
 * fewshot.h — few-shot contexts of multiple-choice items, byte for byte as
 * lm-evaluation-harness builds them for a multiple_choice task without a chat template:
 *
 *   description + for each example: context + target_delimiter + choices[gold]
 *                                     + fewshot_delimiter
 *               + the item's context
 *
 * (its build_qa_turn and fewshot_context: the description is a system message with no
 * delimiter of its own, so it runs into the first example; lm-evaluation-harness's defaults
 * are target_delimiter " " and fewshot_delimiter "\n\n"). The examples are drawn as its
 * ContextSampler draws them: one random.Random(seed) (pyrand.h) for the whole task, and for
 * each item in turn sample(pool, n), or, when the pool is the task itself (its few-shot split
 * is the test split), sample(pool, n + 1) with the item removed, the first n kept, and should
 * duplicates of the item leave fewer, sample(pool without any copy of it, n). So the same
 * items in the same order with the same seed give the same prompts, and an item's prompt
 * depends on the items before it, as there.
 *
 * An item equals another when context, choices, gold, domain and id are equal (as the dicts
 * of two JSON lines with those fields compare in Python).
 *
 * Memory: the pool, held whole. Thread safety: one builder per thread (its generator).
 */
#ifndef LLM_FEWSHOT_H
#define LLM_FEWSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "eval.h"

typedef struct llm_fewshot llm_fewshot;

/* n examples an item, drawn with random.Random(seed); self: the pool is the task's own items
 * (each item then never its own example). The strings are copied. */
llm_fewshot *llm_fewshot_new(size_t n, uint64_t seed, int self, const char *description,
                             const char *target_delimiter, const char *fewshot_delimiter);
void llm_fewshot_free(llm_fewshot *fs);
/* Add an item to the pool; the pool takes it over (*it is left empty). */
void llm_fewshot_add(llm_fewshot *fs, llm_choice_item *it);
size_t llm_fewshot_pool_size(const llm_fewshot *fs);
/* The context of it into out (reset first), drawing its examples. LLM_EINVAL when the pool
 * is too small for n examples (n + 1 when it is the task's own), as Python's sample refuses
 * it (nothing is drawn then), or when copies of the item leave fewer than n others. */
int llm_fewshot_context(llm_fewshot *fs, const llm_choice_item *it, llm_buf *out);

#endif
