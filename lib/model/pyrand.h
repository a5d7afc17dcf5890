/*
 * pyrand.h — Python's random.Random, draw for draw: the Mersenne Twister (MT19937) seeded as
 * random.seed(n) seeds it for an integer n (init_by_array over the 32-bit words of |n|),
 * getrandbits, _randbelow and sample. lm-evaluation-harness draws its few-shot examples with
 * random.Random(seed).sample; a prompt byte-identical to its prompts needs the same draws.
 *
 * Python 3's algorithms (unchanged from 3.2 to 3.13): _randbelow(n) takes getrandbits(k) for
 * k = n.bit_length() until it is below n; sample(population of n, k) picks from a shrinking
 * pool when n <= 21 + (k > 5 ? 4^ceil(log4(3k)) : 0), else draws indices until unseen.
 *
 * Memory: the generator's 624 words; sample keeps n indices or k. Thread safety: one
 * generator per thread.
 */
#ifndef LLM_PYRAND_H
#define LLM_PYRAND_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
	uint32_t mt[624];
	int i;
} llm_pyrand;

/* random.Random(seed), for seed >= 0. */
void llm_pyrand_seed(llm_pyrand *r, uint64_t seed);
/* getrandbits(k), 1 <= k <= 32. */
uint32_t llm_pyrand_bits(llm_pyrand *r, int k);
/* _randbelow(n), 1 <= n <= 2^32 - 1: uniform in [0, n). */
uint32_t llm_pyrand_below(llm_pyrand *r, uint32_t n);
/* sample(range(n), k) into out[k], 0 <= k <= n < 2^32: the indices of the population that
 * random.Random.sample(population, k) returns, in its order. */
void llm_pyrand_sample(llm_pyrand *r, size_t n, size_t k, size_t *out);

#endif
