/*
 * lines.c — llm-dedup --lines: pass 1 counts every line of the corpus (dedup.h's line
 * counter), pass 2 drops the lines seen more than --line-max times.
 */
#include <stdio.h>

#include "llm-dedup.h"

typedef struct {
	dedup_emitter em;
	llm_linededup *ld;
	llm_buf text;
	uint64_t dropped;
} linectx;

static void lines_count(void *ctx, llm_dedup_doc *r, const char *file, uint64_t lineno)
{
	linectx *x = ctx;
	if (!r->reason)
		llm_linededup_count(x->ld, r->text.p ? r->text.p : "", r->text.len);
}

static void lines_filter(void *ctx, llm_dedup_doc *r, const char *file, uint64_t lineno)
{
	linectx *x = ctx;
	size_t dropped = 0;
	if (!r->reason) {
		llm_buf_reset(&x->text);
		dropped = llm_linededup_filter(x->ld, r->text.p ? r->text.p : "", r->text.len, &x->text);
		x->dropped += dropped;
	}
	if (!dropped)
		dedup_emit(&x->em, r, file, lineno, 0, NULL, 0, 0, NULL);
	else if (dedup_blank(&x->text))
		dedup_emit(&x->em, r, file, lineno, DEDUP_KIND_ALL_LINES, NULL, 0, 0, NULL);
	else
		dedup_emit(&x->em, r, file, lineno, 0, NULL, 0, 0, &x->text);
}

static int lines_between(void *ctx) { (void)ctx; return 0; }

static void lines_finish(void *ctx, llm_run *run)
{
	linectx *x = ctx;
	llm_run_count(run, "lines_dropped", x->dropped);
	double fp = llm_linededup_fp_rate(x->ld);
	if (fp > 0)
		llm_info("line counts in a Bloom filter of %zu bytes: %llu distinct lines, false-positive "
		         "rate at most %.2g%%", llm_linededup_memory(x->ld),
		         (unsigned long long)llm_linededup_distinct(x->ld), 100 * fp);
	if (fp > 0.01)
		llm_warn("more than 1%% of the rare lines may be dropped as frequent; raise --memory");
	char mem[200];
	snprintf(mem, sizeof mem, "\"dedup\": {\"method\": \"lines\", \"distinct_lines\": %llu, "
	         "\"memory_bytes\": %zu, \"bloom_false_positive_rate\": %.3g}",
	         (unsigned long long)llm_linededup_distinct(x->ld), llm_linededup_memory(x->ld), fp);
	llm_run_stats_extra(run, mem);
}

int dedup_run_lines(const struct dedup_cfg *c)
{
	static const dedup_filter f = { lines_count, lines_filter, lines_between, lines_finish };
	linectx x = { .ld = llm_linededup_new(c->p.sh.norm, c->line_max, c->memory) };
	int rc = dedup_run_filter(c, &f, &x);
	llm_linededup_free(x.ld);
	llm_buf_release(&x.text);
	return rc;
}
