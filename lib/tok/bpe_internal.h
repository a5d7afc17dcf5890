/*
 * bpe_internal.h — the tables of an llm_bpe, shared by bpe.c (building them, encoding) and
 * bpe_load.c (the file formats that fill them). Not part of libllm's interface.
 */
#ifndef LLM_BPE_INTERNAL_H
#define LLM_BPE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpe.h"
#include "core/buf.h"
#include "pretok.h"

#define NO_TOKEN UINT32_MAX
/* Ids beyond the number of tokens read are holes; this many at most, so a corrupt rank cannot
 * make a loader allocate gigabytes. */
#define MAX_HOLES (1u << 20)

typedef struct {
	uint32_t id1; /* id + 1; 0 = empty */
	uint32_t h32;
} bslot;

typedef struct {
	uint64_t key; /* (a + 1) << 32 | b; 0 = empty */
	uint32_t rank, id;
} pslot;

typedef struct {
	char *text;
	size_t len;
	uint32_t id;
} special;

struct llm_bpe {
	uint32_t ntok;          /* largest id + 1 */
	size_t idcap;           /* allocated length of off, len, is_special */
	uint32_t max_len;       /* longest ordinary token: longer pieces skip the whole lookup */
	uint32_t *off, *len;    /* bytes of id i: arena[off[i] .. + len[i]]; len NO_TOKEN = hole */
	unsigned char *is_special;
	llm_buf arena;
	bslot *bmap;            /* bytes -> id, ordinary tokens only */
	size_t bmask;
	pslot *pmap;            /* pair -> (rank, result), while loading */
	size_t pmask, npairs;
	/* The pairs for encoding, grouped by left token (CSR): the pairs of l are at
	 * [poff[l], poff[l + 1]), sorted by right token. A token's partners lie together, so the
	 * lists of frequent tokens stay in cache, where a hash table spreads them over memory. */
	uint32_t *poff, *pkey, *prank, *pres;
	uint32_t byte_id[256];
	/* Merges of two single bytes, by byte values: every piece starts with these lookups. */
	uint32_t *bb_rank, *bb_res;
	special *sp;            /* sorted longest first, so the first match is the longest */
	size_t nsp;
	unsigned char sp_first[256];
	llm_pretok *pt;         /* NULL: a segment is one piece */
	bool whole_first;       /* look the whole piece up before merging */
	bool prefix_space;      /* HF ByteLevel add_prefix_space */
	uint64_t file_id;
	int64_t eos, bos;
	char *name;
};

/* A new empty tokenizer named name (used in messages). */
llm_bpe *bpe_new(const char *name);
/* Give id its bytes (spec: a special token). An id may be given twice only with the same
 * bytes. ntokens bounds the ids (MAX_HOLES beyond it). LLM_EFORMAT on a conflict. */
int bpe_set_token(llm_bpe *b, uint32_t id, const char *s, size_t n, bool spec, size_t ntokens);
/* A special token (also given its id with bpe_set_token). */
int bpe_add_special(llm_bpe *b, const char *text, size_t len, uint32_t id, size_t ntokens);
/* Index ordinary tokens by bytes (then bpe_bytes_id works). LLM_EFORMAT on duplicates. */
int bpe_build_bmap(llm_bpe *b);
int64_t bpe_bytes_id(const llm_bpe *b, const void *s, size_t n);
/* Merges: a pair table while loading, then the lists encoding searches. */
void bpe_pmap_init(llm_bpe *b, size_t expected);
void bpe_pair_add(llm_bpe *b, uint32_t l, uint32_t r, uint32_t rank, uint32_t id);
void bpe_build_csr(llm_bpe *b);
/* tiktoken: the pairs from the ranks themselves. */
void bpe_build_pairs_from_ranks(llm_bpe *b);
/* Common end of every loader: index, sort specials, find EOS/BOS, compile the pattern. */
int bpe_finish(llm_bpe *b, const char *pattern, bool keep_gaps);

#endif
