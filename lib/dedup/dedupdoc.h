/*
 * dedupdoc.h — input records as llm-dedup sees them, and signing them on several threads.
 *
 * A record is one line of the document stream. llm_dedup_doc_parse classifies it: a document
 * (valid JSON object with a string text field; its text unescaped and its id: the "id" field,
 * unescaped when a string, as written otherwise, else "FILE:LINE"), or a record to reject
 * with its reason ("too_long", "bad_json", "no_text"), a message and, for too long lines, the
 * reject's extra members. The doc points into the caller's line (which must outlive it).
 *
 * The sign pool turns lines into signatures in input order: lines are copied into a batch of
 * 64 per thread (at most 1024); a full batch (or llm_signpool_flush) is one job of the thread
 * pool (core/pool.h): each line is parsed and signed by one of `threads` workers, each with its
 * own signer, then the callback receives every record in input order on the calling thread.
 * The result does not depend on the number of threads. Memory: one batch of lines, parsed
 * records and signature arrays. A pool is used by one thread at a time.
 */
#ifndef LLM_DEDUPDOC_H
#define LLM_DEDUPDOC_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/json.h"
#include "dedup.h"

typedef struct {
	const char *reason;  /* NULL: a document with text */
	char msg[160];
	llm_json_rec rec;
	int rec_ok;          /* rec holds a parse (also for "no_text") */
	llm_buf text, id, extra;
	const char *line;    /* the record as given; len is what a reject keeps of it */
	size_t len;
} llm_dedup_doc;

void llm_dedup_doc_init(llm_dedup_doc *d);
void llm_dedup_doc_release(llm_dedup_doc *d);
/* status: LLM_OK or LLM_ETOOLONG (then len is the full length, line its first max_line
 * bytes), as llm_reader_line gives them. */
void llm_dedup_doc_parse(llm_dedup_doc *d, const char *field, size_t max_line, int status,
                         const char *line, size_t len, const char *file, uint64_t lineno);

/* Called in input order; sig is NULL for a record to reject (doc->reason set). */
typedef void (*llm_signpool_fn)(void *ctx, const llm_dedup_doc *doc, const llm_dedup_sig *sig);

typedef struct llm_signpool llm_signpool;
/* LLM_EINVAL (with detail) on bad parameters; LLM_EIO when the threads cannot be started.
 * threads >= 1. */
int llm_signpool_new(llm_signpool **sp, const llm_dedup_params *p, int threads,
                     const char *field, size_t max_line, llm_signpool_fn fn, void *ctx);
/* Queue one line (copied; file is copied when it changes). May call fn for earlier lines. */
void llm_signpool_add(llm_signpool *sp, int status, const char *line, size_t len,
                      const char *file, uint64_t lineno);
/* Sign what is queued and hand it to fn. */
void llm_signpool_flush(llm_signpool *sp);
/* Flushes, then frees. */
void llm_signpool_free(llm_signpool *sp);

#endif
