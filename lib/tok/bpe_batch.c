/*
 * bpe_batch.c — a batch of lines encoded by one worker (bpe_batch.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpe_batch.h"
#include "core/err.h"

void llm_bpe_batch_reset(llm_bpe_batch *b, const char *file)
{
	llm_buf_reset(&b->in);
	b->n = 0;
	b->file = file;
}

int llm_bpe_batch_fits(const llm_bpe_batch *b, const char *file)
{
	return b->n < LLM_BPE_BATCH_LINES && b->in.len < LLM_BPE_BATCH_BYTES && b->file == file;
}

void llm_bpe_batch_push(llm_bpe_batch *b, const char *line, size_t len, uint64_t lineno,
                        int toolong)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 256;
		b->off = llm_realloc(b->off, b->cap * sizeof *b->off);
		b->len = llm_realloc(b->len, b->cap * sizeof *b->len);
		b->lineno = llm_realloc(b->lineno, b->cap * sizeof *b->lineno);
		b->toolong = llm_realloc(b->toolong, b->cap);
		b->res = llm_realloc(b->res, b->cap * sizeof *b->res);
		b->out_end = llm_realloc(b->out_end, b->cap * sizeof *b->out_end);
	}
	b->off[b->n] = b->in.len;
	b->len[b->n] = len;
	b->lineno[b->n] = lineno;
	b->toolong[b->n] = (unsigned char)toolong;
	llm_buf_add(&b->in, line, len);
	b->n++;
}

void llm_bpe_batch_encode(llm_bpe_batch *b, llm_bpe_doc *d)
{
	llm_buf_reset(&b->out);
	b->err = 0;
	for (size_t i = 0; i < b->n; i++) {
		if (b->toolong[i]) {
			memset(&b->res[i], 0, sizeof b->res[i]);
			b->res[i].reason = "too_long";
			snprintf(b->res[i].detail, sizeof b->res[i].detail, "line over --max-line");
		} else if (!b->err) {
			int rc = llm_bpe_doc_encode(d, b->in.p + b->off[i], b->len[i], &b->out, &b->res[i]);
			if (rc) {
				b->err = rc;
				snprintf(b->errmsg, sizeof b->errmsg, "%s", llm_last_error());
			}
		}
		b->out_end[i] = b->out.len;
	}
}

/* A batch that held a document larger than itself would keep that size, and over a long
 * stream each batch of a ring meets one: peak memory grew with the stream, up to the ring's
 * size times the largest document and its tokens. Once written, a batch keeps buffers of at
 * most what a full batch needs, twice LLM_BPE_BATCH_BYTES; larger ones are freed and grown
 * again when needed. */
void llm_bpe_batch_trim(llm_bpe_batch *b)
{
	if (b->in.cap > 2 * LLM_BPE_BATCH_BYTES)
		llm_buf_release(&b->in);
	if (b->out.cap > 2 * LLM_BPE_BATCH_BYTES)
		llm_buf_release(&b->out);
}

void llm_bpe_batch_release(llm_bpe_batch *b)
{
	llm_buf_release(&b->in);
	llm_buf_release(&b->out);
	free(b->off);
	free(b->len);
	free(b->lineno);
	free(b->toolong);
	free(b->res);
	free(b->out_end);
}
