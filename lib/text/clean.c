/*
 * clean.c — the per-document pipeline of llm-clean (see clean.h for the order and why).
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "clean.h"

#include <math.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/err.h"
#include "core/io.h"
#include "core/utf8.h"
#include "fasttext.h"
#include "lid.h"
#include "pubdate.h"
#include "timemask.h"
#include "zhseg.h"

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
	cfg->lang_threshold = 0.65;
	cfg->pii.kinds = LLM_PII_ALL;
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	cfg->ref_year = tm.tm_year + 1900;
	cfg->default_weight = 1.0;
	cfg->min_weight = 0.05;
}

/* Resolved recipe settings of recent (domain, lang) pairs: a corpus file has a few. */
#define SETTINGS_CACHE 16
typedef struct {
	char domain[32], lang[16];
	bool used;
	llm_recipe_settings st;
} cached_settings;

struct llm_cleaner {
	const llm_clean_cfg *cfg;
	llm_recipe *builtin;        /* when cfg->recipe is NULL */
	cached_settings cache[SETTINGS_CACHE];
	unsigned next_slot;
	llm_quality *q;
	/* Chinese words: jieba's segmentation, set up on the first Chinese document */
	llm_zhseg *zh;
	llm_segmenter zhseg;
	int zh_state;               /* 0 not tried, 1 ready, -1 no dictionary */
	llm_html *html;
	llm_fasttext_scratch *ft;
	llm_timemask_scratch *tm;
	pcre2_match_data *md;
	llm_buf text, a, b, title;
	char published[11];         /* the page's date found by extract_html, "" if none */
	llm_json_edit ed;
};

/* jieba's dictionary when the recipe segments Chinese text (see llm_clean_cfg.preload). A
 * failure is said by the first Chinese record, as without preloading. */
static void preload(const llm_cleaner *c)
{
	llm_recipe_settings st;
	llm_recipe_resolve(c->cfg->recipe ? c->cfg->recipe : c->builtin, NULL, "zh", &st);
	const llm_zhseg_dict *d;
	if (st.segment)
		llm_zhseg_dict_default(&d);
}

llm_cleaner *llm_cleaner_new(const llm_clean_cfg *cfg)
{
	llm_cleaner *c = llm_calloc(1, sizeof *c);
	c->cfg = cfg;
	if (!cfg->recipe)
		c->builtin = llm_recipe_new();
	c->q = llm_quality_new();
	c->html = llm_html_new();
	if (cfg->lang_model)
		c->ft = llm_fasttext_scratch_new(cfg->lang_model);
	if (cfg->timemask)
		c->tm = llm_timemask_scratch_new(cfg->timemask);
	c->md = pcre2_match_data_create(1, NULL);
	llm_json_edit_init(&c->ed);
	if (cfg->preload)
		preload(c);
	return c;
}

void llm_cleaner_free(llm_cleaner *c)
{
	if (!c)
		return;
	llm_recipe_free(c->builtin);
	llm_quality_free(c->q);
	llm_zhseg_free(c->zh);
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

/* The recipe's settings for (domain, lang), through the cache. Names longer than the cache's
 * keys are resolved every time. */
static const llm_recipe_settings *settings_for(llm_cleaner *c, const char *domain, const char *lang)
{
	bool cacheable = strlen(domain) < sizeof c->cache[0].domain && strlen(lang) < sizeof c->cache[0].lang;
	if (cacheable)
		for (int i = 0; i < SETTINGS_CACHE; i++)
			if (c->cache[i].used && !strcmp(c->cache[i].domain, domain) &&
			    !strcmp(c->cache[i].lang, lang))
				return &c->cache[i].st;
	cached_settings *e = &c->cache[c->next_slot];
	c->next_slot = (c->next_slot + 1) % SETTINGS_CACHE;
	llm_recipe_resolve(c->cfg->recipe ? c->cfg->recipe : c->builtin, domain, lang, &e->st);
	if (c->cfg->stop_words)
		e->st.qp.stop_words = c->cfg->stop_words;
	snprintf(e->domain, sizeof e->domain, "%s", domain);
	snprintf(e->lang, sizeof e->lang, "%s", lang);
	e->used = cacheable;
	return &e->st;
}

static void warn_no_dictionary(void)
{
	const llm_zhseg_dict *d;
	llm_zhseg_dict_default(&d); /* the load's detail, for this thread */
	llm_warn("Chinese words are single characters: %s", llm_last_error());
}

/* The word segmenter for a document of lang, or NULL for the spaCy-style splitter. Without a
 * dictionary Chinese words are single characters, said once per process. */
static const llm_segmenter *segmenter_for(llm_cleaner *c, const llm_recipe_settings *st, const char *lang)
{
	if (!st->segment || !llm_quality_is_zh(lang))
		return NULL;
	if (c->zh_state == 0) {
		const llm_zhseg_dict *d;
		if (llm_zhseg_dict_default(&d) == LLM_OK) {
			c->zh = llm_zhseg_new(d);
			c->zhseg = llm_zhseg_segmenter(c->zh);
			c->zh_state = 1;
		} else {
			static pthread_once_t once = PTHREAD_ONCE_INIT;
			pthread_once(&once, warn_no_dictionary);
			c->zh_state = -1;
		}
	}
	return c->zh_state > 0 ? &c->zhseg : NULL;
}

/* --lang: a tag keeps itself and the tags that continue it ("zh" keeps "zh-Hant"). */
static bool lang_matches(const char *want, const char *lang)
{
	size_t n = strlen(want);
	return strncmp(want, lang, n) == 0 && (lang[n] == 0 || lang[n] == '-' || lang[n] == '_');
}

/* Year of a record from "published" (the page's own date, see pubdate.h), else "year", else
 * "date" (for a web page the crawl's), each ISO 8601 (leading 4 digits); 0 if none. */
static int record_year(const llm_json_rec *rec, llm_buf *tmp)
{
	int64_t y;
	llm_buf_reset(tmp);
	if (llm_json_get_str(rec, "published", tmp) == LLM_OK && tmp->len >= 4 &&
	    tmp->p[0] >= '0' && tmp->p[0] <= '9')
		return atoi(tmp->p);
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

/* The record's fields: the text into c->text, lang and domain into r (and domain[]); false,
 * with r saying why, for a record that is not one. */
static bool read_record(llm_cleaner *c, const char *line, size_t len, llm_json_rec *rec,
                        const llm_json_val **tv, char domain[32], llm_clean_result *r)
{
	if (llm_json_parse(rec, line, len) != LLM_OK) {
		r->status = LLM_CLEAN_BAD;
		r->reason = "bad_json";
		r->err_msg = rec->err_msg;
		r->err_pos = rec->err_pos;
		return false;
	}
	*tv = llm_json_get(rec, c->cfg->field);
	if (!*tv || (*tv)->type != LLM_JSON_STRING) {
		r->status = LLM_CLEAN_BAD;
		r->reason = *tv ? "text_not_string" : "missing_text";
		r->err_msg = *tv ? "text field is not a string" : "missing text field";
		return false;
	}
	llm_buf_reset(&c->text);
	llm_json_str(*tv, &c->text);
	const llm_json_val *lv = llm_json_get(rec, "lang");
	if (lv && lv->type == LLM_JSON_STRING) {
		llm_buf_reset(&c->a);
		llm_json_str(lv, &c->a);
		snprintf(r->lang, sizeof r->lang, "%s", c->a.p ? c->a.p : "");
	}
	domain[0] = 0;
	const llm_json_val *dv = llm_json_get(rec, "domain");
	if (dv && dv->type == LLM_JSON_STRING) {
		llm_buf_reset(&c->a);
		llm_json_str(dv, &c->a);
		snprintf(domain, 32, "%s", c->a.p ? c->a.p : "");
	}
	snprintf(r->domain, sizeof r->domain, "%s", domain);
	return true;
}

/* HTML records (--html, or "format": "html") become their main text; the title and the new
 * format go to the record. */
static void extract_html(llm_cleaner *c, const llm_json_rec *rec, llm_clean_result *r)
{
	const llm_json_val *fv = llm_json_get(rec, "format");
	r->html = c->cfg->html || (fv && llm_json_str_eq(fv, "html"));
	c->published[0] = 0;
	if (!r->html)
		return;
	/* The page's own publication date, beside the crawl's "date"; a record that already has
	 * one keeps it. */
	const llm_json_val *uv = llm_json_get(rec, "url");
	llm_buf_reset(&c->a);
	if (uv && uv->type == LLM_JSON_STRING)
		llm_json_str(uv, &c->a);
	if (!llm_json_get(rec, "published") &&
	    llm_pubdate_find(c->text.p ? c->text.p : "", c->text.len, c->a.p, c->a.len,
	                     c->published))
		llm_json_edit_str(&c->ed, "published", c->published, 10);
	llm_buf_reset(&c->a);
	llm_html_to_text(c->html, c->text.p, c->text.len, &c->cfg->html_opts, &c->a);
	swap(&c->text, &c->a);
	size_t tl;
	const char *t = llm_html_title(c->html, &tl);
	if (tl)
		llm_json_edit_str(&c->ed, "title", t, tl);
	if (fv)
		llm_json_edit_str(&c->ed, "format", "text", 4);
}

/* The recipe's normalisation, then the lines that --drop-line-pattern removes. */
static void normalise(llm_cleaner *c, const llm_recipe_settings *st)
{
	const llm_clean_cfg *cfg = c->cfg;
	if (st->normalize) {
		llm_norm_opts no = LLM_NORM_OPTS_DEFAULT;
		no.flags = st->normalize;
		llm_buf_reset(&c->a);
		llm_normalize(c->text.p ? c->text.p : "", c->text.len, &no, &c->a);
		swap(&c->text, &c->a);
	}
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
}

/* Language id (--detect-lang, --lang): lang and lang_score to the record, and with --lang the
 * verdict; *st follows a language that changed. False when the record is dropped. */
static bool language(llm_cleaner *c, const char *domain, const llm_recipe_settings **st,
                     llm_clean_result *r)
{
	const llm_clean_cfg *cfg = c->cfg;
	double score;
	char given[16];
	snprintf(given, sizeof given, "%s", r->lang);
	identify(c, c->text.p, c->text.len, r->lang, &score);
	llm_json_edit_str(&c->ed, "lang", r->lang, strlen(r->lang));
	llm_json_edit_f64(&c->ed, "lang_score", round(score * 1e4) / 1e4);
	if (cfg->langs) {
		bool ok = false;
		for (int i = 0; cfg->langs[i] && !ok; i++)
			ok = lang_matches(cfg->langs[i], r->lang);
		if (!ok) {
			drop(r, "lang");
			return false;
		}
		if (score < cfg->lang_threshold) {
			drop(r, "lang_score");
			r->value = score;
			r->threshold = cfg->lang_threshold;
			r->has_value = true;
			return false;
		}
	}
	if (strcmp(given, r->lang) != 0)
		*st = settings_for(c, domain, r->lang);
	return true;
}

/* --mask-pii and --mask-time on the kept text. */
static void mask(llm_cleaner *c, llm_clean_result *r)
{
	const llm_clean_cfg *cfg = c->cfg;
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
}

/* --freshness: the weight of the record's year. */
static void weigh(llm_cleaner *c, const llm_json_rec *rec)
{
	const llm_clean_cfg *cfg = c->cfg;
	int y = c->published[0] ? atoi(c->published) : record_year(rec, &c->a);
	double w = cfg->default_weight;
	if (y > 0) {
		w = y >= cfg->ref_year ? 1.0 : 1.0 / (double)(cfg->ref_year - y + 1);
		if (w < cfg->min_weight)
			w = cfg->min_weight;
	}
	llm_json_edit_f64(&c->ed, "weight", round(w * 1e6) / 1e6);
}

/* The output record: the text replaced only when it changed, so that untouched records stay
 * byte-exact. */
static void write_record(llm_cleaner *c, llm_json_rec *rec, const llm_json_val *tv, llm_buf *out,
                         llm_clean_result *r)
{
	llm_buf_reset(&c->a);
	llm_json_str(tv, &c->a);
	r->changed = c->a.len != c->text.len || memcmp(c->a.p ? c->a.p : "", c->text.p, c->text.len);
	if (r->changed)
		llm_json_edit_str(&c->ed, c->cfg->field, c->text.p, c->text.len);
	llm_json_write(rec, &c->ed, out);
}

static void clean(llm_cleaner *c, const char *line, size_t len, llm_json_rec *rec,
                  llm_buf *out, llm_clean_result *r)
{
	const llm_clean_cfg *cfg = c->cfg;
	memset(r, 0, sizeof *r);
	r->status = LLM_CLEAN_KEEP;
	llm_buf_reset(out);
	llm_json_edit_reset(&c->ed);
	const llm_json_val *tv;
	char domain[32];
	if (!read_record(c, line, len, rec, &tv, domain, r))
		return;
	extract_html(c, rec, r);
	/* a record without a language gets the script detector's for choosing its settings */
	if (!r->lang[0]) {
		llm_lid_result lr;
		llm_lid_detect(c->text.p ? c->text.p : "", c->text.len, 1 << 12, &lr);
		snprintf(r->lang, sizeof r->lang, "%s", lr.lang);
	}
	const llm_recipe_settings *st = settings_for(c, domain, r->lang);
	normalise(c, st);
	if (cfg->lid && !language(c, domain, &st, r))
		return;
	llm_verdict v;
	if (!llm_filter_run(st->filters, c->q, &st->qp, segmenter_for(c, st, r->lang), &c->text, &c->a,
	                    r->counts, &v)) {
		drop_v(r, &v);
		return;
	}
	if (cfg->drop_pattern && patterns_match(cfg->drop_pattern, c->md, c->text.p, c->text.len)) {
		drop(r, "drop_pattern");
		return;
	}
	mask(c, r);
	if (cfg->freshness)
		weigh(c, rec);
	write_record(c, rec, tv, out, r);
}

void llm_clean_record(llm_cleaner *c, const char *line, size_t len, llm_json_rec *rec,
                      llm_buf *out, llm_clean_result *r)
{
	clean(c, line, len, rec, out, r);
	/* a dropped HTML record is audited by the text it was judged on */
	if (r->status == LLM_CLEAN_DROP && r->html) {
		llm_buf_reset(out);
		llm_buf_add(out, c->text.p ? c->text.p : "", c->text.len);
	}
}

/* ------------------------------------------------------------------------------------------ */
/* Outcomes per (domain, language) */

typedef struct {
	char *domain, *lang;
	uint64_t in, out;
	char **reasons; /* static reason codes are not assumed: copied */
	uint64_t *counts;
	size_t nreasons;
} tally_row;

struct llm_clean_tally {
	tally_row *rows;
	size_t n;
};

llm_clean_tally *llm_clean_tally_new(void)
{
	return llm_calloc(1, sizeof(llm_clean_tally));
}

void llm_clean_tally_free(llm_clean_tally *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		for (size_t k = 0; k < t->rows[i].nreasons; k++)
			free(t->rows[i].reasons[k]);
		free(t->rows[i].reasons);
		free(t->rows[i].counts);
		free(t->rows[i].domain);
		free(t->rows[i].lang);
	}
	free(t->rows);
	free(t);
}

void llm_clean_tally_add(llm_clean_tally *t, const char *domain, const char *lang, const char *reason)
{
	domain = domain && *domain ? domain : "unknown";
	lang = lang && *lang ? lang : "und";
	tally_row *row = NULL;
	for (size_t i = 0; i < t->n && !row; i++)
		if (!strcmp(t->rows[i].domain, domain) && !strcmp(t->rows[i].lang, lang))
			row = &t->rows[i];
	if (!row) {
		t->rows = llm_realloc(t->rows, (t->n + 1) * sizeof *t->rows);
		row = &t->rows[t->n++];
		memset(row, 0, sizeof *row);
		row->domain = llm_strdup(domain);
		row->lang = llm_strdup(lang);
	}
	row->in++;
	if (!reason) {
		row->out++;
		return;
	}
	for (size_t k = 0; k < row->nreasons; k++)
		if (!strcmp(row->reasons[k], reason)) {
			row->counts[k]++;
			return;
		}
	row->reasons = llm_realloc(row->reasons, (row->nreasons + 1) * sizeof *row->reasons);
	row->counts = llm_realloc(row->counts, (row->nreasons + 1) * sizeof *row->counts);
	row->reasons[row->nreasons] = llm_strdup(reason);
	row->counts[row->nreasons++] = 1;
}

void llm_clean_tally_json(const llm_clean_tally *t, llm_buf *out)
{
	llm_buf_adds(out, "\"domain_langs\": {");
	bool *done = llm_calloc(t->n + 1, sizeof *done);
	bool first_domain = true;
	for (size_t i = 0; i < t->n; i++) {
		if (done[i])
			continue;
		if (!first_domain)
			llm_buf_adds(out, ", ");
		first_domain = false;
		llm_json_put_str(out, t->rows[i].domain, strlen(t->rows[i].domain));
		llm_buf_adds(out, ": {");
		bool first_lang = true;
		for (size_t j = i; j < t->n; j++) {
			const tally_row *r = &t->rows[j];
			if (done[j] || strcmp(r->domain, t->rows[i].domain))
				continue;
			done[j] = true;
			if (!first_lang)
				llm_buf_adds(out, ", ");
			first_lang = false;
			llm_json_put_str(out, r->lang, strlen(r->lang));
			llm_buf_addf(out, ": {\"records_in\": %llu, \"records_out\": %llu, \"rejected\": {",
			             (unsigned long long)r->in, (unsigned long long)r->out);
			for (size_t k = 0; k < r->nreasons; k++) {
				if (k)
					llm_buf_adds(out, ", ");
				llm_json_put_str(out, r->reasons[k], strlen(r->reasons[k]));
				llm_buf_addf(out, ": %llu", (unsigned long long)r->counts[k]);
			}
			llm_buf_adds(out, "}}");
		}
		llm_buf_addc(out, '}');
	}
	llm_buf_addc(out, '}');
	free(done);
}
