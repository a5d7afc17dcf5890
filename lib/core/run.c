/*
 * run.c — per-run accounting, rejects, --stats JSON, progress and summary (see run.h).
 *
 * Domains, languages and reasons are few (tens), so they live in small arrays searched
 * linearly, with the last one cached: consecutive records of a stream usually share them.
 * A record's handle carries both its groups: the domain's index in the low 16 bits, the
 * language's (plus one; 0: none given) above them.
 */
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "err.h"
#include "io.h"
#include "utf8.h"

typedef struct {
	char *name;
	uint64_t n;
} counter;

typedef struct {
	counter *v;
	size_t n, cap;
} counters;

/* The records of one domain or one language. */
typedef struct {
	char *name;
	size_t name_len;
	uint64_t in, out, rejected, bytes_in, bytes_out;
	counters reasons, extra;
} group;

typedef struct {
	group *v;
	size_t n, cap;
	int last;
} groups;

#define MAX_GROUPS 0x7FFF /* fits a handle's bits; beyond it, names share "other" */

struct llm_run {
	char *tool;
	llm_writer *rejects;
	char *stats_path;
	uint64_t in, out, rejected, bytes_in, bytes_out;
	counters reasons, extra;
	groups dom, lang;
	uint64_t lang_bytes_in; /* bytes_in of the record whose language is not yet counted */
	llm_buf stats_extra;
	llm_buf scratch;
	llm_json_edit edit;
	struct timespec t0;
	/* progress */
	int tty;
	unsigned tick;
	double last_print;
	const char *unit; /* llm_run_progress_work's, else NULL: records */
	uint64_t units;
	int work_shown;
	char *input;
	int64_t input_size;
	uint64_t input_raw, done_raw;
	int printed;
	int err;
};

static double now(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) * 1e-9;
}

static void counters_add(counters *c, const char *name, uint64_t n)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->v[i].name, name) == 0) {
			c->v[i].n += n;
			return;
		}
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 8;
		c->v = llm_realloc(c->v, c->cap * sizeof *c->v);
	}
	c->v[c->n++] = (counter){ llm_strdup(name), n };
}

static void counters_free(counters *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].name);
	free(c->v);
}

llm_run *llm_run_new(const char *tool)
{
	llm_run *run = llm_calloc(1, sizeof *run);
	run->tool = llm_strdup(tool);
	run->dom.last = run->lang.last = -1;
	run->tty = isatty(2);
	llm_json_edit_init(&run->edit);
	clock_gettime(CLOCK_MONOTONIC, &run->t0);
	return run;
}

int llm_run_set_rejects(llm_run *run, const char *path)
{
	if (!path || strcmp(path, "-") == 0)
		return llm_fail(LLM_EINVAL, "--rejects needs a file name, not stdout");
	return llm_writer_open(&run->rejects, path);
}

void llm_run_set_stats(llm_run *run, const char *path)
{
	free(run->stats_path);
	run->stats_path = path ? llm_strdup(path) : NULL;
}

void llm_run_begin_input(llm_run *run, const char *name, int64_t size)
{
	run->done_raw += run->input_raw;
	run->input_raw = 0;
	free(run->input);
	run->input = llm_strdup(name ? name : "<stdin>");
	run->input_size = size;
}

/* The group of name[0..len), added when new. */
static int group_find(groups *g, const char *name, size_t len)
{
	int d = g->last;
	if (d >= 0 && g->v[d].name_len == len && memcmp(g->v[d].name, name, len) == 0)
		return d;
	for (d = 0; d < (int)g->n; d++)
		if (g->v[d].name_len == len && memcmp(g->v[d].name, name, len) == 0)
			return g->last = d;
	if (g->n == MAX_GROUPS)
		return g->last = group_find(g, "other", 5);
	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 8;
		g->v = llm_realloc(g->v, g->cap * sizeof *g->v);
	}
	memset(&g->v[d], 0, sizeof g->v[d]);
	g->v[d].name = llm_strndup(name, len);
	g->v[d].name_len = len;
	g->n++;
	return g->last = d;
}

static void groups_free(groups *g)
{
	for (size_t i = 0; i < g->n; i++) {
		free(g->v[i].name);
		counters_free(&g->v[i].reasons);
		counters_free(&g->v[i].extra);
	}
	free(g->v);
}

int llm_run_in(llm_run *run, size_t bytes, const char *name, size_t len)
{
	if (!name || !len) {
		name = "unknown";
		len = 7;
	}
	run->in++;
	run->bytes_in += bytes;
	run->lang_bytes_in = bytes;
	int d = group_find(&run->dom, name, len);
	run->dom.v[d].in++;
	run->dom.v[d].bytes_in += bytes;
	return d;
}

int llm_run_lang(llm_run *run, int h, const char *lang, size_t len)
{
	if (!lang || !len)
		return h & 0xFFFF;
	return (h & 0xFFFF) | ((group_find(&run->lang, lang, len) + 1) << 16);
}

/* A string field of rec, raw when it has no escapes, else decoded into scratch. */
static const char *field(llm_run *run, const llm_json_rec *rec, const char *key, size_t *len)
{
	const llm_json_val *v = rec ? llm_json_get(rec, key) : NULL;
	*len = 0;
	if (!v || v->type != LLM_JSON_STRING)
		return NULL;
	if (!memchr(v->p, '\\', v->len)) {
		*len = v->len - 2;
		return v->p + 1;
	}
	llm_buf_reset(&run->scratch);
	llm_json_str(v, &run->scratch);
	*len = run->scratch.len;
	return run->scratch.p;
}

int llm_run_in_rec(llm_run *run, size_t bytes, const llm_json_rec *rec)
{
	size_t len;
	const char *dom = field(run, rec, "domain", &len);
	int h = llm_run_in(run, bytes, dom, len);
	const char *lang = field(run, rec, "lang", &len);
	return llm_run_lang(run, h, lang, len);
}

/* The language group of handle h (und when none was given), or NULL. */
static group *lang_of(llm_run *run, int h)
{
	int l = (h >> 16) - 1;
	if (l < 0)
		l = group_find(&run->lang, "und", 3);
	return &run->lang.v[l];
}

void llm_run_out(llm_run *run, int h, size_t bytes)
{
	run->out++;
	run->bytes_out += bytes;
	int d = h & 0xFFFF;
	if (h >= 0 && d < (int)run->dom.n) {
		run->dom.v[d].out++;
		run->dom.v[d].bytes_out += bytes;
		group *l = lang_of(run, h);
		l->in++;
		l->out++;
		l->bytes_in += run->lang_bytes_in;
		l->bytes_out += bytes;
	}
}

int llm_run_reject(llm_run *run, int h, const char *reason, const char *line, size_t len,
                   const llm_json_rec *rec, const char *extra, const char *file, uint64_t lineno)
{
	run->rejected++;
	counters_add(&run->reasons, reason, 1);
	int d = h & 0xFFFF;
	if (h >= 0 && d < (int)run->dom.n) {
		run->dom.v[d].rejected++;
		counters_add(&run->dom.v[d].reasons, reason, 1);
		group *l = lang_of(run, h);
		l->in++;
		l->rejected++;
		l->bytes_in += run->lang_bytes_in;
		counters_add(&l->reasons, reason, 1);
	}
	if (!run->rejects || run->err)
		return run->err;
	llm_buf *b = &run->scratch;
	llm_buf_reset(b);
	if (rec) {
		llm_json_edit_reset(&run->edit);
		llm_json_edit_str(&run->edit, "reject_reason", reason, strlen(reason));
		llm_json_write(rec, &run->edit, b);
		if (extra && *extra) {
			llm_buf_truncate(b, b->len - 1); /* the closing brace */
			llm_buf_adds(b, ", ");
			llm_buf_adds(b, extra);
			llm_buf_addc(b, '}');
		}
	} else {
		llm_buf_adds(b, "{\"reject_reason\": ");
		llm_json_put_str(b, reason, strlen(reason));
		if (file) {
			llm_buf_adds(b, ", \"source\": ");
			llm_json_put_str(b, file, strlen(file));
			llm_buf_addf(b, ", \"line\": %llu", (unsigned long long)lineno);
		}
		if (extra && *extra) {
			llm_buf_adds(b, ", ");
			llm_buf_adds(b, extra);
		}
		llm_buf_adds(b, ", \"raw\": ");
		llm_json_put_str(b, line, len); /* repairs invalid UTF-8 */
		llm_buf_addc(b, '}');
	}
	llm_buf_addc(b, '\n');
	run->err = llm_writer_write(run->rejects, b->p, b->len);
	return run->err;
}

void llm_run_count(llm_run *run, const char *name, uint64_t n)
{
	counters_add(&run->extra, name, n);
}

void llm_run_count_domain(llm_run *run, int h, const char *name, uint64_t n)
{
	int d = h & 0xFFFF;
	if (h >= 0 && d < (int)run->dom.n)
		counters_add(&run->dom.v[d].extra, name, n);
}

void llm_run_stats_extra(llm_run *run, const char *raw_member)
{
	if (run->stats_extra.len)
		llm_buf_adds(&run->stats_extra, ", ");
	llm_buf_adds(&run->stats_extra, raw_member);
}

uint64_t llm_run_records_in(const llm_run *run) { return run->in; }
uint64_t llm_run_records_out(const llm_run *run) { return run->out; }
uint64_t llm_run_records_rejected(const llm_run *run) { return run->rejected; }

static void human(char *out, size_t n, double x)
{
	if (x >= 1e9)
		snprintf(out, n, "%.1fG", x / 1e9);
	else if (x >= 1e6)
		snprintf(out, n, "%.1fM", x / 1e6);
	else if (x >= 1e3)
		snprintf(out, n, "%.1fk", x / 1e3);
	else
		snprintf(out, n, "%.0f", x);
}

/* The line: records (or the work's units) and their rate, MB/s of input in records, the
 * current input's share and the time left at this pace when its size is known. */
static void progress_line(llm_run *run, uint64_t input_pos, int now_anyway)
{
	double t = now(&run->t0);
	if (!now_anyway && t - run->last_print < 0.25)
		return;
	run->last_print = t;
	double count = run->unit ? (double)run->units : (double)run->in;
	char rec[16], rate[16], msg[256];
	human(rec, sizeof rec, count);
	human(rate, sizeof rate, count / t);
	int n;
	if (run->unit)
		n = snprintf(msg, sizeof msg, "\r%s: %s %s, %s %s/s", run->tool, rec, run->unit, rate,
		             run->unit);
	else
		n = snprintf(msg, sizeof msg, "\r%s: %s records, %s rec/s, %.1f MB/s", run->tool, rec,
		             rate, (run->done_raw + input_pos) / 1e6 / t);
	if (run->input_size > 0 && input_pos <= (uint64_t)run->input_size) {
		double frac = (double)input_pos / run->input_size;
		double eta = frac > 0 ? (t * (1 - frac) / frac) : 0;
		n += snprintf(msg + n, sizeof msg - n, ", %s %.0f%% ETA %d:%02d", run->input, frac * 100,
		              (int)eta / 60, (int)eta % 60);
	}
	n += snprintf(msg + n, sizeof msg - n, "\033[K");
	ssize_t w = write(2, msg, n);
	(void)w;
	run->printed = 1;
}

void llm_run_progress(llm_run *run, uint64_t raw_bytes)
{
	run->input_raw = raw_bytes;
	if (!run->tty || llm_verbosity() < 1 || (++run->tick & 1023))
		return;
	progress_line(run, raw_bytes, 0);
}

void llm_run_progress_work(llm_run *run, const char *unit, uint64_t done, int64_t input_pos)
{
	run->unit = unit;
	run->units = done;
	if (input_pos >= 0)
		run->input_raw = (uint64_t)input_pos;
	/* Each call stands for costly work (a forward): no call-count throttle, the clock's only,
	 * and the first call shows the line at once (a slow run is seen to be running). */
	if (run->tty && llm_verbosity() >= 1)
		progress_line(run, run->input_raw, !run->work_shown);
	run->work_shown = 1;
}

static void put_counters(llm_buf *b, const counters *c)
{
	llm_buf_addc(b, '{');
	for (size_t i = 0; i < c->n; i++) {
		if (i)
			llm_buf_adds(b, ", ");
		llm_json_put_str(b, c->v[i].name, strlen(c->v[i].name));
		llm_buf_addf(b, ": %llu", (unsigned long long)c->v[i].n);
	}
	llm_buf_addc(b, '}');
}

/* ", \"KEY\": {NAME: {records_in, ..., rejected, counters}, ...}" */
static void put_groups(llm_buf *b, const char *key, const groups *g)
{
	llm_buf_addf(b, ", \"%s\": {", key);
	for (size_t i = 0; i < g->n; i++) {
		const group *d = &g->v[i];
		if (i)
			llm_buf_adds(b, ", ");
		llm_json_put_str(b, d->name, d->name_len);
		llm_buf_addf(b,
		             ": {\"records_in\": %llu, \"records_out\": %llu, \"records_rejected\": %llu, "
		             "\"bytes_in\": %llu, \"bytes_out\": %llu, \"rejected\": ",
		             (unsigned long long)d->in, (unsigned long long)d->out,
		             (unsigned long long)d->rejected, (unsigned long long)d->bytes_in,
		             (unsigned long long)d->bytes_out);
		put_counters(b, &d->reasons);
		llm_buf_adds(b, ", \"counters\": ");
		put_counters(b, &d->extra);
		llm_buf_addc(b, '}');
	}
	llm_buf_addc(b, '}');
}

static int write_stats(llm_run *run, double secs)
{
	llm_buf b = LLM_BUF_INIT;
	llm_buf_adds(&b, "{\"tool\": ");
	llm_json_put_str(&b, run->tool, strlen(run->tool));
	llm_buf_addf(&b,
	             ", \"version\": \"%s\", \"records_in\": %llu, \"records_out\": %llu, "
	             "\"records_rejected\": %llu, \"bytes_in\": %llu, \"bytes_out\": %llu, "
	             "\"seconds\": %.3f, \"rejected\": ",
#ifdef LLM_VERSION
	             LLM_VERSION,
#else
	             "dev",
#endif
	             (unsigned long long)run->in, (unsigned long long)run->out,
	             (unsigned long long)run->rejected, (unsigned long long)run->bytes_in,
	             (unsigned long long)run->bytes_out, secs);
	put_counters(&b, &run->reasons);
	llm_buf_adds(&b, ", \"counters\": ");
	put_counters(&b, &run->extra);
	put_groups(&b, "domains", &run->dom);
	put_groups(&b, "languages", &run->lang);
	if (run->stats_extra.len) {
		llm_buf_adds(&b, ", ");
		llm_buf_add(&b, run->stats_extra.p, run->stats_extra.len);
	}
	llm_buf_adds(&b, "}\n");
	int rc = llm_write_file(run->stats_path, b.p, b.len);
	llm_buf_release(&b);
	return rc;
}

void llm_run_progress_clear(llm_run *run)
{
	if (run->printed) {
		ssize_t w = write(2, "\r\033[K", 4);
		(void)w;
		run->printed = 0;
	}
}

int llm_run_finish(llm_run *run)
{
	double secs = now(&run->t0);
	int rc = run->err;
	llm_run_progress_clear(run);
	if (llm_verbosity() >= 1) {
		llm_buf b = LLM_BUF_INIT;
		llm_buf_addf(&b, "%llu in, %llu out, %llu rejected", (unsigned long long)run->in,
		             (unsigned long long)run->out, (unsigned long long)run->rejected);
		for (size_t i = 0; i < run->reasons.n; i++)
			llm_buf_addf(&b, "%s%s %llu", i ? ", " : " (", run->reasons.v[i].name,
			             (unsigned long long)run->reasons.v[i].n);
		if (run->reasons.n)
			llm_buf_addc(&b, ')');
		double mb = run->bytes_in / 1e6;
		llm_buf_addf(&b, "; %.1f MB in %.2f s (%.1f MB/s)", mb, secs, secs > 0 ? mb / secs : 0);
		llm_info("%s", b.p);
		llm_buf_release(&b);
	}
	if (run->rejects) {
		int r2 = run->err ? (llm_writer_abort(run->rejects), run->err) : llm_writer_close(run->rejects);
		if (!rc)
			rc = r2;
	}
	if (run->stats_path) {
		int r2 = write_stats(run, secs);
		if (!rc)
			rc = r2;
	}
	if (run->in != run->out + run->rejected && !rc)
		rc = llm_fail(LLM_EINTERNAL, "internal error: %llu records in but %llu out + %llu rejected",
		              (unsigned long long)run->in, (unsigned long long)run->out,
		              (unsigned long long)run->rejected);
	counters_free(&run->reasons);
	counters_free(&run->extra);
	groups_free(&run->dom);
	groups_free(&run->lang);
	free(run->tool);
	free(run->stats_path);
	free(run->input);
	llm_buf_release(&run->stats_extra);
	llm_buf_release(&run->scratch);
	llm_json_edit_release(&run->edit);
	free(run);
	return rc;
}
