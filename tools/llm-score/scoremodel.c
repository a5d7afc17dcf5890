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
 * model's tokens: exp of the mean negative log-likelihood of every token given those before
 * it, over windows of max_position_embeddings + 1 tokens that share their boundary token
 * (the tokenizer's BOS first, when it has one, so that the first token is scored too).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "llm-score.h"
#include "model/backend.h"
#include "model/hf.h"
#include "model/seqcls.h"
#include "tok/bpe.h"

typedef struct {
	llm_seqcls *sc;  /* a classifier, or */
	llm_model *lm;   /* a language model (perplexity) */
	llm_bpe *bpe;
	int64_t bos;
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
	llm_backend *b;
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
		llm_backend_options o;
		llm_backend_options_init(&o);
		s->view = llm_model_view(t->lm);
		rc = llm_backend_open(&s->b, s->view, NULL, NULL, &o);
	}
	if (!s->enc || rc != LLM_OK) {
		llm_bpe_enc_free(s->enc);
		llm_seqcls_runner_free(s->run);
		llm_backend_free(s->b);
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
	llm_backend_free(s->b);
	llm_model_free(s->view);
	free(s->tok);
	free(s->logits);
	free(s);
}

/* The text's tokens into s->tok[0..n) (BOS first when bos >= 0); n returned. */
static size_t encode(tscratch *s, const char *text, size_t len, int64_t bos)
{
	s->ids.n = 0;
	if (bos >= 0)
		llm_ids_push(&s->ids, (uint32_t)bos);
	/* an encoding error (a pre-tokenizer failure) leaves the text's tokens out: the
	 * document scores as one the model knows nothing of */
	if (llm_bpe_encode(s->enc, text, len, LLM_BPE_SPECIAL_IGNORE, &s->ids) != LLM_OK)
		s->ids.n = bos >= 0;
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
	size_t n = encode(s, text, len, -1);
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

static int score_ppl(void *ctx, void *scratch, const char *text, size_t len, float *out)
{
	const tmodel *t = ctx;
	tscratch *s = scratch;
	size_t n = encode(s, text, len, t->bos);
	double nll = 0;
	int64_t count = 0;
	for (size_t at = 0; at + 1 < n; at += (size_t)t->max_len) {
		int T = n - at - 1 < (size_t)t->max_len ? (int)(n - at - 1) : t->max_len;
		double loss;
		int64_t k;
		if (llm_backend_eval(s->b, s->tok + at, s->tok + at + 1, 1, T, &loss, &k) != LLM_OK)
			abort(); /* lengths and ids are checked: nothing is left to fail */
		nll += loss * (double)k;
		count += k;
	}
	if (!count) {
		out[0] = 0;
		return 1;
	}
	out[0] = (float)exp(nll / (double)count);
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
	t->bos = llm_bpe_bos(t->bpe);
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
