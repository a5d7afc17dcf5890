/*
 * sigfile.h — signature files, between llm-dedup's sign and cluster stages (format in
 * llmkit-formats(5), DEDUP INDEX; removal lists, cluster → apply, are rmlist.h):
 *
 *   the parameters, then per input record its id and its signature, then the record count and
 *   an XXH3-64 checksum of everything before it. Written as a stream (memory: one record),
 *   read as a stream.
 *
 * Every size read is checked against the file; errors are LLM_EFORMAT naming the file.
 * The writer uses io.h's atomic writer (temporary name, renamed on close). Not thread safe.
 */
#ifndef LLM_SIGFILE_H
#define LLM_SIGFILE_H

#include <stddef.h>
#include <stdint.h>

#include "dedup.h"

typedef struct llm_sigw llm_sigw;
int llm_sigw_open(llm_sigw **w, const char *path, const llm_dedup_params *p);
/* One record; sig NULL (or sig->has == 0) for a record without signature. */
int llm_sigw_add(llm_sigw *w, const llm_dedup_sig *sig, const char *id, size_t idlen);
/* Trailer, flush, rename. Frees w. */
int llm_sigw_close(llm_sigw *w);
void llm_sigw_abort(llm_sigw *w);

typedef struct llm_sigr llm_sigr;
/* Open and read the header; *p receives the parameters the file was signed with. */
int llm_sigr_open(llm_sigr **r, const char *path, llm_dedup_params *p);
/* Next record (pointers valid until the next call). LLM_EOF after the trailer checked out. */
int llm_sigr_next(llm_sigr *r, llm_dedup_sig *sig, const char **id, size_t *idlen);
uint64_t llm_sigr_count(const llm_sigr *r);     /* records read so far */
uint64_t llm_sigr_checksum(const llm_sigr *r);  /* valid after LLM_EOF */
void llm_sigr_free(llm_sigr *r);

#endif
