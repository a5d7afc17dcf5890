/*
 * xsort.c — external merge sort of 24-byte records (see xsort.h).
 *
 * Runs live back to back in one temporary file; run i is records [off_i, off_i + n_i).
 * Reading keeps a cursor per run with a window of the run in memory, and a binary heap of
 * the runs ordered by their current record.
 */
#include "xsort.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "io.h"

#define MIN_BUDGET (64u << 10)
#define MIN_WINDOW 64 /* records per run window, whatever the budget */

typedef struct {
	uint64_t off, n; /* in records */
} run;

typedef struct {
	uint64_t next, end; /* file position of the next unread record, end of the run */
	llm_rec3 *win;
	size_t len, pos;
} cursor;

struct llm_xsort {
	char *dir;
	int fd;
	llm_rec3 *buf;
	size_t cap, n;        /* most records held, records held now */
	size_t bufcap;        /* records allocated: grown on demand up to cap */
	run *runs;
	unsigned nruns, runcap;
	uint64_t total, filerecs;
	int reading;
	size_t pos;           /* reading without runs: next record of buf */
	cursor *cur;
	unsigned *heap, nheap;
	size_t window;        /* records per cursor window */
};

static int rec_less(const llm_rec3 *x, const llm_rec3 *y)
{
	if (x->a != y->a)
		return x->a < y->a;
	if (x->b != y->b)
		return x->b < y->b;
	return x->c < y->c;
}

static int rec_cmp(const void *p, const void *q)
{
	const llm_rec3 *x = p, *y = q;
	return rec_less(x, y) ? -1 : rec_less(y, x);
}

llm_xsort *llm_xsort_new(size_t budget, const char *dir)
{
	llm_xsort *x = llm_calloc(1, sizeof *x);
	if (budget < MIN_BUDGET)
		budget = MIN_BUDGET;
	x->cap = budget / sizeof(llm_rec3);
	x->dir = dir ? llm_strdup(dir) : NULL;
	x->fd = -1;
	return x;
}

void llm_xsort_free(llm_xsort *x)
{
	if (!x)
		return;
	if (x->fd >= 0)
		close(x->fd);
	free(x->dir);
	free(x->buf);
	free(x->runs);
	free(x->cur);
	free(x->heap);
	free(x);
}

/* Sort the buffer and append it to the file as a run. */
static int spill(llm_xsort *x)
{
	if (x->fd < 0 && (x->fd = llm_tmpfd(x->dir)) < 0)
		return x->fd;
	qsort(x->buf, x->n, sizeof *x->buf, rec_cmp);
	int rc = llm_pwrite_all(x->fd, x->buf, x->n * sizeof *x->buf, x->filerecs * sizeof *x->buf,
	                        "temporary sort file");
	if (rc)
		return rc;
	if (x->nruns == x->runcap) {
		x->runcap = x->runcap ? 2 * x->runcap : 16;
		x->runs = llm_realloc(x->runs, x->runcap * sizeof *x->runs);
	}
	x->runs[x->nruns++] = (run){ x->filerecs, x->n };
	x->filerecs += x->n;
	x->n = 0;
	return LLM_OK;
}

int llm_xsort_add(llm_xsort *x, uint64_t a, uint64_t b, uint64_t c)
{
	if (x->n == x->cap) {
		int rc = spill(x);
		if (rc)
			return rc;
	}
	if (x->n == x->bufcap) { /* grown on demand, so that a small input costs little */
		size_t grow = x->bufcap ? 2 * x->bufcap : 4096;
		x->bufcap = grow < x->cap ? grow : x->cap;
		x->buf = llm_realloc(x->buf, x->bufcap * sizeof *x->buf);
	}
	x->buf[x->n++] = (llm_rec3){ a, b, c };
	x->total++;
	return LLM_OK;
}

/* Refill cursor i's window; 0 when its run is exhausted. */
static int refill(llm_xsort *x, cursor *k, int *status)
{
	uint64_t left = k->end - k->next;
	if (!left)
		return 0;
	size_t n = left < x->window ? (size_t)left : x->window;
	*status = llm_pread_all(x->fd, k->win, n * sizeof *k->win, k->next * sizeof *k->win,
	                        "temporary sort file");
	if (*status)
		return 0;
	k->next += n;
	k->len = n;
	k->pos = 0;
	return 1;
}

static const llm_rec3 *head(const llm_xsort *x, unsigned i)
{
	return &x->cur[i].win[x->cur[i].pos];
}

static void sift_down(llm_xsort *x, unsigned i)
{
	unsigned *h = x->heap, n = x->nheap;
	for (;;) {
		unsigned l = 2 * i + 1, m = i;
		if (l < n && rec_less(head(x, h[l]), head(x, h[m])))
			m = l;
		if (l + 1 < n && rec_less(head(x, h[l + 1]), head(x, h[m])))
			m = l + 1;
		if (m == i)
			return;
		unsigned t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

int llm_xsort_rewind(llm_xsort *x)
{
	if (!x->reading) {
		x->reading = 1;
		if (x->nruns && x->n) {
			int rc = spill(x);
			if (rc)
				return rc;
		}
		if (!x->nruns) {
			if (x->n)
				qsort(x->buf, x->n, sizeof *x->buf, rec_cmp);
		} else {
			/* The buffer becomes the runs' windows. */
			size_t w = x->cap / x->nruns;
			x->window = w < MIN_WINDOW ? MIN_WINDOW : w;
			free(x->buf);
			x->bufcap = x->window * x->nruns;
			x->buf = llm_malloc(x->bufcap * sizeof *x->buf);
			x->cur = llm_calloc(x->nruns, sizeof *x->cur);
			x->heap = llm_malloc(x->nruns * sizeof *x->heap);
			for (unsigned i = 0; i < x->nruns; i++)
				x->cur[i].win = x->buf + (size_t)i * x->window;
		}
	}
	x->pos = 0;
	x->nheap = 0;
	int rc = LLM_OK;
	for (unsigned i = 0; i < x->nruns; i++) {
		cursor *k = &x->cur[i];
		k->next = x->runs[i].off;
		k->end = x->runs[i].off + x->runs[i].n;
		if (refill(x, k, &rc))
			x->heap[x->nheap++] = i;
		if (rc)
			return rc;
	}
	for (unsigned i = x->nheap / 2; i-- > 0;)
		sift_down(x, i);
	return LLM_OK;
}

int llm_xsort_next(llm_xsort *x, llm_rec3 *r)
{
	if (!x->nruns) {
		if (x->pos == x->n)
			return LLM_EOF;
		*r = x->buf[x->pos++];
		return LLM_OK;
	}
	if (!x->nheap)
		return LLM_EOF;
	unsigned i = x->heap[0];
	cursor *k = &x->cur[i];
	*r = k->win[k->pos++];
	int rc = LLM_OK;
	if (k->pos == k->len && !refill(x, k, &rc)) {
		if (rc)
			return rc;
		x->heap[0] = x->heap[--x->nheap];
	}
	if (x->nheap)
		sift_down(x, 0);
	return LLM_OK;
}

uint64_t llm_xsort_count(const llm_xsort *x) { return x->total; }
unsigned llm_xsort_runs(const llm_xsort *x) { return x->nruns; }

size_t llm_xsort_memory(const llm_xsort *x)
{
	return x->bufcap * sizeof(llm_rec3) +
	       x->nruns * (sizeof(run) + sizeof(cursor) + sizeof(unsigned));
}
