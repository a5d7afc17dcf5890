/*
 * test_simhash.c — SimHash voting and the permuted-block tables' guarantee.
 */
#include "unit.h"

#include "core/err.h"
#include "core/hash.h"
#include "dedup/simhash.h"

static void test_vote(void)
{
	uint64_t h[] = { ~0ull, 0, ~0ull };
	CHECK_EQ_U64(llm_simhash(h, 3), ~0ull);
	uint64_t tie[] = { 0xf0, 0x0f };
	CHECK_EQ_U64(llm_simhash(tie, 2), 0); /* a tie gives 0 */
	uint64_t one[] = { 0x8000000000000001ull };
	CHECK_EQ_U64(llm_simhash(one, 1), 0x8000000000000001ull);
	CHECK_EQ_U64(llm_simhash(NULL, 0), 0);
	/* bit k is the majority of bit k: compare with a direct count */
	llm_rng r;
	llm_rng_seed(&r, 3);
	uint64_t v[101];
	for (int i = 0; i < 101; i++)
		v[i] = llm_rng_next(&r);
	uint64_t fp = llm_simhash(v, 101), want = 0;
	for (int k = 0; k < 64; k++) {
		int ones = 0;
		for (int i = 0; i < 101; i++)
			ones += (int)((v[i] >> k) & 1);
		if (ones > 50)
			want |= 1ull << k;
	}
	CHECK_EQ_U64(fp, want);
	CHECK_EQ_INT(llm_hamming64(0, ~0ull), 64);
	CHECK_EQ_INT(llm_hamming64(5, 6), 2);
}

static unsigned binom(unsigned n, unsigned k)
{
	unsigned long long r = 1;
	for (unsigned i = 1; i <= k; i++)
		r = r * (n - k + i) / i;
	return (unsigned)r;
}

/* Every pair within distance k agrees on the key bits of at least one table, and the
 * masks cover the blocks - k blocks of each combination. */
static void test_tables(void)
{
	static const unsigned cases[][2] = { { 6, 3 }, { 6, 4 }, { 4, 3 }, { 8, 2 }, { 64, 1 } };
	llm_rng r;
	llm_rng_seed(&r, 11);
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		unsigned blocks = cases[c][0], k = cases[c][1];
		llm_simhash_tables t;
		CHECK_EQ_INT(llm_simhash_tables_init(&t, blocks, k), LLM_OK);
		CHECK_EQ_INT(t.ntables, binom(blocks, k));
		for (unsigned i = 0; i < t.ntables; i++) {
			int bits = __builtin_popcountll(t.mask[i]);
			CHECK(bits >= (int)((blocks - k) * (64 / blocks)) &&
			      bits <= (int)((blocks - k) * (64 / blocks + 1)));
		}
		for (int trial = 0; trial < 2000; trial++) {
			uint64_t a = llm_rng_next(&r), b = a;
			unsigned flips = (unsigned)llm_rng_below(&r, k + 1);
			for (unsigned f = 0; f < flips; f++)
				b ^= 1ull << llm_rng_below(&r, 64);
			int found = 0;
			for (unsigned i = 0; i < t.ntables; i++)
				found |= ((a ^ b) & t.mask[i]) == 0;
			CHECK(found);
			if (!found)
				break;
		}
	}
	llm_simhash_tables t;
	CHECK_EQ_INT(llm_simhash_tables_init(&t, 6, 6), LLM_EINVAL);
	CHECK_EQ_INT(llm_simhash_tables_init(&t, 65, 3), LLM_EINVAL);
	CHECK_EQ_INT(llm_simhash_tables_init(&t, 32, 16), LLM_EINVAL); /* C(32,16) tables */
}

int main(void)
{
	RUN(test_vote);
	RUN(test_tables);
	return unit_done();
}
