/*
 * hfpretok.c — Hugging Face pre-tokenizers as a list of steps over a list of pieces.
 *
 * Each step takes every piece of the step before, may rewrite its text (Metaspace, ByteLevel's
 * prefix space), finds its matches (a regex, a string, or a character predicate: a list of
 * ranges that covers the piece, each a match or not), and combines them by the step's
 * behavior exactly as tokenizers' NormalizedString::split does. The pieces a step keeps are
 * written back to back into its output buffer, so a piece list is a list of bounds.
 */
#include "hfpretok.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/utf8.h"
#include "pretok.h"

typedef enum { B_REMOVED, B_ISOLATED, B_MERGED_PREV, B_MERGED_NEXT, B_CONTIGUOUS } behavior;
typedef enum { M_REGEX, M_STRING, M_DIGIT, M_PUNCT, M_WHITE } matcher;
typedef enum { PREPEND_ALWAYS, PREPEND_FIRST, PREPEND_NEVER } prepend;

typedef struct {
	matcher m;
	llm_pretok *re;         /* M_REGEX */
	char *str;              /* M_STRING */
	size_t str_len;
	behavior beh;
	bool invert;
	bool prefix_space;      /* ByteLevel add_prefix_space */
	bool metaspace;         /* replace ' ' by str, prepend by scheme, then split on it */
	prepend scheme;
	bool split;             /* Metaspace: split on the replacement; else the step only rewrites */
} step;

struct llm_hfpretok {
	step *steps;
	size_t n;
};

typedef struct {
	size_t a, z;
	bool m;
} seg;

typedef struct {
	llm_buf text;
	size_t *b;              /* bounds: piece i is text[b[i] .. b[i + 1]) */
	unsigned char *first;   /* piece i starts the whole text */
	size_t n, cap;
} plist;

struct llm_hfpretok_state {
	const llm_hfpretok *p;
	llm_pretok_state **re;
	plist l[2];
	llm_buf cur;
	seg *segs, *tmp;
	size_t scap;
};

/* GPT-2's pattern, which ByteLevel with use_regex applies. */
#define GPT2 "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"

static bool type_is(const llm_json_val *obj, const char *type)
{
	return llm_json_member_eq(obj, "type", type);
}

static void step_release(step *s)
{
	llm_pretok_free(s->re);
	free(s->str);
}

void llm_hfpretok_free(llm_hfpretok *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		step_release(&p->steps[i]);
	free(p->steps);
	free(p);
}

static int parse_behavior(const llm_json_val *v, const char *key, behavior def, behavior *out)
{
	static const char *const names[] = { "Removed", "Isolated", "MergedWithPrevious",
		                             "MergedWithNext", "Contiguous" };
	llm_json_val b = llm_json_member(v, key);
	*out = def;
	if (b.type == LLM_JSON_INVALID)
		return LLM_OK;
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (b.type == LLM_JSON_STRING && llm_json_str_eq(&b, names[i])) {
			*out = (behavior)i;
			return LLM_OK;
		}
	return LLM_EFORMAT;
}

static int compile(step *s, const char *re, const char *name)
{
	s->m = M_REGEX;
	int rc = llm_pretok_new(&s->re, re, true);
	return rc ? llm_fail(rc, "%s: %s", name, llm_last_error()) : LLM_OK;
}

static int parse_one(llm_hfpretok *p, const llm_json_val *v, const char *name,
                     llm_hfpretok_info *info)
{
	if (v->type != LLM_JSON_OBJECT)
		return llm_fail(LLM_EFORMAT, "%s: a pre-tokenizer is not an object", name);
	if (type_is(v, "Sequence")) {
		llm_json_val list = llm_json_member(v, "pretokenizers");
		if (list.type != LLM_JSON_ARRAY)
			return llm_fail(LLM_EFORMAT, "%s: Sequence pre-tokenizer without a list", name);
		size_t it = 0;
		llm_json_val k, e;
		int rc = LLM_OK;
		while (!rc && llm_json_next(&list, &it, &k, &e) == LLM_OK)
			rc = parse_one(p, &e, name, info);
		return rc;
	}
	step s;
	memset(&s, 0, sizeof s);
	s.beh = B_ISOLATED;
	int rc = LLM_OK;
	if (type_is(v, "Split")) {
		llm_json_val pat = llm_json_member(v, "pattern"), inv = llm_json_member(v, "invert");
		llm_json_val re = llm_json_member(&pat, "Regex"), str = llm_json_member(&pat, "String");
		s.invert = inv.type == LLM_JSON_TRUE;
		if (parse_behavior(v, "behavior", B_ISOLATED, &s.beh))
			return llm_fail(LLM_EFORMAT, "%s: Split has an unknown behavior", name);
		size_t len;
		char *t;
		if (re.type == LLM_JSON_STRING && (t = llm_json_dup_str(&re, &len))) {
			rc = compile(&s, t, name);
			free(t);
		} else if (str.type == LLM_JSON_STRING && (s.str = llm_json_dup_str(&str, &s.str_len))) {
			s.m = M_STRING;
		} else {
			return llm_fail(LLM_EFORMAT, "%s: Split has no pattern", name);
		}
	} else if (type_is(v, "ByteLevel")) {
		llm_json_val ur = llm_json_member(v, "use_regex"), aps = llm_json_member(v, "add_prefix_space");
		info->bytelevel = true;
		s.prefix_space = aps.type == LLM_JSON_TRUE;
		if (ur.type != LLM_JSON_FALSE)
			rc = compile(&s, GPT2, name);
		else
			s.m = M_STRING; /* no str: no match, the piece stays whole */
	} else if (type_is(v, "Metaspace")) {
		llm_json_val rep = llm_json_member(v, "replacement"), sch = llm_json_member(v, "prepend_scheme");
		llm_json_val aps = llm_json_member(v, "add_prefix_space"), sp = llm_json_member(v, "split");
		info->metaspace = true;
		s.metaspace = true;
		s.m = M_STRING;
		s.beh = B_MERGED_NEXT;
		s.split = sp.type != LLM_JSON_FALSE;
		if (!(s.str = llm_json_dup_str(&rep, &s.str_len)) || s.str_len == 0)
			return llm_fail(LLM_EFORMAT, "%s: Metaspace without a replacement", name);
		s.scheme = PREPEND_ALWAYS;
		if (sch.type == LLM_JSON_STRING) {
			if (llm_json_str_eq(&sch, "first"))
				s.scheme = PREPEND_FIRST;
			else if (llm_json_str_eq(&sch, "never"))
				s.scheme = PREPEND_NEVER;
			else if (!llm_json_str_eq(&sch, "always"))
				rc = llm_fail(LLM_EFORMAT, "%s: Metaspace has an unknown prepend_scheme", name);
		} else if (aps.type == LLM_JSON_FALSE) { /* files older than prepend_scheme */
			s.scheme = PREPEND_NEVER;
		}
	} else if (type_is(v, "Digits")) {
		llm_json_val ind = llm_json_member(v, "individual_digits");
		s.m = M_DIGIT;
		s.beh = ind.type == LLM_JSON_TRUE ? B_ISOLATED : B_CONTIGUOUS;
	} else if (type_is(v, "Punctuation")) {
		s.m = M_PUNCT;
		if (parse_behavior(v, "behavior", B_ISOLATED, &s.beh))
			return llm_fail(LLM_EFORMAT, "%s: Punctuation has an unknown behavior", name);
	} else if (type_is(v, "Whitespace")) {
		/* tokenizers: split(Invert(\w+|[^\w\s]+), Removed), i.e. keep the matches */
		rc = compile(&s, "\\w+|[^\\w\\s]+", name);
		s.beh = B_REMOVED;
		s.invert = true;
	} else if (type_is(v, "WhitespaceSplit")) {
		s.m = M_WHITE;
		s.beh = B_REMOVED;
	} else {
		llm_json_val t = llm_json_member(v, "type");
		return llm_fail(LLM_EUNSUPPORTED, "%s: pre-tokenizer %.*s is not supported (Split, "
		                "ByteLevel, Metaspace, Digits, Punctuation, Whitespace, WhitespaceSplit "
		                "and Sequence are)", name, (int)(t.len > 40 ? 40 : t.len), t.p ? t.p : "");
	}
	if (rc) {
		step_release(&s);
		return rc;
	}
	p->steps = llm_realloc(p->steps, (p->n + 1) * sizeof *p->steps);
	p->steps[p->n++] = s;
	return LLM_OK;
}

int llm_hfpretok_parse(llm_hfpretok **out, const llm_json_val *v, const char *name,
                       llm_hfpretok_info *info)
{
	*out = NULL;
	memset(info, 0, sizeof *info);
	if (v->type == LLM_JSON_INVALID || v->type == LLM_JSON_NULL)
		return LLM_OK;
	llm_hfpretok *p = llm_calloc(1, sizeof *p);
	int rc = parse_one(p, v, name, info);
	if (rc) {
		llm_hfpretok_free(p);
		return rc;
	}
	/* One regex, Isolated, not inverted (ByteLevel alone, or Split + ByteLevel without its
	 * regex, as GPT-2, Llama 3 and Qwen write it): the plain pretok.h loop is enough. A
	 * prefix space after the regex would be added to every piece: not that loop. */
	size_t regex = 0, other = 0, ri = 0;
	for (size_t i = 0; i < p->n; i++) {
		const step *s = &p->steps[i];
		if (s->m == M_REGEX && s->beh == B_ISOLATED && !s->invert) {
			regex++;
			ri = i;
		} else if (!(s->m == M_STRING && !s->str && !s->metaspace)) {
			other++;
		}
	}
	bool prefix = false;
	for (size_t i = 0; i < p->n; i++) {
		const step *s = &p->steps[i];
		info->lossy |= s->beh == B_REMOVED || s->metaspace || s->prefix_space;
		if (p->steps[i].prefix_space && regex == 1 && i > ri)
			other++;
		prefix |= p->steps[i].prefix_space;
	}
	if (regex == 1 && other == 0) {
		info->simple = llm_pretok_pattern(p->steps[ri].re);
		info->prefix_space = prefix;
	}
	*out = p;
	return LLM_OK;
}

llm_hfpretok_state *llm_hfpretok_state_new(const llm_hfpretok *p)
{
	llm_hfpretok_state *st = llm_calloc(1, sizeof *st);
	st->p = p;
	st->re = llm_calloc(p->n ? p->n : 1, sizeof *st->re);
	for (size_t i = 0; i < p->n; i++)
		if (p->steps[i].re)
			st->re[i] = llm_pretok_state_new(p->steps[i].re);
	for (int k = 0; k < 2; k++)
		llm_buf_init(&st->l[k].text);
	llm_buf_init(&st->cur);
	return st;
}

void llm_hfpretok_state_free(llm_hfpretok_state *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->p->n; i++)
		llm_pretok_state_free(st->re[i]);
	free(st->re);
	for (int k = 0; k < 2; k++) {
		llm_buf_release(&st->l[k].text);
		free(st->l[k].b);
		free(st->l[k].first);
	}
	llm_buf_release(&st->cur);
	free(st->segs);
	free(st->tmp);
	free(st);
}

static void plist_reset(plist *l)
{
	llm_buf_reset(&l->text);
	l->n = 0;
	if (!l->cap) {
		l->cap = 64;
		l->b = llm_malloc((l->cap + 1) * sizeof *l->b);
		l->first = llm_malloc(l->cap);
	}
	l->b[0] = 0;
}

static void plist_add(plist *l, const char *s, size_t n, bool first)
{
	if (l->n == l->cap) {
		l->cap *= 2;
		l->b = llm_realloc(l->b, (l->cap + 1) * sizeof *l->b);
		l->first = llm_realloc(l->first, l->cap);
	}
	llm_buf_add(&l->text, s, n);
	l->first[l->n++] = first;
	l->b[l->n] = l->text.len;
}

static void seg_push(llm_hfpretok_state *st, size_t *n, size_t a, size_t z, bool m)
{
	if (*n == st->scap) {
		st->scap = st->scap ? 2 * st->scap : 64;
		st->segs = llm_realloc(st->segs, st->scap * sizeof *st->segs);
		st->tmp = llm_realloc(st->tmp, st->scap * sizeof *st->tmp);
	}
	st->segs[(*n)++] = (seg){ a, z, m };
}

static bool char_matches(matcher m, uint32_t c)
{
	if (m == M_WHITE)
		return llm_uc_is(c, LLM_UC_SPACE);
	if (m == M_DIGIT)
		return llm_uc_is(c, LLM_UC_NUMBER);
	return (c < 128 && c && strchr("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", (int)c)) ||
	       llm_uc_is(c, LLM_UC_PUNCT);
}

/* The matches of step i in s[0..n) as ranges covering it; returns their number. */
static int find_matches(llm_hfpretok_state *st, size_t i, const char *s, size_t n, size_t *ns)
{
	const step *p = &st->p->steps[i];
	*ns = 0;
	if (p->m == M_REGEX) {
		size_t a, z;
		int rc;
		llm_pretok_begin(st->re[i], s, n);
		while ((rc = llm_pretok_next(st->re[i], &a, &z)) == LLM_OK)
			seg_push(st, ns, a, z, llm_pretok_matched(st->re[i]));
		return rc == LLM_EOF ? LLM_OK : rc;
	}
	size_t last = 0;
	if (p->m == M_STRING) {
		if (!p->str || (p->metaspace && !p->split)) {
			if (n)
				seg_push(st, ns, 0, n, false);
			return LLM_OK;
		}
		for (size_t pos = 0; pos + p->str_len <= n;) {
			const char *m = memmem(s + pos, n - pos, p->str, p->str_len);
			if (!m)
				break;
			size_t a = (size_t)(m - s);
			if (a > last)
				seg_push(st, ns, last, a, false);
			seg_push(st, ns, a, a + p->str_len, true);
			last = pos = a + p->str_len;
		}
	} else {
		for (size_t pos = 0; pos < n;) {
			uint32_t c;
			size_t k = llm_utf8_decode(s + pos, n - pos, &c);
			if (llm_utf8_valid_prefix(s + pos, k) == k && char_matches(p->m, c)) {
				if (pos > last)
					seg_push(st, ns, last, pos, false);
				seg_push(st, ns, pos, pos + k, true);
				last = pos + k;
			}
			pos += k;
		}
	}
	if (n > last)
		seg_push(st, ns, last, n, false);
	return LLM_OK;
}

/* Combine the ranges by behavior (tokenizers' split); returns the kept ones in st->segs. */
static size_t combine(llm_hfpretok_state *st, const step *p, size_t n)
{
	seg *in = st->segs, *out = st->tmp;
	size_t k = 0;
	if (p->invert)
		for (size_t i = 0; i < n; i++)
			in[i].m = !in[i].m;
	bool prev = false;
	switch (p->beh) {
	case B_ISOLATED:
		return n;
	case B_REMOVED:
		for (size_t i = 0; i < n; i++)
			if (!in[i].m)
				in[k++] = in[i];
		return k;
	case B_MERGED_PREV:
		for (size_t i = 0; i < n; i++) {
			if (in[i].m && !prev && k)
				out[k - 1].z = in[i].z;
			else
				out[k++] = in[i];
			prev = in[i].m;
		}
		break;
	case B_MERGED_NEXT:
		for (size_t i = n; i-- > 0;) {
			if (in[i].m && !prev && k)
				out[k - 1].a = in[i].a;
			else
				out[k++] = in[i];
			prev = in[i].m;
		}
		for (size_t i = 0; i < k / 2; i++) {
			seg t = out[i];
			out[i] = out[k - 1 - i];
			out[k - 1 - i] = t;
		}
		break;
	case B_CONTIGUOUS:
		for (size_t i = 0; i < n; i++) {
			if (in[i].m == prev && k)
				out[k - 1].z = in[i].z;
			else
				out[k++] = in[i];
			prev = in[i].m;
		}
		break;
	}
	st->tmp = in;
	st->segs = out;
	return k;
}

/* Metaspace's and ByteLevel's rewriting of one piece into st->cur; false: unchanged. */
static bool rewrite(llm_hfpretok_state *st, const step *p, const char *s, size_t n, bool first)
{
	if (p->prefix_space) {
		if (n && s[0] == ' ')
			return false;
		llm_buf_reset(&st->cur);
		llm_buf_addc(&st->cur, ' ');
		llm_buf_add(&st->cur, s, n);
		return true;
	}
	if (!p->metaspace)
		return false;
	llm_buf_reset(&st->cur);
	bool starts = n >= p->str_len && memcmp(s, p->str, p->str_len) == 0;
	if (!starts && n && s[0] == ' ')
		starts = true; /* the space becomes the replacement below */
	if (!starts && (p->scheme == PREPEND_ALWAYS || (p->scheme == PREPEND_FIRST && first)))
		llm_buf_add(&st->cur, p->str, p->str_len);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == ' ')
			llm_buf_add(&st->cur, p->str, p->str_len);
		else
			llm_buf_addc(&st->cur, s[i]);
	}
	return true;
}

int llm_hfpretok_run(llm_hfpretok_state *st, const char *s, size_t n, bool at_start,
                     const char **text, const size_t **bounds, size_t *npieces)
{
	plist *in = &st->l[0], *out = &st->l[1];
	plist_reset(in);
	if (n)
		plist_add(in, s, n, at_start);
	for (size_t i = 0; i < st->p->n; i++) {
		const step *p = &st->p->steps[i];
		plist_reset(out);
		for (size_t k = 0; k < in->n; k++) {
			const char *t = in->text.p + in->b[k];
			size_t tn = in->b[k + 1] - in->b[k];
			if (rewrite(st, p, t, tn, in->first[k])) {
				t = st->cur.p;
				tn = st->cur.len;
			}
			size_t ns;
			int rc = find_matches(st, i, t, tn, &ns);
			if (rc)
				return rc;
			ns = combine(st, p, ns);
			for (size_t j = 0; j < ns; j++)
				if (st->segs[j].z > st->segs[j].a)
					plist_add(out, t + st->segs[j].a, st->segs[j].z - st->segs[j].a,
					          in->first[k] && st->segs[j].a == 0);
		}
		plist *x = in;
		in = out;
		out = x;
	}
	*text = in->text.p;
	*bounds = in->b;
	*npieces = in->n;
	return LLM_OK;
}
