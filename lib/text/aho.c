/*
 * aho.c — the Aho-Corasick automaton of aho.h (A. V. Aho, M. J. Corasick, "Efficient string
 * matching: an aid to bibliographic search", CACM 18(6), 1975).
 *
 * Building: the patterns are sorted, so that the trie can be made in one pass in which every
 * new node is the last child of its parent (the previous pattern's path is the stack), then
 * renumbered breadth first. Breadth-first order puts the children of a state next to each
 * other and the children of consecutive states next to each other, so one array `first`
 * (with a sentinel) gives every state's child range, and it puts every failure target before
 * the states that point to it, so failure and output links are set in the same pass.
 */
#include "aho.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"

typedef struct {
	uint64_t off;
	const unsigned char *p; /* bytes + off, set when compiling (the buffer no longer moves) */
	uint32_t len, value, order;
} pattern;

struct llm_aho {
	/* Before compile: the patterns. */
	llm_buf bytes;
	pattern *pats;
	size_t npats, cap;
	/* After: the states, breadth first; state 0 is the start. */
	uint32_t nstates;
	uint32_t *first;  /* children of s: [first[s], first[s + 1]) */
	uint8_t *label;   /* the byte on the edge into s */
	uint32_t *fail;   /* the longest proper suffix of s that is a state */
	uint32_t *dict;   /* the longest proper suffix of s that ends a pattern, or NONE */
	uint32_t *term;   /* s's pattern (index into tval/tlen), or NONE */
	uint32_t *tval, *tlen;
	uint32_t root[256];
	size_t ndistinct, maxlen;
	int compiled;
};

llm_aho *llm_aho_new(void)
{
	llm_aho *a = llm_calloc(1, sizeof *a);
	llm_buf_init(&a->bytes);
	return a;
}

void llm_aho_free(llm_aho *a)
{
	if (!a)
		return;
	llm_buf_release(&a->bytes);
	free(a->pats);
	free(a->first);
	free(a->label);
	free(a->fail);
	free(a->dict);
	free(a->term);
	free(a->tval);
	free(a->tlen);
	free(a);
}

int llm_aho_add(llm_aho *a, const void *p, size_t len, uint32_t value)
{
	if (len == 0 || len > LLM_AHO_MAX_LEN || a->compiled)
		return 0;
	if (a->npats == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 256;
		a->pats = llm_realloc(a->pats, a->cap * sizeof *a->pats);
	}
	a->pats[a->npats] = (pattern){ a->bytes.len, NULL, (uint32_t)len, value, (uint32_t)a->npats };
	a->npats++;
	llm_buf_add(&a->bytes, p, len);
	return 1;
}

static int cmp_pattern(const void *x, const void *y)
{
	const pattern *p = x, *q = y;
	size_t n = p->len < q->len ? p->len : q->len;
	int c = memcmp(p->p, q->p, n);
	if (c)
		return c;
	if (p->len != q->len)
		return p->len < q->len ? -1 : 1;
	return p->order < q->order ? -1 : p->order > q->order;
}

/* The child of s on byte b, or NONE. */
static inline uint32_t child(const llm_aho *a, uint32_t s, unsigned char b)
{
	uint32_t lo = a->first[s], hi = a->first[s + 1];
	while (hi - lo > 8) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (a->label[mid] < b)
			lo = mid + 1;
		else
			hi = mid + 1; /* mid may be the one */
	}
	for (; lo < hi; lo++)
		if (a->label[lo] >= b)
			return a->label[lo] == b ? lo : LLM_AHO_NONE;
	return LLM_AHO_NONE;
}

/* The trie in insertion order: kid/sib lists, each new node its parent's last child. */
typedef struct {
	uint32_t *kid, *sib, *nterm; /* first child, next sibling, pattern ending there */
	uint8_t *lab;                /* the byte on the edge into the node */
	size_t n, cap;
} trie;

static void trie_init(trie *t)
{
	t->cap = 1024;
	t->n = 1;
	t->kid = llm_malloc(t->cap * sizeof *t->kid);
	t->sib = llm_malloc(t->cap * sizeof *t->sib);
	t->nterm = llm_malloc(t->cap * sizeof *t->nterm);
	t->lab = llm_malloc(t->cap);
	t->kid[0] = t->sib[0] = t->nterm[0] = LLM_AHO_NONE;
	t->lab[0] = 0;
}

static void trie_release(trie *t)
{
	free(t->kid);
	free(t->sib);
	free(t->nterm);
	free(t->lab);
}

/* A new node on byte b, linked nowhere yet; LLM_AHO_NONE past the number of states. */
static uint32_t trie_node(trie *t, unsigned char b)
{
	if (t->n == t->cap) {
		t->cap *= 2;
		t->kid = llm_realloc(t->kid, t->cap * sizeof *t->kid);
		t->sib = llm_realloc(t->sib, t->cap * sizeof *t->sib);
		t->nterm = llm_realloc(t->nterm, t->cap * sizeof *t->nterm);
		t->lab = llm_realloc(t->lab, t->cap);
	}
	if (t->n >= UINT32_MAX - 1)
		return LLM_AHO_NONE;
	uint32_t x = (uint32_t)t->n++;
	t->kid[x] = t->sib[x] = t->nterm[x] = LLM_AHO_NONE;
	t->lab[x] = b;
	return x;
}

/* The patterns in sorted order, each one's pattern index in a->tval/a->tlen; duplicates
 * keep the first one added. */
static void sort_patterns(llm_aho *a)
{
	for (size_t i = 0; i < a->npats; i++)
		a->pats[i].p = (const unsigned char *)a->bytes.p + a->pats[i].off;
	if (a->npats)
		qsort(a->pats, a->npats, sizeof *a->pats, cmp_pattern);
	a->tval = llm_malloc((a->npats + 1) * sizeof *a->tval);
	a->tlen = llm_malloc((a->npats + 1) * sizeof *a->tlen);
	a->ndistinct = 0;
	a->maxlen = 0;
}

/* The length of the prefix p shares with prev (0 without prev). */
static size_t common_prefix(const pattern *prev, const pattern *p)
{
	size_t lcp = 0;
	if (prev) {
		size_t m = prev->len < p->len ? prev->len : p->len;
		while (lcp < m && prev->p[lcp] == p->p[lcp])
			lcp++;
	}
	return lcp;
}

/* The nodes of p below the prefix it shares with prev (path: prev's nodes by depth, then
 * p's). Returns 0, or -1 when the states run out. */
static int add_path(trie *t, uint32_t *path, const pattern *prev, const pattern *p, size_t lcp)
{
	for (size_t d = lcp; d < p->len; d++) {
		uint32_t x = trie_node(t, p->p[d]);
		if (x == LLM_AHO_NONE)
			return -1;
		/* The parent's last child, if any, is the previous pattern's node one level down
		 * (sorted order): only at the first level created below the shared prefix. */
		if (d == lcp && prev && prev->len > lcp)
			t->sib[path[d + 1]] = x;
		else
			t->kid[path[d]] = x;
		path[d + 1] = x;
	}
	return 0;
}

/* Every distinct pattern into the trie, in one pass over the sorted patterns. */
static int build_trie(llm_aho *a, trie *t)
{
	uint32_t *path = llm_malloc((LLM_AHO_MAX_LEN + 1) * sizeof *path);
	path[0] = 0;
	const pattern *prev = NULL;
	for (size_t i = 0; i < a->npats; i++) {
		const pattern *p = &a->pats[i];
		size_t lcp = common_prefix(prev, p);
		if (prev && lcp == p->len && prev->len == p->len)
			continue; /* the same pattern again: the first one added stays */
		if (add_path(t, path, prev, p, lcp)) {
			free(path);
			return llm_fail(LLM_EINVAL, "the patterns need more than %u states", UINT32_MAX - 2);
		}
		t->nterm[path[p->len]] = (uint32_t)a->ndistinct;
		a->tval[a->ndistinct] = p->value;
		a->tlen[a->ndistinct] = p->len;
		a->ndistinct++;
		if (p->len > a->maxlen)
			a->maxlen = p->len;
		prev = p;
	}
	free(path);
	return LLM_OK;
}

/* Breadth first: new ids in queue order; a state's children get the next free ids. */
static void renumber(llm_aho *a, const trie *t)
{
	size_t n = t->n;
	a->nstates = (uint32_t)n;
	a->first = llm_malloc((n + 1) * sizeof *a->first);
	a->label = llm_malloc(n);
	a->term = llm_malloc(n * sizeof *a->term);
	uint32_t *queue = llm_malloc(n * sizeof *queue); /* new id -> old id */
	size_t head = 0, tail = 1;
	queue[0] = 0;
	while (head < tail) {
		uint32_t s = (uint32_t)head, old = queue[head++];
		a->first[s] = (uint32_t)tail;
		a->label[s] = t->lab[old];
		a->term[s] = t->nterm[old];
		for (uint32_t k = t->kid[old]; k != LLM_AHO_NONE; k = t->sib[k])
			queue[tail++] = k;
	}
	a->first[n] = (uint32_t)n;
	free(queue);
}

/* The failure target of c, a child of s != 0: the deepest state on s's failure chain with a
 * child on c's byte, that child; else the start. */
static uint32_t fail_target(const llm_aho *a, uint32_t s, uint32_t c)
{
	for (uint32_t f = a->fail[s];; f = a->fail[f]) {
		uint32_t t = child(a, f, a->label[c]);
		if (t != LLM_AHO_NONE)
			return t;
		if (f == 0)
			return 0;
	}
}

/* Failure and output links, parents before children; the start state's transitions. */
static void set_links(llm_aho *a)
{
	a->fail = llm_malloc((size_t)a->nstates * sizeof *a->fail);
	a->dict = llm_malloc((size_t)a->nstates * sizeof *a->dict);
	a->fail[0] = 0;
	a->dict[0] = LLM_AHO_NONE;
	for (uint32_t s = 0; s < a->nstates; s++)
		for (uint32_t c = a->first[s]; c < a->first[s + 1]; c++) {
			uint32_t f = s != 0 ? fail_target(a, s, c) : 0;
			a->fail[c] = f;
			a->dict[c] = a->term[f] != LLM_AHO_NONE ? f : a->dict[f];
		}
	for (int b = 0; b < 256; b++) {
		uint32_t t = child(a, 0, (unsigned char)b);
		a->root[b] = t == LLM_AHO_NONE ? 0 : t;
	}
}

int llm_aho_compile(llm_aho *a)
{
	if (a->compiled)
		return LLM_OK;
	sort_patterns(a);
	trie t;
	trie_init(&t);
	int rc = build_trie(a, &t);
	if (rc) {
		trie_release(&t);
		return rc;
	}
	free(a->pats);
	a->pats = NULL;
	llm_buf_release(&a->bytes);
	renumber(a, &t);
	trie_release(&t);
	set_links(a);
	a->compiled = 1;
	return LLM_OK;
}

size_t llm_aho_patterns(const llm_aho *a) { return a->compiled ? a->ndistinct : a->npats; }
size_t llm_aho_max_len(const llm_aho *a) { return a->maxlen; }

size_t llm_aho_memory(const llm_aho *a)
{
	return sizeof *a + (size_t)a->nstates * (4 + 1 + 4 + 4 + 4) + 4 + a->ndistinct * 8 +
	       a->bytes.cap + a->cap * sizeof *a->pats;
}

uint32_t llm_aho_step(const llm_aho *a, uint32_t *state, unsigned char b)
{
	uint32_t s = *state, t;
	for (;;) {
		if (s == 0) {
			t = a->root[b];
			break;
		}
		if ((t = child(a, s, b)) != LLM_AHO_NONE)
			break;
		s = a->fail[s];
	}
	*state = t;
	return a->term[t] != LLM_AHO_NONE ? t : a->dict[t];
}

uint32_t llm_aho_next(const llm_aho *a, uint32_t m) { return a->dict[m]; }
uint32_t llm_aho_value(const llm_aho *a, uint32_t m) { return a->tval[a->term[m]]; }
uint32_t llm_aho_len(const llm_aho *a, uint32_t m) { return a->tlen[a->term[m]]; }
