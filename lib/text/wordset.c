/*
 * wordset.c — stop-word sets (see wordset.h).
 */
#include "wordset.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/hash.h"
#include "core/io.h"
#include "core/utf8.h"

struct llm_wordset {
	uint64_t *keys; /* hash | 1, 0 = empty */
	int *idx;
	size_t cap, n;
	llm_buf words;  /* NUL-separated */
	size_t *ofs;
};

llm_wordset *llm_wordset_new(void)
{
	llm_wordset *ws = llm_calloc(1, sizeof *ws);
	ws->cap = 64;
	ws->keys = llm_calloc(ws->cap, sizeof *ws->keys);
	ws->idx = llm_calloc(ws->cap, sizeof *ws->idx);
	return ws;
}

void llm_wordset_free(llm_wordset *ws)
{
	if (!ws)
		return;
	free(ws->keys);
	free(ws->idx);
	free(ws->ofs);
	llm_buf_release(&ws->words);
	free(ws);
}

static int wordset_lookup(const llm_wordset *ws, const char *w, size_t n, uint64_t h)
{
	for (size_t i = h & (ws->cap - 1);; i = (i + 1) & (ws->cap - 1)) {
		if (!ws->keys[i])
			return -1;
		if (ws->keys[i] == h) {
			const char *s = ws->words.p + ws->ofs[ws->idx[i]];
			if (strlen(s) == n && memcmp(s, w, n) == 0)
				return ws->idx[i];
		}
	}
}

int llm_wordset_find(const llm_wordset *ws, const char *w, size_t n)
{
	return wordset_lookup(ws, w, n, llm_hash64(w, n, 0) | 1);
}

size_t llm_wordset_size(const llm_wordset *ws)
{
	return ws->n;
}

void llm_wordset_add(llm_wordset *ws, const char *w, size_t n)
{
	uint64_t h = llm_hash64(w, n, 0) | 1;
	if (wordset_lookup(ws, w, n, h) >= 0)
		return;
	if (2 * (ws->n + 1) > ws->cap) {
		size_t ncap = ws->cap * 2;
		uint64_t *k = llm_calloc(ncap, sizeof *k);
		int *ix = llm_calloc(ncap, sizeof *ix);
		for (size_t i = 0; i < ws->cap; i++) {
			if (!ws->keys[i])
				continue;
			size_t j = ws->keys[i] & (ncap - 1);
			while (k[j])
				j = (j + 1) & (ncap - 1);
			k[j] = ws->keys[i];
			ix[j] = ws->idx[i];
		}
		free(ws->keys);
		free(ws->idx);
		ws->keys = k;
		ws->idx = ix;
		ws->cap = ncap;
	}
	ws->ofs = llm_realloc(ws->ofs, (ws->n + 1) * sizeof *ws->ofs);
	ws->ofs[ws->n] = ws->words.len;
	llm_buf_add(&ws->words, w, n);
	llm_buf_addc(&ws->words, 0);
	size_t j = h & (ws->cap - 1);
	while (ws->keys[j])
		j = (j + 1) & (ws->cap - 1);
	ws->keys[j] = h;
	ws->idx[j] = (int)ws->n++;
}

int llm_wordset_load(llm_wordset *ws, const char *path)
{
	char *data;
	size_t len;
	int rc = llm_read_file(path, &data, &len);
	if (rc != LLM_OK)
		return rc;
	size_t lineno = 0;
	for (size_t i = 0; i < len;) {
		size_t e = i;
		while (e < len && data[e] != '\n')
			e++;
		lineno++;
		size_t a = i, b = e;
		while (a < b && (data[a] == ' ' || data[a] == '\t'))
			a++;
		while (b > a && (data[b - 1] == ' ' || data[b - 1] == '\t' || data[b - 1] == '\r'))
			b--;
		if (!llm_utf8_valid(data + a, b - a)) {
			free(data);
			return llm_fail(LLM_EFORMAT, "%s:%zu: invalid UTF-8", path, lineno);
		}
		if (b > a && data[a] != '#')
			llm_wordset_add(ws, data + a, b - a);
		i = e + 1;
	}
	free(data);
	return LLM_OK;
}