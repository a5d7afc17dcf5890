/*
 * shingle.c — normalisation and shingling for dedup (see shingle.h for the contract).
 *
 * Normalisation works on code points through utf8.h's tables, so it treats CJK punctuation,
 * full-width forms and non-Latin digits like their ASCII counterparts. The output is built in
 * one pass with a pending-space flag, which gives whitespace collapsing and trimming for free.
 */
#include "shingle.h"

#include <stdlib.h>

#include "err.h"
#include "hash.h"
#include "utf8.h"

void llm_norm_text(const char *s, size_t n, llm_norm_level level, llm_buf *out)
{
	if (level == LLM_NORM_NONE) {
		llm_utf8_repair(s, n, out);
		return;
	}
	int pending_space = 0, in_digits = 0;
	size_t start = out->len;
	llm_buf_grow(out, n);
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		i += llm_utf8_decode(s + i, n - i, &cp);
		unsigned cls = llm_uc_class(cp);
		if (cls & (LLM_UC_SPACE | LLM_UC_CONTROL)) {
			pending_space = 1;
			in_digits = 0;
			continue;
		}
		if (cls & (LLM_UC_FORMAT | LLM_UC_ZEROWIDTH))
			continue; /* invisible: joins what is around it */
		if (level == LLM_NORM_FULL) {
			if (cls & LLM_UC_PUNCT)
				continue;
			cp = llm_uc_tolower(llm_uc_fold_width(cp));
			if (cls & LLM_UC_DIGIT) {
				if (in_digits && !pending_space)
					continue;
				cp = '0';
				in_digits = 1;
			} else {
				in_digits = 0;
			}
		}
		if (pending_space && out->len > start)
			llm_buf_addc(out, ' ');
		pending_space = 0;
		char enc[4];
		size_t k = llm_utf8_encode(cp, enc);
		llm_buf_add(out, enc, k);
	}
}

void llm_shingler_init(llm_shingler *sh)
{
	memset(sh, 0, sizeof *sh);
	llm_buf_init(&sh->norm);
}

void llm_shingler_release(llm_shingler *sh)
{
	llm_buf_release(&sh->norm);
	free(sh->ustart);
	free(sh->uend);
	free(sh->h);
	memset(sh, 0, sizeof *sh);
}

static void add_unit(llm_shingler *sh, size_t s, size_t e)
{
	if (sh->nunits == sh->ucap) {
		sh->ucap = sh->ucap ? 2 * sh->ucap : 1024;
		sh->ustart = llm_realloc(sh->ustart, sh->ucap * sizeof *sh->ustart);
		sh->uend = llm_realloc(sh->uend, sh->ucap * sizeof *sh->uend);
	}
	sh->ustart[sh->nunits] = (uint32_t)s;
	sh->uend[sh->nunits] = (uint32_t)e;
	sh->nunits++;
}

/* Cut the normalised text into units. Spaces are ASCII here unless the level is NONE, where
 * any Unicode white space separates words. */
static void segment(llm_shingler *sh, llm_units units)
{
	const char *p = sh->norm.p;
	size_t n = sh->norm.len, word = SIZE_MAX;
	sh->nunits = 0;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k = llm_utf8_decode(p + i, n - i, &cp);
		if (units == LLM_UNITS_CHAR) {
			add_unit(sh, i, i + k);
			i += k;
			continue;
		}
		unsigned cls = cp < 0x80 ? (cp == ' ' ? LLM_UC_SPACE : 0) : llm_uc_class(cp);
		int space = (cls & (LLM_UC_SPACE | LLM_UC_CONTROL)) != 0;
		int alone = units == LLM_UNITS_AUTO && (cls & (LLM_UC_HAN | LLM_UC_KANA));
		if ((space || alone) && word != SIZE_MAX) {
			add_unit(sh, word, i);
			word = SIZE_MAX;
		}
		if (alone)
			add_unit(sh, i, i + k);
		else if (!space && word == SIZE_MAX)
			word = i;
		i += k;
	}
	if (word != SIZE_MAX)
		add_unit(sh, word, n);
}

size_t llm_shingle(llm_shingler *sh, const llm_shingle_opts *o, const char *text, size_t n)
{
	llm_buf_reset(&sh->norm);
	llm_norm_text(text, n, o->norm, &sh->norm);
	if (sh->norm.len > UINT32_MAX)
		llm_buf_truncate(&sh->norm, llm_utf8_valid_prefix(sh->norm.p, UINT32_MAX));
	segment(sh, o->units);
	size_t ng = o->ngram ? o->ngram : 1;
	size_t count = sh->nunits == 0 ? 0 : sh->nunits < ng ? 1 : sh->nunits - ng + 1;
	if (count > sh->hcap) {
		sh->hcap = count + count / 2;
		sh->h = llm_realloc(sh->h, sh->hcap * sizeof *sh->h);
	}
	for (size_t i = 0; i < count; i++) {
		size_t last = i + ng - 1 < sh->nunits ? i + ng - 1 : sh->nunits - 1;
		size_t s = sh->ustart[i], e = sh->uend[last];
		sh->h[i] = llm_hash64(sh->norm.p + s, e - s, o->seed);
	}
	sh->nh = count;
	return count;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

size_t llm_u64_sort_unique(uint64_t *a, size_t n)
{
	if (n < 2)
		return n;
	qsort(a, n, sizeof *a, cmp_u64);
	size_t k = 1;
	for (size_t i = 1; i < n; i++)
		if (a[i] != a[k - 1])
			a[k++] = a[i];
	return k;
}

size_t llm_shingle_set(llm_shingler *sh)
{
	sh->nh = llm_u64_sort_unique(sh->h, sh->nh);
	return sh->nh;
}
