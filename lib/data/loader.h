/*
 * loader.h — training windows from the shards of a manifest, deterministic and resumable.
 *
 * A micro-batch is B windows of T+1 consecutive tokens. Each window is drawn independently:
 *   1. a pool: with a mix ("web=0.65,code=0.35") the domain by those proportions, otherwise
 *      one pool of every document;
 *   2. a document of the pool with probability proportional to its length in tokens, times its
 *      weight (the shard's per-document weight, e.g. freshness) when `weighted`;
 *   3. a uniform start inside that document; the window runs on through the following
 *      documents of the pool (in shard order, wrapping around) without padding: the end-of-text
 *      id that ends each document separates them.
 * Labels are tokens [1, T+1) of the window; model inputs are tokens [0, T), taken from the
 * noised inputs when the shards carry them (same positions).
 *
 * Every window costs a fixed number of draws from one xoshiro256** stream, so the whole state
 * is that generator plus the number of micro-batches drawn (llm_loader_state): saving and
 * restoring it continues the exact sequence. Data-parallel ranks all draw every micro-batch
 * of the global sequence and keep their own (x = y = NULL skips the copy), so rank r's data is
 * disjoint from the others' and the union equals what one process would see.
 *
 * Shards are mapped (shard.h) and checked at open: each header against the manifest (the
 * very file it lists: counts, sizes, checksums, vocabulary, tokenizer), then every section's
 * checksum and token range, so every token handed out is below the vocabulary size and is the
 * one the manifest recorded. Memory: the mappings plus 32 bytes per
 * document. Not thread safe.
 */
#ifndef LLM_DATALOADER_H
#define LLM_DATALOADER_H

#include <stddef.h>
#include <stdint.h>

#include "core/hash.h"

typedef struct llm_loader llm_loader;

typedef struct {
	uint64_t position; /* micro-batches drawn */
	llm_rng rng;
} llm_loader_state;

/*
 * Open the shards of `split` (LLM_SPLIT_TRAIN / LLM_SPLIT_VAL) listed in the manifest at path
 * (a manifest.json, or a directory holding one). mix: NULL or "NAME=W,NAME=W" (weights >= 0,
 * normalised; a named domain without documents in the split is an error). LLM_ENOTFOUND when
 * the split has no documents; LLM_EFORMAT / LLM_EIO from the shards; LLM_EINVAL for a bad mix.
 */
int llm_loader_open(llm_loader **L, const char *path, int split, const char *mix, int weighted,
                    uint64_t seed);
void llm_loader_free(llm_loader *L);

uint32_t llm_loader_vocab(const llm_loader *L);
uint32_t llm_loader_eos(const llm_loader *L);     /* LLM_SHARD_NO_EOS when none */
uint64_t llm_loader_tokenizer_id(const llm_loader *L);
int llm_loader_noised(const llm_loader *L);
uint64_t llm_loader_tokens(const llm_loader *L);  /* tokens in the split */
uint64_t llm_loader_docs(const llm_loader *L);
/* The pools as "web=0.65,code=0.35" (or "all"), for logs. */
const char *llm_loader_mix(const llm_loader *L);

/* Draw the next micro-batch into x[B*T] (inputs) and y[B*T] (labels), or only advance when
 * both are NULL. Returns its id (the position before the draw). */
uint64_t llm_loader_next(llm_loader *L, int B, int T, int32_t *x, int32_t *y);

void llm_loader_get_state(const llm_loader *L, llm_loader_state *s);
void llm_loader_set_state(llm_loader *L, const llm_loader_state *s);

#endif
