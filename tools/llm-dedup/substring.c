/*
 * substring.c — llm-dedup --substring: pass 1 gives every text to the suffix arrays
 * (substr.h), pass 2 cuts the spans seen before out of each text, or lists them with
 * --annotate.
 */
#include <stdio.h>

#include "dedup/substr.h"
#include "llm-dedup.h"

typedef struct {
	dedup_emitter em;
	llm_substr *ss;
	llm_buf text, spans;
	uint64_t docs_cut;
} substrctx;

static void substr_add(void *ctx, llm_dedup_doc *r, const char *file, uint64_t lineno)
{
	substrctx *x = ctx;
	if (!r->reason && llm_substr_add(x->ss, r->text.p, r->text.len))
		die_lib();
}

static int substr_between(void *ctx)
{
	substrctx *x = ctx;
	if (llm_substr_finish(x->ss)) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	return 0;
}

/* --annotate: the spans as "dup_spans", byte offsets into the text. */
static void annotate_spans(substrctx *x, llm_dedup_doc *r, const char *file, uint64_t lineno,
                           const uint64_t *sp, size_t n)
{
	llm_buf_reset(&x->spans);
	for (size_t i = 0; i < n; i++)
		llm_buf_addf(&x->spans, "%s[%llu, %llu]", i ? ", " : "[",
		             (unsigned long long)sp[2 * i], (unsigned long long)sp[2 * i + 1]);
	llm_buf_adds(&x->spans, "]");
	llm_json_edit_reset(&x->em.ed);
	llm_json_edit_raw(&x->em.ed, "dup_spans", x->spans.p, x->spans.len);
	dedup_emit_edited(&x->em, r, file, lineno);
}

/* Without --annotate the spans leave the text; a text left blank is rejected as
 * substring_dup. */
static void substr_filter(void *ctx, llm_dedup_doc *r, const char *file, uint64_t lineno)
{
	substrctx *x = ctx;
	const uint64_t *sp = NULL;
	size_t n = 0;
	if (!r->reason && llm_substr_next(x->ss, r->text.p, r->text.len, &sp, &n))
		die("%s:%llu: %s", file, (unsigned long long)lineno, llm_last_error());
	if (!n) {
		dedup_emit(&x->em, r, file, lineno, 0, NULL, 0, 0, NULL);
		return;
	}
	x->docs_cut++;
	if (x->em.c->annotate) {
		annotate_spans(x, r, file, lineno, sp, n);
		return;
	}
	llm_buf_reset(&x->text);
	llm_substr_cut(r->text.p, r->text.len, sp, n, &x->text);
	if (dedup_blank(&x->text))
		dedup_emit(&x->em, r, file, lineno, DEDUP_KIND_SUBSTRING, NULL, 0, 0, NULL);
	else
		dedup_emit(&x->em, r, file, lineno, 0, NULL, 0, 0, &x->text);
}

static void substr_finish(void *ctx, llm_run *run)
{
	substrctx *x = ctx;
	llm_substr_stats st;
	llm_substr_get_stats(x->ss, &st);
	llm_run_count(run, "documents_cut", x->docs_cut);
	llm_info("substrings of %zu bytes or more seen before: %llu of %llu bytes removed (%.2f%%) "
	         "from %llu documents; %llu suffix array shards, %.1f MB on disk, %.1f MB in memory",
	         x->em.c->min_len, (unsigned long long)st.removed, (unsigned long long)st.bytes,
	         st.bytes ? 100.0 * (double)st.removed / (double)st.bytes : 0.0,
	         (unsigned long long)x->docs_cut, (unsigned long long)st.shards,
	         (double)st.disk / 1e6, (double)st.memory / 1e6);
	char mem[300];
	snprintf(mem, sizeof mem, "\"dedup\": {\"method\": \"substring\", \"min_length\": %zu, "
	         "\"text_bytes\": %llu, \"removed_bytes\": %llu, \"shards\": %llu, \"disk_bytes\": "
	         "%llu, \"memory_bytes\": %llu}", x->em.c->min_len, (unsigned long long)st.bytes,
	         (unsigned long long)st.removed, (unsigned long long)st.shards,
	         (unsigned long long)st.disk, (unsigned long long)st.memory);
	llm_run_stats_extra(run, mem);
}

int dedup_run_substring(const struct dedup_cfg *c)
{
	static const dedup_filter f = { substr_add, substr_filter, substr_between, substr_finish };
	substrctx x = { .ss = llm_substr_new(c->min_len, c->memory, c->tmpdir) };
	int rc = dedup_run_filter(c, &f, &x);
	llm_substr_free(x.ss);
	llm_buf_release(&x.text);
	llm_buf_release(&x.spans);
	return rc;
}
