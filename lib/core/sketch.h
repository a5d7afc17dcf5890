/*
 * sketch.h — a mergeable quantile sketch with a relative-error guarantee (DDSketch, Masson,
 * Rim and Lee, VLDB 2019), used for per-domain document-length quantiles: llm-tokenize
 * --stats saves one per domain and llm-shard --truncate-quantile reads them, so truncation at a
 * per-domain quantile needs no second pass over the data.
 *
 * Guarantee: for a sketch with accuracy alpha, llm_sketch_quantile(q) returns a value v with
 * |v - x| <= alpha * x, where x is the exact q-quantile of the values added (the value of rank
 * max(1, ceil(q * count)) in sorted order, the "nearest rank" definition; q = 0 gives the
 * minimum). The result is also clamped to the exact [min, max]. Merging two sketches of the
 * same alpha gives exactly the sketch of the union, in any order, so per-shard sketches
 * merged later equal one sketch over everything. With the default alpha 0.005 every integer
 * up to 100 has its own bucket, so short lengths come back exact after rounding.
 *
 * Values: 0 (kept in its own counter) or within [LLM_SKETCH_MIN, LLM_SKETCH_MAX]; anything
 * else is refused (LLM_EINVAL) so that the bucket range stays bounded.
 * Memory: one uint64_t per bucket between the smallest and largest value's buckets, at most
 * log(MAX / MIN) / log((1 + alpha) / (1 - alpha)) buckets (about 6,300 for alpha 0.005).
 *
 * Serialized form (JSON, one object, what --stats files hold):
 *   {"type": "ddsketch", "alpha": 0.005, "count": 1000, "zeros": 0, "min": 3, "max": 9001,
 *    "sum": 123456, "offset": 220, "bins": [4, 0, 7, ...]}
 * bins[i] counts the values v with gamma^(offset+i-1) < v <= gamma^(offset+i), gamma =
 * (1 + alpha) / (1 - alpha). llm-tokenize writes the per-domain sketches into its --stats JSON
 * as the top-level member LLM_SKETCH_STATS_KEY: {"length_sketches": {"web": {...}, ...}}.
 *
 * Not thread safe; give each thread its own sketch and merge.
 */
#ifndef LLM_SKETCH_H
#define LLM_SKETCH_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define LLM_SKETCH_ALPHA 0.005
#define LLM_SKETCH_MIN 1e-9
#define LLM_SKETCH_MAX 1e18
#define LLM_SKETCH_STATS_KEY "length_sketches"

typedef struct llm_sketch llm_sketch;

/* A new empty sketch; alpha in (0, 0.5], else LLM_SKETCH_ALPHA is used. */
llm_sketch *llm_sketch_new(double alpha);
void llm_sketch_free(llm_sketch *s);
void llm_sketch_clear(llm_sketch *s);

/* Add a value count times. LLM_EINVAL for a negative, non-finite or too large value. */
int llm_sketch_add(llm_sketch *s, double value, uint64_t count);
/* dst += src. LLM_EINVAL when their alphas differ (the union would lose the guarantee). */
int llm_sketch_merge(llm_sketch *dst, const llm_sketch *src);

double llm_sketch_alpha(const llm_sketch *s);
uint64_t llm_sketch_count(const llm_sketch *s);
/* Exact extremes; NaN when empty. */
double llm_sketch_min(const llm_sketch *s);
double llm_sketch_max(const llm_sketch *s);
/* The q-quantile (q in [0, 1]) within the guarantee above; NaN when empty or q is outside. */
double llm_sketch_quantile(const llm_sketch *s, double q);

/* The rank of x among the values added, at the sketch's resolution: *below counts the values
 * in buckets below x's bucket (zero is a bucket of its own, the lowest), *same those in x's
 * bucket; values closer than the accuracy cannot be told apart, so they rank alike. x is a
 * value llm_sketch_add would take (else both are 0). O(buckets), read-only: threads may rank
 * against one sketch at once. */
void llm_sketch_rank(const llm_sketch *s, double x, uint64_t *below, uint64_t *same);

/* Append the JSON form (no newline). */
void llm_sketch_to_json(const llm_sketch *s, llm_buf *out);
/* Parse the JSON form from text; LLM_EFORMAT with a detail on anything malformed or
 * inconsistent (bins not adding up to count, ...). */
int llm_sketch_from_json(llm_sketch **out, const char *json, size_t len);

#endif
