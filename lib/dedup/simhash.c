/*
 * simhash.c — SimHash fingerprints and block tables (see simhash.h).
 */
#include "simhash.h"

#include <string.h>

#include "core/err.h"

uint64_t llm_simhash(const uint64_t *h, size_t n)
{
	/* Counting set bits per position against n/2 avoids a signed vote per bit and per
	 * shingle; 32-bit counters suffice below 4 G shingles, which the shingler guarantees. */
	uint32_t ones[64] = { 0 };
	for (size_t j = 0; j < n; j++) {
		uint64_t x = h[j];
		for (unsigned k = 0; k < 64; k++)
			ones[k] += (uint32_t)((x >> k) & 1);
	}
	uint64_t fp = 0;
	for (unsigned k = 0; k < 64; k++)
		if (2 * (uint64_t)ones[k] > n)
			fp |= 1ull << k;
	return fp;
}

int llm_simhash_tables_init(llm_simhash_tables *t, unsigned blocks, unsigned k)
{
	memset(t, 0, sizeof *t);
	if (blocks < 1 || blocks > 64 || k >= blocks)
		return llm_fail(LLM_EINVAL, "%u blocks cannot find distances up to %u (need k < blocks <= 64)",
		                blocks, k);
	uint64_t bmask[64];
	for (unsigned i = 0, bit = 0; i < blocks; i++) {
		unsigned w = 64 / blocks + (i < 64 % blocks);
		bmask[i] = (w == 64 ? ~0ull : ((1ull << w) - 1)) << bit;
		bit += w;
	}
	/* Enumerate the subsets of blocks - k blocks in lexicographic order (a combination
	 * counter), so the table numbering is fixed for given parameters. */
	unsigned keep = blocks - k, idx[64];
	for (unsigned i = 0; i < keep; i++)
		idx[i] = i;
	for (;;) {
		if (t->ntables == LLM_SIMHASH_MAX_TABLES)
			return llm_fail(LLM_EINVAL, "%u blocks with distance %u need more than %d tables",
			                blocks, k, LLM_SIMHASH_MAX_TABLES);
		uint64_t m = 0;
		for (unsigned i = 0; i < keep; i++)
			m |= bmask[idx[i]];
		t->mask[t->ntables++] = m;
		int i = (int)keep - 1;
		while (i >= 0 && idx[i] == blocks - keep + (unsigned)i)
			i--;
		if (i < 0)
			break;
		idx[i]++;
		for (unsigned j = (unsigned)i + 1; j < keep; j++)
			idx[j] = idx[j - 1] + 1;
	}
	t->blocks = blocks;
	t->k = k;
	return LLM_OK;
}
