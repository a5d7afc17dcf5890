/* test_sketch.c — the quantile sketch against exact quantiles of sorted data. */
#include "core/err.h"
#include "core/hash.h"
#include "core/sketch.h"
#include "unit.h"

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Exact nearest-rank quantile of sorted v[0..n). */
static double exact_q(const double *v, size_t n, double q)
{
	size_t rank = (size_t)ceil(q * (double)n * (1 - 1e-12));
	if (rank < 1)
		rank = 1;
	return v[rank - 1];
}

static const double qs[] = { 0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.995, 0.999, 1 };

/* Relative-error guarantee on several distributions of document lengths, and alphas. */
static void test_guarantee(void)
{
	enum { N = 20000 };
	static double v[N];
	double alphas[] = { 0.005, 0.01, 0.05 };
	llm_rng rng;
	llm_rng_seed(&rng, 1);
	for (int dist = 0; dist < 3; dist++)
		for (size_t a = 0; a < 3; a++) {
			llm_sketch *s = llm_sketch_new(alphas[a]);
			for (size_t i = 0; i < N; i++) {
				double x;
				if (dist == 0) /* log-normal lengths, like real documents */
					x = floor(exp(6 + 1.5 * llm_rng_normal(&rng)));
				else if (dist == 1) /* uniform small integers, zeros included */
					x = (double)llm_rng_below(&rng, 50);
				else /* heavy tail with reals */
					x = 1 / (1e-6 + llm_rng_uniform(&rng));
				v[i] = x;
				CHECK_EQ_INT(llm_sketch_add(s, x, 1), LLM_OK);
			}
			qsort(v, N, sizeof *v, cmp_dbl);
			CHECK_EQ_U64(llm_sketch_count(s), N);
			CHECK_NEAR(llm_sketch_min(s), v[0], 0);
			CHECK_NEAR(llm_sketch_max(s), v[N - 1], 0);
			for (size_t k = 0; k < sizeof qs / sizeof *qs; k++) {
				double want = exact_q(v, N, qs[k]), got = llm_sketch_quantile(s, qs[k]);
				CHECK_NEAR(got, want, alphas[a] * want * (1 + 1e-9));
			}
			llm_sketch_free(s);
		}
}

/* Small integers are exact after rounding at the default accuracy. */
static void test_small_exact(void)
{
	llm_sketch *s = llm_sketch_new(0);
	CHECK_NEAR(llm_sketch_alpha(s), LLM_SKETCH_ALPHA, 0);
	for (int i = 1; i <= 100; i++)
		llm_sketch_add(s, i, 1);
	for (int i = 1; i <= 100; i++)
		CHECK_NEAR(round(llm_sketch_quantile(s, i / 100.0)), i, 0);
	CHECK(isnan(llm_sketch_quantile(s, 1.5)));
	llm_sketch_clear(s);
	CHECK(isnan(llm_sketch_quantile(s, 0.5)));
	CHECK(isnan(llm_sketch_min(s)));
	llm_sketch_free(s);
}

static void test_rejects(void)
{
	llm_sketch *s = llm_sketch_new(0.01);
	CHECK_EQ_INT(llm_sketch_add(s, -1, 1), LLM_EINVAL);
	CHECK_EQ_INT(llm_sketch_add(s, NAN, 1), LLM_EINVAL);
	CHECK_EQ_INT(llm_sketch_add(s, INFINITY, 1), LLM_EINVAL);
	CHECK_EQ_INT(llm_sketch_add(s, 1e30, 1), LLM_EINVAL);
	CHECK_EQ_U64(llm_sketch_count(s), 0);
	llm_sketch *t = llm_sketch_new(0.02);
	CHECK_EQ_INT(llm_sketch_merge(s, t), LLM_EINVAL);
	llm_sketch_free(s);
	llm_sketch_free(t);
}

/* Merging parts in any order equals one sketch of the whole, byte for byte in JSON. */
static void test_merge(void)
{
	llm_sketch *all = llm_sketch_new(0), *part[4], *m = llm_sketch_new(0);
	for (int p = 0; p < 4; p++)
		part[p] = llm_sketch_new(0);
	llm_rng rng;
	llm_rng_seed(&rng, 7);
	for (int i = 0; i < 10000; i++) {
		/* parts have disjoint ranges so that merging must grow buckets both ways */
		int p = (int)llm_rng_below(&rng, 4);
		double x = (double)(llm_rng_below(&rng, 100) * (p == 0 ? 1000 : p == 1 ? 1 : 10));
		llm_sketch_add(all, x, 1);
		llm_sketch_add(part[p], x, 1);
	}
	int order[4] = { 2, 0, 3, 1 };
	for (int i = 0; i < 4; i++)
		CHECK_EQ_INT(llm_sketch_merge(m, part[order[i]]), LLM_OK);
	llm_buf a = LLM_BUF_INIT, b = LLM_BUF_INIT;
	llm_sketch_to_json(all, &a);
	llm_sketch_to_json(m, &b);
	CHECK_STR(a.p, b.p);
	llm_buf_release(&a);
	llm_buf_release(&b);
	for (int p = 0; p < 4; p++)
		llm_sketch_free(part[p]);
	llm_sketch_free(all);
	llm_sketch_free(m);
}

/* Ranks: exact where every value has its own bucket (small integers at the default accuracy),
 * alike for values of one bucket, and everything below a value past the maximum. */
static void test_rank(void)
{
	enum { N = 5000 };
	static unsigned cnt[60];
	llm_sketch *s = llm_sketch_new(0);
	llm_rng rng;
	llm_rng_seed(&rng, 3);
	for (int i = 0; i < N; i++) {
		unsigned x = (unsigned)llm_rng_below(&rng, 50);
		cnt[x]++;
		llm_sketch_add(s, x, 1);
	}
	uint64_t below, same, want = 0;
	for (unsigned x = 0; x < 55; x++) {
		llm_sketch_rank(s, x, &below, &same);
		CHECK_EQ_U64(below, want);
		CHECK_EQ_U64(same, cnt[x]);
		want += cnt[x];
	}
	llm_sketch_rank(s, 1e6, &below, &same);
	CHECK(below == N && same == 0);
	llm_sketch_rank(s, -1, &below, &same);
	CHECK(below == 0 && same == 0);
	llm_sketch_free(s);
	/* 0.5 and 0.501 share a bucket at alpha 0.005; 0.6 does not. */
	s = llm_sketch_new(0);
	llm_sketch_add(s, 0.5, 1);
	llm_sketch_add(s, 0.501, 2);
	llm_sketch_add(s, 0.6, 4);
	llm_sketch_rank(s, 0.5005, &below, &same);
	CHECK(below == 0 && same == 3);
	llm_sketch_rank(s, 0.6, &below, &same);
	CHECK(below == 3 && same == 4);
	llm_sketch_free(s);
}

static void test_json(void)
{
	llm_sketch *s = llm_sketch_new(0.01), *t;
	llm_buf a = LLM_BUF_INIT, b = LLM_BUF_INIT;
	llm_sketch_to_json(s, &a);
	CHECK_EQ_INT(llm_sketch_from_json(&t, a.p, a.len), LLM_OK);
	if (t) {
		CHECK_EQ_U64(llm_sketch_count(t), 0);
		CHECK(isnan(llm_sketch_max(t)));
		llm_sketch_free(t);
	}
	for (int i = 0; i < 1000; i++)
		llm_sketch_add(s, (i * 37) % 997, 1);
	llm_buf_reset(&a);
	llm_sketch_to_json(s, &a);
	CHECK_EQ_INT(llm_sketch_from_json(&t, a.p, a.len), LLM_OK);
	if (t) {
		llm_sketch_to_json(t, &b);
		CHECK_STR(a.p, b.p);
		for (size_t k = 0; k < sizeof qs / sizeof *qs; k++)
			CHECK_NEAR(llm_sketch_quantile(t, qs[k]), llm_sketch_quantile(s, qs[k]), 0);
		llm_sketch_free(t);
	}
	static const char *bad[] = {
		"",
		"[]",
		"{\"type\": \"tdigest\"}",
		"{\"type\": \"ddsketch\", \"alpha\": 0.01, \"count\": 2, \"zeros\": 0, \"min\": 1, \"max\": 2, \"sum\": 3, \"offset\": 0, \"bins\": [1]}",
		"{\"type\": \"ddsketch\", \"alpha\": 0.9, \"count\": 0, \"zeros\": 0, \"min\": null, \"max\": null, \"sum\": 0, \"offset\": 0, \"bins\": []}",
		"{\"type\": \"ddsketch\", \"alpha\": 0.01, \"count\": 1, \"zeros\": 0, \"min\": 1, \"max\": 1, \"sum\": 1, \"offset\": 99999999, \"bins\": [1]}",
		"{\"type\": \"ddsketch\", \"alpha\": 0.01, \"count\": 1, \"zeros\": 0, \"min\": 1, \"max\": 1, \"sum\": 1, \"offset\": 0, \"bins\": [-1, 2]}",
		"{\"type\": \"ddsketch\", \"alpha\": 0.01, \"count\": 1, \"zeros\": 0, \"min\": 5, \"max\": 1, \"sum\": 1, \"offset\": 0, \"bins\": [1]}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		CHECK_EQ_INT(llm_sketch_from_json(&t, bad[i], strlen(bad[i])), LLM_EFORMAT);
		CHECK(t == NULL);
	}
	llm_buf_release(&a);
	llm_buf_release(&b);
	llm_sketch_free(s);
}

int main(void)
{
	RUN(test_guarantee);
	RUN(test_small_exact);
	RUN(test_rejects);
	RUN(test_merge);
	RUN(test_rank);
	RUN(test_json);
	return unit_done();
}
