/*
 * scoresketch.h — percentile buckets of document scores that scale out: a mergeable sketch of
 * each named score over a corpus (written per file, merged in any order), and the bucket
 * 1..N of a score among all the scores sketched, as Nemotron-CC and CCI 4.0 bucket their
 * classifiers' scores (20 buckets of 5%).
 *
 * A score here is a probability: a value in [0, LLM_SCORESKETCH_TOP], the upper end being
 * what fastText reports for a certain label (p + 1e-5, fasttext.h). Classifier scores pile up
 * at both ends (most of a web crawl scores near 0 for "hq", a curated set near 1), so each
 * name keeps two DDSketches (core/sketch.h): the scores below 0.5 as they are, the others as
 * their distance to LLM_SCORESKETCH_TOP. Both ends thus get relative resolution: 1e-4 and
 * 1.1e-4 differ, and so do 0.9998 and 0.99985; at 0.5 the resolution is 0.005.
 *
 * Bucket: a score's rank is the number of scores sketched below it at the sketch's
 * resolution (llm_sketch_rank: scores the sketch cannot tell apart rank alike, so a cut never
 * splits them), and its bucket among N is 1 + floor(N * rank / count), at most N: bucket N
 * holds the highest scores. Merging is exact, so the buckets from per-file sketches merged
 * equal those of one sketch over everything, whatever the split and the order of merging.
 *
 * File (one JSON object and a newline, names sorted):
 *   {"type": "llm-score-sketch", "version": 1, "scores": {"quality": {"documents": 1000,
 *    "low": {DDSketch}, "high": {DDSketch}}, ...}}
 * with the DDSketch objects of core/sketch.h ("high" holds LLM_SCORESKETCH_TOP - score). A
 * name of value scores has "kind": "value", "low" holding the magnitudes of its negative
 * values and "high" the others as they are.
 *
 * Memory: two sketches per name, each at most a few thousand counters (sketch.h).
 * Not thread safe to add or merge; bucketing only reads, so threads may bucket at once.
 */
#ifndef LLM_SCORESKETCH_H
#define LLM_SCORESKETCH_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

#define LLM_SCORESKETCH_TOP 1.00001
#define LLM_SCORESKETCH_MAX_BUCKETS 1000

typedef struct llm_scoresketch llm_scoresketch;

llm_scoresketch *llm_scoresketch_new(void);
void llm_scoresketch_free(llm_scoresketch *ss);

/* Add score v of name[0..len). LLM_EINVAL (with a detail naming the score) when v is not a
 * number in [0, LLM_SCORESKETCH_TOP]. */
int llm_scoresketch_add(llm_scoresketch *ss, const char *name, size_t len, double v);
/* Add v, a value score of name[0..len) (a regression's output, a perplexity: any number
 * within +-LLM_SKETCH_MAX): its rank among the name's values has the sketch's relative
 * resolution on either side of 0. A name is sketched as probabilities or as values, not
 * both (LLM_EINVAL naming it, also from merge). */
int llm_scoresketch_add_value(llm_scoresketch *ss, const char *name, size_t len, double v);
/* Whether name i holds values (llm_scoresketch_add_value). */
int llm_scoresketch_is_value(const llm_scoresketch *ss, size_t i);
/* dst += src, name by name (names only in src are added). */
int llm_scoresketch_merge(llm_scoresketch *dst, const llm_scoresketch *src);

/* Names, sorted: i in [0, llm_scoresketch_count). */
size_t llm_scoresketch_count(const llm_scoresketch *ss);
const char *llm_scoresketch_name(const llm_scoresketch *ss, size_t i);
/* Index of name[0..len), or -1. */
int llm_scoresketch_find(const llm_scoresketch *ss, const char *name, size_t len);
/* Scores sketched under name i. */
uint64_t llm_scoresketch_documents(const llm_scoresketch *ss, size_t i);

/* The bucket 1..nbuckets of score v among name i's scores (see above); 0 when v is outside
 * [0, LLM_SCORESKETCH_TOP] (a value: +-LLM_SKETCH_MAX) or name i has no score. nbuckets in [1, LLM_SCORESKETCH_MAX_BUCKETS]. */
int llm_scoresketch_bucket(const llm_scoresketch *ss, size_t i, double v, int nbuckets);

/* The file's text (with its newline), and the file written atomically (core/io.h writer). */
void llm_scoresketch_to_json(const llm_scoresketch *ss, llm_buf *out);
int llm_scoresketch_save(const llm_scoresketch *ss, const char *path);
/* Read a file; LLM_EIO or LLM_EFORMAT with a detail naming it. *ss is NULL on failure. */
int llm_scoresketch_load(llm_scoresketch **ss, const char *path);
/* The same from memory; name is used in messages. */
int llm_scoresketch_load_mem(llm_scoresketch **ss, const char *data, size_t len,
                             const char *name);

#endif
