/*
 * cluster.c — llm-dedup cluster: the signature files of every shard into one engine, then
 * one removal list per shard (rmlist.h), and the index with --index.
 */
#include <stdlib.h>

#include "dedup/rmlist.h"
#include "llm-dedup.h"

/* Open a signature file whose parameters must be those of the first one (first). */
static llm_sigfile_reader *open_like(const char *path, const char *first_path,
                                     const llm_dedup_params *first)
{
	llm_sigfile_reader *sr;
	llm_dedup_params p;
	if (llm_sigfile_open(&sr, path, &p))
		die_lib();
	if (!llm_dedup_params_same(&p, first))
		die("%s: signed with other parameters than %s", path, first_path);
	return sr;
}

/* Pass 1: every signature, in the order of the files, into one engine; each file's checksum
 * into sums. Returns the engine, finished. */
static llm_dedup *cluster_all(const struct dedup_cfg *c, llm_dedup_params *p, uint64_t *sums,
                              uint64_t *docs)
{
	llm_dedup *d = NULL;
	llm_dedup_sig sig;
	const char *id;
	size_t idlen;
	int rc;
	for (int i = 0; i < c->nfiles; i++) {
		llm_sigfile_reader *sr;
		if (i == 0) {
			if (llm_sigfile_open(&sr, c->files[0], p))
				die_lib();
			d = dedup_new_engine(c, p);
			dedup_describe_params(p);
		} else {
			sr = open_like(c->files[i], c->files[0], p);
		}
		while ((rc = llm_sigfile_next(sr, &sig, &id, &idlen)) == LLM_OK) {
			llm_dedup_add(d, &sig);
			(*docs)++;
		}
		if (rc != LLM_EOF)
			die_lib();
		sums[i] = llm_sigfile_checksum(sr);
		llm_sigfile_free(sr);
	}
	if (llm_dedup_finish(d))
		die_lib();
	return d;
}

/* Pass 2 over one shard: name its survivors and write its removal list from node *v on.
 * Returns the shard's duplicates. */
static uint64_t write_removals(const struct dedup_cfg *c, llm_dedup *d, int i, uint64_t sum,
                               uint64_t *v)
{
	llm_sigfile_reader *sr;
	llm_dedup_params p;
	if (llm_sigfile_open(&sr, c->files[i], &p))
		die_lib();
	llm_rmlist_writer w;
	llm_rmlist_writer_init(&w);
	llm_dedup_sig sig;
	const char *id;
	size_t idlen;
	uint64_t k = 0, dups = 0;
	int rc;
	while ((rc = llm_sigfile_next(sr, &sig, &id, &idlen)) == LLM_OK) {
		const char *cid = NULL;
		size_t cidlen = 0;
		int kind = llm_dedup_decide(d, *v, 1, id, idlen, c->index != NULL, &cid, &cidlen);
		if (kind < 0)
			die_lib();
		if (kind)
			llm_rmlist_add(&w, k, kind, llm_dedup_dup_count(d, llm_dedup_root(d, *v)), cid,
			               cidlen);
		(*v)++;
		dups += kind == LLM_RMLIST_DUPLICATE;
		k++;
	}
	if (rc != LLM_EOF || llm_sigfile_checksum(sr) != sum)
		die("%s: %s", c->files[i], rc != LLM_EOF ? llm_last_error() : "changed while clustering");
	char *out = llm_rmlist_path(c->files[i], c->outdir);
	if (llm_rmlist_write(&w, out, k, sum))
		die_lib();
	free(out);
	llm_rmlist_writer_release(&w);
	llm_sigfile_free(sr);
	return dups;
}

int dedup_run_cluster(const struct dedup_cfg *c)
{
	if (!c->nfiles)
		usage_error("cluster needs signature files");
	llm_dedup_params p;
	uint64_t *sums = llm_calloc(c->nfiles, sizeof *sums), docs = 0;
	llm_dedup *d = cluster_all(c, &p, sums, &docs);
	uint64_t v = llm_dedup_base(d), dups = 0;
	for (int i = 0; i < c->nfiles; i++)
		dups += write_removals(c, d, i, sums[i], &v);
	if (c->index && llm_dedup_save_index(d, c->index))
		die_lib();
	llm_info("%llu documents in %d shards: %llu duplicates; %.0f bytes per document in memory",
	         (unsigned long long)docs, c->nfiles, (unsigned long long)dups,
	         docs ? (double)llm_dedup_memory(d) / (double)docs : 0.0);
	free(sums);
	llm_dedup_free(d);
	return 0;
}
