/*
 * bpe_train.c — byte-level BPE training (see bpe_train.h).
 *
 * Counting: a hash table of the distinct pieces (their bytes back to back in one arena, so a
 * piece's length is the distance to the next one's offset). With a budget, a table that
 * would outgrow it is written out as a run sorted by (64-bit hash, length, bytes): sorting
 * by hash is sorting integers for all but the rare equal hashes, and the bytes that follow
 * make equality exact. The sort reuses the table's hash slots as its key array, so a spill
 * needs no memory beyond the table. Runs are merged with a heap, equal pieces' counts
 * summed; pieces, not records of their hashes and file offsets (lib/core/xsort.h), so that
 * merging reads every run front to back and never seeks to compare two pieces' bytes.
 *
 * Which pieces to keep: a histogram of the pieces by count (exact below 4096, 8 buckets per
 * octave above) with their number and bytes gives the smallest count T whose pieces' training
 * estimate fits; a second merge (or a compaction of the table) keeps those. Pieces seen
 * equally often are kept or dropped together, so the choice does not depend on the order of
 * the input or on where the runs were cut.
 *
 * Training: the classic incremental algorithm. Pair counts are kept for all distinct pieces
 * ("words") weighted by frequency, each pair remembers the words it occurs in, and a max-heap
 * with lazy entries yields the next merge. A merge rewrites only the words in its list and
 * adjusts the counts of the neighbouring pairs; a heap entry whose count is out of date is
 * pushed again with the current count when popped. Increases are pushed right away, so the
 * heap's top is always the true maximum. None of this depends on the order of the words, so
 * the tokenizer is the same whether the pieces come from the table or from merged runs.
 */
#include "bpe_train.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpe.h"
#include "core/err.h"
#include "core/hash.h"
#include "core/io.h"
#include "core/json.h"
#include "core/utf8.h"
#include "pretok.h"

/* A map from byte strings to a uint32 value, the strings kept in one arena. */
typedef struct {
	uint32_t *slot; /* index + 1 into off/len/val; 0 = empty */
	size_t mask, n;
	uint64_t *off;
	uint32_t *len;
	uint64_t *val;
	size_t cap;
	llm_buf arena;
} strmap;

static void strmap_init(strmap *m)
{
	memset(m, 0, sizeof *m);
	m->mask = 1023;
	m->slot = llm_calloc(m->mask + 1, sizeof *m->slot);
}

static void strmap_release(strmap *m)
{
	free(m->slot);
	free(m->off);
	free(m->len);
	free(m->val);
	llm_buf_release(&m->arena);
}

static const char *strmap_key(const strmap *m, size_t i, size_t *len)
{
	*len = m->len[i];
	return m->arena.p + m->off[i];
}

/* Index of s, inserting it with value 0 when absent. */
static size_t strmap_get(strmap *m, const char *s, size_t n)
{
	uint64_t h = llm_hash64(s, n, 0);
	size_t i = h & m->mask;
	for (; m->slot[i]; i = (i + 1) & m->mask) {
		size_t k = m->slot[i] - 1;
		if (m->len[k] == n && memcmp(m->arena.p + m->off[k], s, n) == 0)
			return k;
	}
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 1024;
		m->off = llm_realloc(m->off, m->cap * sizeof *m->off);
		m->len = llm_realloc(m->len, m->cap * sizeof *m->len);
		m->val = llm_realloc(m->val, m->cap * sizeof *m->val);
	}
	size_t k = m->n++;
	m->off[k] = m->arena.len;
	m->len[k] = (uint32_t)n;
	m->val[k] = 0;
	llm_buf_add(&m->arena, s, n);
	m->slot[i] = (uint32_t)k + 1;
	if (m->n * 2 > m->mask) {
		size_t cap = (m->mask + 1) * 2;
		free(m->slot);
		m->slot = llm_calloc(cap, sizeof *m->slot);
		m->mask = cap - 1;
		for (size_t j = 0; j < m->n; j++) {
			size_t q = llm_hash64(m->arena.p + m->off[j], m->len[j], 0) & m->mask;
			while (m->slot[q])
				q = (q + 1) & m->mask;
			m->slot[q] = (uint32_t)j + 1;
		}
	}
	return k;
}

/* Lookup without inserting; -1 when absent. */
static long strmap_find(const strmap *m, const char *s, size_t n)
{
	uint64_t h = llm_hash64(s, n, 0);
	for (size_t i = h & m->mask; m->slot[i]; i = (i + 1) & m->mask) {
		size_t k = m->slot[i] - 1;
		if (m->len[k] == n && memcmp(m->arena.p + m->off[k], s, n) == 0)
			return (long)k;
	}
	return -1;
}

/* ---- the piece table ---- */

/* Distinct pieces with their counts. slot: index + 1, 0 = empty; NULL once counting is over
 * (the table then only lists pieces). The arena has no gaps: piece i ends where i + 1 begins. */
typedef struct {
	uint32_t *slot;
	size_t mask;
	uint64_t *off, *cnt;
	size_t n, cap;
	char *bytes;
	size_t blen, bcap;
} ptable;

#define PT_MIN_SLOTS 1024
#define PT_MAX_PIECES ((size_t)UINT32_MAX - 1)

static void pt_init(ptable *t)
{
	memset(t, 0, sizeof *t);
	/* Allocated as 64-bit words: spill() sorts 64-bit keys in this memory. */
	t->slot = llm_calloc(PT_MIN_SLOTS / 2, sizeof(uint64_t));
	t->mask = PT_MIN_SLOTS - 1;
}

static void pt_release(ptable *t)
{
	free(t->slot);
	free(t->off);
	free(t->cnt);
	free(t->bytes);
	memset(t, 0, sizeof *t);
}

static size_t pt_len(const ptable *t, size_t i)
{
	return (size_t)((i + 1 < t->n ? t->off[i + 1] : t->blen) - t->off[i]);
}

static size_t pt_memory(const ptable *t)
{
	return (t->slot ? (t->mask + 1) * sizeof *t->slot : 0) + t->cap * 2 * sizeof(uint64_t) + t->bcap;
}

static void pt_rehash(ptable *t, size_t slots)
{
	free(t->slot);
	t->slot = llm_calloc(slots / 2, sizeof(uint64_t));
	t->mask = slots - 1;
	for (size_t j = 0; j < t->n; j++) {
		size_t q = llm_hash64(t->bytes + t->off[j], pt_len(t, j), 0) & t->mask;
		while (t->slot[q])
			q = (q + 1) & t->mask;
		t->slot[q] = (uint32_t)j + 1;
	}
}

static void pt_resize(ptable *t, size_t cap, size_t bcap)
{
	if (cap != t->cap) {
		t->off = llm_realloc(t->off, (cap ? cap : 1) * sizeof *t->off);
		t->cnt = llm_realloc(t->cnt, (cap ? cap : 1) * sizeof *t->cnt);
		t->cap = cap;
	}
	if (bcap != t->bcap) {
		t->bytes = llm_realloc(t->bytes, bcap ? bcap : 1);
		t->bcap = bcap;
	}
}

/*
 * Make room for one more piece of n bytes, keeping pt_memory within limit (0: no limit)
 * unless the table is empty. Growth doubles, or takes an eighth more when doubling would not
 * fit. 1 when there is no room: the caller spills the table and tries again.
 */
static int pt_reserve(ptable *t, size_t n, size_t limit)
{
	if (t->n == PT_MAX_PIECES)
		return 1;
	size_t cap = t->cap, bcap = t->bcap, slots = t->mask + 1;
	bool grow_cap = t->n == cap, grow_bytes = t->blen + n > bcap;
	if (grow_cap)
		cap = cap ? 2 * cap : 1024;
	if (grow_bytes) {
		bcap = bcap ? 2 * bcap : 65536;
		if (bcap < t->blen + n)
			bcap = t->blen + n;
	}
	if ((t->n + 1) * 2 > t->mask)
		slots *= 2;
	bool grows = grow_cap || grow_bytes || slots != t->mask + 1;
	if (limit && t->n && grows) {
		size_t fixed = slots * sizeof *t->slot;
		if (fixed + cap * 2 * sizeof(uint64_t) + bcap > limit) {
			if (grow_cap)
				cap = t->cap + t->cap / 8;
			if (grow_bytes) {
				bcap = t->bcap + t->bcap / 8;
				if (bcap < t->blen + n)
					bcap = t->blen + n;
			}
			if (fixed + cap * 2 * sizeof(uint64_t) + bcap > limit)
				return 1;
		}
	}
	pt_resize(t, cap, bcap);
	if (slots != t->mask + 1)
		pt_rehash(t, slots);
	return 0;
}

/* Add by to the count of piece s (inserting it). 1 when the table is full (see pt_reserve). */
static int pt_add(ptable *t, const char *s, size_t n, uint64_t by, size_t limit)
{
	uint64_t h = llm_hash64(s, n, 0);
	size_t i = h & t->mask;
	for (; t->slot[i]; i = (i + 1) & t->mask) {
		size_t k = t->slot[i] - 1;
		if (pt_len(t, k) == n && memcmp(t->bytes + t->off[k], s, n) == 0) {
			t->cnt[k] += by;
			return 0;
		}
	}
	size_t old_slots = t->mask + 1;
	if (pt_reserve(t, n, limit))
		return 1;
	if (t->mask + 1 != old_slots)
		for (i = h & t->mask; t->slot[i]; i = (i + 1) & t->mask)
			;
	size_t k = t->n++;
	t->off[k] = t->blen;
	t->cnt[k] = by;
	memcpy(t->bytes + t->blen, s, n);
	t->blen += n;
	t->slot[i] = (uint32_t)k + 1;
	return 0;
}

/* Order of pieces in runs: 64-bit hash, then length, then bytes. */
static int piece_cmp(uint64_t ha, const char *a, size_t na, uint64_t hb, const char *b, size_t nb)
{
	if (ha != hb)
		return ha < hb ? -1 : 1;
	if (na != nb)
		return na < nb ? -1 : 1;
	return memcmp(a, b, na);
}

/* Sort keys are (hash >> 32) << 32 | index: integers compare in the order of pieces except
 * when the high halves of the hashes are equal. */
static int key_cmp(const ptable *t, uint64_t x, uint64_t y)
{
	if (x >> 32 != y >> 32)
		return x >> 32 < y >> 32 ? -1 : 1;
	size_t i = (uint32_t)x, j = (uint32_t)y, ni = pt_len(t, i), nj = pt_len(t, j);
	const char *a = t->bytes + t->off[i], *b = t->bytes + t->off[j];
	return piece_cmp(llm_hash64(a, ni, 0), a, ni, llm_hash64(b, nj, 0), b, nj);
}

/* Quicksort (keys are hashes, so median-of-three pivots behave); no memory besides the stack,
 * which the loop on the larger side keeps to O(log n) frames. */
static void sort_keys(uint64_t *k, size_t n, const ptable *t)
{
	while (n > 16) {
		size_t m = n / 2;
		uint64_t x;
#define SWAP(i, j) (x = k[i], k[i] = k[j], k[j] = x)
		if (key_cmp(t, k[m], k[0]) < 0)
			SWAP(m, 0);
		if (key_cmp(t, k[n - 1], k[m]) < 0) {
			SWAP(n - 1, m);
			if (key_cmp(t, k[m], k[0]) < 0)
				SWAP(m, 0);
		}
		uint64_t pv = k[m];
		size_t i = 0, j = n - 1;
		for (;;) {
			while (key_cmp(t, k[i], pv) < 0)
				i++;
			while (key_cmp(t, k[j], pv) > 0)
				j--;
			if (i >= j)
				break;
			SWAP(i, j);
			i++;
			j--;
		}
#undef SWAP
		/* [0, j] <= pv <= [j + 1, n) */
		if (j + 1 < n - j - 1) {
			sort_keys(k, j + 1, t);
			k += j + 1;
			n -= j + 1;
		} else {
			sort_keys(k + j + 1, n - j - 1, t);
			n = j + 1;
		}
	}
	for (size_t i = 1; i < n; i++) {
		uint64_t v = k[i];
		size_t j = i;
		for (; j > 0 && key_cmp(t, v, k[j - 1]) < 0; j--)
			k[j] = k[j - 1];
		k[j] = v;
	}
}

/* ---- runs on disk ---- */

/* A run: records (u64 hash, varint count, varint length, bytes) in piece order, at [off, end)
 * of the temporary file. */
typedef struct {
	uint64_t off, end;
} runinfo;

#define WBUF_SIZE ((size_t)64 << 10)
#define MIN_WINDOW ((size_t)4 << 10)
#define MAX_WINDOW ((size_t)1 << 20)

typedef struct {
	int fd;
	uint64_t pos;
	char *buf;
	size_t len;
	int err;
} fwriter;

#define COUNTS_FILE "temporary file of piece counts"

static void fw_flush(fwriter *w)
{
	if (w->len && !w->err)
		w->err = llm_pwrite_all(w->fd, w->buf, w->len, w->pos, COUNTS_FILE);
	w->pos += w->len;
	w->len = 0;
}

static void fw_put(fwriter *w, const void *p, size_t n)
{
	if (w->len + n > WBUF_SIZE)
		fw_flush(w);
	if (n > WBUF_SIZE) {
		if (!w->err)
			w->err = llm_pwrite_all(w->fd, p, n, w->pos, COUNTS_FILE);
		w->pos += n;
		return;
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

static void fw_record(fwriter *w, uint64_t hash, uint64_t count, const char *s, size_t n)
{
	unsigned char h[8 + 20];
	size_t k = 0;
	for (int i = 0; i < 8; i++)
		h[k++] = (unsigned char)(hash >> (8 * i));
	for (uint64_t v = count;; v >>= 7) {
		h[k++] = (unsigned char)((v & 127) | (v >= 128 ? 128 : 0));
		if (v < 128)
			break;
	}
	for (uint64_t v = n;; v >>= 7) {
		h[k++] = (unsigned char)((v & 127) | (v >= 128 ? 128 : 0));
		if (v < 128)
			break;
	}
	fw_put(w, h, k);
	fw_put(w, s, n);
}

/* One run being read: a window of it in memory and its current record. */
typedef struct {
	uint64_t pos, end;
	char *win;
	size_t wlen, wpos;
	uint64_t hash, count;
	llm_buf key;
} mcursor;

/* A merge of runs, yielding each distinct piece once with its summed count. */
typedef struct {
	int fd;
	const runinfo *runs;
	mcursor *cur;
	size_t ncur, window;
	size_t *heap, nheap;
	char *wins;
} merger;

static int mc_fill(const merger *m, mcursor *c)
{
	size_t n = c->end - c->pos < m->window ? (size_t)(c->end - c->pos) : m->window;
	if (!n)
		return llm_fail(LLM_EIO, "temporary file of piece counts: a record runs past its run");
	int rc = llm_pread_all(m->fd, c->win, n, c->pos, COUNTS_FILE);
	c->pos += n;
	c->wlen = n;
	c->wpos = 0;
	return rc;
}

static int mc_read(const merger *m, mcursor *c, void *dst, size_t n)
{
	char *d = dst;
	while (n) {
		if (c->wpos == c->wlen) {
			int rc = mc_fill(m, c);
			if (rc)
				return rc;
		}
		size_t k = c->wlen - c->wpos < n ? c->wlen - c->wpos : n;
		memcpy(d, c->win + c->wpos, k);
		c->wpos += k, d += k, n -= k;
	}
	return LLM_OK;
}

static int mc_varint(const merger *m, mcursor *c, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		unsigned char b;
		int rc = mc_read(m, c, &b, 1);
		if (rc)
			return rc;
		*v |= (uint64_t)(b & 127) << shift;
		if (!(b & 128))
			return LLM_OK;
	}
	return llm_fail(LLM_EIO, "temporary file of piece counts: a bad count");
}

/* The cursor's next record; LLM_EOF at the end of its run. */
static int mc_next(const merger *m, mcursor *c)
{
	if (c->wpos == c->wlen && c->pos == c->end)
		return LLM_EOF;
	unsigned char h[8];
	uint64_t n;
	int rc = mc_read(m, c, h, 8);
	if (!rc)
		rc = mc_varint(m, c, &c->count);
	if (!rc)
		rc = mc_varint(m, c, &n);
	if (rc)
		return rc;
	c->hash = 0;
	for (int i = 0; i < 8; i++)
		c->hash |= (uint64_t)h[i] << (8 * i);
	llm_buf_reset(&c->key);
	llm_buf_grow(&c->key, (size_t)n);
	rc = mc_read(m, c, c->key.p, (size_t)n);
	c->key.len = (size_t)n;
	return rc;
}

static bool mc_less(const mcursor *a, const mcursor *b)
{
	return piece_cmp(a->hash, a->key.p, a->key.len, b->hash, b->key.p, b->key.len) < 0;
}

static void merger_sift(merger *m, size_t i)
{
	size_t *h = m->heap, n = m->nheap;
	for (;;) {
		size_t l = 2 * i + 1, s = i;
		if (l < n && mc_less(&m->cur[h[l]], &m->cur[h[s]]))
			s = l;
		if (l + 1 < n && mc_less(&m->cur[h[l + 1]], &m->cur[h[s]]))
			s = l + 1;
		if (s == i)
			return;
		size_t t = h[i];
		h[i] = h[s];
		h[s] = t;
		i = s;
	}
}

/* Start (again) at the first record of every run. */
static int merger_rewind(merger *m)
{
	m->nheap = 0;
	for (size_t i = 0; i < m->ncur; i++) {
		mcursor *c = &m->cur[i];
		c->pos = m->runs[i].off;
		c->end = m->runs[i].end;
		c->wlen = c->wpos = 0;
		int rc = mc_next(m, c);
		if (rc == LLM_OK)
			m->heap[m->nheap++] = i;
		else if (rc != LLM_EOF)
			return rc;
	}
	for (size_t i = m->nheap / 2; i-- > 0;)
		merger_sift(m, i);
	return LLM_OK;
}

static int merger_open(merger *m, int fd, const runinfo *runs, size_t n, size_t window)
{
	memset(m, 0, sizeof *m);
	m->fd = fd;
	m->runs = runs;
	m->ncur = n;
	m->window = window;
	m->cur = llm_calloc(n ? n : 1, sizeof *m->cur);
	m->heap = llm_malloc((n ? n : 1) * sizeof *m->heap);
	m->wins = llm_malloc(n * window + 1);
	for (size_t i = 0; i < n; i++)
		m->cur[i].win = m->wins + i * window;
	return merger_rewind(m);
}

static void merger_close(merger *m)
{
	for (size_t i = 0; i < m->ncur; i++)
		llm_buf_release(&m->cur[i].key);
	free(m->cur);
	free(m->heap);
	free(m->wins);
}

static size_t merger_memory(const merger *m)
{
	size_t b = m->ncur * (m->window + sizeof *m->cur + sizeof *m->heap);
	for (size_t i = 0; i < m->ncur; i++)
		b += m->cur[i].key.cap;
	return b;
}

/* The next distinct piece (copied to key) with its count summed over the runs; LLM_EOF at
 * the end. */
static int merger_next(merger *m, uint64_t *hash, uint64_t *count, llm_buf *key)
{
	if (!m->nheap)
		return LLM_EOF;
	bool first = true;
	while (m->nheap) {
		mcursor *c = &m->cur[m->heap[0]];
		if (first) {
			*hash = c->hash;
			*count = c->count;
			llm_buf_reset(key);
			llm_buf_add(key, c->key.p, c->key.len);
			first = false;
		} else if (piece_cmp(c->hash, c->key.p, c->key.len, *hash, key->p, key->len) == 0) {
			*count += c->count;
		} else {
			break;
		}
		int rc = mc_next(m, c);
		if (rc == LLM_EOF)
			m->heap[0] = m->heap[--m->nheap];
		else if (rc)
			return rc;
		if (m->nheap)
			merger_sift(m, 0);
	}
	return LLM_OK;
}

/* ---- the trainer ---- */

/* Histogram of pieces by count: exact below HEXACT, 8 buckets per octave above. */
#define HEXACT 4096
#define NBUCKETS (HEXACT + 8 * 52)

typedef struct {
	uint64_t pieces[NBUCKETS], bytes[NBUCKETS], occ[NBUCKETS], text[NBUCKETS];
} histogram;

static size_t hbucket(uint64_t c)
{
	if (c < HEXACT)
		return (size_t)c;
	int lg = 63 - __builtin_clzll(c);
	return HEXACT + (size_t)(lg - 12) * 8 + (size_t)((c >> (lg - 3)) & 7);
}

/* The smallest count in bucket b (b <= NBUCKETS; NBUCKETS: above every count). */
static uint64_t hlow(size_t b)
{
	if (b < HEXACT)
		return b;
	if (b >= NBUCKETS)
		return UINT64_MAX;
	size_t q = b - HEXACT;
	int lg = 12 + (int)(q / 8);
	return (uint64_t)1 << lg | (uint64_t)(q % 8) << (lg - 3);
}

static void hist_add(histogram *h, uint64_t count, size_t len)
{
	size_t b = hbucket(count);
	h->pieces[b]++;
	h->bytes[b] += len;
	h->occ[b] += count;
	h->text[b] += count * len;
}

/* Training memory of the pieces, per piece and per byte besides the pair allowance:
 * bytes + offset + count (n + 16), symbols (4n), symbol count (4). */
#define WORD_FIXED 20
#define WORD_PER_BYTE 5
/* The pairs' memory per byte of the pieces trained on, at least, once they outgrew the
 * budget (see bpe_train.h): all the samples' pieces take 30 at 32k tokens; fewer pieces for
 * as many tokens take more, and then training starts again. */
#define PAIR_ALLOWANCE 40.0

struct llm_bpe_trainer {
	char **patterns;   /* the pre-tokenizer: each pattern splits the pieces of the one before */
	size_t npat;
	llm_pretok **pt;
	llm_pretok_state **st;
	ptable words;      /* counting: piece -> count; then the pieces trained on */
	size_t budget;     /* 0: unlimited */
	size_t table_limit;
	const char *tmpdir;
	int fd;            /* runs, or -1 */
	uint64_t fsize;
	runinfo *runs;
	size_t nruns, cruns;
	size_t src_first;  /* runs [src_first, nruns) hold every piece once counting is over */
	llm_bpe_train_stats stats;
	int failed;        /* a spill failed: no more adds */
	/* the result */
	strmap tokens; /* token bytes -> id */
	uint32_t *merge_l, *merge_r, *merge_to; /* merge i: (l, r) -> to */
	size_t nmerges, cmerges;
	char **specials;
	size_t nspecials;
	bool trained;
	bool exact;                /* no round so far left pieces out */
	/* SuperBPE: the pieces of the second stage's pre-tokenizer, counted by a trainer of
	 * their own, and the vocabulary size at which that stage begins */
	llm_bpe_trainer *super;
	size_t transition;
};

static void note_memory(llm_bpe_trainer *tr, size_t bytes)
{
	if (bytes > tr->stats.peak_memory)
		tr->stats.peak_memory = bytes;
}

int llm_bpe_trainer_new(llm_bpe_trainer **out, const char *pattern)
{
	return llm_bpe_trainer_new_seq(out, &pattern, 1);
}

int llm_bpe_trainer_new_seq(llm_bpe_trainer **out, const char *const *patterns, size_t n)
{
	*out = NULL;
	if (n == 0)
		return llm_fail(LLM_EINVAL, "no pre-tokenizer pattern");
	llm_bpe_trainer *tr = llm_calloc(1, sizeof *tr);
	tr->patterns = llm_calloc(n, sizeof *tr->patterns);
	tr->pt = llm_calloc(n, sizeof *tr->pt);
	tr->st = llm_calloc(n, sizeof *tr->st);
	tr->npat = n;
	tr->fd = -1;
	tr->exact = true;
	pt_init(&tr->words);
	strmap_init(&tr->tokens);
	for (size_t i = 0; i < n; i++) {
		int rc = llm_pretok_new(&tr->pt[i], patterns[i], true);
		if (rc) {
			llm_bpe_trainer_free(tr);
			return rc;
		}
		tr->patterns[i] = llm_strdup(patterns[i]);
		tr->st[i] = llm_pretok_state_new(tr->pt[i]);
	}
	*out = tr;
	return LLM_OK;
}

void llm_bpe_trainer_free(llm_bpe_trainer *tr)
{
	if (!tr)
		return;
	for (size_t i = 0; i < tr->npat; i++) {
		llm_pretok_state_free(tr->st[i]);
		llm_pretok_free(tr->pt[i]);
		free(tr->patterns[i]);
	}
	free(tr->st);
	free(tr->pt);
	free(tr->patterns);
	pt_release(&tr->words);
	if (tr->fd >= 0)
		close(tr->fd);
	free(tr->runs);
	strmap_release(&tr->tokens);
	free(tr->merge_l);
	free(tr->merge_r);
	free(tr->merge_to);
	for (size_t i = 0; i < tr->nspecials; i++)
		free(tr->specials[i]);
	free(tr->specials);
	llm_bpe_trainer_free(tr->super);
	free(tr);
}

void llm_bpe_trainer_set_memory(llm_bpe_trainer *tr, size_t budget, const char *tmpdir)
{
	tr->budget = budget;
	/* A spill needs its write buffer besides the table. */
	tr->table_limit = budget > 2 * WBUF_SIZE ? budget - WBUF_SIZE : budget;
	tr->tmpdir = tmpdir;
}

void llm_bpe_trainer_set_table_memory(llm_bpe_trainer *tr, size_t bytes)
{
	tr->table_limit = bytes;
	if (tr->super)
		tr->super->table_limit = bytes;
}

int llm_bpe_trainer_set_superbpe(llm_bpe_trainer *tr, const char *pattern, size_t transition)
{
	if (tr->super)
		return llm_fail(LLM_EINVAL, "the trainer is already a SuperBPE trainer");
	if (transition < 256)
		return llm_fail(LLM_EINVAL, "SuperBPE transition %zu is below the 256 byte tokens",
		                transition);
	int rc = llm_bpe_trainer_new(&tr->super, pattern ? pattern : LLM_BPE_SUPERBPE_PATTERN);
	if (rc)
		return rc;
	/* Both tables count at once: each takes half of the table's share. */
	if (tr->table_limit > 1)
		tr->table_limit /= 2;
	tr->super->budget = tr->budget;
	tr->super->table_limit = tr->table_limit;
	tr->super->tmpdir = tr->tmpdir;
	tr->transition = transition;
	return LLM_OK;
}

static void add_run(llm_bpe_trainer *tr, uint64_t off, uint64_t end)
{
	if (tr->nruns == tr->cruns) {
		tr->cruns = tr->cruns ? 2 * tr->cruns : 16;
		tr->runs = llm_realloc(tr->runs, tr->cruns * sizeof *tr->runs);
	}
	tr->runs[tr->nruns++] = (runinfo){ off, end };
}

/* Write the table as a run and empty it, keeping its memory for the next one. */
static int spill(llm_bpe_trainer *tr)
{
	ptable *t = &tr->words;
	if (tr->fd < 0 && (tr->fd = llm_tmpfd(tr->tmpdir)) < 0)
		return tr->fd;
	/* The slots hold at least 2n + 1 32-bit entries (load <= 1/2): room for n 64-bit keys. */
	uint64_t *keys = (uint64_t *)(void *)t->slot;
	for (size_t i = 0; i < t->n; i++)
		keys[i] = (llm_hash64(t->bytes + t->off[i], pt_len(t, i), 0) >> 32) << 32 | i;
	sort_keys(keys, t->n, t);
	fwriter w = { tr->fd, tr->fsize, llm_malloc(WBUF_SIZE), 0, LLM_OK };
	note_memory(tr, pt_memory(t) + WBUF_SIZE);
	for (size_t q = 0; q < t->n; q++) {
		size_t i = (uint32_t)keys[q], n = pt_len(t, i);
		const char *s = t->bytes + t->off[i];
		fw_record(&w, llm_hash64(s, n, 0), t->cnt[i], s, n);
	}
	fw_flush(&w);
	free(w.buf);
	if (w.err)
		return w.err;
	add_run(tr, tr->fsize, w.pos);
	tr->fsize = w.pos;
	tr->stats.runs++;
	t->n = 0;
	t->blen = 0;
	memset(t->slot, 0, (t->mask + 1) * sizeof *t->slot);
	/* A piece longer than the limit grew the arena past it: let it grow again from nothing. */
	if (tr->table_limit && pt_memory(t) > tr->table_limit)
		pt_resize(t, t->cap, 0);
	return LLM_OK;
}

/* Count the pieces of text[0..len) split by patterns level.. (every piece of one pattern,
 * match or not, is split by the next, as tokenizers' Sequence of Isolated Splits does). */
static int add_pieces(llm_bpe_trainer *tr, const char *text, size_t len, size_t level)
{
	llm_pretok_state *st = tr->st[level];
	llm_pretok_begin(st, text, len);
	size_t a, z;
	int rc;
	while ((rc = llm_pretok_next(st, &a, &z)) == LLM_OK) {
		if (level + 1 < tr->npat) { /* each level has its own match state */
			if ((rc = add_pieces(tr, text + a, z - a, level + 1)))
				return rc;
			continue;
		}
		while (pt_add(&tr->words, text + a, z - a, 1, tr->table_limit)) {
			int e = spill(tr);
			if (e) /* the table's index is gone: the counts can no longer be trusted */
				return tr->failed = e;
		}
	}
	return rc == LLM_EOF ? LLM_OK : rc;
}

int llm_bpe_trainer_add(llm_bpe_trainer *tr, const char *text, size_t len)
{
	if (tr->trained)
		return llm_fail(LLM_EINVAL, "the trainer has already trained");
	if (tr->failed)
		return llm_fail(tr->failed, "an earlier piece count could not be written");
	int rc = add_pieces(tr, text, len, 0);
	if (rc == LLM_OK && tr->super) {
		rc = add_pieces(tr->super, text, len, 0);
		tr->failed = tr->super->failed;
	}
	note_memory(tr, pt_memory(&tr->words) + (tr->super ? pt_memory(&tr->super->words) : 0));
	return rc;
}

/* What is left of a budget for the pieces once fixed costs are taken (1 byte at least: a
 * budget, not "unlimited"). */
static size_t budget_less(size_t budget, size_t fixed)
{
	return budget > fixed ? budget - fixed : 1;
}

/* The smallest count whose words, with all more frequent ones, fit in budget (0: no limit)
 * at fixed bytes per word and per_unit + allowance per unit (byte or symbol) of the words. */
static uint64_t pick_threshold(const histogram *h, size_t budget, double fixed, double per_unit,
                               double allowance)
{
	if (!budget)
		return 1;
	double acc = 0;
	for (size_t b = NBUCKETS; b-- > 1;) {
		acc += (double)h->pieces[b] * fixed + (double)h->bytes[b] * (per_unit + allowance);
		if (acc > (double)budget)
			return hlow(b + 1);
	}
	return 1;
}

/* The smallest count whose pieces, with all more frequent ones, fit in budget for training
 * (0: no limit). Sets the pruned totals of the stats. */
static uint64_t pick_min_count(llm_bpe_trainer *tr, const histogram *h, size_t budget,
                               double allowance)
{
	uint64_t t = pick_threshold(h, budget, WORD_FIXED, WORD_PER_BYTE, allowance);
	llm_bpe_train_stats *st = &tr->stats;
	st->min_count = t;
	st->pruned_pieces = st->pruned_occurrences = st->pruned_bytes = 0;
	for (size_t b = 1; b < NBUCKETS && hlow(b) < t; b++) {
		st->pruned_pieces += h->pieces[b];
		st->pruned_occurrences += h->occ[b];
		st->pruned_bytes += h->text[b];
	}
	return t;
}

/* Keep only the table's pieces seen at least min_count times, in place, and give back the
 * rest of its memory, growth slack included. */
static void pt_prune(ptable *t, uint64_t min_count)
{
	size_t k = 0, blen = 0;
	for (size_t i = 0; i < t->n && min_count > 1; i++) {
		if (t->cnt[i] < min_count)
			continue;
		size_t n = pt_len(t, i); /* reads off[i + 1], not yet overwritten: k <= i */
		memmove(t->bytes + blen, t->bytes + t->off[i], n);
		t->off[k] = blen;
		t->cnt[k] = t->cnt[i];
		k++;
		blen += n;
	}
	if (min_count > 1) {
		t->n = k;
		t->blen = blen;
	}
	pt_resize(t, t->n, t->blen);
}

static void set_totals(llm_bpe_trainer *tr, const histogram *h)
{
	tr->stats.pieces = tr->stats.occurrences = tr->stats.bytes = 0;
	for (size_t b = 1; b < NBUCKETS; b++) {
		tr->stats.pieces += h->pieces[b];
		tr->stats.occurrences += h->occ[b];
		tr->stats.bytes += h->text[b];
	}
}

static void table_histogram(const ptable *t, histogram *h)
{
	memset(h, 0, sizeof *h);
	for (size_t i = 0; i < t->n; i++)
		hist_add(h, t->cnt[i], pt_len(t, i));
}

/*
 * Write every piece of the table, in table order, as the one run later rounds of training
 * read the pieces from (see train_rounds): unsorted, which only merging runs would mind.
 */
static int dump_table(llm_bpe_trainer *tr)
{
	const ptable *t = &tr->words;
	if (tr->fd < 0 && (tr->fd = llm_tmpfd(tr->tmpdir)) < 0)
		return tr->fd;
	fwriter w = { tr->fd, tr->fsize, llm_malloc(WBUF_SIZE), 0, LLM_OK };
	for (size_t i = 0; i < t->n; i++) {
		const char *s = t->bytes + t->off[i];
		size_t n = pt_len(t, i);
		fw_record(&w, llm_hash64(s, n, 0), t->cnt[i], s, n);
	}
	fw_flush(&w);
	free(w.buf);
	if (w.err)
		return w.err;
	tr->src_first = tr->nruns;
	add_run(tr, tr->fsize, w.pos);
	tr->fsize = w.pos;
	return LLM_OK;
}

/* No runs: the pieces are all in the table; prune it in place, after writing it out for the
 * later rounds when it loses pieces. */
static int gather_table(llm_bpe_trainer *tr, histogram *h, double allowance)
{
	ptable *t = &tr->words;
	free(t->slot);
	t->slot = NULL;
	table_histogram(t, h);
	set_totals(tr, h);
	uint64_t mc = pick_min_count(tr, h, tr->budget ? budget_less(tr->budget, sizeof *h) : 0,
	                             allowance);
	int rc = mc > 1 ? dump_table(tr) : LLM_OK;
	pt_prune(t, mc); /* also gives back the growth slack, which the estimate leaves out */
	return rc;
}

/* Merge the fanout runs from tr->runs[first] into one run at the end of the file. */
static int merge_some_runs(llm_bpe_trainer *tr, size_t first, size_t fanout, size_t window,
                           llm_buf *key)
{
	merger m;
	int rc = merger_open(&m, tr->fd, tr->runs + first, fanout, window);
	if (rc == LLM_OK) {
		fwriter w = { tr->fd, tr->fsize, llm_malloc(WBUF_SIZE), 0, LLM_OK };
		uint64_t hash, count;
		while ((rc = merger_next(&m, &hash, &count, key)) == LLM_OK)
			fw_record(&w, hash, count, key->p, key->len);
		fw_flush(&w);
		free(w.buf);
		note_memory(tr, merger_memory(&m) + WBUF_SIZE + key->cap);
		rc = rc == LLM_EOF ? w.err : rc;
		if (!rc) {
			/* The merged runs lie back to back: give their disk space back. */
			uint64_t from = tr->runs[first].off, to = tr->runs[first + fanout - 1].end;
			(void)fallocate(tr->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			                (off_t)from, (off_t)(to - from));
			add_run(tr, tr->fsize, w.pos);
			tr->fsize = w.pos;
			tr->stats.merge_passes++;
		}
	}
	merger_close(&m);
	return rc;
}

/* The pieces of the merged runs seen at least often enough for the budget, into tr->words:
 * a first pass counts them (the histogram), a second keeps them. */
static int keep_frequent(llm_bpe_trainer *tr, merger *m, histogram *h, llm_buf *key,
                         double allowance)
{
	ptable *t = &tr->words;
	uint64_t hash, count, kept_n = 0, kept_b = 0;
	int rc;
	memset(h, 0, sizeof *h);
	while ((rc = merger_next(m, &hash, &count, key)) == LLM_OK)
		hist_add(h, count, key->len);
	if (rc != LLM_EOF)
		return rc;
	size_t reserve = sizeof *h + merger_memory(m) + key->cap;
	set_totals(tr, h);
	uint64_t mc = pick_min_count(tr, h, tr->budget ? budget_less(tr->budget, reserve) : 0, allowance);
	for (size_t b = 1; b < NBUCKETS; b++)
		if (hlow(b) >= mc) {
			kept_n += h->pieces[b];
			kept_b += h->bytes[b];
		}
	if (kept_n > PT_MAX_PIECES)
		return llm_fail(LLM_EUNSUPPORTED, "more than %zu distinct pieces to train on; "
		                "set a memory limit", PT_MAX_PIECES);
	pt_resize(t, (size_t)kept_n, (size_t)kept_b);
	if ((rc = merger_rewind(m)) != LLM_OK)
		return rc;
	while ((rc = merger_next(m, &hash, &count, key)) == LLM_OK) {
		if (count < mc)
			continue;
		t->off[t->n] = t->blen;
		t->cnt[t->n++] = count;
		memcpy(t->bytes + t->blen, key->p, key->len);
		t->blen += key->len;
	}
	note_memory(tr, pt_memory(t) + reserve);
	return rc == LLM_EOF ? LLM_OK : rc;
}

/* Spill what the table holds, then merge the runs: more runs than the read windows allow
 * are first merged into longer runs, fanout at a time; the rest are read together. */
/* The read windows' share of the budget. */
static size_t window_budget(const llm_bpe_trainer *tr)
{
	return tr->budget ? tr->budget / 8 : (size_t)64 << 20;
}

/* The read window per run for reading n runs at once. */
static size_t run_window(const llm_bpe_trainer *tr, size_t n)
{
	size_t window = window_budget(tr) / n;
	return window > MAX_WINDOW ? MAX_WINDOW : window < MIN_WINDOW ? MIN_WINDOW : window;
}

/* Spill what the table holds and free it, then merge the runs, fanout at a time, into
 * longer ones until the read windows can take them all at once: runs [src_first, nruns). */
static int merge_down(llm_bpe_trainer *tr, llm_buf *key)
{
	int rc = LLM_OK;
	if (tr->words.n && (rc = spill(tr)) != LLM_OK)
		return rc;
	pt_release(&tr->words);
	size_t wbudget = window_budget(tr);
	size_t fanout = wbudget / MIN_WINDOW < 2 ? 2 : wbudget / MIN_WINDOW;
	size_t first = 0;
	for (; !rc && tr->nruns - first > fanout; first += fanout) {
		size_t window = wbudget / fanout > MAX_WINDOW ? MAX_WINDOW : wbudget / fanout;
		rc = merge_some_runs(tr, first, fanout, window, key);
	}
	tr->src_first = first;
	return rc;
}

/* Merge the runs, then keep the pieces seen often enough for the budget. */
static int gather_runs(llm_bpe_trainer *tr, histogram *h, double allowance)
{
	llm_buf key = LLM_BUF_INIT;
	int rc = merge_down(tr, &key);
	if (!rc) {
		size_t nr = tr->nruns - tr->src_first;
		merger m;
		if ((rc = merger_open(&m, tr->fd, tr->runs + tr->src_first, nr, run_window(tr, nr))) == LLM_OK)
			rc = keep_frequent(tr, &m, h, &key, allowance);
		merger_close(&m);
	}
	llm_buf_release(&key);
	return rc;
}

/*
 * From the counted input to the pieces to train on (tr->words without its index): merge
 * the runs when there are any, and prune to the budget. allowance: pair bytes per piece byte.
 */
static int gather(llm_bpe_trainer *tr, double allowance)
{
	histogram *h = llm_malloc(sizeof *h);
	int rc = LLM_OK;
	if (tr->nruns)
		rc = gather_runs(tr, h, allowance);
	else
		rc = gather_table(tr, h, allowance);
	free(h);
	return rc;
}

/* Prune the pieces to train on further, for a larger pair allowance. */
static void regather(llm_bpe_trainer *tr, double allowance)
{
	histogram *h = llm_malloc(sizeof *h);
	llm_bpe_train_stats old = tr->stats;
	table_histogram(&tr->words, h);
	uint64_t mc = pick_min_count(tr, h, budget_less(tr->budget, sizeof *h), allowance);
	pt_prune(&tr->words, mc);
	tr->stats.pruned_pieces += old.pruned_pieces;
	tr->stats.pruned_occurrences += old.pruned_occurrences;
	tr->stats.pruned_bytes += old.pruned_bytes;
	if (tr->stats.min_count < old.min_count)
		tr->stats.min_count = old.min_count;
	free(h);
}

/* ---- training ---- */

typedef struct {
	uint32_t l, r;
	int64_t count;
	uint32_t *words; /* words it (may) occur in; may hold stale entries */
	uint32_t nw, cw;
	uint32_t dirty;  /* merge number when last pushed for an increase */
} pairinfo;

typedef struct {
	int64_t count;
	uint32_t l, r;
} hitem;

/* Bytes malloc adds to each pair's word list (its chunk header and rounding). */
#define LIST_OVERHEAD 16

typedef struct {
	uint32_t *slot;   /* pair index + 1; 0 = empty */
	size_t mask;
	pairinfo *p;
	size_t n, cap;
	hitem *heap;
	size_t hn, hcap;
	uint32_t *sym;    /* the words' symbols: word w's at off[w], nsym[w] of them */
	const uint64_t *off;
	uint32_t *nsym;
	const uint64_t *freq;
	uint32_t merge_no;
	uint32_t *dirty;  /* pairs whose count rose during this merge */
	size_t ndirty, cdirty;
	size_t held;      /* bytes of all the above and of the words */
	size_t limit;     /* 0: none */
	bool over;        /* held would pass limit: stop after this merge */
} trainstate;

/*
 * The capacity after cap for an array of elem-byte items: double, or under a limit that
 * doubling would pass, an eighth more, and stop after this merge. So held passes the limit
 * by at most an eighth of one array, for the rest of one merge.
 */
static size_t grow(trainstate *s, size_t cap, size_t elem, size_t first)
{
	if (!cap)
		return first;
	if (s->limit && s->held + cap * elem > s->limit) {
		s->over = true;
		return cap + cap / 8 + 1;
	}
	return 2 * cap;
}

static uint64_t mixkey(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ULL;
	x ^= x >> 29;
	return x;
}

static pairinfo *pair_get(trainstate *s, uint32_t l, uint32_t r)
{
	uint64_t key = ((uint64_t)l + 1) << 32 | r;
	size_t i = mixkey(key) & s->mask;
	for (; s->slot[i]; i = (i + 1) & s->mask) {
		pairinfo *q = &s->p[s->slot[i] - 1];
		if (q->l == l && q->r == r)
			return q;
	}
	if (s->n == s->cap) {
		size_t cap = grow(s, s->cap, sizeof *s->p, 256);
		s->p = llm_realloc(s->p, cap * sizeof *s->p);
		s->held += (cap - s->cap) * sizeof *s->p;
		s->cap = cap;
	}
	size_t idx = s->n++;
	s->p[idx] = (pairinfo){ l, r, 0, NULL, 0, 0, UINT32_MAX };
	s->slot[i] = (uint32_t)idx + 1;
	if (s->n * 2 > s->mask) {
		size_t cap = (s->mask + 1) * 2;
		if (s->limit && s->held + (s->mask + 1) * sizeof *s->slot > s->limit) {
			/* Fuller slots until this merge ends, but never full. */
			s->over = true;
			if (s->n * 8 < s->mask * 7)
				return &s->p[idx];
		}
		free(s->slot);
		s->slot = llm_calloc(cap, sizeof *s->slot);
		s->held += (cap - (s->mask + 1)) * sizeof *s->slot;
		s->mask = cap - 1;
		for (size_t j = 0; j < s->n; j++) {
			uint64_t k = ((uint64_t)s->p[j].l + 1) << 32 | s->p[j].r;
			size_t q = mixkey(k) & s->mask;
			while (s->slot[q])
				q = (q + 1) & s->mask;
			s->slot[q] = (uint32_t)j + 1;
		}
	}
	return &s->p[idx];
}

/* Max-heap on count; ties: the lower (l, r) first. */
static bool hbefore(const hitem *a, const hitem *b)
{
	if (a->count != b->count)
		return a->count > b->count;
	if (a->l != b->l)
		return a->l < b->l;
	return a->r < b->r;
}

static void hpush(trainstate *s, hitem x)
{
	if (s->hn == s->hcap) {
		size_t cap = grow(s, s->hcap, sizeof *s->heap, 256);
		s->heap = llm_realloc(s->heap, cap * sizeof *s->heap);
		s->held += (cap - s->hcap) * sizeof *s->heap;
		s->hcap = cap;
	}
	size_t i = s->hn++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!hbefore(&x, &s->heap[p]))
			break;
		s->heap[i] = s->heap[p];
		i = p;
	}
	s->heap[i] = x;
}

static hitem hpop(trainstate *s)
{
	hitem top = s->heap[0], x = s->heap[--s->hn];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= s->hn)
			break;
		if (c + 1 < s->hn && hbefore(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (!hbefore(&s->heap[c], &x))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->hn)
		s->heap[i] = x;
	return top;
}

static void add_word(trainstate *s, pairinfo *p, uint32_t w)
{
	if (p->nw && p->words[p->nw - 1] == w)
		return;
	if (p->nw == p->cw) {
		uint32_t cw = p->cw ? p->cw * 2 : 4;
		p->words = llm_realloc(p->words, cw * sizeof *p->words);
		s->held += (cw - p->cw) * sizeof *p->words + (p->cw ? 0 : LIST_OVERHEAD);
		p->cw = cw;
	}
	p->words[p->nw++] = w;
}

static void inc(trainstate *s, uint32_t l, uint32_t r, uint32_t w, int64_t by)
{
	pairinfo *p = pair_get(s, l, r);
	p->count += by;
	add_word(s, p, w);
	if (p->dirty != s->merge_no) {
		p->dirty = s->merge_no;
		if (s->ndirty == s->cdirty) {
			size_t cap = s->cdirty ? s->cdirty * 2 : 1024;
			s->dirty = llm_realloc(s->dirty, cap * sizeof *s->dirty);
			s->held += (cap - s->cdirty) * sizeof *s->dirty;
			s->cdirty = cap;
		}
		s->dirty[s->ndirty++] = (uint32_t)(p - s->p);
	}
}

/* Push the pairs whose count rose, with their final counts. */
static void push_dirty(trainstate *s)
{
	for (size_t i = 0; i < s->ndirty; i++) {
		pairinfo *p = &s->p[s->dirty[i]];
		if (p->count > 0)
			hpush(s, (hitem){ p->count, p->l, p->r });
	}
	s->ndirty = 0;
}

static void dec(trainstate *s, uint32_t l, uint32_t r, int64_t by)
{
	pair_get(s, l, r)->count -= by;
}

static void train_release(trainstate *s)
{
	free(s->dirty);
	for (size_t i = 0; i < s->n; i++)
		free(s->p[i].words);
	free(s->p);
	free(s->slot);
	free(s->heap);
	free(s->sym);
	free(s->nsym);
}

/*
 * The words of one round: symbols back to back (word w's nsym[w] at sym + off[w]) and their
 * counts. The first round borrows off and cnt from the piece table; later rounds own them.
 */
typedef struct {
	uint32_t *sym, *nsym;
	uint64_t *off, *cnt;
	size_t n, nsyms;
	size_t held;  /* the bytes all of it takes (the piece table's, for the first round) */
	bool owned;
} wordset;

static void ws_release(wordset *ws)
{
	free(ws->sym);
	free(ws->nsym);
	if (ws->owned) {
		free(ws->off);
		free(ws->cnt);
	}
	memset(ws, 0, sizeof *ws);
}

/* The first round's words: the bytes of the pieces in tr->words. */
static void ws_from_table(wordset *ws, const ptable *wd)
{
	memset(ws, 0, sizeof *ws);
	ws->n = wd->n;
	ws->nsyms = wd->blen;
	ws->sym = llm_malloc((wd->blen ? wd->blen : 1) * sizeof *ws->sym);
	ws->nsym = llm_malloc((wd->n ? wd->n : 1) * sizeof *ws->nsym);
	ws->off = wd->off;
	ws->cnt = wd->cnt;
	ws->held = pt_memory(wd) + wd->blen * sizeof *ws->sym + wd->n * sizeof *ws->nsym;
	for (size_t i = 0; i < wd->blen; i++)
		ws->sym[i] = (unsigned char)wd->bytes[i];
	for (size_t w = 0; w < wd->n; w++)
		ws->nsym[w] = (uint32_t)pt_len(wd, w);
}

/* Take the words (their symbols become the state's) and count their adjacent pairs. */
static void train_init(trainstate *s, wordset *ws, size_t limit)
{
	memset(s, 0, sizeof *s);
	s->mask = 1023;
	s->slot = llm_calloc(s->mask + 1, sizeof *s->slot);
	s->limit = limit;
	s->sym = ws->sym;
	s->nsym = ws->nsym;
	ws->sym = ws->nsym = NULL;
	s->off = ws->off;
	s->freq = ws->cnt;
	s->held = ws->held + (s->mask + 1) * sizeof *s->slot;
	for (size_t w = 0; w < ws->n && !s->over; w++) {
		const uint32_t *sy = s->sym + s->off[w];
		for (uint32_t i = 0; i + 1 < s->nsym[w]; i++)
			inc(s, sy[i], sy[i + 1], (uint32_t)w, (int64_t)s->freq[w]);
		s->over |= limit && s->held > limit;
	}
	/* Over the limit the state is dropped untrained: its heap would only pass it further. */
	if (!s->over)
		push_dirty(s);
}

/* The most frequent pair, taken off the heap once its top is up to date; NULL when no pair
 * is left or the most frequent is seen fewer than min_freq times. */
static pairinfo *best_pair(trainstate *s, uint64_t min_freq)
{
	while (s->hn) {
		hitem top = hpop(s);
		pairinfo *p = pair_get(s, top.l, top.r);
		if (p->count == top.count)
			return (uint64_t)p->count >= min_freq ? p : NULL;
		/* Out of date: a decrease (increases were pushed when they happened). */
		if (p->count > 0)
			hpush(s, (hitem){ p->count, p->l, p->r });
	}
	return NULL;
}

/* The id of the token a + b: the one it already is, else the next one. Token ids equal
 * their index in tr->tokens: the bytes first, then each new token in turn. */
static uint32_t merged_token(llm_bpe_trainer *tr, uint32_t a, uint32_t b, llm_buf *bytes)
{
	llm_buf_reset(bytes);
	for (int side = 0; side < 2; side++) {
		size_t n;
		const char *t = strmap_key(&tr->tokens, side ? b : a, &n);
		llm_buf_add(bytes, t, n);
	}
	long existing = strmap_find(&tr->tokens, bytes->p, bytes->len);
	if (existing >= 0)
		return (uint32_t)tr->tokens.val[existing];
	size_t k = strmap_get(&tr->tokens, bytes->p, bytes->len);
	tr->tokens.val[k] = k;
	return (uint32_t)k;
}

static void add_merge(llm_bpe_trainer *tr, uint32_t a, uint32_t b, uint32_t to)
{
	if (tr->nmerges == tr->cmerges) {
		tr->cmerges = tr->cmerges ? tr->cmerges * 2 : 1024;
		tr->merge_l = llm_realloc(tr->merge_l, tr->cmerges * sizeof *tr->merge_l);
		tr->merge_r = llm_realloc(tr->merge_r, tr->cmerges * sizeof *tr->merge_r);
		tr->merge_to = llm_realloc(tr->merge_to, tr->cmerges * sizeof *tr->merge_to);
	}
	tr->merge_l[tr->nmerges] = a;
	tr->merge_r[tr->nmerges] = b;
	tr->merge_to[tr->nmerges] = to;
	tr->nmerges++;
}

/* Merge (a, b) into nid in word w, left to right and non-overlapping as encoding applies it,
 * moving the counts of the pairs around each merge. */
static void merge_in_word(trainstate *s, uint32_t w, uint32_t a, uint32_t b, uint32_t nid)
{
	uint32_t *sy = s->sym + s->off[w], n = s->nsym[w], j = 0;
	int64_t f = (int64_t)s->freq[w];
	for (uint32_t i = 0; i < n;) {
		if (i + 1 < n && sy[i] == a && sy[i + 1] == b) {
			if (j > 0) {
				dec(s, sy[j - 1], a, f);
				inc(s, sy[j - 1], nid, w, f);
			}
			dec(s, a, b, f);
			if (i + 2 < n) {
				dec(s, b, sy[i + 2], f);
				inc(s, nid, sy[i + 2], w, f);
			}
			sy[j++] = nid;
			i += 2;
		} else {
			sy[j++] = sy[i++];
		}
	}
	s->nsym[w] = j;
}

/* Apply the merge of pair p = (a, b) into nid to every word it occurs in. The pair's word
 * list is taken first: the counts it moves may move the pairs (p among them). */
static void apply_merge(trainstate *s, pairinfo *p, uint32_t a, uint32_t b, uint32_t nid)
{
	s->merge_no++;
	uint32_t *wl = p->words, nwl = p->nw;
	s->held -= p->cw * sizeof *p->words + (p->cw ? LIST_OVERHEAD : 0);
	p->words = NULL;
	p->nw = p->cw = 0;
	for (uint32_t q = 0; q < nwl; q++)
		merge_in_word(s, wl[q], a, b, nid);
	free(wl);
	push_dirty(s);
}

/* How a round of training ended. */
enum {
	ROUND_DONE,  /* the vocabulary is complete, or no pair is left to merge */
	ROUND_NEXT,  /* pieces were left out and may now matter more than the pairs left: next round */
	ROUND_OVER,  /* the pairs outgrew the budget (after this round's merges, if any) */
};

/*
 * One round: learn merges from the words ws (taken) into tr->tokens and tr->merge_*, until
 * the vocabulary is complete, no pair is seen min_freq times, or the state outgrows limit
 * (0: none). threshold: the words seen fewer times were left out of this round (1: none);
 * once the most frequent pair is seen fewer times than that, a pair of the left-out words
 * may be as frequent, and the round ends (after one merge at least, so that every round
 * makes progress). *pair_bytes: what the pairs took at the end.
 */
static int train_words(llm_bpe_trainer *tr, wordset *ws, size_t vocab_size, uint64_t min_freq,
                       size_t nspecials, size_t limit, uint64_t threshold, size_t *pair_bytes)
{
	trainstate s;
	size_t words_held = ws->held, first = tr->nmerges;
	train_init(&s, ws, limit);
	llm_buf bytes = LLM_BUF_INIT;
	int end = ROUND_DONE;
	pairinfo *p = NULL;
	while (!s.over && tr->tokens.n + nspecials < vocab_size && (p = best_pair(&s, min_freq))) {
		if ((uint64_t)p->count < threshold && tr->nmerges > first) {
			end = ROUND_NEXT;
			break;
		}
		uint32_t a = p->l, b = p->r, nid = merged_token(tr, a, b, &bytes);
		add_merge(tr, a, b, nid);
		apply_merge(&s, p, a, b, nid);
		note_memory(tr, s.held);
		s.over |= limit && s.held > limit;
	}
	note_memory(tr, s.held);
	llm_buf_release(&bytes);
	if (s.n > tr->stats.pairs)
		tr->stats.pairs = s.n;
	*pair_bytes = s.held - words_held;
	bool complete = tr->tokens.n + nspecials >= vocab_size;
	if (s.over && !complete)
		end = ROUND_OVER;
	else if (end == ROUND_DONE && !complete && !p && threshold > 1 && tr->nmerges > first)
		end = ROUND_NEXT; /* the words kept ran out of pairs, the left-out ones may not have */
	train_release(&s);
	return end;
}

/* ---- later rounds: every piece again, encoded with the merges so far ---- */

/* The merges so far by pair, for encoding: open addressing on (l + 1) << 32 | r. */
typedef struct {
	uint64_t *key; /* 0: empty */
	uint32_t *rank;
	size_t mask;
} mergemap;

static void mm_build(mergemap *mm, const llm_bpe_trainer *tr)
{
	size_t slots = 1024;
	while (slots < 2 * tr->nmerges)
		slots *= 2;
	mm->key = llm_calloc(slots, sizeof *mm->key);
	mm->rank = llm_malloc(slots * sizeof *mm->rank);
	mm->mask = slots - 1;
	for (size_t m = 0; m < tr->nmerges; m++) {
		uint64_t k = ((uint64_t)tr->merge_l[m] + 1) << 32 | tr->merge_r[m];
		size_t i = mixkey(k) & mm->mask;
		while (mm->key[i])
			i = (i + 1) & mm->mask;
		mm->key[i] = k;
		mm->rank[i] = (uint32_t)m;
	}
}

static void mm_release(mergemap *mm)
{
	free(mm->key);
	free(mm->rank);
}

static uint32_t mm_rank(const mergemap *mm, uint32_t l, uint32_t r)
{
	uint64_t k = ((uint64_t)l + 1) << 32 | r;
	for (size_t i = mixkey(k) & mm->mask; mm->key[i]; i = (i + 1) & mm->mask)
		if (mm->key[i] == k)
			return mm->rank[i];
	return UINT32_MAX;
}

/* Scratch space of encode_piece: per symbol its neighbours, and a heap of (rank, position). */
typedef struct {
	uint32_t *prev, *next;
	uint64_t *heap;
	size_t cap;
} encoder;

static void enc_release(encoder *e)
{
	free(e->prev);
	free(e->next);
	free(e->heap);
}

static void eheap_push(uint64_t *h, size_t *n, uint64_t x)
{
	size_t i = (*n)++;
	for (; i > 0 && h[(i - 1) / 2] > x; i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = x;
}

static uint64_t eheap_pop(uint64_t *h, size_t *n)
{
	uint64_t top = h[0], x = h[--*n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] < h[c])
			c++;
		if (h[c] >= x)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = x;
	return top;
}

/*
 * The symbols of piece s[0..n) after the merges so far, into sym (n entries): the pair of
 * the lowest rank first, the leftmost of equal ones, as the written tokenizer encodes. The
 * number of symbols. O(n log n): a long piece (a paragraph of Chinese is one SuperBPE piece)
 * must not cost a pass per merge.
 */
static size_t encode_piece(const llm_bpe_trainer *tr, const mergemap *mm, encoder *e,
                           const char *s, size_t n, uint32_t *sym)
{
	if (n > e->cap) {
		e->cap = n + n / 2;
		e->prev = llm_realloc(e->prev, e->cap * sizeof *e->prev);
		e->next = llm_realloc(e->next, e->cap * sizeof *e->next);
		e->heap = llm_realloc(e->heap, e->cap * sizeof *e->heap);
	}
	size_t nh = 0;
	for (size_t i = 0; i < n; i++) {
		sym[i] = (unsigned char)s[i];
		e->prev[i] = (uint32_t)i - 1; /* UINT32_MAX for the first */
		e->next[i] = (uint32_t)(i + 1 < n ? i + 1 : UINT32_MAX);
	}
	for (size_t i = 0; i + 1 < n; i++) {
		uint32_t r = mm_rank(mm, sym[i], sym[i + 1]);
		if (r != UINT32_MAX)
			eheap_push(e->heap, &nh, (uint64_t)r << 32 | i);
	}
	while (nh) {
		uint64_t top = eheap_pop(e->heap, &nh);
		uint32_t r = (uint32_t)(top >> 32), i = (uint32_t)top, j = e->next[i];
		/* Out of date: i was merged away (its next is then itself) or now pairs otherwise. */
		if (j == UINT32_MAX || j == i || sym[i] != tr->merge_l[r] || sym[j] != tr->merge_r[r])
			continue;
		sym[i] = tr->merge_to[r];
		e->next[i] = e->next[j];
		if (e->next[j] != UINT32_MAX)
			e->prev[e->next[j]] = i;
		e->next[j] = j; /* gone */
		uint32_t p = e->prev[i], q = e->next[i], rk;
		if (p != UINT32_MAX && (rk = mm_rank(mm, sym[p], sym[i])) != UINT32_MAX)
			eheap_push(e->heap, &nh, (uint64_t)rk << 32 | p);
		if (q != UINT32_MAX && (rk = mm_rank(mm, sym[i], sym[q])) != UINT32_MAX)
			eheap_push(e->heap, &nh, (uint64_t)rk << 32 | i);
	}
	size_t k = 0;
	for (uint32_t i = n ? 0 : UINT32_MAX; i != UINT32_MAX; i = e->next[i])
		sym[k++] = sym[i];
	return k;
}

/* encode_piece into *sym, grown to the piece's length. */
static size_t encode_len(const llm_bpe_trainer *tr, const mergemap *mm, encoder *e, const char *s,
                         size_t n, uint32_t **sym, size_t *csym)
{
	if (n > *csym) {
		*csym = n + n / 2;
		*sym = llm_realloc(*sym, *csym * sizeof **sym);
	}
	return encode_piece(tr, mm, e, s, n, *sym);
}

/* Training memory of a later round's words besides the pair allowance: offset + count +
 * symbol count (20) per word, and a 32-bit id per symbol. */
#define LWORD_FIXED 20
#define LWORD_PER_SYM 4

/* Whether a word seen count times is in the sample for threshold t (see ws_from_runs): with
 * probability count / t, by its hash, so the same piece is kept or not whatever the order,
 * and salted by the round: the pieces a round sampled are mostly merged whole by its end,
 * and the next must draw others, not the same ones again. */
static bool sampled(uint64_t hash, uint64_t salt, uint64_t count, uint64_t t)
{
	if (count >= t)
		return true;
	uint64_t x = mixkey(hash ^ mixkey(salt + 0x9e3779b97f4a7c15ULL));
	return (double)(x >> 11) * 0x1p-53 < (double)count / (double)t;
}

/* The expected training memory of the sample for threshold t. */
static double sample_memory(const histogram *h, uint64_t t, double per_sym)
{
	double acc = 0;
	for (size_t b = 1; b < NBUCKETS; b++) {
		uint64_t c = hlow(b);
		double share = c >= t ? 1 : (double)c / (double)t;
		acc += share * ((double)h->pieces[b] * LWORD_FIXED + (double)h->bytes[b] * per_sym);
	}
	return acc;
}

/* The smallest threshold whose sample is expected to fit in budget. */
static uint64_t sample_threshold(const histogram *h, size_t budget, double allowance)
{
	double per_sym = LWORD_PER_SYM + allowance;
	uint64_t lo = 1, hi = 1;
	while (sample_memory(h, hi, per_sym) > (double)budget && hi < ((uint64_t)1 << 62))
		hi *= 2;
	while (lo < hi) { /* the memory only falls as the threshold rises */
		uint64_t mid = lo + (hi - lo) / 2;
		if (sample_memory(h, mid, per_sym) > (double)budget)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * A later round's words: every piece of src on disk (runs [src_first, nruns)), encoded with the
 * merges so far; those left with one symbol have no pairs and are dropped. Of the others, all
 * those seen at least T times are kept, and a sample of the rarer ones: a word seen c < T
 * times with probability c / T, counted T times, so that every pair's count stays right on
 * average. Keeping only the frequent words would leave out what many rare ones share (a
 * CJK run is mostly a piece of its own, yet its character pairs are frequent). T is the
 * smallest threshold whose sample is expected to fit in the budget with the pair allowance
 * per symbol. Two passes: the first counts (the histogram), the second keeps.
 */
static int ws_from_runs(llm_bpe_trainer *tr, const llm_bpe_trainer *src, wordset *ws,
                        double allowance, uint64_t *threshold)
{
	memset(ws, 0, sizeof *ws);
	ws->owned = true;
	*threshold = 1;
	size_t nr = src->nruns - src->src_first, window = run_window(tr, nr);
	mergemap mm;
	mm_build(&mm, tr);
	histogram *h = llm_malloc(sizeof *h);
	memset(h, 0, sizeof *h);
	llm_buf key = LLM_BUF_INIT;
	uint32_t *sym = NULL;
	size_t csym = 0;
	encoder enc = { NULL, NULL, NULL, 0 };
	merger m;
	int rc = merger_open(&m, src->fd, src->runs + src->src_first, nr, window);
	uint64_t hash, count;
	for (int pass = 0; pass < 2 && rc == LLM_OK; pass++) {
		if (pass == 1) {
			size_t reserve = sizeof *h + merger_memory(&m) + key.cap + csym * sizeof *sym;
			*threshold = tr->budget ? sample_threshold(h, budget_less(tr->budget, reserve),
			                                           allowance) : 1;
			/* The sizes of the sample, counted exactly: a third pass would cost more. */
			ws->n = ws->nsyms = 0;
			if ((rc = merger_rewind(&m)) != LLM_OK)
				break;
			while ((rc = merger_next(&m, &hash, &count, &key)) == LLM_OK) {
				if (!sampled(hash, tr->nmerges, count, *threshold))
					continue;
				size_t n = encode_len(tr, &mm, &enc, key.p, key.len, &sym, &csym);
				if (n >= 2) {
					ws->n++;
					ws->nsyms += n;
				}
			}
			if (rc != LLM_EOF)
				break;
			if (ws->n > PT_MAX_PIECES) {
				rc = llm_fail(LLM_EUNSUPPORTED, "more than %zu distinct pieces to train on",
				              PT_MAX_PIECES);
				break;
			}
			ws->sym = llm_malloc((ws->nsyms ? ws->nsyms : 1) * sizeof *ws->sym);
			ws->nsym = llm_malloc((ws->n ? ws->n : 1) * sizeof *ws->nsym);
			ws->off = llm_malloc((ws->n ? ws->n : 1) * sizeof *ws->off);
			ws->cnt = llm_malloc((ws->n ? ws->n : 1) * sizeof *ws->cnt);
			ws->held = ws->nsyms * sizeof *ws->sym + ws->n * LWORD_FIXED;
			note_memory(tr, ws->held + reserve);
			ws->n = ws->nsyms = 0;
			if ((rc = merger_rewind(&m)) != LLM_OK)
				break;
		}
		while ((rc = merger_next(&m, &hash, &count, &key)) == LLM_OK) {
			if (pass == 1 && !sampled(hash, tr->nmerges, count, *threshold))
				continue;
			size_t n = encode_len(tr, &mm, &enc, key.p, key.len, &sym, &csym);
			if (n < 2)
				continue;
			if (pass == 0) {
				hist_add(h, count, n);
				continue;
			}
			ws->off[ws->n] = ws->nsyms;
			ws->cnt[ws->n] = count > *threshold ? count : *threshold;
			ws->nsym[ws->n++] = (uint32_t)n;
			memcpy(ws->sym + ws->nsyms, sym, n * sizeof *sym);
			ws->nsyms += n;
		}
		if (rc == LLM_EOF)
			rc = LLM_OK;
	}
	merger_close(&m);
	free(sym);
	enc_release(&enc);
	llm_buf_release(&key);
	free(h);
	mm_release(&mm);
	if (rc)
		ws_release(ws);
	return rc;
}

/* The second stage's pieces, all on disk (and none in memory) before the first stage trains:
 * the runs merged down, or the table written out as one run. */
static int super_to_disk(llm_bpe_trainer *tr)
{
	llm_bpe_trainer *sp = tr->super;
	int rc;
	if (sp->nruns == 0) {
		free(sp->words.slot);
		sp->words.slot = NULL;
		rc = dump_table(sp);
		pt_release(&sp->words);
	} else {
		llm_buf key = LLM_BUF_INIT;
		rc = merge_down(sp, &key);
		llm_buf_release(&key);
	}
	tr->stats.runs += sp->stats.runs;
	tr->stats.merge_passes += sp->stats.merge_passes;
	note_memory(tr, sp->stats.peak_memory);
	return rc;
}

/* The pair allowance after a round whose pairs outgrew it: at least double it, and more if
 * they took more per unit (byte or symbol) than it allowed. */
static double larger_allowance(double allowance, size_t pair_bytes, size_t units)
{
	double used = units ? (double)pair_bytes / (double)units : 0;
	allowance = 2 * (used > allowance ? used : allowance);
	return allowance < PAIR_ALLOWANCE ? PAIR_ALLOWANCE : allowance;
}

/* After a round: the leading merges still those of a run without a budget. */
static void note_exact(llm_bpe_trainer *tr, uint64_t threshold)
{
	tr->exact = tr->exact && threshold <= 1;
	if (tr->exact)
		tr->stats.exact_merges = tr->nmerges;
}

/*
 * Rounds on the pieces of src on disk, each encoded with the merges so far, until the
 * vocabulary has vocab_size tokens (with nspecials to come) or no pair is left. A round that
 * outgrew the budget before its first merge is tried again with a larger pair allowance.
 */
static int train_from_disk(llm_bpe_trainer *tr, const llm_bpe_trainer *src, size_t vocab_size,
                           uint64_t min_freq, size_t nspecials, double allowance)
{
	for (;;) {
		wordset ws;
		uint64_t threshold;
		int rc = ws_from_runs(tr, src, &ws, allowance, &threshold);
		if (rc)
			return rc;
		if (!ws.n) {
			ws_release(&ws);
			return LLM_OK; /* no piece has a pair left, or none fits */
		}
		size_t before = tr->nmerges, units = ws.nsyms, pair_bytes;
		int end = train_words(tr, &ws, vocab_size, min_freq, nspecials, tr->budget, threshold,
		                      &pair_bytes);
		ws_release(&ws);
		tr->stats.rounds++;
		note_exact(tr, threshold);
		if (end == ROUND_DONE)
			return LLM_OK;
		if (end == ROUND_OVER) {
			allowance = larger_allowance(allowance, pair_bytes, units);
			tr->stats.retrains += tr->nmerges == before;
		}
	}
}

/*
 * Train round after round within the budget (see bpe_train.h). The first round trains on
 * the pieces gather kept, and while it outgrows the budget before its first merge, again on
 * fewer of them. When it ends early, every piece is read again from disk for the later
 * rounds (train_from_disk). The vocabulary stops at vocab_size tokens (with nspecials).
 */
static int train_rounds(llm_bpe_trainer *tr, size_t vocab_size, uint64_t min_freq,
                        size_t nspecials)
{
	wordset ws;
	ws_from_table(&ws, &tr->words);
	uint64_t threshold = tr->stats.min_count;
	double allowance = 0;
	int rc, end;
	for (;;) {
		size_t units = ws.nsyms, pair_bytes;
		end = train_words(tr, &ws, vocab_size, min_freq, nspecials, tr->budget, threshold,
		                  &pair_bytes);
		ws_release(&ws);
		note_exact(tr, threshold);
		if (end == ROUND_OVER)
			allowance = larger_allowance(allowance, pair_bytes, units);
		if (end != ROUND_OVER || tr->nmerges)
			break;
		/* The first round again, on fewer of the pieces in memory; the others stay on
		 * disk for the later rounds. */
		tr->stats.retrains++;
		if (tr->nruns == 0 && (rc = dump_table(tr)) != LLM_OK)
			return rc;
		regather(tr, allowance);
		threshold = tr->stats.min_count;
		ws_from_table(&ws, &tr->words);
	}
	tr->stats.rounds = 1;
	tr->stats.first_merges = tr->nmerges;
	if (end == ROUND_DONE)
		return LLM_OK;
	/* Every piece was in memory, none on disk: write them out for the next round. */
	if (tr->nruns == 0 && (rc = dump_table(tr)) != LLM_OK)
		return rc;
	pt_release(&tr->words);
	return train_from_disk(tr, tr, vocab_size, min_freq, nspecials, allowance);
}

int llm_bpe_trainer_train(llm_bpe_trainer *tr, size_t vocab_size, uint64_t min_freq,
                          const char *const *specials, size_t nspecials)
{
	if (tr->trained)
		return llm_fail(LLM_EINVAL, "the trainer has already trained");
	if (vocab_size < 256 + nspecials)
		return llm_fail(LLM_EINVAL, "vocabulary size %zu is below 256 bytes + %zu special tokens",
		                vocab_size, nspecials);
	for (size_t i = 0; i < nspecials; i++) {
		if (!*specials[i])
			return llm_fail(LLM_EINVAL, "empty special token");
		for (size_t j = 0; j < i; j++)
			if (strcmp(specials[i], specials[j]) == 0)
				return llm_fail(LLM_EINVAL, "special token '%s' given twice", specials[i]);
	}
	if (min_freq < 1)
		min_freq = 1;
	if (tr->failed)
		return llm_fail(tr->failed, "an earlier piece count could not be written");
	tr->trained = true;
	/* The first round keeps every piece whose words fit and lets the pairs take the rest: a
	 * budget that the unlimited run fits in changes nothing. Only when the pairs outgrow it
	 * are pieces left out, for an allowance measured on that round. */
	for (int c = 0; c < 256; c++) {
		char ch = (char)c;
		size_t k = strmap_get(&tr->tokens, &ch, 1);
		tr->tokens.val[k] = (uint64_t)c;
	}
	int rc = tr->super ? super_to_disk(tr) : LLM_OK;
	if (rc == LLM_OK)
		rc = gather(tr, 0);
	if (rc == LLM_OK && tr->super) {
		size_t t = tr->transition < vocab_size - nspecials ? tr->transition : vocab_size - nspecials;
		rc = train_rounds(tr, t, min_freq, 0);
		pt_release(&tr->words);
		tr->stats.superbpe_from = tr->nmerges;
		if (rc == LLM_OK)
			rc = train_from_disk(tr, tr->super, vocab_size, min_freq, nspecials, 0);
	} else if (rc == LLM_OK) {
		rc = train_rounds(tr, vocab_size, min_freq, nspecials);
	}
	if (tr->fd >= 0) {
		close(tr->fd);
		tr->fd = -1;
	}
	if (rc)
		return rc;
	pt_release(&tr->words);
	tr->specials = llm_malloc((nspecials + 1) * sizeof *tr->specials);
	for (size_t i = 0; i < nspecials; i++)
		tr->specials[i] = llm_strdup(specials[i]);
	tr->nspecials = nspecials;
	return LLM_OK;
}

void llm_bpe_trainer_stats(const llm_bpe_trainer *tr, llm_bpe_train_stats *st)
{
	*st = tr->stats;
}

size_t llm_bpe_trainer_vocab_size(const llm_bpe_trainer *tr)
{
	return tr->tokens.n + tr->nspecials;
}

/* A token's bytes in GPT-2's byte-level characters, as a JSON string. */
static void put_bytelevel(llm_buf *out, const char *s, size_t n, llm_buf *tmp)
{
	llm_buf_reset(tmp);
	for (size_t i = 0; i < n; i++) {
		char u[4];
		size_t k = llm_utf8_encode(llm_bpe_byte_to_cp((unsigned char)s[i]), u);
		llm_buf_add(tmp, u, k);
	}
	llm_json_put_str(out, tmp->p, tmp->len);
}

void llm_bpe_trainer_write_hf(const llm_bpe_trainer *tr, llm_buf *out)
{
	llm_buf tmp = LLM_BUF_INIT;
	size_t ntok = tr->tokens.n;
	llm_buf_adds(out, "{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n"
	                  "  \"added_tokens\": [");
	for (size_t i = 0; i < tr->nspecials; i++) {
		llm_buf_addf(out, "%s\n    {\"id\": %zu, \"content\": ", i ? "," : "", ntok + i);
		llm_json_put_str(out, tr->specials[i], strlen(tr->specials[i]));
		llm_buf_adds(out, ", \"single_word\": false, \"lstrip\": false, \"rstrip\": false, "
		                  "\"normalized\": false, \"special\": true}");
	}
	llm_buf_adds(out, "\n  ],\n  \"normalizer\": null,\n  \"pre_tokenizer\": ");
	const llm_bpe_trainer *pt = tr->super ? tr->super : tr; /* whose pre-tokenizer encodes */
	if (pt->npat == 1 && strcmp(pt->patterns[0], llm_pretok_named("gpt2")) == 0) {
		llm_buf_adds(out, "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, "
		                  "\"trim_offsets\": true, \"use_regex\": true}");
	} else {
		llm_buf_adds(out, "{\"type\": \"Sequence\", \"pretokenizers\": [");
		for (size_t i = 0; i < pt->npat; i++) {
			llm_buf_adds(out, "{\"type\": \"Split\", \"pattern\": {\"Regex\": ");
			llm_json_put_str(out, pt->patterns[i], strlen(pt->patterns[i]));
			llm_buf_adds(out, "}, \"behavior\": \"Isolated\", \"invert\": false}, ");
		}
		llm_buf_adds(out, "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, "
		                  "\"trim_offsets\": true, \"use_regex\": false}]}");
	}
	llm_buf_adds(out, ",\n  \"post_processor\": null,\n  \"decoder\": {\"type\": \"ByteLevel\", "
	                  "\"add_prefix_space\": true, \"trim_offsets\": true, \"use_regex\": true},\n"
	                  "  \"model\": {\n    \"type\": \"BPE\",\n    \"dropout\": null,\n"
	                  "    \"unk_token\": null,\n    \"continuing_subword_prefix\": null,\n"
	                  "    \"end_of_word_suffix\": null,\n    \"fuse_unk\": false,\n"
	                  "    \"byte_fallback\": false,\n    \"ignore_merges\": false,\n"
	                  "    \"vocab\": {");
	for (size_t i = 0; i < ntok; i++) {
		size_t n;
		const char *s = strmap_key(&tr->tokens, i, &n);
		llm_buf_adds(out, i ? ",\n      " : "\n      ");
		put_bytelevel(out, s, n, &tmp);
		llm_buf_addf(out, ": %llu", (unsigned long long)tr->tokens.val[i]);
	}
	llm_buf_adds(out, "\n    },\n    \"merges\": [");
	llm_buf pair = LLM_BUF_INIT;
	for (size_t m = 0; m < tr->nmerges; m++) {
		llm_buf_reset(&pair);
		for (int side = 0; side < 2; side++) {
			uint32_t id = side ? tr->merge_r[m] : tr->merge_l[m];
			size_t n;
			const char *s = strmap_key(&tr->tokens, id, &n);
			if (side)
				llm_buf_addc(&pair, ' ');
			for (size_t i = 0; i < n; i++) {
				char u[4];
				size_t k = llm_utf8_encode(llm_bpe_byte_to_cp((unsigned char)s[i]), u);
				llm_buf_add(&pair, u, k);
			}
		}
		llm_buf_adds(out, m ? ",\n      " : "\n      ");
		llm_json_put_str(out, pair.p, pair.len);
	}
	llm_buf_adds(out, "\n    ]\n  }\n}\n");
	llm_buf_release(&pair);
	llm_buf_release(&tmp);
}

void llm_bpe_trainer_write_tiktoken(const llm_bpe_trainer *tr, llm_buf *out)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	for (size_t i = 0; i < tr->tokens.n; i++) {
		size_t n;
		const unsigned char *s = (const unsigned char *)strmap_key(&tr->tokens, i, &n);
		for (size_t k = 0; k < n; k += 3) {
			uint32_t x = (uint32_t)s[k] << 16 | (k + 1 < n ? (uint32_t)s[k + 1] << 8 : 0) |
			             (k + 2 < n ? s[k + 2] : 0);
			char q[4] = { b64[x >> 18], b64[(x >> 12) & 63], k + 1 < n ? b64[(x >> 6) & 63] : '=',
				      k + 2 < n ? b64[x & 63] : '=' };
			llm_buf_add(out, q, 4);
		}
		llm_buf_addf(out, " %llu\n", (unsigned long long)tr->tokens.val[i]);
	}
}
