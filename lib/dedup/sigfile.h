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

typedef struct llm_sigfile_writer llm_sigfile_writer;
int llm_sigfile_create(llm_sigfile_writer **w, const char *path, const llm_dedup_params *p);
/* One record; sig NULL (or sig->has == 0) for a record without signature. */
int llm_sigfile_add(llm_sigfile_writer *w, const llm_dedup_sig *sig, const char *id, size_t idlen);
/* Trailer, flush, rename. Frees w. */
int llm_sigfile_close(llm_sigfile_writer *w);
void llm_sigfile_abort(llm_sigfile_writer *w);

typedef struct llm_sigfile_reader llm_sigfile_reader;
/* Open and read the header; *p receives the parameters the file was signed with. */
int llm_sigfile_open(llm_sigfile_reader **r, const char *path, llm_dedup_params *p);
/* Next record (pointers valid until the next call). LLM_EOF after the trailer checked out. */
int llm_sigfile_next(llm_sigfile_reader *r, llm_dedup_sig *sig, const char **id, size_t *idlen);
uint64_t llm_sigfile_checksum(const llm_sigfile_reader *r);  /* valid after LLM_EOF */
void llm_sigfile_free(llm_sigfile_reader *r);

#endif
