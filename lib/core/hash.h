/*
 * hash.h — XXH3 hashing (xxHash) and a deterministic random number generator.
 *
 * Hashes are stable across machines and versions of llmkit: they name documents (ids), split
 * train/val and identify tokenizers, so they must never change for the same bytes.
 *
 * The RNG is xoshiro256** seeded through splitmix64. Its whole state is four u64 words, so a
 * checkpoint can save and restore it exactly (llm_rng_format / llm_rng_parse). Not
 * cryptographic. One generator per thread; the functions are pure on the state they are given.
 */
#ifndef LLM_HASH_H
#define LLM_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

uint64_t llm_hash64(const void *data, size_t n, uint64_t seed);

typedef struct {
	uint64_t lo, hi;
} llm_hash128_t;

llm_hash128_t llm_hash128(const void *data, size_t n, uint64_t seed);
/* 32 lower-case hex digits, hi then lo (canonical XXH128 order), NUL-terminated. */
void llm_hash128_hex(llm_hash128_t h, char out[33]);

/* splitmix64's finalizer: a bijection of 64-bit words in which every input bit moves every
 * output bit. For keys that are hashes already: the slot of a hash table, the probes of a
 * Bloom filter. */
static inline uint64_t llm_mix64(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* The k cells in [0, n) of key in a Bloom filter, by double hashing: key + i * (mix(key) | 1)
 * for i in [0, k), each scaled into [0, n) by a multiply (Kirsch and Mitzenmacher). */
static inline void llm_bloom_cells(uint64_t key, uint64_t n, unsigned k, uint64_t *at)
{
	uint64_t step = llm_mix64(key) | 1;
	for (unsigned i = 0; i < k; i++, key += step)
		at[i] = (uint64_t)(((unsigned __int128)key * n) >> 64);
}

/* Streaming XXH3-64 over several pieces (e.g. a file read in blocks). */
typedef struct llm_hasher llm_hasher;
llm_hasher *llm_hasher_new(uint64_t seed);
void llm_hasher_add(llm_hasher *h, const void *data, size_t n);
uint64_t llm_hasher_digest(const llm_hasher *h);
void llm_hasher_free(llm_hasher *h);

/* XXH3-64 of a whole file; LLM_EIO with detail on failure. */
int llm_hash_file(const char *path, uint64_t *out);

typedef struct {
	uint64_t s[4];
} llm_rng;

void llm_rng_seed(llm_rng *r, uint64_t seed);
/* Independent stream for (seed, stream): e.g. per document id, per rank, per thread. */
void llm_rng_seed2(llm_rng *r, uint64_t seed, uint64_t stream);
uint64_t llm_rng_next(llm_rng *r);
/* Uniform in [0, 1) with 53 random bits. */
double llm_rng_uniform(llm_rng *r);
/* Uniform integer in [0, n), unbiased; n > 0. */
uint64_t llm_rng_below(llm_rng *r, uint64_t n);
/* Standard normal (Box-Muller, no cached spare, so the state stays four words). */
double llm_rng_normal(llm_rng *r);
/* State as 64 hex digits, NUL-terminated; parse returns LLM_EFORMAT on anything else. */
void llm_rng_format(const llm_rng *r, char out[65]);
int llm_rng_parse(llm_rng *r, const char *hex);

#endif
