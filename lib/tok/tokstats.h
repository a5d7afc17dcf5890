/*
 * tokstats.h — per-domain token counts of an encoding run and their length quantiles, as
 * the members of llm-tokenize's --stats JSON: "tokens" ({"web": {"documents", "bytes",
 * "tokens", "bytes_per_token", "length": {p50, p90, p99, p99.5, max}}, ...}) and the
 * length sketches (sketch.h, LLM_SKETCH_STATS_KEY) that llm-shard --truncate-quantile reads.
 *
 * Domains are kept in the order they are first seen, so the JSON is the same for every
 * thread count. An empty domain name counts as "unknown". Not thread safe.
 */
#ifndef LLM_TOKSTATS_H
#define LLM_TOKSTATS_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

typedef struct llm_tokstats llm_tokstats;

llm_tokstats *llm_tokstats_new(void);
void llm_tokstats_free(llm_tokstats *s);

/* One encoded document of `domain`: its text's bytes and the tokens written for it. */
void llm_tokstats_add(llm_tokstats *s, const char *domain, size_t text_bytes, size_t tokens);

/* The two members, `"tokens": {...}` into tokens and `"length_sketches": {...}` into
 * sketches, each appended without a separator. */
void llm_tokstats_json(const llm_tokstats *s, llm_buf *tokens, llm_buf *sketches);

#endif
