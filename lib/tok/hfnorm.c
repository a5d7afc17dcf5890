/*
 * hfnorm.c — Hugging Face normalizers: a list of steps applied in order, each rewriting the
 * whole text (tokenizers' Sequence is this list; a lone normalizer is a list of one).
 */
#include "hfnorm.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "core/err.h"
#include "core/utf8.h"
#include "pretok.h"

typedef enum { N_UNICODE, N_LOWER, N_PREPEND, N_REPLACE, N_STRIP } step_kind;

typedef struct {
	step_kind kind;
	utf8proc_option_t form;  /* N_UNICODE */
	char *str, *with;        /* N_PREPEND: str; N_REPLACE: str (literal) or re, by with */
	size_t str_len, with_len;
	llm_pretok *re;          /* N_REPLACE with a regex */
	bool left, right;        /* N_STRIP */
} step;

struct llm_hfnorm {
	step *steps;
	size_t n;
};

struct llm_hfnorm_state {
	const llm_hfnorm *norm;
	llm_pretok_state **re; /* per step, for regex Replace */
	llm_buf tmp;
};

static bool type_is(const llm_json_val *obj, const char *type)
{
	return llm_json_member_eq(obj, "type", type);
}

static void step_release(step *s)
{
	free(s->str);
	free(s->with);
	llm_pretok_free(s->re);
}

void llm_hfnorm_free(llm_hfnorm *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++)
		step_release(&n->steps[i]);
	free(n->steps);
	free(n);
}

/* A string member into a new NUL-terminated copy; LLM_EFORMAT when absent. */
static int member_str(const llm_json_val *obj, const char *key, char **out, size_t *len)
{
	llm_json_val v = llm_json_member(obj, key);
	return (*out = llm_json_dup_str(&v, len)) ? LLM_OK : LLM_EFORMAT;
}

static int parse_one(llm_hfnorm *n, const llm_json_val *v, const char *name)
{
	static const struct {
		const char *type;
		utf8proc_option_t form;
	} forms[] = {
		{ "NFC", UTF8PROC_STABLE | UTF8PROC_COMPOSE },
		{ "NFD", UTF8PROC_STABLE | UTF8PROC_DECOMPOSE },
		{ "NFKC", UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT },
		{ "NFKD", UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT },
	};
	if (v->type != LLM_JSON_OBJECT)
		return llm_fail(LLM_EFORMAT, "%s: a normalizer is not an object", name);
	if (type_is(v, "Sequence")) {
		llm_json_val list = llm_json_member(v, "normalizers");
		if (list.type != LLM_JSON_ARRAY)
			return llm_fail(LLM_EFORMAT, "%s: Sequence normalizer without a list", name);
		size_t it = 0;
		llm_json_val k, e;
		int rc = LLM_OK;
		while (!rc && llm_json_next(&list, &it, &k, &e) == LLM_OK)
			rc = parse_one(n, &e, name);
		return rc;
	}
	step s;
	memset(&s, 0, sizeof s);
	for (size_t i = 0; i < sizeof forms / sizeof *forms; i++)
		if (type_is(v, forms[i].type)) {
			s.kind = N_UNICODE;
			s.form = forms[i].form;
			goto add;
		}
	if (type_is(v, "Lowercase")) {
		s.kind = N_LOWER;
	} else if (type_is(v, "Prepend")) {
		s.kind = N_PREPEND;
		if (member_str(v, "prepend", &s.str, &s.str_len))
			return llm_fail(LLM_EFORMAT, "%s: Prepend normalizer without a string", name);
	} else if (type_is(v, "Strip")) {
		s.kind = N_STRIP;
		llm_json_val l = llm_json_member(v, "strip_left"), r = llm_json_member(v, "strip_right");
		s.left = l.type == LLM_JSON_TRUE;
		s.right = r.type == LLM_JSON_TRUE;
	} else if (type_is(v, "Replace")) {
		s.kind = N_REPLACE;
		llm_json_val pat = llm_json_member(v, "pattern");
		if (member_str(v, "content", &s.with, &s.with_len))
			return llm_fail(LLM_EFORMAT, "%s: Replace normalizer without content", name);
		llm_json_val re = llm_json_member(&pat, "Regex");
		if (re.type == LLM_JSON_STRING) {
			char *rs;
			size_t rl;
			int rc = member_str(&pat, "Regex", &rs, &rl);
			if (!rc)
				rc = llm_pretok_new(&s.re, rs, false);
			free(rs);
			if (rc) {
				step_release(&s);
				return llm_fail(rc, "%s: Replace normalizer: %s", name, llm_last_error());
			}
		} else if (member_str(&pat, "String", &s.str, &s.str_len) || s.str_len == 0) {
			step_release(&s);
			return llm_fail(LLM_EFORMAT, "%s: Replace normalizer without a pattern", name);
		}
	} else {
		llm_json_val t = llm_json_member(v, "type");
		return llm_fail(LLM_EUNSUPPORTED, "%s: normalizer %.*s is not supported (NFC, NFD, NFKC, "
		                "NFKD, Lowercase, Prepend, Replace, Strip and Sequence are)", name,
		                (int)(t.len > 40 ? 40 : t.len), t.p ? t.p : "");
	}
add:
	n->steps = llm_realloc(n->steps, (n->n + 1) * sizeof *n->steps);
	n->steps[n->n++] = s;
	return LLM_OK;
}

int llm_hfnorm_parse(llm_hfnorm **out, const llm_json_val *v, const char *name)
{
	*out = NULL;
	if (v->type == LLM_JSON_INVALID || v->type == LLM_JSON_NULL)
		return LLM_OK;
	llm_hfnorm *n = llm_calloc(1, sizeof *n);
	int rc = parse_one(n, v, name);
	if (rc || n->n == 0) {
		llm_hfnorm_free(n);
		return rc;
	}
	*out = n;
	return LLM_OK;
}

llm_hfnorm_state *llm_hfnorm_state_new(const llm_hfnorm *n)
{
	llm_hfnorm_state *st = llm_calloc(1, sizeof *st);
	st->norm = n;
	st->re = llm_calloc(n->n ? n->n : 1, sizeof *st->re);
	for (size_t i = 0; i < n->n; i++)
		if (n->steps[i].re)
			st->re[i] = llm_pretok_state_new(n->steps[i].re);
	llm_buf_init(&st->tmp);
	return st;
}

void llm_hfnorm_state_free(llm_hfnorm_state *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->norm->n; i++)
		llm_pretok_state_free(st->re[i]);
	free(st->re);
	llm_buf_release(&st->tmp);
	free(st);
}

/* Unicode White_Space: Rust's char::is_whitespace, which Strip uses. */
static bool is_white(uint32_t c)
{
	return llm_uc_is(c, LLM_UC_SPACE);
}

static void unicode_form(utf8proc_option_t form, const char *s, size_t n, llm_buf *out)
{
	for (size_t i = 0; i < n;) {
		size_t v = llm_utf8_valid_prefix(s + i, n - i);
		if (v == 0) { /* an ill-formed subsequence passes as it is */
			uint32_t cp;
			size_t k = llm_utf8_decode(s + i, n - i, &cp);
			llm_buf_add(out, s + i, k);
			i += k;
			continue;
		}
		utf8proc_uint8_t *d = NULL;
		utf8proc_ssize_t r = utf8proc_map((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)v, &d, form);
		if (r < 0) {
			if (r == UTF8PROC_ERROR_NOMEM)
				llm_malloc((size_t)-1); /* the out-of-memory handler */
			llm_buf_add(out, s + i, v); /* valid UTF-8 never fails otherwise */
		} else {
			llm_buf_add(out, d, (size_t)r);
		}
		free(d);
		i += v;
	}
}

static void lowercase(const char *s, size_t n, llm_buf *out)
{
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t k = llm_utf8_decode(s + i, n - i, &cp);
		if (llm_utf8_valid_prefix(s + i, k) != k) { /* ill-formed: as it is */
			llm_buf_add(out, s + i, k);
		} else if (cp == 0x130) { /* İ: Rust's full lowercase mapping is i + combining dot */
			llm_buf_add(out, "i\xcc\x87", 3);
		} else {
			char e[4];
			llm_buf_add(out, e, llm_utf8_encode(llm_uc_tolower(cp), e));
		}
		i += k;
	}
}

static void strip(bool left, bool right, const char *s, size_t n, llm_buf *out)
{
	size_t a = 0, z = n;
	while (left && a < z) {
		uint32_t cp;
		size_t k = llm_utf8_decode(s + a, z - a, &cp);
		if (!is_white(cp))
			break;
		a += k;
	}
	while (right && z > a) {
		size_t b = z - 1;
		while (b > a && ((unsigned char)s[b] & 0xc0) == 0x80)
			b--;
		uint32_t cp;
		llm_utf8_decode(s + b, z - b, &cp);
		if (!is_white(cp))
			break;
		z = b;
	}
	llm_buf_add(out, s + a, z - a);
}

static void replace(llm_hfnorm_state *st, size_t i, const char *s, size_t n, llm_buf *out)
{
	const step *p = &st->norm->steps[i];
	if (!p->re) {
		size_t pos = 0;
		while (pos < n) {
			const char *m = p->str_len <= n - pos ? memmem(s + pos, n - pos, p->str, p->str_len) : NULL;
			if (!m)
				break;
			llm_buf_add(out, s + pos, (size_t)(m - (s + pos)));
			llm_buf_add(out, p->with, p->with_len);
			pos = (size_t)(m - s) + p->str_len;
		}
		llm_buf_add(out, s + pos, n - pos);
		return;
	}
	size_t a, z, pos = 0;
	llm_pretok_begin(st->re[i], s, n);
	while (llm_pretok_next(st->re[i], &a, &z) == LLM_OK) {
		if (!llm_pretok_matched(st->re[i]))
			continue;
		llm_buf_add(out, s + pos, a - pos);
		llm_buf_add(out, p->with, p->with_len);
		pos = z;
	}
	llm_buf_add(out, s + pos, n - pos);
}

void llm_hfnorm_apply(llm_hfnorm_state *st, const char *s, size_t len, llm_buf *out)
{
	llm_buf_reset(out);
	llm_buf_add(out, s, len);
	for (size_t i = 0; i < st->norm->n; i++) {
		const step *p = &st->norm->steps[i];
		llm_buf *t = &st->tmp;
		llm_buf_reset(t);
		switch (p->kind) {
		case N_UNICODE: unicode_form(p->form, out->p, out->len, t); break;
		case N_LOWER: lowercase(out->p, out->len, t); break;
		case N_STRIP: strip(p->left, p->right, out->p, out->len, t); break;
		case N_REPLACE: replace(st, i, out->p, out->len, t); break;
		case N_PREPEND:
			if (out->len)
				llm_buf_add(t, p->str, p->str_len);
			llm_buf_add(t, out->p, out->len);
			break;
		}
		llm_buf tmp = *out;
		*out = *t;
		*t = tmp;
	}
}
