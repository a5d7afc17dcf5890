/*
 * fewshot.c — lm-evaluation-harness's ContextSampler.sample and the plain-text path of its
 * fewshot_context (lm_eval/api/samplers.py, lm_eval/api/task.py, version 0.4).
 */
#include "fewshot.h"

#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "pyrand.h"

struct llm_fewshot {
	size_t n;
	int self;
	char *description, *tdelim, *fdelim;
	llm_pyrand rng;
	llm_choice_item *pool;
	size_t npool, cap;
	size_t *pick, *rest; /* scratch: drawn indices; the pool less the item */
	size_t rest_cap;
};

llm_fewshot *llm_fewshot_new(size_t n, uint64_t seed, int self, const char *description,
                             const char *target_delimiter, const char *fewshot_delimiter)
{
	llm_fewshot *fs = llm_calloc(1, sizeof *fs);
	fs->n = n;
	fs->self = self;
	fs->description = llm_strdup(description ? description : "");
	fs->tdelim = llm_strdup(target_delimiter ? target_delimiter : "");
	fs->fdelim = llm_strdup(fewshot_delimiter ? fewshot_delimiter : "");
	llm_pyrand_seed(&fs->rng, seed);
	fs->pick = llm_malloc((n + 1) * sizeof *fs->pick);
	return fs;
}

void llm_fewshot_free(llm_fewshot *fs)
{
	if (!fs)
		return;
	for (size_t i = 0; i < fs->npool; i++)
		llm_choice_item_release(&fs->pool[i]);
	free(fs->pool);
	free(fs->description);
	free(fs->tdelim);
	free(fs->fdelim);
	free(fs->pick);
	free(fs->rest);
	free(fs);
}

void llm_fewshot_add(llm_fewshot *fs, llm_choice_item *it)
{
	if (fs->npool == fs->cap) {
		fs->cap = fs->cap ? 2 * fs->cap : 64;
		fs->pool = llm_realloc(fs->pool, fs->cap * sizeof *fs->pool);
	}
	fs->pool[fs->npool++] = *it;
	memset(it, 0, sizeof *it);
}

size_t llm_fewshot_pool_size(const llm_fewshot *fs)
{
	return fs->npool;
}

static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static int same_item(const llm_choice_item *a, const llm_choice_item *b)
{
	if (a->nchoices != b->nchoices || a->gold != b->gold || !same_str(a->context, b->context) ||
	    !same_str(a->domain, b->domain) || !same_str(a->id, b->id))
		return 0;
	for (size_t i = 0; i < a->nchoices; i++)
		if (!same_str(a->choices[i], b->choices[i]))
			return 0;
	return 1;
}

static void put_example(llm_fewshot *fs, const llm_choice_item *ex, llm_buf *out)
{
	llm_buf_adds(out, ex->context);
	llm_buf_adds(out, fs->tdelim);
	llm_buf_adds(out, ex->choices[ex->gold]);
	llm_buf_adds(out, fs->fdelim);
}

int llm_fewshot_context(llm_fewshot *fs, const llm_choice_item *it, llm_buf *out)
{
	size_t n = fs->n, want = n + (fs->self && n > 0);
	llm_buf_reset(out);
	if (want > fs->npool)
		return llm_fail(LLM_EINVAL, "%zu few-shot examples%s from a pool of %zu", n,
		                fs->self ? " (and the item itself)" : "", fs->npool);
	llm_buf_adds(out, fs->description);
	if (n > 0) {
		llm_pyrand_sample(&fs->rng, fs->npool, want, fs->pick);
		size_t got = 0;
		for (size_t i = 0; i < want && got < n; i++)
			if (!fs->self || !same_item(&fs->pool[fs->pick[i]], it))
				fs->pick[got++] = fs->pick[i];
		if (got < n) {
			/* copies of the item in the pool were drawn: again, from the pool without them */
			if (fs->rest_cap < fs->npool) {
				fs->rest_cap = fs->npool;
				fs->rest = llm_realloc(fs->rest, fs->rest_cap * sizeof *fs->rest);
			}
			size_t nrest = 0;
			for (size_t i = 0; i < fs->npool; i++)
				if (!same_item(&fs->pool[i], it))
					fs->rest[nrest++] = i;
			if (nrest < n)
				return llm_fail(LLM_EINVAL, "%zu few-shot examples from a pool of %zu other "
				                "items", n, nrest);
			llm_pyrand_sample(&fs->rng, nrest, n, fs->pick);
			for (size_t i = 0; i < n; i++)
				fs->pick[i] = fs->rest[fs->pick[i]];
		}
		for (size_t i = 0; i < n; i++)
			put_example(fs, &fs->pool[fs->pick[i]], out);
	}
	llm_buf_adds(out, it->context);
	return LLM_OK;
}
