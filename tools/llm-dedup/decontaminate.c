/*
 * decontaminate.c — llm-dedup --decontaminate: the n-grams of the benchmark items
 * (decon.h), then every document that shares one dropped (or annotated with --annotate),
 * and the items found, with their counts, with --decon-report.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dedup/decon.h"
#include "llm-dedup.h"

/* The benchmark items (decon.h), their names for the report and how many documents each
 * was found in. */
typedef struct {
	dedup_emitter em;
	llm_decon *dc;
	llm_buf names;        /* per item: "FILE\tID\0" */
	size_t *name_at;
	uint64_t *docs, *first_doc; /* per item: documents found in, and the first one's offset */
	llm_buf first_ids;    /* the ids of those first documents */
	uint32_t nitems, cap;
	uint64_t unmatchable, contaminated;
	llm_buf ids, extra;
} deconctx;

static void add_item(deconctx *x, const char *file, uint64_t lineno, const llm_json_rec *rec,
                     const char *field)
{
	uint32_t item = x->nitems;
	size_t ngrams = llm_decon_add_item(x->dc, item, rec, field);
	if (!ngrams) {
		x->unmatchable++;
		return;
	}
	if (x->nitems == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 256;
		x->name_at = llm_realloc(x->name_at, x->cap * sizeof *x->name_at);
	}
	x->name_at[x->nitems++] = x->names.len;
	llm_buf_addf(&x->names, "%s\t", file);
	llm_buf id = LLM_BUF_INIT;
	if (llm_json_get_str(rec, "id", &id))
		llm_buf_addf(&id, "%s:%llu", file, (unsigned long long)lineno);
	llm_buf_add(&x->names, id.p, id.len);
	llm_buf_addc(&x->names, 0);
	llm_buf_release(&id);
}

/* The items of one benchmark file, one JSON record a line; a bad line is fatal. */
static void load_benchmark_file(deconctx *x, const char *path, const struct tool_common *co)
{
	tool_lines in;
	if (tool_lines_open(&in, path, co, NULL))
		die_lib();
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	while (tool_lines_next(&in)) {
		if (in.too_long)
			die("%s:%llu: line over --max-line in a benchmark file", in.name,
			    (unsigned long long)in.lineno);
		if (llm_json_parse(&rec, in.line, in.len))
			die("%s:%llu: bad JSON in a benchmark file: %s", path,
			    (unsigned long long)in.lineno, rec.err_msg);
		add_item(x, path, in.lineno, &rec, co->field);
	}
	if (tool_lines_close(&in))
		die_lib();
	llm_json_rec_release(&rec);
}

/* A benchmark file, or a directory's *.jsonl files in name order. */
static void load_benchmark_path(deconctx *x, const char *path, const struct tool_common *co)
{
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
		load_benchmark_file(x, path, co);
		return;
	}
	glob_t g = { 0 };
	llm_buf pat = LLM_BUF_INIT;
	llm_buf_addf(&pat, "%s/*.jsonl", path);
	if (glob(pat.p, 0, NULL, &g) != 0)
		die("%s: no .jsonl files in this directory", path);
	llm_buf_release(&pat);
	for (size_t k = 0; k < g.gl_pathc; k++)
		load_benchmark_file(x, g.gl_pathv[k], co);
	globfree(&g);
}

/* Every benchmark file, then the tables of the matches. */
static void load_benchmarks(deconctx *x, const struct dedup_cfg *c)
{
	for (int i = 0; i < c->ndecon; i++)
		load_benchmark_path(x, c->decon[i], &c->co);
	if (llm_decon_ready(x->dc))
		die_lib();
	x->docs = llm_calloc(x->nitems ? x->nitems : 1, sizeof *x->docs);
	x->first_doc = llm_calloc(x->nitems ? x->nitems : 1, sizeof *x->first_doc);
	llm_info("%u benchmark items, %llu distinct %u-grams%s; %llu items too short to match",
	         x->nitems, (unsigned long long)llm_decon_ngrams(x->dc), c->p.sh.ngram,
	         llm_decon_on_disk(x->dc) ? " (on disk)" : "", (unsigned long long)x->unmatchable);
}

/* The id of item i, and its file. */
static const char *item_id(const deconctx *x, uint32_t i, const char **file, size_t *flen)
{
	const char *n = x->names.p + x->name_at[i], *tab = strchr(n, '\t');
	*file = n;
	*flen = (size_t)(tab - n);
	return tab + 1;
}

static void decon_record(void *ctx, llm_dedup_doc *r, const char *file, uint64_t lineno)
{
	deconctx *x = ctx;
	const uint32_t *items = NULL;
	size_t nitems = 0;
	int err = 0;
	if (!r->reason)
		llm_decon_match(x->dc, r->text.p, r->text.len, &items, &nitems, &err);
	if (err)
		die_lib();
	if (!nitems) {
		dedup_emit(&x->em, r, file, lineno, 0, NULL, 0, 0, NULL);
		return;
	}
	x->contaminated++;
	llm_buf_reset(&x->ids);
	for (size_t i = 0; i < nitems; i++) {
		const char *f;
		size_t fl;
		const char *id = item_id(x, items[i], &f, &fl);
		llm_buf_adds(&x->ids, i ? ", " : "[");
		llm_json_put_str(&x->ids, id, strlen(id));
		if (!x->docs[items[i]]++) {
			x->first_doc[items[i]] = x->first_ids.len;
			llm_buf_add(&x->first_ids, r->id.p ? r->id.p : "", r->id.len);
			llm_buf_addc(&x->first_ids, 0);
		}
	}
	llm_buf_adds(&x->ids, "]");
	if (x->em.c->annotate) {
		llm_json_edit_reset(&x->em.ed);
		llm_json_edit_raw(&x->em.ed, "decon_items", x->ids.p, x->ids.len);
		dedup_emit_edited(&x->em, r, file, lineno);
		return;
	}
	llm_buf_reset(&x->extra);
	llm_buf_adds(&x->extra, "\"decon_items\": ");
	llm_buf_add(&x->extra, x->ids.p, x->ids.len);
	dedup_emit_reject(&x->em, r, file, lineno, "contaminated", x->extra.p);
}

/* The items found, one JSON object per line, in benchmark order. */
static void decon_report(const deconctx *x, const char *path)
{
	llm_writer *w;
	if (llm_writer_open(&w, path))
		die_lib();
	llm_buf b = LLM_BUF_INIT;
	for (uint32_t i = 0; i < x->nitems; i++) {
		if (!x->docs[i])
			continue;
		const char *f, *id = NULL;
		size_t fl;
		id = item_id(x, i, &f, &fl);
		llm_buf_reset(&b);
		llm_buf_adds(&b, "{\"benchmark\": ");
		llm_json_put_str(&b, f, fl);
		llm_buf_adds(&b, ", \"item\": ");
		llm_json_put_str(&b, id, strlen(id));
		llm_buf_addf(&b, ", \"documents\": %llu, \"first_document\": ",
		             (unsigned long long)x->docs[i]);
		const char *fd = x->first_ids.p + x->first_doc[i];
		llm_json_put_str(&b, fd, strlen(fd));
		llm_buf_adds(&b, "}\n");
		if (llm_writer_write(w, b.p, b.len))
			die_lib();
	}
	llm_buf_release(&b);
	if (llm_writer_close(w))
		die_lib();
}

/* The counts of the run, as an info message and in --stats. */
static void decon_summary(const deconctx *x, const struct dedup_cfg *c)
{
	uint32_t hit = 0;
	for (uint32_t i = 0; i < x->nitems; i++)
		hit += x->docs[i] > 0;
	llm_info("%u of %u benchmark items found in %llu documents", hit, x->nitems,
	         (unsigned long long)x->contaminated);
	char st[300];
	snprintf(st, sizeof st, "\"decontamination\": {\"items\": %u, \"items_found\": %u, "
	         "\"items_too_short\": %llu, \"ngram\": %u, \"distinct_ngrams\": %llu, "
	         "\"documents_contaminated\": %llu}", x->nitems, hit,
	         (unsigned long long)x->unmatchable, c->p.sh.ngram,
	         (unsigned long long)llm_decon_ngrams(x->dc), (unsigned long long)x->contaminated);
	llm_run_stats_extra(x->em.run, st);
}

static void deconctx_release(deconctx *x)
{
	llm_decon_free(x->dc);
	llm_buf_release(&x->names);
	llm_buf_release(&x->first_ids);
	llm_buf_release(&x->ids);
	llm_buf_release(&x->extra);
	free(x->name_at);
	free(x->docs);
	free(x->first_doc);
}

int dedup_run_decon(const struct dedup_cfg *c)
{
	deconctx x = { .dc = llm_decon_new(&c->p.sh, c->memory, c->tmpdir) };
	load_benchmarks(&x, c);
	dedup_emitter_open(&x.em, c);
	llm_dedup_doc r;
	llm_dedup_doc_init(&r);
	int failed = 0;
	for (int i = 0; i < dedup_input_count(c); i++)
		failed |= dedup_each_record(c, dedup_input_name(c, i), NULL, &r, decon_record, &x, x.em.run,
		                      NULL);
	failed = dedup_emitter_close(&x.em, failed);
	if (!failed && c->decon_report)
		decon_report(&x, c->decon_report);
	decon_summary(&x, c);
	llm_dedup_doc_release(&r);
	deconctx_release(&x);
	return tool_run_finish(x.em.run, failed);
}
