/*
 * recipe.c — recipe files and their resolution per (domain, language) (see recipe.h).
 *
 * A section keeps its entries as written (key, operator, value text), each checked when the
 * file is read, so that resolving is applying a few entries in order and a bad value is
 * reported with its line. Resolution is cheap (a dozen sections, tens of entries) but not
 * free; llm_cleaner caches it per (domain, language).
 */
#include "recipe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/err.h"
#include "core/io.h"
#include "core/json.h"
#include "filter.h"
#include "normalize.h"

/* Keys that are not filter parameters; parameters are keys 0..llm_filter_nparams-1. */
enum {
	KEY_FILTERS = -1, KEY_NORMALIZE = -2, KEY_TOX = -3, KEY_TOX_THRESHOLD = -4, KEY_SEGMENT = -5,
	KEY_TOX_WORDS = -6
};
static const char *const special_keys[] = { "filters", "normalize", "tox", "tox_threshold", "segment",
	                                    "tox_words" };
#define NSPECIAL 6
enum { OP_SET, OP_ADD, OP_SUB };

typedef struct {
	int key;
	int op;
	char *value;
	size_t line;
} entry;

typedef struct {
	char *label;        /* "[domain web lang zh]" as normalised, or "override" */
	char **domains, **langs;
	size_t ndomains, nlangs;
	entry *e;
	size_t ne;
} section;

struct llm_recipe {
	section *s;
	size_t ns;
	section over;       /* llm_recipe_set */
};

llm_recipe *llm_recipe_new(void)
{
	llm_recipe *r = llm_calloc(1, sizeof *r);
	r->over.label = llm_strdup("override");
	return r;
}

static void section_release(section *s)
{
	for (size_t i = 0; i < s->ndomains; i++)
		free(s->domains[i]);
	for (size_t i = 0; i < s->nlangs; i++)
		free(s->langs[i]);
	for (size_t i = 0; i < s->ne; i++)
		free(s->e[i].value);
	free(s->domains);
	free(s->langs);
	free(s->e);
	free(s->label);
}

void llm_recipe_free(llm_recipe *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ns; i++)
		section_release(&r->s[i]);
	free(r->s);
	section_release(&r->over);
	free(r);
}

static int key_index(const char *k, size_t n)
{
	for (int i = 0; i < NSPECIAL; i++)
		if (strlen(special_keys[i]) == n && memcmp(special_keys[i], k, n) == 0)
			return -1 - i;
	const llm_filter_param *p = llm_filter_param_find(k, n);
	return p ? (int)(p - llm_filter_params) : INT32_MIN;
}

static const char *key_name(int key)
{
	return key < 0 ? special_keys[-1 - key] : llm_filter_params[key].name;
}

/* 1 for yes, true, on; 0 for no, false, off; -1 for anything else. */
static int yes_no(const char *v)
{
	if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcasecmp(v, "on"))
		return 1;
	if (!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcasecmp(v, "off"))
		return 0;
	return -1;
}

/* Check that value is valid for key with op; LLM_EINVAL with the reason. */
static int check_entry(int key, int op, const char *value)
{
	if (op != OP_SET && key != KEY_FILTERS && key != KEY_NORMALIZE)
		return llm_fail(LLM_EINVAL, "'%s' takes '=', not '%s'", key_name(key), op == OP_ADD ? "+=" : "-=");
	unsigned bits;
	llm_quality_params scratch;
	switch (key) {
	case KEY_FILTERS: return llm_filter_parse(value, &bits);
	case KEY_NORMALIZE: return llm_norm_parse(value, &bits);
	case KEY_TOX:
	case KEY_SEGMENT:
	case KEY_TOX_WORDS:
		if (yes_no(value) >= 0)
			return LLM_OK;
		return llm_fail(LLM_EINVAL, "%s: expected yes or no, got '%s'", key_name(key), value);
	case KEY_TOX_THRESHOLD: {
		char *end;
		double x = strtod(value, &end);
		if (end == value || *end || !(x >= 0 && x <= 1))
			return llm_fail(LLM_EINVAL, "tox_threshold: expected a number in [0, 1], got '%s'", value);
		return LLM_OK;
	}
	default:
		llm_quality_defaults(&scratch, NULL);
		return llm_filter_param_set(&scratch, &llm_filter_params[key], value);
	}
}

static void add_entry(section *s, int key, int op, const char *value, size_t vlen, size_t line)
{
	s->e = llm_realloc(s->e, (s->ne + 1) * sizeof *s->e);
	entry *e = &s->e[s->ne++];
	e->key = key;
	e->op = op;
	e->value = llm_strndup(value, vlen);
	e->line = line;
}

/* The unknown key k[0..n): its message, with the closest key. */
static int unknown_key(const char *k, size_t n)
{
	const char *names[NSPECIAL + 64];
	size_t nn = 0;
	for (int i = 0; i < NSPECIAL; i++)
		names[nn++] = special_keys[i];
	for (size_t i = 0; i < llm_filter_nparams && nn < sizeof names / sizeof *names; i++)
		names[nn++] = llm_filter_params[i].name;
	const char *c = llm_filter_closest(k, n, names, nn);
	if (c)
		return llm_fail(LLM_EINVAL, "unknown key '%.*s' (did you mean '%s'?)", (int)n, k, c);
	llm_buf all = LLM_BUF_INIT;
	for (size_t i = 0; i < nn; i++)
		llm_buf_addf(&all, "%s%s", i ? ", " : "", names[i]);
	int rc = llm_fail(LLM_EINVAL, "unknown key '%.*s' (keys: %s)", (int)n, k, all.p);
	llm_buf_release(&all);
	return rc;
}

static bool is_sep(char c)
{
	return c == ' ' || c == '\t' || c == ',';
}

/* Parse the inside of a section header into s. */
static int parse_header(section *s, const char *h, size_t n)
{
	int mode = 0; /* 0: start, 1: domain names, 2: lang tags, 3: default */
	llm_buf label = LLM_BUF_INIT;
	llm_buf_addc(&label, '[');
	for (size_t i = 0; i < n;) {
		while (i < n && is_sep(h[i]))
			i++;
		if (i >= n)
			break;
		size_t j = i;
		while (j < n && !is_sep(h[j]))
			j++;
		const char *w = h + i;
		size_t wl = j - i;
		i = j;
		if (wl == 7 && memcmp(w, "default", 7) == 0 && mode == 0) {
			mode = 3;
		} else if (mode == 3) {
			llm_buf_release(&label);
			return llm_fail(LLM_EINVAL, "[default] takes nothing after it");
		} else if (wl == 6 && memcmp(w, "domain", 6) == 0 && !s->ndomains) {
			mode = 1;
		} else if (wl == 4 && memcmp(w, "lang", 4) == 0 && !s->nlangs) {
			mode = 2;
		} else if (mode == 1 || mode == 2) {
			char ***v = mode == 1 ? &s->domains : &s->langs;
			size_t *nv = mode == 1 ? &s->ndomains : &s->nlangs;
			*v = llm_realloc(*v, (*nv + 1) * sizeof **v);
			(*v)[(*nv)++] = llm_strndup(w, wl);
		} else {
			llm_buf_release(&label);
			return llm_fail(LLM_EINVAL, "section '[%.*s]': expected default, domain NAME... or "
			                "lang TAG...", (int)n, h);
		}
	}
	if (mode == 0 || (s->ndomains == 0 && s->nlangs == 0 && mode != 3) ||
	    (mode == 1 && !s->ndomains) || (mode == 2 && !s->nlangs)) {
		llm_buf_release(&label);
		return llm_fail(LLM_EINVAL, "section '[%.*s]': expected default, domain NAME... or lang TAG...",
		                (int)n, h);
	}
	if (mode == 3)
		llm_buf_adds(&label, "default");
	for (size_t k = 0; k < s->ndomains; k++)
		llm_buf_addf(&label, "%s%s", k ? " " : "domain ", s->domains[k]);
	for (size_t k = 0; k < s->nlangs; k++)
		llm_buf_addf(&label, "%s%s", k ? " " : (s->ndomains ? " lang " : "lang "), s->langs[k]);
	llm_buf_addc(&label, ']');
	s->label = llm_buf_detach(&label, NULL);
	return LLM_OK;
}

/* LLM_EFORMAT "name:line: " + the detail of the failure just recorded. */
static int fail_at(const char *name, size_t line)
{
	return llm_fail(LLM_EFORMAT, "%s:%zu: %s", name, line, llm_last_error());
}

int llm_recipe_parse(llm_recipe *r, const char *name, const char *text, size_t len)
{
	section *cur = NULL;
	size_t lineno = 0;
	for (size_t i = 0; i < len;) {
		size_t e = i;
		while (e < len && text[e] != '\n')
			e++;
		lineno++;
		size_t a = i, b = e;
		i = e + 1;
		/* a comment starts at a '#' at the start or after white space */
		for (size_t k = a; k < b; k++)
			if (text[k] == '#' && (k == a || text[k - 1] == ' ' || text[k - 1] == '\t')) {
				b = k;
				break;
			}
		while (a < b && (text[a] == ' ' || text[a] == '\t'))
			a++;
		while (b > a && (text[b - 1] == ' ' || text[b - 1] == '\t' || text[b - 1] == '\r'))
			b--;
		if (a == b)
			continue;
		if (text[a] == '[') {
			if (text[b - 1] != ']')
				return llm_fail(LLM_EFORMAT, "%s:%zu: a section header ends with ']'", name, lineno);
			if (r->ns == LLM_RECIPE_MAX_SECTIONS)
				return llm_fail(LLM_EFORMAT, "%s:%zu: more than %d sections", name, lineno,
				                LLM_RECIPE_MAX_SECTIONS);
			r->s = llm_realloc(r->s, (r->ns + 1) * sizeof *r->s);
			cur = &r->s[r->ns];
			memset(cur, 0, sizeof *cur);
			if (parse_header(cur, text + a + 1, b - a - 2) != LLM_OK) {
				section_release(cur);
				return fail_at(name, lineno);
			}
			r->ns++;
			continue;
		}
		size_t k = a;
		while (k < b && text[k] != '=' && text[k] != '+' && text[k] != '-' && text[k] != ' ' &&
		       text[k] != '\t')
			k++;
		size_t kend = k;
		while (k < b && (text[k] == ' ' || text[k] == '\t'))
			k++;
		int op = OP_SET;
		if (k + 1 < b && (text[k] == '+' || text[k] == '-') && text[k + 1] == '=') {
			op = text[k] == '+' ? OP_ADD : OP_SUB;
			k += 2;
		} else if (k < b && text[k] == '=') {
			k++;
		} else {
			return llm_fail(LLM_EFORMAT, "%s:%zu: expected 'key = value' or a [section]", name, lineno);
		}
		while (k < b && (text[k] == ' ' || text[k] == '\t'))
			k++;
		if (!cur)
			return llm_fail(LLM_EFORMAT, "%s:%zu: '%.*s' before the first [section]", name, lineno,
			                (int)(kend - a), text + a);
		int key = key_index(text + a, kend - a);
		if (key == INT32_MIN) {
			unknown_key(text + a, kend - a);
			return fail_at(name, lineno);
		}
		if (k == b)
			return llm_fail(LLM_EFORMAT, "%s:%zu: '%s' has no value", name, lineno, key_name(key));
		char *value = llm_strndup(text + k, b - k);
		int rc = check_entry(key, op, value);
		free(value);
		if (rc != LLM_OK)
			return fail_at(name, lineno);
		add_entry(cur, key, op, text + k, b - k, lineno);
	}
	return LLM_OK;
}

int llm_recipe_load(llm_recipe *r, const char *path)
{
	char *data;
	size_t len;
	int rc = llm_read_file(path, &data, &len);
	if (rc != LLM_OK)
		return rc;
	rc = llm_recipe_parse(r, path, data, len);
	free(data);
	return rc;
}

int llm_recipe_set(llm_recipe *r, const char *key, const char *op, const char *value)
{
	int k = key_index(key, strlen(key));
	if (k == INT32_MIN)
		return unknown_key(key, strlen(key));
	int o = !strcmp(op, "+=") ? OP_ADD : !strcmp(op, "-=") ? OP_SUB : OP_SET;
	int rc = check_entry(k, o, value);
	if (rc != LLM_OK)
		return rc;
	add_entry(&r->over, k, o, value, strlen(value), 0);
	return LLM_OK;
}

/* How well section s matches (domain, lang): -1 for not at all, else its rank (higher is
 * more specific). */
static long match_rank(const section *s, const char *domain, const char *lang)
{
	long rank = 0;
	if (s->ndomains) {
		bool ok = false;
		for (size_t i = 0; i < s->ndomains && !ok; i++)
			ok = domain && *domain && strcasecmp(s->domains[i], domain) == 0;
		if (!ok)
			return -1;
		rank += 1000;
	}
	if (s->nlangs) {
		size_t best = 0;
		for (size_t i = 0; i < s->nlangs; i++) {
			size_t n = strlen(s->langs[i]);
			if (lang && strncasecmp(s->langs[i], lang, n) == 0 &&
			    (lang[n] == 0 || lang[n] == '-' || lang[n] == '_') && n > best)
				best = n;
		}
		if (!best)
			return -1;
		rank += (long)best;
	}
	return rank;
}

/* origin[] of resolve(): the parameters' sections, then the special keys' (by -1 - key). */
static void apply(const section *s, llm_recipe_settings *out, const char **origin)
{
	for (size_t i = 0; i < s->ne; i++) {
		const entry *e = &s->e[i];
		unsigned bits = 0;
		switch (e->key) {
		case KEY_FILTERS:
		case KEY_NORMALIZE: {
			unsigned *dst = e->key == KEY_FILTERS ? &out->filters : &out->normalize;
			if (e->key == KEY_FILTERS)
				llm_filter_parse(e->value, &bits);
			else
				llm_norm_parse(e->value, &bits);
			*dst = e->op == OP_SET ? bits : e->op == OP_ADD ? (*dst | bits) : (*dst & ~bits);
			break;
		}
		case KEY_TOX: out->tox = yes_no(e->value) == 1; break;
		case KEY_SEGMENT: out->segment = yes_no(e->value) == 1; break;
		case KEY_TOX_WORDS: out->tox_words = yes_no(e->value) == 1; break;
		case KEY_TOX_THRESHOLD: out->tox_threshold = strtod(e->value, NULL); break;
		default: llm_filter_param_set(&out->qp, &llm_filter_params[e->key], e->value); break;
		}
		if (origin)
			origin[e->key >= 0 ? (size_t)e->key : llm_filter_nparams + (size_t)(-1 - e->key)] = s->label;
	}
}

static void resolve(const llm_recipe *r, const char *domain, const char *lang, llm_recipe_settings *out,
                    const char **origin)
{
	memset(out, 0, sizeof *out);
	llm_quality_defaults(&out->qp, lang && *lang ? lang : NULL);
	out->filters = LLM_FILTER_DEFAULT;
	out->normalize = LLM_NORM_DEFAULT;
	out->tox = true;
	out->tox_threshold = -1;
	out->segment = true;
	out->tox_words = true;
	/* matching sections by rank, stable (insertion sort: a recipe has a handful) */
	size_t idx[LLM_RECIPE_MAX_SECTIONS], n = 0;
	long rank[LLM_RECIPE_MAX_SECTIONS];
	for (size_t i = 0; i < r->ns; i++) {
		long k = match_rank(&r->s[i], domain, lang);
		if (k < 0)
			continue;
		size_t j = n++;
		while (j > 0 && rank[j - 1] > k) {
			idx[j] = idx[j - 1];
			rank[j] = rank[j - 1];
			j--;
		}
		idx[j] = i;
		rank[j] = k;
	}
	for (size_t i = 0; i < n; i++) {
		/* a section that names the language gives it settings of the recipe's own */
		out->qp.lang_configured |= r->s[idx[i]].nlangs > 0;
		apply(&r->s[idx[i]], out, origin);
	}
	apply(&r->over, out, origin);
}

void llm_recipe_resolve(const llm_recipe *r, const char *domain, const char *lang,
                        llm_recipe_settings *out)
{
	resolve(r, domain, lang, out, NULL);
}

static void add_unique(const char ***v, size_t *n, const char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcasecmp((*v)[i], s))
			return;
	*v = llm_realloc(*v, (*n + 1) * sizeof **v);
	(*v)[(*n)++] = s;
}

static void explain_one(const llm_recipe *r, const char *domain, const char *lang, llm_buf *out)
{
	const char **origin = llm_calloc(llm_filter_nparams + NSPECIAL, sizeof *origin);
	llm_recipe_settings st;
	resolve(r, domain, lang, &st, origin);
	llm_buf_addf(out, "domain %s, lang %s:", *domain ? domain : "*", *lang ? lang : "*");
	size_t idx[LLM_RECIPE_MAX_SECTIONS], n = 0;
	for (size_t i = 0; i < r->ns; i++)
		if (match_rank(&r->s[i], domain, lang) >= 0)
			idx[n++] = i;
	if (!n)
		llm_buf_adds(out, " no section applies");
	for (size_t i = 0; i < n; i++)
		llm_buf_addf(out, " %s", r->s[idx[i]].label);
	llm_buf_addc(out, '\n');
#define ORIGIN(k) (origin[k] ? origin[k] : "built-in")
	llm_buf_adds(out, "  filters = ");
	llm_filter_format(st.filters, out);
	llm_buf_addf(out, "  # %s\n  normalize = ", ORIGIN(llm_filter_nparams + 0));
	llm_norm_format(st.normalize, out);
	llm_buf_addf(out, "  # %s\n  tox = %s  # %s\n", ORIGIN(llm_filter_nparams + 1), st.tox ? "yes" : "no",
	             ORIGIN(llm_filter_nparams + 2));
	if (st.tox_threshold >= 0) {
		llm_buf_adds(out, "  tox_threshold = ");
		llm_json_put_f64(out, st.tox_threshold);
		llm_buf_addf(out, "  # %s\n", ORIGIN(llm_filter_nparams + 3));
	} else
		llm_buf_adds(out, "  tox_threshold = (llm-tox's default)  # built-in\n");
	llm_buf_addf(out, "  tox_words = %s  # %s\n", st.tox_words ? "yes" : "no",
	             ORIGIN(llm_filter_nparams + 5));
	if (llm_quality_is_zh(lang))
		llm_buf_addf(out, "  segment = %s  # %s\n", st.segment ? "yes" : "no", ORIGIN(llm_filter_nparams + 4));
	for (size_t i = 0; i < llm_filter_nparams; i++) {
		const llm_filter_param *p = &llm_filter_params[i];
		if (!(st.filters & (1u << p->step)))
			continue;
		llm_buf_addf(out, "  %s = ", p->name);
		llm_filter_param_get(&st.qp, p, out);
		llm_buf_addf(out, "  # %s\n", ORIGIN(i));
	}
#undef ORIGIN
	free(origin);
}

void llm_recipe_explain(const llm_recipe *r, llm_buf *out)
{
	const char **domains = NULL, **langs = NULL;
	size_t nd = 0, nl = 0;
	for (size_t i = 0; i < r->ns; i++) {
		for (size_t k = 0; k < r->s[i].ndomains; k++)
			add_unique(&domains, &nd, r->s[i].domains[k]);
		for (size_t k = 0; k < r->s[i].nlangs; k++)
			add_unique(&langs, &nl, r->s[i].langs[k]);
	}
	llm_buf_adds(out, "# the settings per domain and language, each line with the section that set it;\n"
	                  "# '*' is any other domain or language\n");
	for (size_t d = 0; d <= nd; d++)
		for (size_t l = 0; l <= nl; l++) {
			llm_buf_addc(out, '\n');
			explain_one(r, d < nd ? domains[d] : "", l < nl ? langs[l] : "", out);
		}
	free(domains);
	free(langs);
}
