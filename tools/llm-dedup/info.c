/*
 * info.c — llm-dedup --info: what each saved index holds, or with --clusters its clusters as
 * JSONL.
 */
#include "llm-dedup.h"

static void cluster_line(void *ctx, const char *id, size_t idlen, uint64_t size, unsigned run)
{
	llm_writer *w = ctx;
	llm_buf b = LLM_BUF_INIT;
	llm_buf_adds(&b, "{\"id\": ");
	llm_json_put_str(&b, id, idlen);
	llm_buf_addf(&b, ", \"dup_count\": %llu, \"run\": %u}\n", (unsigned long long)size, run);
	if (llm_writer_write(w, b.p, b.len))
		die_lib();
	llm_buf_release(&b);
}

/* The description of index file f; returns 1 when it cannot be read (reported). */
static int describe_index(llm_writer *w, const char *f)
{
	llm_dedup_index_info in;
	llm_buf runs = LLM_BUF_INIT, b = LLM_BUF_INIT;
	if (llm_dedup_index_info_read(f, &in, &runs)) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	llm_buf_addf(&b, "%s: dedup index version %u, %llu bytes\n", f, in.version,
	             (unsigned long long)in.bytes);
	llm_buf_adds(&b, "parameters: ");
	llm_dedup_params_describe(&in.p, &b);
	llm_buf_addf(&b, "\ndocuments: %llu in %u run%s\nclusters: %llu, %llu of them with "
	             "duplicates\nbucket entries: %llu\n", (unsigned long long)in.documents,
	             in.runs, in.runs == 1 ? "" : "s", (unsigned long long)in.clusters,
	             (unsigned long long)in.dup_clusters, (unsigned long long)in.entries);
	llm_buf_add(&b, runs.p ? runs.p : "", runs.len);
	if (llm_writer_write(w, b.p, b.len))
		die_lib();
	llm_buf_release(&runs);
	llm_buf_release(&b);
	return 0;
}

int dedup_run_info(const struct dedup_cfg *c)
{
	if (!c->nfiles)
		usage_error("--info needs index files");
	llm_writer *w;
	if (llm_writer_open(&w, c->co.output))
		die_lib();
	int failed = 0;
	for (int i = 0; i < c->nfiles; i++) {
		if (!c->clusters) {
			failed |= describe_index(w, c->files[i]);
		} else if (llm_dedup_index_clusters(c->files[i], cluster_line, w)) {
			llm_error("%s", llm_last_error());
			failed = 1;
		}
	}
	if (llm_writer_close(w)) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	return failed;
}
