/*
 * toxfilter.c — llm-tox's filter (and --mode annotate): records are scored in batches on the
 * pool by the batch loop (batchloop.h); each worker parses with its own record and matcher
 * scratch, and the main thread parses a record again when it writes it. Memory: two batches
 * (BATCH_DOCS records or BATCH_BYTES bytes each).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../batchloop.h"
#include "core/io.h"
#include "core/pool.h"
#include "llm-tox.h"

#define BATCH_DOCS 1024
#define BATCH_BYTES ((size_t)16 << 20)

typedef struct {
	tool_batch_line ln; /* first: the loop's */
	llm_tox_result res;
	llm_tox_policy pol;
} item;

typedef struct {
	llm_tox_scratch *s;
	record r;
	llm_buf lang, domain;
} worker;

struct filter {
	const struct cfg *c;
	const llm_tox *tox;
	llm_pool *pool;
	worker *w; /* one per pool worker */
	tool_batchloop loop;
	llm_run *run;
	llm_writer *out;
	llm_json_edit ed;
	llm_buf buf, extra;
	record r; /* the main thread's parse at output time */
};

static double round4(double x)
{
	return round(x * 1e4) / 1e4;
}

static void score_one(void *ctx, tool_batch *b, size_t i, int wid)
{
	struct filter *f = ctx;
	item *it = tool_batch_item(&f->loop, b, i);
	worker *w = &f->w[wid];
	w->r.line = tool_batch_text(b, &it->ln);
	w->r.len = it->ln.full_len;
	w->r.too_long = it->ln.too_long;
	tox_record_parse(&w->r, f->c);
	if (w->r.reason)
		return;
	const char *l;
	size_t ll;
	tox_lang_of(&w->r, &l, &ll, &w->lang);
	tox_policy_for(f->c, l, ll, tox_domain_of(&w->r, &w->domain), &it->pol);
	llm_tox_score(f->tox, w->s, w->r.text.p, w->r.text.len, l, ll, &it->pol, &it->res);
}

/* Write or reject one scored record, in input order. */
static void emit(struct filter *f, const tool_batch *b, const item *it)
{
	record *r = &f->r;
	r->file = f->loop.name;
	r->lineno = it->ln.lineno;
	r->line = tool_batch_text(b, &it->ln);
	r->len = it->ln.full_len;
	r->too_long = it->ln.too_long;
	tox_record_parse(r, f->c);
	if (r->reason) {
		if (f->c->co.strict)
			die("%s:%llu: %s", r->file, (unsigned long long)r->lineno, r->msg);
		llm_warn_at(r->file, r->lineno, "%s", r->msg);
		int dom = r->rec_ok ? llm_run_in_rec(f->run, r->len + 1, &r->rec)
		                    : llm_run_in(f->run, r->len + 1, NULL, 0);
		llm_buf_reset(&f->extra);
		if (r->too_long)
			llm_buf_addf(&f->extra, "\"length\": %zu", r->len);
		size_t keep = r->too_long ? (it->ln.len < 1024 ? it->ln.len : 1024) : r->len;
		if (llm_run_reject(f->run, dom, r->reason, r->line, keep, r->rec_ok ? &r->rec : NULL,
		                   f->extra.len ? f->extra.p : NULL, r->file, r->lineno) != LLM_OK)
			die_lib();
		return;
	}
	const llm_tox_result *res = &it->res;
	int dom = llm_run_in_rec(f->run, r->len + 1, &r->rec);
	int verdict = llm_tox_decide(res, &it->pol);
	if (llm_tox_words_fire(res, &it->pol) && llm_tox_model_fires(res, &it->pol))
		llm_run_count_domain(f->run, dom, "tox_words_and_model", 1);
	llm_json_edit_reset(&f->ed);
	if (res->score >= 0)
		llm_json_edit_f64(&f->ed, "tox_score", round4(res->score));
	if (res->words)
		llm_json_edit_i64(&f->ed, "tox_hits", (int64_t)res->hits);
	if (verdict != LLM_TOX_KEEP && !f->c->annotate) {
		llm_buf_reset(&f->extra);
		if (res->score >= 0)
			llm_buf_addf(&f->extra, "\"tox_score\": %.4f", round4(res->score));
		if (res->words)
			llm_buf_addf(&f->extra, "%s\"tox_hits\": %zu", f->extra.len ? ", " : "", res->hits);
		if (llm_run_reject(f->run, dom, verdict == LLM_TOX_WORDS ? "tox_words" : "tox_model",
		                   r->line, r->len, &r->rec, f->extra.len ? f->extra.p : NULL, r->file,
		                   r->lineno) != LLM_OK)
			die_lib();
		return;
	}
	if (verdict != LLM_TOX_KEEP)
		llm_run_count_domain(f->run, dom, verdict == LLM_TOX_WORDS ? "tox_words" : "tox_model", 1);
	if (f->c->recipe && !it->pol.words && !it->pol.model && (!f->c->no_words || !f->c->no_model))
		llm_run_count_domain(f->run, dom, "tox_exempt", 1);
	llm_buf_reset(&f->buf);
	llm_json_write(&r->rec, &f->ed, &f->buf);
	llm_buf_addc(&f->buf, '\n');
	if (llm_writer_write(f->out, f->buf.p, f->buf.len) != LLM_OK)
		die_lib();
	llm_run_out(f->run, dom, f->buf.len);
}

/* Write the scored batch, in input order. */
static void write_batch(void *ctx, tool_batch *b)
{
	struct filter *f = ctx;
	for (size_t i = 0; i < b->n; i++)
		emit(f, b, tool_batch_item(&f->loop, b, i));
}

int tox_cmd_filter(const struct cfg *c, char **files, int nfiles)
{
	struct filter f = { .c = c };
	f.tox = tox_make(c);
	if (!llm_tox_has_words(f.tox) && !llm_tox_has_model(f.tox))
		usage_error("--no-words and --no-model leave nothing to do");
	if (llm_pool_new(&f.pool, c->co.threads) != LLM_OK)
		die_lib();
	int nw = llm_pool_workers(f.pool);
	f.w = llm_calloc((size_t)nw, sizeof *f.w);
	for (int i = 0; i < nw; i++) {
		if (!(f.w[i].s = llm_tox_scratch_new(f.tox)))
			die("out of memory for the word-list matcher");
		llm_json_rec_init(&f.w[i].r.rec);
	}
	tool_batchloop_init(&f.loop, &(tool_batchloop_ops){ sizeof(item), score_one, write_batch,
	                                                    NULL, NULL },
	                    f.pool, &f, BATCH_BYTES, BATCH_DOCS, &c->co);
	llm_json_rec_init(&f.r.rec);
	if (llm_writer_open(&f.out, c->co.output) != LLM_OK)
		die_lib();
	f.run = tool_run_new(&c->co);
	llm_json_edit_init(&f.ed);
	int failed = 0;
	if (nfiles == 0)
		failed |= tool_batchloop_file(&f.loop, "-", f.run);
	for (int i = 0; i < nfiles; i++)
		failed |= tool_batchloop_file(&f.loop, files[i], f.run);
	if (llm_writer_close(f.out) != LLM_OK) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	llm_json_edit_release(&f.ed);
	llm_json_rec_release(&f.r.rec);
	llm_buf_release(&f.r.text);
	llm_buf_release(&f.buf);
	llm_buf_release(&f.extra);
	tool_batchloop_release(&f.loop);
	llm_pool_free(f.pool);
	for (int i = 0; i < nw; i++) {
		llm_tox_scratch_free(f.w[i].s);
		llm_json_rec_release(&f.w[i].r.rec);
		llm_buf_release(&f.w[i].r.text);
		llm_buf_release(&f.w[i].lang);
		llm_buf_release(&f.w[i].domain);
	}
	free(f.w);
	llm_tox_free((llm_tox *)f.tox);
	return tool_run_finish(f.run, failed);
}
