/*
 * test_seqcls.c — the sequence classifier (model/seqcls.h): transformers' pooled position,
 * its directory written and read back, batched logits against one document at a time, and
 * the training gradients against central finite differences of the loss in float64 sums.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "model/model.h"
#include "model/seqcls.h"
#include "unit.h"

/* A small decoder, initialised as transformers does, with larger weights so that logits
 * differ by document. */
static llm_model *small_model(uint64_t seed)
{
	llm_model_config c = { .vocab_size = 40, .hidden_size = 16, .intermediate_size = 24,
		               .num_hidden_layers = 2, .num_attention_heads = 4,
		               .num_key_value_heads = 2, .max_position_embeddings = 32,
		               .tie_word_embeddings = 1, .rope_theta = 10000, .rms_norm_eps = 1e-6,
		               .initializer_range = 0.3, .bos_token_id = -1, .eos_token_id = 39 };
	llm_model *m = llm_model_new(&c);
	llm_model_init(m, seed);
	return m;
}

static void test_pool_index(void)
{
	const int32_t a[] = { 5, 6, 7, 0, 0 }, b[] = { 0, 0, 0 }, c[] = { 0, 4, 0, 9 };
	CHECK_EQ_INT(llm_seqcls_pool_index(a, 5, 0), 2); /* the rightmost token not the pad */
	CHECK_EQ_INT(llm_seqcls_pool_index(b, 3, 0), 0); /* every token the pad: the first */
	CHECK_EQ_INT(llm_seqcls_pool_index(c, 4, 0), 3); /* a pad inside is read past */
	CHECK_EQ_INT(llm_seqcls_pool_index(a, 5, -1), 4); /* no pad: the last */
}

/* Documents of 1..n tokens (some ending in the pad, 39). */
static void documents(int32_t **tok, int *len, int n)
{
	for (int i = 0; i < n; i++) {
		len[i] = 1 + (i * 7) % 20;
		tok[i] = malloc((size_t)len[i] * sizeof **tok);
		for (int t = 0; t < len[i]; t++)
			tok[i][t] = (int32_t)((i * 13 + t * 5) % 40);
		if (i % 3 == 0)
			tok[i][len[i] - 1] = 39;
	}
}

static void test_batched_logits(void)
{
	const char *const labels[] = { "a", "b", "c" };
	llm_seqcls *sc = llm_seqcls_new(small_model(1), 3, labels, LLM_SEQCLS_SINGLE, 39, 2);
	enum { N = 70 };
	int32_t *tok[N];
	int len[N];
	documents(tok, len, N);
	float all[N * 3], one[3];
	llm_seqcls_runner *r;
	CHECK_EQ_INT(llm_seqcls_runner_new(&r, sc), LLM_OK);
	CHECK_EQ_INT(llm_seqcls_logits(r, (const int32_t *const *)tok, len, N, all), LLM_OK);
	double worst = 0;
	for (int i = 0; i < N; i++) {
		const int32_t *t = tok[i];
		CHECK_EQ_INT(llm_seqcls_logits(r, &t, &len[i], 1, one), LLM_OK);
		for (int l = 0; l < 3; l++)
			worst = fmax(worst, fabs(one[l] - all[i * 3 + l]));
	}
	CHECK(worst < 1e-5);
	/* the logits differ by document: the test would see a pooling mistake */
	CHECK(fabs(all[0] - all[3]) > 1e-3);
	int bad = 33;
	const int32_t *t0 = tok[0];
	CHECK_EQ_INT(llm_seqcls_logits(r, &t0, &bad, 1, one), LLM_EINVAL); /* past the positions */
	float p[3];
	llm_seqcls_output(sc, all, p);
	CHECK_NEAR(p[0] + p[1] + p[2], 1.0, 1e-6);
	llm_seqcls_runner_free(r);
	for (int i = 0; i < N; i++)
		free(tok[i]);
	llm_seqcls_free(sc);
}

static void test_save_open(void)
{
	char dir[] = "/tmp/test_seqcls.XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	const char *const labels[] = { "neg", "pos" };
	llm_seqcls *sc = llm_seqcls_new(small_model(3), 2, labels, LLM_SEQCLS_MULTI, 39, 4);
	CHECK_EQ_INT(llm_seqcls_save(sc, dir, NULL, 0), LLM_OK);
	CHECK(llm_seqcls_is(dir));
	llm_seqcls *back;
	CHECK_EQ_INT(llm_seqcls_open(&back, dir, NULL), LLM_OK);
	CHECK_EQ_INT(llm_seqcls_nlabels(back), 2);
	CHECK_STR(llm_seqcls_label(back, 1), "pos");
	CHECK_EQ_INT(llm_seqcls_problem(back), LLM_SEQCLS_MULTI);
	CHECK_EQ_INT(llm_seqcls_pad(back), 39);
	CHECK(memcmp(llm_seqcls_head(sc), llm_seqcls_head(back), 2 * 16 * sizeof(float)) == 0);
	llm_model *a = llm_seqcls_model(sc), *b = llm_seqcls_model(back);
	CHECK(llm_model_nparams(a) == llm_model_nparams(b));
	CHECK(memcmp(llm_model_params(a), llm_model_params(b),
	             llm_model_nparams(a) * sizeof(float)) == 0);
	llm_seqcls_free(back);
	llm_seqcls_free(sc);
	char p[256];
	snprintf(p, sizeof p, "%s/config.json", dir);
	unlink(p);
	snprintf(p, sizeof p, "%s/model.safetensors", dir);
	unlink(p);
	rmdir(dir);
}

/* The batch's mean loss, with fresh gradients (so the model's state is the forward's). */
static double loss_of(llm_seqcls *sc, int32_t **tok, int *len, int n, const float *y)
{
	double loss;
	llm_model_zero_grad(llm_seqcls_model(sc));
	llm_seqcls_zero_grad(sc);
	llm_seqcls_train_batch(sc, (const int32_t *const *)tok, len, n, y, 1.0f / n, &loss);
	return loss;
}

/* The gradient of a few parameters (the head's, a matrix's, a norm's) against central
 * differences of the mean loss, for each kind of problem. */
static void check_grads(int problem, int nl, const float *y)
{
	llm_seqcls *sc = llm_seqcls_new(small_model(5), nl, NULL, problem, 39, 6);
	enum { N = 4 };
	int32_t *tok[N];
	int len[N];
	documents(tok, len, N);
	loss_of(sc, tok, len, N, y);
	llm_model *m = llm_seqcls_model(sc);
	size_t np = llm_model_nparams(m), nh = (size_t)nl * 16;
	float *gm = malloc(np * sizeof *gm), *gh = malloc(nh * sizeof *gh);
	memcpy(gm, llm_model_grads(m), np * sizeof *gm);
	memcpy(gh, llm_seqcls_head_grad(sc), nh * sizeof *gh);
	const llm_tensor *q = llm_model_find(m, "model.layers.1.self_attn.q_proj.weight");
	const llm_tensor *n1 = llm_model_find(m, "model.layers.0.input_layernorm.weight");
	const llm_tensor *e = llm_model_find(m, "model.embed_tokens.weight");
	float *params[] = { llm_seqcls_head(sc), llm_seqcls_head(sc), llm_model_params(m) + q->offset,
		            llm_model_params(m) + n1->offset, llm_model_params(m) + e->offset };
	const float *grads[] = { gh, gh, gm + q->offset, gm + n1->offset, gm + e->offset };
	size_t at[] = { 0, nh - 1, 17, 3, 13 * 16 + 2 }; /* embedding row 13: a token in use */
	double worst = 0;
	for (size_t k = 0; k < sizeof at / sizeof *at; k++) {
		float *p = params[k] + at[k], x = *p, h = 1e-2f;
		*p = x + h;
		double up = loss_of(sc, tok, len, N, y);
		*p = x - h;
		double down = loss_of(sc, tok, len, N, y);
		*p = x;
		double num = (up - down) / (2.0 * h), ana = grads[k][at[k]];
		double err = fabs(num - ana) / fmax(1e-3, fabs(num) + fabs(ana));
		if (err > worst)
			worst = err;
		printf("#   problem %d, parameter %zu: numeric %.6g, analytic %.6g\n", problem, k,
		       num, ana);
	}
	CHECK(worst < 2e-2);
	free(gm);
	free(gh);
	for (int i = 0; i < N; i++)
		free(tok[i]);
	llm_seqcls_free(sc);
}

static void test_grads(void)
{
	const float single[] = { 0, 2, 1, 2 }, reg[] = { 0.5f, -1, 2, 0 };
	const float multi[] = { 1, 0, 0, 0, 1, 1, 0, 1 };
	check_grads(LLM_SEQCLS_SINGLE, 3, single);
	check_grads(LLM_SEQCLS_REGRESSION, 1, reg);
	check_grads(LLM_SEQCLS_MULTI, 2, multi);
}

int main(void)
{
	RUN(test_pool_index);
	RUN(test_batched_logits);
	RUN(test_save_open);
	RUN(test_grads);
	return unit_done();
}
