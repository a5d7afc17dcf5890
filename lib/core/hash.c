/* hash.c — xxHash wrappers and the xoshiro256** generator (see hash.h). */
#include "hash.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "err.h"

uint64_t llm_hash64(const void *data, size_t n, uint64_t seed)
{
	return XXH3_64bits_withSeed(data, n, seed);
}

llm_hash128_t llm_hash128(const void *data, size_t n, uint64_t seed)
{
	XXH128_hash_t h = XXH3_128bits_withSeed(data, n, seed);
	return (llm_hash128_t){ h.low64, h.high64 };
}

void llm_hash128_hex(llm_hash128_t h, char out[33])
{
	snprintf(out, 33, "%016llx%016llx", (unsigned long long)h.hi, (unsigned long long)h.lo);
}

struct llm_hasher {
	XXH3_state_t st;
};

llm_hasher *llm_hasher_new(uint64_t seed)
{
	llm_hasher *h = llm_malloc(sizeof *h);
	XXH3_64bits_reset_withSeed(&h->st, seed);
	return h;
}

void llm_hasher_add(llm_hasher *h, const void *data, size_t n)
{
	XXH3_64bits_update(&h->st, data, n);
}

uint64_t llm_hasher_digest(const llm_hasher *h)
{
	return XXH3_64bits_digest(&h->st);
}

void llm_hasher_free(llm_hasher *h)
{
	free(h);
}

int llm_hash_file(const char *path, uint64_t *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return llm_fail(LLM_EIO, "%s: %s", path, strerror(errno));
	llm_hasher *h = llm_hasher_new(0);
	static _Thread_local char buf[1 << 16];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			close(fd);
			llm_hasher_free(h);
			return llm_fail(LLM_EIO, "%s: %s", path, strerror(e));
		}
		if (n == 0)
			break;
		llm_hasher_add(h, buf, n);
	}
	close(fd);
	*out = llm_hasher_digest(h);
	llm_hasher_free(h);
	return LLM_OK;
}

static uint64_t splitmix64(uint64_t *x)
{
	return llm_mix64(*x += 0x9e3779b97f4a7c15ULL);
}

void llm_rng_seed(llm_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

void llm_rng_seed2(llm_rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t k[2] = { seed, stream };
	llm_rng_seed(r, XXH3_64bits(k, sizeof k));
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t llm_rng_next(llm_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double llm_rng_uniform(llm_rng *r)
{
	return (llm_rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t llm_rng_below(llm_rng *r, uint64_t n)
{
	/* Lemire's multiply-shift with rejection: unbiased and usually one draw. */
	unsigned __int128 m = (unsigned __int128)llm_rng_next(r) * n;
	uint64_t low = (uint64_t)m;
	if (low < n) {
		uint64_t t = -n % n;
		while (low < t) {
			m = (unsigned __int128)llm_rng_next(r) * n;
			low = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

double llm_rng_normal(llm_rng *r)
{
	double u1 = 1.0 - llm_rng_uniform(r); /* (0, 1]: log never sees 0 */
	double u2 = llm_rng_uniform(r);
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

void llm_rng_format(const llm_rng *r, char out[65])
{
	snprintf(out, 65, "%016llx%016llx%016llx%016llx", (unsigned long long)r->s[0],
	         (unsigned long long)r->s[1], (unsigned long long)r->s[2], (unsigned long long)r->s[3]);
}

int llm_rng_parse(llm_rng *r, const char *hex)
{
	if (strlen(hex) != 64)
		return llm_fail(LLM_EFORMAT, "rng state: expected 64 hex digits");
	for (int i = 0; i < 4; i++) {
		uint64_t v = 0;
		for (int j = 0; j < 16; j++) {
			char c = hex[i * 16 + j];
			int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
			if (d < 0)
				return llm_fail(LLM_EFORMAT, "rng state: bad hex digit '%c'", c);
			v = v << 4 | (uint64_t)d;
		}
		r->s[i] = v;
	}
	return LLM_OK;
}
