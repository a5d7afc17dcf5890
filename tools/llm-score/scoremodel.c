/*
 * scoremodel.c — the scorer's opener (text/score.h) for the models of lib/model: a model
 * directory is a transformer classifier or regressor (seqcls.h) when its config.json says
 * LlamaForSequenceClassification, and otherwise (any llmkit checkpoint or Hugging Face Llama
 * directory, hf.h) a language model whose score is the document's perplexity.
 *
 * Text to tokens: the tokenizer.json found with the model (hf.h), the text encoded as plain
 * text (special-token text is not special), nothing added: what transformers' tokenizer
 * gives with the tokenizer_config.json llmkit writes (no BOS, no EOS added). A classifier
 * reads the first max_position_embeddings tokens. The perplexity is CCNet's measure on the
 * model's tokens, exp of the mean negative log-likelihood of every token of the document,
 * computed as `llm-eval loss --mode rolling` computes it for a document alone (eval.h:
 * lm-evaluation-harness's loglikelihood_rolling, the first token given the BOS, else the
 * end-of-text token).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "llm-score.h"
#include "model/eval.h"
#include "model/hf.h"
#include "model/ops.h"
#include "model/seqcls.h"
#include "tok/bpe.h"

typedef struct {
	llm_seqcls *sc;  /* a classifier, or */
	llm_model *lm;   /* a language model (perplexity) */
	llm_bpe *bpe;
	int64_t bos;     /* the prefix token of the perplexity's first window */
	int max_len;
	const char **labels; /* the classifier's names, as the scorer reads them */
	const char *value_label[1];
} tmodel;

typedef struct {
	const tmodel *t;
	llm_bpe_enc *enc;
	llm_ids ids;
	int32_t *tok;
	size_t cap;
	llm_seqcls_runner *run;   /* classifier */
	llm_model *view;          /* language model */
	float *logits;
} tscratch;

static void tmodel_free(void *ctx)
{
	tmodel *t = ctx;
	llm_seqcls_free(t->sc);
	llm_model_free(t->lm);
	llm_bpe_free(t->bpe);
	free(t->labels);
	free(t);
}

static void *tscratch_new(void *ctx)
{
	const tmodel *t = ctx;
	tscratch *s = llm_calloc(1, sizeof *s);
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

static void tscratch_free(void *p)
{
	tscratch *s = p;
	llm_bpe_enc_free(s->enc);
	llm_ids_release(&s->ids);
	llm_seqcls_runner_free(s->run);
	llm_model_free(s->view);
	free(s->tok);
	free(s->logits);
	free(s);
}

/* The text's tokens into s->tok[0..n); n returned. */
static size_t encode(tscratch *s, const char *text, size_t len)
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

static int score_seqcls(void *ctx, void *scratch, const char *text, size_t len, float *out)
{
	const tmodel *t = ctx;
	tscratch *s = scratch;
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
static int score_ppl(void *ctx, void *scratch, const char *text, size_t len, float *out)
{
	const tmodel *t = ctx;
	tscratch *s = scratch;
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

int score_model_open(void *arg, const char *path, llm_score_model *out)
{
	(void)arg;
	if (!is_dir(path))
		return LLM_ENOTFOUND;
	/* --threads are the parallelism, a document per worker: each worker's products run
	 * on its own thread, not on OpenBLAS's threads over every core */
	llm_ops_set_threads(1);
	tmodel *t = llm_calloc(1, sizeof *t);
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
		tmodel_free(t);
		return rc;
	}
	t->max_len = c->max_position_embeddings;
	/* lm-evaluation-harness's prefix token: BOS, else end-of-text (what precedes a
	 * document in llmkit's training windows) */
	t->bos = llm_bpe_bos(t->bpe) >= 0 ? llm_bpe_bos(t->bpe) : llm_bpe_eos(t->bpe);
	if (t->lm && t->bos < 0) {
		tmodel_free(t);
		return llm_fail(LLM_EFORMAT, "%s: its tokenizer has no beginning- or end-of-text token "
		                "to condition a document's first token on", path);
	}
	*out = (llm_score_model){ .ctx = t, .scratch_new = tscratch_new,
		                  .scratch_free = tscratch_free, .free = tmodel_free };
	if (t->sc) {
		int nl = llm_seqcls_nlabels(t->sc);
		out->nlabels = nl;
		t->labels = llm_calloc((size_t)nl, sizeof *t->labels);
		for (int i = 0; i < nl; i++)
			t->labels[i] = llm_seqcls_label(t->sc, i);
		out->labels = t->labels;
		out->value = llm_seqcls_problem(t->sc) == LLM_SEQCLS_REGRESSION && nl == 1;
		out->score = score_seqcls;
	} else {
		t->value_label[0] = "ppl";
		out->nlabels = 1;
		out->labels = t->value_label;
		out->value = 1;
		out->score = score_ppl;
	}
	return LLM_OK;
}
