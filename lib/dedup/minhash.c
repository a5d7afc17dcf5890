/*
 * minhash.c — MinHash signatures and LSH parameters (see minhash.h).
 *
 * Why a·x + b mod 2^64 rather than datasketch's (a·x + b) mod (2^61 - 1): the shingle hashes
 * are already uniform 64-bit values (XXH3), so the permutation only has to decorrelate the
 * orderings; multiply-add on machine words is a universal family for the high bits, needs no
 * modulo, and keeps the inner loop at one multiply, one add and one compare per value.
 */
#include "minhash.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"

typedef uint32_t v8u32 __attribute__((vector_size(32)));

struct llm_minhash {
	unsigned num_perm, bands, rows, hash_bits;
	uint64_t *a, *b;     /* 64-bit permutations */
	v8u32 *a32, *b32;    /* 32-bit permutations, num_perm rounded up to 8 lanes */
};

int llm_minhash_new(llm_minhash **out, unsigned num_perm, unsigned bands, unsigned rows,
                    unsigned hash_bits, uint64_t seed)
{
	*out = NULL;
	if (num_perm < 1 || num_perm > LLM_MINHASH_MAX_PERM)
		return llm_fail(LLM_EINVAL, "number of permutations %u not in 1..%u", num_perm,
		                LLM_MINHASH_MAX_PERM);
	if (bands < 1 || rows < 1 || (uint64_t)bands * rows > num_perm)
		return llm_fail(LLM_EINVAL, "%u bands x %u rows do not fit in %u permutations", bands,
		                rows, num_perm);
	if (hash_bits != 32 && hash_bits != 64)
		return llm_fail(LLM_EINVAL, "hash bits must be 32 or 64, not %u", hash_bits);
	llm_minhash *mh = llm_calloc(1, sizeof *mh);
	mh->num_perm = num_perm;
	mh->bands = bands;
	mh->rows = rows;
	mh->hash_bits = hash_bits;
	mh->a = llm_malloc(num_perm * sizeof *mh->a);
	mh->b = llm_malloc(num_perm * sizeof *mh->b);
	unsigned nv = (num_perm + 7) / 8;
	/* aligned_alloc: the vector type needs 32-byte alignment */
	mh->a32 = aligned_alloc(32, nv * sizeof(v8u32));
	mh->b32 = aligned_alloc(32, nv * sizeof(v8u32));
	if (!mh->a32 || !mh->b32)
		llm_malloc(SIZE_MAX); /* hands the failure to the OOM handler */
	memset(mh->a32, 0, nv * sizeof(v8u32));
	memset(mh->b32, 0, nv * sizeof(v8u32));
	llm_rng rng;
	llm_rng_seed(&rng, seed);
	for (unsigned i = 0; i < num_perm; i++) {
		mh->a[i] = llm_rng_next(&rng) | 1;
		mh->b[i] = llm_rng_next(&rng);
		mh->a32[i / 8][i % 8] = (uint32_t)(mh->a[i] >> 32) | 1;
		mh->b32[i / 8][i % 8] = (uint32_t)(mh->b[i] >> 32);
	}
	*out = mh;
	return LLM_OK;
}

void llm_minhash_free(llm_minhash *mh)
{
	if (!mh)
		return;
	free(mh->a);
	free(mh->b);
	free(mh->a32);
	free(mh->b32);
	free(mh);
}

/*
 * 32-bit signatures: eight permutations per vector, so with AVX2 one shingle costs one
 * multiply, one add and one compare-select per eight values. target_clones picks the AVX2
 * build at load time where the CPU has it; elsewhere the same code runs on SSE2.
 */
__attribute__((target_clones("avx2", "default")))
static void sign32(const v8u32 *a, const v8u32 *b, unsigned nv, const uint64_t *h, size_t n,
                   v8u32 *m)
{
	for (unsigned i = 0; i < nv; i++)
		m[i] = (v8u32){ 0 } - 1;
	for (size_t j = 0; j < n; j++) {
		uint32_t x = (uint32_t)(h[j] >> 32) ^ (uint32_t)h[j];
		for (unsigned i = 0; i < nv; i++) {
			v8u32 v = a[i] * x + b[i];
			v8u32 lt = (v8u32)(v < m[i]);
			m[i] = (v & lt) | (m[i] & ~lt);
		}
	}
}

static void sign64(const llm_minhash *mh, const uint64_t *h, size_t n, uint64_t *sig)
{
	const unsigned np = mh->num_perm;
	const uint64_t *restrict a = mh->a, *restrict b = mh->b;
	/* Permutations outer in blocks, shingles inner: the block's minima stay in registers
	 * and the loop over shingles streams h once per block. */
	enum { BLK = 8 };
	unsigned i = 0;
	for (; i + BLK <= np; i += BLK) {
		uint64_t m[BLK], aa[BLK], bb[BLK];
		for (unsigned k = 0; k < BLK; k++) {
			m[k] = UINT64_MAX;
			aa[k] = a[i + k];
			bb[k] = b[i + k];
		}
		for (size_t j = 0; j < n; j++) {
			uint64_t x = h[j];
			for (unsigned k = 0; k < BLK; k++) {
				uint64_t v = aa[k] * x + bb[k];
				m[k] = v < m[k] ? v : m[k];
			}
		}
		for (unsigned k = 0; k < BLK; k++)
			sig[i + k] = m[k];
	}
	for (; i < np; i++) {
		uint64_t m = UINT64_MAX;
		for (size_t j = 0; j < n; j++) {
			uint64_t v = a[i] * h[j] + b[i];
			m = v < m ? v : m;
		}
		sig[i] = m;
	}
}

void llm_minhash_sign(const llm_minhash *mh, const uint64_t *h, size_t n, uint64_t *sig)
{
	if (mh->hash_bits == 64) {
		sign64(mh, h, n, sig);
		return;
	}
	unsigned nv = (mh->num_perm + 7) / 8;
	v8u32 m[(LLM_MINHASH_MAX_PERM + 7) / 8];
	sign32(mh->a32, mh->b32, nv, h, n, m);
	for (unsigned i = 0; i < mh->num_perm; i++)
		sig[i] = (uint64_t)m[i / 8][i % 8] << 32;
}

void llm_minhash_band_keys(const llm_minhash *mh, const uint64_t *sig, uint64_t *keys)
{
	unsigned r = mh->rows;
	unsigned char buf[8 * LLM_MINHASH_MAX_PERM];
	for (unsigned j = 0; j < mh->bands; j++) {
		const uint64_t *v = sig + (size_t)j * r;
		size_t len = 0;
		for (unsigned k = 0; k < r; k++) {
			uint64_t x = mh->hash_bits == 32 ? v[k] >> 32 : v[k];
			unsigned w = mh->hash_bits / 8;
			for (unsigned byte = 0; byte < w; byte++)
				buf[len++] = (unsigned char)(x >> (8 * byte));
		}
		keys[j] = llm_hash64(buf, len, j);
	}
}

double llm_lsh_prob(double s, unsigned bands, unsigned rows)
{
	return 1.0 - pow(1.0 - pow(s, rows), bands);
}

/* Adaptive Simpson quadrature: the integrands are smooth, so 1e-12 is reached quickly and
 * the argmin agrees with datasketch's scipy.integrate.quad. */
typedef double (*integrand)(double s, unsigned b, unsigned r);

static double fp_at(double s, unsigned b, unsigned r) { return llm_lsh_prob(s, b, r); }
static double fn_at(double s, unsigned b, unsigned r) { return 1.0 - llm_lsh_prob(s, b, r); }

static double simpson(integrand f, unsigned b, unsigned r, double lo, double hi, double flo,
                      double fmid, double fhi, double whole, double eps, int depth)
{
	double mid = (lo + hi) / 2, lm = (lo + mid) / 2, rm = (mid + hi) / 2;
	double flm = f(lm, b, r), frm = f(rm, b, r);
	double left = (mid - lo) / 6 * (flo + 4 * flm + fmid);
	double right = (hi - mid) / 6 * (fmid + 4 * frm + fhi);
	if (depth <= 0 || fabs(left + right - whole) <= 15 * eps)
		return left + right + (left + right - whole) / 15;
	return simpson(f, b, r, lo, mid, flo, flm, fmid, left, eps / 2, depth - 1) +
	       simpson(f, b, r, mid, hi, fmid, frm, fhi, right, eps / 2, depth - 1);
}

static double integrate(integrand f, unsigned b, unsigned r, double lo, double hi)
{
	if (hi <= lo)
		return 0;
	double flo = f(lo, b, r), fhi = f(hi, b, r), fmid = f((lo + hi) / 2, b, r);
	double whole = (hi - lo) / 6 * (flo + 4 * fmid + fhi);
	return simpson(f, b, r, lo, hi, flo, fmid, fhi, whole, 1e-12, 40);
}

void llm_lsh_optimal(double threshold, unsigned num_perm, double fp_weight, double fn_weight,
                     unsigned *bands, unsigned *rows)
{
	double best = INFINITY;
	*bands = 1;
	*rows = 1;
	for (unsigned b = 1; b <= num_perm; b++) {
		for (unsigned r = 1; r <= num_perm / b; r++) {
			double fp = integrate(fp_at, b, r, 0, threshold);
			double fn = integrate(fn_at, b, r, threshold, 1);
			double err = fp * fp_weight + fn * fn_weight;
			if (err < best) {
				best = err;
				*bands = b;
				*rows = r;
			}
		}
	}
}

double llm_jaccard_sorted(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
	size_t i = 0, j = 0, inter = 0;
	while (i < na && j < nb) {
		if (a[i] < b[j])
			i++;
		else if (a[i] > b[j])
			j++;
		else
			inter++, i++, j++;
	}
	size_t uni = na + nb - inter;
	return uni ? (double)inter / (double)uni : 0.0;
}

double llm_jaccard_sorted32(const uint32_t *a, size_t na, const uint32_t *b, size_t nb)
{
	size_t i = 0, j = 0, inter = 0;
	while (i < na && j < nb) {
		if (a[i] < b[j])
			i++;
		else if (a[i] > b[j])
			j++;
		else
			inter++, i++, j++;
	}
	size_t uni = na + nb - inter;
	return uni ? (double)inter / (double)uni : 0.0;
}
