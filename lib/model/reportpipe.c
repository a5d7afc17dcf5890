/*
 * reportpipe.c — reportpipe.h: the pipeline's sections of the page.
 *
 * The pipeline writes one --stats file per input file and stage, so a run of many small
 * files has thousands: each is read once, summed into a few rows, and dropped.
 */
#include "reportpipe.h"

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/io.h"
#include "core/json.h"
#include "report.h"

/* The stages with a --stats file per input file, in the order they run. */
static const char *const stages[] = { "cat", "clean", "dedup", "decon", "tox", "tokens", "noise" };
/* The stages of DIR/times/, in order (the global steps included). */
static const char *const timed_stages[] = { "cat", "clean", "dedup", "decon", "tox", "tokenizer",
                                            "tokens", "noise", "shards", "train", "eval" };
#define NSTAGES (sizeof stages / sizeof *stages)
#define NTIMED (sizeof timed_stages / sizeof *timed_stages)

/* ---- counts by name --------------------------------------------------------------------- */

typedef struct {
	char *name;
	uint64_t n;
} named;

typedef struct {
	named *v;
	size_t len;
} counts;

static void counts_add(counts *c, const char *name, uint64_t n)
{
	for (size_t i = 0; i < c->len; i++)
		if (strcmp(c->v[i].name, name) == 0) {
			c->v[i].n += n;
			return;
		}
	c->v = llm_realloc(c->v, (c->len + 1) * sizeof *c->v);
	c->v[c->len++] = (named){ llm_strdup(name), n };
}

static void counts_release(counts *c)
{
	for (size_t i = 0; i < c->len; i++)
		free(c->v[i].name);
	free(c->v);
	*c = (counts){ 0 };
}

/* Most first, then by name. */
static int cmp_named(const void *a, const void *b)
{
	const named *x = a, *y = b;
	return x->n != y->n ? (x->n < y->n ? 1 : -1) : strcmp(x->name, y->name);
}

/* "reason 12, other 3 and 4 more": the top max of c, most first. */
static void top_list(llm_buf *b, counts *c, size_t max)
{
	if (c->len > 1)
		qsort(c->v, c->len, sizeof *c->v, cmp_named);
	for (size_t i = 0; i < c->len && i < max; i++) {
		llm_buf_adds(b, i ? ", " : "");
		llm_report_escape(b, c->v[i].name, strlen(c->v[i].name));
		llm_buf_addf(b, " %llu", (unsigned long long)c->v[i].n);
	}
	if (c->len > max)
		llm_buf_addf(b, " and %zu more", c->len - max);
	if (!c->len)
		llm_buf_adds(b, "-");
}

/* ---- files ------------------------------------------------------------------------------ */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dir ending in suffix, sorted; *n of them (free each and the array). */
static char **list_dir(const char *dir, const char *suffix, size_t *n)
{
	*n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	char **v = NULL;
	size_t cap = 0, sl = strlen(suffix);
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (e->d_name[0] == '.' || l <= sl || strcmp(e->d_name + l - sl, suffix) != 0)
			continue;
		if (*n == cap)
			v = llm_realloc(v, (cap = cap ? 2 * cap : 64) * sizeof *v);
		v[(*n)++] = llm_strdup(e->d_name);
	}
	closedir(d);
	if (*n > 1)
		qsort(v, *n, sizeof *v, cmp_str);
	return v;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* A JSON object file parsed into rec; *data holds its text (free it). 0 when absent or bad
 * (a bad one warned about). */
static int read_json(const char *path, llm_json_rec *rec, char **data)
{
	size_t len;
	*data = NULL;
	if (llm_read_file(path, data, &len) != LLM_OK)
		return 0;
	if (llm_json_parse(rec, *data, len) != LLM_OK) {
		llm_warn("%s: not a JSON object: %s", path, rec->err_msg ? rec->err_msg : "?");
		free(*data);
		*data = NULL;
		return 0;
	}
	return 1;
}

static uint64_t member_u64(const llm_json_val *obj, const char *key)
{
	llm_json_val v = llm_json_member(obj, key);
	double d;
	return v.type == LLM_JSON_NUMBER && llm_json_num(&v, &d) == LLM_OK && d > 0 ? (uint64_t)d : 0;
}

static uint64_t rec_u64(const llm_json_rec *rec, const char *key)
{
	double d;
	return llm_json_get_num(rec, key, &d) == LLM_OK && d > 0 ? (uint64_t)d : 0;
}

/* The members of an object of counts ({"reason": n, ...}) added to c. */
static void add_counts(counts *c, const llm_json_val *obj, llm_buf *tmp)
{
	size_t it = 0;
	llm_json_val k, v;
	double d;
	while (obj->type == LLM_JSON_OBJECT && llm_json_next(obj, &it, &k, &v) == LLM_OK) {
		llm_buf_reset(tmp);
		if (llm_json_str(&k, tmp) == LLM_OK && v.type == LLM_JSON_NUMBER &&
		    llm_json_num(&v, &d) == LLM_OK && d > 0)
			counts_add(c, tmp->p ? tmp->p : "", (uint64_t)d);
	}
}

/* ---- documents per stage, and per domain and language ------------------------------------- */

typedef struct {
	size_t files;
	uint64_t in, out, rejected;
	counts reasons;
} tally;

typedef struct {
	char *dom, *lang;
	uint64_t in, out;
	counts reasons;
} pair;

typedef struct {
	pair *v;
	size_t len;
} pairs;

static pair *pair_of(pairs *ps, const char *dom, const char *lang)
{
	for (size_t i = 0; i < ps->len; i++)
		if (strcmp(ps->v[i].dom, dom) == 0 && strcmp(ps->v[i].lang, lang) == 0)
			return &ps->v[i];
	ps->v = llm_realloc(ps->v, (ps->len + 1) * sizeof *ps->v);
	ps->v[ps->len] = (pair){ llm_strdup(dom), llm_strdup(lang), 0, 0, { 0 } };
	return &ps->v[ps->len++];
}

static void pairs_release(pairs *ps)
{
	for (size_t i = 0; i < ps->len; i++) {
		free(ps->v[i].dom);
		free(ps->v[i].lang);
		counts_release(&ps->v[i].reasons);
	}
	free(ps->v);
	*ps = (pairs){ 0 };
}

/* llm-clean's "domain_langs": {domain: {language: {records_in, records_out, rejected}}}. */
static void add_domain_langs(pairs *ps, const llm_json_val *dl, llm_buf *tmp)
{
	size_t di = 0;
	llm_json_val dk, dv, lk, lv;
	llm_buf dom = LLM_BUF_INIT;
	while (dl->type == LLM_JSON_OBJECT && llm_json_next(dl, &di, &dk, &dv) == LLM_OK) {
		llm_buf_reset(&dom);
		if (llm_json_str(&dk, &dom) != LLM_OK || dv.type != LLM_JSON_OBJECT)
			continue;
		size_t li = 0;
		while (llm_json_next(&dv, &li, &lk, &lv) == LLM_OK) {
			llm_buf_reset(tmp);
			if (llm_json_str(&lk, tmp) != LLM_OK || lv.type != LLM_JSON_OBJECT)
				continue;
			pair *p = pair_of(ps, dom.p ? dom.p : "", tmp->p ? tmp->p : "");
			p->in += member_u64(&lv, "records_in");
			p->out += member_u64(&lv, "records_out");
			llm_json_val r = llm_json_member(&lv, "rejected");
			add_counts(&p->reasons, &r, tmp);
		}
	}
	llm_buf_release(&dom);
}

/* One --stats file into t (and its domain_langs into ps, when not NULL). */
static void add_stats(tally *t, pairs *ps, const char *path, llm_json_rec *rec, llm_buf *tmp)
{
	char *data;
	if (!read_json(path, rec, &data))
		return;
	t->files++;
	t->in += rec_u64(rec, "records_in");
	t->out += rec_u64(rec, "records_out");
	t->rejected += rec_u64(rec, "records_rejected");
	const llm_json_val *r = llm_json_get(rec, "rejected"), *dl = llm_json_get(rec, "domain_langs");
	if (r)
		add_counts(&t->reasons, r, tmp);
	if (ps && dl)
		add_domain_langs(ps, dl, tmp);
	free(data);
}

static void stage_row(llm_buf *b, const char *name, tally *t)
{
	llm_buf_adds(b, "<tr><td>");
	llm_report_escape(b, name, strlen(name));
	llm_buf_addf(b, "</td><td>%zu</td><td>%llu</td><td>%llu</td><td>%llu</td><td class=\"why\">", t->files,
	             (unsigned long long)t->in, (unsigned long long)t->out,
	             (unsigned long long)t->rejected);
	top_list(b, &t->reasons, 6);
	llm_buf_adds(b, "</td></tr>\n");
}

/* A bar of the kept share: green kept, grey the rest. */
static void bar(llm_buf *b, uint64_t kept, uint64_t all)
{
	int w = all ? (int)lround(160.0 * (double)kept / (double)all) : 0;
	llm_buf_addf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"160\" height=\"12\">"
	             "<rect width=\"160\" height=\"12\" fill=\"#ccc\"/><rect width=\"%d\" height=\"12\" "
	             "fill=\"#2e8b57\"/></svg>", w);
}

static int cmp_pair(const void *a, const void *b)
{
	const pair *x = a, *y = b;
	int c = strcmp(x->dom, y->dom);
	if (c)
		return c;
	if (x->in != y->in)
		return x->in < y->in ? 1 : -1;
	return strcmp(x->lang, y->lang);
}

/* Languages under 2% of their domain's documents, other than en and zh, as one row
 * "other (N)" per domain: a web crawl brings dozens of languages of a document or two. */
static void fold_small(pairs *ps)
{
	pairs out = { 0 };
	for (size_t i = 0; i < ps->len; i++) {
		const pair *p = &ps->v[i];
		uint64_t total = 0;
		size_t folded = 0;
		for (size_t j = 0; j < ps->len; j++)
			if (strcmp(ps->v[j].dom, p->dom) == 0)
				total += ps->v[j].in;
		int keep = p->in * 50 >= total || !strcmp(p->lang, "en") || !strcmp(p->lang, "zh") ||
		           !strcmp(p->lang, "zh-Hant");
		if (!keep)
			for (size_t j = 0; j < ps->len; j++) {
				const pair *q = &ps->v[j];
				folded += strcmp(q->dom, p->dom) == 0 && !(q->in * 50 >= total ||
				          !strcmp(q->lang, "en") || !strcmp(q->lang, "zh") ||
				          !strcmp(q->lang, "zh-Hant"));
			}
		char other[48];
		snprintf(other, sizeof other, "other (%zu)", folded);
		pair *o = pair_of(&out, p->dom, keep ? p->lang : other);
		o->in += p->in;
		o->out += p->out;
		for (size_t k = 0; k < p->reasons.len; k++)
			counts_add(&o->reasons, p->reasons.v[k].name, p->reasons.v[k].n);
	}
	pairs_release(ps);
	*ps = out;
}

static void clean_section(llm_buf *b, pairs *ps)
{
	if (!ps->len)
		return;
	fold_small(ps);
	qsort(ps->v, ps->len, sizeof *ps->v, cmp_pair);
	llm_buf_adds(b, "<section id=\"cleaning\"><h2>Cleaning per domain and language</h2>\n"
	             "<p>llm-clean with the recipe: documents in and kept, and the most frequent "
	             "reasons for the rest (languages under 2% of a domain in one row).</p>\n"
	             "<table><tr><th>domain</th><th>lang</th><th>in</th><th>out</th><th>kept</th>"
	             "<th></th><th>top reasons</th></tr>\n");
	for (size_t i = 0; i < ps->len; i++) {
		pair *p = &ps->v[i];
		llm_buf_adds(b, "<tr><td>");
		llm_report_escape(b, p->dom, strlen(p->dom));
		llm_buf_adds(b, "</td><td>");
		llm_report_escape(b, p->lang, strlen(p->lang));
		llm_buf_addf(b, "</td><td>%llu</td><td>%llu</td><td>%.1f%%</td><td>",
		             (unsigned long long)p->in, (unsigned long long)p->out,
		             p->in ? 100.0 * (double)p->out / (double)p->in : 0.0);
		bar(b, p->out, p->in);
		llm_buf_adds(b, "</td><td class=\"why\">");
		top_list(b, &p->reasons, 3);
		llm_buf_adds(b, "</td></tr>\n");
	}
	llm_buf_adds(b, "</table></section>\n");
}

/* The --stats files of stage in dir summed into t (clean's domain_langs into ps, when not
 * NULL); shards has one, DIR/shards.stats.json. */
static void stage_tally(const char *dir, const char *stage, tally *t, pairs *ps)
{
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	llm_buf path = LLM_BUF_INIT, tmp = LLM_BUF_INIT;
	if (strcmp(stage, "shards") == 0) {
		llm_buf_addf(&path, "%s/shards.stats.json", dir);
		add_stats(t, NULL, path.p, &rec, &tmp);
	} else {
		llm_buf_addf(&path, "%s/%s", dir, stage);
		size_t n;
		char **names = list_dir(path.p, ".stats.json", &n);
		for (size_t i = 0; i < n; i++) {
			llm_buf_reset(&path);
			llm_buf_addf(&path, "%s/%s/%s", dir, stage, names[i]);
			add_stats(t, strcmp(stage, "clean") == 0 ? ps : NULL, path.p, &rec, &tmp);
		}
		free_list(names, n);
	}
	llm_json_rec_release(&rec);
	llm_buf_release(&path);
	llm_buf_release(&tmp);
}

static void stages_section(const char *dir, llm_buf *b)
{
	llm_buf rows = LLM_BUF_INIT;
	pairs ps = { 0 };
	for (size_t s = 0; s <= NSTAGES; s++) {
		tally t = { 0 };
		const char *name = s == NSTAGES ? "shards" : stages[s];
		stage_tally(dir, name, &t, &ps);
		if (t.files)
			stage_row(&rows, name, &t);
		counts_release(&t.reasons);
	}
	if (rows.len)
		llm_buf_addf(b, "<section id=\"stages\"><h2>Documents per stage</h2>\n<table><tr>"
		             "<th>stage</th><th>files</th><th>in</th><th>out</th><th>rejected</th>"
		             "<th>rejected by reason</th></tr>\n%s</table></section>\n", rows.p);
	clean_section(b, &ps);
	pairs_release(&ps);
	llm_buf_release(&rows);
}

int llm_reportpipe_totals(const char *dir, const char *stage, llm_buf *out)
{
	tally t = { 0 };
	stage_tally(dir, stage, &t, NULL);
	if (!t.files)
		return 0;
	llm_buf_addf(out, "%s: %zu file%s, %llu documents in, %llu out", stage, t.files,
	             t.files == 1 ? "" : "s", (unsigned long long)t.in, (unsigned long long)t.out);
	if (t.rejected || t.reasons.len) {
		llm_buf_addf(out, ", %llu rejected (", (unsigned long long)t.rejected);
		if (t.reasons.len > 1)
			qsort(t.reasons.v, t.reasons.len, sizeof *t.reasons.v, cmp_named);
		for (size_t i = 0; i < t.reasons.len && i < 3; i++)
			llm_buf_addf(out, "%s%s %llu", i ? ", " : "", t.reasons.v[i].name,
			             (unsigned long long)t.reasons.v[i].n);
		if (t.reasons.len > 3)
			llm_buf_addf(out, " and %zu more reason%s", t.reasons.len - 3,
			             t.reasons.len == 4 ? "" : "s");
		llm_buf_adds(out, ")");
	}
	counts_release(&t.reasons);
	return 1;
}

/* ---- tokens per domain ------------------------------------------------------------------ */

static void tokens_section(const char *dir, llm_buf *b)
{
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	llm_buf path = LLM_BUF_INIT, name = LLM_BUF_INIT, one = LLM_BUF_INIT;
	llm_buf_addf(&path, "%s/shards/manifest.json", dir);
	char *data;
	const llm_json_val *doms;
	if (!read_json(path.p, &rec, &data) || !(doms = llm_json_get(&rec, "domains")) ||
	    doms->type != LLM_JSON_OBJECT) {
		free(data);
		goto out;
	}
	static const char *const cols[] = { "train_documents", "train_tokens", "val_documents",
	                                    "val_tokens", "truncated_documents" };
	llm_buf_adds(b, "<section id=\"tokens\"><h2>Tokens per domain</h2>\n<table><tr>"
	             "<th>domain</th><th>train docs</th><th>train tokens</th><th>val docs</th>"
	             "<th>val tokens</th><th>truncated docs</th></tr>\n");
	size_t it = 0, nones = 0;
	llm_json_val k, v;
	while (llm_json_next(doms, &it, &k, &v) == LLM_OK) {
		llm_buf_reset(&name);
		if (llm_json_str(&k, &name) != LLM_OK || v.type != LLM_JSON_OBJECT)
			continue;
		int lone = member_u64(&v, "val_documents") == 1;
		llm_buf_adds(b, lone ? "<tr class=\"warn\"><td>" : "<tr><td>");
		llm_report_escape(b, name.p ? name.p : "", name.len);
		llm_buf_adds(b, "</td>");
		for (size_t c = 0; c < sizeof cols / sizeof *cols; c++)
			llm_buf_addf(b, "<td>%llu</td>", (unsigned long long)member_u64(&v, cols[c]));
		llm_buf_adds(b, "</tr>\n");
		if (lone) {
			llm_buf_adds(&one, nones++ ? ", " : "");
			llm_report_escape(&one, name.p ? name.p : "", name.len);
		}
	}
	llm_buf_adds(b, "</table>\n");
	if (nones)
		llm_buf_addf(b, "<p class=\"warn\">Validated on one document: %s. Such a domain's "
		             "validation loss is that of one text, not of the domain; give it more "
		             "documents, or a larger validation share (llm-shard --val-fraction).</p>\n",
		             one.p);
	llm_buf_adds(b, "</section>\n");
	free(data);
out:
	llm_json_rec_release(&rec);
	llm_buf_release(&path);
	llm_buf_release(&name);
	llm_buf_release(&one);
}

/* ---- generations ------------------------------------------------------------------------ */

/* The number N of "generate-N.txt", 0 for another name. */
static long gen_number(const char *name)
{
	char *end;
	if (strncmp(name, "generate-", 9) != 0)
		return 0;
	long n = strtol(name + 9, &end, 10);
	return n > 0 && strcmp(end, ".txt") == 0 ? n : 0;
}

static int cmp_gen(const void *a, const void *b)
{
	long x = gen_number(*(char *const *)a), y = gen_number(*(char *const *)b);
	return (x > y) - (x < y);
}

/* A text file's first max bytes, escaped; "..." when there was more. 0 when unreadable. */
static int file_text(llm_buf *b, const char *path, size_t max, int strip_newline)
{
	char *data;
	size_t len;
	if (llm_read_file(path, &data, &len) != LLM_OK)
		return 0;
	size_t n = len > max ? max : len;
	if (strip_newline && n == len && n && data[n - 1] == '\n')
		n--;
	llm_report_escape(b, data, n);
	if (len > max)
		llm_buf_adds(b, "...");
	free(data);
	return 1;
}

static void generations_section(const char *dir, llm_buf *b)
{
	llm_buf path = LLM_BUF_INIT;
	llm_buf_addf(&path, "%s/eval", dir);
	size_t n, shown = 0;
	char **names = list_dir(path.p, ".txt", &n);
	if (n > 1)
		qsort(names, n, sizeof *names, cmp_gen);
	for (size_t i = 0; i < n; i++) {
		long g = gen_number(names[i]);
		if (!g)
			continue;
		if (!shown++)
			llm_buf_adds(b, "<section id=\"generations\"><h2>Sample generations</h2>\n"
			             "<p>Each prompt in bold, then what the model wrote after it.</p>\n");
		llm_buf_addf(b, "<h3>Prompt %ld</h3>\n<pre class=\"gen\"><b>", g);
		llm_buf_reset(&path);
		llm_buf_addf(&path, "%s/eval/generate-%ld.prompt", dir, g);
		if (!file_text(b, path.p, 2000, 1))
			llm_buf_adds(b, "<i>(the prompt was not recorded)</i> ");
		llm_buf_adds(b, "</b>");
		llm_buf_reset(&path);
		llm_buf_addf(&path, "%s/eval/%s", dir, names[i]);
		file_text(b, path.p, 2000, 0);
		llm_buf_adds(b, "</pre>\n");
	}
	if (shown)
		llm_buf_adds(b, "</section>\n");
	free_list(names, n);
	llm_buf_release(&path);
}

/* ---- time per stage --------------------------------------------------------------------- */

static void times_section(const char *dir, llm_buf *b)
{
	llm_buf path = LLM_BUF_INIT;
	llm_buf_addf(&path, "%s/times", dir);
	size_t n;
	char **names = list_dir(path.p, ".time", &n);
	double sum[NTIMED] = { 0 };
	int seen[NTIMED] = { 0 }, any = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t s = 0; s < NTIMED; s++) {
			size_t l = strlen(timed_stages[s]);
			if (strncmp(names[i], timed_stages[s], l) != 0 || names[i][l] != '.')
				continue;
			llm_buf_reset(&path);
			llm_buf_addf(&path, "%s/times/%s", dir, names[i]);
			char *data, *end;
			size_t len;
			if (llm_read_file(path.p, &data, &len) != LLM_OK)
				break;
			double t = strtod(data, &end);
			if (end != data && isfinite(t) && t >= 0)
				sum[s] += t, seen[s] = any = 1;
			free(data);
			break;
		}
	if (any) {
		llm_buf_adds(b, "<section id=\"times\"><h2>Time per stage</h2>\n<table><tr><th>stage</th>"
		             "<th>seconds (wall, summed over the files)</th></tr>\n");
		for (size_t s = 0; s < NTIMED; s++)
			if (seen[s])
				llm_buf_addf(b, "<tr><td>%s</td><td>%.1f</td></tr>\n", timed_stages[s], sum[s]);
		llm_buf_adds(b, "</table></section>\n");
	}
	free_list(names, n);
	llm_buf_release(&path);
}

void llm_reportpipe_html(const char *dir, llm_buf *out)
{
	stages_section(dir, out);
	tokens_section(dir, out);
	generations_section(dir, out);
	times_section(dir, out);
}

/* ---- the end of a run, for the terminal ---------------------------------------------------- */

void llm_reportpipe_summary(const char *dir, llm_buf *out)
{
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	llm_buf path = LLM_BUF_INIT, name = LLM_BUF_INIT;
	char *data;
	const llm_json_val *doms, *splits;
	llm_buf_addf(&path, "%s/shards/manifest.json", dir);
	if (read_json(path.p, &rec, &data)) {
		if ((doms = llm_json_get(&rec, "domains")) && doms->type == LLM_JSON_OBJECT) {
			size_t it = 0, i = 0;
			llm_json_val k, v;
			llm_buf_adds(out, "documents kept per domain:");
			while (llm_json_next(doms, &it, &k, &v) == LLM_OK) {
				llm_buf_reset(&name);
				if (llm_json_str(&k, &name) != LLM_OK || v.type != LLM_JSON_OBJECT)
					continue;
				llm_buf_addf(out, "%s %s %llu", i++ ? "," : "", name.p ? name.p : "",
				             (unsigned long long)(member_u64(&v, "train_documents") +
				                                  member_u64(&v, "val_documents")));
			}
			llm_buf_addc(out, '\n');
		}
		if ((splits = llm_json_get(&rec, "splits")) && splits->type == LLM_JSON_OBJECT) {
			llm_json_val tr = llm_json_member(splits, "train"), va = llm_json_member(splits, "val");
			llm_buf_addf(out, "tokens: %llu train, %llu validation\n",
			             (unsigned long long)(tr.type == LLM_JSON_OBJECT ? member_u64(&tr, "tokens") : 0),
			             (unsigned long long)(va.type == LLM_JSON_OBJECT ? member_u64(&va, "tokens") : 0));
		}
		free(data);
	}
	llm_buf_reset(&path);
	llm_buf_addf(&path, "%s/eval/loss.json", dir);
	const llm_json_val *all;
	if (read_json(path.p, &rec, &data)) {
		llm_json_val loss, ppl;
		double l, p, step;
		if ((all = llm_json_get(&rec, "all")) && all->type == LLM_JSON_OBJECT &&
		    (loss = llm_json_member(all, "loss")).type == LLM_JSON_NUMBER &&
		    llm_json_num(&loss, &l) == LLM_OK) {
			llm_buf_adds(out, "validation loss: ");
			llm_report_number(out, l);
			ppl = llm_json_member(all, "ppl");
			if (ppl.type == LLM_JSON_NUMBER && llm_json_num(&ppl, &p) == LLM_OK) {
				llm_buf_adds(out, " (perplexity ");
				llm_report_number(out, p);
				llm_buf_adds(out, ")");
			}
			if (llm_json_get_num(&rec, "step", &step) == LLM_OK)
				llm_buf_addf(out, " at step %.0f", step);
			llm_buf_addc(out, '\n');
		}
		free(data);
	}
	llm_json_rec_release(&rec);
	llm_buf_release(&path);
	llm_buf_release(&name);
}
