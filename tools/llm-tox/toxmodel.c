/*
 * toxmodel.c — llm-tox's second stage from a transformer classifier's directory
 * (model/textscore.h) behind lib/tox's calls (tox.h's llm_tox_set_external): the
 * probability of the toxic label, on what the word lists pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "llm-tox.h"
#include "model/ops.h"
#include "model/textscore.h"

typedef struct {
	llm_textscore *ts;
	int label, n;
} toxmodel;

typedef struct {
	llm_textscore_scratch *s;
	float *out;
} toxscratch;

static void *scratch_new(void *ctx)
{
	const toxmodel *m = ctx;
	toxscratch *s = llm_calloc(1, sizeof *s);
	if (!(s->s = llm_textscore_scratch_new(m->ts))) {
		free(s);
		return NULL;
	}
	s->out = llm_calloc((size_t)m->n, sizeof *s->out);
	return s;
}

static void scratch_free(void *p)
{
	toxscratch *s = p;
	llm_textscore_scratch_free(s->s);
	free(s->out);
	free(s);
}

static double score(void *ctx, void *scratch, const char *text, size_t len)
{
	const toxmodel *m = ctx;
	toxscratch *s = scratch;
	llm_textscore_run(m->ts, s->s, text, len, s->out);
	return s->out[m->label];
}

static void model_free(void *ctx)
{
	toxmodel *m = ctx;
	llm_textscore_free(m->ts);
	free(m);
}

int tox_model_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int tox_model_open(llm_tox *t, const char *path, const char *label)
{
	llm_textscore *ts;
	int rc = llm_textscore_open(&ts, path);
	if (rc != LLM_OK)
		return rc;
	const char *const *labels = llm_textscore_labels(ts);
	int n = llm_textscore_nvalues(ts), id = -1;
	for (int i = 0; i < n; i++)
		if (strcmp(labels[i], label) == 0)
			id = i;
	if (llm_textscore_is_value(ts) || id < 0) {
		llm_textscore_free(ts);
		return llm_fail(LLM_ENOTFOUND, "%s: not a classifier with a label '%s'", path, label);
	}
	/* one document per worker: each worker's products on its own thread */
	llm_ops_set_threads(1);
	toxmodel *m = llm_calloc(1, sizeof *m);
	*m = (toxmodel){ ts, id, n };
	llm_tox_model x = { m, scratch_new, scratch_free, score, model_free };
	llm_tox_set_external(t, &x);
	return LLM_OK;
}
