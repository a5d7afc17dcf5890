/*
 * decon.c — n-gram sets of benchmark items and their lookup (see decon.h).
 */
#include "decon.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/hash.h"
#include "core/io.h"
#include "core/xsort.h"

#define EMPTY UINT64_MAX
#define BLOOM_K 4

typedef struct {
	uint64_t key, item; /* item EMPTY: a free slot */
} slot;

struct llm_decon {
	llm_shingle_opts o;
	llm_shingler sh;
	size_t budget;
	char *tmpdir;
	llm_xsort *x;
	int err;            /* the first failure of the sort, reported by ready */
	uint64_t ngrams;
	/* in memory */
	slot *tab;
	size_t cap;
	/* on disk: sorted {key, item} pairs and the filter */
	int fd;
	unsigned char *bloom;
	uint64_t nbits;
	/* per document */
	uint32_t *items;
	size_t icap;
};

llm_decon *llm_decon_new(const llm_shingle_opts *o, size_t budget, const char *tmpdir)
{
	llm_decon *dc = llm_calloc(1, sizeof *dc);
	dc->o = *o;
	llm_shingler_init(&dc->sh);
	dc->budget = budget < (1u << 16) ? 1u << 16 : budget;
	dc->tmpdir = tmpdir ? llm_strdup(tmpdir) : NULL;
	dc->x = llm_xsort_new(dc->budget, dc->tmpdir);
	dc->fd = -1;
	return dc;
}

void llm_decon_free(llm_decon *dc)
{
	if (!dc)
		return;
	llm_shingler_release(&dc->sh);
	llm_xsort_free(dc->x);
	free(dc->tmpdir);
	free(dc->tab);
	if (dc->fd >= 0)
		close(dc->fd);
	free(dc->bloom);
	free(dc->items);
	free(dc);
}

size_t llm_decon_add(llm_decon *dc, uint32_t item, const char *text, size_t n)
{
	size_t nh = llm_shingle(&dc->sh, &dc->o, text, n);
	/* a text shorter than n units is one shingle of all of it: no n-gram */
	if (dc->sh.nunits < dc->o.ngram)
		return 0;
	for (size_t i = 0; i < nh && !dc->err; i++)
		dc->err = llm_xsort_add(dc->x, dc->sh.h[i], item, 0);
	return nh;
}

static const char *const item_fields[] = { "context", "question", "passage", "answer", NULL };

size_t llm_decon_add_item(llm_decon *dc, uint32_t item, const llm_json_rec *rec,
                          const char *field)
{
	size_t ngrams = 0;
	llm_buf t = LLM_BUF_INIT, ctx = LLM_BUF_INIT;
	if (!llm_json_get_str(rec, field, &t))
		ngrams += llm_decon_add(dc, item, t.p ? t.p : "", t.len);
	for (int i = 0; item_fields[i]; i++) {
		llm_buf_reset(&t);
		if (!llm_json_get_str(rec, item_fields[i], &t))
			ngrams += llm_decon_add(dc, item, t.p ? t.p : "", t.len);
	}
	const llm_json_val *ch = llm_json_get(rec, "choices");
	int64_t gold = -1;
	if (llm_json_get_i64(rec, "gold", &gold))
		gold = -1;
	llm_json_get_str(rec, "context", &ctx);
	if (ch && ch->type == LLM_JSON_ARRAY) {
		size_t it = 0;
		int64_t k = 0;
		llm_json_val key, v;
		while (llm_json_next(ch, &it, &key, &v) == LLM_OK) {
			llm_buf_reset(&t);
			if (v.type == LLM_JSON_STRING && !llm_json_str(&v, &t)) {
				ngrams += llm_decon_add(dc, item, t.p ? t.p : "", t.len);
				if (k == gold && ctx.len) {
					llm_buf_addc(&ctx, ' ');
					llm_buf_add(&ctx, t.p ? t.p : "", t.len);
					ngrams += llm_decon_add(dc, item, ctx.p, ctx.len);
				}
			}
			k++;
		}
	}
	llm_buf_release(&t);
	llm_buf_release(&ctx);
	return ngrams;
}

static void bloom_set(llm_decon *dc, uint64_t key)
{
	uint64_t at[BLOOM_K];
	llm_bloom_cells(key, dc->nbits, BLOOM_K, at);
	for (unsigned i = 0; i < BLOOM_K; i++)
		dc->bloom[at[i] / 8] |= (unsigned char)(1u << (at[i] % 8));
}

static int bloom_has(const llm_decon *dc, uint64_t key)
{
	uint64_t at[BLOOM_K];
	llm_bloom_cells(key, dc->nbits, BLOOM_K, at);
	for (unsigned i = 0; i < BLOOM_K; i++)
		if (!((dc->bloom[at[i] / 8] >> (at[i] % 8)) & 1))
			return 0;
	return 1;
}

static void tab_put(llm_decon *dc, uint64_t key, uint64_t item)
{
	size_t p = llm_mix64(key) & (dc->cap - 1);
	while (dc->tab[p].item != EMPTY)
		p = (p + 1) & (dc->cap - 1);
	dc->tab[p] = (slot){ key, item };
}

int llm_decon_ready(llm_decon *dc)
{
	/* First pass: the distinct n-grams (each with its smallest item: records sort by
	 * key, then item). */
	llm_rec3 r;
	uint64_t last = 0;
	int rc = dc->err, have = 0;
	dc->ngrams = 0;
	if (!rc)
		rc = llm_xsort_rewind(dc->x);
	while (!rc && (rc = llm_xsort_next(dc->x, &r)) == LLM_OK) {
		if (have && r.a == last)
			continue;
		have = 1, last = r.a;
		dc->ngrams++;
	}
	if (rc != LLM_EOF)
		return rc;
	size_t cap = 1024;
	while (cap < dc->ngrams + dc->ngrams / 2 + 1)
		cap *= 2;
	int disk = cap * sizeof(slot) > dc->budget / 2;
	if (!disk) {
		dc->cap = cap;
		dc->tab = llm_malloc(cap * sizeof *dc->tab);
		for (size_t i = 0; i < cap; i++)
			dc->tab[i].item = EMPTY;
	} else {
		if ((dc->fd = llm_tmpfd(dc->tmpdir)) < 0)
			return dc->fd;
		dc->nbits = (uint64_t)(dc->budget / 2) * 8;
		dc->bloom = llm_calloc(dc->budget / 2, 1);
	}
	llm_buf out = LLM_BUF_INIT;
	uint64_t off = 0;
	have = 0;
	rc = llm_xsort_rewind(dc->x);
	while (!rc && (rc = llm_xsort_next(dc->x, &r)) == LLM_OK) {
		if (have && r.a == last)
			continue;
		have = 1, last = r.a;
		if (!disk) {
			tab_put(dc, r.a, r.b);
			continue;
		}
		bloom_set(dc, r.a);
		llm_buf_add(&out, &r.a, 8);
		llm_buf_add(&out, &r.b, 8);
		if (out.len >= (1u << 20)) {
			rc = llm_pwrite_all(dc->fd, out.p, out.len, off, "temporary n-gram file");
			off += out.len;
			llm_buf_reset(&out);
		}
	}
	if (rc == LLM_EOF)
		rc = disk && out.len ? llm_pwrite_all(dc->fd, out.p, out.len, off, "temporary n-gram file")
		                     : LLM_OK;
	llm_buf_release(&out);
	llm_xsort_free(dc->x);
	dc->x = NULL;
	return rc;
}

uint64_t llm_decon_ngrams(const llm_decon *dc) { return dc->ngrams; }
int llm_decon_on_disk(const llm_decon *dc) { return dc->fd >= 0; }

/* The item of key, or EMPTY. */
static uint64_t lookup(llm_decon *dc, uint64_t key, int *err)
{
	if (dc->tab) {
		for (size_t p = llm_mix64(key) & (dc->cap - 1); dc->tab[p].item != EMPTY;
		     p = (p + 1) & (dc->cap - 1))
			if (dc->tab[p].key == key)
				return dc->tab[p].item;
		return EMPTY;
	}
	if (dc->fd < 0 || !bloom_has(dc, key))
		return EMPTY;
	uint64_t lo = 0, hi = dc->ngrams;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2, e[2];
		int rc = llm_pread_all(dc->fd, e, 16, mid * 16, "temporary n-gram file");
		if (rc) {
			*err = rc;
			return EMPTY;
		}
		if (e[0] == key)
			return e[1];
		if (e[0] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return EMPTY;
}

size_t llm_decon_match(llm_decon *dc, const char *text, size_t n, const uint32_t **items,
                       size_t *nitems, int *err)
{
	*items = NULL;
	*nitems = 0;
	size_t nh = llm_shingle(&dc->sh, &dc->o, text, n), hits = 0, k = 0;
	if (dc->sh.nunits < dc->o.ngram || !dc->ngrams)
		return 0;
	for (size_t i = 0; i < nh; i++) {
		uint64_t it = lookup(dc, dc->sh.h[i], err);
		if (it == EMPTY)
			continue;
		hits++;
		size_t j = 0;
		while (j < k && dc->items[j] != (uint32_t)it)
			j++;
		if (j < k)
			continue;
		if (k == dc->icap) {
			dc->icap = dc->icap ? 2 * dc->icap : 16;
			dc->items = llm_realloc(dc->items, dc->icap * sizeof *dc->items);
		}
		dc->items[k++] = (uint32_t)it;
	}
	*items = dc->items;
	*nitems = k;
	return hits;
}
