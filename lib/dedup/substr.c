/*
 * substr.c — exact substring dedup with per-shard suffix arrays (see substr.h).
 *
 * Why prefixes are enough: two windows are equal exactly when their suffixes share the first
 * min_len bytes, and suffixes sorted by those bytes put all equal windows next to each other.
 * So the merge compares at most min_len bytes, not whole suffixes, which bounds its cost per
 * comparison; each shard's suffix array (sorted by whole suffixes of the shard) is sorted by
 * those prefixes too, because every kept suffix has min_len bytes inside its document and
 * hence inside its shard.
 */
#include "substr.h"

#include <divsufsort.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/err.h"
#include "core/io.h"

#define MIN_SHARD 256u
#define MAX_SHARD ((size_t)INT32_MAX)
#define READ_ENTRIES 16384 /* per shard during the merge: 64 KiB */

typedef struct {
	uint64_t base;        /* text offset of the shard */
	uint64_t off, count;  /* its kept suffixes: entry offset in the array file, number */
} shard;

struct llm_substr {
	size_t min_len, cap;
	char *tmpdir;
	int err;
	/* pass 1 */
	int textfd, safd;
	uint64_t bytes, saentries;
	unsigned char *buf;   /* the current shard's text */
	size_t held, bufcap;
	uint64_t *starts;     /* per document, its text offset; count+1 after finish */
	uint64_t ndocs, dcap, shard_doc; /* shard_doc: first document of the current shard */
	shard *shards;
	size_t nshards, scap;
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
	size_t cap = budget / 5;
	s->cap = cap < MIN_SHARD ? MIN_SHARD : cap > MAX_SHARD ? MAX_SHARD : cap;
	s->tmpdir = tmpdir ? llm_strdup(tmpdir) : NULL;
	s->textfd = s->safd = -1;
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
	free(s->tmpdir);
	free(s->buf);
	free(s->starts);
	free(s->shards);
	free(s->dup);
	free(s->spans);
	free(s);
}

static void track(llm_substr *s, size_t now)
{
	if (now > s->peak)
		s->peak = now;
}

/* Sort the held shard, keep the suffixes whose window fits in its document, append them. */
static void build_shard(llm_substr *s)
{
	if (!s->held || s->err)
		return;
	uint64_t base = s->bytes - s->held;
	fail(s, llm_pwrite_all(s->textfd, s->buf, s->held, base, "temporary text file"));
	int32_t *sa = llm_malloc(s->held * sizeof *sa);
	track(s, s->bufcap + s->held * sizeof *sa + s->held / 8 + (size_t)s->dcap * 8);
	if (divsufsort(s->buf, sa, (int32_t)s->held) != 0) {
		free(sa);
		fail(s, llm_fail(LLM_ENOMEM, "suffix array of %zu bytes: libdivsufsort failed",
		                 s->held));
		return;
	}
	/* The last window start of each position's document: a table over the shard, 1 bit
	 * per byte (whether a window starts there and fits). */
	size_t words = s->held / 64 + 1;
	uint64_t *ok = llm_calloc(words, 8);
	for (uint64_t d = s->shard_doc; d < s->ndocs; d++) {
		uint64_t a = s->starts[d] - base, e = (d + 1 < s->ndocs ? s->starts[d + 1] : s->bytes) - base;
		for (uint64_t p = a; p + s->min_len <= e; p++)
			ok[p / 64] |= 1ull << (p % 64);
	}
	uint64_t kept = 0;
	for (size_t i = 0; i < s->held; i++) {
		uint32_t p = (uint32_t)sa[i];
		if ((ok[p / 64] >> (p % 64)) & 1)
			sa[kept++] = (int32_t)p;
	}
	free(ok);
	if (kept)
		fail(s, llm_pwrite_all(s->safd, sa, kept * 4, s->saentries * 4, "temporary suffix array"));
	free(sa);
	if (s->nshards == s->scap) {
		s->scap = s->scap ? 2 * s->scap : 16;
		s->shards = llm_realloc(s->shards, s->scap * sizeof *s->shards);
	}
	s->shards[s->nshards++] = (shard){ base, s->saentries, kept };
	s->saentries += kept;
	s->held = 0;
	s->shard_doc = s->ndocs;
}

int llm_substr_add(llm_substr *s, const char *text, size_t n)
{
	if (s->err)
		return s->err;
	if (s->textfd < 0) {
		if ((s->textfd = llm_tmpfd(s->tmpdir)) < 0 || (s->safd = llm_tmpfd(s->tmpdir)) < 0) {
			fail(s, s->textfd < 0 ? s->textfd : s->safd);
			return s->err;
		}
	}
	if (s->held && s->held + n > s->cap)
		build_shard(s);
	if (n > MAX_SHARD) {
		fail(s, llm_fail(LLM_EUNSUPPORTED, "a document of %zu bytes is longer than a suffix "
		                 "array shard can be (2 GiB)", n));
		return s->err;
	}
	/* the buffer grows to the shard size; a document larger than a shard is a shard alone */
	if (s->held + n > s->bufcap) {
		size_t want = s->bufcap ? 2 * s->bufcap : 1u << 16;
		while (want < s->held + n)
			want *= 2;
		if (want > s->cap && s->held + n <= s->cap)
			want = s->cap;
		s->bufcap = want;
		s->buf = llm_realloc(s->buf, want);
	}
	if (s->ndocs == s->dcap) {
		s->dcap = s->dcap ? 2 * s->dcap : 4096;
		s->starts = llm_realloc(s->starts, (s->dcap + 1) * sizeof *s->starts);
	}
	s->starts[s->ndocs++] = s->bytes;
	if (n) /* an empty first document: there is no buffer yet, and memcpy wants one */
		memcpy(s->buf + s->held, text, n);
	s->held += n;
	s->bytes += n;
	return s->err;
}

/* ---- merge ---- */

typedef struct {
	uint64_t pos, left, next; /* current suffix; entries left; next entry to read */
	uint32_t *buf;
	size_t have, at;
	uint64_t base;
} cursor;

typedef struct {
	llm_substr *s;
	const unsigned char *t;
	cursor *c;
	size_t *heap, n;
} merger;

static int cursor_step(llm_substr *s, cursor *c)
{
	if (!c->left)
		return 0;
	if (c->at == c->have) {
		size_t k = c->left < READ_ENTRIES ? (size_t)c->left : READ_ENTRIES;
		fail(s, llm_pread_all(s->safd, c->buf, k * 4, c->next * 4, "temporary suffix array"));
		if (s->err)
			return 0;
		c->next += k;
		c->have = k;
		c->at = 0;
	}
	c->pos = c->base + c->buf[c->at++];
	c->left--;
	return 1;
}

/* Order of suffixes by their first min_len bytes (ties: by position, for one order). */
static int less(const merger *m, size_t i, size_t j)
{
	uint64_t a = m->c[i].pos, b = m->c[j].pos;
	int k = memcmp(m->t + a, m->t + b, m->s->min_len);
	return k < 0 || (k == 0 && a < b);
}

static void sift_down(merger *m, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, best = i;
		if (l < m->n && less(m, m->heap[l], m->heap[best]))
			best = l;
		if (r < m->n && less(m, m->heap[r], m->heap[best]))
			best = r;
		if (best == i)
			return;
		size_t t = m->heap[i];
		m->heap[i] = m->heap[best];
		m->heap[best] = t;
		i = best;
	}
}

static void mark(uint64_t *dup, uint64_t p) { dup[p / 64] |= 1ull << (p % 64); }
static void unmark(uint64_t *dup, uint64_t p) { dup[p / 64] &= ~(1ull << (p % 64)); }

int llm_substr_finish(llm_substr *s)
{
	build_shard(s);
	if (s->starts)
		s->starts[s->ndocs] = s->bytes;
	free(s->buf);
	s->buf = NULL;
	if (s->err || !s->bytes)
		return s->err;
	s->dup = llm_calloc(s->bytes / 64 + 1, 8);
	void *map = mmap(NULL, s->bytes, PROT_READ, MAP_SHARED, s->textfd, 0);
	if (map == MAP_FAILED) {
		fail(s, llm_fail(LLM_EIO, "temporary text file: mmap: %s", strerror(errno)));
		return s->err;
	}
	merger m = { .s = s, .t = map, .c = llm_calloc(s->nshards ? s->nshards : 1, sizeof *m.c),
	             .heap = llm_malloc((s->nshards ? s->nshards : 1) * sizeof *m.heap) };
	for (size_t i = 0; i < s->nshards; i++) {
		cursor *c = &m.c[i];
		c->base = s->shards[i].base;
		c->left = s->shards[i].count;
		c->next = s->shards[i].off;
		c->buf = llm_malloc(READ_ENTRIES * 4);
		if (cursor_step(s, c))
			m.heap[m.n++] = i;
	}
	track(s, (size_t)(s->bytes / 8) + s->nshards * (READ_ENTRIES * 4 + sizeof *m.c) +
	         (size_t)s->dcap * 8);
	for (size_t i = m.n; i-- > 0;)
		sift_down(&m, i);
	/* Runs of equal prefixes: every member but the one at the smallest position is a
	 * duplicate. Within a shard equal prefixes come in the order of the rest of their
	 * suffixes, not by position, so a run is marked whole and its earliest member unmarked
	 * when it ends (each position is in exactly one run). */
	uint64_t head = UINT64_MAX, least = 0, size = 0;
	while (m.n && !s->err) {
		cursor *c = &m.c[m.heap[0]];
		uint64_t p = c->pos;
		if (head != UINT64_MAX && !memcmp(m.t + head, m.t + p, s->min_len)) {
			if (size++ == 1)
				mark(s->dup, head);
			mark(s->dup, p);
			if (p < least)
				least = p;
		} else {
			if (size > 1)
				unmark(s->dup, least);
			head = least = p;
			size = 1;
		}
		if (!cursor_step(s, c))
			m.heap[0] = m.heap[--m.n];
		sift_down(&m, 0);
	}
	if (size > 1)
		unmark(s->dup, least);
	for (size_t i = 0; i < s->nshards; i++)
		free(m.c[i].buf);
	free(m.c);
	free(m.heap);
	munmap(map, s->bytes);
	close(s->safd);
	s->safd = -1;
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
	st->disk = s->bytes + 4 * s->saentries;
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
