/*
 * clean.c — the per-document pipeline of llm-clean (see clean.h for the order and why).
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "clean.h"

#include <math.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/err.h"
#include "core/io.h"
#include "core/utf8.h"
#include "fasttext.h"
#include "lid.h"
#include "timemask.h"

static const char *const filter_names[] = { "length", "gopher-rep", "gopher-quality", "c4",
	                                    "fineweb" };

int llm_filter_parse(const char *list, unsigned *bits)
{
	*bits = 0;
	const char *p = list;
	while (*p) {
		size_t n = strcspn(p, ",");
		if (n == 7 && memcmp(p, "default", 7) == 0) {
			*bits |= LLM_FILTER_DEFAULT;
		} else if (!(n == 4 && memcmp(p, "none", 4) == 0)) {
			size_t k = 0;
			while (k < 5 && !(strlen(filter_names[k]) == n && memcmp(filter_names[k], p, n) == 0))
				k++;
			if (k == 5)
				return llm_fail(LLM_EINVAL, "unknown filter '%.*s'", (int)n, p);
			*bits |= 1u << k;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return LLM_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Pattern lists */

struct llm_patterns {
	pcre2_code **code;
	size_t n;
};

int llm_patterns_load(llm_patterns **out, const char *path)
{
	*out = NULL;
	char *data;
	size_t len;
	int rc = llm_read_file(path, &data, &len);
	if (rc != LLM_OK)
		return rc;
	llm_patterns *p = llm_calloc(1, sizeof *p);
	size_t lineno = 0;
	for (size_t i = 0; i < len;) {
		size_t e = i;
		while (e < len && data[e] != '\n')
			e++;
		lineno++;
		size_t b = e;
		if (b > i && data[b - 1] == '\r')
			b--;
		if (b > i && data[i] != '#') {
			int err;
			PCRE2_SIZE off;
			pcre2_code *re = pcre2_compile((PCRE2_SPTR)data + i, b - i, PCRE2_UTF | PCRE2_UCP |
			                               PCRE2_MULTILINE | PCRE2_MATCH_INVALID_UTF,
			                               &err, &off, NULL);
			if (!re) {
				PCRE2_UCHAR msg[256];
				pcre2_get_error_message(err, msg, sizeof msg);
				free(data);
				llm_patterns_free(p);
				return llm_fail(LLM_EINVAL, "%s:%zu: bad pattern at offset %zu: %s", path,
				                lineno, (size_t)off, (char *)msg);
			}
			pcre2_jit_compile(re, PCRE2_JIT_COMPLETE); /* falls back to the interpreter */
			p->code = llm_realloc(p->code, (p->n + 1) * sizeof *p->code);
			p->code[p->n++] = re;
		}
		i = e + 1;
	}
	free(data);
	*out = p;
	return LLM_OK;
}

void llm_patterns_free(llm_patterns *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		pcre2_code_free(p->code[i]);
	free(p->code);
	free(p);
}

static bool patterns_match(const llm_patterns *p, pcre2_match_data *md, const char *s, size_t n)
{
	for (size_t i = 0; i < p->n; i++)
		if (pcre2_match(p->code[i], (PCRE2_SPTR)s, n, 0, 0, md, NULL) >= 0)
			return true;
	return false;
}

/* ------------------------------------------------------------------------------------------ */

void llm_clean_cfg_init(llm_clean_cfg *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->field = "text";
	cfg->html_opts = (llm_html_opts)LLM_HTML_OPTS_DEFAULT;
	cfg->normalize = true;
	cfg->norm = (llm_norm_opts)LLM_NORM_OPTS_DEFAULT;
	cfg->filters = LLM_FILTER_DEFAULT;
	cfg->min_chars = 50;
	llm_quality_defaults(&cfg->qp_en, "en");
	llm_quality_defaults(&cfg->qp_zh, "zh");
	llm_quality_defaults(&cfg->qp_ja, "ja");
	cfg->lang_threshold = 0.65;
	cfg->pii.kinds = LLM_PII_ALL;
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	cfg->ref_year = tm.tm_year + 1900;
	cfg->default_weight = 1.0;
	cfg->min_weight = 0.05;
}

struct llm_cleaner {
	const llm_clean_cfg *cfg;
	llm_quality *q;
	llm_html *html;
	llm_fasttext_scratch *ft;
	llm_timemask_scratch *tm;
	pcre2_match_data *md;
	llm_buf text, a, b, title;
	llm_json_edit ed;
};

llm_cleaner *llm_cleaner_new(const llm_clean_cfg *cfg)
{
	llm_cleaner *c = llm_calloc(1, sizeof *c);
	c->cfg = cfg;
	c->q = llm_quality_new();
	c->html = llm_html_new();
	if (cfg->lang_model)
		c->ft = llm_fasttext_scratch_new(cfg->lang_model);
	if (cfg->timemask)
		c->tm = llm_timemask_scratch_new(cfg->timemask);
	c->md = pcre2_match_data_create(1, NULL);
	llm_json_edit_init(&c->ed);
	return c;
}

void llm_cleaner_free(llm_cleaner *c)
{
	if (!c)
		return;
	llm_quality_free(c->q);
	llm_html_free(c->html);
	llm_fasttext_scratch_free(c->ft);
	llm_timemask_scratch_free(c->tm);
	pcre2_match_data_free(c->md);
	llm_buf_release(&c->text);
	llm_buf_release(&c->a);
	llm_buf_release(&c->b);
	llm_buf_release(&c->title);
	llm_json_edit_release(&c->ed);
	free(c);
}

static void swap(llm_buf *x, llm_buf *y)
{
	llm_buf t = *x;
	*x = *y;
	*y = t;
}

static void drop(llm_clean_result *r, const char *reason)
{
	r->status = LLM_CLEAN_DROP;
	r->reason = reason;
}

static void drop_v(llm_clean_result *r, const llm_verdict *v)
{
	drop(r, v->reason);
	r->value = v->value;
	r->threshold = v->threshold;
	r->has_value = true;
}

/* Language id: fastText model or the built-in detector. Model input is one line, as fastText
 * predicts per line; newlines become spaces (the model's own convention, see fasttext.h). */
static void identify(llm_cleaner *c, const char *s, size_t n, char lang[16], double *score)
{
	const llm_clean_cfg *cfg = c->cfg;
	if (cfg->lang_model) {
		llm_fasttext_pred pr;
		int k = llm_fasttext_predict(cfg->lang_model, c->ft, s, n, 1, 0.0f, &pr);
		if (k <= 0) {
			snprintf(lang, 16, "und");
			*score = 0;
			return;
		}
		snprintf(lang, 16, "%s", llm_fasttext_label_name(cfg->lang_model, pr.label));
		*score = pr.prob > 1.0f ? 1.0 : pr.prob;
		return;
	}
	/* the first 16 KiB decide: more text changes the script shares very little */
	llm_lid_result lr;
	llm_lid_detect(s, n, 1 << 14, &lr);
	snprintf(lang, 16, "%s", lr.lang);
	*score = lr.score;
}

static const llm_quality_params *params_for(const llm_clean_cfg *cfg, const char *lang)
{
	if (strncmp(lang, "zh", 2) == 0 || strcmp(lang, "cmn") == 0 || strcmp(lang, "lzh") == 0 ||
	    strcmp(lang, "yue") == 0 || strcmp(lang, "wuu") == 0)
		return &cfg->qp_zh;
	if (strncmp(lang, "ja", 2) == 0)
		return &cfg->qp_ja;
	return &cfg->qp_en;
}

/* Year of a record from "date" (ISO 8601: leading 4 digits) or "year"; 0 if none. */
static int record_year(const llm_json_rec *rec, llm_buf *tmp)
{
	int64_t y;
	if (llm_json_get_i64(rec, "year", &y) == LLM_OK && y > 0 && y < 10000)
		return (int)y;
	llm_buf_reset(tmp);
	if (llm_json_get_str(rec, "year", tmp) == LLM_OK && tmp->len >= 4)
		return atoi(tmp->p);
	llm_buf_reset(tmp);
	if (llm_json_get_str(rec, "date", tmp) == LLM_OK && tmp->len >= 4) {
		for (int i = 0; i < 4; i++)
			if (tmp->p[i] < '0' || tmp->p[i] > '9')
				return 0;
		return (tmp->p[0] - '0') * 1000 + (tmp->p[1] - '0') * 100 + (tmp->p[2] - '0') * 10 +
		       (tmp->p[3] - '0');
	}
	return 0;
}

void llm_clean_record(llm_cleaner *c, const char *line, size_t len, llm_json_rec *rec,
                      llm_buf *out, llm_clean_result *r)
{
	const llm_clean_cfg *cfg = c->cfg;
	memset(r, 0, sizeof *r);
	r->status = LLM_CLEAN_KEEP;
	llm_buf_reset(out);
	if (llm_json_parse(rec, line, len) != LLM_OK) {
		r->status = LLM_CLEAN_BAD;
		r->reason = "bad_json";
		r->err_msg = rec->err_msg;
		r->err_pos = rec->err_pos;
		return;
	}
	const llm_json_val *tv = llm_json_get(rec, cfg->field);
	if (!tv || tv->type != LLM_JSON_STRING) {
		r->status = LLM_CLEAN_BAD;
		r->reason = tv ? "text_not_string" : "missing_text";
		r->err_msg = tv ? "text field is not a string" : "missing text field";
		return;
	}
	llm_buf_reset(&c->text);
	llm_json_str(tv, &c->text);
	llm_json_edit_reset(&c->ed);
	const llm_json_val *lv = llm_json_get(rec, "lang");
	if (lv && lv->type == LLM_JSON_STRING) {
		llm_buf_reset(&c->a);
		llm_json_str(lv, &c->a);
		snprintf(r->lang, sizeof r->lang, "%s", c->a.p ? c->a.p : "");
	}

	/* HTML */
	const llm_json_val *fv = llm_json_get(rec, "format");
	bool html = cfg->html || (fv && llm_json_str_eq(fv, "html"));
	if (html) {
		llm_buf_reset(&c->a);
		llm_html_to_text(c->html, c->text.p, c->text.len, &cfg->html_opts, &c->a);
		swap(&c->text, &c->a);
		size_t tl;
		const char *t = llm_html_title(c->html, &tl);
		if (tl)
			llm_json_edit_str(&c->ed, "title", t, tl);
		if (fv)
			llm_json_edit_str(&c->ed, "format", "text", 4);
	}
	/* normalisation */
	if (cfg->normalize) {
		llm_buf_reset(&c->a);
		llm_normalize(c->text.p ? c->text.p : "", c->text.len, &cfg->norm, &c->a);
		swap(&c->text, &c->a);
	}
	/* line patterns */
	if (cfg->drop_line_pattern) {
		llm_buf_reset(&c->a);
		const char *s = c->text.p;
		for (size_t i = 0; i < c->text.len;) {
			const char *e = memchr(s + i, '\n', c->text.len - i);
			size_t j = e ? (size_t)(e - s) : c->text.len;
			if (!patterns_match(cfg->drop_line_pattern, c->md, s + i, j - i)) {
				if (c->a.len)
					llm_buf_addc(&c->a, '\n');
				llm_buf_add(&c->a, s + i, j - i);
			}
			i = j + 1;
		}
		swap(&c->text, &c->a);
	}
	if (!c->text.p)
		llm_buf_grow(&c->text, 0);

	/* language */
	if (cfg->lid) {
		double score;
		identify(c, c->text.p, c->text.len, r->lang, &score);
		llm_json_edit_str(&c->ed, "lang", r->lang, strlen(r->lang));
		llm_json_edit_f64(&c->ed, "lang_score", round(score * 1e4) / 1e4);
		if (cfg->langs) {
			bool ok = false;
			for (int i = 0; cfg->langs[i] && !ok; i++)
				ok = strcmp(cfg->langs[i], r->lang) == 0;
			if (!ok) {
				drop(r, "lang");
				return;
			}
			if (score < cfg->lang_threshold) {
				drop(r, "lang_score");
				r->value = score;
				r->threshold = cfg->lang_threshold;
				r->has_value = true;
				return;
			}
		}
	} else if (!r->lang[0]) {
		llm_lid_result lr;
		llm_lid_detect(c->text.p, c->text.len, 1 << 12, &lr);
		snprintf(r->lang, sizeof r->lang, "%s", lr.lang);
	}
	const llm_quality_params *qp = params_for(cfg, r->lang);

	/* filters */
	llm_verdict v;
	if (cfg->filters & LLM_FILTER_LENGTH) {
		size_t nc = llm_utf8_count(c->text.p, c->text.len);
		if (nc < cfg->min_chars) {
			drop(r, "too_short");
			r->value = (double)nc;
			r->threshold = (double)cfg->min_chars;
			r->has_value = true;
			return;
		}
		if (cfg->max_chars && nc > cfg->max_chars) {
			drop(r, "too_long");
			r->value = (double)nc;
			r->threshold = (double)cfg->max_chars;
			r->has_value = true;
			return;
		}
	}
	/* words are needed only by the word-based rules */
	bool words = (cfg->filters & ~LLM_FILTER_LENGTH) || ((cfg->filters & LLM_FILTER_LENGTH) && cfg->min_words);
	if (words)
		llm_quality_set_text(c->q, c->text.p, c->text.len);
	if ((cfg->filters & LLM_FILTER_LENGTH) && cfg->min_words &&
	    llm_quality_nwords(c->q) < cfg->min_words) {
		drop(r, "too_few_words");
		r->value = (double)llm_quality_nwords(c->q);
		r->threshold = (double)cfg->min_words;
		r->has_value = true;
		return;
	}
	if ((cfg->filters & LLM_FILTER_GOPHER_REP) && !llm_gopher_repetition(c->q, qp, &v)) {
		drop_v(r, &v);
		return;
	}
	if ((cfg->filters & LLM_FILTER_GOPHER_QUALITY) && !llm_gopher_quality(c->q, qp, &v)) {
		drop_v(r, &v);
		return;
	}
	if (cfg->filters & LLM_FILTER_C4) {
		uint64_t st[5] = { 0 };
		llm_buf_reset(&c->a);
		bool ok = llm_c4_filter(c->q, qp, &c->a, st, &v);
		for (int i = 0; i < 5; i++)
			r->c4_lines[i] = st[i];
		if (!ok) {
			drop_v(r, &v);
			return;
		}
		if (!c->a.p)
			llm_buf_grow(&c->a, 0);
		swap(&c->text, &c->a);
		llm_quality_set_text(c->q, c->text.p, c->text.len);
	}
	if ((cfg->filters & LLM_FILTER_FINEWEB) && !llm_fineweb_quality(c->q, qp, &v)) {
		drop_v(r, &v);
		return;
	}
	if (cfg->drop_pattern && patterns_match(cfg->drop_pattern, c->md, c->text.p, c->text.len)) {
		drop(r, "drop_pattern");
		return;
	}

	/* masking */
	if (cfg->mask_pii) {
		llm_buf_reset(&c->a);
		if (llm_pii_mask(c->text.p, c->text.len, &cfg->pii, &c->a, r->pii))
			swap(&c->text, &c->a);
	}
	if (cfg->timemask) {
		llm_buf_reset(&c->a);
		r->times = llm_timemask_apply(cfg->timemask, c->tm, c->text.p, c->text.len, &c->a);
		if (r->times)
			swap(&c->text, &c->a);
	}
	/* freshness */
	if (cfg->freshness) {
		int y = record_year(rec, &c->a);
		double w = cfg->default_weight;
		if (y > 0) {
			w = y >= cfg->ref_year ? 1.0 : 1.0 / (double)(cfg->ref_year - y + 1);
			if (w < cfg->min_weight)
				w = cfg->min_weight;
		}
		llm_json_edit_f64(&c->ed, "weight", round(w * 1e6) / 1e6);
	}

	/* output: replace the text only when it changed, so untouched records stay byte-exact */
	llm_buf_reset(&c->a);
	llm_json_str(tv, &c->a);
	r->changed = c->a.len != c->text.len || memcmp(c->a.p ? c->a.p : "", c->text.p, c->text.len);
	if (r->changed)
		llm_json_edit_str(&c->ed, cfg->field, c->text.p, c->text.len);
	llm_json_write(rec, &c->ed, out);
}
