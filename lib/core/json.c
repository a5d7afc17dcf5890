/*
 * json.c — validating JSON scanner for JSONL records, string (un)escaping, record editing.
 *
 * The scanner is a recursive descent over the text with an explicit depth limit; it records
 * spans, never copies. Strings dominate JSONL documents, so the string scanner skips 8 bytes at
 * a time (SSE2, or 8 with a SWAR test) while none of them is '"', '\\' or a control character;
 * UTF-8 is validated once for the whole text beforehand (utf8.c), which is faster than
 * interleaving it with the scan.
 */
#include "json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "fmt.h"
#include "utf8.h"

#define MAX_DEPTH 512
#define BAD ((size_t)-1)

typedef struct {
	const char *s;
	size_t n;
	size_t err_pos;
	const char *err_msg;
} scan;

static size_t fail_at(scan *sc, size_t pos, const char *msg)
{
	sc->err_pos = pos;
	sc->err_msg = msg;
	return BAD;
}

static inline size_t skip_ws(const char *s, size_t i, size_t n)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	return i;
}

static inline int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int hex4(const char *p, uint32_t *out)
{
	uint32_t v = 0;
	for (int k = 0; k < 4; k++) {
		int h = hexval(p[k]);
		if (h < 0)
			return -1;
		v = v << 4 | (uint32_t)h;
	}
	*out = v;
	return 0;
}

/*
 * Where the string scanner must look closer: '"', '\\' or a control character. UTF-8 was
 * validated for the whole text before scanning, so bytes >= 0x80 are ordinary string bytes.
 * Returns a mask with a bit for (at least) the first such byte of the next 16 / 8 bytes.
 */
#ifdef __SSE2__
#include <emmintrin.h>
#define SCAN_STEP 16
#define SPECIAL_SHIFT 0 /* a bit a byte */
static inline unsigned special_bytes(const char *p)
{
	__m128i v = _mm_loadu_si128((const __m128i *)p);
	__m128i q = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
	__m128i b = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
	/* v < 0x20 as signed bytes catches controls and every byte >= 0x80; keep the former. */
	__m128i ctl = _mm_andnot_si128(v, _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
	return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(q, b), ctl));
}
#else
#define SCAN_STEP 8
#define SPECIAL_SHIFT 3 /* the high bit of each byte */
static inline uint64_t special_bytes(const char *p)
{
	const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
	uint64_t w;
	memcpy(&w, p, 8);
	uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
	uint64_t zq = (q - ones) & ~q, zb = (b - ones) & ~b;
	uint64_t ctl = (w - ones * 0x20) & ~w;
	return (zq | zb | ctl) & high;
}
#endif

/* s[i] == '"'. Returns the index after the closing quote. */
static size_t scan_string(scan *sc, size_t i)
{
	const char *s = sc->s;
	size_t n = sc->n;
	i++;
	for (;;) {
		for (; i + SCAN_STEP <= n; i += SCAN_STEP) {
			uint64_t m = special_bytes(s + i);
			if (m) { /* to that byte: the rest of the block is scanned again after it */
				i += (size_t)__builtin_ctzll(m) >> SPECIAL_SHIFT;
				break;
			}
		}
		if (i >= n)
			return fail_at(sc, n, "unterminated string");
		unsigned char c = (unsigned char)s[i];
		if (c == '"')
			return i + 1;
		if (c == '\\') {
			if (i + 1 >= n)
				return fail_at(sc, n, "unterminated string");
			char e = s[i + 1];
			if (e == 'u') {
				uint32_t u;
				if (i + 6 > n || hex4(s + i + 2, &u))
					return fail_at(sc, i, "invalid \\u escape");
				i += 6;
			} else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' ||
			           e == 'r' || e == 't') {
				i += 2;
			} else {
				return fail_at(sc, i, "invalid escape");
			}
		} else if (c < 0x20) {
			return fail_at(sc, i, "control character in string");
		} else {
			i++;
		}
	}
}

static size_t scan_number(scan *sc, size_t i)
{
	const char *s = sc->s;
	size_t n = sc->n, start = i;
	if (i < n && s[i] == '-')
		i++;
	if (i < n && s[i] == '0') {
		i++;
	} else if (i < n && s[i] >= '1' && s[i] <= '9') {
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	} else {
		return fail_at(sc, start, "invalid number");
	}
	if (i < n && s[i] == '.') {
		i++;
		if (i >= n || s[i] < '0' || s[i] > '9')
			return fail_at(sc, i, "invalid number");
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= n || s[i] < '0' || s[i] > '9')
			return fail_at(sc, i, "invalid number");
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	return i;
}

static size_t scan_value(scan *sc, size_t i, int depth, llm_json_type *type);

static size_t scan_container(scan *sc, size_t i, int depth, int object)
{
	const char *s = sc->s;
	size_t n = sc->n;
	char close = object ? '}' : ']';
	if (depth >= MAX_DEPTH)
		return fail_at(sc, i, "nesting too deep");
	i = skip_ws(s, i + 1, n);
	if (i < n && s[i] == close)
		return i + 1;
	for (;;) {
		llm_json_type t;
		if (object) {
			if (i >= n || s[i] != '"')
				return fail_at(sc, i, "expected string key");
			if ((i = scan_string(sc, i)) == BAD)
				return BAD;
			i = skip_ws(s, i, n);
			if (i >= n || s[i] != ':')
				return fail_at(sc, i, "expected ':'");
			i = skip_ws(s, i + 1, n);
		}
		if ((i = scan_value(sc, i, depth + 1, &t)) == BAD)
			return BAD;
		i = skip_ws(s, i, n);
		if (i < n && s[i] == ',') {
			i = skip_ws(s, i + 1, n);
			continue;
		}
		if (i < n && s[i] == close)
			return i + 1;
		return fail_at(sc, i, object ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static size_t literal(scan *sc, size_t i, const char *word)
{
	size_t k = strlen(word);
	if (i + k > sc->n || memcmp(sc->s + i, word, k) != 0)
		return fail_at(sc, i, "invalid literal");
	return i + k;
}

static size_t scan_value(scan *sc, size_t i, int depth, llm_json_type *type)
{
	if (i >= sc->n)
		return fail_at(sc, i, "expected a value");
	switch (sc->s[i]) {
	case '"': *type = LLM_JSON_STRING; return scan_string(sc, i);
	case '{': *type = LLM_JSON_OBJECT; return scan_container(sc, i, depth, 1);
	case '[': *type = LLM_JSON_ARRAY; return scan_container(sc, i, depth, 0);
	case 't': *type = LLM_JSON_TRUE; return literal(sc, i, "true");
	case 'f': *type = LLM_JSON_FALSE; return literal(sc, i, "false");
	case 'n': *type = LLM_JSON_NULL; return literal(sc, i, "null");
	default: *type = LLM_JSON_NUMBER; return scan_number(sc, i);
	}
}

void llm_json_rec_init(llm_json_rec *rec)
{
	memset(rec, 0, sizeof *rec);
}

void llm_json_rec_release(llm_json_rec *rec)
{
	free(rec->fields);
	llm_json_rec_init(rec);
}

int llm_json_parse_value(const char *s, size_t n, llm_json_val *v, size_t *err_pos, const char **err_msg)
{
	scan sc = { s, n, 0, NULL };
	size_t i = skip_ws(s, 0, n), start = i, end, valid = llm_utf8_valid_prefix(s, n);
	if (valid < n) {
		if (err_pos)
			*err_pos = valid;
		if (err_msg)
			*err_msg = "invalid UTF-8";
		return LLM_EFORMAT;
	}
	llm_json_type t = LLM_JSON_INVALID;
	if ((end = scan_value(&sc, i, 0, &t)) != BAD && skip_ws(s, end, n) != n)
		end = fail_at(&sc, skip_ws(s, end, n), "unexpected data after the value");
	if (end == BAD) {
		if (err_pos)
			*err_pos = sc.err_pos;
		if (err_msg)
			*err_msg = sc.err_msg;
		return LLM_EFORMAT;
	}
	v->p = s + start;
	v->len = end - start;
	v->type = t;
	return LLM_OK;
}

int llm_json_parse(llm_json_rec *rec, const char *s, size_t n)
{
	scan sc = { s, n, 0, NULL };
	rec->src = s;
	rec->len = n;
	rec->nfields = 0;
	rec->err_msg = NULL;
	size_t i = llm_utf8_valid_prefix(s, n);
	if (i < n) {
		rec->err_pos = i;
		rec->err_msg = "invalid UTF-8";
		return LLM_EFORMAT;
	}
	i = skip_ws(s, 0, n);
	if (i >= n || s[i] != '{') {
		rec->err_pos = i;
		rec->err_msg = i >= n ? "empty line" : "expected a JSON object";
		return LLM_EFORMAT;
	}
	i = skip_ws(s, i + 1, n);
	if (i < n && s[i] == '}') {
		i++;
		goto end;
	}
	for (;;) {
		llm_json_field f;
		if (i >= n || s[i] != '"') {
			fail_at(&sc, i, "expected string key");
			goto bad;
		}
		size_t k = scan_string(&sc, i);
		if (k == BAD)
			goto bad;
		f.key = (llm_json_val){ s + i, k - i, LLM_JSON_STRING };
		i = skip_ws(s, k, n);
		if (i >= n || s[i] != ':') {
			fail_at(&sc, i, "expected ':'");
			goto bad;
		}
		i = skip_ws(s, i + 1, n);
		size_t e = scan_value(&sc, i, 1, &f.val.type);
		if (e == BAD)
			goto bad;
		f.val.p = s + i;
		f.val.len = e - i;
		if (rec->nfields == rec->cap) {
			rec->cap = rec->cap ? rec->cap * 2 : 16;
			rec->fields = llm_realloc(rec->fields, rec->cap * sizeof *rec->fields);
		}
		rec->fields[rec->nfields++] = f;
		i = skip_ws(s, e, n);
		if (i < n && s[i] == ',') {
			i = skip_ws(s, i + 1, n);
			continue;
		}
		if (i < n && s[i] == '}') {
			i++;
			break;
		}
		fail_at(&sc, i, "expected ',' or '}'");
		goto bad;
	}
end:
	i = skip_ws(s, i, n);
	if (i == n)
		return LLM_OK;
	fail_at(&sc, i, "unexpected data after the object");
bad:
	rec->err_pos = sc.err_pos;
	rec->err_msg = sc.err_msg;
	return LLM_EFORMAT;
}

/* Does the key string value (quotes included) equal s[0..n) after unescaping? */
static int key_eq(const llm_json_val *key, const char *s, size_t n)
{
	const char *k = key->p + 1;
	size_t klen = key->len - 2;
	/* Unescaping never lengthens: a key as long as s is s only without escapes, a shorter one
	 * never is, and a longer one only with them. Most keys a record is asked for differ in
	 * their length or first byte. */
	if (klen <= n)
		return klen == n && memcmp(k, s, n) == 0 && !memchr(k, '\\', n);
	if (!memchr(k, '\\', klen))
		return 0;
	llm_buf b = LLM_BUF_INIT;
	llm_json_str(key, &b);
	int eq = b.len == n && memcmp(b.p, s, n) == 0;
	llm_buf_release(&b);
	return eq;
}

const llm_json_val *llm_json_get(const llm_json_rec *rec, const char *key)
{
	size_t n = strlen(key);
	for (size_t i = rec->nfields; i-- > 0;)
		if (key_eq(&rec->fields[i].key, key, n))
			return &rec->fields[i].val;
	return NULL;
}

int llm_json_str(const llm_json_val *v, llm_buf *out)
{
	if (v->type != LLM_JSON_STRING)
		return llm_fail(LLM_EINVAL, "not a string");
	const char *s = v->p + 1, *end = v->p + v->len - 1;
	llm_buf_grow(out, end - s);
	while (s < end) {
		const char *bs = memchr(s, '\\', end - s);
		if (!bs) {
			llm_buf_add(out, s, end - s);
			break;
		}
		llm_buf_add(out, s, bs - s);
		s = bs + 2;
		char c;
		switch (bs[1]) {
		case 'b': c = '\b'; break;
		case 'f': c = '\f'; break;
		case 'n': c = '\n'; break;
		case 'r': c = '\r'; break;
		case 't': c = '\t'; break;
		case 'u': {
			uint32_t u = 0, lo;
			if (hex4(bs + 2, &u))
				return llm_fail(LLM_EFORMAT, "invalid \\u escape");
			s = bs + 6;
			if (u >= 0xD800 && u <= 0xDBFF && end - s >= 6 && s[0] == '\\' && s[1] == 'u' &&
			    !hex4(s + 2, &lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
				u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
				s += 6;
			}
			char enc[4];
			/* A lone surrogate becomes U+FFFD (llm_utf8_encode does that). */
			llm_buf_add(out, enc, llm_utf8_encode(u, enc));
			continue;
		}
		default: c = bs[1]; break; /* '"', '\\', '/' */
		}
		llm_buf_addc(out, c);
	}
	return LLM_OK;
}

int llm_json_str_eq(const llm_json_val *v, const char *s)
{
	return v && v->type == LLM_JSON_STRING && key_eq(v, s, strlen(s));
}

int llm_json_num(const llm_json_val *v, double *out)
{
	if (v->type != LLM_JSON_NUMBER)
		return llm_fail(LLM_EINVAL, "not a number");
	char tmp[64];
	if (v->len >= sizeof tmp) {
		char *t = llm_strndup(v->p, v->len);
		*out = strtod(t, NULL);
		free(t);
	} else {
		memcpy(tmp, v->p, v->len);
		tmp[v->len] = 0;
		*out = strtod(tmp, NULL);
	}
	return LLM_OK;
}

int llm_json_i64(const llm_json_val *v, int64_t *out)
{
	if (v->type != LLM_JSON_NUMBER)
		return llm_fail(LLM_EINVAL, "not a number");
	char tmp[32];
	if (v->len >= sizeof tmp || memchr(v->p, '.', v->len) || memchr(v->p, 'e', v->len) ||
	    memchr(v->p, 'E', v->len))
		return llm_fail(LLM_EINVAL, "not an integer");
	memcpy(tmp, v->p, v->len);
	tmp[v->len] = 0;
	char *end;
	long long x = strtoll(tmp, &end, 10);
	*out = x;
	return LLM_OK;
}

int llm_json_get_str(const llm_json_rec *rec, const char *key, llm_buf *out)
{
	const llm_json_val *v = llm_json_get(rec, key);
	if (!v)
		return LLM_ENOTFOUND;
	if (v->type != LLM_JSON_STRING)
		return llm_fail(LLM_EINVAL, "field '%s' is not a string", key);
	return llm_json_str(v, out);
}

int llm_json_get_num(const llm_json_rec *rec, const char *key, double *out)
{
	const llm_json_val *v = llm_json_get(rec, key);
	if (!v)
		return LLM_ENOTFOUND;
	return llm_json_num(v, out);
}

int llm_json_get_i64(const llm_json_rec *rec, const char *key, int64_t *out)
{
	const llm_json_val *v = llm_json_get(rec, key);
	if (!v)
		return LLM_ENOTFOUND;
	return llm_json_i64(v, out);
}

int llm_json_next(const llm_json_val *c, size_t *it, llm_json_val *key, llm_json_val *val)
{
	if (c->type != LLM_JSON_ARRAY && c->type != LLM_JSON_OBJECT)
		return llm_fail(LLM_EINVAL, "not a container");
	scan sc = { c->p, c->len, 0, NULL };
	const char *s = c->p;
	size_t n = c->len, i = *it ? *it : 1;
	i = skip_ws(s, i, n);
	if (i < n && s[i] == ',')
		i = skip_ws(s, i + 1, n);
	if (i >= n || s[i] == ']' || s[i] == '}')
		return LLM_EOF;
	if (c->type == LLM_JSON_OBJECT) {
		size_t k = scan_string(&sc, i);
		if (k == BAD)
			return llm_fail(LLM_EFORMAT, "%s", sc.err_msg);
		if (key)
			*key = (llm_json_val){ s + i, k - i, LLM_JSON_STRING };
		i = skip_ws(s, k, n);
		i = skip_ws(s, i + 1, n); /* ':' */
	}
	llm_json_type t;
	size_t e = scan_value(&sc, i, 1, &t);
	if (e == BAD)
		return llm_fail(LLM_EFORMAT, "%s", sc.err_msg);
	*val = (llm_json_val){ s + i, e - i, t };
	*it = e;
	return LLM_OK;
}

int llm_json_member_eq(const llm_json_val *obj, const char *key, const char *s)
{
	llm_json_val v = llm_json_member(obj, key);
	return v.type == LLM_JSON_STRING && llm_json_str_eq(&v, s);
}

char *llm_json_dup_str(const llm_json_val *v, size_t *len)
{
	llm_buf b = LLM_BUF_INIT;
	if (v->type != LLM_JSON_STRING || llm_json_str(v, &b)) {
		llm_buf_release(&b);
		return NULL;
	}
	llm_buf_addc(&b, 0);
	char *s = llm_buf_detach(&b, len);
	(*len)--;
	return s;
}

llm_json_val llm_json_member(const llm_json_val *obj, const char *key)
{
	llm_json_val k, v, found = { NULL, 0, LLM_JSON_INVALID };
	size_t it = 0, n = strlen(key);
	if (obj->type != LLM_JSON_OBJECT)
		return found;
	while (llm_json_next(obj, &it, &k, &v) == LLM_OK)
		if (key_eq(&k, key, n))
			found = v;
	return found;
}

void llm_json_put_str(llm_buf *out, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	llm_buf_grow(out, n + 2);
	llm_buf_addc(out, '"');
	size_t i = 0, run = 0;
	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			i++;
			continue;
		}
		llm_buf_add(out, s + run, i - run);
		if (c >= 0x80) {
			uint32_t cp;
			size_t k = llm_utf8_decode(s + i, n - i, &cp);
			if (cp == 0x2028 || cp == 0x2029)
				llm_buf_addf(out, "\\u%04x", (unsigned)cp);
			else if (cp == LLM_UTF8_REPLACEMENT && !(k == 3 && c == 0xEF))
				llm_buf_add(out, "\xEF\xBF\xBD", 3);
			else
				llm_buf_add(out, s + i, k);
			i += k;
		} else {
			char esc[7] = { '\\', 0 };
			size_t elen = 2;
			switch (c) {
			case '"': esc[1] = '"'; break;
			case '\\': esc[1] = '\\'; break;
			case '\n': esc[1] = 'n'; break;
			case '\r': esc[1] = 'r'; break;
			case '\t': esc[1] = 't'; break;
			case '\b': esc[1] = 'b'; break;
			case '\f': esc[1] = 'f'; break;
			default:
				memcpy(esc + 1, "u00", 3);
				esc[4] = hex[c >> 4];
				esc[5] = hex[c & 15];
				elen = 6;
			}
			llm_buf_add(out, esc, elen);
			i++;
		}
		run = i;
	}
	llm_buf_add(out, s + run, n - run);
	llm_buf_addc(out, '"');
}

void llm_json_put_f64(llm_buf *out, double x)
{
	if (!isfinite(x)) {
		llm_buf_adds(out, "null");
		return;
	}
	char tmp[LLM_FMT_DOUBLE_MAX];
	llm_buf_add(out, tmp, llm_fmt_double(tmp, sizeof tmp, x));
}

void llm_json_edit_init(llm_json_edit *ed)
{
	memset(ed, 0, sizeof *ed);
}

void llm_json_edit_release(llm_json_edit *ed)
{
	llm_buf_release(&ed->keys);
	llm_buf_release(&ed->vals);
	free(ed->kofs);
	free(ed->vofs);
	free(ed->vlen);
	free(ed->del);
	llm_json_edit_init(ed);
}

void llm_json_edit_reset(llm_json_edit *ed)
{
	llm_buf_reset(&ed->keys);
	llm_buf_reset(&ed->vals);
	ed->n = 0;
}

/* Slot for key: the existing edit of that key (the last set wins) or a new one. */
static size_t edit_slot(llm_json_edit *ed, const char *key)
{
	for (size_t i = 0; i < ed->n; i++)
		if (strcmp(ed->keys.p + ed->kofs[i], key) == 0)
			return i;
	if (ed->n == ed->cap) {
		ed->cap = ed->cap ? ed->cap * 2 : 8;
		ed->kofs = llm_realloc(ed->kofs, ed->cap * sizeof *ed->kofs);
		ed->vofs = llm_realloc(ed->vofs, ed->cap * sizeof *ed->vofs);
		ed->vlen = llm_realloc(ed->vlen, ed->cap * sizeof *ed->vlen);
		ed->del = llm_realloc(ed->del, ed->cap);
	}
	ed->kofs[ed->n] = ed->keys.len;
	llm_buf_add(&ed->keys, key, strlen(key) + 1);
	return ed->n++;
}

void llm_json_edit_raw(llm_json_edit *ed, const char *key, const char *raw, size_t n)
{
	size_t i = edit_slot(ed, key);
	ed->vofs[i] = ed->vals.len;
	ed->vlen[i] = n;
	ed->del[i] = 0;
	llm_buf_add(&ed->vals, raw, n);
}

void llm_json_edit_str(llm_json_edit *ed, const char *key, const char *s, size_t n)
{
	size_t i = edit_slot(ed, key), start = ed->vals.len;
	llm_json_put_str(&ed->vals, s, n);
	ed->vofs[i] = start;
	ed->vlen[i] = ed->vals.len - start;
	ed->del[i] = 0;
}

void llm_json_edit_f64(llm_json_edit *ed, const char *key, double x)
{
	size_t i = edit_slot(ed, key), start = ed->vals.len;
	llm_json_put_f64(&ed->vals, x);
	ed->vofs[i] = start;
	ed->vlen[i] = ed->vals.len - start;
	ed->del[i] = 0;
}

void llm_json_edit_i64(llm_json_edit *ed, const char *key, int64_t x)
{
	char tmp[24];
	int n = snprintf(tmp, sizeof tmp, "%lld", (long long)x);
	llm_json_edit_raw(ed, key, tmp, n);
}

void llm_json_edit_del(llm_json_edit *ed, const char *key)
{
	size_t i = edit_slot(ed, key);
	ed->del[i] = 1;
	ed->vlen[i] = 0;
}

void llm_json_write(const llm_json_rec *rec, const llm_json_edit *ed, llm_buf *out)
{
	const char *s = rec->src, *obj = memchr(s, '{', rec->len);
	const char *close = s + rec->len;
	while (close > obj && close[-1] != '}')
		close--;
	close--; /* at '}' */
	size_t ne = ed ? ed->n : 0;
	unsigned char used_stack[64], *used = ne <= 64 ? used_stack : llm_calloc(ne, 1);
	memset(used, 0, ne);

	/* Separator style of this record. */
	const char *sep = ", ", *colon = ": ";
	size_t seplen = 2, colonlen = 2;
	if (rec->nfields >= 2) {
		sep = rec->fields[0].val.p + rec->fields[0].val.len;
		seplen = rec->fields[1].key.p - sep;
	}
	if (rec->nfields >= 1) {
		colon = rec->fields[0].key.p + rec->fields[0].key.len;
		colonlen = rec->fields[0].val.p - colon;
	}

	llm_buf_addc(out, '{');
	const char *prev_end = obj + 1; /* end of the previous field kept, in the source */
	int emitted = 0;
	for (size_t f = 0; f < rec->nfields; f++) {
		const llm_json_field *fd = &rec->fields[f];
		size_t e = ne;
		for (size_t i = 0; i < ne; i++)
			if (key_eq(&fd->key, ed->keys.p + ed->kofs[i], strlen(ed->keys.p + ed->kofs[i]))) {
				e = i;
				used[i] = 1;
			}
		if (e < ne && ed->del[e])
			continue;
		/* Text before this field: its original lead-in when the previous field was kept. */
		const char *lead = f == 0 ? obj + 1 : rec->fields[f - 1].val.p + rec->fields[f - 1].val.len;
		if (lead == prev_end && (f == 0 || emitted))
			llm_buf_add(out, lead, fd->key.p - lead);
		else if (emitted)
			llm_buf_add(out, sep, seplen);
		llm_buf_add(out, fd->key.p, fd->val.p - fd->key.p);
		if (e < ne)
			llm_buf_add(out, ed->vals.p + ed->vofs[e], ed->vlen[e]);
		else
			llm_buf_add(out, fd->val.p, fd->val.len);
		prev_end = fd->val.p + fd->val.len;
		emitted = 1;
	}
	for (size_t i = 0; i < ne; i++) {
		if (used[i] || ed->del[i])
			continue;
		if (emitted)
			llm_buf_add(out, sep, seplen);
		const char *k = ed->keys.p + ed->kofs[i];
		llm_json_put_str(out, k, strlen(k));
		llm_buf_add(out, colon, colonlen);
		llm_buf_add(out, ed->vals.p + ed->vofs[i], ed->vlen[i]);
		emitted = 1;
	}
	/* Whitespace before the closing brace, as in the source (only when the last field stayed). */
	if (rec->nfields && prev_end == rec->fields[rec->nfields - 1].val.p + rec->fields[rec->nfields - 1].val.len)
		llm_buf_add(out, prev_end, close - prev_end);
	llm_buf_addc(out, '}');
	if (used != used_stack)
		free(used);
}
