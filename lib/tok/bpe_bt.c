/*
 * bpe_bt.c — byte-level BPE by backtracking over a trie of the vocabulary, in linear time.
 *
 * The method is that of GitHub's rust-gems `bpe` crate (van Antwerpen and Neubeck, 2024).
 * Two facts make it exact:
 *   - a token sequence is the BPE encoding of its bytes if and only if every token is the
 *     encoding of its own bytes and every two neighbours are the encoding of their
 *     concatenation;
 *   - whether [x, y] encodes bytes(x) + bytes(y) can be decided from the merge history of x
 *     and y alone, without bytes: walk that history backwards (undo whichever of the two
 *     boundary tokens formed last) and ask at each step whether the two tokens that meet at
 *     the boundary form a pair that BPE would have merged before the next merge that, in
 *     the history, consumed one of them.
 * Encoding then takes the longest token that is a prefix of the rest and is compatible with
 * the last one taken, else the next shorter prefix, else backtracks one token; a bit per
 * position remembers positions from which nothing can succeed, so no work is repeated.
 *
 * "Formation time" orders the history: 0 for a byte, 1 + the rank of a token's last merge
 * otherwise. The walk is exact for two tokens if every token in their merge histories forms
 * after its two parts. That holds for every token of r50k, p50k, cl100k, o200k, GPT-2 and
 * Qwen, but not for 81 of the tokens Llama 3 adds to cl100k's (" nghi\xe1\xbb\x87", rank
 * 100999, merges " nghi", rank 116653, with one more character): such a token and every
 * token built on it are marked inexact, and a piece whose encoding would test one of them
 * for compatibility is left to the merge-by-rank encoder (bpe_bt_encode returns SIZE_MAX).
 * They are rare enough (Vietnamese words) that Llama 3's text runs on the tables too. The
 * tests compare the two encoders on the test strings, random strings and the sample corpus.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bpe_internal.h"
#include "core/err.h"

/* Tokens longer than this make the tables unavailable: finding a token's last merge is
 * quadratic in its length (no shipped vocabulary has tokens near it). */
#define BT_MAX_TOKEN 1024

/* A slot of the double-array trie: the children of the node in slot s are in slots
 * base + c for their bytes c, each with check == s. The array is filled breadth first, so
 * the nodes text visits most (the first bytes of characters, then whole characters) lie
 * together and stay in cache. */
typedef struct {
	uint32_t check; /* the parent's slot; UINT32_MAX: free */
	int32_t base;
	uint32_t tok;   /* the producible token the node spells, or NO_TOKEN */
} da_slot;

static const da_slot DA_FREE = { UINT32_MAX, 0, NO_TOKEN };

/* What a compatibility test reads of two tokens, together: 32 bytes, on cache lines. A
 * token's length (llm_bpe.len) and prefix (bpe_bt.prefix) lie elsewhere: only a step that
 * does not fit reads them. */
typedef struct {
	uint32_t time;          /* formation time; NO_TOKEN: BPE never produces the token */
	uint32_t left, right;   /* its last merge (a merged token) */
	uint8_t rbit[2];        /* its two bits as a right partner (right_bits), BT_EXACT */
	uint8_t lbit[2];        /* its two bits as a left partner (left_bits) */
	uint64_t rfilter;       /* a Bloom filter of the right partners of its pairs */
	uint64_t lfilter;       /* a Bloom filter of the left partners of its pairs */
} bt_tok;

_Static_assert(sizeof(bt_tok) == 32, "a token's entry fills half a cache line");

/* On rbit[0]: every token of its merge history forms after its parts. */
#define BT_EXACT 0x80

/*
 * The filters. Most pairs a compatibility test asks for do not exist (97% of them in Chinese
 * text); a pair's lookup is a binary search in the left token's list, several cache misses.
 * A left token's filter of its right partners alone let through nine in ten of the pairs
 * that were looked up (Chinese, qwen): the tokens met most, single characters, pair with
 * hundreds of others and fill their 64 bits. The right token's filter of its left partners
 * is read with it, and a pair is looked up only when both let it through.
 */
static inline void filter_pos(uint32_t id, uint8_t rbit[2], uint8_t lbit[2])
{
	uint64_t h = (uint64_t)id * 0x9e3779b97f4a7c15ULL, g = (uint64_t)id * 0xc2b2ae3d27d4eb4fULL;
	rbit[0] = (uint8_t)(h >> 58);
	rbit[1] = (uint8_t)(h >> 52 & 63);
	lbit[0] = (uint8_t)(g >> 58);
	lbit[1] = (uint8_t)(g >> 52 & 63);
}

static inline uint64_t right_bits(const bt_tok *r)
{
	return (uint64_t)1 << (r->rbit[0] & 63) | (uint64_t)1 << r->rbit[1];
}

static inline uint64_t left_bits(const bt_tok *l)
{
	return (uint64_t)1 << l->lbit[0] | (uint64_t)1 << l->lbit[1];
}

/* Where the trie is after a three-byte UTF-8 character from the root. Chinese text starts
 * nearly every token with one, and its three dependent loads become one. */
typedef struct {
	uint32_t slot;          /* the node the three bytes lead to; 0: the trie has no such node */
	int32_t base;           /* that node's da_slot.base: the next step's load is the child's */
	uint32_t best;          /* the longest producible token among the first three bytes, its
	                         * length (1-3) in the top two bits (ids are below 2^30) */
} bt_char;

#define CHAR3_LEN_SHIFT 30

/* The index of a three-byte UTF-8 character in bpe_bt.char3: its 16 payload bits. Any lead
 * byte 0xe0-0xef with two continuation bytes has one (overlong forms and surrogates too:
 * the table is about bytes, not code points). */
#define CHAR3_COUNT (1 << 16)

static inline bool is_char3(const unsigned char *p, size_t n)
{
	return n >= 3 && (p[0] & 0xf0) == 0xe0 && ((p[1] ^ 0x80) | (p[2] ^ 0x80)) < 0x40;
}

static inline uint32_t char3_index(const unsigned char *p)
{
	return (uint32_t)(p[0] & 15) << 12 | (uint32_t)(p[1] & 63) << 6 | (p[2] & 63);
}

struct bpe_bt {
	bt_tok *tok;            /* by id */
	uint32_t *prefix;       /* by id: the longest producible token that is a proper prefix,
	                         * or NO_TOKEN */
	da_slot *da;            /* the trie of the ordinary tokens; slot 0 is the root, nda + 256
	                         * slots, the last 256 free */
	uint32_t *whole;        /* by slot: the ordinary token the node spells, or NO_TOKEN */
	size_t nda;
	bt_char *char3;         /* by char3_index */
};

/* The trie as it is built, from the tokens in byte order: nodes in depth-first order (a
 * parent before its children), each with its parent, the byte that leads to it, the token it
 * spells and, once laid out, its slot in the double array. */
typedef struct {
	uint32_t *parent, *whole, *slot;
	unsigned char *label;
	uint32_t nnodes;
} ltrie;

/* The slot of the child of slot s by byte c, or 0 (the root is nobody's child). */
static inline uint32_t da_child(const bpe_bt *t, uint32_t s, unsigned c)
{
	uint32_t x = (uint32_t)(t->da[s].base + (int32_t)c);
	return x < t->nda && t->da[x].check == s ? x : 0;
}

/* The double array as it is filled: the slots, the token each spells, and a doubly linked
 * list of the free slots in increasing order (slot 0, the root, heads it; its links have a
 * sentinel at cap, which the last slot's removal writes). */
typedef struct {
	da_slot *da;
	uint32_t *whole, *nextf, *prevf;
	size_t cap, used_end;
} da_fill;

/* Grow the array to ncap slots, the new ones free. */
static void fill_grow(da_fill *d, size_t ncap)
{
	d->da = llm_realloc(d->da, ncap * sizeof *d->da);
	d->whole = llm_realloc(d->whole, ncap * sizeof *d->whole);
	d->nextf = llm_realloc(d->nextf, (ncap + 1) * sizeof *d->nextf);
	d->prevf = llm_realloc(d->prevf, (ncap + 1) * sizeof *d->prevf);
	for (size_t i = d->cap; i < ncap; i++) {
		d->da[i] = DA_FREE;
		d->whole[i] = NO_TOKEN;
	}
	for (size_t i = d->cap; i <= ncap; i++) { /* the new slots join the free list */
		d->nextf[i] = (uint32_t)i + 1;
		d->prevf[i] = (uint32_t)i - 1;
	}
	d->cap = ncap;
}

/* Give the children kids[lo..hi) (child << 8 | byte, in byte order) of the node in slot s
 * the first base, at or after free slot from, where all their slots are free, and queue
 * them (node, slot). */
static void place_children(da_fill *d, uint32_t s, const uint32_t *kids, uint32_t lo, uint32_t hi,
                           uint32_t from, uint32_t *queue, size_t *qt)
{
	unsigned c0 = kids[lo] & 255, clast = kids[hi - 1] & 255;
	int32_t b = 0;
	for (uint32_t f = from;; f = d->nextf[f]) {
		while (f + (clast - c0) >= d->cap)
			fill_grow(d, d->cap * 2);
		if (f < c0 + 1u) /* base must be positive: slot 0 is the root */
			continue;
		b = (int32_t)(f - c0);
		uint32_t i = lo; /* f too: after a growth the list may hold used slots */
		while (i < hi && d->da[b + (int32_t)(kids[i] & 255)].check == UINT32_MAX)
			i++;
		if (i == hi)
			break;
	}
	d->da[s].base = b;
	for (uint32_t i = lo; i < hi; i++) {
		uint32_t x = (uint32_t)(b + (int32_t)(kids[i] & 255));
		d->da[x].check = s;
		d->nextf[d->prevf[x]] = d->nextf[x]; /* off the free list */
		d->prevf[d->nextf[x]] = d->prevf[x];
		if (x + 1 > d->used_end)
			d->used_end = x + 1;
		queue[(*qt)++] = kids[i] >> 8;
		queue[(*qt)++] = x;
	}
}

/* Whether trie node x spells a three-byte UTF-8 character from the root. */
static bool spells_char3(const ltrie *h, uint32_t x)
{
	uint32_t p = h->parent[x], pp = p ? h->parent[p] : 0;
	return pp && !h->parent[pp] && (h->label[pp] & 0xf0) == 0xe0 && (h->label[p] & 0xc0) == 0x80 &&
	       (h->label[x] & 0xc0) == 0x80;
}

/*
 * Lay the trie out as a double array, breadth first, in two parts. First every node outside
 * the subtrees below three-byte characters: the nodes that text visits most (the first
 * bytes of characters, then whole characters) lie together and stay in cache. Then those
 * subtrees, one after the other, each breadth first after all of the first part: Chinese
 * text walks them for every token past its first character, and among the nodes of the
 * same depth in the English vocabulary they spread over the whole array (qwen's 66k such
 * nodes over all its 333k slots, 4 MB, twice a server core's L2); together they take 0.8 MB.
 * Each node's children go at the first base where all their slots are free, found along
 * the list of the free slots (in the second part, from its start).
 */
static void build_da(bpe_bt *t, ltrie *h)
{
	uint32_t nn = h->nnodes;
	/* the children of each node, in byte order (the nodes are in depth-first order) */
	uint32_t *coff = llm_calloc((size_t)nn + 1, sizeof *coff);
	uint32_t *kids = llm_malloc((size_t)nn * sizeof *kids); /* child << 8 | byte */
	for (uint32_t i = 1; i < nn; i++)
		coff[h->parent[i]]++;
	for (uint32_t i = 0, sum = 0; i <= nn; i++) {
		uint32_t c = coff[i];
		coff[i] = sum;
		sum += c;
	}
	for (uint32_t i = 1; i < nn; i++)
		kids[coff[h->parent[i]]++] = i << 8 | h->label[i];
	for (uint32_t i = nn; i > 0; i--) /* coff[i] is now the end of i's list: shift back */
		coff[i] = coff[i - 1];
	coff[0] = 0;

	da_fill d = { .used_end = 1 };
	fill_grow(&d, (size_t)nn + nn / 2 + 512);
	d.da[0].check = 0; /* slot 0 (the root) is used; the free list runs from nextf[0] */
	d.nextf[0] = 1;
	uint32_t *queue = llm_malloc((size_t)nn * 2 * sizeof *queue); /* node, slot */
	uint32_t *later = llm_malloc((size_t)nn * 2 * sizeof *later); /* the second part's roots */
	size_t qh = 0, qt = 0, nlater = 0, next_later = 0;
	uint32_t from2 = 0; /* the second part: the first free slot past the first */
	queue[qt++] = 0;
	queue[qt++] = 0;
	for (;;) {
		if (qh == qt) { /* a part or a subtree done: the next subtree, alone in the queue */
			if (next_later == nlater)
				break;
			if (!next_later)
				from2 = (uint32_t)d.used_end;
			qh = qt = 0;
			queue[qt++] = later[next_later++];
			queue[qt++] = later[next_later++];
		}
		uint32_t node = queue[qh++], s = queue[qh++];
		uint32_t lo = coff[node], hi = coff[node + 1];
		h->slot[node] = s;
		d.whole[s] = h->whole[node];
		if (lo == hi)
			continue;
		if (!from2 && spells_char3(h, node)) { /* children placed in the second part */
			later[nlater++] = node;
			later[nlater++] = s;
			continue;
		}
		if (from2) /* slots are only taken: the first free one only moves on */
			while (from2 < d.cap && d.da[from2].check != UINT32_MAX)
				from2++;
		if (from2 >= d.cap)
			fill_grow(&d, d.cap * 2);
		place_children(&d, s, kids, lo, hi, from2 ? from2 : d.nextf[0], queue, &qt);
	}
	free(later);
	free(queue);
	free(d.nextf);
	free(d.prevf);
	free(kids);
	free(coff);
	/* 256 free slots after the last used one: base + c of every used node is then a slot of
	 * the array (a base is below used_end, a leaf's is 0), and the walk needs no bound. */
	t->da = llm_realloc(d.da, (d.used_end + 256) * sizeof *t->da);
	for (size_t i = d.used_end; i < d.used_end + 256; i++)
		t->da[i] = DA_FREE;
	t->whole = llm_realloc(d.whole, d.used_end * sizeof *d.whole);
	t->nda = d.used_end;
}

/*
 * The last merge of token id when its bytes are encoded alone, by merging the lowest-ranked
 * pair (leftmost on ties) until two symbols are left: true with them in *l and *r when they
 * form id, false when BPE never produces id. sym and rk are scratch for len entries.
 */
static bool last_merge(const llm_bpe *b, bpe_pcache *pc, uint32_t id, uint32_t *sym, uint32_t *rk,
                       uint32_t *l, uint32_t *r)
{
	const unsigned char *s = (const unsigned char *)b->arena.p + b->off[id];
	size_t n = b->len[id];
	uint32_t *res = rk + n;
	for (size_t i = 0; i < n; i++)
		sym[i] = b->byte_id[s[i]];
	for (size_t i = 0; i + 1 < n; i++) {
		rk[i] = b->bb_rank[s[i] << 8 | s[i + 1]];
		res[i] = b->bb_res[s[i] << 8 | s[i + 1]];
	}
	n = bpe_merge_linear(b, pc, sym, rk, res, n, 2);
	if (n != 2)
		return false;
	uint32_t got = NO_TOKEN;
	if (bpe_pair_lookup(b, sym[0], sym[1], &got) == NO_TOKEN || got != id)
		return false;
	*l = sym[0];
	*r = sym[1];
	return true;
}

/* Whether the merge history of token id is in order (BT_EXACT), from its parts'; state
 * is 0 (not known yet), 1 (exact) or 2 (not) by id. The parts are shorter than the token, so
 * the recursion is at most BT_MAX_TOKEN deep. */
static bool history_exact(bpe_bt *t, unsigned char *state, uint32_t id)
{
	if (!state[id]) {
		bt_tok *k = &t->tok[id];
		bool ok = k->left == NO_TOKEN ||
		          (k->time > t->tok[k->left].time && k->time > t->tok[k->right].time &&
		           history_exact(t, state, k->left) && history_exact(t, state, k->right));
		state[id] = ok ? 1 : 2;
	}
	return state[id] == 1;
}

static void mark_exact(bpe_bt *t, uint32_t nt)
{
	unsigned char *state = llm_calloc(nt ? nt : 1, 1);
	for (uint32_t id = 0; id < nt; id++)
		if (t->tok[id].time != NO_TOKEN && history_exact(t, state, id))
			t->tok[id].rbit[0] |= BT_EXACT;
	free(state);
}

void bpe_bt_free(bpe_bt *t)
{
	if (!t)
		return;
	free(t->tok);
	free(t->prefix);
	free(t->whole);
	free(t->da);
	free(t->char3);
	free(t);
}

void bpe_bt_hash(const bpe_bt *t, uint32_t ntok, llm_hasher *h)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nda; i++) /* field by field: the structs have padding */
		llm_hasher_add(h, (const uint32_t[]){ t->da[i].check, (uint32_t)t->da[i].base,
		                                      t->da[i].tok, t->whole[i] }, 4 * sizeof(uint32_t));
	for (size_t i = 0; i < CHAR3_COUNT; i++)
		llm_hasher_add(h, (const uint32_t[]){ t->char3[i].slot, (uint32_t)t->char3[i].base,
		                                      t->char3[i].best }, 3 * sizeof(uint32_t));
	llm_hasher_add(h, t->prefix, ntok * sizeof *t->prefix);
	for (const bt_tok *k = t->tok, *end = k + ntok; k < end; k++)
		llm_hasher_add(h,
		               (const uint32_t[]){ k->time, k->left, k->right,
		                                   k->rbit[0] | (uint32_t)k->rbit[1] << 8 |
		                                           (uint32_t)k->lbit[0] << 16 | (uint32_t)k->lbit[1] << 24,
		                                   (uint32_t)k->rfilter, (uint32_t)(k->rfilter >> 32),
		                                   (uint32_t)k->lfilter, (uint32_t)(k->lfilter >> 32) },
		               8 * sizeof(uint32_t));
}

/* The last merges of the ordinary tokens, in chunks on the pool: each token's depends on the
 * pair lists alone. A worker has its own scratch and pair cache; in byte order, neighbours
 * share prefixes and so most of their merges. */
#define MERGE_CHUNK 4096

typedef struct {
	uint32_t *sym, *rk; /* last_merge's scratch */
	bpe_pcache *pc;
} merge_scratch;

typedef struct {
	const llm_bpe *b;
	bpe_bt *t;
	const uint32_t *ids; /* the ordinary tokens in byte order */
	uint32_t nids;
	merge_scratch *ws;   /* by worker */
} merge_job;

static void merge_chunk(void *ctx, size_t chunk, int worker)
{
	const merge_job *j = ctx;
	const llm_bpe *b = j->b;
	merge_scratch *w = &j->ws[worker];
	uint32_t lo = (uint32_t)(chunk * MERGE_CHUNK);
	uint32_t hi = j->nids - lo < MERGE_CHUNK ? j->nids : lo + MERGE_CHUNK;
	if (!w->sym) {
		w->sym = llm_malloc(3 * (b->max_len + 1) * sizeof *w->sym);
		w->rk = w->sym + b->max_len + 1;
		/* The merges inside tokens are mostly between a few thousand short tokens. */
		w->pc = llm_calloc((size_t)1 << BPE_PCACHE_BITS, sizeof *w->pc);
	}
	for (uint32_t k = lo; k < hi; k++) {
		uint32_t id = j->ids[k], l, r, res;
		if (b->len[id] < 2 || !last_merge(b, w->pc, id, w->sym, w->rk, &l, &r))
			continue;
		j->t->tok[id].left = l;
		j->t->tok[id].right = r;
		j->t->tok[id].time = bpe_pair_lookup(b, l, r, &res) + 1;
	}
}

/* The trie of the n ordinary tokens in byte order (total bytes): a token comes right after
 * the tokens it extends, so the nodes it shares with the token before it are on that one's
 * path. */
static void build_trie(const llm_bpe *b, const uint32_t *ids, uint32_t n, size_t total, ltrie *h)
{
	*h = (ltrie){ llm_malloc((total + 1) * sizeof *h->parent), llm_malloc((total + 1) * sizeof *h->whole),
	              llm_malloc((total + 1) * sizeof *h->slot), llm_malloc(total + 1), 1 };
	h->parent[0] = 0;
	h->whole[0] = NO_TOKEN;
	uint32_t *path = llm_malloc((b->max_len + 1) * sizeof *path); /* the previous token's nodes */
	const unsigned char *prev = NULL;
	size_t plen = 0;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t id = ids[k];
		const unsigned char *s = (const unsigned char *)b->arena.p + b->off[id];
		size_t len = b->len[id], lcp = 0;
		while (lcp < plen && lcp < len && prev[lcp] == s[lcp])
			lcp++;
		for (size_t d = lcp; d < len; d++) {
			uint32_t x = h->nnodes++;
			h->parent[x] = d ? path[d - 1] : 0;
			h->label[x] = s[d];
			h->whole[x] = NO_TOKEN;
			path[d] = x;
		}
		h->whole[path[len - 1]] = id;
		prev = s;
		plen = len;
	}
	free(path);
}

static void free_trie(ltrie *h)
{
	free(h->parent);
	free(h->whole);
	free(h->slot);
	free(h->label);
}

/* Mark the producible tokens in the double array, and give each its longest producible
 * proper prefix: the nearest producible one above it, parents coming first. */
static void mark_producible(bpe_bt *t, const ltrie *h)
{
	uint32_t *best = llm_malloc((size_t)h->nnodes * sizeof *best); /* at or above the node */
	best[0] = NO_TOKEN;
	for (uint32_t x = 1; x < h->nnodes; x++) {
		uint32_t id = h->whole[x];
		best[x] = best[h->parent[x]];
		if (id != NO_TOKEN && t->tok[id].time != NO_TOKEN) {
			t->prefix[id] = best[x];
			t->da[h->slot[x]].tok = best[x] = id;
		}
	}
	free(best);
}

/* Walk the trie from the root over every three-byte character, once the producible tokens
 * are marked. */
static void build_char3(bpe_bt *t)
{
	t->char3 = llm_malloc(CHAR3_COUNT * sizeof *t->char3);
	for (uint32_t i = 0; i < CHAR3_COUNT; i++) {
		unsigned char c[3] = { (unsigned char)(0xe0 | i >> 12), (unsigned char)(0x80 | (i >> 6 & 63)),
		                       (unsigned char)(0x80 | (i & 63)) };
		uint32_t s = 0, best = NO_TOKEN;
		for (int d = 0; d < 3 && (s = da_child(t, s, c[d])); d++)
			if (t->da[s].tok != NO_TOKEN)
				best = t->da[s].tok | (uint32_t)(d + 1) << CHAR3_LEN_SHIFT;
		t->char3[i] = (bt_char){ s, s ? t->da[s].base : 0, best };
	}
}

/* The pool's items: the trie and its double array first (they depend on the bytes alone and
 * take about half as long as all the merges), then the chunks of last merges beside them. */
typedef struct {
	merge_job m;
	size_t total;
	ltrie *h;
} tables_job;

static void tables_item(void *ctx, size_t i, int worker)
{
	tables_job *j = ctx;
	if (i > 0) {
		merge_chunk(&j->m, i - 1, worker);
		return;
	}
	build_trie(j->m.b, j->m.ids, j->m.nids, j->total, j->h);
	build_da(j->m.t, j->h);
}

static void build_tables(const llm_bpe *b, bpe_bt *t, const uint32_t *ids, uint32_t nids,
                         size_t total, ltrie *h, llm_pool *pool)
{
	int nw = llm_pool_workers(pool);
	tables_job j = { { b, t, ids, nids, llm_calloc((size_t)nw, sizeof *j.m.ws) }, total, h };
	llm_pool_run(pool, 1 + ((size_t)nids + MERGE_CHUNK - 1) / MERGE_CHUNK, tables_item, &j);
	for (int i = 0; i < nw; i++) {
		free(j.m.ws[i].sym);
		free(j.m.ws[i].pc);
	}
	free(j.m.ws);
}

bpe_bt *bpe_bt_new(const llm_bpe *b, const uint32_t *ids, uint32_t nids, llm_pool *pool)
{
	if (!b->bytelevel || b->max_len > BT_MAX_TOKEN || !b->poff || b->ntok >= (uint32_t)1 << 30)
		return NULL; /* 2^30 ids: the compatibility cache's keys have 62 bits */
	size_t total = 0;
	for (uint32_t id = 0; id < b->ntok; id++)
		if (b->len[id] != NO_TOKEN && !(b->flags[id] & TOK_ADDED))
			total += b->len[id];
	if (total >= (size_t)1 << 24) /* a node and its byte share 32 bits */
		return NULL;
	bpe_bt *t = llm_calloc(1, sizeof *t);
	size_t nt = b->ntok;
	t->tok = llm_malloc_lines(nt * sizeof *t->tok); /* an entry within one cache line */
	t->prefix = llm_malloc((nt ? nt : 1) * sizeof *t->prefix);
	for (size_t i = 0; i < nt; i++) {
		t->tok[i] = (bt_tok){ NO_TOKEN, NO_TOKEN, NO_TOKEN, { 0 }, { 0 }, 0, 0 };
		filter_pos((uint32_t)i, t->tok[i].rbit, t->tok[i].lbit);
		t->prefix[i] = NO_TOKEN;
	}
	for (size_t l = 0; l < nt; l++)
		for (uint32_t k = b->poff[l]; k < b->poff[l + 1]; k++) {
			bt_tok *r = &t->tok[b->pkey[k]];
			t->tok[l].rfilter |= right_bits(r);
			r->lfilter |= left_bits(&t->tok[l]);
		}
	for (int c = 0; c < 256; c++)
		t->tok[b->byte_id[c]].time = 0;

	ltrie h = { 0 };
	build_tables(b, t, ids, nids, total, &h, pool);
	bool ok = true;
	/* A rank + 1 cannot overflow into NO_TOKEN. */
	for (uint32_t id = 0; id < nt && ok; id++)
		ok = t->tok[id].left == NO_TOKEN || t->tok[id].time != NO_TOKEN;
	if (ok)
		mark_exact(t, (uint32_t)nt);
	else {
		free_trie(&h);
		bpe_bt_free(t);
		return NULL;
	}

	mark_producible(t, &h);
	free_trie(&h);
	build_char3(t);
	return t;
}

enum { INCOMPATIBLE, COMPATIBLE, INEXACT };

/* Recent compatibility tests: the same neighbours recur in every text, and the walk below
 * costs several pair lookups. Direct-mapped, a word a slot: the key (x + 1) << 32 | y in the
 * low 62 bits (bpe_bt_new takes no vocabulary of 2^30 ids or more), the verdict above it.
 * Chinese text meets tens of thousands of pairs of o200k's CJK tokens: 4096 slots missed on
 * more than half of the tests, 2^15 (256 KiB, within L2) on few. */
#define CCACHE_BITS 15
#define CCACHE_KEY(x, y) (((uint64_t)(x) + 1) << 32 | (y))
#define CCACHE_VERDICT_SHIFT 62

struct bpe_bt_cache {
	uint64_t slot[1 << CCACHE_BITS]; /* 0 = empty */
};

bpe_bt_cache *bpe_bt_cache_new(void)
{
	return llm_calloc(1, sizeof(bpe_bt_cache));
}

void bpe_bt_cache_free(bpe_bt_cache *c)
{
	free(c);
}

/* Whether [x, y] is the BPE encoding of bytes(x) + bytes(y) (see the top of the file):
 * COMPATIBLE or INCOMPATIBLE, or INEXACT when the history of x or y is out of order. A
 * pair that crosses the boundary merges before a merge on the left at the same rank loses
 * to it (that one is further left), and before one on the right at the same rank wins. */
static int compatible_walk(const llm_bpe *b, const bpe_bt *t, bpe_pcache *pc, uint32_t x, uint32_t y)
{
	const bt_tok *tk = t->tok;
	if (!(tk[x].rbit[0] & tk[y].rbit[0] & BT_EXACT))
		return INEXACT;
	uint32_t limit = NO_TOKEN, res;
	for (;;) {
		uint64_t rb = right_bits(&tk[y]), lb = left_bits(&tk[x]);
		uint32_t rank = NO_TOKEN;
		if ((tk[x].rfilter & rb) == rb && (tk[y].lfilter & lb) == lb)
			rank = bpe_pair_cached(b, pc, x, y, &res);
		if (rank != NO_TOKEN && rank + 1 < limit)
			return INCOMPATIBLE;
		if (tk[x].time > tk[y].time) {
			limit = tk[x].time;
			x = tk[x].right;
		} else if (tk[y].time > 0) {
			limit = tk[y].time + 1;
			y = tk[y].left;
		} else {
			return COMPATIBLE;
		}
	}
}

/* compatible_walk through the cache cc. */
static inline int compatible(const llm_bpe *b, const bpe_bt *t, bpe_pcache *pc, bpe_bt_cache *cc,
                             uint32_t x, uint32_t y)
{
	uint64_t key = CCACHE_KEY(x, y);
	uint64_t *slot = &cc->slot[(key * 0x9e3779b97f4a7c15ULL) >> (64 - CCACHE_BITS)];
	if ((*slot & (((uint64_t)1 << CCACHE_VERDICT_SHIFT) - 1)) != key) {
		int verdict = compatible_walk(b, t, pc, x, y);
		*slot = key | (uint64_t)verdict << CCACHE_VERDICT_SHIFT;
		return verdict;
	}
	return (int)(*slot >> CCACHE_VERDICT_SHIFT);
}

/* The longest producible token that is a prefix of p[0..n), n > 0: at least p[0]'s, its
 * length in *len (the walk knows it: the token's own entry is far away in memory). With
 * whole, *whole is the ordinary token that is all of p[0..n), or NO_TOKEN. */
static inline uint32_t longest(const bpe_bt *t, const unsigned char *p, size_t n, size_t *len,
                               uint32_t *whole)
{
	const da_slot *da = t->da;
	uint32_t s = 0, best = NO_TOKEN;
	int32_t base = da[0].base;
	size_t i = 0, blen = 0;
	if (is_char3(p, n)) {
		const bt_char *c = &t->char3[char3_index(p)];
		if (c->slot) {
			s = c->slot;
			base = c->base;
			best = c->best & ((1u << CHAR3_LEN_SHIFT) - 1);
			blen = c->best >> CHAR3_LEN_SHIFT;
			i = 3;
		}
	}
	for (; i < n; i++) {
		uint32_t x = (uint32_t)(base + p[i]);
		if (da[x].check != s)
			break;
		s = x;
		base = da[s].base;
		if (da[s].tok != NO_TOKEN) {
			best = da[s].tok;
			blen = i + 1;
		}
	}
	if (whole)
		*whole = i == n ? t->whole[s] : NO_TOKEN;
	*len = blen;
	return best;
}

size_t bpe_bt_encode(const llm_bpe *b, bpe_pcache *pc, bpe_bt_cache *cc, const unsigned char *p,
                     size_t n, uint32_t *out, uint64_t *dead)
{
	const bpe_bt *t = b->bt;
	uint32_t whole;
	size_t len; /* of tok */
	uint32_t tok = longest(t, p, n, &len, b->whole_first ? &whole : NULL);
	if (b->whole_first && whole != NO_TOKEN) {
		out[0] = whole;
		return 1;
	}
	memset(dead, 0, ((n >> 6) + 1) * sizeof *dead);
	size_t k = 0, pos = 0;
	while (pos < n) {
		uint32_t last = k ? out[k - 1] : NO_TOKEN;
		for (;;) {
			size_t end = pos + len;
			int c = dead[end >> 6] >> (end & 63) & 1 ? INCOMPATIBLE
			        : last == NO_TOKEN               ? COMPATIBLE
			                                         : compatible(b, t, pc, cc, last, tok);
			if (c == INEXACT)
				return SIZE_MAX;
			if (c == COMPATIBLE) {
				out[k++] = tok;
				pos = end;
				if (pos < n)
					tok = longest(t, p + pos, n - pos, &len, NULL);
				break;
			}
			if (t->prefix[tok] != NO_TOKEN) {
				tok = t->prefix[tok];
				len = b->len[tok];
				continue;
			}
			/* Nothing fits at pos: no encoding of the rest starts there. Take back the
			 * last token and try its shorter prefixes. */
			if (!k)
				return SIZE_MAX; /* cannot happen when the tables are right */
			dead[pos >> 6] |= (uint64_t)1 << (pos & 63);
			k--;
			len = b->len[last];
			pos -= len;
			tok = last;
			break;
		}
	}
	return k;
}
