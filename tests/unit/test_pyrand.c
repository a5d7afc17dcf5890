/*
 * test_pyrand.c — lib/model/pyrand against CPython 3.11's random.Random: the values below
 * are what Python prints for the same calls (the comment above each gives them).
 */
#include <stdint.h>

#include "model/pyrand.h"
#include "unit.h"

static void test_getrandbits(void)
{
	llm_pyrand r;
	/* r = random.Random(1234); [r.getrandbits(32) for _ in range(4)] */
	static const uint32_t want[] = { 4150886329u, 3342196574u, 1892932127u, 501869158u };
	llm_pyrand_seed(&r, 1234);
	for (int i = 0; i < 4; i++)
		CHECK_EQ_U64(llm_pyrand_bits(&r, 32), want[i]);
	/* random.Random(0), random.Random(2**40 + 5): two draws each */
	llm_pyrand_seed(&r, 0);
	CHECK_EQ_U64(llm_pyrand_bits(&r, 32), 3626764237u);
	CHECK_EQ_U64(llm_pyrand_bits(&r, 32), 1654615998u);
	llm_pyrand_seed(&r, (1ull << 40) + 5);
	CHECK_EQ_U64(llm_pyrand_bits(&r, 32), 2166296868u);
	CHECK_EQ_U64(llm_pyrand_bits(&r, 32), 2220160828u);
	/* r = random.Random(7); [r._randbelow(n) for n in (1, 2, 3, 1000, 2**31 + 1)] */
	static const uint32_t n[] = { 1, 2, 3, 1000, 2147483649u }, below[] = { 0, 0, 1, 666, 207388624 };
	llm_pyrand_seed(&r, 7);
	for (int i = 0; i < 5; i++)
		CHECK_EQ_U64(llm_pyrand_below(&r, n[i]), below[i]);
}

static void test_sample(void)
{
	/* r = random.Random(1234); r.sample(range(10), 3), r.sample(range(100), 7) (the set
	 * branch), r.sample(range(5), 5), r.sample(range(3000), 40)[:6], in this order */
	llm_pyrand r;
	llm_pyrand_seed(&r, 1234);
	size_t got[40];
	static const size_t a[] = { 7, 1, 0 }, b[] = { 11, 74, 4, 85, 88, 10, 12 },
	                    c[] = { 2, 1, 0, 4, 3 }, d[] = { 1417, 2655, 2552, 1983, 2522, 1898 };
	llm_pyrand_sample(&r, 10, 3, got);
	for (int i = 0; i < 3; i++)
		CHECK_EQ_U64(got[i], a[i]);
	llm_pyrand_sample(&r, 100, 7, got);
	for (int i = 0; i < 7; i++)
		CHECK_EQ_U64(got[i], b[i]);
	llm_pyrand_sample(&r, 5, 5, got);
	for (int i = 0; i < 5; i++)
		CHECK_EQ_U64(got[i], c[i]);
	llm_pyrand_sample(&r, 3000, 40, got);
	for (int i = 0; i < 6; i++)
		CHECK_EQ_U64(got[i], d[i]);
	for (int i = 0; i < 40; i++)
		for (int j = 0; j < i; j++)
			CHECK(got[i] != got[j]);
	llm_pyrand_sample(&r, 0, 0, got); /* nothing drawn, nothing touched */
}

int main(void)
{
	RUN(test_getrandbits);
	RUN(test_sample);
	return unit_done();
}
