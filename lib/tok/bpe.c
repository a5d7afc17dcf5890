/*
 * bpe.c — byte-level BPE: vocabulary tables, encoding and decoding (the loaders that fill the
 * tables are in bpe_load.c).
 *
 * One representation serves both references. Every mergeable pair of tokens (a, b) maps to
 * (rank, result): for tiktoken the rank is the id of the token a+b (tiktoken merges the pair
 * whose concatenation has the lowest rank, and every split of a token into two tokens is such
 * a pair); for Hugging Face it is the merge's line number. Encoding then needs only integer
 * hash lookups, never the bytes of the parts.
 */
#include "bpe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/hash.h"
#include "core/io.h"
#include "core/json.h"
#include "core/utf8.h"
#include "bpe_internal.h"
#include "pretok.h"

/* Pieces up to this many bytes merge by linear scan; longer ones use the heap. */
#define LINEAR_MAX 32
/* The piece cache: direct-mapped, small enough to stay in L2, for pieces up to 16 bytes (the
 * words of most text, Zipf-distributed) and their first 5 ids. */
#define CACHE_BITS 15
#define CACHE_LEN 16
#define CACHE_IDS 5
/* Tokens up to this many bytes are keys of their own in the byte index (bmap_key1). */
#define BMAP_INLINE 15
/* Pieces taken from the pre-tokenizer at a time (llm_pretok_next_n). */
#define PIECE_BATCH 64

void llm_ids_init(llm_ids *ids)
{
	ids->v = NULL;
	ids->n = ids->cap = 0;
}

void llm_ids_release(llm_ids *ids)
{
	free(ids->v);
	llm_ids_init(ids);
}

static void ids_reserve(llm_ids *ids, size_t extra)
{
	if (ids->n + extra <= ids->cap)
		return;
	size_t cap = ids->cap ? ids->cap * 2 : 256;
	while (cap < ids->n + extra)
		cap *= 2;
	ids->v = llm_realloc(ids->v, cap * sizeof *ids->v);
	ids->cap = cap;
}

void llm_ids_push(llm_ids *ids, uint32_t id)
{
	if (ids->n == ids->cap)
		ids_reserve(ids, 1);
	ids->v[ids->n++] = id;
}

/* ---- GPT-2's byte <-> code point map ---- */

static bool byte_is_printable(unsigned b)
{
	return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
}

uint32_t llm_bpe_byte_to_cp(unsigned char b)
{
	if (byte_is_printable(b))
		return b;
	/* The others take 256, 257, ... in byte order. */
	uint32_t k = 0;
	for (unsigned i = 0; i < b; i++)
		k += !byte_is_printable(i);
	return 256 + k;
}

int llm_bpe_cp_to_byte(uint32_t cp)
{
	if (cp < 256)
		return byte_is_printable(cp) ? (int)cp : -1;
	uint32_t k = cp - 256;
	for (unsigned i = 0; i < 256; i++)
		if (!byte_is_printable(i) && k-- == 0)
			return (int)i;
	return -1;
}

/* ---- the vocabulary ---- */

/* The slot is the top bits (CACHE_BITS of them in the word cache, as many as the byte index
 * has slots there), and each bit of a product depends on every bit of the factors below it:
 * no final mixing is needed (a mix64 cost 3% of the encoding of English text and saved 2% of
 * the cache misses). */
static inline uint64_t cache_hash(const uint64_t k[2], size_t n)
{
	return k[0] * 0x9e3779b97f4a7c15ULL ^ (k[1] + n) * 0xc2b2ae3d27d4eb4fULL;
}

/* k = p[0..n) zero-padded, for 0 < n <= 16, without a call to memcpy of a variable size
 * (a tenth of the encoding time of English text): overlapping loads of fixed sizes, the
 * bytes beyond the piece shifted out (little-endian; elsewhere memcpy). */
static inline void piece_key(uint64_t k[2], const unsigned char *p, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t a, b;
	if (n >= 8) {
		memcpy(&a, p, 8);
		memcpy(&b, p + n - 8, 8);
		k[0] = a;
		k[1] = n == 8 ? 0 : b >> (8 * (16 - n));
	} else if (n >= 4) {
		uint32_t x, y;
		memcpy(&x, p, 4);
		memcpy(&y, p + n - 4, 4);
		k[0] = x | ((uint64_t)y >> (8 * (8 - n))) << 32;
		k[1] = 0;
	} else {
		k[0] = p[0] | (uint64_t)p[n / 2] << (8 * (n / 2)) | (uint64_t)p[n - 1] << (8 * (n - 1));
		k[1] = 0;
	}
#else
	k[0] = k[1] = 0;
	memcpy(k, p, n);
#endif
}

/*
 * piece_key where sixteen bytes from p may be read (p + 16 <= the end of the text): two loads
 * and two masks, no branch on n. English words are of every length from 2 to 10, and
 * piece_key's branches on it were mispredicted once a piece.
 */
static inline void piece_key_wide(uint64_t k[2], const unsigned char *p, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t a, b;
	memcpy(&a, p, 8);
	memcpy(&b, p + 8, 8);
	unsigned n0 = n < 8 ? (unsigned)n : 8; /* 1..8 */
	k[0] = a & ~0ULL >> (64 - 8 * n0);
	k[1] = b & ~0ULL >> ((128 - 8 * n) & 63) & -(uint64_t)(n > 8);
#else
	piece_key(k, p, n);
#endif
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

llm_bpe *bpe_new(const char *name)
{
	llm_bpe *b = llm_calloc(1, sizeof *b);
	b->name = llm_strdup(name ? name : "tokenizer");
	llm_buf_init(&b->arena);
	b->eos = b->bos = b->unk = -1;
	b->bytelevel = true;
	return b;
}

void llm_bpe_free(llm_bpe *b)
{
	if (!b)
		return;
	free(b->off);
	free(b->len);
	free(b->flags);
	llm_buf_release(&b->arena);
	free(b->bmap);
	free(b->pmap);
	free(b->bb_rank);
	free(b->bb_res);
	free(b->poff);
	free(b->pkey);
	free(b->prank);
	free(b->pres);
	bpe_bt_free(b->bt);
	for (size_t i = 0; i < b->nsp; i++)
		free(b->sp[i].text);
	free(b->sp);
	llm_pretok_free(b->pt);
	llm_hfpretok_free(b->hp);
	llm_hfnorm_free(b->norm);
	llm_spm_free(b->spm);
	llm_spm_free(b->uni);
	free(b->dec_byte);
	free(b->dec_from);
	free(b->dec_to);
	free(b->name);
	free(b);
}

/* Make ids [0, n) addressable, new ones as holes. Capacity grows geometrically: loaders
 * add ids one by one. */
static int grow_ids(llm_bpe *b, uint64_t n, size_t ntokens)
{
	if (n <= b->ntok)
		return LLM_OK;
	if (n > (uint64_t)ntokens + MAX_HOLES || n >= NO_TOKEN)
		return llm_fail(LLM_EFORMAT, "%s: id %llu is far beyond the %zu tokens", b->name,
		                (unsigned long long)(n - 1), ntokens);
	if (n > b->idcap) {
		size_t cap = b->idcap ? b->idcap * 2 : 1024;
		while (cap < n)
			cap *= 2;
		b->off = llm_realloc(b->off, cap * sizeof *b->off);
		b->len = llm_realloc(b->len, cap * sizeof *b->len);
		b->flags = llm_realloc(b->flags, cap);
		b->idcap = cap;
	}
	for (uint64_t i = b->ntok; i < n; i++) {
		b->off[i] = 0;
		b->len[i] = NO_TOKEN;
		b->flags[i] = 0;
	}
	b->ntok = (uint32_t)n;
	return LLM_OK;
}

int bpe_set_token(llm_bpe *b, uint32_t id, const char *s, size_t n, unsigned flags, size_t ntokens)
{
	int rc = grow_ids(b, (uint64_t)id + 1, ntokens);
	if (rc)
		return rc;
	if (b->len[id] != NO_TOKEN) {
		if (b->len[id] != n || memcmp(b->arena.p + b->off[id], s, n) != 0)
			return llm_fail(LLM_EFORMAT, "%s: id %u is given to two different tokens", b->name, id);
		b->flags[id] |= flags & TOK_SPECIAL;
		return LLM_OK;
	}
	if (n == 0)
		return llm_fail(LLM_EFORMAT, "%s: id %u is an empty token", b->name, id);
	if (b->arena.len + n >= NO_TOKEN)
		return llm_fail(LLM_EFORMAT, "%s: vocabulary too large", b->name);
	b->off[id] = (uint32_t)b->arena.len;
	b->len[id] = (uint32_t)n;
	b->flags[id] = (unsigned char)flags;
	llm_buf_add(&b->arena, s, n);
	return LLM_OK;
}

/* The byte index (bslot): a token of up to BMAP_INLINE bytes is its own key, piece_key's
 * with its length in the top byte (which such a key leaves zero), so that looking a word up
 * reads one slot and no token; longer tokens are found by hash and compared in the arena. */
static inline uint64_t bmap_key1(uint64_t k1, size_t n)
{
	return k1 | (uint64_t)n << 56;
}

/* The token whose key (piece_key) is k0, k1 for n <= BMAP_INLINE bytes, h = cache_hash. */
static inline int64_t bmap_find_key(const llm_bpe *b, uint64_t k0, uint64_t k1, size_t n,
                                    uint64_t h)
{
	k1 = bmap_key1(k1, n);
	for (size_t i = h >> b->bshift;; i = (i + 1) & b->bmask) {
		const bslot *sl = &b->bmap[i];
		if (sl->k0 == k0 && sl->k1 == k1) /* never an empty slot's: k1 holds n > 0 */
			return sl->id1 - 1;
		if (!sl->id1)
			return -1;
	}
}

/* Where bytes s[0..n) are looked up: the key of a short token, the hash of any. */
static inline uint64_t bmap_hash(const void *s, size_t n, uint64_t k[2])
{
	if (n && n <= BMAP_INLINE) {
		piece_key(k, s, n);
		return cache_hash(k, n);
	}
	k[0] = k[1] = 0;
	return llm_hash64(s, n, 0);
}

static int64_t bmap_find(const llm_bpe *b, const void *s, size_t n)
{
	uint64_t k[2], h = bmap_hash(s, n, k);
	if (n && n <= BMAP_INLINE)
		return bmap_find_key(b, k[0], k[1], n, h);
	uint32_t h32 = (uint32_t)h;
	for (size_t i = h >> b->bshift;; i = (i + 1) & b->bmask) {
		const bslot *sl = &b->bmap[i];
		if (!sl->id1)
			return -1;
		uint32_t id = sl->id1 - 1;
		if (!sl->k1 && sl->h32 == h32 && b->len[id] == n &&
		    memcmp(b->arena.p + b->off[id], s, n) == 0)
			return id;
	}
}

int64_t bpe_bytes_id(const llm_bpe *b, const void *s, size_t n)
{
	return bmap_find(b, s, n);
}

/* Index the ordinary tokens by bytes; LLM_EFORMAT when two ids share the same bytes. */
int bpe_build_bmap(llm_bpe *b)
{
	size_t cap = 16;
	while (cap < (size_t)b->ntok * 2)
		cap *= 2;
	b->bmap = llm_calloc(cap, sizeof *b->bmap);
	b->bmask = cap - 1;
	b->bshift = 64 - (unsigned)__builtin_ctzll(cap); /* the top bits: see cache_hash */
	for (uint32_t id = 0; id < b->ntok; id++) {
		if (b->len[id] == NO_TOKEN || (b->flags[id] & TOK_ADDED))
			continue;
		const char *s = b->arena.p + b->off[id];
		size_t n = b->len[id];
		int64_t other = bmap_find(b, s, n);
		if (other >= 0)
			return llm_fail(LLM_EFORMAT, "%s: ids %lld and %u are the same token", b->name,
			                (long long)other, id);
		uint64_t k[2], h = bmap_hash(s, n, k);
		size_t i = h >> b->bshift;
		while (b->bmap[i].id1)
			i = (i + 1) & b->bmask;
		bool in = n && n <= BMAP_INLINE;
		b->bmap[i] = in ? (bslot){ k[0], bmap_key1(k[1], n), id + 1, 0 }
		                : (bslot){ 0, 0, id + 1, (uint32_t)h };
		if (b->len[id] > b->max_len)
			b->max_len = b->len[id];
	}
	for (int c = 0; c < 256; c++) {
		char ch = (char)c;
		int64_t id = bpe_bytes_id(b, &ch, 1);
		if (id < 0 && b->bytelevel)
			return llm_fail(LLM_EFORMAT, "%s: byte 0x%02x has no token", b->name, c);
		b->byte_id[c] = id < 0 ? NO_TOKEN : (uint32_t)id;
	}
	return LLM_OK;
}

static const llm_bpe *sort_bpe; /* qsort has no context argument; the sort is serial */

static int cmp_bytes(const void *x, const void *y)
{
	const llm_bpe *b = sort_bpe;
	uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
	uint32_t li = b->len[i], lj = b->len[j];
	int c = memcmp(b->arena.p + b->off[i], b->arena.p + b->off[j], li < lj ? li : lj);
	return c ? c : (li > lj) - (li < lj);
}

/*
 * The ordinary tokens sorted by their bytes (cmp_bytes' order): by the first 8 bytes,
 * big-endian and zero-padded, with an LSD radix sort, then each run of equal keys with
 * cmp_bytes. The runs are few and short (long tokens that share 8 bytes); a comparison sort
 * of the whole vocabulary took a fifth of o200k's load.
 */
uint32_t *bpe_ordinary_by_bytes(const llm_bpe *b, uint32_t *count)
{
	uint32_t *ids = llm_malloc(((size_t)b->ntok + 1) * sizeof *ids), n = 0;
	for (uint32_t id = 0; id < b->ntok; id++)
		if (b->len[id] != NO_TOKEN && !(b->flags[id] & TOK_ADDED))
			ids[n++] = id;
	typedef struct {
		uint64_t key;
		uint32_t id;
	} kid;
	kid *a = llm_malloc((n ? n : 1) * sizeof *a), *tmp = llm_malloc((n ? n : 1) * sizeof *tmp);
	for (uint32_t i = 0; i < n; i++) {
		const unsigned char *s = (const unsigned char *)b->arena.p + b->off[ids[i]];
		uint32_t len = b->len[ids[i]];
		uint64_t key = 0;
		for (uint32_t j = 0; j < 8; j++)
			key = key << 8 | (j < len ? s[j] : 0);
		a[i] = (kid){ key, ids[i] };
	}
	for (unsigned shift = 0; shift < 64; shift += 8) {
		uint32_t cnt[257] = { 0 };
		for (uint32_t i = 0; i < n; i++)
			cnt[(a[i].key >> shift & 255) + 1]++;
		if (cnt[(a[0].key >> shift & 255) + 1] == n)
			continue; /* one value in this byte: the order stands */
		for (unsigned c = 1; c <= 256; c++)
			cnt[c] += cnt[c - 1];
		for (uint32_t i = 0; i < n; i++)
			tmp[cnt[a[i].key >> shift & 255]++] = a[i];
		kid *x = a;
		a = tmp;
		tmp = x;
	}
	for (uint32_t i = 0; i < n; i++)
		ids[i] = a[i].id;
	sort_bpe = b;
	for (uint32_t lo = 0, hi; lo < n; lo = hi) {
		for (hi = lo + 1; hi < n && a[hi].key == a[lo].key; hi++)
			;
		if (hi - lo > 1)
			qsort(ids + lo, hi - lo, sizeof *ids, cmp_bytes);
	}
	free(a);
	free(tmp);
	*count = n;
	return ids;
}

void bpe_pmap_init(llm_bpe *b, size_t expected)
{
	size_t cap = 16;
	while (cap < expected * 2)
		cap *= 2;
	b->pmap = llm_calloc(cap, sizeof *b->pmap);
	b->pmask = cap - 1;
}


/* Add (l, r) -> (rank, id); a pair already present keeps its lower rank (a merges list may
 * repeat a pair; the first occurrence is the one that applies). */
void bpe_pair_add(llm_bpe *b, uint32_t l, uint32_t r, uint32_t rank, uint32_t id)
{
	if ((b->npairs + 1) * 2 > b->pmask + 1) {
		pslot *old = b->pmap;
		size_t ocap = b->pmask + 1;
		bpe_pmap_init(b, ocap);
		for (size_t i = 0; i < ocap; i++) {
			if (!old[i].key)
				continue;
			size_t j = mix64(old[i].key) & b->pmask;
			while (b->pmap[j].key)
				j = (j + 1) & b->pmask;
			b->pmap[j] = old[i];
		}
		free(old);
	}
	uint64_t key = ((uint64_t)l + 1) << 32 | r;
	size_t i = mix64(key) & b->pmask;
	for (; b->pmap[i].key; i = (i + 1) & b->pmask)
		if (b->pmap[i].key == key)
			return;
	b->pmap[i] = (pslot){ key, rank, id };
	b->npairs++;
}

typedef struct {
	uint32_t l, r, rank, res;
} pair4;

/*
 * Build the CSR lists that encoding searches from n pairs (any order, no duplicates): a
 * radix sort with the whole id as its digit, stable by right token, then by left token, so
 * each left token's list comes out sorted by right token. Two linear passes over the pairs
 * (446,189 for o200k) where a comparison sort of each list took a quarter of the load.
 */
static void csr_from(llm_bpe *b, const pair4 *all, size_t n, const uint32_t *by_bytes,
                     uint32_t nids, llm_pool *pool)
{
	size_t nt = (size_t)b->ntok;
	uint32_t *cnt = llm_calloc(nt + 1, sizeof *cnt);
	for (size_t i = 0; i < n; i++)
		cnt[all[i].r + 1]++;
	for (size_t r = 1; r <= nt; r++)
		cnt[r] += cnt[r - 1];
	pair4 *byr = llm_malloc((n ? n : 1) * sizeof *byr);
	for (size_t i = 0; i < n; i++)
		byr[cnt[all[i].r]++] = all[i];
	free(cnt);
	b->poff = llm_calloc(nt + 2, sizeof *b->poff);
	for (size_t i = 0; i < n; i++)
		b->poff[byr[i].l + 2]++;
	for (size_t l = 2; l < nt + 2; l++)
		b->poff[l] += b->poff[l - 1];
	/* poff[l + 1] is now the start of l's list; filling advances it to the end. */
	b->pkey = llm_malloc((n ? n : 1) * sizeof *b->pkey);
	b->prank = llm_malloc((n ? n : 1) * sizeof *b->prank);
	b->pres = llm_malloc((n ? n : 1) * sizeof *b->pres);
	for (size_t i = 0; i < n; i++) {
		uint32_t j = b->poff[byr[i].l + 1]++;
		b->pkey[j] = byr[i].r;
		b->prank[j] = byr[i].rank;
		b->pres[j] = byr[i].res;
	}
	free(byr);
	b->bb_rank = llm_malloc(65536 * sizeof *b->bb_rank);
	b->bb_res = llm_malloc(65536 * sizeof *b->bb_res);
	for (unsigned x = 0; x < 65536; x++) {
		uint32_t l = b->byte_id[x >> 8], r = b->byte_id[x & 255];
		b->bb_res[x] = 0;
		b->bb_rank[x] = l == NO_TOKEN || r == NO_TOKEN ? NO_TOKEN : bpe_pair_lookup(b, l, r, &b->bb_res[x]);
	}
	b->bt = bpe_bt_new(b, by_bytes, nids, pool);
}

/* The CSR lists from the pair hash table of the merges loaders, which then goes. */
void bpe_build_csr(llm_bpe *b, llm_pool *pool)
{
	pair4 *all = llm_malloc((b->npairs ? b->npairs : 1) * sizeof *all);
	size_t n = 0;
	for (size_t i = 0; i <= b->pmask; i++) {
		const pslot *p = &b->pmap[i];
		if (p->key)
			all[n++] = (pair4){ (uint32_t)(p->key >> 32) - 1, (uint32_t)p->key, p->rank, p->id };
	}
	free(b->pmap);
	b->pmap = NULL;
	uint32_t nids;
	uint32_t *ids = bpe_ordinary_by_bytes(b, &nids);
	csr_from(b, all, n, ids, nids, pool);
	free(all);
	free(ids);
}

/*
 * tiktoken: every split of a token into two tokens is a pair whose rank is the token's id.
 * No pair can repeat (its concatenation names one token), so no hash table is needed.
 *
 * In byte order, the tokens that are prefixes of a token come before it, and every token
 * between such a prefix and it starts with the prefix: a stack of the tokens that are
 * prefixes of the current one gives the left parts without looking any up, and only the
 * right parts are hashed. The sorted list is split in chunks on the pool; a chunk looks up
 * the prefixes of its first token, and its pairs go to its own list. The pair lists that
 * encoding reads are sorted by token (csr_from), so they do not depend on the chunks.
 */
#define SPLIT_CHUNK 8192

typedef struct {
	const llm_bpe *b;
	const uint32_t *ids;          /* the ordinary tokens in byte order */
	uint32_t nids;
	const unsigned char *has_len; /* by length: some ordinary token has it */
	pair4 **part;                 /* by chunk: its pairs */
	size_t *npart;
} split_job;

typedef struct {
	pair4 *v;
	size_t n, cap;
} pair_list;

/* The pairs (l, r) of token id whose left part l is on the stack (the ordinary tokens that
 * are proper prefixes of id, shortest first). */
static void splits_of(const split_job *j, uint32_t id, const uint32_t *stack, uint32_t depth,
                      pair_list *out)
{
	const llm_bpe *b = j->b;
	const char *s = b->arena.p + b->off[id];
	uint32_t len = b->len[id];
	for (uint32_t d = 0; d < depth; d++) {
		uint32_t k = b->len[stack[d]];
		if (!j->has_len[len - k])
			continue;
		int64_t r = bpe_bytes_id(b, s + k, len - k);
		if (r < 0)
			continue;
		if (out->n == out->cap) {
			out->cap *= 2;
			out->v = llm_realloc(out->v, out->cap * sizeof *out->v);
		}
		out->v[out->n++] = (pair4){ stack[d], (uint32_t)r, id, id };
	}
}

static void split_chunk(void *ctx, size_t chunk, int worker)
{
	(void)worker;
	const split_job *j = ctx;
	const llm_bpe *b = j->b;
	uint32_t lo = (uint32_t)(chunk * SPLIT_CHUNK);
	uint32_t hi = j->nids - lo < SPLIT_CHUNK ? j->nids : lo + SPLIT_CHUNK;
	pair_list out = { llm_malloc(4 * SPLIT_CHUNK * sizeof *out.v), 0, 4 * SPLIT_CHUNK };
	uint32_t *stack = llm_malloc(((size_t)b->max_len + 1) * sizeof *stack), depth = 0;
	/* The prefixes of the chunk's first token, which the chunks before it saw. */
	const char *first = b->arena.p + b->off[j->ids[lo]];
	for (uint32_t k = 1; k < b->len[j->ids[lo]]; k++) {
		int64_t l = j->has_len[k] ? bpe_bytes_id(b, first, k) : -1;
		if (l >= 0)
			stack[depth++] = (uint32_t)l;
	}
	for (uint32_t i = lo; i < hi; i++) {
		uint32_t id = j->ids[i], len = b->len[id];
		const char *s = b->arena.p + b->off[id];
		/* each token on the stack is a prefix of the one above it: test the top only */
		while (depth && (b->len[stack[depth - 1]] >= len ||
		                 memcmp(b->arena.p + b->off[stack[depth - 1]], s, b->len[stack[depth - 1]])))
			depth--;
		splits_of(j, id, stack, depth, &out);
		stack[depth++] = id;
	}
	free(stack);
	j->part[chunk] = out.v;
	j->npart[chunk] = out.n;
}

void bpe_build_pairs_from_ranks(llm_bpe *b, llm_pool *pool)
{
	b->rank_is_id = true;
	/* Only splits into two lengths that some token has can be pairs: without this test a
	 * token of n bytes would hash O(n^2) bytes (a 1 MB token took 31 s to load). */
	unsigned char *has_len = llm_calloc((size_t)b->max_len + 1, 1);
	for (uint32_t id = 0; id < b->ntok; id++)
		if (b->len[id] != NO_TOKEN && !(b->flags[id] & TOK_ADDED))
			has_len[b->len[id]] = 1;
	uint32_t nids;
	uint32_t *ids = bpe_ordinary_by_bytes(b, &nids);
	size_t nchunks = ((size_t)nids + SPLIT_CHUNK - 1) / SPLIT_CHUNK;
	split_job j = { b, ids, nids, has_len, llm_calloc(nchunks + 1, sizeof *j.part),
		        llm_calloc(nchunks + 1, sizeof *j.npart) };
	llm_pool_run(pool, nchunks, split_chunk, &j);
	free(has_len);
	size_t n = 0;
	for (size_t c = 0; c < nchunks; c++)
		n += j.npart[c];
	pair4 *all = llm_malloc((n ? n : 1) * sizeof *all);
	for (size_t c = 0, at = 0; c < nchunks; at += j.npart[c], c++) {
		memcpy(all + at, j.part[c], j.npart[c] * sizeof *all);
		free(j.part[c]);
	}
	free(j.part);
	free(j.npart);
	csr_from(b, all, n, ids, nids, pool);
	free(all);
	free(ids);
}

int bpe_add_special(llm_bpe *b, const char *text, size_t len, uint32_t id, size_t ntokens,
                    const special *tmpl)
{
	special sp = tmpl ? *tmpl : (special){ .special = true };
	int rc = bpe_set_token(b, id, text, len, TOK_ADDED | (sp.special ? TOK_SPECIAL : 0), ntokens);
	if (rc)
		return rc;
	for (size_t i = 0; i < b->nsp; i++)
		if (b->sp[i].len == len && memcmp(b->sp[i].text, text, len) == 0)
			return b->sp[i].id == id ? LLM_OK
			       : llm_fail(LLM_EFORMAT, "%s: special token '%.*s' has two ids", b->name,
			                  (int)len, text);
	sp.text = llm_strndup(text, len);
	sp.len = len;
	sp.id = id;
	b->sp = llm_realloc(b->sp, (b->nsp + 1) * sizeof *b->sp);
	b->sp[b->nsp++] = sp;
	b->nplain += !sp.special;
	b->sp_first[(unsigned char)text[0]] = 1;
	b->sp_one = b->nsp == 1 || b->sp_one == (unsigned char)text[0] ? (unsigned char)text[0] : -1;
	b->any_normalized |= sp.normalized;
	b->lossy |= sp.lstrip || sp.rstrip; /* the white space they take is not given back */
	return LLM_OK;
}

static int cmp_special(const void *x, const void *y)
{
	const special *a = x, *b = y;
	if (a->len != b->len)
		return a->len > b->len ? -1 : 1;
	return memcmp(a->text, b->text, a->len);
}

static const char *const eos_names[] = { "<|endoftext|>", "<|end_of_text|>", "</s>", "<|eos|>", "<eos>" };
static const char *const bos_names[] = { "<|begin_of_text|>", "<s>", "<|bos|>", "<bos>" };

/* Common end of every loader: index, sort specials, find EOS/BOS, set the pattern. */
int bpe_finish(llm_bpe *b, const char *pattern, bool keep_gaps)
{
	int rc = bpe_build_bmap(b);
	if (rc)
		return rc;
	if (b->nsp)
		qsort(b->sp, b->nsp, sizeof *b->sp, cmp_special);
	for (size_t i = 0; i < sizeof eos_names / sizeof *eos_names && b->eos < 0; i++)
		b->eos = llm_bpe_special_id(b, eos_names[i]);
	for (size_t i = 0; i < sizeof bos_names / sizeof *bos_names && b->bos < 0; i++)
		b->bos = llm_bpe_special_id(b, bos_names[i]);
	if (pattern) {
		rc = llm_pretok_new(&b->pt, pattern, keep_gaps);
		if (rc)
			return llm_fail(rc, "%s: %s", b->name, llm_last_error());
	}
	return LLM_OK;
}

uint32_t llm_bpe_vocab_size(const llm_bpe *b)
{
	return b->ntok;
}

uint64_t llm_bpe_file_id(const llm_bpe *b)
{
	return b->file_id;
}

const char *llm_bpe_token(const llm_bpe *b, uint32_t id, size_t *len)
{
	if (id >= b->ntok || b->len[id] == NO_TOKEN)
		return NULL;
	*len = b->len[id];
	return b->arena.p + b->off[id];
}

bool llm_bpe_roundtrips(const llm_bpe *b)
{
	return !b->lossy;
}

bool llm_bpe_is_special(const llm_bpe *b, uint32_t id)
{
	return id < b->ntok && (b->flags[id] & TOK_SPECIAL);
}

int64_t llm_bpe_special_id(const llm_bpe *b, const char *text)
{
	size_t n = strlen(text);
	for (size_t i = 0; i < b->nsp; i++)
		if (b->sp[i].len == n && memcmp(b->sp[i].text, text, n) == 0)
			return b->sp[i].id;
	return -1;
}

int64_t llm_bpe_eos(const llm_bpe *b)
{
	return b->eos;
}

int64_t llm_bpe_bos(const llm_bpe *b)
{
	return b->bos;
}

/* ---- encoding ---- */

typedef struct {
	uint64_t k[2];   /* the piece's bytes, zero-padded */
	uint8_t len, nids;
	uint32_t ids[CACHE_IDS];
} cache_slot;

typedef struct {
	uint64_t key; /* rank << 32 | left position */
	uint32_t vl, vr;
} hentry;

struct llm_bpe_enc {
	const llm_bpe *bpe;
	llm_pretok_state *st;
	cache_slot *cache;
	/* merge scratch, sized for the longest piece so far */
	size_t cap;
	uint32_t *id, *rank, *next, *prev, *ver;
	hentry *heap;
	llm_buf seg; /* a segment with the ByteLevel prefix space */
	bpe_pcache *pcache;
	bpe_bt_cache *ccache; /* backtracking's compatibility tests; NULL without tables */
	uint64_t *dead;   /* backtracking scratch, cap / 64 + 1 words */
	bool reference;   /* merge by rank even where backtracking tables exist */
	bool valid_utf8;  /* the texts are valid UTF-8 (llm_bpe_enc_valid_utf8) */
	llm_hfpretok_state *hs;
	llm_hfnorm_state *ns;
	llm_buf norm; /* a segment normalized */
	llm_spm_enc *spm;
	llm_spm_enc *uni;
};

static void scratch(llm_bpe_enc *e, size_t n)
{
	if (n <= e->cap)
		return;
	size_t cap = e->cap ? e->cap : 64;
	while (cap < n)
		cap *= 2;
	e->id = llm_realloc(e->id, cap * sizeof *e->id);
	e->rank = llm_realloc(e->rank, cap * sizeof *e->rank);
	e->next = llm_realloc(e->next, cap * sizeof *e->next);
	e->prev = llm_realloc(e->prev, cap * sizeof *e->prev);
	e->ver = llm_realloc(e->ver, cap * sizeof *e->ver);
	/* Each merge pushes at most two entries on top of the n - 1 initial ones. */
	e->heap = llm_realloc(e->heap, 3 * cap * sizeof *e->heap);
	e->dead = llm_realloc(e->dead, (cap / 64 + 1) * sizeof *e->dead);
	e->cap = cap;
}

llm_bpe_enc *llm_bpe_enc_new(const llm_bpe *b)
{
	llm_bpe_enc *e = llm_calloc(1, sizeof *e);
	e->bpe = b;
	if (b->pt)
		e->st = llm_pretok_state_new(b->pt);
	e->cache = llm_calloc((size_t)1 << CACHE_BITS, sizeof *e->cache);
	e->pcache = llm_calloc((size_t)1 << BPE_PCACHE_BITS, sizeof *e->pcache);
	if (b->bt)
		e->ccache = bpe_bt_cache_new();
	if (b->hp)
		e->hs = llm_hfpretok_state_new(b->hp);
	if (b->norm)
		e->ns = llm_hfnorm_state_new(b->norm);
	if (b->spm)
		e->spm = llm_spm_enc_new(b->spm);
	if (b->uni)
		e->uni = llm_spm_enc_new(b->uni);
	scratch(e, 64);
	llm_buf_init(&e->seg);
	llm_buf_init(&e->norm);
	return e;
}

void llm_bpe_enc_valid_utf8(llm_bpe_enc *e, bool valid)
{
	e->valid_utf8 = valid;
}

int llm_bpe_enc_sample(llm_bpe_enc *e, int nbest, double alpha, uint64_t seed)
{
	if (!e->spm && !e->uni)
		return llm_fail(LLM_EUNSUPPORTED, "%s: sampling needs a SentencePiece model",
		                e->bpe->name);
	llm_spm_enc_sample(e->spm ? e->spm : e->uni, nbest, alpha, seed);
	return LLM_OK;
}

void bpe_enc_reference(llm_bpe_enc *e, bool on)
{
	e->reference = on;
}

void llm_bpe_enc_free(llm_bpe_enc *e)
{
	if (!e)
		return;
	llm_pretok_state_free(e->st);
	free(e->cache);
	free(e->pcache);
	bpe_bt_cache_free(e->ccache);
	free(e->id);
	free(e->rank);
	free(e->next);
	free(e->prev);
	free(e->ver);
	free(e->heap);
	free(e->dead);
	llm_buf_release(&e->seg);
	llm_hfpretok_state_free(e->hs);
	llm_hfnorm_state_free(e->ns);
	llm_buf_release(&e->norm);
	llm_spm_enc_free(e->spm);
	llm_spm_enc_free(e->uni);
	free(e);
}


static inline uint32_t pair_rank(llm_bpe_enc *e, uint32_t l, uint32_t r, uint32_t *res)
{
	return bpe_pair_cached(e->bpe, e->pcache, l, r, res);
}

/* Merge by linear scan: O(n^2) but with tiny constants for the short pieces of real text.
 * The symbols are in e->id; the ranks and results of their pairs in e->rank and e->next. */
static size_t merge_linear(llm_bpe_enc *e, size_t n)
{
	return bpe_merge_linear(e->bpe, e->pcache, e->id, e->rank, e->next, n, 1);
}

static inline bool hless(const hentry *a, const hentry *b)
{
	return a->key < b->key;
}

static void heap_push(hentry *h, size_t *n, hentry x)
{
	size_t i = (*n)++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!hless(&x, &h[p]))
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = x;
}

static hentry heap_pop(hentry *h, size_t *n)
{
	hentry top = h[0], x = h[--*n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && hless(&h[c + 1], &h[c]))
			c++;
		if (!hless(&h[c], &x))
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = x;
	return top;
}

/*
 * Merge with a heap of candidate pairs keyed by (rank, left position) over a linked list of
 * symbols (in e->id, their pairs' ranks in e->rank). Entries are invalidated lazily: every
 * merge bumps the version of both symbols, and an entry is used only if the versions it
 * recorded still hold. Same order as the linear scan (lowest rank, then leftmost), in
 * O(n log n).
 */
static size_t merge_heap(llm_bpe_enc *e, size_t n)
{
	uint32_t *id = e->id, *next = e->next, *prev = e->prev, *ver = e->ver;
	hentry *h = e->heap;
	size_t hn = 0;
	for (size_t i = 0; i + 1 < n; i++)
		if (e->rank[i] != NO_TOKEN)
			heap_push(h, &hn, (hentry){ (uint64_t)e->rank[i] << 32 | i, 0, 0 });
	for (size_t i = 0; i < n; i++) {
		next[i] = (uint32_t)(i + 1);
		prev[i] = (uint32_t)i - 1;
		ver[i] = 0;
	}
	while (hn) {
		hentry x = heap_pop(h, &hn);
		uint32_t l = (uint32_t)x.key, r = next[l];
		if (ver[l] != x.vl || r >= n || ver[r] != x.vr)
			continue;
		uint32_t res = 0;
		pair_rank(e, id[l], id[r], &res);
		id[l] = res;
		ver[l]++;
		ver[r]++;
		next[l] = next[r];
		if (next[l] < n)
			prev[next[l]] = l;
		uint32_t pr, pres;
		if (prev[l] != NO_TOKEN) {
			uint32_t q = prev[l];
			if ((pr = pair_rank(e, id[q], id[l], &pres)) != NO_TOKEN)
				heap_push(h, &hn, (hentry){ (uint64_t)pr << 32 | q, ver[q], ver[l] });
		}
		if (next[l] < n && (pr = pair_rank(e, id[l], id[next[l]], &pres)) != NO_TOKEN)
			heap_push(h, &hn, (hentry){ (uint64_t)pr << 32 | l, ver[l], ver[next[l]] });
	}
	size_t k = 0;
	for (uint32_t i = 0; i < n; i = next[i])
		id[k++] = id[i];
	return k;
}

/* The initial symbols of a byte-level piece: its bytes, and their pairs from the table. */
static void init_bytes(llm_bpe_enc *e, const unsigned char *p, size_t n)
{
	const llm_bpe *b = e->bpe;
	for (size_t i = 0; i < n; i++)
		e->id[i] = b->byte_id[p[i]];
	for (size_t i = 0; i + 1 < n; i++) {
		e->rank[i] = b->bb_rank[p[i] << 8 | p[i + 1]];
		e->next[i] = b->bb_res[p[i] << 8 | p[i + 1]];
	}
}

/* The ordinary token whose bytes are p[0..n), or NO_TOKEN. */
static inline uint32_t token_of(const llm_bpe *b, const unsigned char *p, size_t n)
{
	int64_t id = n <= b->max_len ? bmap_find(b, p, n) : -1;
	return id < 0 ? NO_TOKEN : (uint32_t)id;
}

/*
 * tiktoken's own merge, for a byte-level piece of a rank file (rank_is_id): the rank of two
 * neighbours is the id of the token their bytes make together, one probe of the byte index,
 * where the pair lists search a short token's hundreds of partners (binary search, a cache
 * miss a step; on English text six pair lookups in ten missed the pair cache). Symbol i is
 * p[at[i] .. at[i + 1]); at has n + 1 entries. Returns the count of symbols left in e->id.
 */
static size_t merge_ranked(llm_bpe_enc *e, const unsigned char *p, size_t n)
{
	const llm_bpe *b = e->bpe;
	uint32_t *id = e->id, *rank = e->rank, *at = e->prev; /* prev: merge_heap's, unused here */
	init_bytes(e, p, n);
	for (size_t i = 0; i <= n; i++)
		at[i] = (uint32_t)i;
	while (n > 1) {
		uint32_t best;
		size_t bi = bpe_lowest(rank, n - 1, &best);
		if (best == NO_TOKEN)
			break;
		/* Symbol bi + 1 joins bi; those after it and their pairs shift left by one. */
		id[bi] = best;
		n--;
		for (size_t i = bi + 1; i < n; i++) {
			id[i] = id[i + 1];
			at[i] = at[i + 1];
		}
		at[n] = at[n + 1];
		for (size_t i = bi + 1; i + 1 < n; i++)
			rank[i] = rank[i + 1];
		if (bi > 0)
			rank[bi - 1] = token_of(b, p + at[bi - 1], at[bi + 1] - at[bi - 1]);
		if (bi + 1 < n)
			rank[bi] = token_of(b, p + at[bi], at[bi + 2] - at[bi]);
	}
	return n;
}

/*
 * The initial symbols of a piece of a character-level vocabulary (SentencePiece-style BPE):
 * one per character; a character without a token becomes its bytes' <0xXX> tokens
 * (byte_fallback), else the unk token (consecutive ones fused with fuse_unk), else nothing,
 * as tokenizers does. Ill-formed bytes are characters of one byte. Returns the count.
 */
static size_t init_chars(llm_bpe_enc *e, const unsigned char *p, size_t n)
{
	const llm_bpe *b = e->bpe;
	size_t k = 0;
	bool prev_unk = false;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t c = llm_utf8_decode((const char *)p + i, n - i, &cp);
		if (llm_utf8_valid_prefix((const char *)p + i, c) != c)
			c = 1;
		int64_t id = c <= b->max_len ? bmap_find(b, p + i, c) : -1;
		bool fallback = id < 0 && b->byte_fallback;
		for (size_t j = 0; fallback && j < c; j++)
			fallback = b->byte_tok[p[i + j]] != NO_TOKEN;
		if (id >= 0) {
			e->id[k++] = (uint32_t)id;
			prev_unk = false;
		} else if (fallback) {
			for (size_t j = 0; j < c; j++)
				e->id[k++] = b->byte_tok[p[i + j]];
			prev_unk = false;
		} else if (b->unk >= 0) {
			if (!(prev_unk && b->fuse_unk))
				e->id[k++] = (uint32_t)b->unk;
			prev_unk = true;
		}
		i += c;
	}
	for (size_t i = 0; i + 1 < k; i++)
		e->rank[i] = pair_rank(e, e->id[i], e->id[i + 1], &e->next[i]);
	return k;
}

/*
 * Whether piece p[0..n) merges by rank though backtracking is there: an ASCII piece of up to
 * LINEAR_MAX bytes. Such pieces reach here when they are in neither the word cache nor the
 * vocabulary (rare English words, three tokens on average), and backtracking does badly on
 * them: one token in four is taken back, four compatibility tests in five miss their cache,
 * and each trie walk and test reads megabytes of tables, where the merges of a few ASCII
 * bytes read the pair cache (in a rank file, the byte index: merge_ranked). Chinese pieces
 * keep backtracking (the linear merge of a run of ideographs was slower).
 */
static inline bool merge_short(const unsigned char *p, size_t n)
{
	if (n > LINEAR_MAX)
		return false;
	unsigned high = 0;
	for (size_t i = 0; i < n; i++)
		high |= p[i];
	return high < 0x80;
}

/*
 * A piece that is not in the word cache, or too long for it: the whole-piece lookup, or
 * backtracking, or the merges; then into cache slot c (NULL: none) under key k. Apart from
 * encode_piece, whose hits (nineteen pieces in twenty of English text) then need no more
 * registers saved than their few lines use.
 */
static __attribute__((noinline)) void encode_uncached(llm_bpe_enc *e, const unsigned char *p,
                                                      size_t n, cache_slot *c, uint64_t k0,
                                                      uint64_t k1, uint64_t h, llm_ids *out)
{
	const llm_bpe *b = e->bpe;
	size_t nids = 1;
	/* it does the whole-piece lookup itself */
	bool bt = b->bt && !e->reference && !merge_short(p, n);
	bool ranked = b->rank_is_id && !e->reference && n <= LINEAR_MAX;
	int64_t id = -1;
	/* A word is looked up whole in one slot of the byte index (c: the key is the piece's),
	 * where backtracking would walk the trie a byte at a time, one cache miss after another.
	 * A piece that starts with a character of three bytes or more (CJK) is left to
	 * backtracking, whose table takes a first three-byte character in one step: such a piece
	 * is seldom a token of its own. */
	if (b->whole_first && n <= BMAP_INLINE && !(bt && p[0] >= 0xe0))
		id = bmap_find_key(b, k0, k1, n, h);
	else if (!bt && b->whole_first && n <= b->max_len)
		id = bmap_find(b, p, n);
	const uint32_t *ids = e->id; /* the piece's ids */
	if (id >= 0) {
		llm_ids_push(out, (uint32_t)id);
		e->id[0] = (uint32_t)id;
	} else {
		scratch(e, n + 1); /* merge_ranked's n + 1 bounds */
		nids = SIZE_MAX;
		if (bt) { /* at most n ids, straight to the output */
			ids_reserve(out, n);
			nids = bpe_bt_encode(b, e->pcache, e->ccache, p, n, out->v + out->n, e->dead);
		}
		if (nids != SIZE_MAX) {
			ids = out->v + out->n;
			out->n += nids;
		} else {
			if (ranked) {
				nids = merge_ranked(e, p, n);
			} else {
				if (b->bytelevel) {
					init_bytes(e, p, n);
					nids = n;
				} else {
					nids = init_chars(e, p, n);
				}
				nids = nids <= LINEAR_MAX ? merge_linear(e, nids) : merge_heap(e, nids);
			}
			if (nids) { /* a character-level piece may give none (no unk token) */
				ids_reserve(out, nids);
				memcpy(out->v + out->n, e->id, nids * sizeof *e->id);
				out->n += nids;
			}
		}
	}
	if (c && nids <= CACHE_IDS) {
		c->k[0] = k0;
		c->k[1] = k1;
		c->len = (uint8_t)n;
		c->nids = (uint8_t)nids;
		memcpy(c->ids, ids, nids * sizeof *ids);
	}
}

/* Inlined into the loops over pieces, whose hits then cost no call: a call, and the
 * registers saved for it, were a tenth of the instructions of English text. */
static inline __attribute__((always_inline)) void encode_piece(llm_bpe_enc *e,
                                                               const unsigned char *p, size_t n,
                                                               const unsigned char *end,
                                                               llm_ids *out)
{
	const llm_bpe *b = e->bpe;
	if (e->uni) {
		llm_spm_encode_piece(e->uni, (const char *)p, n, out);
		return;
	}
	if (n == 1 && b->byte_id[p[0]] != NO_TOKEN) {
		llm_ids_push(out, b->byte_id[p[0]]);
		return;
	}
	if (n > CACHE_LEN) {
		encode_uncached(e, p, n, NULL, 0, 0, 0, out);
		return;
	}
	uint64_t k[2];
	if (end - p >= 16)
		piece_key_wide(k, p, n);
	else
		piece_key(k, p, n);
	uint64_t h = cache_hash(k, n);
	cache_slot *c = &e->cache[h >> (64 - CACHE_BITS)];
	if (c->len == n && c->k[0] == k[0] && c->k[1] == k[1]) {
		ids_reserve(out, CACHE_IDS); /* all of c->ids: a copy of fixed size */
		memcpy(out->v + out->n, c->ids, sizeof c->ids);
		out->n += c->nids;
		return;
	}
	encode_uncached(e, p, n, c, k[0], k[1], h, out);
}

/* Encode text that holds no added token; at_start: it begins the document. */
static int encode_ordinary(llm_bpe_enc *e, const char *s, size_t n, bool at_start, llm_ids *out)
{
	const llm_bpe *b = e->bpe;
	if (n == 0)
		return LLM_OK;
	if (e->hs) {
		const char *t;
		const size_t *bd;
		size_t np;
		int rc = llm_hfpretok_run(e->hs, s, n, at_start, &t, &bd, &np);
		if (rc)
			return rc;
		for (size_t i = 0; i < np; i++)
			encode_piece(e, (const unsigned char *)t + bd[i], bd[i + 1] - bd[i],
			             (const unsigned char *)t + bd[np], out);
		return LLM_OK;
	}
	if (b->prefix_space && s[0] != ' ') {
		llm_buf_reset(&e->seg);
		llm_buf_addc(&e->seg, ' ');
		llm_buf_add(&e->seg, s, n);
		s = e->seg.p;
		n = e->seg.len;
	}
	if (!e->st) {
		encode_piece(e, (const unsigned char *)s, n, (const unsigned char *)s + n, out);
		return LLM_OK;
	}
	if (e->valid_utf8)
		llm_pretok_begin_valid(e->st, s, n);
	else
		llm_pretok_begin(e->st, s, n);
	size_t a[PIECE_BATCH], z[PIECE_BATCH], np;
	int rc;
	while ((rc = llm_pretok_next_n(e->st, a, z, PIECE_BATCH, &np)) == LLM_OK)
		for (size_t i = 0; i < np; i++)
			encode_piece(e, (const unsigned char *)s + a[i], z[i] - a[i],
			             (const unsigned char *)s + n, out);
	return rc == LLM_EOF ? LLM_OK : rc;
}

/* Unicode White_Space (Rust's char::is_whitespace, what lstrip and rstrip take). */
static bool is_white(uint32_t c)
{
	return llm_uc_is(c, LLM_UC_SPACE);
}

/* The code point that ends s[0..n) (n > 0), and where it starts. */
static uint32_t last_cp(const char *s, size_t n, size_t *start)
{
	size_t b = n - 1;
	while (b > 0 && n - b < 4 && ((unsigned char)s[b] & 0xc0) == 0x80)
		b--;
	uint32_t cp;
	if (llm_utf8_decode(s + b, n - b, &cp) != n - b)
		b = n - 1, cp = 0xfffd;
	*start = b;
	return cp;
}

/* A word character for single_word: alphanumeric (letters and numbers) or '_'. */
static bool is_word(uint32_t c)
{
	if (c < 128)
		return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
	return llm_uc_is(c, LLM_UC_LETTER | LLM_UC_NUMBER);
}

typedef struct {
	size_t start, end; /* what the match removes from the text, white space included */
	long k;            /* the token */
} added_match;

/*
 * The next added token of this pass (normalized or not) in s[from..n): leftmost, longest at
 * that position, as tokenizers' Aho-Corasick search; a single_word token next to a word
 * character is passed over with the text it covers. Special tokens count only under
 * LLM_BPE_SPECIAL_ALLOW (under _ERROR one is an error: *err). Returns false when none.
 */
static bool find_added(const llm_bpe *b, const char *s, size_t n, size_t from, bool normalized,
                       llm_bpe_special mode, added_match *m, int *err)
{
	/* Llama 3's 256 specials all start with '<', and each '<' of the text cost 256 compares
	 * (14% of the instructions of English text) only to find tokens this mode ignores. */
	if (mode == LLM_BPE_SPECIAL_IGNORE && !b->nplain)
		return false;
	for (size_t i = from; i < n; i++) {
		/* tiktoken's specials all start with '<': memchr skips the text between them */
		if (b->sp_one >= 0) {
			const char *q = memchr(s + i, b->sp_one, n - i);
			if (!q)
				return false;
			i = (size_t)(q - s);
		} else if (!b->sp_first[(unsigned char)s[i]]) {
			continue;
		}
		for (size_t k = 0; k < b->nsp; k++) {
			const special *sp = &b->sp[k];
			if (sp->normalized != normalized || sp->len > n - i || memcmp(s + i, sp->text, sp->len))
				continue;
			if (sp->special && mode == LLM_BPE_SPECIAL_IGNORE)
				continue;
			if (sp->special && mode == LLM_BPE_SPECIAL_ERROR) {
				*err = llm_fail(LLM_EFORMAT, "special token '%s' in text at byte %zu", sp->text, i);
				return false;
			}
			size_t end = i + sp->len, start = i, ps;
			if (sp->single_word) {
				uint32_t next;
				if ((i > 0 && is_word(last_cp(s, i, &ps))) ||
				    (end < n && (llm_utf8_decode(s + end, n - end, &next), is_word(next)))) {
					i = end - 1; /* the search goes on after this match */
					break;
				}
			}
			while (sp->lstrip && start > from && is_white(last_cp(s, start, &ps)))
				start = ps;
			while (sp->rstrip && end < n) {
				uint32_t c;
				size_t len = llm_utf8_decode(s + end, n - end, &c);
				if (!is_white(c))
					break;
				end += len;
			}
			*m = (added_match){ start, end, (long)k };
			return true;
		}
	}
	return false;
}

/* Encode text in which the added tokens matched after normalization are still to be found. */
static int encode_normalized(llm_bpe_enc *e, const char *s, size_t n, bool at_start,
                             llm_bpe_special mode, llm_ids *out)
{
	const llm_bpe *b = e->bpe;
	if (e->spm) {
		llm_spm_encode(e->spm, s, n, out);
		return LLM_OK;
	}
	if (e->ns) {
		llm_hfnorm_apply(e->ns, s, n, &e->norm);
		s = e->norm.p;
		n = e->norm.len;
	}
	if (n == 0) /* normalized away (and e->norm.p may be NULL) */
		return LLM_OK;
	if (!b->any_normalized)
		return encode_ordinary(e, s, n, at_start, out);
	size_t pos = 0;
	added_match m;
	int rc = LLM_OK;
	while (find_added(b, s, n, pos, true, mode, &m, &rc)) {
		if ((rc = encode_ordinary(e, s + pos, m.start - pos, at_start && pos == 0, out)))
			return rc;
		llm_ids_push(out, b->sp[m.k].id);
		pos = m.end;
	}
	return rc ? rc : encode_ordinary(e, s + pos, n - pos, at_start && pos == 0, out);
}

int llm_bpe_encode(llm_bpe_enc *e, const char *s, size_t n, llm_bpe_special mode, llm_ids *out)
{
	const llm_bpe *b = e->bpe;
	size_t start = out->n, pos = 0;
	added_match m;
	int rc = LLM_OK;
	/* The text between added tokens that are matched as given is normalized (a segment of
	 * its own each, as tokenizers normalizes them), then searched for the others. */
	while (b->nsp && find_added(b, s, n, pos, false, mode, &m, &rc)) {
		if ((rc = encode_normalized(e, s + pos, m.start - pos, pos == 0, mode, out)))
			break;
		llm_ids_push(out, b->sp[m.k].id);
		pos = m.end;
	}
	if (!rc)
		rc = encode_normalized(e, s + pos, n - pos, pos == 0, mode, out);
	if (rc)
		out->n = start;
	return rc;
}

int llm_bpe_decode(const llm_bpe *b, const uint32_t *ids, size_t n, llm_buf *out)
{
	if (b->spm)
		return llm_spm_decode(b->spm, ids, n, out);
	size_t start = out->len;
	for (size_t i = 0; i < n; i++) {
		uint32_t id = ids[i];
		if (id >= b->ntok || b->len[id] == NO_TOKEN)
			return llm_fail(LLM_EINVAL, "token %u is not in the vocabulary", id);
		const char *t = b->arena.p + b->off[id];
		size_t len = b->len[id];
		if (b->dec_byte && b->dec_byte[id] >= 0) {
			llm_buf_addc(out, (char)b->dec_byte[id]);
		} else if (b->dec_from) {
			for (size_t j = 0; j < len;) {
				if (len - j >= b->dec_from_len && memcmp(t + j, b->dec_from, b->dec_from_len) == 0) {
					llm_buf_add(out, b->dec_to, b->dec_to_len);
					j += b->dec_from_len;
				} else {
					llm_buf_addc(out, t[j++]);
				}
			}
		} else {
			llm_buf_add(out, t, len);
		}
	}
	size_t k = 0;
	while (k < b->dec_strip && start + k < out->len && out->p[start + k] == ' ')
		k++;
	if (k) {
		memmove(out->p + start, out->p + start + k, out->len - start - k);
		out->len -= k;
	}
	return LLM_OK;
}
