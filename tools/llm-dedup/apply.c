/*
 * apply.c — llm-dedup apply: one shard's documents through its removal list (rmlist.h),
 * the last stage of sign → cluster → apply. The list is loaded whole; the documents stream.
 */
#include "dedup/rmlist.h"
#include "llm-dedup.h"

typedef struct {
	dedup_emitter em;
	llm_rmlist_reader l;
	llm_rmlist_entry e;
	int have;     /* e is the next entry */
	uint64_t k;   /* the record number in the shard */
} applyctx;

/* The next entry of the list into x->e. */
static void next_entry(applyctx *x)
{
	int rc = llm_rmlist_next(&x->l, &x->e);
	if (rc != LLM_OK && rc != LLM_EOF)
		die_lib();
	x->have = rc == LLM_OK;
}

static void apply_record(void *ctx, llm_dedup_doc *r, const char *file, uint64_t lineno)
{
	applyctx *x = ctx;
	if (x->have && x->e.rec == x->k) {
		dedup_emit(&x->em, r, file, lineno, x->e.kind, x->e.id, x->e.idlen, x->e.count, NULL);
		next_entry(x);
	} else {
		dedup_emit(&x->em, r, file, lineno, 0, NULL, 0, 0, NULL);
	}
	x->k++;
}

int dedup_run_apply(const struct dedup_cfg *c)
{
	if (!c->removals)
		usage_error("apply needs --removals FILE");
	applyctx x = { 0 };
	if (llm_rmlist_load(&x.l, c->removals))
		die_lib();
	next_entry(&x);
	dedup_emitter_open(&x.em, c);
	llm_dedup_doc r;
	llm_dedup_doc_init(&r);
	int failed = 0;
	for (int i = 0; i < dedup_input_count(c) && !failed; i++)
		failed |= dedup_each_record(c, dedup_input_name(c, i), NULL, &r, apply_record, &x, x.em.run,
		                      NULL);
	if (!failed && x.k != x.l.nrecords) {
		llm_error("%s: removal list is for %llu records, input has %llu", c->removals,
		          (unsigned long long)x.l.nrecords, (unsigned long long)x.k);
		failed = 1;
	}
	failed = dedup_emitter_close(&x.em, failed);
	llm_run_count(x.em.run, "duplicates", x.em.dups);
	llm_rmlist_reader_release(&x.l);
	llm_dedup_doc_release(&r);
	return tool_run_finish(x.em.run, failed);
}
