/*
 * toxrecord.c — llm-tox's records: parsed, labelled, the policy that applies to each, and
 * the scorer built from the options.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "llm-tox.h"

static const char *const default_langs[] = { "ar", "de", "en", "es", "fr", "hi", "ja", "ko",
                                             "ru", "zh" };

void tox_record_parse(record *r, const struct cfg *c)
{
	r->reason = NULL;
	r->rec_ok = 0;
	llm_buf_reset(&r->text);
	if (r->too_long) {
		r->reason = "too_long";
		snprintf(r->msg, sizeof r->msg, "line of %zu bytes is longer than --max-line", r->len);
		return;
	}
	if (llm_json_parse(&r->rec, r->line, r->len) != LLM_OK) {
		r->reason = "bad_json";
		snprintf(r->msg, sizeof r->msg, "bad JSON: %s at byte %zu", r->rec.err_msg,
		         r->rec.err_pos + 1);
		return;
	}
	r->rec_ok = 1;
	const llm_json_val *t = llm_json_get(&r->rec, c->co.field);
	if (!t || t->type != LLM_JSON_STRING) {
		r->reason = "no_text";
		snprintf(r->msg, sizeof r->msg, t ? "field '%s' is not a string" : "missing field '%s'",
		         c->co.field);
		return;
	}
	llm_json_str(t, &r->text);
}

int tox_each_record(const struct cfg *c, char **files, int nfiles, record_fn fn, void *ctx)
{
	static char *stdin_only[] = { "-" };
	if (nfiles == 0) {
		files = stdin_only;
		nfiles = 1;
	}
	record r;
	memset(&r, 0, sizeof r);
	llm_json_rec_init(&r.rec);
	llm_buf_init(&r.text);
	int failed = 0;
	for (int i = 0; i < nfiles; i++) {
		tool_lines in;
		if (tool_lines_open(&in, files[i], &c->co, NULL) != LLM_OK) {
			llm_error("%s", llm_last_error());
			failed = 1;
			continue;
		}
		while (tool_lines_next(&in)) {
			r.file = in.name;
			r.lineno = in.lineno;
			r.line = in.line;
			r.head_len = in.len;
			r.len = in.full_len;
			r.too_long = in.too_long;
			tox_record_parse(&r, c);
			if (fn(ctx, &r))
				failed = 1;
		}
		if (tool_lines_close(&in) != LLM_OK) {
			llm_error("%s", llm_last_error());
			failed = 1;
		}
	}
	llm_json_rec_release(&r.rec);
	llm_buf_release(&r.text);
	return failed;
}

void tox_skip_record(const struct cfg *c, const record *r, const char *why)
{
	if (c->co.strict)
		die("%s:%llu: %s", r->file, (unsigned long long)r->lineno, why);
	llm_warn_at(r->file, r->lineno, "%s", why);
}

int tox_record_label(const struct cfg *c, const record *r, llm_buf *tmp)
{
	const llm_json_val *v = llm_json_get(&r->rec, c->label_field);
	if (!v)
		return -1;
	double x;
	switch (v->type) {
	case LLM_JSON_TRUE: return 1;
	case LLM_JSON_FALSE: return 0;
	case LLM_JSON_NUMBER: return llm_json_num(v, &x) == LLM_OK ? x != 0 : -1;
	case LLM_JSON_STRING: {
		static const char *const yes[] = { "1", "true", "toxic", "offensive", "hate" };
		static const char *const no[] = { "0", "false", "clean", "ok", "none", "neither" };
		llm_buf_reset(tmp);
		llm_json_str(v, tmp);
		for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
			if (strcasecmp(tmp->p, yes[i]) == 0)
				return 1;
		for (size_t i = 0; i < sizeof no / sizeof *no; i++)
			if (strcasecmp(tmp->p, no[i]) == 0)
				return 0;
		return -1;
	}
	default: return -1;
	}
}

llm_tox *tox_make(const struct cfg *c)
{
	llm_tox *t = llm_tox_new();
	llm_tox_set_cjk_min(t, (size_t)c->cjk_min);
	llm_tox_set_zh_bounds(t, !c->zh_substrings);
	char path[TOOL_PATH_MAX], rel[64];
	if (!c->no_words && c->nreplace == 0) {
		for (size_t i = 0; i < sizeof default_langs / sizeof *default_langs; i++) {
			snprintf(rel, sizeof rel, "samples/wordlists/%s", default_langs[i]);
			tool_data_path(path, sizeof path, rel);
			if (llm_tox_add_words(t, default_langs[i], path) != LLM_OK)
				die("default word list: %s (use --words FILE or --no-words)", llm_last_error());
		}
	}
	for (int i = 0; !c->no_words && i < c->nwords; i++) {
		const char *arg = c->words[i], *colon = strchr(arg, ':');
		char lang[32] = "";
		const char *file = arg;
		/* "LANG:FILE" when what precedes the colon looks like a language tag. */
		if (colon && colon - arg > 0 && colon - arg < (long)sizeof lang &&
		    strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_") == (size_t)(colon - arg)) {
			memcpy(lang, arg, (size_t)(colon - arg));
			file = colon + 1;
		}
		if (llm_tox_add_words(t, *lang ? lang : NULL,
		                      tool_data_find(file, "samples/wordlists", NULL)) != LLM_OK)
			die_lib();
	}
	if (!c->no_model) {
		const char *m = c->model;
		if (!m) {
			m = tool_data_path(path, sizeof path, "samples/tox/tox.bin");
		}
		int rc = tox_model_is_dir(m) ? tox_model_open(t, m, c->label)
		                             : llm_tox_set_model(t, m, c->label);
		if (rc != LLM_OK) {
			if (c->model)
				die_lib();
			die("default model: %s (use --model FILE or --no-model)", llm_last_error());
		}
	}
	int rc = llm_tox_ready(t);
	if (rc == LLM_ENOTFOUND)
		die("%s (--zh-substrings matches CJK list entries without it)", llm_last_error());
	if (rc != LLM_OK)
		die_lib();
	return t;
}

void tox_lang_of(const record *r, const char **lang, size_t *len, llm_buf *tmp)
{
	const llm_json_val *v = llm_json_get(&r->rec, "lang");
	*lang = NULL;
	*len = 0;
	if (v && v->type == LLM_JSON_STRING) {
		llm_buf_reset(tmp);
		llm_json_str(v, tmp);
		*lang = tmp->p;
		*len = tmp->len;
	}
}

/* The record's domain field (NULL when it has none), NUL-terminated in tmp. */
const char *tox_domain_of(const record *r, llm_buf *tmp)
{
	const llm_json_val *v = llm_json_get(&r->rec, "domain");
	if (!v || v->type != LLM_JSON_STRING)
		return NULL;
	llm_buf_reset(tmp);
	llm_json_str(v, tmp);
	return tmp->p;
}

/*
 * What applies to a document of language lang[0..len) (NULL: none) and domain (NULL: none).
 * The threshold: --threshold's value for the language if it names it, else its bare value
 * if it has one, else the recipe's, else 0.85. A recipe may exempt the document (tox = no)
 * or its word lists (tox_words = no).
 */
void tox_policy_for(const struct cfg *c, const char *lang, size_t len, const char *domain,
                    llm_tox_policy *p)
{
	p->threshold = llm_toxlang_get(&c->threshold, lang, len);
	p->words_per_1k = llm_toxlang_get(&c->per_1k, lang, len);
	p->words = !c->no_words;
	p->model = !c->no_model;
	if (!c->recipe)
		return;
	llm_recipe_settings st;
	llm_recipe_resolve(c->recipe, domain, lang && len ? lang : NULL, &st);
	if (st.tox_threshold >= 0 && !llm_toxlang_named(&c->threshold, lang, len) &&
	    !c->threshold.dflt_set)
		p->threshold = st.tox_threshold;
	p->words &= st.tox && st.tox_words;
	p->model &= st.tox;
}
