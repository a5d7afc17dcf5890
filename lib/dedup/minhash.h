/*
 * minhash.h — MinHash signatures, LSH band keys and the choice of bands × rows.
 *
 * hash_bits 64: permutation i maps a 64-bit shingle hash x to a_i·x + b_i mod 2^64 with a_i
 * odd, a bijection of the 64-bit space; the signature keeps, per permutation, the minimum
 * over the document's shingles. hash_bits 32 (the default, about 4x faster): x is folded to
 * 32 bits (high half XOR low half) and permuted by a_i·x + b_i mod 2^32, eight permutations
 * per vector instruction; the minima are returned in the high half of each sig value. In both
 * cases (a_i, b_i) are drawn from the seeded xoshiro generator of hash.h.
 *
 * LSH: the num_perm values are cut into bands of rows values (bands × rows <= num_perm; the
 * rest is unused). Band j's key is XXH3-64 of its values (little-endian, 4 or 8 bytes each)
 * seeded with j, so equal keys in the same band mean equal bands (up to a 2^-64 chance) and
 * keys of different bands do not meet. Two documents of Jaccard similarity s share at least one band key with
 * probability 1 - (1 - s^rows)^bands.
 *
 * Documents without shingles have no signature (callers skip them).
 * An llm_minhash is immutable after llm_minhash_new and may be shared by threads.
 */
#ifndef LLM_MINHASH_H
#define LLM_MINHASH_H

#include <stddef.h>
#include <stdint.h>

#include "core/hash.h"

#define LLM_MINHASH_MAX_PERM 4096

typedef struct llm_minhash llm_minhash;

/* LLM_EINVAL (with detail) unless 1 <= bands*rows <= num_perm <= LLM_MINHASH_MAX_PERM and
 * hash_bits is 32 or 64. */
int llm_minhash_new(llm_minhash **mh, unsigned num_perm, unsigned bands, unsigned rows,
                    unsigned hash_bits, uint64_t seed);
void llm_minhash_free(llm_minhash *mh);

/* sig[0..num_perm) = per-permutation minima over the n hashes (see above for 32 bits). */
void llm_minhash_sign(const llm_minhash *mh, const uint64_t *h, size_t n, uint64_t *sig);
/* keys[0..bands) = the band keys of a signature. */
void llm_minhash_band_keys(const llm_minhash *mh, const uint64_t *sig, uint64_t *keys);

/* Probability that two sets of Jaccard similarity s become candidates: 1-(1-s^r)^b. */
double llm_lsh_prob(double s, unsigned bands, unsigned rows);
/*
 * The bands × rows (bands*rows <= num_perm) minimising fp_weight·FP + fn_weight·FN, where FP
 * is the integral of the candidate probability over similarities [0, threshold] and FN the
 * integral of its complement over [threshold, 1]: datasketch's MinHashLSH rule, with the
 * same search order (bands outer, rows inner, first strict minimum wins).
 */
void llm_lsh_optimal(double threshold, unsigned num_perm, double fp_weight, double fn_weight,
                     unsigned *bands, unsigned *rows);

/* Jaccard similarity of two sorted sets without repeats; 0 when both are empty. */
double llm_jaccard_sorted(const uint64_t *a, size_t na, const uint64_t *b, size_t nb);
/* The same for 32-bit sets (the truncated shingle sets kept for --verify). */
double llm_jaccard_sorted32(const uint32_t *a, size_t na, const uint32_t *b, size_t nb);

#endif
