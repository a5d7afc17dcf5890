/*
 * emit.c — the output of one record, shared by every method and apply: written (with the
 * fields that --annotate, --dup-count or a filter edits), or rejected with its reason.
 */
#include <string.h>

#include "dedup/rmlist.h"
#include "llm-dedup.h"

void dedup_emitter_open(dedup_emitter *e, const struct dedup_cfg *c)
{
	*e = (dedup_emitter){ .c = c };
	llm_json_edit_init(&e->ed);
	if (llm_writer_open(&e->out, c->co.output))
		die_lib();
	e->run = tool_run_new(&c->co);
}

int dedup_emitter_close(dedup_emitter *e, int failed)
{
	if (failed) {
		llm_writer_abort(e->out);
	} else if (llm_writer_close(e->out)) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	llm_json_edit_release(&e->ed);
	llm_buf_release(&e->line);
	return failed;
}

/* The record's domain and language in the run, counting it in. */
static int count_in(dedup_emitter *e, const llm_dedup_doc *r)
{
	return r->rec_ok ? llm_run_in_rec(e->run, r->len + 1, &r->rec)
	                 : llm_run_in(e->run, r->len + 1, NULL, 0);
}

static void reject(dedup_emitter *e, int dom, llm_dedup_doc *r, const char *reason,
                   const char *extra, const char *file, uint64_t lineno)
{
	if (llm_run_reject(e->run, dom, reason, r->line, r->len, &r->rec, extra, file,
	                   lineno) != LLM_OK)
		die_lib();
}

/* A malformed record: fatal with --strict, else warned about and rejected. */
static void reject_malformed(dedup_emitter *e, int dom, llm_dedup_doc *r, const char *file,
                             uint64_t lineno)
{
	if (e->c->co.strict)
		die("%s:%llu: %s", file, (unsigned long long)lineno, r->msg);
	llm_warn_at(file, lineno, "%s", r->msg);
	if (llm_run_reject(e->run, dom, r->reason, r->line, r->len, r->rec_ok ? &r->rec : NULL,
	                   r->extra.len ? r->extra.p : NULL, file, lineno) != LLM_OK)
		die_lib();
}

/* The edits of a kept record: its new text, its cluster (--annotate), its cluster's size
 * (--dup-count). */
static void edit_kept(dedup_emitter *e, int kind, const char *cid, size_t cidlen, uint64_t count,
                      const llm_buf *text)
{
	const struct dedup_cfg *c = e->c;
	if (text)
		llm_json_edit_str(&e->ed, c->co.field, text->p ? text->p : "", text->len);
	if (kind && c->annotate) {
		llm_json_edit_str(&e->ed, "dup_cluster", cid, cidlen);
		if (kind == LLM_RMLIST_DUPLICATE) {
			llm_json_edit_str(&e->ed, "dup_of", cid, cidlen);
			e->dups++;
		}
	}
	if (c->dup_count && kind != LLM_RMLIST_DUPLICATE)
		llm_json_edit_i64(&e->ed, "dup_count", kind ? (int64_t)count : 1);
}

static void write_kept(dedup_emitter *e, int dom, llm_dedup_doc *r)
{
	const char *out = r->line;
	size_t outlen = r->len;
	if (e->ed.n) {
		llm_buf_reset(&e->line);
		llm_json_write(&r->rec, &e->ed, &e->line);
		out = e->line.p;
		outlen = e->line.len;
	}
	if (llm_writer_write(e->out, out, outlen) != LLM_OK || llm_writer_write(e->out, "\n", 1))
		die_lib();
	llm_run_out(e->run, dom, outlen + 1);
}

/* dedup_emit() with the edits already in e->ed. */
static void emit_with(dedup_emitter *e, llm_dedup_doc *r, const char *file, uint64_t lineno,
                      int kind, const char *cid, size_t cidlen, uint64_t count,
                      const llm_buf *text)
{
	int dom = count_in(e, r);
	if (r->reason) {
		reject_malformed(e, dom, r, file, lineno);
		return;
	}
	if (kind == DEDUP_KIND_ALL_LINES || kind == DEDUP_KIND_SUBSTRING) {
		e->dups++;
		reject(e, dom, r, kind == DEDUP_KIND_SUBSTRING ? "substring_dup" : "duplicate", NULL, file,
		       lineno);
		return;
	}
	if (kind == LLM_RMLIST_DUPLICATE && !e->c->annotate) {
		llm_buf_reset(&r->extra);
		llm_buf_adds(&r->extra, "\"dup_of\": ");
		llm_json_put_str(&r->extra, cid, cidlen);
		e->dups++;
		reject(e, dom, r, "duplicate", r->extra.p, file, lineno);
		return;
	}
	edit_kept(e, kind, cid, cidlen, count, text);
	write_kept(e, dom, r);
}

void dedup_emit(dedup_emitter *e, llm_dedup_doc *r, const char *file, uint64_t lineno, int kind,
          const char *cid, size_t cidlen, uint64_t count, const llm_buf *text)
{
	llm_json_edit_reset(&e->ed);
	emit_with(e, r, file, lineno, kind, cid, cidlen, count, text);
}

void dedup_emit_edited(dedup_emitter *e, llm_dedup_doc *r, const char *file, uint64_t lineno)
{
	emit_with(e, r, file, lineno, 0, NULL, 0, 0, NULL);
}

void dedup_emit_reject(dedup_emitter *e, llm_dedup_doc *r, const char *file, uint64_t lineno,
                 const char *reason, const char *extra)
{
	reject(e, count_in(e, r), r, reason, extra, file, lineno);
}

int dedup_blank(const llm_buf *t)
{
	for (size_t k = 0; k < t->len; k++)
		if (!strchr(" \t\r\n", t->p[k]))
			return 0;
	return 1;
}

int dedup_run_filter(const struct dedup_cfg *c, const dedup_filter *f, void *ctx)
{
	dedup_emitter *em = ctx;
	dedup_emitter_open(em, c);
	llm_dedup_doc r;
	llm_dedup_doc_init(&r);
	dedup_spool *sp = NULL;
	if (dedup_first_pass(c, &r, f->pass1, ctx, &sp, NULL) || f->between(ctx))
		die("no output written");
	int failed = dedup_second_pass(c, sp, &r, f->pass2, ctx, em->run);
	dedup_spool_free(sp);
	failed = dedup_emitter_close(em, failed);
	f->finish(ctx, em->run);
	llm_dedup_doc_release(&r);
	return tool_run_finish(em->run, failed);
}
