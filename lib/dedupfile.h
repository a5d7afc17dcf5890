/*
 * dedupfile.h — the files between the scale-out stages of llm-dedup (formats in
 * llmkit-formats(5), DEDUP INDEX):
 *
 *   signature file (sign → cluster): the parameters, then per input record its id and its
 *     signature, then the record count and an XXH3-64 checksum of everything before it.
 *     Written as a stream (memory: one record), read as a stream.
 *   removal list (cluster → apply): per shard, the records that are duplicates (with the id
 *     of their survivor) and the survivors that have duplicates, by record number, plus the
 *     shard's record count and its signature file's checksum so that a list is never applied
 *     to the wrong shard. Loaded whole by apply (17 bytes + the id per entry).
 *
 * Every size read is checked against the file; errors are LLM_EFORMAT naming the file.
 * Writers use io.h's atomic writer (temporary name, renamed on close). Not thread safe.
 */
#ifndef LLM_DEDUPFILE_H
#define LLM_DEDUPFILE_H

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

enum { LLM_RM_SURVIVOR = 1, LLM_RM_DUPLICATE = 2 };

typedef struct {
	uint64_t rec;    /* record number in the shard, from 0 */
	int kind;        /* LLM_RM_* */
	const char *id;  /* the survivor's id (the cluster's name) */
	size_t idlen;
} llm_rm_entry;

/* Build a removal list in memory, then write it atomically. Entries must come in
 * increasing record order. */
typedef struct {
	llm_buf b;
	uint64_t n, last;
} llm_rmw;
void llm_rmw_init(llm_rmw *w);
void llm_rmw_add(llm_rmw *w, uint64_t rec, int kind, const char *id, size_t idlen);
int llm_rmw_write(llm_rmw *w, const char *path, uint64_t nrecords, uint64_t sig_checksum);
void llm_rmw_release(llm_rmw *w);

typedef struct {
	char *data;
	size_t len, pos;
	uint64_t nrecords, sig_checksum, nentries, next, last;
	const char *path;
} llm_rml;
int llm_rml_load(llm_rml *l, const char *path);
/* Next entry in record order; LLM_EOF after the last. */
int llm_rml_next(llm_rml *l, llm_rm_entry *e);
void llm_rml_release(llm_rml *l);

#endif
