/*
 * simhash.h — 64-bit SimHash fingerprints and permuted-block lookup tables.
 *
 * Fingerprint (Charikar): bit k is set when more of the document's shingle hashes have bit k
 * set than clear (a tie gives 0). Every occurrence of a shingle votes, so repeats weigh more.
 * A document without shingles has fingerprint 0.
 *
 * Lookup (Manku, Jain, Das Sarma, WWW 2007): cut the 64 bits into `blocks` contiguous blocks
 * (sizes differ by at most one bit). Two fingerprints within Hamming distance k differ in at
 * most k blocks, so they agree exactly on at least blocks - k of them; one table per choice of
 * blocks - k blocks, keyed by those bits, finds every pair within distance k. Candidates are
 * then checked with the exact distance. Tables: C(blocks, k); requires k < blocks <= 64 and
 * at most LLM_SIMHASH_MAX_TABLES tables.
 *
 * Pure functions; the table set is immutable after init.
 */
#ifndef LLM_SIMHASH_H
#define LLM_SIMHASH_H

#include <stddef.h>
#include <stdint.h>

#define LLM_SIMHASH_MAX_TABLES 1024

uint64_t llm_simhash(const uint64_t *h, size_t n);

static inline unsigned llm_hamming64(uint64_t a, uint64_t b)
{
	return (unsigned)__builtin_popcountll(a ^ b);
}

typedef struct {
	unsigned blocks, k, ntables;
	uint64_t mask[LLM_SIMHASH_MAX_TABLES]; /* bits each table keys on */
} llm_simhash_tables;

/* LLM_EINVAL with detail on impossible parameters. */
int llm_simhash_tables_init(llm_simhash_tables *t, unsigned blocks, unsigned k);

#endif
