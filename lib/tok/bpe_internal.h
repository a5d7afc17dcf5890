/*
 * bpe_internal.h — the tables of an llm_bpe, shared by bpe.c (building them, encoding) and
 * bpe_load.c (the file formats that fill them). Not part of libllm's interface.
 */
#ifndef LLM_BPE_INTERNAL_H
#define LLM_BPE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bpe.h"
#include "core/buf.h"
#include "core/hash.h"
#include "core/pool.h"
#include "hfnorm.h"
#include "hfpretok.h"
#include "pretok.h"
#include "spm.h"

#define NO_TOKEN UINT32_MAX
/* Ids beyond the number of tokens read are holes; this many at most, so a corrupt rank cannot
 * make a loader allocate gigabytes. */
#define MAX_HOLES (1u << 20)

/* A slot of the byte index (bpe.c): a short token's bytes are its key, a longer one is
 * found by hash and compared with the arena. */
typedef struct {
	uint64_t k0, k1; /* a short token's key; 0, 0 for a longer one */
	uint32_t id1;    /* id + 1; 0 = empty */
	uint32_t h32;    /* a longer token's hash, low half */
} bslot;

typedef struct {
	uint64_t key; /* (a + 1) << 32 | b; 0 = empty */
	uint32_t rank, id;
} pslot;

typedef struct bpe_bt bpe_bt;

/* An added token: split off before pre-tokenization. tiktoken's specials and tokenizer.json
 * tokens marked special follow the caller's llm_bpe_special mode; other added tokens are
 * always split off, as tokenizers does. */
typedef struct {
	char *text;
	size_t len;
	uint32_t id;
	bool special;      /* follows the llm_bpe_special mode */
	bool normalized;   /* matched in the normalized text, else in the text as given */
	bool lstrip, rstrip; /* the match takes the white space before / after it */
	bool single_word;  /* matches only between non-word characters */
} special;

struct llm_bpe {
	uint32_t ntok;          /* largest id + 1 */
	size_t idcap;           /* allocated length of off, len, flags */
	uint32_t max_len;       /* longest ordinary token: longer pieces skip the whole lookup */
	uint32_t *off, *len;    /* bytes of id i: arena[off[i] .. + len[i]]; len NO_TOKEN = hole */
	unsigned char *flags;   /* TOK_* of id i */
	llm_buf arena;
	bslot *bmap;            /* bytes -> id, ordinary tokens only */
	size_t bmask;
	unsigned bshift;        /* a hash's slot is its top bits: h >> bshift */
	pslot *pmap;            /* pair -> (rank, result), while loading */
	size_t pmask, npairs;
	/* The pairs for encoding, grouped by left token (CSR): the pairs of l are at
	 * [poff[l], poff[l + 1]), sorted by right token. A token's partners lie together, so the
	 * lists of frequent tokens stay in cache, where a hash table spreads them over memory. */
	uint32_t *poff, *pkey, *prank, *pres;
	uint32_t byte_id[256];
	/* Merges of two single bytes, by byte values: every piece starts with these lookups. */
	uint32_t *bb_rank, *bb_res;
	bpe_bt *bt;             /* backtracking tables (bpe_bt.c), NULL: merge by rank */
	special *sp;            /* sorted longest first, so the first match is the longest */
	size_t nsp;
	size_t nplain;          /* of them not special: split off under every llm_bpe_special mode */
	unsigned char sp_first[256];
	int sp_one;             /* the byte every added token starts with, or -1 (several) */
	llm_pretok *pt;         /* NULL: a segment is one piece (unless hp) */
	llm_hfpretok *hp;       /* tokenizer.json pre-tokenizers that are not one regex */
	llm_hfnorm *norm;       /* tokenizer.json normalizer, NULL: none */
	llm_spm *spm;           /* a SentencePiece model, which encodes and decodes the text
	                         * between added tokens (bpe_spm.c); NULL: none */
	llm_spm *uni;           /* a tokenizer.json Unigram model, which encodes each piece of
	                         * the pre-tokenizer (llm_spm_from_vocab); NULL: BPE */
	bool any_normalized;    /* an added token is matched after normalization */
	bool bytelevel;         /* the initial symbols are bytes (else characters) */
	bool byte_fallback;     /* a character without a token becomes <0xXX> tokens */
	bool fuse_unk;          /* consecutive unknown characters make one unk */
	int64_t unk;            /* the unk token or -1 (unknown characters are dropped) */
	uint32_t byte_tok[256]; /* the <0xXX> tokens (byte_fallback) */
	/* Decoding of tokenizer.json decoders: <0xXX> tokens to bytes, one Replace, and the
	 * leading spaces a Strip or Metaspace decoder removes from the text. */
	int16_t *dec_byte;      /* the byte of a <0xXX> token, else -1; NULL: none */
	char *dec_from, *dec_to;
	size_t dec_from_len, dec_to_len;
	unsigned dec_strip;
	bool lossy;             /* encoding drops or rewrites text (llm_bpe_roundtrips) */
	bool whole_first;       /* look the whole piece up before merging */
	bool rank_is_id;        /* a pair's rank is the id of its bytes' token (rank files,
	                         * byte-level) */
	bool prefix_space;      /* HF ByteLevel add_prefix_space */
	uint64_t file_id;
	int64_t eos, bos;
	char *name;
};

/* Token flags. An added token that is not a model token is left out of the byte index, so
 * that no merge or whole-piece lookup can produce it. */
#define TOK_ADDED 1   /* not a model token */
#define TOK_SPECIAL 2 /* a special token (llm_bpe_is_special) */

/* A new empty tokenizer named name (used in messages). */
llm_bpe *bpe_new(const char *name);
/* Give id its bytes and TOK_* flags. An id may be given twice only with the same bytes (a
 * tokenizer.json lists special tokens in the vocabulary and among the added tokens); then it
 * stays a model token and only gains TOK_SPECIAL. ntokens bounds the ids (MAX_HOLES beyond
 * it). LLM_EFORMAT on a conflict. */
int bpe_set_token(llm_bpe *b, uint32_t id, const char *s, size_t n, unsigned flags, size_t ntokens);
/* An added token (given its id with bpe_set_token: an id that already has these bytes stays
 * an ordinary token too, so that merges may still make it). tmpl gives the flags (NULL:
 * special, matched in the text as given). */
int bpe_add_special(llm_bpe *b, const char *text, size_t len, uint32_t id, size_t ntokens,
                    const special *tmpl);
/* Index ordinary tokens by bytes (then bpe_bytes_id works). LLM_EFORMAT on duplicates. */
int bpe_build_bmap(llm_bpe *b);
int64_t bpe_bytes_id(const llm_bpe *b, const void *s, size_t n);
/* The ids of the ordinary tokens sorted by their bytes (a prefix first), *n of them, in a new
 * array. Not reentrant: one sort at a time in the process. */
uint32_t *bpe_ordinary_by_bytes(const llm_bpe *b, uint32_t *n);
/* Merges: a pair table while loading, then the lists encoding searches (and the
 * backtracking tables). The parts that do not depend on each other run on pool; the tables
 * are the same whatever its number of threads. */
void bpe_pmap_init(llm_bpe *b, size_t expected);
void bpe_pair_add(llm_bpe *b, uint32_t l, uint32_t r, uint32_t rank, uint32_t id);
void bpe_build_csr(llm_bpe *b, llm_pool *pool);
/* tiktoken: the pairs from the ranks themselves. */
void bpe_build_pairs_from_ranks(llm_bpe *b, llm_pool *pool);
/* Common end of every loader: index, sort specials, find EOS/BOS, compile the pattern. */
int bpe_finish(llm_bpe *b, const char *pattern, bool keep_gaps);
/* A hash of the tables a loader builds: the tokens, the byte index, the pair lists and the
 * backtracking tables (bpe_bt_hash adds those). Two loads of a file hash the same whatever
 * the threads that built them, which the tests check. */
uint64_t bpe_tables_hash(const llm_bpe *b);

/* The rank of the merge of (l, r) and its result in *res, or NO_TOKEN. */
static inline uint32_t bpe_pair_lookup(const llm_bpe *b, uint32_t l, uint32_t r, uint32_t *res)
{
	uint32_t lo = b->poff[l], end = b->poff[l + 1], hi = end;
	const uint32_t *k = b->pkey;
	while (lo < hi) {
		uint32_t mid = (lo + hi) >> 1;
		if (k[mid] < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == end || k[lo] != r)
		return NO_TOKEN;
	*res = b->pres[lo];
	return b->prank[lo];
}

/* Recently looked-up pairs (including pairs that do not merge), one table per encoder: the
 * same few thousand pairs recur in every text, and this table stays in L1/L2 where the
 * vocabulary's do not. */
#define BPE_PCACHE_BITS 12

typedef struct {
	uint64_t key; /* (l + 1) << 32 | r; 0 = empty */
	uint32_t rank, res;
} bpe_pcache;

/* bpe_pair_lookup through the cache pc (1 << BPE_PCACHE_BITS slots). */
static inline uint32_t bpe_pair_cached(const llm_bpe *b, bpe_pcache *pc, uint32_t l, uint32_t r,
                                       uint32_t *res)
{
	uint64_t key = ((uint64_t)l + 1) << 32 | r;
	bpe_pcache *c = &pc[(key * 0x9e3779b97f4a7c15ULL) >> (64 - BPE_PCACHE_BITS)];
	if (c->key != key) {
		uint32_t rr = 0;
		c->rank = bpe_pair_lookup(b, l, r, &rr);
		c->res = rr;
		c->key = key;
	}
	*res = c->res;
	return c->rank;
}

/* The leftmost of the lowest of rank[0..n) (n > 0), its value in *best: the pair BPE merges
 * next (NO_TOKEN: none merges). */
static inline size_t bpe_lowest(const uint32_t *rank, size_t n, uint32_t *best)
{
	size_t bi = 0;
	*best = NO_TOKEN;
	for (size_t i = 0; i < n; i++)
		if (rank[i] < *best) {
			*best = rank[i];
			bi = i;
		}
	return bi;
}

/* Merge the n symbols in id, whose pairs have their ranks and results in rank and res, by
 * lowest rank, leftmost first, until stop symbols are left or no pair merges (the reference
 * BPE, for short pieces); returns the count left. The rank encoder (bpe.c) and backtracking
 * BPE (bpe_bt.c, to check a token's own merges) both merge with it; inline, as it sits on the
 * rank encoder's path for every short piece. */
static inline size_t bpe_merge_linear(const llm_bpe *b, bpe_pcache *pc, uint32_t *id,
                                      uint32_t *rank, uint32_t *res, size_t n, size_t stop)
{
	while (n > stop) {
		uint32_t best;
		size_t bi = bpe_lowest(rank, n - 1, &best);
		if (best == NO_TOKEN)
			break;
		/* Symbols after the pair shift left by one; so do the pairs after it. */
		size_t tail = n - bi - 2;
		id[bi] = res[bi];
		memmove(id + bi + 1, id + bi + 2, tail * sizeof *id);
		if (tail > 1) {
			memmove(rank + bi + 1, rank + bi + 2, (tail - 1) * sizeof *rank);
			memmove(res + bi + 1, res + bi + 2, (tail - 1) * sizeof *res);
		}
		n--;
		if (bi > 0)
			rank[bi - 1] = bpe_pair_cached(b, pc, id[bi - 1], id[bi], &res[bi - 1]);
		if (bi + 1 < n)
			rank[bi] = bpe_pair_cached(b, pc, id[bi], id[bi + 1], &res[bi]);
	}
	return n;
}

/*
 * Backtracking BPE (bpe_bt.c): exact linear-time encoding for byte-level vocabularies.
 * bpe_bt_new builds the tables from the finished pair lists and the n ordinary tokens in
 * byte order (bpe_ordinary_by_bytes), or returns NULL when the vocabulary does not allow
 * the method (then encoding merges by rank). bpe_bt_encode writes the ids of p[0..n)
 * (n > 0; the whole piece first when whole_first) to out (n entries) and returns their
 * count; dead is scratch for n / 64 + 1 words, pc and cc the caches of one encoder (cc: from
 * bpe_bt_cache_new, for one tokenizer only, one thread at a time). SIZE_MAX: the piece needs
 * a token whose merges are out of order (Llama 3 has 81), for which backtracking is not
 * exact; the caller merges it by rank.
 */
bpe_bt *bpe_bt_new(const llm_bpe *b, const uint32_t *by_bytes, uint32_t n, llm_pool *pool);
void bpe_bt_free(bpe_bt *t);
void bpe_bt_hash(const bpe_bt *t, uint32_t ntok, llm_hasher *h);
typedef struct bpe_bt_cache bpe_bt_cache;
bpe_bt_cache *bpe_bt_cache_new(void);
void bpe_bt_cache_free(bpe_bt_cache *c);
/* Make e merge by rank even where backtracking tables exist: the reference the tests
 * compare bpe_bt with. */
void bpe_enc_reference(llm_bpe_enc *e, bool on);
size_t bpe_bt_encode(const llm_bpe *b, bpe_pcache *pc, bpe_bt_cache *cc, const unsigned char *p,
                     size_t n, uint32_t *out, uint64_t *dead);

#endif
