/*
 * pubdate.c — the publication date of a web page (see pubdate.h for the sources and order).
 */
#include "pubdate.h"

#include <string.h>
#include <strings.h>

/* Dated text is looked for this far after the first <h1>: a page's own date sits by its title,
 * the dates further down are of comments and of other articles. */
#define TEXT_WINDOW (64u << 10)

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_alpha(char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

/* The number of k digits at s (k <= n), or -1. */
static int num(const char *s, size_t n, size_t k)
{
	if (n < k)
		return -1;
	int v = 0;
	for (size_t i = 0; i < k; i++) {
		if (!is_digit(s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/* A number of 1 or 2 digits at s[*i], not followed by a third; -1 if none. */
static int num12(const char *s, size_t n, size_t *i)
{
	size_t k = 0;
	while (*i + k < n && k < 3 && is_digit(s[*i + k]))
		k++;
	if (k == 0 || k > 2)
		return -1;
	int v = num(s + *i, n - *i, k);
	*i += k;
	return v;
}

static bool valid(int y, int m, int d)
{
	static const int mdays[12] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	if (y < 1990 || y > 2099 || m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
		return false;
	return !(m == 2 && d == 29 && (y % 4 != 0 || (y % 100 == 0 && y % 400 != 0)));
}

static bool emit(int y, int m, int d, char out[11])
{
	if (!valid(y, m, d))
		return false;
	const int v[3] = { y, m, d }, w[3] = { 4, 2, 2 };
	char *o = out;
	for (int k = 0; k < 3; k++) {
		for (int j = w[k] - 1, x = v[k]; j >= 0; j--, x /= 10)
			o[j] = (char)('0' + x % 10);
		o += w[k];
		*o++ = k < 2 ? '-' : 0;
	}
	return true;
}

/* An English month name (or its three-letter abbreviation, "Sept" too) at s, its length in
 * *len; 0 if none. */
static int month_name(const char *s, size_t n, size_t *len)
{
	static const char *const names[12] = { "january", "february", "march",     "april",
		                                "may",     "june",     "july",      "august",
		                                "september", "october", "november", "december" };
	size_t w = 0;
	while (w < n && w < 10 && is_alpha(s[w]))
		w++;
	if (w < 3 || (w < n && is_alpha(s[w])))
		return 0;
	for (int m = 0; m < 12; m++) {
		size_t full = strlen(names[m]);
		if ((w == full || w == 3 || (m == 8 && w == 4)) && strncasecmp(s, names[m], w) == 0) {
			*len = w;
			return m + 1;
		}
	}
	return 0;
}

#define NIAN "\xe5\xb9\xb4" /* 年 */
#define YUE "\xe6\x9c\x88"  /* 月 */
#define RI "\xe6\x97\xa5"   /* 日 */

static size_t skip_spaces(const char *s, size_t n, size_t i)
{
	while (i < n && is_space(s[i]))
		i++;
	return i;
}

static bool lit(const char *s, size_t n, size_t i, const char *w)
{
	size_t k = strlen(w);
	return n - i >= k && memcmp(s + i, w, k) == 0;
}

/* "12 May 2023", "May 12, 2023", "May 12th 2023", "Nov. 19, 2019". */
static bool parse_english(const char *s, size_t n, char out[11])
{
	size_t i = 0, ml;
	int d = -1, m;
	if (is_digit(s[0])) {
		d = num12(s, n, &i);
		if (d < 0)
			return false;
		i = skip_spaces(s, n, i);
	}
	if (i >= n || !(m = month_name(s + i, n - i, &ml)))
		return false;
	i += ml;
	if (i < n && s[i] == '.')
		i++;
	i = skip_spaces(s, n, i);
	if (d < 0) {
		if ((d = num12(s, n, &i)) < 0)
			return false;
		for (int k = 0; k < 2 && i < n && is_alpha(s[i]); k++) /* st, nd, rd, th */
			i++;
		if (i < n && s[i] == ',')
			i++;
		i = skip_spaces(s, n, i);
	}
	int y = num(s + i, n - i, 4);
	if (y < 0 || (i + 4 < n && is_digit(s[i + 4])))
		return false;
	return emit(y, m, d, out);
}

bool llm_pubdate_parse(const char *s, size_t n, char out[11])
{
	size_t i = skip_spaces(s, n, 0);
	s += i;
	n -= i;
	if (n == 0)
		return false;
	int y = num(s, n, 4);
	if (y < 0)
		return parse_english(s, n, out);
	if (n >= 8 && num(s, n, 8) >= 0 && (n == 8 || !is_digit(s[8])))
		return emit(y, num(s + 4, 2, 2), num(s + 6, 2, 2), out);
	if (n > 4 && is_digit(s[4]))
		return false;
	i = skip_spaces(s, n, 4);
	if (lit(s, n, i, NIAN)) { /* 2023年5月12日, spaces allowed between the parts */
		i = skip_spaces(s, n, i + 3);
		int m = num12(s, n, &i);
		i = skip_spaces(s, n, i);
		if (m < 0 || !lit(s, n, i, YUE))
			return false;
		i = skip_spaces(s, n, i + 3);
		int d = num12(s, n, &i);
		i = skip_spaces(s, n, i);
		return d >= 0 && (lit(s, n, i, RI) || lit(s, n, i, "\xe5\x8f\xb7")) /* 日, 号 */ &&
		       emit(y, m, d, out);
	}
	i = 4;
	if (i >= n || (s[i] != '-' && s[i] != '/' && s[i] != '.'))
		return false;
	char sep = s[i++];
	int m = num12(s, n, &i);
	if (m < 0 || i >= n || s[i] != sep)
		return false;
	i++;
	int d = num12(s, n, &i);
	return d >= 0 && emit(y, m, d, out);
}

/* ------------------------------------------------------------------------------------------ */
/* Tags */

typedef struct {
	const char *p;
	size_t n;
} span;

typedef struct {
	char name[12];
	span key[4];    /* property, name, itemprop, http-equiv */
	span content;   /* content, else datetime */
	span datetime;
	span type;
	bool pubdate;   /* a bare pubdate attribute (<time pubdate>) */
	bool published; /* itemprop="datePublished" */
} tag;

static bool span_is(span v, const char *w)
{
	return v.n == strlen(w) && strncasecmp(v.p, w, v.n) == 0;
}

/* Parse the tag at s[i] == '<' into t; returns the index after its '>' (n if it runs out). */
static size_t read_tag(const char *s, size_t n, size_t i, tag *t)
{
	memset(t, 0, sizeof *t);
	i++;
	size_t k = 0;
	while (i < n && (is_alpha(s[i]) || is_digit(s[i]) || s[i] == ':' || s[i] == '-')) {
		if (k + 1 < sizeof t->name)
			t->name[k++] = (char)(s[i] | 0x20);
		i++;
	}
	t->name[k] = 0;
	while (i < n && s[i] != '>') {
		if (is_space(s[i]) || s[i] == '/') {
			i++;
			continue;
		}
		size_t a = i;
		while (i < n && !is_space(s[i]) && s[i] != '=' && s[i] != '>' && s[i] != '/')
			i++;
		span name = { s + a, i - a }, val = { NULL, 0 };
		i = skip_spaces(s, n, i);
		if (i < n && s[i] == '=') {
			i = skip_spaces(s, n, i + 1);
			if (i < n && (s[i] == '"' || s[i] == '\'')) {
				char q = s[i++];
				const char *e = memchr(s + i, q, n - i);
				size_t end = e ? (size_t)(e - s) : n;
				val = (span){ s + i, end - i };
				i = end < n ? end + 1 : n;
			} else {
				a = i;
				while (i < n && !is_space(s[i]) && s[i] != '>')
					i++;
				val = (span){ s + a, i - a };
			}
		}
		if (span_is(name, "property"))
			t->key[0] = val;
		else if (span_is(name, "name"))
			t->key[1] = val;
		else if (span_is(name, "itemprop")) {
			t->key[2] = val;
			t->published = span_is(val, "datePublished");
		} else if (span_is(name, "http-equiv"))
			t->key[3] = val;
		else if (span_is(name, "content"))
			t->content = val;
		else if (span_is(name, "datetime"))
			t->datetime = val;
		else if (span_is(name, "type"))
			t->type = val;
		else if (span_is(name, "pubdate"))
			t->pubdate = true;
	}
	return i < n ? i + 1 : n;
}

static bool meta_key(span v)
{
	static const char *const keys[] = {
		"article:published_time", "og:published_time", "og:article:published_time",
		"dc.date", "dc.date.issued", "dc.date.created", "dcterms.created", "dcterms.issued",
		"dcterms.date", "pubdate", "publishdate", "publish-date", "publish_date", "date",
		"datepublished", "parsely-pub-date", "sailthru.date", "citation_date",
		"citation_publication_date", "article.published", "publication_date",
	};
	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
		if (span_is(v, keys[k]))
			return true;
	return false;
}

/* Case-insensitive search of the ASCII word w in s[i..n). */
static size_t find_ci(const char *s, size_t n, size_t i, const char *w)
{
	size_t k = strlen(w);
	for (; i + k <= n; i++) {
		const char *p = memchr(s + i, w[0], n - i);
		const char *q = is_alpha(w[0]) ? memchr(s + i, w[0] ^ 0x20, n - i) : NULL;
		if (!p || (q && q < p))
			p = q;
		if (!p || (size_t)(p - s) + k > n)
			return n;
		i = (size_t)(p - s);
		if (strncasecmp(s + i, w, k) == 0)
			return i;
	}
	return n;
}

/* The "datePublished" member of the JSON-LD in s[0..n). */
static bool jsonld_date(const char *s, size_t n, char out[11])
{
	static const char key[] = "\"datePublished\"";
	for (size_t i = 0; i + sizeof key - 1 <= n; i++) {
		const char *p = memchr(s + i, '"', n - i);
		if (!p)
			return false;
		i = (size_t)(p - s);
		if (n - i < sizeof key - 1 || memcmp(s + i, key, sizeof key - 1) != 0)
			continue;
		size_t j = skip_spaces(s, n, i + sizeof key - 1);
		if (j < n && s[j] == ':') {
			j = skip_spaces(s, n, j + 1);
			if (j < n && s[j] == '"' && llm_pubdate_parse(s + j + 1, n - j - 1, out))
				return true;
		}
	}
	return false;
}

/* ------------------------------------------------------------------------------------------ */
/* URL and text */

static bool url_date(const char *u, size_t n, char out[11])
{
	for (size_t i = 0; i + 1 < n; i++) {
		if (u[i] != '/' || !is_digit(u[i + 1]))
			continue;
		const char *s = u + i + 1;
		size_t m = n - i - 1;
		int y = num(s, m, 4);
		if (y < 0)
			continue;
		char sep = m > 4 ? s[4] : 0;
		size_t end;
		int mo, d;
		if (sep == '/' || sep == '-') { /* /2023/05/12/ or /2023-05-12 */
			if (num(s + 5, m - 5, 2) < 0 || m < 10 || s[7] != sep)
				continue;
			mo = num(s + 5, 2, 2);
			d = num(s + 8, m - 8, 2);
			end = 10;
		} else if (num(s, m, 8) >= 0) { /* /20230512 */
			mo = num(s + 4, 2, 2);
			d = num(s + 6, 2, 2);
			end = 8;
		} else
			continue;
		if (d < 0 || (end < m && s[end] != '/' && s[end] != '-' && s[end] != '_' &&
		              s[end] != '.' && s[end] != '?'))
			continue;
		if (emit(y, mo, d, out))
			return true;
	}
	return false;
}

/* After a date label: spaces, ':' or '：', "on", and tags, within a few bytes. */
static size_t after_label(const char *s, size_t n, size_t i)
{
	size_t lim = i + 96 < n ? i + 96 : n;
	while (i < lim) {
		if (is_space(s[i]) || s[i] == ':')
			i++;
		else if (lit(s, lim, i, "\xef\xbc\x9a")) /* ： */
			i += 3;
		else if (lim - i >= 3 && strncasecmp(s + i, "on ", 3) == 0)
			i += 3;
		else if (s[i] == '<') {
			const char *e = memchr(s + i, '>', lim - i);
			if (!e)
				return lim;
			i = (size_t)(e - s) + 1;
		} else
			break;
	}
	return i;
}

static bool text_date(const char *s, size_t n, char out[11])
{
	static const char *const labels[] = {
		"\xe5\x8f\x91\xe5\xb8\x83\xe6\x97\xb6\xe9\x97\xb4", /* 发布时间 */
		"\xe5\x8f\x91\xe5\xb8\x83\xe6\x97\xa5\xe6\x9c\x9f", /* 发布日期 */
		"\xe5\x8f\x91\xe8\xa1\xa8\xe6\x97\xb6\xe9\x97\xb4", /* 发表时间 */
		"\xe5\x8f\x91\xe8\xa1\xa8\xe4\xba\x8e",             /* 发表于 */
		"\xe6\x97\xb6\xe9\x97\xb4",                         /* 时间 */
		"\xe6\x97\xa5\xe6\x9c\x9f",                         /* 日期 */
	};
	static const char *const en[] = { "published", "posted", "updated" };
	const char *cn = NULL; /* the first 2023年5月12日, should no labelled date come */
	char cnd[11];
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == 0xe5 || c == 0xe6) {
			for (size_t k = 0; k < sizeof labels / sizeof labels[0]; k++)
				if (lit(s, n, i, labels[k])) {
					size_t j = after_label(s, n, i + strlen(labels[k]));
					if (llm_pubdate_parse(s + j, n - j, out))
						return true;
				}
		} else if ((c | 0x20) == 'p' || (c | 0x20) == 'u') {
			for (size_t k = 0; k < sizeof en / sizeof en[0]; k++) {
				size_t l = strlen(en[k]);
				if (n - i >= l && strncasecmp(s + i, en[k], l) == 0 &&
				    (i == 0 || !is_alpha(s[i - 1]))) {
					size_t j = after_label(s, n, i + l);
					if (llm_pubdate_parse(s + j, n - j, out))
						return true;
				}
			}
		} else if (!cn && is_digit(s[i]) && (i == 0 || !is_digit(s[i - 1])) &&
		           lit(s, n, i + 4 <= n ? i + 4 : n, NIAN) &&
		           llm_pubdate_parse(s + i, n - i, cnd))
			cn = s + i;
	}
	if (!cn)
		return false;
	memcpy(out, cnd, 11);
	return true;
}

/* ------------------------------------------------------------------------------------------ */

bool llm_pubdate_find(const char *s, size_t n, const char *url, size_t ulen, char out[11])
{
	char first_time[11] = "";
	size_t h1 = n;
	tag t;
	for (size_t i = 0; i < n;) {
		const char *p = memchr(s + i, '<', n - i);
		if (!p)
			break;
		i = (size_t)(p - s);
		if (i + 1 < n && s[i + 1] == '!') { /* comments, doctype */
			size_t e = lit(s, n, i, "<!--") ? find_ci(s, n, i + 4, "-->") : i + 2;
			i = e < n ? e + 1 : n;
			continue;
		}
		if (i + 1 >= n || !is_alpha(s[i + 1])) {
			i++;
			continue;
		}
		size_t start = i;
		i = read_tag(s, n, i, &t);
		char d[11];
		if (strcmp(t.name, "script") == 0 || strcmp(t.name, "style") == 0) {
			size_t e = find_ci(s, n, i, strcmp(t.name, "script") == 0 ? "</script" : "</style");
			if (t.type.n && memmem(t.type.p, t.type.n, "ld+json", 7) &&
			    jsonld_date(s + i, e - i, out))
				return true;
			i = e;
			continue;
		}
		span v = t.content.n ? t.content : t.datetime;
		if (t.published && llm_pubdate_parse(v.p, v.n, out))
			return true;
		if (strcmp(t.name, "meta") == 0) {
			for (int k = 0; k < 4; k++)
				if (t.key[k].n && meta_key(t.key[k]) &&
				    llm_pubdate_parse(t.content.p, t.content.n, out))
					return true;
		} else if (strcmp(t.name, "time") == 0 && t.datetime.n) {
			if (t.pubdate && llm_pubdate_parse(t.datetime.p, t.datetime.n, out))
				return true;
			if (!first_time[0] && llm_pubdate_parse(t.datetime.p, t.datetime.n, d))
				memcpy(first_time, d, 11);
		} else if (h1 == n && strcmp(t.name, "h1") == 0)
			h1 = start;
	}
	if (url && url_date(url, ulen, out))
		return true;
	if (first_time[0]) {
		memcpy(out, first_time, 11);
		return true;
	}
	size_t from = h1 < n ? h1 : 0;
	size_t to = n - from > TEXT_WINDOW ? from + TEXT_WINDOW : n;
	return text_date(s + from, to - from, out);
}
