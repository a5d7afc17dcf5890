/*
 * shingle.c — normalisation and shingling for dedup (see shingle.h for the contract).
 *
 * Normalisation works on code points through utf8.h's tables, so it treats CJK punctuation,
 * full-width forms and non-Latin digits like their ASCII counterparts. The output is built in
 * one pass with a pending-space flag, which gives whitespace collapsing and trimming for free.
 */
#include "shingle.h"

#include <pthread.h>
#include <stdlib.h>

#include "core/err.h"
#include "core/hash.h"
#include "core/utf8.h"
#include "text/zhseg.h"

/* ASCII classes for the fast path (same answers as llm_uc_class for U+0000..U+007F). */
enum { A_SPACE = 1, A_PUNCT = 2, A_DIGIT = 4, A_UPPER = 8 };
static unsigned char ascii_class[128];

static void ascii_fill(void)
{
	for (int c = 0; c < 128; c++) {
		unsigned cls = llm_uc_class((uint32_t)c), a = 0;
		if (cls & (LLM_UC_SPACE | LLM_UC_CONTROL))
			a |= A_SPACE;
		if (cls & LLM_UC_PUNCT)
			a |= A_PUNCT;
		if (cls & LLM_UC_DIGIT)
			a |= A_DIGIT;
		if (cls & LLM_UC_UPPER)
			a |= A_UPPER;
		ascii_class[c] = (unsigned char)a;
	}
}

static void ascii_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, ascii_fill);
}

void llm_norm_text(const char *s, size_t n, llm_norm_level level, llm_buf *out)
{
	if (level == LLM_NORM_NONE) {
		llm_utf8_repair(s, n, out);
		return;
	}
	ascii_init();
	int full = level == LLM_NORM_FULL;
	int pending_space = 0, in_digits = 0;
	size_t start = out->len;
	/* Lower-casing can lengthen a character by one byte (U+023A -> U+2C65), and an invalid
	 * byte becomes a 3-byte U+FFFD: 3n bytes always suffice. */
	llm_buf_grow(out, 3 * n + 1);
	char *o = out->p + out->len;
	for (size_t i = 0; i < n;) {
		unsigned char ch = (unsigned char)s[i];
		uint32_t cp;
		unsigned cls;
		if (ch < 0x80) {
			unsigned a = ascii_class[ch];
			i++;
			if (a & A_SPACE) {
				pending_space = 1;
				in_digits = 0;
				continue;
			}
			if (full) {
				if (a & A_PUNCT)
					continue;
				if (a & A_DIGIT) {
					if (in_digits && !pending_space)
						continue;
					ch = '0';
					in_digits = 1;
				} else {
					in_digits = 0;
					if (a & A_UPPER)
						ch = (unsigned char)(ch + 32);
				}
			}
			if (pending_space && o > out->p + start)
				*o++ = ' ';
			pending_space = 0;
			*o++ = (char)ch;
			continue;
		}
		i += llm_utf8_decode(s + i, n - i, &cp);
		cls = llm_uc_class(cp);
		if (cls & (LLM_UC_SPACE | LLM_UC_CONTROL)) {
			pending_space = 1;
			in_digits = 0;
			continue;
		}
		if (cls & (LLM_UC_FORMAT | LLM_UC_ZEROWIDTH))
			continue; /* invisible: joins what is around it */
		if (full) {
			if (cls & LLM_UC_PUNCT)
				continue;
			/* Han, Kana and Hangul have no case and no full-width forms: skip the
			 * lookups for the bulk of CJK text. */
			if (!(cls & LLM_UC_CJK))
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
		if (pending_space && o > out->p + start)
			*o++ = ' ';
		pending_space = 0;
		o += llm_utf8_encode(cp, o);
	}
	out->len = (size_t)(o - out->p);
	out->p[out->len] = 0;
}

void llm_shingler_init(llm_shingler *sh)
{
	memset(sh, 0, sizeof *sh);
	llm_buf_init(&sh->norm);
}

void llm_shingler_release(llm_shingler *sh)
{
	llm_zhseg_free(sh->zh);
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

/* The end of the run of Han characters that starts at i. */
static size_t han_run(const char *p, size_t n, size_t i)
{
	while (i < n) {
		uint32_t cp;
		size_t k = llm_utf8_decode(p + i, n - i, &cp);
		if (cp < 0x80 || !(llm_uc_class(cp) & LLM_UC_HAN))
			break;
		i += k;
	}
	return i;
}

/*
 * A run of Han characters as units: the words of the segmenter (jieba's, zhseg.h) when its
 * dictionary can be loaded, else one unit per character. The dictionary is loaded by the
 * first Chinese text of the process, so text without Han costs nothing.
 */
static void han_units(llm_shingler *sh, size_t a, size_t b)
{
	if (!sh->zh && !sh->no_dict) {
		const llm_zhseg_dict *d;
		if (llm_zhseg_dict_default(&d) == LLM_OK)
			sh->zh = llm_zhseg_new(d);
		else
			sh->no_dict = 1;
	}
	if (!sh->zh) {
		for (size_t i = a; i < b;) {
			uint32_t cp;
			size_t k = llm_utf8_decode(sh->norm.p + i, b - i, &cp);
			add_unit(sh, i, i + k);
			i += k;
		}
		return;
	}
	const llm_zhseg_span *t;
	size_t nt = llm_zhseg_cut(sh->zh, sh->norm.p + a, b - a, &t);
	for (size_t j = 0; j < nt; j++)
		add_unit(sh, a + t[j].off, a + t[j].off + t[j].len);
}

/* Cut the normalised text into units. Spaces are ASCII here unless the level is NONE, where
 * any Unicode white space separates words. */
static void segment(llm_shingler *sh, llm_units units)
{
	const char *p = sh->norm.p;
	size_t n = sh->norm.len, word = SIZE_MAX;
	sh->nunits = 0;
	for (size_t i = 0; i < n;) {
		uint32_t cp = (unsigned char)p[i];
		size_t k = cp < 0x80 ? 1 : llm_utf8_decode(p + i, n - i, &cp);
		if (units == LLM_UNITS_CHAR) {
			add_unit(sh, i, i + k);
			i += k;
			continue;
		}
		unsigned cls = cp < 0x80 ? (cp == ' ' ? LLM_UC_SPACE : 0) : llm_uc_class(cp);
		int space = (cls & (LLM_UC_SPACE | LLM_UC_CONTROL)) != 0;
		int han = units == LLM_UNITS_AUTO && (cls & LLM_UC_HAN);
		int alone = (units == LLM_UNITS_AUTO && (cls & LLM_UC_KANA) && !han) ||
		            (units == LLM_UNITS_AUTO_CHAR && (cls & (LLM_UC_HAN | LLM_UC_KANA)));
		if ((space || alone || han) && word != SIZE_MAX) {
			add_unit(sh, word, i);
			word = SIZE_MAX;
		}
		if (han) {
			size_t e = han_run(p, n, i);
			han_units(sh, i, e);
			i = e;
			continue;
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
