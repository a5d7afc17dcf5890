/*
 * test_eval.c — lib/model/eval and lib/model/hf: the evaluator against the training forward on the same
 * windows, every token predicted once, multiple-choice log-likelihoods against a token-by-token
 * reference, the sampler's distribution and determinism, cached generation against full
 * forwards, and loading Hugging Face directories in bf16, fp16, sharded and malformed.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "core/io.h"
#include "core/json.h"
#include "model/eval.h"
#include "model/fewshot.h"
#include "model/hf.h"
#include "model/model.h"
#include "model/safetensors.h"
#include "tok/bpe.h"
#include "unit.h"

static llm_model *tiny_model(int vocab, uint64_t seed)
{
	llm_model_config c = { .vocab_size = vocab, .hidden_size = 16, .intermediate_size = 40,
	                       .num_hidden_layers = 2, .num_attention_heads = 4,
	                       .num_key_value_heads = 2, .max_position_embeddings = 64,
	                       .tie_word_embeddings = 0, .rope_theta = 10000, .rms_norm_eps = 1e-5,
	                       .initializer_range = 0.5, .bos_token_id = -1, .eos_token_id = -1 };
	llm_model *m = llm_model_new(&c);
	/* Large weights make the distributions far from uniform, so errors show. */
	llm_model_init(m, seed);
	return m;
}

/* Sum of the token losses of one window by the training forward (its mean times its count). */
static double forward_sum(llm_model *m, const int32_t *x, const int32_t *y, int T)
{
	double loss;
	int64_t n;
	CHECK_EQ_INT(llm_model_forward(m, x, y, 1, T, &loss, &n), LLM_OK);
	return loss * (double)n;
}

static void test_loss_matches_training_forward(void)
{
	const int V = 29, T = 8;
	llm_model *m = tiny_model(V, 3);
	llm_evaluator *ev = llm_evaluator_new(m, T, 3, NULL, 0);
	/* Two domains interleaved: each is its own stream. */
	uint32_t a[20], b[5];
	for (int i = 0; i < 20; i++)
		a[i] = (uint32_t)(i * 7 + 1) % V;
	for (int i = 0; i < 5; i++)
		b[i] = (uint32_t)(i * 5 + 2) % V;
	CHECK_EQ_INT(llm_eval_doc(ev, "web", a, 12), LLM_OK);
	CHECK_EQ_INT(llm_eval_doc(ev, "code", b, 5), LLM_OK);
	CHECK_EQ_INT(llm_eval_doc(ev, "web", a + 12, 8), LLM_OK);
	uint32_t bad = (uint32_t)V;
	CHECK_EQ_INT(llm_eval_doc(ev, "web", &bad, 1), LLM_EINVAL);
	CHECK_EQ_INT(llm_eval_flush(ev), LLM_OK);
	CHECK_EQ_INT(llm_eval_ndomains(ev), 2);
	CHECK_STR(llm_eval_domain_name(ev, 0), "web");
	const llm_eval_sums *w = llm_eval_domain_sums(ev, 0), *c = llm_eval_domain_sums(ev, 1);
	CHECK_EQ_U64(w->docs, 2);
	CHECK_EQ_U64(w->tokens, 20); /* every token once: the start id 0 is context only */
	CHECK_EQ_U64(c->tokens, 5);
	CHECK(isnan(llm_eval_bits_per_byte(w)));

	/* Reference: stream 0,a[0..20) cut into windows of T+1 overlapping by one. */
	int32_t s[21];
	s[0] = 0;
	for (int i = 0; i < 20; i++)
		s[i + 1] = (int32_t)a[i];
	double ref = 0;
	for (int st = 0; st < 20; st += T) {
		int n = 20 - st < T ? 20 - st : T;
		ref += forward_sum(m, s + st, s + st + 1, n);
	}
	CHECK_NEAR(w->nats, ref, 1e-5 * ref);
	int32_t sc[6] = { 0 };
	for (int i = 0; i < 5; i++)
		sc[i + 1] = (int32_t)b[i];
	double refc = forward_sum(m, sc, sc + 1, 5);
	CHECK_NEAR(c->nats, refc, 1e-5 * refc);
	llm_eval_sums all;
	llm_eval_total(ev, &all);
	CHECK_EQ_U64(all.tokens, 25);
	CHECK_NEAR(llm_eval_loss(&all), (ref + refc) / 25, 1e-6);
	CHECK_NEAR(llm_eval_ppl(&all), exp((ref + refc) / 25), 1e-4);

	/* Windows given directly: the trainer's batches. */
	llm_evaluator *ev2 = llm_evaluator_new(m, T, 2, NULL, -1);
	int32_t y[8];
	for (int i = 0; i < 8; i++)
		y[i] = i == 3 ? -1 : s[i + 1];
	CHECK_EQ_INT(llm_eval_window(ev2, NULL, s, y, 8), LLM_OK);
	CHECK_EQ_INT(llm_eval_window(ev2, NULL, s, y, 9), LLM_EINVAL);
	CHECK_EQ_INT(llm_eval_flush(ev2), LLM_OK);
	CHECK_STR(llm_eval_domain_name(ev2, 0), "unknown");
	CHECK_EQ_U64(llm_eval_domain_sums(ev2, 0)->tokens, 7);
	double r2 = forward_sum(m, s, y, 8);
	CHECK_NEAR(llm_eval_domain_sums(ev2, 0)->nats, r2, 1e-5 * r2);
	llm_evaluator_free(ev2);
	llm_evaluator_free(ev);
	llm_model_free(m);
}

/* -ln softmax(logits)[t], all in double: an independent log-softmax, not eval.c's. */
static double nll64(const float *row, int V, int t)
{
	double mx = row[0], z = 0;
	for (int i = 1; i < V; i++)
		mx = row[i] > mx ? row[i] : mx;
	for (int i = 0; i < V; i++)
		z += exp((double)row[i] - mx);
	return mx + log(z) - (double)row[t];
}

/* One request of lm-evaluation-harness's _loglikelihood_tokens after make_disjoint_window:
 * context = a[:len(a) - (len(b) - 1)], inputs = (context + b)[-(L + 1):][:-1], and the last
 * len(b) logits score b. Its own forward, unpadded. */
static double window_ll(llm_model *m, const int32_t *a, int alen, const int32_t *b, int blen,
                        int L)
{
	int clen = alen - (blen - 1), wlen = clen + blen;
	int32_t whole[128];
	CHECK(wlen <= 128);
	memcpy(whole, a, (size_t)clen * sizeof *a);
	memcpy(whole + clen, b, (size_t)blen * sizeof *b);
	int skip = wlen > L + 1 ? wlen - (L + 1) : 0, n = wlen - skip - 1;
	CHECK_EQ_INT(llm_model_forward(m, whole + skip, NULL, 1, n, NULL, NULL), LLM_OK);
	const float *lg = llm_model_logits(m);
	int V = llm_model_get_config(m)->vocab_size;
	double ll = 0;
	for (int i = 0; i < blen; i++)
		ll -= nll64(lg + (size_t)(n - blen + i) * V, V, b[i]);
	return ll;
}

/* get_rolling_token_windows(tokens, prefix, max_seq_len=L, context_len=1), as written there. */
static double rolling_ref(llm_model *m, const uint32_t *tokens, int n, int32_t prefix, int L)
{
	int32_t tok[64], a[65];
	CHECK(n <= 64);
	for (int i = 0; i < n; i++)
		tok[i] = (int32_t)tokens[i];
	if (!n)
		return 0;
	double ll = 0;
	int pred_len = L - 1 + 1, predicted = 0, first = n < L ? n : L;
	a[0] = prefix;
	memcpy(a + 1, tok, (size_t)(first - 1) * sizeof *tok);
	ll += window_ll(m, a, first, tok, first, L);
	predicted += first;
	while (predicted < n) {
		int wpl = n - predicted < pred_len ? n - predicted : pred_len, end = predicted + wpl;
		CHECK(end - L - 1 >= 0); /* a Python slice with a negative start would wrap */
		ll += window_ll(m, tok + end - L - 1, L, tok + end - wpl, wpl, L);
		predicted += wpl;
	}
	return ll;
}

static void test_rolling(void)
{
	const int V = 29, L = 8;
	llm_model *m = tiny_model(V, 11);
	uint32_t t[20];
	for (int i = 0; i < 20; i++)
		t[i] = (uint32_t)(i * 11 + 3) % (V - 1);
	/* lengths: none, under one window, one exactly, one and one token, two and a half */
	const int lens[] = { 0, 3, 8, 9, 20 };
	const char *texts[] = { "", " a ", "one two  three", "a\u00a0b\u200bc", "x\u2028" };
	double ref[5];
	for (int k = 0; k < 5; k++)
		ref[k] = rolling_ref(m, t, lens[k], V - 1, L);
	for (int batch = 1; batch <= 3; batch += 2) {
		llm_evaluator *ev = llm_evaluator_new(m, L, batch, NULL, V - 1);
		double want = 0;
		uint64_t ntok = 0, bytes = 0;
		for (int k = 0; k < 5; k++) {
			/* each document its own domain, and all of them together in "all" */
			char dom[8];
			snprintf(dom, sizeof dom, "d%d", k);
			CHECK_EQ_INT(llm_eval_doc_rolling(ev, dom, texts[k], strlen(texts[k]), t,
			                                  (size_t)lens[k]), LLM_OK);
			CHECK_EQ_INT(llm_eval_doc_rolling(ev, "all", texts[k], strlen(texts[k]), t,
			                                  (size_t)lens[k]), LLM_OK);
			want -= ref[k];
			ntok += (uint64_t)lens[k];
			bytes += strlen(texts[k]);
		}
		CHECK_EQ_INT(llm_eval_flush(ev), LLM_OK);
		for (int k = 0; k < 5; k++) {
			const llm_eval_sums *s = llm_eval_domain_sums(ev, k ? (size_t)k + 1 : 0);
			CHECK_EQ_U64(s->docs, 1);
			CHECK_EQ_U64(s->tokens, (uint64_t)lens[k]);
			CHECK_EQ_U64(s->text_tokens, (uint64_t)lens[k]);
			CHECK_NEAR(s->nats, -ref[k], 1e-6 * fabs(ref[k]) + 1e-12);
		}
		const llm_eval_sums *s = llm_eval_domain_sums(ev, 1);
		CHECK_STR(llm_eval_domain_name(ev, 1), "all");
		CHECK_EQ_U64(s->docs, 5);
		CHECK_EQ_U64(s->tokens, ntok);
		CHECK_EQ_U64(s->bytes, bytes);
		/* Python: [len(re.split(r"\s+", t)) for t in texts] */
		CHECK_EQ_U64(s->words, 1 + 3 + 3 + 2 + 2);
		CHECK_NEAR(s->nats, want, 1e-6 * want);
		CHECK_NEAR(llm_eval_bits_per_byte(s), want / log(2) / (double)bytes, 1e-6 * want / bytes);
		CHECK_NEAR(llm_eval_byte_ppl(s), exp(want / (double)bytes), 1e-5 * exp(want / bytes));
		CHECK_NEAR(llm_eval_word_ppl(s), exp(want / 11), 1e-5 * exp(want / 11));
		uint32_t bad = (uint32_t)V;
		CHECK_EQ_INT(llm_eval_doc_rolling(ev, "all", "x", 1, &bad, 1), LLM_EINVAL);
		CHECK_EQ_U64(llm_eval_domain_sums(ev, 1)->docs, 5);
		llm_evaluator_free(ev);
	}
	llm_evaluator *none = llm_evaluator_new(m, L, 2, NULL, -1);
	CHECK_EQ_INT(llm_eval_doc_rolling(none, "x", "a", 1, t, 1), LLM_EINVAL);
	llm_evaluator_free(none);
	llm_model_free(m);
}

static void test_count_words(void)
{
	/* Python 3: len(re.split(r"\s+", s)) */
	static const struct { const char *s; size_t words; } cases[] = {
		{ "", 1 }, { " a ", 3 }, { "a\u00a0b", 2 }, { "a\u200bb", 1 }, { "a\x1c" "b", 2 },
		{ "a \t\n b", 2 }, { "one two  three", 3 }, { "\u3000x", 2 }, { "x\u2028", 2 },
		{ "\xff", 1 }, { "\xc2", 1 }, { "a\xc2\x85" "b", 2 }, { "a\xe1\x9a\x80" "b", 2 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		CHECK_EQ_U64(llm_eval_count_words(cases[i].s, strlen(cases[i].s)), cases[i].words);
}

static llm_bpe *gpt2(void)
{
	llm_bpe *bpe = NULL;
	if (llm_bpe_load(&bpe, unit_path("tests/data/tokenize/hf_gpt2/tokenizer.json.zst"), NULL,
	                 NULL, NULL) != LLM_OK)
		printf("# %s\n", llm_last_error());
	return bpe;
}

static void test_bits_per_byte(void)
{
	llm_bpe *bpe = gpt2();
	CHECK(bpe);
	if (!bpe)
		return;
	llm_model *m = tiny_model((int)llm_bpe_vocab_size(bpe), 5);
	llm_evaluator *ev = llm_evaluator_new(m, 16, 2, bpe, llm_bpe_eos(bpe));
	const char *text = "Bits per byte: the same text, any tokenizer. Ünïcödé counts bytes.";
	llm_ids ids;
	llm_ids_init(&ids);
	llm_bpe_enc *enc = llm_bpe_enc_new(bpe);
	CHECK_EQ_INT(llm_bpe_encode(enc, text, strlen(text), LLM_BPE_SPECIAL_IGNORE, &ids), LLM_OK);
	llm_ids_push(&ids, (uint32_t)llm_bpe_eos(bpe));
	CHECK_EQ_INT(llm_eval_doc(ev, "x", ids.v, ids.n), LLM_OK);
	CHECK_EQ_INT(llm_eval_flush(ev), LLM_OK);
	const llm_eval_sums *s = llm_eval_domain_sums(ev, 0);
	CHECK_EQ_U64(s->bytes, strlen(text));
	CHECK_EQ_U64(s->tokens, ids.n);
	CHECK_EQ_U64(s->text_tokens, ids.n - 1); /* end-of-text spells nothing */
	CHECK(s->text_nats < s->nats);
	CHECK_NEAR(llm_eval_bits_per_byte(s), s->text_nats / log(2) / strlen(text), 1e-12);
	llm_bpe_enc_free(enc);
	llm_ids_release(&ids);
	llm_evaluator_free(ev);
	llm_model_free(m);
	llm_bpe_free(bpe);
}

/* ln p of tokens[from..n) given tokens[0..from), one decode step at a time (no batching, no
 * padding): the reference for the chooser. */
static double ref_loglik(llm_model *m, const int32_t *t, int n, int from)
{
	int V = llm_model_get_config(m)->vocab_size;
	llm_kvcache *kv = llm_kvcache_new(m, n);
	float *lg = malloc((size_t)V * sizeof *lg);
	double s = 0;
	for (int i = 0; i < n - 1; i++) {
		llm_model_decode(m, kv, t + i, 1, lg);
		if (i + 1 < from)
			continue;
		double mx = lg[0], z = 0;
		for (int v = 1; v < V; v++)
			mx = lg[v] > mx ? lg[v] : mx;
		for (int v = 0; v < V; v++)
			z += exp(lg[v] - mx);
		s += lg[t[i + 1]] - mx - log(z);
	}
	free(lg);
	llm_kvcache_free(kv);
	return s;
}

static void test_choice(void)
{
	llm_choice_item it;
	const char *bad[] = {
		"{\"context\": \"a\", \"choices\": [\"b\"], \"gold\": 0}",
		"{\"context\": \"a\", \"choices\": [\"b\", \"c\"], \"gold\": 2}",
		"{\"context\": \"a\", \"choices\": [\"b\", 3], \"gold\": 0}",
		"{\"context\": 1, \"choices\": [\"b\", \"c\"], \"gold\": 0}",
		"{\"context\": \"a\", \"choices\": [\"b\", \"c\"]}",
		"{\"context\": \"a\", \"choices\": [\"b\", \"c\"], \"gold\": 0",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		CHECK_EQ_INT(llm_choice_parse(&it, bad[i], strlen(bad[i])), LLM_EFORMAT);
		llm_choice_item_release(&it);
	}
	const char *line = "{\"id\": 7, \"context\": \"The capital of France is \", \"choices\": "
	                   "[\"Paris\", \"a large potato\", \"Rome\"], \"gold\": 0}";
	CHECK_EQ_INT(llm_choice_parse(&it, line, strlen(line)), LLM_OK);
	CHECK_EQ_INT(it.nchoices, 3);
	CHECK_STR(it.domain, "unknown");
	CHECK_STR(it.id, "7");
	llm_bpe *bpe = gpt2();
	CHECK(bpe);
	if (!bpe) {
		llm_choice_item_release(&it);
		return;
	}
	llm_model *m = tiny_model((int)llm_bpe_vocab_size(bpe), 9);
	int64_t eos = llm_bpe_eos(bpe);
	llm_chooser *ch = llm_chooser_new(m, bpe, eos, " ");
	double ll[3];
	size_t pred, pred_norm;
	CHECK_EQ_INT(llm_chooser_score(ch, &it, ll, &pred, &pred_norm), LLM_OK);
	/* Reference: eos + encode("The capital of France is" + "  " + choice), the continuation
	 * being the tokens past those of the stripped context. */
	llm_bpe_enc *enc = llm_bpe_enc_new(bpe);
	llm_ids ctx, whole;
	llm_ids_init(&ctx);
	llm_ids_init(&whole);
	const char *stripped = "The capital of France is";
	llm_bpe_encode(enc, stripped, strlen(stripped), LLM_BPE_SPECIAL_IGNORE, &ctx);
	double best = -INFINITY, best_norm = -INFINITY;
	size_t want = 9, want_norm = 9;
	for (int i = 0; i < 3; i++) {
		char buf[128];
		snprintf(buf, sizeof buf, "%s  %s", stripped, it.choices[i]);
		whole.n = 0;
		llm_bpe_encode(enc, buf, strlen(buf), LLM_BPE_SPECIAL_IGNORE, &whole);
		int32_t t[64];
		t[0] = (int32_t)eos;
		for (size_t j = 0; j < whole.n; j++)
			t[j + 1] = (int32_t)whole.v[j];
		double r = ref_loglik(m, t, (int)whole.n + 1, (int)ctx.n + 1);
		CHECK_NEAR(ll[i], r, 1e-4 * fabs(r));
		CHECK_EQ_U64(llm_chooser_ntokens(ch)[i], whole.n - ctx.n);
		if (r > best) {
			best = r;
			want = (size_t)i;
		}
		if (r / strlen(it.choices[i]) > best_norm) {
			best_norm = r / strlen(it.choices[i]);
			want_norm = (size_t)i;
		}
	}
	CHECK_EQ_INT(pred, want);
	CHECK_EQ_INT(pred_norm, want_norm);
	llm_buf js = LLM_BUF_INIT;
	llm_choice_sample_json(&js, &it, 4, ll, llm_chooser_ntokens(ch), pred, pred_norm);
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	CHECK_EQ_INT(llm_json_parse(&rec, js.p, js.len), LLM_OK);
	int64_t v;
	CHECK(llm_json_get_i64(&rec, "doc_id", &v) == LLM_OK && v == 4);
	CHECK(llm_json_get_i64(&rec, "pred", &v) == LLM_OK && v == (int64_t)want);
	CHECK(llm_json_get_i64(&rec, "acc", &v) == LLM_OK && v == (want == 0));
	CHECK(strstr(js.p, "\"chars\": [5, 14, 4]"));
	llm_json_rec_release(&rec);
	llm_buf_release(&js);
	llm_ids_release(&ctx);
	llm_ids_release(&whole);
	llm_bpe_enc_free(enc);
	llm_chooser_free(ch);
	llm_choice_item_release(&it);
	llm_model_free(m);
	llm_bpe_free(bpe);
}

/* lm-evaluation-harness's mean_stderr, two passes in double: sample_stddev / sqrt(n). */
static double mean_stderr_ref(const double *x, size_t n)
{
	double mu = 0, ss = 0;
	for (size_t i = 0; i < n; i++)
		mu += x[i];
	mu /= (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - mu) * (x[i] - mu);
	return sqrt(ss / (double)(n - 1)) / sqrt((double)n);
}

static void test_acc_stderr(void)
{
	double x[1000];
	llm_rng rng;
	llm_rng_seed(&rng, 5);
	for (size_t n = 2; n <= 1000; n = n * 3 + 1) {
		uint64_t hits = 0;
		for (size_t i = 0; i < n; i++)
			hits += (x[i] = llm_rng_uniform(&rng) < 0.3) != 0;
		double want = mean_stderr_ref(x, n);
		CHECK_NEAR(llm_eval_acc_stderr(hits, n), want, 1e-12 * want + 1e-15);
	}
	CHECK_NEAR(llm_eval_acc_stderr(0, 10), 0, 0);
	CHECK_NEAR(llm_eval_acc_stderr(1, 2), 0.5, 1e-15); /* values 0, 1: sd 0.7071 / sqrt 2 */
	CHECK(isnan(llm_eval_acc_stderr(1, 1)));
	CHECK(isnan(llm_eval_acc_stderr(0, 0)));
}

static void fs_item(llm_choice_item *it, const char *ctx, int gold)
{
	char line[128];
	snprintf(line, sizeof line, "{\"context\": \"%s\", \"choices\": [\"x\", \"y\"], \"gold\": %d}",
	         ctx, gold);
	CHECK_EQ_INT(llm_choice_parse(it, line, strlen(line)), LLM_OK);
}

static void test_fewshot(void)
{
	/* lm-evaluation-harness 0.4.13, A = {"context": "a", "choices": ["x", "y"], "gold": 0}
	 * and so on: s = ContextSampler([A, A, B, C, D], rnd=1234);
	 * [[d["context"] for d in s.sample(n=2, eval_doc=A)] for _ in range(6)]; two copies of
	 * A, so some draws hold both and are drawn again without them */
	static const char *const want[6] = { "cd", "db", "bd", "dc", "dc", "bd" };
	static const char *const ctx[5] = { "a", "a", "b", "c", "d" };
	static const int gold[5] = { 0, 0, 1, 0, 1 };
	llm_fewshot *fs = llm_fewshot_new(2, 1234, 1, "Task.\n", " ", "\n\n");
	llm_choice_item it;
	for (int i = 0; i < 5; i++) {
		fs_item(&it, ctx[i], gold[i]);
		llm_fewshot_add(fs, &it);
		CHECK(!it.context);
	}
	CHECK_EQ_U64(llm_fewshot_pool_size(fs), 5);
	fs_item(&it, "a", 0);
	llm_buf out = LLM_BUF_INIT;
	for (int k = 0; k < 6; k++) {
		CHECK_EQ_INT(llm_fewshot_context(fs, &it, &out), LLM_OK);
		char expect[64];
		int e0 = want[k][0] - 'a', e1 = want[k][1] - 'a';
		snprintf(expect, sizeof expect, "Task.\n%c %s\n\n%c %s\n\na", want[k][0],
		         gold[e0 + 1] ? "y" : "x", want[k][1], gold[e1 + 1] ? "y" : "x");
		CHECK_MEM(out.p, out.len, expect, strlen(expect));
	}
	llm_fewshot_free(fs);
	/* 5 examples and the item itself from 5: sample(pool, 6) refuses, and so does this */
	fs = llm_fewshot_new(5, 1, 1, NULL, " ", "\n\n");
	for (int i = 0; i < 5; i++) {
		llm_choice_item p;
		fs_item(&p, ctx[i], gold[i]);
		llm_fewshot_add(fs, &p);
	}
	CHECK_EQ_INT(llm_fewshot_context(fs, &it, &out), LLM_EINVAL);
	llm_fewshot_free(fs);
	/* none: the context alone */
	fs = llm_fewshot_new(0, 1, 1, NULL, " ", "\n\n");
	CHECK_EQ_INT(llm_fewshot_context(fs, &it, &out), LLM_OK);
	CHECK_MEM(out.p, out.len, "a", 1);
	llm_fewshot_free(fs);
	llm_buf_release(&out);
	llm_choice_item_release(&it);
}

static void test_sampler(void)
{
	float lg[4] = { logf(0.5f), logf(0.3f), logf(0.2f), logf(0.5f) };
	/* Greedy: largest, lowest id among equals; top-k 1 and a tiny top-p are greedy too. */
	llm_sampler *g = llm_sampler_new(4, &(llm_sampling){ 0, 0, 1 }, 1);
	CHECK_EQ_INT(llm_sampler_next(g, lg), 0);
	llm_sampler_free(g);
	llm_sampler *k1 = llm_sampler_new(4, &(llm_sampling){ 5, 1, 1 }, 2);
	llm_sampler *p0 = llm_sampler_new(4, &(llm_sampling){ 1, 0, 1e-6 }, 3);
	for (int i = 0; i < 50; i++) {
		CHECK_EQ_INT(llm_sampler_next(k1, lg), 0);
		CHECK_EQ_INT(llm_sampler_next(p0, lg), 0);
	}
	llm_sampler_free(k1);
	llm_sampler_free(p0);
	/* Frequencies at temperature 1: p = (.5, .3, .2, .5) / 1.5. */
	enum { N = 30000 };
	int cnt[4] = { 0 };
	llm_sampler *s = llm_sampler_new(4, &(llm_sampling){ 1, 0, 1 }, 42);
	for (int i = 0; i < N; i++)
		cnt[llm_sampler_next(s, lg)]++;
	llm_sampler_free(s);
	double want[4] = { 0.5 / 1.5, 0.3 / 1.5, 0.2 / 1.5, 0.5 / 1.5 };
	for (int i = 0; i < 4; i++)
		CHECK_NEAR((double)cnt[i] / N, want[i], 0.015);
	/* top-k 3 drops id 2 (the least likely); top-p 0.7 keeps the two 0.5s (cum .33, .67 <
	 * .7) and then id 1, dropping id 2. */
	int c3[4] = { 0 }, cp[4] = { 0 };
	llm_sampler *s3 = llm_sampler_new(4, &(llm_sampling){ 1, 3, 1 }, 7);
	llm_sampler *sp = llm_sampler_new(4, &(llm_sampling){ 1, 0, 0.7 }, 7);
	for (int i = 0; i < N; i++) {
		c3[llm_sampler_next(s3, lg)]++;
		cp[llm_sampler_next(sp, lg)]++;
	}
	CHECK_EQ_INT(c3[2], 0);
	CHECK_NEAR((double)c3[1] / N, 0.3 / 1.3, 0.015);
	CHECK_EQ_INT(cp[2], 0);
	CHECK_NEAR((double)cp[0] / N, 0.5 / 1.3, 0.015);
	llm_sampler_free(s3);
	llm_sampler_free(sp);
	/* top-p 0.6: .33 then .67 >= .6, so the two 0.5s only. */
	llm_sampler *sq = llm_sampler_new(4, &(llm_sampling){ 1, 0, 0.6 }, 7);
	int cq[4] = { 0 };
	for (int i = 0; i < 2000; i++)
		cq[llm_sampler_next(sq, lg)]++;
	CHECK(cq[1] == 0 && cq[2] == 0 && cq[0] > 0 && cq[3] > 0);
	llm_sampler_free(sq);
	/* Same seed, same draws; another seed, others. */
	llm_sampler *a = llm_sampler_new(4, &(llm_sampling){ 0.8, 0, 1 }, 11);
	llm_sampler *b = llm_sampler_new(4, &(llm_sampling){ 0.8, 0, 1 }, 11);
	llm_sampler *c = llm_sampler_new(4, &(llm_sampling){ 0.8, 0, 1 }, 12);
	int same = 1, differ = 0;
	for (int i = 0; i < 64; i++) {
		int x = llm_sampler_next(a, lg), y = llm_sampler_next(b, lg), z = llm_sampler_next(c, lg);
		same &= x == y;
		differ |= x != z;
	}
	CHECK(same);
	CHECK(differ);
	llm_sampler_free(a);
	llm_sampler_free(b);
	llm_sampler_free(c);
}

static void test_generate_cache_equals_full_forward(void)
{
	const int V = 31;
	llm_model *m = tiny_model(V, 13);
	int32_t prompt[5] = { 1, 4, 9, 16, 25 };
	int32_t o1[40], o2[40];
	int n1, n2;
	for (int greedy = 0; greedy < 2; greedy++) {
		llm_sampling sp = { greedy ? 0 : 0.9, greedy ? 0 : 10, greedy ? 1 : 0.95 };
		llm_sampler *a = llm_sampler_new(V, &sp, 5), *b = llm_sampler_new(V, &sp, 5);
		CHECK_EQ_INT(llm_generate(m, prompt, 5, 40, -1, a, 1, NULL, NULL, o1, &n1), LLM_OK);
		CHECK_EQ_INT(llm_generate(m, prompt, 5, 40, -1, b, 0, NULL, NULL, o2, &n2), LLM_OK);
		CHECK_EQ_INT(n1, 40);
		CHECK_EQ_INT(n2, 40);
		CHECK(memcmp(o1, o2, sizeof o1) == 0);
		llm_sampler_free(a);
		llm_sampler_free(b);
	}
	/* Stops after the stop id, and at the model's length. */
	llm_sampler *g = llm_sampler_new(V, &(llm_sampling){ 0, 0, 1 }, 1);
	CHECK_EQ_INT(llm_generate(m, prompt, 5, 40, o1[3], g, 1, NULL, NULL, o2, &n2), LLM_OK);
	CHECK(n2 <= 4 && o2[n2 - 1] == o1[3]);
	int32_t big[64] = { 0 };
	CHECK_EQ_INT(llm_generate(m, big, 60, 40, -1, g, 1, NULL, NULL, o2, &n2), LLM_OK);
	CHECK_EQ_INT(n2, 4);
	CHECK_EQ_INT(llm_generate(m, big, 64, 4, -1, g, 1, NULL, NULL, o2, &n2), LLM_EINVAL);
	llm_sampler_free(g);
	llm_model_free(m);
}

static uint16_t to_bf16(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16); /* round to nearest even */
}

static float from_bf16(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* Write model m as a Hugging Face directory in bf16; extra: one more tensor name, or NULL;
 * skip: a tensor to leave out, or NULL; split: two files and an index. */
static void write_hf(const char *dir, llm_model *m, const char *extra, const char *skip,
                     int split)
{
	mkdir(dir, 0755);
	llm_buf b;
	llm_buf_init(&b);
	llm_model_config_json(llm_model_get_config(m), &b);
	char p[512];
	snprintf(p, sizeof p, "%s/config.json", dir);
	llm_write_file(p, b.p, b.len);
	size_t n = llm_model_nparams(m);
	uint16_t *h = malloc(n * sizeof *h);
	const float *w = llm_model_params(m);
	for (size_t i = 0; i < n; i++)
		h[i] = to_bf16(w[i]);
	llm_safetensors_writer *wr[2] = { llm_safetensors_writer_new(), llm_safetensors_writer_new() };
	llm_buf idx;
	llm_buf_init(&idx);
	llm_buf_adds(&idx, "{\"metadata\": {}, \"weight_map\": {");
	for (size_t i = 0; i < llm_model_ntensors(m); i++) {
		const llm_tensor *t = llm_model_tensor(m, i);
		if (skip && strcmp(t->name, skip) == 0)
			continue;
		int f = split && t->layer >= 1;
		llm_safetensors_writer_add(wr[f], t->name, LLM_ST_BF16, t->ndim, t->shape, h + t->offset);
		llm_buf_addf(&idx, "%s\"%s\": \"model-0000%d-of-00002.safetensors\"", i ? ", " : "",
		             t->name, f + 1);
	}
	int64_t one = 4;
	if (extra)
		llm_safetensors_writer_add(wr[0], extra, LLM_ST_BF16, 1, &one, h);
	llm_buf_adds(&idx, "}}");
	if (split) {
		for (int f = 0; f < 2; f++) {
			snprintf(p, sizeof p, "%s/model-0000%d-of-00002.safetensors", dir, f + 1);
			CHECK_EQ_INT(llm_safetensors_writer_write(wr[f], p), LLM_OK);
		}
		snprintf(p, sizeof p, "%s/model.safetensors.index.json", dir);
		llm_write_file(p, idx.p, idx.len);
	} else {
		snprintf(p, sizeof p, "%s/model.safetensors", dir);
		CHECK_EQ_INT(llm_safetensors_writer_write(wr[0], p), LLM_OK);
	}
	llm_safetensors_writer_free(wr[0]);
	llm_safetensors_writer_free(wr[1]);
	llm_buf_release(&idx);
	llm_buf_release(&b);
	free(h);
}

static void test_hf(void)
{
	char tmpl[] = "/tmp/test_eval.XXXXXX";
	char *root = mkdtemp(tmpl);
	CHECK(root);
	if (!root)
		return;
	llm_model *m = tiny_model(23, 17);
	char d[512];
	for (int split = 0; split < 2; split++) {
		snprintf(d, sizeof d, "%s/hf%d", root, split);
		write_hf(d, m, "model.layers.0.self_attn.rotary_emb.inv_freq", NULL, split);
		llm_model *got;
		llm_hf_info info;
		CHECK_EQ_INT(llm_hf_open(d, &got, &info), LLM_OK);
		if (!got) {
			printf("# %s\n", llm_last_error());
			continue;
		}
		CHECK_EQ_INT(info.llmkit, 0);
		CHECK_EQ_INT(info.step, -1);
		CHECK_EQ_INT(info.dtype, LLM_ST_BF16);
		const float *w = llm_model_params(m), *g = llm_model_params(got);
		size_t diff = 0;
		for (size_t i = 0; i < llm_model_nparams(m); i++)
			diff += g[i] != from_bf16(to_bf16(w[i]));
		CHECK_EQ_U64(diff, 0);
		llm_hf_info_release(&info);
		llm_model_free(got);
	}
	llm_model *got;
	snprintf(d, sizeof d, "%s/bias", root);
	write_hf(d, m, "model.layers.0.self_attn.q_proj.bias", NULL, 0);
	CHECK_EQ_INT(llm_hf_open(d, &got, NULL), LLM_EUNSUPPORTED);
	CHECK(strstr(llm_last_error(), "q_proj.bias"));
	snprintf(d, sizeof d, "%s/missing", root);
	write_hf(d, m, NULL, "model.norm.weight", 0);
	CHECK_EQ_INT(llm_hf_open(d, &got, NULL), LLM_EFORMAT);
	CHECK(strstr(llm_last_error(), "model.norm.weight"));
	CHECK(!got);
	snprintf(d, sizeof d, "%s/nothing", root);
	CHECK_EQ_INT(llm_hf_open(d, &got, NULL), LLM_ENOTFOUND);
	/* A configuration much larger than its weights is refused before any allocation. */
	const char *cfg = "{\"model_type\": \"llama\", \"hidden_size\": 65536, \"intermediate_size\": "
	                  "65536, \"num_hidden_layers\": 64, \"num_attention_heads\": 64}";
	char st[64] = { 0 };
	st[0] = 2;
	memcpy(st + 8, "{}", 2);
	CHECK_EQ_INT(llm_hf_from_mem(&got, cfg, strlen(cfg), st, 10, "mem"), LLM_EFORMAT);
	const char *mistral = "{\"model_type\": \"qwen2\", \"hidden_size\": 8}";
	CHECK_EQ_INT(llm_hf_from_mem(&got, mistral, strlen(mistral), st, 10, "mem"),
	             LLM_EUNSUPPORTED);
	llm_model_free(m);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	CHECK_EQ_INT(system(cmd), 0);
}

int main(void)
{
	RUN(test_loss_matches_training_forward);
	RUN(test_bits_per_byte);
	RUN(test_rolling);
	RUN(test_count_words);
	RUN(test_choice);
	RUN(test_acc_stderr);
	RUN(test_fewshot);
	RUN(test_sampler);
	RUN(test_generate_cache_equals_full_forward);
	RUN(test_hf);
	return unit_done();
}
