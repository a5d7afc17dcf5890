/*
 * substr.c — exact substring dedup with per-shard suffix arrays (see substr.h).
 *
 * Why prefixes are enough: two windows are equal exactly when their suffixes share the first
 * min_len bytes, and suffixes sorted by those bytes put all equal windows next to each other.
 * Each shard's suffix array (sorted by whole suffixes of the shard) is sorted by those
 * prefixes too, because every kept suffix has min_len bytes inside its document and hence
 * inside its shard.
 *
 * Why an LCP array: comparing each suffix with the head of its run in suffix-array order reads
 * the text at random places, and once the text outgrows the caches nearly every comparison is
 * a miss (at 400 MB, 94% of the time went there). The permuted LCP (Kärkkäinen, Manzini and
 * Puglisi 2009, "Permuted longest-common-prefix array") is computed in text order instead: the
 * suffix at p+1 shares at least one byte less with its predecessor than the one at p does, so
 * each comparison resumes where the last stopped, and both sides move forward through the
 * text. Capped at min_len that bound still holds, and the work is O(shard) byte comparisons.
 *
 * Why shards merged by their LCPs: one suffix array of everything costs 5 bytes per byte; a
 * shard of a quarter of the text costs 1.25. Each shard gives its distinct windows in sorted
 * order, each with its earliest position, the LCP with the one before and its first 8 bytes;
 * a binary tree of merges (earlier shards on the left) finds the windows that an earlier shard
 * holds too. A merge compares two heads only when both share the same number of bytes with
 * the last window it gave (when one shares more, that one is smaller: Ng and Kakehi's LCP
 * merge), and then from that number on, from the stored 8 bytes first: the text is read only
 * past them.
 */
#include "substr.h"

#include <divsufsort.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/err.h"
#include "core/io.h"

#define MIN_SHARD 256u
#define MAX_SHARD ((size_t)INT32_MAX)
#define AUTO_SHARD ((size_t)16 << 20) /* the least shard a large budget gives */
#define AUTO_PARTS 4                  /* ... else a quarter of the text */
#define WRITE_BUF ((size_t)1 << 20)   /* pass 1's text buffer */
#define READ_ENTRIES 16384            /* suffix array entries read at once: 64 KiB */
#define READ_REPS 4096                /* windows read at once per shard in the merge: 64 KiB */
#define KEY_BYTES 8
#define PREFETCH 32 /* random accesses issued this many entries ahead: misses overlap */
#define LEAF_AHEAD 8
#define LCP_BITS 21                   /* min_len <= 1 << 20 (the tool's bound) */
#define MAX_TEXT ((uint64_t)1 << (64 - LCP_BITS))

typedef struct {
	uint64_t base, len;   /* the shard's text */
	uint64_t doc;         /* its first document */
	uint64_t off, count;  /* its distinct windows: record offset in the window file, number */
} shard;

/* A distinct window of a shard, or of the merge of several: its first KEY_BYTES bytes (big
 * endian, zeros past min_len), and its earliest position with the LCP, capped at min_len,
 * with the window before it in sorted order (0 for the first). 16 bytes on disk. */
typedef struct {
	uint64_t key, pos_lcp; /* pos << LCP_BITS | lcp */
} rep;

struct llm_substr {
	size_t min_len, cap;
	char *tmpdir;
	int err;
	/* pass 1 */
	int textfd, safd, repfd;
	uint64_t bytes, reps, sa_disk;
	unsigned char *buf;   /* pass 1: text not yet written; finish: the current shard */
	size_t held;
	uint64_t *starts;     /* per document, its text offset; count+1 after finish */
	uint64_t ndocs, dcap;
	shard *shards;
	size_t nshards;
	size_t peak;
	/* after finish */
	uint64_t *dup;        /* bit p: the window at p is a duplicate */
	uint64_t next, removed;
	uint64_t *spans;
	size_t scap2;
};

static void fail(llm_substr *s, int rc)
{
	if (rc && !s->err)
		s->err = rc;
}

llm_substr *llm_substr_new(size_t min_len, size_t budget, const char *tmpdir)
{
	llm_substr *s = llm_calloc(1, sizeof *s);
	s->min_len = min_len ? min_len : 1;
	if (s->min_len > ((size_t)1 << (LCP_BITS - 1)))
		s->min_len = (size_t)1 << (LCP_BITS - 1);
	size_t cap = budget / 5;
	s->cap = cap < MIN_SHARD ? MIN_SHARD : cap > MAX_SHARD ? MAX_SHARD : cap;
	s->tmpdir = tmpdir ? llm_strdup(tmpdir) : NULL;
	s->textfd = s->safd = s->repfd = -1;
	return s;
}

void llm_substr_free(llm_substr *s)
{
	if (!s)
		return;
	if (s->textfd >= 0)
		close(s->textfd);
	if (s->safd >= 0)
		close(s->safd);
	if (s->repfd >= 0)
		close(s->repfd);
	free(s->tmpdir);
	free(s->buf);
	free(s->starts);
	free(s->shards);
	free(s->dup);
	free(s->spans);
	free(s);
}

/*
 * The arrays read and written at random (the shard's text and suffix array, the duplicate
 * bits, the whole text during the merge) in transparent huge pages where the system allows:
 * with 4 KiB pages nearly every random access is also a TLB miss.
 */
#define HUGE_PAGE ((size_t)2 << 20)
static void *huge_alloc(size_t n, int zero)
{
	size_t len = (n + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
	if (!len)
		len = HUGE_PAGE;
	void *p = aligned_alloc(HUGE_PAGE, len);
	if (!p)
		return zero ? llm_calloc(1, n ? n : 1) : llm_malloc(n ? n : 1);
#ifdef MADV_HUGEPAGE
	madvise(p, len, MADV_HUGEPAGE); /* advice: without it the pages are small, not wrong */
#endif
	if (zero)
		memset(p, 0, n);
	return p;
}

static void track(llm_substr *s, size_t now)
{
	if (now > s->peak)
		s->peak = now;
}

static void flush_text(llm_substr *s)
{
	if (s->held && !s->err)
		fail(s, llm_pwrite_all(s->textfd, s->buf, s->held, s->bytes - s->held,
		                       "temporary text file"));
	s->held = 0;
}

int llm_substr_add(llm_substr *s, const char *text, size_t n)
{
	if (s->err)
		return s->err;
	if (s->textfd < 0 && (s->textfd = llm_tmpfd(s->tmpdir)) < 0) {
		fail(s, s->textfd);
		return s->err;
	}
	if (n > MAX_SHARD) {
		fail(s, llm_fail(LLM_EUNSUPPORTED, "a document of %zu bytes is longer than a suffix "
		                 "array shard can be (2 GiB)", n));
		return s->err;
	}
	if (!s->buf)
		s->buf = llm_malloc(WRITE_BUF);
	if (s->ndocs == s->dcap) {
		s->dcap = s->dcap ? 2 * s->dcap : 4096;
		s->starts = llm_realloc(s->starts, (s->dcap + 1) * sizeof *s->starts);
	}
	s->starts[s->ndocs++] = s->bytes;
	if (s->held + n > WRITE_BUF)
		flush_text(s);
	s->bytes += n;
	if (n > WRITE_BUF)
		fail(s, llm_pwrite_all(s->textfd, text, n, s->bytes - n, "temporary text file"));
	else if (n) {
		memcpy(s->buf + s->held, text, n);
		s->held += n;
	}
	return s->err;
}

/* ---- one shard: suffix array, permuted LCP, distinct windows ---- */

static void mark(uint64_t *dup, uint64_t p) { dup[p / 64] |= 1ull << (p % 64); }
static void unmark(uint64_t *dup, uint64_t p) { dup[p / 64] &= ~(1ull << (p % 64)); }

/* Reads the shard's suffix array back from safd, READ_ENTRIES at a time. */
typedef struct {
	llm_substr *s;
	int32_t *chunk;
	size_t len, done, have, at;
	const unsigned char *ahead; /* the array indexed by the entries, fetched PREFETCH */
	size_t stride;              /* entries early; its element size */
	const unsigned char *text; /* and the text, when not NULL */
} sa_stream;

static int sa_next(sa_stream *r, int32_t *v)
{
	if (r->at == r->have) {
		if (r->done == r->len || r->s->err)
			return 0;
		size_t k = r->len - r->done < READ_ENTRIES ? r->len - r->done : READ_ENTRIES;
		fail(r->s, llm_pread_all(r->s->safd, r->chunk, k * 4, (uint64_t)r->done * 4,
		                         "temporary suffix array"));
		if (r->s->err)
			return 0;
		r->done += k;
		r->have = k;
		r->at = 0;
	}
	if (r->at + PREFETCH < r->have) {
		__builtin_prefetch(r->ahead + (size_t)r->chunk[r->at + PREFETCH] * r->stride);
		if (r->text)
			__builtin_prefetch(r->text + r->chunk[r->at + PREFETCH]);
	}
	*v = r->chunk[r->at++];
	return 1;
}

static void sa_rewind(sa_stream *r)
{
	r->done = r->have = r->at = 0;
}

/* Appends the distinct windows of a shard to the window file, through a buffer. */
typedef struct {
	llm_substr *s;
	rep *buf;
	size_t n;
	int on;     /* only when there are shards to merge */
} rep_out;

static void rep_flush(rep_out *o)
{
	if (o->n && !o->s->err)
		fail(o->s, llm_pwrite_all(o->s->repfd, o->buf, o->n * sizeof *o->buf,
		                          o->s->reps * sizeof *o->buf, "temporary window file"));
	o->s->reps += o->n;
	o->n = 0;
}

static void rep_put(rep_out *o, const unsigned char *t, size_t p, uint64_t base, uint32_t lcp)
{
	if (!o->on)
		return;
	uint64_t key = 0;
	size_t kl = o->s->min_len < KEY_BYTES ? o->s->min_len : KEY_BYTES;
	for (size_t i = 0; i < KEY_BYTES; i++)
		key = key << 8 | (i < kl ? t[p + i] : 0);
	o->buf[o->n++] = (rep){ key, (base + p) << LCP_BITS | lcp };
	if (o->n == READ_REPS)
		rep_flush(o);
}

/*
 * The shard's suffix array goes to safd, so that its memory can hold the permuted LCP (Phi,
 * then PLCP in place) while the array is streamed back twice: once to build Phi, once to
 * walk the suffixes in order. Kept suffixes (window inside the document) with an LCP of
 * min_len with the kept one before them form a run of equal windows; all its members but the
 * earliest are duplicates, and the earliest is the shard's representative of the window.
 */
static void sort_shard(llm_substr *s, shard *sh, rep_out *o)
{
	size_t len = (size_t)sh->len;
	uint64_t base = sh->base, L = s->min_len;
	unsigned char *t = s->buf;
	fail(s, llm_pread_all(s->textfd, t, len, base, "temporary text file"));
	int32_t *a = huge_alloc(len * sizeof *a, 0);
	size_t words = len / 64 + 1;
	track(s, len + len * sizeof *a + words * 8 + (size_t)(s->bytes / 8) +
	         READ_ENTRIES * 4 + READ_REPS * sizeof(rep) + (size_t)s->dcap * 8);
	if (s->err || divsufsort(t, a, (int32_t)len) != 0) {
		free(a);
		fail(s, llm_fail(LLM_ENOMEM, "suffix array of %zu bytes: libdivsufsort failed", len));
		return;
	}
	fail(s, llm_pwrite_all(s->safd, a, len * 4, 0, "temporary suffix array"));
	if ((uint64_t)len * 4 > s->sa_disk)
		s->sa_disk = (uint64_t)len * 4;
	/* Which positions start a window that fits in its document. */
	uint64_t *ok = llm_calloc(words, 8);
	for (uint64_t d = sh->doc; d < s->ndocs && s->starts[d] < base + len; d++) {
		uint64_t da = s->starts[d] - base, de = s->starts[d + 1] - base;
		for (uint64_t p = da; p + L <= de; p++)
			ok[p / 64] |= 1ull << (p % 64);
	}
	sa_stream r = { .s = s, .chunk = llm_malloc(READ_ENTRIES * 4), .len = len,
	                 .ahead = (const unsigned char *)a, .stride = sizeof *a };
	int32_t v, prev = -1;
	while (sa_next(&r, &v)) {
		a[v] = prev;
		prev = v;
	}
	/* PLCP[p] >= PLCP[p-1] - 1: resume at l - 1. a[p] is Phi[p], then PLCP[p]. */
	size_t l = 0;
	for (size_t p = 0; p < len && !s->err; p++) {
		if (a[p] < 0) {
			a[p] = 0;
			l = 0;
			continue;
		}
		if (p + PREFETCH < len && a[p + PREFETCH] >= 0)
			__builtin_prefetch(t + a[p + PREFETCH]);
		size_t q = (size_t)a[p], lim = len - (p > q ? p : q);
		if (lim > L)
			lim = L;
		while (l < lim && t[p + l] == t[q + l])
			l++;
		a[p] = (int32_t)l;
		if (l)
			l--;
	}
	/* With min_len < 256 a byte holds each LCP: the walk below reads them in suffix order,
	 * at random, from a quarter of the memory (byte p is written after int p is read). */
	int narrow = L < 256;
	unsigned char *a8 = (unsigned char *)a;
	if (narrow) {
		for (size_t p = 0; p < len; p++)
			a8[p] = (unsigned char)a[p];
		r.stride = 1;
	}
	/* Runs of equal windows among the kept suffixes: the LCP of two kept suffixes is the
	 * least LCP of the entries from one to the other. */
	sa_rewind(&r);
	r.text = o->on ? t : NULL; /* for the keys */
	uint64_t m = 0, least = 0, size = 0;
	uint32_t run_lcp = 0;
	while (sa_next(&r, &v)) {
		size_t p = (size_t)v;
		uint64_t lcp = narrow ? a8[p] : (uint64_t)a[p];
		if (lcp < m)
			m = lcp;
		if (!((ok[p / 64] >> (p % 64)) & 1))
			continue;
		if (size && m >= L) {
			if (size++ == 1)
				mark(s->dup, base + least);
			mark(s->dup, base + p);
			if (p < least)
				least = p;
		} else {
			if (size > 1)
				unmark(s->dup, base + least);
			if (size)
				rep_put(o, t, (size_t)least, base, run_lcp);
			run_lcp = (uint32_t)m;
			least = p;
			size = 1;
		}
		m = L;
	}
	if (size > 1)
		unmark(s->dup, base + least);
	if (size)
		rep_put(o, t, (size_t)least, base, run_lcp);
	rep_flush(o);
	free(r.chunk);
	free(ok);
	free(a);
}

/* ---- merge of the shards' windows ---- */

/* A leaf reads one shard's windows; an inner node merges two subtrees, the left one of
 * earlier text. Each node gives its distinct windows in order, with their LCP with the
 * window it gave before. */
typedef struct node {
	struct node *l, *r;    /* NULL for a leaf */
	/* leaf */
	uint64_t next, left;
	rep *buf;
	size_t have, at;
	/* inner: the heads of both sides and their LCP with the last window given */
	rep a, b;
	uint64_t la, lb;
	int ha, hb, started;
} node;

typedef struct {
	llm_substr *s;
	const unsigned char *t;
	node *nodes;
	size_t nnodes;
} merger;

static uint64_t rep_pos(rep x) { return x.pos_lcp >> LCP_BITS; }
static uint64_t rep_lcp(rep x) { return x.pos_lcp & ((1ull << LCP_BITS) - 1); }

static int node_next(merger *m, node *x, rep *out);

static void node_pull_a(merger *m, node *x)
{
	x->ha = node_next(m, x->l, &x->a);
	x->la = rep_lcp(x->a);
}

static void node_pull_b(merger *m, node *x)
{
	x->hb = node_next(m, x->r, &x->b);
	x->lb = rep_lcp(x->b);
}

/* The LCP of a and b, known to be at least h, capped at min_len; *less: a sorts first. */
static uint64_t lcp_from(const merger *m, rep a, rep b, uint64_t h, int *less)
{
	uint64_t L = m->s->min_len, kl = L < KEY_BYTES ? L : KEY_BYTES;
	if (h < kl) {
		uint64_t d = a.key ^ b.key;
		if (d) {
			*less = a.key < b.key;
			return (uint64_t)__builtin_clzll(d) / 8;
		}
		h = kl;
	}
	const unsigned char *pa = m->t + rep_pos(a), *pb = m->t + rep_pos(b);
	while (h < L && pa[h] == pb[h])
		h++;
	*less = h < L && pa[h] < pb[h];
	return h;
}

static void set_lcp(rep *x, uint64_t lcp)
{
	x->pos_lcp = rep_pos(*x) << LCP_BITS | lcp;
}

static int node_next(merger *m, node *x, rep *out)
{
	if (!x->l) {
		if (!x->left || m->s->err)
			return 0;
		if (x->at == x->have) {
			size_t k = x->left < READ_REPS ? (size_t)x->left : READ_REPS;
			fail(m->s, llm_pread_all(m->s->repfd, x->buf, k * sizeof *x->buf,
			                         x->next * sizeof *x->buf, "temporary window file"));
			if (m->s->err)
				return 0;
			x->next += k;
			x->have = k;
			x->at = 0;
		}
		/* the text past the key, where a comparison goes when keys tie */
		if (x->at + LEAF_AHEAD < x->have) {
			const unsigned char *q = m->t + rep_pos(x->buf[x->at + LEAF_AHEAD]);
			__builtin_prefetch(q + KEY_BYTES);
			__builtin_prefetch(q + KEY_BYTES + 64);
		}
		*out = x->buf[x->at++];
		x->left--;
		return 1;
	}
	if (!x->started) {
		x->started = 1;
		node_pull_a(m, x);
		node_pull_b(m, x);
	}
	if (!x->ha && !x->hb)
		return 0;
	/* When one head shares more with the last window given than the other does, it sorts
	 * first, and the other's LCP with it is the other's LCP with that last window. */
	int take_a;
	if (!x->hb || (x->ha && x->la > x->lb)) {
		take_a = 1;
	} else if (!x->ha || x->lb > x->la) {
		take_a = 0;
	} else {
		int less;
		uint64_t h = lcp_from(m, x->a, x->b, x->la, &less);
		if (h >= m->s->min_len) {
			/* the same window on both sides: the right side's occurrence is later */
			mark(m->s->dup, rep_pos(x->b));
			*out = x->a;
			set_lcp(out, x->la);
			node_pull_a(m, x);
			node_pull_b(m, x);
			return 1;
		}
		take_a = less;
		if (take_a)
			x->lb = h;
		else
			x->la = h;
	}
	if (take_a) {
		*out = x->a;
		set_lcp(out, x->la);
		node_pull_a(m, x);
	} else {
		*out = x->b;
		set_lcp(out, x->lb);
		node_pull_b(m, x);
	}
	return 1;
}

/* The tree over shards [lo, hi); nodes are taken from m->nodes. */
static node *build_tree(merger *m, size_t lo, size_t hi)
{
	node *x = &m->nodes[m->nnodes++];
	if (hi - lo == 1) {
		x->next = m->s->shards[lo].off;
		x->left = m->s->shards[lo].count;
		x->buf = llm_malloc(READ_REPS * sizeof *x->buf);
		return x;
	}
	size_t mid = lo + (hi - lo) / 2;
	x->l = build_tree(m, lo, mid);
	x->r = build_tree(m, mid, hi);
	return x;
}

static void merge_shards(llm_substr *s)
{
	/* read rather than mapped: a file's pages are small */
	unsigned char *text = huge_alloc(s->bytes, 0);
	fail(s, llm_pread_all(s->textfd, text, s->bytes, 0, "temporary text file"));
	merger m = { .s = s, .t = text, .nodes = llm_calloc(2 * s->nshards, sizeof *m.nodes) };
	node *root = build_tree(&m, 0, s->nshards);
	track(s, (size_t)(s->bytes + s->bytes / 8) + s->nshards * (READ_REPS * sizeof(rep) + 2 * sizeof(node)) +
	         (size_t)s->dcap * 8);
	rep x;
	while (node_next(&m, root, &x))
		;
	for (size_t i = 0; i < m.nnodes; i++)
		free(m.nodes[i].buf);
	free(m.nodes);
	free(text);
}

/* Shards of whole documents, each at most `size` bytes unless one document is larger. */
static void plan_shards(llm_substr *s, uint64_t size)
{
	size_t cap = 16;
	s->shards = llm_malloc(cap * sizeof *s->shards);
	for (uint64_t d = 0; d < s->ndocs;) {
		uint64_t a = s->starts[d], e = d;
		while (e < s->ndocs && (e == d || s->starts[e + 1] - a <= size))
			e++;
		if (s->nshards == cap)
			s->shards = llm_realloc(s->shards, (cap *= 2) * sizeof *s->shards);
		s->shards[s->nshards++] = (shard){ a, s->starts[e] - a, d, 0, 0 };
		d = e;
	}
}

int llm_substr_finish(llm_substr *s)
{
	flush_text(s);
	if (s->starts)
		s->starts[s->ndocs] = s->bytes;
	if (s->err || !s->bytes)
		return s->err;
	if (s->bytes >= MAX_TEXT) {
		fail(s, llm_fail(LLM_EUNSUPPORTED, "%llu bytes of text: more than substring dedup "
		                 "can index (8 TiB)", (unsigned long long)s->bytes));
		return s->err;
	}
	/* The budget's shard, but no more than a quarter of the text once the text is larger
	 * than AUTO_PARTS least shards: 1.25 bytes per byte instead of 5. */
	uint64_t size = (s->bytes + AUTO_PARTS - 1) / AUTO_PARTS;
	if (size < AUTO_SHARD)
		size = AUTO_SHARD;
	if (size > s->cap)
		size = s->cap;
	plan_shards(s, size);
	size_t most = 0;
	for (size_t i = 0; i < s->nshards; i++)
		if (s->shards[i].len > most)
			most = (size_t)s->shards[i].len;
	free(s->buf);
	s->buf = huge_alloc(most, 0);
	s->dup = huge_alloc((s->bytes / 64 + 1) * 8, 1);
	if ((s->safd = llm_tmpfd(s->tmpdir)) < 0 ||
	    (s->nshards > 1 && (s->repfd = llm_tmpfd(s->tmpdir)) < 0)) {
		fail(s, s->safd < 0 ? s->safd : s->repfd);
		return s->err;
	}
	rep_out o = { .s = s, .on = s->nshards > 1 };
	o.buf = o.on ? llm_malloc(READ_REPS * sizeof *o.buf) : NULL;
	for (size_t i = 0; i < s->nshards && !s->err; i++) {
		s->shards[i].off = s->reps;
		sort_shard(s, &s->shards[i], &o);
		s->shards[i].count = s->reps - s->shards[i].off;
	}
	free(o.buf);
	free(s->buf);
	s->buf = NULL;
	close(s->safd);
	s->safd = -1;
	if (!s->err && s->nshards > 1)
		merge_shards(s);
	if (s->repfd >= 0)
		close(s->repfd);
	s->repfd = -1;
	return s->err;
}

/* ---- pass 2 ---- */

static void add_span(llm_substr *s, size_t *k, uint64_t a, uint64_t b)
{
	if (*k && s->spans[2 * *k - 1] >= a) {
		if (b > s->spans[2 * *k - 1])
			s->spans[2 * *k - 1] = b;
		return;
	}
	if (2 * (*k + 1) > s->scap2) {
		s->scap2 = s->scap2 ? 2 * s->scap2 : 64;
		s->spans = llm_realloc(s->spans, s->scap2 * sizeof *s->spans);
	}
	s->spans[2 * *k] = a;
	s->spans[2 * *k + 1] = b;
	(*k)++;
}

int llm_substr_next(llm_substr *s, const char *text, size_t n, const uint64_t **spans,
                    size_t *nspans)
{
	*spans = NULL;
	*nspans = 0;
	if (s->err)
		return s->err;
	if (s->next >= s->ndocs || s->starts[s->next + 1] - s->starts[s->next] != n)
		return llm_fail(LLM_EINVAL, "document %llu is not the one read in the first pass "
		                "(the input changed)", (unsigned long long)s->next + 1);
	uint64_t base = s->starts[s->next++];
	if (!s->dup || n < s->min_len)
		return LLM_OK;
	size_t cnt = 0;
	/* Window starts are bits [base, base + n - min_len]; a set bit p removes [p, p + len). */
	uint64_t last = base + n - s->min_len, open_a = 0, open_b = 0;
	for (uint64_t w = base / 64; w <= last / 64; w++) {
		uint64_t bits = s->dup[w];
		if (w == base / 64)
			bits &= ~0ull << (base % 64);
		if (w == last / 64 && last % 64 != 63)
			bits &= (1ull << (last % 64 + 1)) - 1;
		while (bits) {
			uint64_t p = w * 64 + (uint64_t)__builtin_ctzll(bits);
			bits &= bits - 1;
			uint64_t a = p - base, b = a + s->min_len;
			if (open_b && a <= open_b) {
				open_b = b;
				continue;
			}
			if (open_b)
				add_span(s, &cnt, open_a, open_b);
			open_a = a;
			open_b = b;
		}
	}
	if (open_b)
		add_span(s, &cnt, open_a, open_b);
	/* whole characters: a start inside a character moves back to its first byte, an end
	 * forward past its last */
	size_t out = 0;
	for (size_t i = 0; i < cnt; i++) {
		uint64_t a = s->spans[2 * i], b = s->spans[2 * i + 1];
		while (a > 0 && ((unsigned char)text[a] & 0xC0) == 0x80)
			a--;
		while (b < n && ((unsigned char)text[b] & 0xC0) == 0x80)
			b++;
		if (out && s->spans[2 * out - 1] >= a) {
			s->spans[2 * out - 1] = b;
		} else {
			s->spans[2 * out] = a;
			s->spans[2 * out + 1] = b;
			out++;
		}
	}
	for (size_t i = 0; i < out; i++)
		s->removed += s->spans[2 * i + 1] - s->spans[2 * i];
	*spans = s->spans;
	*nspans = out;
	return LLM_OK;
}

void llm_substr_get_stats(const llm_substr *s, llm_substr_stats *st)
{
	st->bytes = s->bytes;
	st->shards = s->nshards;
	st->removed = s->removed;
	st->disk = s->bytes + s->sa_disk + s->reps * sizeof(rep);
	st->memory = s->peak;
}

void llm_substr_cut(const char *text, size_t n, const uint64_t *spans, size_t nspans,
                    llm_buf *out)
{
	uint64_t at = 0;
	for (size_t i = 0; i < nspans; i++) {
		llm_buf_add(out, text + at, (size_t)(spans[2 * i] - at));
		at = spans[2 * i + 1];
	}
	llm_buf_add(out, text + at, n - (size_t)at);
}
