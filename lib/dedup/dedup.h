/*
 * dedup.h — document deduplication: signatures, clustering with union-find, saved indexes.
 *
 * Three methods share one engine:
 *   exact    XXH3-128 of the normalised text; equal hashes are duplicates
 *   minhash  LSH band keys of a MinHash signature (minhash.h); sharing a band key makes two
 *            documents candidates, optionally verified with the exact Jaccard similarity of
 *            their shingle sets
 *   simhash  64-bit SimHash (simhash.h); documents within Hamming distance k are duplicates
 *
 * Work is split the way it scales out: a signer turns a document into an llm_dedup_sig (pure,
 * one per thread), the engine (llm_dedup) receives signatures in input order and joins
 * duplicates with union-find. The engine's nodes are numbered in input order; the root of a
 * cluster is always its smallest node, so the survivor of a cluster is its first document.
 * Each new document is joined with the first document of every bucket it falls into (minhash,
 * exact) or with every earlier fingerprint within distance k (simhash), which yields exactly
 * the connected components of the "shares a bucket" (resp. "within distance k") graph.
 * With verification, a minhash candidate pair is joined only when its Jaccard similarity
 * reaches the threshold (pairs are the new document and each bucket's first document).
 *
 * A saved index (llm_dedup_load_index / llm_dedup_save_index; format in llmkit-formats(5)):
 * the clusters of earlier runs (their survivor's id and size) and every bucket entry pointing
 * to them, and one record per run that built it (its inputs, documents and command line).
 * Loaded clusters become the first nodes, so new documents that match them are duplicates of
 * an earlier run, and the saved index holds the same clusters and entries as one built from
 * all the input at once. A run whose inputs are those of the index's last run (the same
 * names, perhaps more) replaces that run instead of adding to it: the entries and clusters
 * it added are left out when loading, so a rerun after changing an earlier stage sees the
 * index as it was before its first run and no document is a duplicate of itself.
 *
 * Memory: the engine holds its buckets in tables until they reach half of a budget
 * (llm_dedup_set_memory; unlimited by default), then as records of an external sort on disk
 * (xsort.h) with the same result; see dedup.c. Tables: per document, up to `bands` new
 * bucket entries of 16 bytes over the table's load factor (minhash), one entry and 8 bytes
 * (exact), or 16 bytes plus 8 per table per distinct fingerprint (simhash). Records: 24 bytes
 * per bucket entry on disk, the budget in memory. Outside the budget, always: 8 bytes per
 * node (union-find), 12 per document with verification (the shingle sets themselves are in a
 * temporary file), one bit per node after finish, and the ids of survivors with duplicates.
 * Not thread safe.
 */
#ifndef LLM_DEDUP_H
#define LLM_DEDUP_H

#include <stddef.h>
#include <stdint.h>

#include "minhash.h"
#include "shingle.h"
#include "simhash.h"

typedef enum { LLM_DEDUP_EXACT, LLM_DEDUP_MINHASH, LLM_DEDUP_SIMHASH } llm_dedup_method;

typedef struct {
	llm_dedup_method method;
	llm_shingle_opts sh;     /* normalisation (all methods), units and ngram (min/simhash) */
	unsigned num_perm, bands, rows, hash_bits; /* minhash */
	double verify;           /* minhash: Jaccard threshold of verification, 0 = off */
	unsigned hamming, blocks; /* simhash */
} llm_dedup_params;

/* Defaults: FULL normalisation, auto units, 5-grams, seed 1; minhash 112 permutations as
 * 14 bands x 8 rows, 32-bit; simhash distance 3 with 6 blocks. */
void llm_dedup_params_default(llm_dedup_params *p, llm_dedup_method m);
/* LLM_EINVAL with detail when the parameters are inconsistent. */
int llm_dedup_params_check(const llm_dedup_params *p);
/* One line describing the parameters that decide the result ("minhash 14x8 ..."). */
void llm_dedup_params_describe(const llm_dedup_params *p, llm_buf *out);
/* Whether two parameter sets give the same signatures (same method and description). */
int llm_dedup_params_same(const llm_dedup_params *a, const llm_dedup_params *b);

/* The signature of one document. Pointers belong to the signer (valid until its next call)
 * or, for signatures read from a file, to the reader. */
typedef struct {
	int has;            /* 0: no shingles / empty text: never a near-duplicate, always kept */
	unsigned nkeys;     /* exact 1, minhash bands, simhash 0 */
	const uint64_t *keys;
	uint64_t key_hi;    /* exact: high half of the XXH3-128 */
	uint64_t fp;        /* simhash fingerprint */
	const uint32_t *set; /* verification: sorted distinct 32-bit shingle hashes */
	uint32_t nset;
} llm_dedup_sig;

typedef struct llm_signer llm_signer;
int llm_signer_new(llm_signer **s, const llm_dedup_params *p);
void llm_signer_free(llm_signer *s);
/* Sign text[0..n) into *sig (valid until the next call on s). */
void llm_signer_sign(llm_signer *s, const char *text, size_t n, llm_dedup_sig *sig);

typedef struct llm_dedup llm_dedup;
int llm_dedup_new(llm_dedup **d, const llm_dedup_params *p);
void llm_dedup_free(llm_dedup *d);
/* Before the first add or load: the budget in bytes of the bucket tables and sort buffers,
 * and the directory of temporary files (NULL: $TMPDIR, else /tmp). */
void llm_dedup_set_memory(llm_dedup *d, size_t budget, const char *tmpdir);

/* Append the next document; returns its node. sig->has == 0 makes a node without edges. */
uint64_t llm_dedup_add(llm_dedup *d, const llm_dedup_sig *sig);
/* Nodes loaded from an index come first: 0 .. base-1. */
uint64_t llm_dedup_base(const llm_dedup *d);
/* The survivor of node's cluster. */
uint64_t llm_dedup_root(llm_dedup *d, uint64_t node);
/* After the last add: merge the records (if any), flatten the forest; afterwards root() is
 * O(1) and has_dups() works. LLM_EIO when a temporary file failed (at any time before). */
int llm_dedup_finish(llm_dedup *d);
/* Whether a root has other members (valid after finish). */
int llm_dedup_has_dups(const llm_dedup *d, uint64_t root);

/* Ids: the caller names survivors in increasing node order (a node below one already named
 * is ignored); index nodes come named. Every named node goes to the saved index. */
void llm_dedup_set_id(llm_dedup *d, uint64_t node, const char *id, size_t len);
/* After finish, the id of a named survivor that has duplicates; otherwise NULL. */
const char *llm_dedup_id(const llm_dedup *d, uint64_t node, size_t *len);
/*
 * After finish, the fate of node v, visited in increasing node order with the id of its
 * document (ok == 0: a rejected record, which never names its cluster): 0 for a document
 * without duplicates, else LLM_RMLIST_SURVIVOR or LLM_RMLIST_DUPLICATE (rmlist.h) with
 * *cid the survivor's id (valid while d lives). A survivor is named when it has duplicates,
 * or always with name_all (a saved index keeps every survivor's id). LLM_EINTERNAL when
 * a duplicate's survivor has no id (a bug).
 */
int llm_dedup_decide(llm_dedup *d, uint64_t v, int ok, const char *id, size_t idlen,
                     int name_all, const char **cid, size_t *cidlen);

/* Candidate pairs examined and joined (for the stats). */
uint64_t llm_dedup_candidates(const llm_dedup *d);
uint64_t llm_dedup_joins(const llm_dedup *d);
/* Bytes held by the engine now; sorted runs written to disk so far. */
size_t llm_dedup_memory(const llm_dedup *d);
unsigned llm_dedup_runs(const llm_dedup *d);

/*
 * The run's inputs (names as the index will compare them: callers pass real paths) and its
 * command line, before loading an index; kept in the index's record of this run. Inputs that
 * cannot be named (standard input) are left out: such a run is never taken for a rerun.
 */
void llm_dedup_set_run(llm_dedup *d, const char *const *inputs, size_t ninputs, const char *cmd);

/*
 * Load an index into an engine that has no node yet. LLM_EFORMAT (detail names the file) on
 * a bad magic, version, size or checksum; LLM_EINVAL when it was built with other parameters
 * (the detail names them) or when an input of this run was absorbed by a run before the last
 * or by a last run whose other inputs are missing here (a rerun must repeat the whole last
 * run); LLM_EUNSUPPORTED with verification (an index keeps no shingle sets).
 */
int llm_dedup_load_index(llm_dedup *d, const char *path);
/* After load: the run of the index this one replaces (1-based), or 0 when it adds a run. */
unsigned llm_dedup_replaces(const llm_dedup *d);
/* Save (atomically, as a stream) after finish. Every survivor that has a signature must be
 * named (llm_dedup_set_id). */
int llm_dedup_save_index(llm_dedup *d, const char *path);

/* After finish: the number of documents in root's cluster, counting those of earlier runs
 * that the index holds (1 for a document without duplicates). */
uint64_t llm_dedup_dup_count(const llm_dedup *d, uint64_t root);

/* What an index file holds, without loading it. */
typedef struct {
	llm_dedup_params p;      /* verify is 0 */
	uint32_t version;
	uint64_t bytes, clusters, entries, documents, dup_clusters;
	unsigned runs;
} llm_dedup_index_info;
/* Read and check the whole file; *info and, when out is not NULL, a description of each run
 * (one line per run and one per input, appended to out). Errors as llm_dedup_load_index. */
int llm_dedup_index_info_read(const char *path, llm_dedup_index_info *info, llm_buf *out);
/* Call fn for every cluster of the index in order: its survivor's id, its size and the run
 * that made it. */
typedef void (*llm_dedup_cluster_fn)(void *ctx, const char *id, size_t idlen, uint64_t size,
                                     unsigned run);
int llm_dedup_index_clusters(const char *path, llm_dedup_cluster_fn fn, void *ctx);

/*
 * Line-level dedup (cc_net style): count every line of the corpus (lines are split at "\n",
 * normalised at the given level; lines that normalise to nothing are ignored), then drop from
 * each document the lines seen more than max_count times, all occurrences included, which
 * removes boilerplate (menus, cookie notices, licence footers) from every page that carries it.
 * Lines are keyed by XXH3-64 of their normalisation: distinct lines collide with probability
 * about n^2 / 2^65 for n distinct lines. Counts are exact in a hash table (16 bytes per
 * distinct line over a load factor of 0.375 to 0.75) while it fits in `budget` bytes, then
 * move to a counting Bloom filter of `budget` one-byte cells (see dedup.c): a frequent line is
 * never missed, and a line seen at most max_count times is taken for a frequent one with
 * probability at most llm_linededup_fp_rate(). Counts saturate at 255.
 */
typedef struct llm_linededup llm_linededup;
llm_linededup *llm_linededup_new(llm_norm_level norm, unsigned max_count, size_t budget);
void llm_linededup_free(llm_linededup *ld);
void llm_linededup_count(llm_linededup *ld, const char *text, size_t n);
/* Append text without the frequent lines to out (kept lines joined by "\n" as they were);
 * returns the number of lines dropped. */
size_t llm_linededup_filter(llm_linededup *ld, const char *text, size_t n, llm_buf *out);
/* Distinct lines counted (with the filter, an estimate from its cells in use). */
uint64_t llm_linededup_distinct(const llm_linededup *ld);
size_t llm_linededup_memory(const llm_linededup *ld);
/* 0 with exact counts; with the filter, the bound (X/m)^K for X of its m cells in use, K = 4. */
double llm_linededup_fp_rate(const llm_linededup *ld);

#endif
