/*
 * toxlang.c — per-language values (see toxlang.h).
 *
 * A linear search over at most 64 short tags: a document stream names a handful of
 * languages, and the tags compare in one or two words each.
 */
#include "toxlang.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"

char *llm_toxlang_key(const char *lang, size_t len, char key[LLM_TOXLANG_TAG])
{
	size_t n = 0;
	while (lang && n < len && n < LLM_TOXLANG_TAG - 1 && lang[n] != '-' && lang[n] != '_') {
		char c = lang[n];
		key[n++] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
	}
	if (n == 0)
		memcpy(key, "und", 4);
	else
		key[n] = 0;
	return key;
}

void llm_toxlang_init(llm_toxlang *m, double value)
{
	m->dflt = value;
	m->dflt_set = 0;
	m->n = 0;
}

int llm_toxlang_set(llm_toxlang *m, const char *lang, double value)
{
	if (!lang) {
		m->dflt = value;
		m->dflt_set = 1;
		return LLM_OK;
	}
	char key[LLM_TOXLANG_TAG];
	llm_toxlang_key(lang, strlen(lang), key);
	for (int i = 0; i < m->n; i++)
		if (strcmp(m->by[i].lang, key) == 0) {
			m->by[i].value = value;
			return LLM_OK;
		}
	if (m->n == LLM_TOXLANG_MAX)
		return llm_fail(LLM_EINVAL, "more than %d languages", LLM_TOXLANG_MAX);
	memcpy(m->by[m->n].lang, key, sizeof key);
	m->by[m->n++].value = value;
	return LLM_OK;
}

static int is_tag(const char *s, size_t n)
{
	if (n == 0 || n >= LLM_TOXLANG_TAG)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && (c == '-' || c == '_' ||
		                                                                      (c >= '0' && c <= '9')))))
			return 0;
	}
	return 1;
}

int llm_toxlang_parse(llm_toxlang *m, const char *spec, double lo, double hi)
{
	const char *p = spec;
	for (;;) {
		size_t n = strcspn(p, ",");
		const char *eq = memchr(p, '=', n);
		const char *v = eq ? eq + 1 : p;
		size_t vn = n - (size_t)(v - p);
		char num[64], tag[LLM_TOXLANG_TAG] = "";
		if (eq) {
			if (!is_tag(p, (size_t)(eq - p)))
				return llm_fail(LLM_EINVAL, "'%.*s': not a language tag", (int)(eq - p), p);
			memcpy(tag, p, (size_t)(eq - p));
			tag[eq - p] = 0;
		}
		if (vn == 0 || vn >= sizeof num)
			return llm_fail(LLM_EINVAL, "'%.*s': expected VALUE or LANG=VALUE", (int)n, p);
		memcpy(num, v, vn);
		num[vn] = 0;
		char *end;
		errno = 0;
		double x = strtod(num, &end);
		if (*end || errno || !isfinite(x) || x < lo || x > hi)
			return llm_fail(LLM_EINVAL, "'%s': not a number in [%g, %g]", num, lo, hi);
		int rc = llm_toxlang_set(m, eq ? tag : NULL, x);
		if (rc)
			return rc;
		if (!p[n])
			return LLM_OK;
		p += n + 1;
	}
}

/* The entry for lang[0..len), or -1. */
static int find(const llm_toxlang *m, const char *lang, size_t len)
{
	if (!lang || len == 0 || m->n == 0)
		return -1;
	char key[LLM_TOXLANG_TAG];
	llm_toxlang_key(lang, len, key);
	for (int i = 0; i < m->n; i++)
		if (strcmp(m->by[i].lang, key) == 0)
			return i;
	return -1;
}

double llm_toxlang_get(const llm_toxlang *m, const char *lang, size_t len)
{
	int i = find(m, lang, len);
	return i < 0 ? m->dflt : m->by[i].value;
}

int llm_toxlang_named(const llm_toxlang *m, const char *lang, size_t len)
{
	return find(m, lang, len) >= 0;
}

static int cmp_tag(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void llm_toxlang_format(const llm_toxlang *m, llm_buf *out)
{
	const char *tags[LLM_TOXLANG_MAX];
	for (int i = 0; i < m->n; i++)
		tags[i] = m->by[i].lang;
	qsort(tags, (size_t)m->n, sizeof *tags, cmp_tag);
	llm_buf_addf(out, "%g", m->dflt);
	for (int i = 0; i < m->n; i++)
		llm_buf_addf(out, ",%s=%g", tags[i], llm_toxlang_get(m, tags[i], strlen(tags[i])));
}
