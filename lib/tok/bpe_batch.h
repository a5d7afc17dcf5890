/*
 * bpe_batch.h — a batch of JSONL lines of one input, encoded together (bpe_doc.h): the unit
 * of work an llm-tokenize worker thread takes from the stream.
 *
 * The lines are copied in back to back; llm_bpe_batch_encode appends each accepted line's
 * record to `out` and records where it ends, so that the writer can take the records in
 * input order and reject the others with their result's reason.
 *
 * Thread safety: a batch is filled, encoded and written by one thread at a time (the pool's
 * stream hands it over); it holds no locks.
 */
#ifndef LLM_BPE_BATCH_H
#define LLM_BPE_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "bpe_doc.h"
#include "core/buf.h"

/* A batch is large enough that taking one costs nothing beside encoding it (~10 ms), and
 * small enough that the last ones of the input, encoded while other workers have nothing
 * left, are a small part of a run. A batch is full at either bound. */
#define LLM_BPE_BATCH_BYTES ((size_t)256 << 10)
#define LLM_BPE_BATCH_LINES 1024

typedef struct {
	llm_buf in;              /* the lines back to back */
	size_t *off, *len;       /* per line */
	uint64_t *lineno;
	unsigned char *toolong;  /* per line: over --max-line, rejected "too_long" unencoded */
	size_t n, cap;
	const char *file;        /* the input's name, owned by the caller */
	llm_buf out;             /* encoded records of the accepted lines, in order */
	llm_bpe_doc_result *res; /* per line */
	size_t *out_end;         /* end offset in out after line i */
	int err;                 /* a pre-tokenizer failure (LLM_EINTERNAL); later lines unencoded */
	char errmsg[256];
} llm_bpe_batch;

/* Empty the batch for lines of `file`; its buffers are kept. */
void llm_bpe_batch_reset(llm_bpe_batch *b, const char *file);

/* True when the batch can take another line of `file`. */
int llm_bpe_batch_fits(const llm_bpe_batch *b, const char *file);

/* Append one line (without its newline); toolong marks a line cut at --max-line. */
void llm_bpe_batch_push(llm_bpe_batch *b, const char *line, size_t len, uint64_t lineno,
                        int toolong);

/* Encode every line with d into out, res and out_end. A pre-tokenizer failure sets err and
 * errmsg and leaves the lines after it unencoded (no reason, no bytes). */
void llm_bpe_batch_encode(llm_bpe_batch *b, llm_bpe_doc *d);

/* Free buffers grown past what a full batch needs (a document larger than the batch). */
void llm_bpe_batch_trim(llm_bpe_batch *b);

void llm_bpe_batch_release(llm_bpe_batch *b);

#endif
