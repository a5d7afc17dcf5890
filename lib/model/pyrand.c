/*
 * pyrand.c — CPython's Modules/_randommodule.c (MT19937 of Matsumoto and Nishimura, 2002)
 * and Lib/random.py's _randbelow and sample, transcribed.
 */
#include "pyrand.h"

#include <math.h>
#include <stdlib.h>

#include "core/err.h"

enum { N = 624, M = 397 };

static void init_genrand(llm_pyrand *r, uint32_t s)
{
	r->mt[0] = s;
	for (int i = 1; i < N; i++)
		r->mt[i] = 1812433253u * (r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) + (uint32_t)i;
	r->i = N;
}

void llm_pyrand_seed(llm_pyrand *r, uint64_t seed)
{
	/* init_by_array over the 32-bit words of the seed, least significant first: one word
	 * for a seed below 2^32 (0 included), two above. */
	uint32_t key[2] = { (uint32_t)seed, (uint32_t)(seed >> 32) };
	int len = key[1] ? 2 : 1;
	init_genrand(r, 19650218u);
	int i = 1, j = 0;
	for (int k = N > len ? N : len; k; k--) {
		r->mt[i] = (r->mt[i] ^ ((r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) * 1664525u)) + key[j] +
		           (uint32_t)j;
		i++;
		j++;
		if (i >= N) {
			r->mt[0] = r->mt[N - 1];
			i = 1;
		}
		if (j >= len)
			j = 0;
	}
	for (int k = N - 1; k; k--) {
		r->mt[i] = (r->mt[i] ^ ((r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) * 1566083941u)) -
		           (uint32_t)i;
		i++;
		if (i >= N) {
			r->mt[0] = r->mt[N - 1];
			i = 1;
		}
	}
	r->mt[0] = 0x80000000u; /* a non-zero state, whatever the key */
}

static uint32_t genrand(llm_pyrand *r)
{
	static const uint32_t mag01[2] = { 0, 0x9908b0dfu };
	if (r->i >= N) {
		int k;
		uint32_t y;
		for (k = 0; k < N - M; k++) {
			y = (r->mt[k] & 0x80000000u) | (r->mt[k + 1] & 0x7fffffffu);
			r->mt[k] = r->mt[k + M] ^ (y >> 1) ^ mag01[y & 1];
		}
		for (; k < N - 1; k++) {
			y = (r->mt[k] & 0x80000000u) | (r->mt[k + 1] & 0x7fffffffu);
			r->mt[k] = r->mt[k + (M - N)] ^ (y >> 1) ^ mag01[y & 1];
		}
		y = (r->mt[N - 1] & 0x80000000u) | (r->mt[0] & 0x7fffffffu);
		r->mt[N - 1] = r->mt[M - 1] ^ (y >> 1) ^ mag01[y & 1];
		r->i = 0;
	}
	uint32_t y = r->mt[r->i++];
	y ^= y >> 11;
	y ^= (y << 7) & 0x9d2c5680u;
	y ^= (y << 15) & 0xefc60000u;
	y ^= y >> 18;
	return y;
}

uint32_t llm_pyrand_bits(llm_pyrand *r, int k)
{
	return genrand(r) >> (32 - k); /* the most significant k bits */
}

uint32_t llm_pyrand_below(llm_pyrand *r, uint32_t n)
{
	int k = 0;
	while (k < 32 && (n >> k))
		k++; /* n.bit_length() */
	uint32_t v = llm_pyrand_bits(r, k);
	while (v >= n)
		v = llm_pyrand_bits(r, k);
	return v;
}

void llm_pyrand_sample(llm_pyrand *r, size_t n, size_t k, size_t *out)
{
	double setsize = 21;
	if (k > 5)
		setsize += pow(4, ceil(log((double)(k * 3)) / log(4))); /* math.log(k * 3, 4) */
	if ((double)n <= setsize) {
		size_t *pool = llm_malloc((n ? n : 1) * sizeof *pool);
		for (size_t i = 0; i < n; i++)
			pool[i] = i;
		for (size_t i = 0; i < k; i++) {
			size_t j = llm_pyrand_below(r, (uint32_t)(n - i));
			out[i] = pool[j];
			pool[j] = pool[n - i - 1];
		}
		free(pool);
		return;
	}
	/* k is small beside n here: a linear scan of the chosen stands in for Python's set */
	for (size_t i = 0; i < k; i++) {
		size_t j, s;
		do {
			j = llm_pyrand_below(r, (uint32_t)n);
			for (s = 0; s < i && out[s] != j; s++)
				;
		} while (s < i);
		out[i] = j;
	}
}
