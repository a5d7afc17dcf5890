/*
 * scoremodel.c — the scorer's opener (text/score.h) for transformers: a model directory
 * (model/textscore.h: a classifier or regressor, or a language model scored by perplexity)
 * behind the scorer's calls, which lib/text may not make itself.
 */
#include <stdlib.h>

#include "llm-score.h"
#include "model/ops.h"
#include "model/textscore.h"

static void *scratch_new(void *ctx)
{
	return llm_textscore_scratch_new(ctx);
}

static void scratch_free(void *s)
{
	llm_textscore_scratch_free(s);
}

static int score(void *ctx, void *scratch, const char *text, size_t len, float *out)
{
	return llm_textscore_run(ctx, scratch, text, len, out);
}

static void model_free(void *ctx)
{
	llm_textscore_free(ctx);
}

int score_model_open(void *arg, const char *path, llm_score_model *out)
{
	(void)arg;
	llm_textscore *t;
	int rc = llm_textscore_open(&t, path);
	if (rc != LLM_OK)
		return rc;
	/* --threads are the parallelism, a document per worker: each worker's products run
	 * on its own thread, not on OpenBLAS's threads over every core */
	llm_ops_set_threads(1);
	*out = (llm_score_model){ .ctx = t, .nlabels = llm_textscore_nvalues(t),
		                  .labels = llm_textscore_labels(t),
		                  .value = llm_textscore_is_value(t), .scratch_new = scratch_new,
		                  .scratch_free = scratch_free, .score = score, .free = model_free };
	return LLM_OK;
}
