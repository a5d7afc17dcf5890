/*
 * docs.c — the single run of the document methods (--exact, --minhash, --simhash), alone or
 * against a saved index: pass 1 signs every document on the signing pool and clusters them,
 * pass 2 names the survivors and writes every record through the emitter.
 */
#include <stdio.h>

#include "llm-dedup.h"

static void pass2_record(void *ctx, llm_dedup_doc *r, const char *file, uint64_t lineno)
{
	dedup_runctx *x = ctx;
	const char *cid = NULL;
	size_t cidlen = 0;
	uint64_t v = x->node++;
	int kind = llm_dedup_decide(x->d, v, !r->reason, r->id.p, r->id.len, x->c->index != NULL,
	                            &cid, &cidlen);
	if (kind < 0)
		die_lib();
	dedup_emit(x->em, r, file, lineno, kind, cid, cidlen,
	     llm_dedup_dup_count(x->d, llm_dedup_root(x->d, v)), NULL);
}

static void stats_extra(llm_run *run, const struct dedup_cfg *c, llm_dedup *d, uint64_t docs)
{
	llm_buf b = LLM_BUF_INIT, desc = LLM_BUF_INIT;
	llm_dedup_params_describe(&c->p, &desc);
	size_t mem = llm_dedup_memory(d);
	llm_buf_adds(&b, "\"dedup\": {\"method\": ");
	llm_json_put_str(&b, desc.p, desc.len);
	llm_buf_addf(&b, ", \"candidates\": %llu, \"joins\": %llu, \"index_clusters\": %llu",
	             (unsigned long long)llm_dedup_candidates(d), (unsigned long long)llm_dedup_joins(d),
	             (unsigned long long)llm_dedup_base(d));
	llm_buf_addf(&b, ", \"memory_bytes\": %zu, \"memory_bytes_per_document\": %.1f"
	             ", \"sorted_runs\": %u}", mem, docs ? (double)mem / (double)docs : 0.0,
	             llm_dedup_runs(d));
	llm_run_stats_extra(run, b.p);
	llm_buf_release(&b);
	llm_buf_release(&desc);
}

/* Pass 1: every document signed and added to the engine, then clustered. */
static dedup_spool *sign_and_cluster(const struct dedup_cfg *c, dedup_runctx *x)
{
	llm_signpool *pool = dedup_new_pool(c, x);
	dedup_spool *sp = NULL;
	int failed = dedup_first_pass(c, NULL, NULL, NULL, &sp, pool);
	llm_signpool_free(pool);
	if (failed) /* an unreadable input: the clusters are incomplete, write nothing */
		die("no output written");
	if (llm_dedup_finish(x->d))
		die_lib();
	llm_info("%llu documents, %llu joined as duplicates; %.0f bytes per document in memory, "
	         "%u sorted runs on disk", (unsigned long long)x->docs,
	         (unsigned long long)llm_dedup_joins(x->d),
	         x->docs ? (double)llm_dedup_memory(x->d) / (double)x->docs : 0.0,
	         llm_dedup_runs(x->d));
	return sp;
}

int dedup_run_docs(const struct dedup_cfg *c)
{
	dedup_runctx x = { .c = c, .d = dedup_new_engine(c, &c->p) };
	/* The run (and its clock) starts before the first pass, so the summary's rate is the
	 * rate of the whole job. */
	dedup_emitter em;
	dedup_emitter_open(&em, c);
	dedup_spool *sp = sign_and_cluster(c, &x);
	stats_extra(em.run, c, x.d, x.docs);
	x.em = &em;
	x.node = llm_dedup_base(x.d);
	llm_dedup_doc r;
	llm_dedup_doc_init(&r);
	int failed = dedup_second_pass(c, sp, &r, pass2_record, &x, em.run);
	dedup_spool_free(sp);
	if (!failed && c->index && llm_dedup_save_index(x.d, c->index)) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	failed = dedup_emitter_close(&em, failed);
	llm_run_count(em.run, "duplicates", em.dups);
	llm_dedup_doc_release(&r);
	llm_dedup_free(x.d);
	return tool_run_finish(em.run, failed);
}
