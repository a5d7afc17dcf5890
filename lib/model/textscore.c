/*
 * textscore.c — a document's text scored by a transformer (see textscore.h).
 */
#include "textscore.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/err.h"
#include "eval.h"
#include "hf.h"
#include "seqcls.h"
#include "tok/bpe.h"

struct llm_textscore {
	llm_seqcls *sc;  /* a classifier, or */
	llm_model *lm;   /* a language model (perplexity) */
	llm_bpe *bpe;
	int64_t bos;     /* the prefix token of the perplexity's first window */
	int max_len;
	const char **labels; /* the classifier's names, as the scorer reads them */
	const char *value_label[1];
};

struct llm_textscore_scratch {
	const llm_textscore *t;
	llm_bpe_enc *enc;
	llm_ids ids;
	int32_t *tok;
	size_t cap;
	llm_seqcls_runner *run;   /* classifier */
	llm_model *view;          /* language model */
	float *logits;
};

void llm_textscore_free(llm_textscore *t)
{
	if (!t)
		return;
	llm_seqcls_free(t->sc);
	llm_model_free(t->lm);
	llm_bpe_free(t->bpe);
	free(t->labels);
	free(t);
}

llm_textscore_scratch *llm_textscore_scratch_new(const llm_textscore *t)
{
	llm_textscore_scratch *s = llm_calloc(1, sizeof *s);
	s->t = t;
	s->enc = llm_bpe_enc_new(t->bpe);
	llm_ids_init(&s->ids);
	int rc;
	if (t->sc) {
		rc = llm_seqcls_runner_new(&s->run, t->sc);
		s->logits = llm_calloc((size_t)llm_seqcls_nlabels(t->sc), sizeof *s->logits);
	} else {
		s->view = llm_model_view(t->lm);
		rc = LLM_OK;
	}
	if (!s->enc || rc != LLM_OK) {
		llm_bpe_enc_free(s->enc);
		llm_seqcls_runner_free(s->run);
		llm_model_free(s->view);
		free(s->logits);
		free(s);
		return NULL;
	}
	return s;
}

void llm_textscore_scratch_free(llm_textscore_scratch *s)
{
	if (!s)
		return;
	llm_bpe_enc_free(s->enc);
	llm_ids_release(&s->ids);
	llm_seqcls_runner_free(s->run);
	llm_model_free(s->view);
	free(s->tok);
	free(s->logits);
	free(s);
}

/* The text's tokens into s->tok[0..n); n returned. */
static size_t encode(llm_textscore_scratch *s, const char *text, size_t len)
{
	s->ids.n = 0;
	/* an encoding error (a pre-tokenizer failure) leaves the text's tokens out: the
	 * document scores as one the model knows nothing of */
	if (llm_bpe_encode(s->enc, text, len, LLM_BPE_SPECIAL_IGNORE, &s->ids) != LLM_OK)
		s->ids.n = 0;
	if (s->ids.n > s->cap) {
		s->cap = s->ids.n;
		s->tok = llm_realloc(s->tok, s->cap * sizeof *s->tok);
	}
	for (size_t i = 0; i < s->ids.n; i++)
		s->tok[i] = (int32_t)s->ids.v[i];
	return s->ids.n;
}

static int score_seqcls(const llm_textscore *t, llm_textscore_scratch *s, const char *text,
                        size_t len, float *out)
{
	int nl = llm_seqcls_nlabels(t->sc);
	size_t n = encode(s, text, len);
	if (n == 0) {
		memset(out, 0, (size_t)nl * sizeof *out);
		return 1;
	}
	int T = n < (size_t)t->max_len ? (int)n : t->max_len;
	const int32_t *tok = s->tok;
	if (llm_seqcls_logits(s->run, &tok, &T, 1, s->logits) != LLM_OK)
		abort(); /* lengths and ids are checked: nothing is left to fail */
	llm_seqcls_output(t->sc, s->logits, out);
	return 0;
}

/* The document alone in lm-evaluation-harness's rolling windows (eval.h), on the
 * scratch's view of the model. */
static int score_ppl(const llm_textscore *t, llm_textscore_scratch *s, const char *text,
                     size_t len, float *out)
{
	s->ids.n = 0;
	if (llm_bpe_encode(s->enc, text, len, LLM_BPE_SPECIAL_IGNORE, &s->ids) != LLM_OK)
		s->ids.n = 0;
	out[0] = 0;
	if (s->ids.n == 0)
		return 1;
	/* a few windows per forward: a long document's windows run together */
	llm_evaluator *ev = llm_evaluator_new(s->view, t->max_len, 4, NULL, t->bos);
	llm_eval_sums sum;
	if (llm_eval_doc_rolling(ev, NULL, text, len, s->ids.v, s->ids.n) != LLM_OK ||
	    llm_eval_flush(ev) != LLM_OK)
		abort(); /* lengths and ids are checked: nothing is left to fail */
	llm_eval_total(ev, &sum);
	llm_evaluator_free(ev);
	out[0] = (float)llm_eval_ppl(&sum);
	return 0;
}

static int is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int llm_textscore_open(llm_textscore **out, const char *path)
{
	*out = NULL;
	if (!is_dir(path))
		return llm_fail(LLM_ENOTFOUND, "%s: not a model directory", path);
	llm_textscore *t = llm_calloc(1, sizeof *t);
	llm_hf_info info;
	int rc = llm_seqcls_is(path) ? llm_seqcls_open(&t->sc, path, &info)
	                             : llm_hf_open(path, &t->lm, &info);
	if (rc != LLM_OK) {
		free(t);
		return rc;
	}
	const llm_model_config *c = llm_model_get_config(t->sc ? llm_seqcls_model(t->sc) : t->lm);
	if (!info.tokenizer)
		rc = llm_fail(LLM_EFORMAT, "%s: no tokenizer.json beside the model", path);
	else if ((rc = llm_bpe_load(&t->bpe, info.tokenizer, NULL, NULL, NULL)) == LLM_OK &&
	         llm_bpe_vocab_size(t->bpe) > (uint32_t)c->vocab_size)
		rc = llm_fail(LLM_EFORMAT, "%s: %s has %u tokens, the model's vocabulary %d",
		              path, info.tokenizer, llm_bpe_vocab_size(t->bpe), c->vocab_size);
	llm_hf_info_release(&info);
	if (rc != LLM_OK) {
		llm_textscore_free(t);
		return rc;
	}
	t->max_len = c->max_position_embeddings;
	/* lm-evaluation-harness's prefix token: BOS, else end-of-text (what precedes a
	 * document in llmkit's training windows) */
	t->bos = llm_bpe_bos(t->bpe) >= 0 ? llm_bpe_bos(t->bpe) : llm_bpe_eos(t->bpe);
	if (t->lm && t->bos < 0) {
		llm_textscore_free(t);
		return llm_fail(LLM_EFORMAT, "%s: its tokenizer has no beginning- or end-of-text token "
		                "to condition a document's first token on", path);
	}
	if (t->sc) {
		int nl = llm_seqcls_nlabels(t->sc);
		t->labels = llm_calloc((size_t)nl, sizeof *t->labels);
		for (int i = 0; i < nl; i++)
			t->labels[i] = llm_seqcls_label(t->sc, i);
	} else {
		t->value_label[0] = "ppl";
		t->labels = llm_calloc(1, sizeof *t->labels);
		t->labels[0] = t->value_label[0];
	}
	*out = t;
	return LLM_OK;
}

int llm_textscore_nvalues(const llm_textscore *t)
{
	return t->sc ? llm_seqcls_nlabels(t->sc) : 1;
}

const char *const *llm_textscore_labels(const llm_textscore *t)
{
	return t->labels;
}

int llm_textscore_is_value(const llm_textscore *t)
{
	return !t->sc || (llm_seqcls_problem(t->sc) == LLM_SEQCLS_REGRESSION &&
	                  llm_seqcls_nlabels(t->sc) == 1);
}

int llm_textscore_run(const llm_textscore *t, llm_textscore_scratch *s, const char *text,
                      size_t len, float *out)
{
	return t->sc ? score_seqcls(t, s, text, len, out) : score_ppl(t, s, text, len, out);
}
