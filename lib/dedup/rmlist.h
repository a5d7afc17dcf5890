/*
 * rmlist.h — removal lists, between llm-dedup's cluster and apply stages (format in
 * llmkit-formats(5), DEDUP INDEX): per shard, the records that are duplicates (with the id of
 * their survivor) and the survivors that have duplicates, by record number, each with the size of
 * its cluster (the documents of a saved index included), plus the shard's
 * record count and its signature file's checksum (sigfile.h) so that a list is never applied
 * to the wrong shard. Loaded whole by apply (21 bytes + the id per entry).
 *
 * Every size read is checked against the file; errors are LLM_EFORMAT naming the file.
 * Written atomically (temporary name, renamed). Not thread safe.
 */
#ifndef LLM_RMLIST_H
#define LLM_RMLIST_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

enum { LLM_RMLIST_SURVIVOR = 1, LLM_RMLIST_DUPLICATE = 2 };

typedef struct {
	uint64_t rec;    /* record number in the shard, from 0 */
	int kind;        /* LLM_RMLIST_* */
	uint64_t count;  /* documents in the cluster, >= 2 */
	const char *id;  /* the survivor's id (the cluster's name) */
	size_t idlen;
} llm_rmlist_entry;

/* Build a removal list in memory, then write it atomically. Entries must come in
 * increasing record order. */
typedef struct {
	llm_buf b;
	uint64_t n, last;
} llm_rmlist_writer;
void llm_rmlist_writer_init(llm_rmlist_writer *w);
void llm_rmlist_add(llm_rmlist_writer *w, uint64_t rec, int kind, uint64_t count, const char *id,
                    size_t idlen);
int llm_rmlist_write(llm_rmlist_writer *w, const char *path, uint64_t nrecords,
                     uint64_t sig_checksum);
void llm_rmlist_writer_release(llm_rmlist_writer *w);
/* The removal list's name for a signature file: NAME.sig or NAME.sig.zst -> [DIR/]NAME.rm
 * (dir NULL: beside the signature file). The caller frees it. */
char *llm_rmlist_path(const char *sigfile, const char *dir);

typedef struct {
	char *data;
	size_t len, pos;
	uint64_t nrecords, sig_checksum, nentries, next, last;
	const char *path;
} llm_rmlist_reader;
int llm_rmlist_load(llm_rmlist_reader *l, const char *path);
/* Next entry in record order; LLM_EOF after the last. */
int llm_rmlist_next(llm_rmlist_reader *l, llm_rmlist_entry *e);
void llm_rmlist_reader_release(llm_rmlist_reader *l);

#endif
