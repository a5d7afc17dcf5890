/*
 * shingle.h — text normalisation, unit segmentation and shingle hashing for deduplication.
 *
 * A document is first normalised (llm_norm_text), then cut into units, then every run of
 * ngram consecutive units (a shingle) is hashed to 64 bits. MinHash and SimHash work on those
 * hashes (minhash.h, simhash.h); exact dedup hashes the normalised text as a whole.
 *
 * Normalisation levels (each includes the one before):
 *   LLM_NORM_NONE   the bytes as they are (invalid UTF-8 is replaced by U+FFFD)
 *   LLM_NORM_SPACE  every run of white space, control and format characters becomes one
 *                   space; leading and trailing space removed
 *   LLM_NORM_FULL   also: lower-case (simple mapping), full-width ASCII folded to ASCII,
 *                   punctuation (Unicode P*) removed, every run of decimal digits becomes "0"
 * FULL is the usual near-duplicate normalisation (datatrove's simplify_text without accent
 * stripping; data-juicer's lowercase + ignore_pattern \p{P}).
 *
 * Units:
 *   LLM_UNITS_WORD  maximal runs of non-space characters
 *   LLM_UNITS_CHAR  every character of the normalised text, spaces included
 *   LLM_UNITS_AUTO  words for space-delimited scripts (Hangul included); a run of Han
 *                   characters cut into Chinese words by the segmenter (text/zhseg.h,
 *                   jieba's dictionary), or into characters when no dictionary can be
 *                   loaded; each Kana character a unit of its own (Japanese has no
 *                   segmenter here); decided per character so that mixed documents work
 *   LLM_UNITS_AUTO_CHAR  words, and each Han or Kana character a unit of its own (the
 *                   unit of benchmark decontamination for Chinese and Japanese)
 * A shingle is the normalised text from the first byte of unit i to the last byte of unit
 * i+ngram-1 (so word shingles are "w1 w2 ... wn"). A document with fewer than ngram units
 * (but at least one) has one shingle: all of it. A document with no unit has none.
 *
 * Hashes are XXH3-64 with the given seed, stable across machines and versions.
 * Memory: the shingler keeps the normalised text and two arrays of the largest document seen,
 * and with Chinese text a segmenter (the dictionary, about 17 MB, is loaded once a process).
 * Not thread safe: one shingler per thread.
 */
#ifndef LLM_SHINGLE_H
#define LLM_SHINGLE_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "text/zhseg.h"

typedef enum { LLM_NORM_NONE, LLM_NORM_SPACE, LLM_NORM_FULL } llm_norm_level;
typedef enum { LLM_UNITS_AUTO, LLM_UNITS_WORD, LLM_UNITS_CHAR, LLM_UNITS_AUTO_CHAR } llm_units;

/* Append the normalisation of s[0..n) to out (out is not reset). */
void llm_norm_text(const char *s, size_t n, llm_norm_level level, llm_buf *out);

typedef struct {
	llm_norm_level norm;
	llm_units units;
	unsigned ngram; /* >= 1 */
	uint64_t seed;
} llm_shingle_opts;

typedef struct {
	llm_buf norm;        /* normalised text of the last document */
	llm_zhseg *zh;       /* the Chinese segmenter, made at the first Han character */
	int no_dict;         /* no dictionary for it: Han characters are units alone */
	uint32_t *ustart;    /* unit i spans norm.p[ustart[i] .. uend[i]) */
	uint32_t *uend;
	size_t nunits, ucap;
	uint64_t *h;         /* shingle hashes of the last document */
	size_t nh, hcap;
} llm_shingler;

void llm_shingler_init(llm_shingler *sh);
void llm_shingler_release(llm_shingler *sh);

/*
 * Normalise text, cut it into units and hash every shingle in document order (repeats kept)
 * into sh->h[0..sh->nh). Returns sh->nh. Documents over 4 GiB after normalisation are
 * truncated there (unit offsets are 32-bit).
 */
size_t llm_shingle(llm_shingler *sh, const llm_shingle_opts *o, const char *text, size_t n);

/* Sort sh->h and remove repeats: the shingle set. Returns the new sh->nh. */
size_t llm_shingle_set(llm_shingler *sh);

/* Sort and deduplicate a u64 array in place; returns the number of distinct values. */
size_t llm_u64_sort_unique(uint64_t *a, size_t n);

#endif
