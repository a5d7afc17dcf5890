/*
 * dedupdoc.c — record classification and the parallel sign pool (see dedupdoc.h).
 *
 * A batch is one job of the thread pool (core/pool.h): slot i is parsed and signed by
 * whichever worker takes it, with that worker's signer, and writes only its own slot, so
 * there is nothing to lock and the result does not depend on who signed what.
 */
#include "dedupdoc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/pool.h"

void llm_dedup_doc_init(llm_dedup_doc *d)
{
	memset(d, 0, sizeof *d);
	llm_json_rec_init(&d->rec);
}

void llm_dedup_doc_release(llm_dedup_doc *d)
{
	llm_json_rec_release(&d->rec);
	llm_buf_release(&d->text);
	llm_buf_release(&d->id);
	llm_buf_release(&d->extra);
}

void llm_dedup_doc_parse(llm_dedup_doc *d, const char *field, size_t max_line, int status,
                         const char *line, size_t len, const char *file, uint64_t lineno)
{
	d->reason = NULL;
	d->rec_ok = 0;
	d->line = line;
	d->len = len;
	llm_buf_reset(&d->text);
	llm_buf_reset(&d->id);
	llm_buf_reset(&d->extra);
	if (status == LLM_ETOOLONG) {
		d->reason = "too_long";
		snprintf(d->msg, sizeof d->msg, "line of %zu bytes is longer than --max-line", len);
		llm_buf_addf(&d->extra, "\"length\": %zu", len);
		d->len = max_line < 1024 ? max_line : 1024;
		return;
	}
	if (llm_json_parse(&d->rec, line, len) != LLM_OK) {
		d->reason = "bad_json";
		snprintf(d->msg, sizeof d->msg, "bad JSON: %s at byte %zu", d->rec.err_msg,
		         d->rec.err_pos + 1);
		return;
	}
	d->rec_ok = 1;
	const llm_json_val *t = llm_json_get(&d->rec, field);
	if (!t || t->type != LLM_JSON_STRING) {
		d->reason = "no_text";
		snprintf(d->msg, sizeof d->msg, t ? "field '%s' is not a string" : "missing field '%s'",
		         field);
		return;
	}
	llm_json_str(t, &d->text);
	if (!d->text.p)
		llm_buf_grow(&d->text, 1); /* an empty text is "" rather than NULL */
	const llm_json_val *id = llm_json_get(&d->rec, "id");
	if (id && id->type == LLM_JSON_STRING)
		llm_json_str(id, &d->id);
	else if (id)
		llm_buf_add(&d->id, id->p, id->len);
	else
		llm_buf_addf(&d->id, "%s:%llu", file, (unsigned long long)lineno);
}

/* A batch is 64 records per thread (at most 1024): enough to keep every thread busy for a
 * while, and no more records held than that, since each slot keeps its buffers. */
enum { BATCH_PER_THREAD = 64, BATCH = 1024, MAX_THREADS = 256 };

typedef struct {
	llm_dedup_doc doc;
	llm_dedup_sig sig;
	llm_buf data; /* the signature's arrays, copied out of the signer */
	size_t off, len;
	int status;
	uint64_t lineno;
} slot;

struct llm_signpool {
	llm_pool *pool;
	int workers;
	llm_signer **signers; /* one per worker */
	const char *field;
	size_t max_line;
	llm_signpool_fn fn;
	void *ctx;
	slot *slots;
	size_t n, batch;
	llm_buf lines;
	char *file;
};

/* Parse and sign slot i with the signer of `worker`. */
static void sign_one(void *ctx, size_t i, int worker)
{
	llm_signpool *sp = ctx;
	slot *s = &sp->slots[i];
	llm_dedup_doc_parse(&s->doc, sp->field, sp->max_line, s->status, sp->lines.p + s->off, s->len,
	                    sp->file, s->lineno);
	memset(&s->sig, 0, sizeof s->sig);
	if (s->doc.reason)
		return;
	llm_signer_sign(sp->signers[worker], s->doc.text.p, s->doc.text.len, &s->sig);
	llm_buf_reset(&s->data);
	llm_buf_add(&s->data, s->sig.keys, (size_t)s->sig.nkeys * 8);
	size_t so = s->data.len;
	llm_buf_add(&s->data, s->sig.set, (size_t)s->sig.nset * 4);
	s->sig.keys = (const uint64_t *)(void *)s->data.p;
	s->sig.set = (const uint32_t *)(void *)(s->data.p + so);
}

int llm_signpool_new(llm_signpool **out, const llm_dedup_params *p, int threads,
                     const char *field, size_t max_line, llm_signpool_fn fn, void *ctx)
{
	*out = NULL;
	int rc = llm_dedup_params_check(p);
	if (rc)
		return rc;
	llm_pool *pool;
	if ((rc = llm_pool_new(&pool, threads < 1 ? 1 : threads > MAX_THREADS ? MAX_THREADS : threads)))
		return rc;
	llm_signpool *sp = llm_calloc(1, sizeof *sp);
	sp->pool = pool;
	sp->workers = llm_pool_workers(pool);
	sp->signers = llm_calloc((size_t)sp->workers, sizeof *sp->signers);
	for (int t = 0; t < sp->workers; t++)
		llm_signer_new(&sp->signers[t], p);
	sp->field = field;
	sp->max_line = max_line;
	sp->fn = fn;
	sp->ctx = ctx;
	sp->batch = (size_t)sp->workers * BATCH_PER_THREAD;
	if (sp->batch > BATCH)
		sp->batch = BATCH;
	sp->slots = llm_calloc(sp->batch, sizeof *sp->slots);
	for (size_t i = 0; i < sp->batch; i++)
		llm_dedup_doc_init(&sp->slots[i].doc);
	llm_buf_init(&sp->lines);
	*out = sp;
	return LLM_OK;
}

void llm_signpool_flush(llm_signpool *sp)
{
	if (!sp->n)
		return;
	llm_pool_run(sp->pool, sp->n, sign_one, sp);
	for (size_t i = 0; i < sp->n; i++) {
		slot *s = &sp->slots[i];
		sp->fn(sp->ctx, &s->doc, s->doc.reason ? NULL : &s->sig);
	}
	sp->n = 0;
	llm_buf_reset(&sp->lines);
}

void llm_signpool_add(llm_signpool *sp, int status, const char *line, size_t len,
                      const char *file, uint64_t lineno)
{
	if (!sp->file || strcmp(sp->file, file)) {
		llm_signpool_flush(sp);
		free(sp->file);
		sp->file = llm_strdup(file);
	}
	slot *s = &sp->slots[sp->n++];
	size_t keep = status == LLM_ETOOLONG ? strlen(line) : len; /* the head (io.h) */
	s->off = sp->lines.len;
	s->len = len;
	s->status = status;
	s->lineno = lineno;
	llm_buf_add(&sp->lines, line, keep);
	if (sp->n == sp->batch)
		llm_signpool_flush(sp);
}

void llm_signpool_free(llm_signpool *sp)
{
	if (!sp)
		return;
	llm_signpool_flush(sp);
	llm_pool_free(sp->pool);
	for (int t = 0; t < sp->workers; t++)
		llm_signer_free(sp->signers[t]);
	free(sp->signers);
	for (size_t i = 0; i < sp->batch; i++) {
		llm_dedup_doc_release(&sp->slots[i].doc);
		llm_buf_release(&sp->slots[i].data);
	}
	free(sp->slots);
	llm_buf_release(&sp->lines);
	free(sp->file);
	free(sp);
}
