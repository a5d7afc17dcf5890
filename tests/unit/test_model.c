/*
 * test_model.c — the model's wiring: parameter table and counts, LlamaConfig JSON, the whole
 * backward against finite differences of the forward, cached decoding against the full
 * forward. (Each op's own math is checked in float64 by test_ops.)
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/hash.h"
#include "model/model.h"
#include "unit.h"

static llm_model_config small_config(int tied)
{
	llm_model_config c = { .vocab_size = 11,
	                       .hidden_size = 8,
	                       .intermediate_size = 12,
	                       .num_hidden_layers = 2,
	                       .num_attention_heads = 4,
	                       .num_key_value_heads = 2,
	                       .max_position_embeddings = 16,
	                       .tie_word_embeddings = tied,
	                       .rope_theta = 10000,
	                       .rms_norm_eps = 1e-5,
	                       .initializer_range = 0.5,
	                       .bos_token_id = -1,
	                       .eos_token_id = -1 };
	return c;
}

static void test_presets(void)
{
	for (const char *p = llm_model_preset_names; *p; p += strlen(p) + 1) {
		if (strcmp(p, "1b") == 0)
			continue; /* 1.1 G parameters: counted by formula only, below */
		llm_model_config c = { .vocab_size = 512 };
		CHECK_EQ_INT(llm_model_preset(&c, p), LLM_OK);
		CHECK_EQ_INT(llm_model_config_check(&c), LLM_OK);
		llm_model *m = llm_model_new(&c);
		size_t sum = 0;
		for (size_t i = 0; i < llm_model_ntensors(m); i++) {
			const llm_tensor *t = llm_model_tensor(m, i);
			CHECK(t->offset == sum);
			sum += t->numel;
		}
		CHECK_EQ_U64(sum, llm_model_nparams(m));
		CHECK_EQ_U64(sum, (uint64_t)llm_model_config_params(&c));
		llm_model_free(m);
	}
	/* TinyLlama-1.1B's published count with its vocabulary of 32000: 1,100,048,384. */
	llm_model_config c = { .vocab_size = 32000 };
	CHECK_EQ_INT(llm_model_preset(&c, "1b"), LLM_OK);
	CHECK_EQ_INT(llm_model_config_params(&c), 1100048384);
	CHECK_EQ_INT(llm_model_preset(&c, "huge"), LLM_ENOTFOUND);
}

static void test_tensor_names(void)
{
	llm_model_config c = small_config(0);
	llm_model *m = llm_model_new(&c);
	const llm_tensor *t = llm_model_find(m, "model.layers.1.self_attn.k_proj.weight");
	CHECK(t && t->ndim == 2 && t->shape[0] == 4 && t->shape[1] == 8 && t->decay && t->layer == 1);
	t = llm_model_find(m, "model.layers.0.post_attention_layernorm.weight");
	CHECK(t && t->ndim == 1 && t->shape[0] == 8 && !t->decay);
	CHECK(llm_model_find(m, "lm_head.weight") != NULL);
	CHECK(llm_model_find(m, "model.norm.weight") != NULL);
	CHECK_EQ_INT(llm_model_ntensors(m), 1 + 2 * 9 + 2);
	llm_model_free(m);
	c.tie_word_embeddings = 1;
	m = llm_model_new(&c);
	CHECK(llm_model_find(m, "lm_head.weight") == NULL);
	llm_model_free(m);
}

static void test_config_json(void)
{
	llm_model_config c = small_config(1), d;
	c.rope_theta = 500000;
	c.eos_token_id = 3;
	llm_buf b = LLM_BUF_INIT;
	llm_model_config_json(&c, &b);
	CHECK_EQ_INT(llm_model_config_parse(&d, b.p, b.len), LLM_OK);
	CHECK(memcmp(&c, &d, sizeof c) == 0);
	/* transformers' defaults for what is absent: kv heads = heads, untied, eps 1e-6. */
	const char *hf = "{\"hidden_size\": 64, \"intermediate_size\": 172, \"num_hidden_layers\": 2,"
	                 " \"num_attention_heads\": 4, \"vocab_size\": 100}";
	CHECK_EQ_INT(llm_model_config_parse(&d, hf, strlen(hf)), LLM_OK);
	CHECK_EQ_INT(d.num_key_value_heads, 4);
	CHECK_EQ_INT(d.tie_word_embeddings, 0);
	CHECK_NEAR(d.rms_norm_eps, 1e-6, 0);
	CHECK_EQ_INT(d.max_position_embeddings, 2048);
	const char *bad[] = {
		"{\"hidden_size\": 64, \"intermediate_size\": 172, \"num_hidden_layers\": 2,"
		" \"num_attention_heads\": 4, \"rope_scaling\": {\"type\": \"linear\", \"factor\": 2}}",
		"{\"hidden_size\": 64, \"intermediate_size\": 172, \"num_hidden_layers\": 2,"
		" \"num_attention_heads\": 4, \"hidden_act\": \"gelu\"}",
		"{\"hidden_size\": 64, \"intermediate_size\": 172, \"num_hidden_layers\": 2,"
		" \"num_attention_heads\": 4, \"head_dim\": 32}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		CHECK_EQ_INT(llm_model_config_parse(&d, bad[i], strlen(bad[i])), LLM_EUNSUPPORTED);
	const char *inval = "{\"hidden_size\": 64, \"intermediate_size\": 172, \"num_hidden_layers\": 2,"
	                    " \"num_attention_heads\": 5}";
	CHECK_EQ_INT(llm_model_config_parse(&d, inval, strlen(inval)), LLM_EINVAL);
	CHECK_EQ_INT(llm_model_config_parse(&d, "{\"hidden_size\": ", 16), LLM_EFORMAT);
	CHECK_EQ_INT(llm_model_config_parse(&d, "{}", 2), LLM_EFORMAT);
	llm_buf_release(&b);
}

enum { GB = 2, GT = 5 };
static const int32_t g_in[GB * GT] = { 1, 4, 4, 9, 0, 10, 3, 2, 7, 5 };
static const int32_t g_tg[GB * GT] = { 4, 4, 9, 0, -1, 3, 2, 7, 5, 6 };

static double model_loss(llm_model *m)
{
	double loss;
	int64_t n;
	CHECK_EQ_INT(llm_model_forward(m, g_in, g_tg, GB, GT, &loss, &n), LLM_OK);
	return loss;
}

/* Whole-model backward against central differences of the fp32 forward; h = 1e-3 keeps fp32
 * rounding of the loss (~1e-7, so ~1e-4 in the quotient) below the tolerance. */
static void grad_check(int tied)
{
	llm_model_config c = small_config(tied);
	llm_model *m = llm_model_new(&c);
	llm_model_init(m, 7);
	float *p = llm_model_params(m), *g = llm_model_grads(m);
	/* norm weights away from 1 so their gradients are exercised too */
	llm_rng r;
	llm_rng_seed(&r, 3);
	for (size_t i = 0; i < llm_model_ntensors(m); i++) {
		const llm_tensor *t = llm_model_tensor(m, i);
		if (t->ndim == 1)
			for (size_t j = 0; j < t->numel; j++)
				p[t->offset + j] = (float)(0.5 + llm_rng_uniform(&r));
	}
	double loss;
	int64_t count;
	llm_model_zero_grad(m);
	CHECK_EQ_INT(llm_model_forward(m, g_in, g_tg, GB, GT, &loss, &count), LLM_OK);
	CHECK_EQ_INT(count, GB * GT - 1);
	llm_model_backward(m, 1.0f / (float)count);
	float *an = malloc(llm_model_nparams(m) * sizeof *an);
	memcpy(an, g, llm_model_nparams(m) * sizeof *an);
	double worst = 0;
	size_t nonzero = 0;
	for (size_t i = 0; i < llm_model_nparams(m); i++) {
		float keep = p[i], h = 1e-3f;
		p[i] = keep + h;
		double lp = model_loss(m);
		p[i] = keep - h;
		double lm = model_loss(m);
		p[i] = keep;
		double num = (lp - lm) / (2.0 * h), e = fabs(an[i] - num) / (2e-3 + 2e-2 * fabs(num));
		worst = fmax(worst, e);
		nonzero += fabs(num) > 1e-4;
		if (!(e <= 1))
			printf("#   param %zu: backward %.6g, finite difference %.6g\n", i, an[i], num);
	}
	CHECK(worst <= 1);
	CHECK(nonzero > llm_model_nparams(m) / 2);
	free(an);
	llm_model_free(m);
}

static void test_grad_untied(void) { grad_check(0); }
static void test_grad_tied(void) { grad_check(1); }

static void test_decode(void)
{
	llm_model_config c = small_config(0);
	llm_model *m = llm_model_new(&c);
	llm_model_init(m, 11);
	enum { T = 9 };
	int32_t tok[T] = { 3, 1, 4, 1, 5, 9, 2, 6, 5 };
	CHECK_EQ_INT(llm_model_forward(m, tok, NULL, 1, T, NULL, NULL), LLM_OK);
	float *full = malloc(T * c.vocab_size * sizeof *full), *got = malloc(sizeof *full * T * c.vocab_size);
	memcpy(full, llm_model_logits(m), T * c.vocab_size * sizeof *full);
	llm_kvcache *kv = llm_kvcache_new(m, 12);
	/* chunks of 4, 1, 4 tokens */
	CHECK_EQ_INT(llm_model_decode(m, kv, tok, 4, got), LLM_OK);
	CHECK_EQ_INT(llm_model_decode(m, kv, tok + 4, 1, got + 4 * c.vocab_size), LLM_OK);
	CHECK_EQ_INT(llm_model_decode(m, kv, tok + 5, 4, got + 5 * c.vocab_size), LLM_OK);
	CHECK_EQ_INT(llm_kvcache_len(kv), T);
	double worst = 0;
	for (int i = 0; i < T * c.vocab_size; i++)
		worst = fmax(worst, fabs(full[i] - got[i]));
	CHECK(worst < 1e-5);
	CHECK_EQ_INT(llm_model_decode(m, kv, tok, 4, got), LLM_EINVAL); /* 13 > 12 */
	llm_kvcache_reset(kv);
	CHECK_EQ_INT(llm_model_decode(m, kv, tok, 4, got), LLM_OK);
	CHECK(memcmp(got, full, 4 * c.vocab_size * sizeof *got) == 0 || worst < 1e-5);
	int32_t bad = 11;
	CHECK_EQ_INT(llm_model_decode(m, kv, &bad, 1, got), LLM_EINVAL);
	CHECK_EQ_INT(llm_model_forward(m, &bad, NULL, 1, 1, NULL, NULL), LLM_EINVAL);
	CHECK_EQ_INT(llm_model_forward(m, tok, NULL, 1, 17, NULL, NULL), LLM_EINVAL);
	llm_kvcache_free(kv);
	free(full);
	free(got);
	llm_model_free(m);
}

/* A forward with another batch size reuses the buffers and gives the same rows. */
static void test_batch_independence(void)
{
	llm_model_config c = small_config(1);
	llm_model *m = llm_model_new(&c);
	llm_model_init(m, 5);
	double l2, l1;
	int64_t n;
	CHECK_EQ_INT(llm_model_forward(m, g_in, g_tg, 2, GT, &l2, &n), LLM_OK);
	double a, b;
	CHECK_EQ_INT(llm_model_forward(m, g_in, g_tg, 1, GT, &a, &n), LLM_OK);
	CHECK_EQ_INT(n, 4);
	CHECK_EQ_INT(llm_model_forward(m, g_in + GT, g_tg + GT, 1, GT, &b, &n), LLM_OK);
	l1 = (a * 4 + b * 5) / 9;
	CHECK_NEAR(l1, l2, 1e-6);
	llm_model_free(m);
}

int main(void)
{
	RUN(test_presets);
	RUN(test_tensor_names);
	RUN(test_config_json);
	RUN(test_grad_untied);
	RUN(test_grad_tied);
	RUN(test_decode);
	RUN(test_batch_independence);
	return unit_done();
}
