/* Unit tests for lib/hash: XXH3 reference values, RNG determinism, state round trip, ranges. */
#include "core/hash.h"
#include "unit.h"

static void test_xxh3_known_values(void)
{
	/* Reference values of XXH3_64bits / XXH3_128bits on empty input, seed 0 (xxHash docs). */
	CHECK_EQ_U64(llm_hash64("", 0, 0), 0x2D06800538D394C2ULL);
	llm_hash128_t h = llm_hash128("", 0, 0);
	char hex[33];
	llm_hash128_hex(h, hex);
	CHECK_STR(hex, "99aa06d3014798d86001c324468d497f");
	CHECK(llm_hash64("a", 1, 0) != llm_hash64("a", 1, 1));
	llm_hasher *st = llm_hasher_new(0);
	llm_hasher_add(st, "hello ", 6);
	llm_hasher_add(st, "world", 5);
	CHECK_EQ_U64(llm_hasher_digest(st), llm_hash64("hello world", 11, 0));
	llm_hasher_free(st);
}

static void test_rng_deterministic_and_serializable(void)
{
	llm_rng a, b;
	llm_rng_seed(&a, 42);
	llm_rng_seed(&b, 42);
	for (int i = 0; i < 100; i++)
		CHECK_EQ_U64(llm_rng_next(&a), llm_rng_next(&b));
	char state[65];
	llm_rng_format(&a, state);
	uint64_t expect[5];
	for (int i = 0; i < 5; i++)
		expect[i] = llm_rng_next(&a);
	llm_rng c;
	CHECK(llm_rng_parse(&c, state) == LLM_OK);
	for (int i = 0; i < 5; i++)
		CHECK_EQ_U64(llm_rng_next(&c), expect[i]);
	CHECK(llm_rng_parse(&c, "xyz") == LLM_EFORMAT);
	llm_rng_seed2(&a, 1, 2);
	llm_rng_seed2(&b, 1, 3);
	CHECK(llm_rng_next(&a) != llm_rng_next(&b));
}

static void test_rng_distributions(void)
{
	llm_rng r;
	llm_rng_seed(&r, 7);
	int counts[10] = { 0 };
	double sum = 0, sum2 = 0;
	const int n = 200000;
	for (int i = 0; i < n; i++) {
		uint64_t k = llm_rng_below(&r, 10);
		CHECK(k < 10);
		counts[k]++;
		double u = llm_rng_uniform(&r);
		CHECK(u >= 0 && u < 1);
		double z = llm_rng_normal(&r);
		sum += z;
		sum2 += z * z;
	}
	for (int k = 0; k < 10; k++)
		CHECK(abs(counts[k] - n / 10) < 600); /* ~7 sigma */
	CHECK_NEAR(sum / n, 0.0, 0.02);
	CHECK_NEAR(sum2 / n, 1.0, 0.02);
}

int main(void)
{
	RUN(test_xxh3_known_values);
	RUN(test_rng_deterministic_and_serializable);
	RUN(test_rng_distributions);
	return unit_done();
}
