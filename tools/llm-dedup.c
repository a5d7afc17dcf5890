/*
 * llm-dedup — remove exact and near-duplicate documents (exact, MinHash-LSH, SimHash) or
 * repeated lines, alone or against a saved index, in one process or as file stages.
 *
 * Input: the JSONL document stream; output: the survivors in input order, duplicates to
 * --rejects with "reject_reason": "duplicate" and "dup_of" (the survivor's id).
 * A single run reads its input twice (files are reopened, standard input is spooled to a
 * temporary file): the first pass signs and clusters, the second writes, because whether a
 * document survives can depend on documents after it (see dedup.h).
 * Memory: the engine's (dedup.h): its tables up to --memory, then sorted runs on disk, plus
 * 8 bytes per document and one record; stated in llm-dedup(1).
 */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/io.h"
#include "dedup/decon.h"
#include "dedup/dedup.h"
#include "dedup/dedupdoc.h"
#include "dedup/rmlist.h"
#include "dedup/sigfile.h"
#include "dedup/substr.h"
#include "tool.h"

static const char usage[] =
	"usage: llm-dedup [options] [file ...]\n"
	"       llm-dedup sign [options] -o sigfile [file ...]\n"
	"       llm-dedup cluster [options] [--outdir dir] sigfile ...\n"
	"       llm-dedup apply [options] --removals rmfile [file ...]\n"
	"       llm-dedup --info [--clusters] index ...\n"
	"\n"
	"Remove duplicate documents from the JSONL document stream; the first document of each\n"
	"cluster survives. sign, cluster and apply split the same work into file stages.\n"
	"\n";

enum {
	OPT_MINHASH = TOOL_OPT_FIRST_PRIVATE, OPT_EXACT, OPT_SIMHASH, OPT_LINES, OPT_NORMALIZE,
	OPT_UNITS, OPT_NGRAM, OPT_NUM_PERM, OPT_BANDS, OPT_ROWS, OPT_THRESHOLD, OPT_HASH_BITS,
	OPT_PRESET, OPT_VERIFY, OPT_HAMMING, OPT_BLOCKS, OPT_LINE_MAX, OPT_SEED, OPT_ANNOTATE,
	OPT_INDEX, OPT_OUTDIR, OPT_REMOVALS, OPT_MEMORY, OPT_TMPDIR, OPT_DUP_COUNT, OPT_INFO,
	OPT_CLUSTERS, OPT_SUBSTRING, OPT_MIN_LENGTH, OPT_DECON, OPT_DECON_REPORT
};

static const struct tool_option cli_options[] = {
	TOOL_TEXT("Method:"),
	TOOL_OPTION("minhash", 0, NULL, OPT_MINHASH, "MinHash-LSH near duplicates (default)"),
	TOOL_OPTION("exact", 0, NULL, OPT_EXACT, "identical text after normalisation (XXH3-128)"),
	TOOL_OPTION("simhash", 0, NULL, OPT_SIMHASH, "SimHash near duplicates"),
	TOOL_OPTION("lines", 0, NULL, OPT_LINES,
	            "drop lines seen more than --line-max times in the corpus"),
	TOOL_OPTION("substring", 0, NULL, OPT_SUBSTRING,
	            "remove every span of --min-length bytes seen before in the\n"
	            "corpus (suffix arrays; Lee et al. 2022)"),
	TOOL_OPTION("normalize", 0, "L", OPT_NORMALIZE,
	            "none, space or full (default; lower-case, no punctuation,\n"
	            "digit runs as 0, white space collapsed)"),
	TOOL_OPTION("units", 0, "U", OPT_UNITS,
	            "auto (default: words; Chinese in the segmenter's words,\n"
	            "Japanese Kana in characters), word, char"),
	TOOL_OPTION("ngram", 0, "N", OPT_NGRAM, "shingle size in units (default 5)"),
	TOOL_OPTION("num-perm", 0, "N", OPT_NUM_PERM, "MinHash permutations (default 112)"),
	TOOL_TEXT("      --bands B, --rows R  LSH bands and rows per band (default 14 x 8)"),
	TOOL_OPTION_F("bands", 0, "B", OPT_BANDS, TOOL_OPTF_NOHELP, NULL),
	TOOL_OPTION_F("rows", 0, "R", OPT_ROWS, TOOL_OPTF_NOHELP, NULL),
	TOOL_OPTION("threshold", 0, "T", OPT_THRESHOLD,
	            "choose bands x rows for Jaccard T (printed)"),
	TOOL_OPTION("hash-bits", 0, "32|64", OPT_HASH_BITS,
	            "width of the MinHash values in band keys (default 32)"),
	TOOL_OPTION("preset", 0, "P", OPT_PRESET,
	            "datatrove (5-word, 14 x 8, 64-bit) or nemo (24-char, 20 x 13)"),
	TOOL_OPTION("verify", 0, NULL, OPT_VERIFY,
	            "join LSH candidates only at Jaccard >= T (default 0.8)"),
	TOOL_OPTION("hamming", 0, "K", OPT_HAMMING,
	            "SimHash: largest Hamming distance (default 3)"),
	TOOL_OPTION("blocks", 0, "N", OPT_BLOCKS,
	            "SimHash: blocks of the permuted tables (default 6)"),
	TOOL_OPTION("line-max", 0, "N", OPT_LINE_MAX,
	            "--lines: largest allowed count of a line (default 1)"),
	TOOL_OPTION("min-length", 0, "N", OPT_MIN_LENGTH,
	            "--substring: shortest repeated span removed, in bytes\n"
	            "(default 100)"),
	TOOL_OPTION("decontaminate", 0, "F", OPT_DECON,
	            "drop documents that share an n-gram with an item of the\n"
	            "benchmark file F (JSONL; a directory: its *.jsonl);\n"
	            "repeat for more files; --ngram defaults to 13 here"),
	TOOL_OPTION("decon-report", 0, "F", OPT_DECON_REPORT,
	            "write the benchmark items found, with their counts, to F"),
	TOOL_OPTION("seed", 0, "N", OPT_SEED, "hash seed (default 1)"),
	TOOL_TEXT("Run:"),
	TOOL_OPTION("annotate", 0, NULL, OPT_ANNOTATE,
	            "keep every document; add dup_cluster and dup_of"),
	TOOL_OPTION("dup-count", 0, NULL, OPT_DUP_COUNT,
	            "add dup_count (documents in its cluster) to every survivor"),
	TOOL_OPTION("index", 0, "FILE", OPT_INDEX,
	            "dedup against FILE too and save the updated index there;\n"
	            "a run with the inputs of its last run replaces that run"),
	TOOL_OPTION_F("clusters", 0, NULL, OPT_CLUSTERS, TOOL_OPTF_NOHELP, NULL),
	TOOL_OPTION("info", 0, NULL, OPT_INFO,
	            "describe each index file given; with --clusters, list its\n"
	            "clusters as JSONL (id, dup_count, run)"),
	TOOL_OPTION("memory", 0, "SIZE", OPT_MEMORY,
	            "bucket tables and sort buffers above SIZE go to sorted\n"
	            "files on disk (default: a quarter of physical memory)"),
	TOOL_OPTION("tmpdir", 0, "DIR", OPT_TMPDIR,
	            "temporary files there (default: $TMPDIR, else /tmp)"),
	TOOL_OPTION("outdir", 0, "DIR", OPT_OUTDIR,
	            "cluster: write NAME.rm for each NAME.sig into DIR"),
	TOOL_OPTION("removals", 0, "FILE", OPT_REMOVALS, "apply: the removal list of this shard"),
	TOOL_COMMON('o', "write to FILE (.zst, .gz, .xz, .bz2 compress)"),
	TOOL_COMMON(TOOL_OPT_REJECTS, NULL),
	TOOL_COMMON(TOOL_OPT_STATS, NULL),
	TOOL_COMMON(TOOL_OPT_STRICT, NULL),
	TOOL_COMMON(TOOL_OPT_MAX_LINE, NULL),
	TOOL_COMMON(TOOL_OPT_FIELD, NULL),
	TOOL_COMMON(TOOL_OPT_THREADS, "sign on N threads (default 1; 0 = all cores)"),
	TOOL_COMMON_END,
};

static const struct tool_cli cli = { usage, cli_options, "sign\0cluster\0apply\0" };

enum { MODE_RUN, MODE_SIGN, MODE_CLUSTER, MODE_APPLY, MODE_INFO };

struct cfg {
	struct tool_common co;
	int mode, lines, substring, annotate, dup_count, clusters;
	unsigned line_max;
	size_t min_len;
	llm_dedup_params p;
	const char *index, *outdir, *removals, *tmpdir, *decon_report;
	const char **decon;
	int ndecon;
	size_t memory;
	char **files;
	int nfiles;
};

/* ---- reading inputs ---- */

/* A temporary file for standard input's copy. */
static FILE *temp_file(const struct cfg *c)
{
	int fd = llm_tmpfd(c->tmpdir);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w+b");
	if (!f)
		die("%s", fd < 0 ? llm_last_error() : strerror(errno));
	return f;
}

/*
 * An engine with the run's memory budget, the saved index loaded when there is one. The
 * index knows a run by the real paths of its inputs (the documents, or for cluster the
 * signature files), so that a rerun replaces its own earlier run instead of finding every
 * document a duplicate of itself.
 */
static llm_dedup *new_engine(const struct cfg *c, const llm_dedup_params *p)
{
	llm_dedup *d;
	if (llm_dedup_new(&d, p))
		die_lib();
	llm_dedup_set_memory(d, c->memory, c->tmpdir);
	char **names = llm_calloc((size_t)c->nfiles + 1, sizeof *names);
	for (int i = 0; i < c->nfiles; i++)
		names[i] = strcmp(c->files[i], "-") ? realpath(c->files[i], NULL) : NULL;
	llm_dedup_set_run(d, (const char *const *)names, (size_t)c->nfiles, tool_cmdline());
	for (int i = 0; i < c->nfiles; i++)
		free(names[i]);
	free(names);
	if (c->index && access(c->index, F_OK) == 0) {
		if (llm_dedup_load_index(d, c->index))
			die_lib();
		if (llm_dedup_replaces(d))
			llm_info("%s: this run has the inputs of the index's run %u: it replaces that run",
			         c->index, llm_dedup_replaces(d));
	}
	return d;
}

typedef int (*record_fn)(void *ctx, llm_dedup_doc *r, const char *file, uint64_t lineno);

/*
 * Call fn for every record of path (parsed into r), or with pool, queue every line there to
 * be signed. With spool, every line is also copied there (the first pass over standard
 * input); lines over --max-line are kept as their first bytes, padded by one byte so that the
 * second pass sees them as too long again. Returns 0, or 1 when the input failed (reported).
 */
static int each_record(const struct cfg *c, const char *path, int fd, llm_dedup_doc *r,
                       record_fn fn, void *ctx, FILE *spool, llm_run *run, llm_signpool *pool)
{
	llm_reader *rd;
	int rc = fd >= 0 ? llm_reader_open_fd(&rd, fd, "<stdin>") : llm_reader_open(&rd, path);
	if (rc) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	llm_reader_set_max_line(rd, c->co.max_line);
	if (run)
		llm_run_begin_input(run, llm_reader_name(rd), llm_reader_size(rd));
	const char *name = llm_reader_name(rd);
	char *line;
	size_t len;
	int failed = 0;
	while ((rc = llm_reader_line(rd, &line, &len)) == LLM_OK || rc == LLM_ETOOLONG) {
		if (spool) {
			size_t keep = rc == LLM_ETOOLONG ? strlen(line) : len; /* the head (io.h) */
			if (fwrite(line, 1, keep, spool) != keep ||
			    (rc == LLM_ETOOLONG && fputc('x', spool) == EOF) || fputc('\n', spool) == EOF)
				die("temporary spool file: %s", strerror(errno));
		}
		uint64_t lineno = llm_reader_lineno(rd);
		if (pool) {
			llm_signpool_add(pool, rc, line, len, name, lineno);
		} else {
			llm_dedup_doc_parse(r, c->co.field, c->co.max_line, rc, line, len, name, lineno);
			if (fn(ctx, r, name, lineno)) {
				failed = 1;
				break;
			}
		}
		if (run)
			llm_run_progress(run, llm_reader_raw_bytes(rd));
	}
	if (rc != LLM_EOF && !failed) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	llm_reader_free(rd);
	return failed;
}

/* Read every input again for the second pass; standard input comes back from its spool. */
static int second_pass(const struct cfg *c, int nin, FILE *spool, llm_dedup_doc *r, record_fn fn,
                       void *ctx, llm_run *run)
{
	int failed = 0;
	for (int i = 0; i < nin; i++) {
		const char *f = c->nfiles ? c->files[i] : "-";
		int fd = -1;
		if (!strcmp(f, "-")) {
			if (fflush(spool) || fseek(spool, 0, SEEK_SET))
				die("temporary spool file: %s", strerror(errno));
			fd = fileno(spool);
		}
		failed |= each_record(c, f, fd, r, fn, ctx, NULL, run, NULL);
	}
	return failed;
}

/* ---- output of one record, shared by the single run and apply ---- */

typedef struct {
	const struct cfg *c;
	llm_writer *out;
	llm_run *run;
	llm_json_edit ed;
	llm_buf line;
	uint64_t dups;
} emitter;

/* --lines: a document whose every line was dropped; --substring: one that was all repeats */
#define KIND_ALL_LINES 3
#define KIND_SUBSTRING 4

/* Write or reject one record. kind: 0 no duplicates, LLM_RMLIST_SURVIVOR, LLM_RMLIST_DUPLICATE or
 * KIND_ALL_LINES; cid: the survivor's id; count: its cluster's size; text: a replacement text
 * or NULL. */
static void emit_with(emitter *e, llm_dedup_doc *r, const char *file, uint64_t lineno,
                      int kind, const char *cid, size_t cidlen, uint64_t count,
                      const llm_buf *text)
{
	const struct cfg *c = e->c;
	int dom = r->rec_ok ? llm_run_in_rec(e->run, r->len + 1, &r->rec)
	                    : llm_run_in(e->run, r->len + 1, NULL, 0);
	if (r->reason) {
		if (c->co.strict)
			die("%s:%llu: %s", file, (unsigned long long)lineno, r->msg);
		llm_warn_at(file, lineno, "%s", r->msg);
		if (llm_run_reject(e->run, dom, r->reason, r->line, r->len, r->rec_ok ? &r->rec : NULL,
		                   r->extra.len ? r->extra.p : NULL, file, lineno) != LLM_OK)
			die_lib();
		return;
	}
	if (kind == KIND_ALL_LINES || kind == KIND_SUBSTRING) {
		e->dups++;
		if (llm_run_reject(e->run, dom, kind == KIND_SUBSTRING ? "substring_dup" : "duplicate",
		                   r->line, r->len, &r->rec, NULL, file, lineno) != LLM_OK)
			die_lib();
		return;
	}
	if (kind == LLM_RMLIST_DUPLICATE && !c->annotate) {
		llm_buf_reset(&r->extra);
		llm_buf_adds(&r->extra, "\"dup_of\": ");
		llm_json_put_str(&r->extra, cid, cidlen);
		e->dups++;
		if (llm_run_reject(e->run, dom, "duplicate", r->line, r->len, &r->rec, r->extra.p, file,
		                   lineno) != LLM_OK)
			die_lib();
		return;
	}
	const char *out = r->line;
	size_t outlen = r->len;
	if (text)
		llm_json_edit_str(&e->ed, c->co.field, text->p ? text->p : "", text->len);
	if (kind && c->annotate) {
		llm_json_edit_str(&e->ed, "dup_cluster", cid, cidlen);
		if (kind == LLM_RMLIST_DUPLICATE) {
			llm_json_edit_str(&e->ed, "dup_of", cid, cidlen);
			e->dups++;
		}
	}
	if (c->dup_count && kind != LLM_RMLIST_DUPLICATE)
		llm_json_edit_i64(&e->ed, "dup_count", kind ? (int64_t)count : 1);
	if (e->ed.n) {
		llm_buf_reset(&e->line);
		llm_json_write(&r->rec, &e->ed, &e->line);
		out = e->line.p;
		outlen = e->line.len;
	}
	if (llm_writer_write(e->out, out, outlen) != LLM_OK || llm_writer_write(e->out, "\n", 1))
		die_lib();
	llm_run_out(e->run, dom, outlen + 1);
}

static void emit(emitter *e, llm_dedup_doc *r, const char *file, uint64_t lineno, int kind,
                 const char *cid, size_t cidlen, uint64_t count, const llm_buf *text)
{
	llm_json_edit_reset(&e->ed);
	emit_with(e, r, file, lineno, kind, cid, cidlen, count, text);
}

/* A document kept with the edits already in e->ed. */
static void emit_edited(emitter *e, llm_dedup_doc *r, const char *file, uint64_t lineno)
{
	emit_with(e, r, file, lineno, 0, NULL, 0, 0, NULL);
}

/* ---- single run, document methods ---- */

typedef struct {
	const struct cfg *c;
	llm_dedup *d;
	llm_sigfile_writer *sigw;      /* sign: the signature file */
	emitter *em;         /* second pass */
	uint64_t node, docs, bytes;
} runctx;

/* Pass 1: the signature of each record, in input order, to the engine or the file. */
static void signed_doc(void *ctx, const llm_dedup_doc *doc, const llm_dedup_sig *sig)
{
	runctx *x = ctx;
	if (sig) {
		x->docs++;
		x->bytes += doc->text.len;
	}
	if (!x->sigw)
		llm_dedup_add(x->d, sig);
	else if (llm_sigfile_add(x->sigw, sig, doc->id.p ? doc->id.p : "", doc->id.len))
		die_lib();
}

static llm_signpool *new_pool(const struct cfg *c, runctx *x)
{
	llm_signpool *pool;
	if (llm_signpool_new(&pool, &c->p, c->co.threads, c->co.field, c->co.max_line, signed_doc, x))
		die_lib();
	return pool;
}

/* The decision for node v after clustering; names the survivors that later records need. */
static int decide(llm_dedup *d, uint64_t v, const llm_dedup_doc *r, int want_all_ids,
                  const char **cid, size_t *cidlen)
{
	uint64_t root = llm_dedup_root(d, v);
	if (root == v) {
		if (!r->reason && (want_all_ids || llm_dedup_has_dups(d, v)))
			llm_dedup_set_id(d, v, r->id.p ? r->id.p : "", r->id.len);
		if (!llm_dedup_has_dups(d, v))
			return 0;
		*cid = llm_dedup_id(d, v, cidlen);
		return LLM_RMLIST_SURVIVOR;
	}
	*cid = llm_dedup_id(d, root, cidlen);
	if (!*cid)
		die("internal error: survivor %llu of %llu has no id", (unsigned long long)root,
		    (unsigned long long)v);
	return LLM_RMLIST_DUPLICATE;
}

static int pass2_record(void *ctx, llm_dedup_doc *r, const char *file, uint64_t lineno)
{
	runctx *x = ctx;
	const char *cid = NULL;
	size_t cidlen = 0;
	uint64_t v = x->node++;
	int kind = decide(x->d, v, r, x->c->index != NULL, &cid, &cidlen);
	emit(x->em, r, file, lineno, kind, cid, cidlen,
	     llm_dedup_dup_count(x->d, llm_dedup_root(x->d, v)), NULL);
	return 0;
}

static void stats_extra(llm_run *run, const struct cfg *c, llm_dedup *d, uint64_t docs)
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

static int run_docs(const struct cfg *c)
{
	runctx x = { .c = c, .d = new_engine(c, &c->p) };
	/* The run (and its clock) starts before the first pass, so the summary's rate is the
	 * rate of the whole job. */
	emitter em = { .c = c };
	llm_json_edit_init(&em.ed);
	if (llm_writer_open(&em.out, c->co.output))
		die_lib();
	em.run = tool_run_new(&c->co);
	llm_dedup_doc r;
	llm_dedup_doc_init(&r);
	llm_signpool *pool = new_pool(c, &x);
	FILE *spool = NULL;
	int failed = 0, nin = c->nfiles ? c->nfiles : 1;
	for (int i = 0; i < nin; i++) {
		const char *f = c->nfiles ? c->files[i] : "-";
		if (!strcmp(f, "-")) {
			if (spool)
				die("standard input given twice");
			spool = temp_file(c);
		}
		failed |= each_record(c, f, -1, NULL, NULL, NULL, strcmp(f, "-") ? NULL : spool, NULL,
		                      pool);
	}
	llm_signpool_free(pool);
	if (failed) /* an unreadable input: the clusters are incomplete, write nothing */
		die("no output written");
	if (llm_dedup_finish(x.d))
		die_lib();
	llm_info("%llu documents, %llu joined as duplicates; %.0f bytes per document in memory, "
	         "%u sorted runs on disk", (unsigned long long)x.docs,
	         (unsigned long long)llm_dedup_joins(x.d),
	         x.docs ? (double)llm_dedup_memory(x.d) / (double)x.docs : 0.0, llm_dedup_runs(x.d));

	stats_extra(em.run, c, x.d, x.docs);
	x.em = &em;
	x.node = llm_dedup_base(x.d);
	failed |= second_pass(c, nin, spool, &r, pass2_record, &x, em.run);
	if (spool)
		fclose(spool);
	if (!failed && c->index && llm_dedup_save_index(x.d, c->index)) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	if (llm_writer_close(em.out)) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	llm_run_count(em.run, "duplicates", em.dups);
	llm_json_edit_release(&em.ed);
	llm_buf_release(&em.line);
	llm_dedup_doc_release(&r);
	llm_dedup_free(x.d);
	return tool_run_finish(em.run, failed);
}

/* ---- single run, the filters that edit texts: --lines, --substring ---- */

/*
 * Pass 1 sees every record (standard input is spooled for pass 2), between() runs after it,
 * pass 2 writes through the emitter, finish() adds the filter's counts to the run summary.
 * The contexts start with the emitter, which the driver sets up.
 */
typedef struct {
	record_fn pass1, pass2;
	int (*between)(void *ctx);
	void (*finish)(void *ctx, llm_run *run);
} filter;

static int run_filter(const struct cfg *c, const filter *f, void *ctx)
{
	emitter *em = ctx;
	*em = (emitter){ .c = c };
	llm_json_edit_init(&em->ed);
	if (llm_writer_open(&em->out, c->co.output))
		die_lib();
	em->run = tool_run_new(&c->co);
	llm_dedup_doc r;
	llm_dedup_doc_init(&r);
	FILE *spool = NULL;
	int failed = 0, nin = c->nfiles ? c->nfiles : 1;
	for (int i = 0; i < nin; i++) {
		const char *name = c->nfiles ? c->files[i] : "-";
		if (!strcmp(name, "-")) {
			if (spool)
				die("standard input given twice");
			spool = temp_file(c);
		}
		failed |= each_record(c, name, -1, &r, f->pass1, ctx, strcmp(name, "-") ? NULL : spool,
		                      NULL, NULL);
	}
	if (failed || f->between(ctx))
		die("no output written");
	failed |= second_pass(c, nin, spool, &r, f->pass2, ctx, em->run);
	if (spool)
		fclose(spool);
	if (llm_writer_close(em->out)) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	f->finish(ctx, em->run);
	llm_json_edit_release(&em->ed);
	llm_buf_release(&em->line);
	llm_dedup_doc_release(&r);
	return tool_run_finish(em->run, failed);
}

/* Whether nothing but white space is left. */
static int blank(const llm_buf *t)
{
	for (size_t k = 0; k < t->len; k++)
		if (!strchr(" \t\r\n", t->p[k]))
			return 0;
	return 1;
}

typedef struct {
	emitter em;
	llm_linededup *ld;
	llm_buf text;
	uint64_t dropped;
} linectx;

static int lines_count(void *ctx, llm_dedup_doc *r, const char *file, uint64_t lineno)
{
	linectx *x = ctx;
	if (!r->reason)
		llm_linededup_count(x->ld, r->text.p ? r->text.p : "", r->text.len);
	return 0;
}

static int lines_filter(void *ctx, llm_dedup_doc *r, const char *file, uint64_t lineno)
{
	linectx *x = ctx;
	size_t dropped = 0;
	if (!r->reason) {
		llm_buf_reset(&x->text);
		dropped = llm_linededup_filter(x->ld, r->text.p ? r->text.p : "", r->text.len, &x->text);
		x->dropped += dropped;
	}
	if (!dropped)
		emit(&x->em, r, file, lineno, 0, NULL, 0, 0, NULL);
	else if (blank(&x->text))
		emit(&x->em, r, file, lineno, KIND_ALL_LINES, NULL, 0, 0, NULL);
	else
		emit(&x->em, r, file, lineno, 0, NULL, 0, 0, &x->text);
	return 0;
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

static int run_lines(const struct cfg *c)
{
	static const filter f = { lines_count, lines_filter, lines_between, lines_finish };
	linectx x = { .ld = llm_linededup_new(c->p.sh.norm, c->line_max, c->memory) };
	int rc = run_filter(c, &f, &x);
	llm_linededup_free(x.ld);
	llm_buf_release(&x.text);
	return rc;
}

/* --substring */

typedef struct {
	emitter em;
	llm_substr *ss;
	llm_buf text, spans;
	uint64_t docs_cut;
} substrctx;

static int substr_add(void *ctx, llm_dedup_doc *r, const char *file, uint64_t lineno)
{
	substrctx *x = ctx;
	if (!r->reason && llm_substr_add(x->ss, r->text.p, r->text.len))
		die_lib();
	return 0;
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

/* Without --annotate the spans leave the text; with it they are listed as "dup_spans"
 * (byte offsets into the text). A text left blank is rejected as substring_dup. */
static int substr_filter(void *ctx, llm_dedup_doc *r, const char *file, uint64_t lineno)
{
	substrctx *x = ctx;
	const uint64_t *sp = NULL;
	size_t n = 0;
	if (!r->reason && llm_substr_next(x->ss, r->text.p, r->text.len, &sp, &n))
		die("%s:%llu: %s", file, (unsigned long long)lineno, llm_last_error());
	if (!n) {
		emit(&x->em, r, file, lineno, 0, NULL, 0, 0, NULL);
		return 0;
	}
	x->docs_cut++;
	if (x->em.c->annotate) {
		llm_buf_reset(&x->spans);
		for (size_t i = 0; i < n; i++)
			llm_buf_addf(&x->spans, "%s[%llu, %llu]", i ? ", " : "[",
			             (unsigned long long)sp[2 * i], (unsigned long long)sp[2 * i + 1]);
		llm_buf_adds(&x->spans, "]");
		llm_json_edit_reset(&x->em.ed);
		llm_json_edit_raw(&x->em.ed, "dup_spans", x->spans.p, x->spans.len);
		emit_edited(&x->em, r, file, lineno);
		return 0;
	}
	llm_buf_reset(&x->text);
	uint64_t at = 0;
	for (size_t i = 0; i < n; i++) {
		llm_buf_add(&x->text, r->text.p + at, (size_t)(sp[2 * i] - at));
		at = sp[2 * i + 1];
	}
	llm_buf_add(&x->text, r->text.p + at, r->text.len - (size_t)at);
	if (blank(&x->text))
		emit(&x->em, r, file, lineno, KIND_SUBSTRING, NULL, 0, 0, NULL);
	else
		emit(&x->em, r, file, lineno, 0, NULL, 0, 0, &x->text);
	return 0;
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

static int run_substring(const struct cfg *c)
{
	static const filter f = { substr_add, substr_filter, substr_between, substr_finish };
	substrctx x = { .ss = llm_substr_new(c->min_len, c->memory, c->tmpdir) };
	int rc = run_filter(c, &f, &x);
	llm_substr_free(x.ss);
	llm_buf_release(&x.text);
	llm_buf_release(&x.spans);
	return rc;
}

/* ---- --decontaminate ---- */

/* The benchmark items (decon.h), their names for the report and how many documents each
 * was found in. */
typedef struct {
	emitter em;
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

/* Every benchmark file (a directory: its *.jsonl files, in name order). */
static void load_benchmarks(deconctx *x, const struct cfg *c)
{
	for (int i = 0; i < c->ndecon; i++) {
		glob_t g = { 0 };
		const char *path = c->decon[i];
		struct stat st;
		char **list = (char **)&path;
		size_t n = 1;
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			llm_buf pat = LLM_BUF_INIT;
			llm_buf_addf(&pat, "%s/*.jsonl", path);
			if (glob(pat.p, 0, NULL, &g) != 0)
				die("%s: no .jsonl files in this directory", path);
			list = g.gl_pathv;
			n = g.gl_pathc;
			llm_buf_release(&pat);
		}
		for (size_t k = 0; k < n; k++) {
			llm_reader *rd;
			if (llm_reader_open(&rd, list[k]))
				die_lib();
			llm_json_rec rec;
			llm_json_rec_init(&rec);
			char *line;
			size_t len;
			int rc;
			while ((rc = llm_reader_line(rd, &line, &len)) == LLM_OK) {
				if (llm_json_parse(&rec, line, len))
					die("%s:%llu: bad JSON in a benchmark file: %s", list[k],
					    (unsigned long long)llm_reader_lineno(rd), rec.err_msg);
				add_item(x, list[k], llm_reader_lineno(rd), &rec, c->co.field);
			}
			if (rc != LLM_EOF)
				die_lib();
			llm_json_rec_release(&rec);
			llm_reader_free(rd);
		}
		globfree(&g);
	}
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

static int decon_record(void *ctx, llm_dedup_doc *r, const char *file, uint64_t lineno)
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
		emit(&x->em, r, file, lineno, 0, NULL, 0, 0, NULL);
		return 0;
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
		emit_edited(&x->em, r, file, lineno);
		return 0;
	}
	int dom = r->rec_ok ? llm_run_in_rec(x->em.run, r->len + 1, &r->rec)
	                    : llm_run_in(x->em.run, r->len + 1, NULL, 0);
	llm_buf_reset(&x->extra);
	llm_buf_adds(&x->extra, "\"decon_items\": ");
	llm_buf_add(&x->extra, x->ids.p, x->ids.len);
	if (llm_run_reject(x->em.run, dom, "contaminated", r->line, r->len, &r->rec, x->extra.p, file,
	                   lineno) != LLM_OK)
		die_lib();
	return 0;
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

static int run_decon(const struct cfg *c)
{
	deconctx x = { .dc = llm_decon_new(&c->p.sh, c->memory, c->tmpdir) };
	load_benchmarks(&x, c);
	emitter *em = &x.em;
	*em = (emitter){ .c = c };
	llm_json_edit_init(&em->ed);
	if (llm_writer_open(&em->out, c->co.output))
		die_lib();
	em->run = tool_run_new(&c->co);
	llm_dedup_doc r;
	llm_dedup_doc_init(&r);
	int failed = 0, nin = c->nfiles ? c->nfiles : 1;
	for (int i = 0; i < nin; i++)
		failed |= each_record(c, c->nfiles ? c->files[i] : "-", -1, &r, decon_record, &x, NULL,
		                      em->run, NULL);
	if (failed) {
		llm_writer_abort(em->out);
	} else if (llm_writer_close(em->out)) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	uint32_t hit = 0;
	for (uint32_t i = 0; i < x.nitems; i++)
		hit += x.docs[i] > 0;
	if (!failed && c->decon_report)
		decon_report(&x, c->decon_report);
	llm_info("%u of %u benchmark items found in %llu documents", hit, x.nitems,
	         (unsigned long long)x.contaminated);
	char st[300];
	snprintf(st, sizeof st, "\"decontamination\": {\"items\": %u, \"items_found\": %u, "
	         "\"items_too_short\": %llu, \"ngram\": %u, \"distinct_ngrams\": %llu, "
	         "\"documents_contaminated\": %llu}", x.nitems, hit,
	         (unsigned long long)x.unmatchable, c->p.sh.ngram,
	         (unsigned long long)llm_decon_ngrams(x.dc), (unsigned long long)x.contaminated);
	llm_run_stats_extra(em->run, st);
	llm_json_edit_release(&em->ed);
	llm_buf_release(&em->line);
	llm_dedup_doc_release(&r);
	llm_decon_free(x.dc);
	llm_buf_release(&x.names);
	llm_buf_release(&x.first_ids);
	llm_buf_release(&x.ids);
	llm_buf_release(&x.extra);
	free(x.name_at);
	free(x.docs);
	free(x.first_doc);
	return tool_run_finish(em->run, failed);
}

/* ---- stages ---- */

static int run_sign(const struct cfg *c)
{
	if (!c->co.output)
		usage_error("sign needs -o SIGFILE");
	runctx x = { .c = c };
	if (llm_sigfile_create(&x.sigw, c->co.output, &c->p))
		die_lib();
	llm_signpool *pool = new_pool(c, &x);
	int failed = 0, nin = c->nfiles ? c->nfiles : 1;
	for (int i = 0; i < nin && !failed; i++)
		failed |= each_record(c, c->nfiles ? c->files[i] : "-", -1, NULL, NULL, NULL, NULL, NULL,
		                      pool);
	llm_signpool_free(pool);
	if (failed) {
		llm_sigfile_abort(x.sigw);
	} else if (llm_sigfile_close(x.sigw)) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	if (!failed)
		llm_info("%llu documents signed (%.1f MB of text)", (unsigned long long)x.docs,
		         (double)x.bytes / 1e6);
	return failed;
}

static int same_params(const llm_dedup_params *a, const llm_dedup_params *b)
{
	llm_buf x = LLM_BUF_INIT, y = LLM_BUF_INIT;
	llm_dedup_params_describe(a, &x);
	llm_dedup_params_describe(b, &y);
	int same = a->method == b->method && !strcmp(x.p, y.p);
	llm_buf_release(&x);
	llm_buf_release(&y);
	return same;
}

/* NAME.sig or NAME.sig.zst -> [DIR/]NAME.rm */
static char *rm_name(const char *sig, const char *outdir)
{
	llm_buf b = LLM_BUF_INIT;
	const char *base = strrchr(sig, '/');
	if (outdir)
		llm_buf_addf(&b, "%s/%s", outdir, base ? base + 1 : sig);
	else
		llm_buf_adds(&b, sig);
	if (b.len > 4 && !strcmp(b.p + b.len - 4, ".zst"))
		llm_buf_truncate(&b, b.len - 4);
	if (b.len > 4 && !strcmp(b.p + b.len - 4, ".sig"))
		llm_buf_truncate(&b, b.len - 4);
	llm_buf_adds(&b, ".rm");
	return llm_buf_detach(&b, NULL);
}

static int run_cluster(const struct cfg *c)
{
	if (!c->nfiles)
		usage_error("cluster needs signature files");
	llm_dedup_params p;
	llm_dedup *d = NULL;
	uint64_t *sums = llm_calloc(c->nfiles, sizeof *sums), docs = 0;
	llm_dedup_sig sig;
	const char *id;
	size_t idlen;
	int rc;
	/* Pass 1: every signature, in the order of the files, into one engine. */
	for (int i = 0; i < c->nfiles; i++) {
		llm_sigfile_reader *sr;
		if (llm_sigfile_open(&sr, c->files[i], &p))
			die_lib();
		if (!d) {
			d = new_engine(c, &p);
			llm_buf desc = LLM_BUF_INIT;
			llm_dedup_params_describe(&p, &desc);
			llm_info("%s", desc.p);
			llm_buf_release(&desc);
		} else {
			llm_dedup_params q;
			llm_dedup_params_default(&q, LLM_DEDUP_MINHASH);
			q = p;
			llm_sigfile_free(sr);
			if (llm_sigfile_open(&sr, c->files[0], &q) || (llm_sigfile_free(sr), 0) ||
			    llm_sigfile_open(&sr, c->files[i], &p))
				die_lib();
			if (!same_params(&p, &q))
				die("%s: signed with other parameters than %s", c->files[i], c->files[0]);
		}
		while ((rc = llm_sigfile_next(sr, &sig, &id, &idlen)) == LLM_OK) {
			llm_dedup_add(d, &sig);
			docs++;
		}
		if (rc != LLM_EOF)
			die_lib();
		sums[i] = llm_sigfile_checksum(sr);
		llm_sigfile_free(sr);
	}
	if (llm_dedup_finish(d))
		die_lib();
	/* Pass 2: name the survivors and write each shard's removal list. */
	uint64_t v = llm_dedup_base(d), dups = 0;
	llm_dedup_doc r;
	llm_dedup_doc_init(&r);
	for (int i = 0; i < c->nfiles; i++) {
		llm_sigfile_reader *sr;
		if (llm_sigfile_open(&sr, c->files[i], &p))
			die_lib();
		llm_rmlist_writer w;
		llm_rmlist_writer_init(&w);
		uint64_t k = 0;
		while ((rc = llm_sigfile_next(sr, &sig, &id, &idlen)) == LLM_OK) {
			const char *cid = NULL;
			size_t cidlen = 0;
			llm_buf_reset(&r.id);
			llm_buf_add(&r.id, id, idlen);
			int kind = decide(d, v, &r, c->index != NULL, &cid, &cidlen);
			if (kind)
				llm_rmlist_add(&w, k, kind, llm_dedup_dup_count(d, llm_dedup_root(d, v)), cid,
				               cidlen);
			v++;
			dups += kind == LLM_RMLIST_DUPLICATE;
			k++;
		}
		if (rc != LLM_EOF || llm_sigfile_checksum(sr) != sums[i])
			die("%s: %s", c->files[i], rc != LLM_EOF ? llm_last_error() : "changed while clustering");
		char *out = rm_name(c->files[i], c->outdir);
		if (llm_rmlist_write(&w, out, k, sums[i]))
			die_lib();
		free(out);
		llm_rmlist_writer_release(&w);
		llm_sigfile_free(sr);
	}
	if (c->index && llm_dedup_save_index(d, c->index))
		die_lib();
	llm_info("%llu documents in %d shards: %llu duplicates; %.0f bytes per document in memory",
	         (unsigned long long)docs, c->nfiles, (unsigned long long)dups,
	         docs ? (double)llm_dedup_memory(d) / (double)docs : 0.0);
	llm_dedup_doc_release(&r);
	free(sums);
	llm_dedup_free(d);
	return 0;
}

typedef struct {
	emitter *em;
	llm_rmlist_reader l;
	llm_rmlist_entry e;
	int have;
	uint64_t k;
} applyctx;

static int apply_record(void *ctx, llm_dedup_doc *r, const char *file, uint64_t lineno)
{
	applyctx *x = ctx;
	int kind = 0;
	if (x->have && x->e.rec == x->k) {
		kind = x->e.kind;
		emit(x->em, r, file, lineno, kind, x->e.id, x->e.idlen, x->e.count, NULL);
		int rc = llm_rmlist_next(&x->l, &x->e);
		if (rc != LLM_OK && rc != LLM_EOF)
			die_lib();
		x->have = rc == LLM_OK;
	} else {
		emit(x->em, r, file, lineno, 0, NULL, 0, 0, NULL);
	}
	x->k++;
	return 0;
}

static int run_apply(const struct cfg *c)
{
	if (!c->removals)
		usage_error("apply needs --removals FILE");
	applyctx x = { 0 };
	if (llm_rmlist_load(&x.l, c->removals))
		die_lib();
	int rc = llm_rmlist_next(&x.l, &x.e);
	if (rc != LLM_OK && rc != LLM_EOF)
		die_lib();
	x.have = rc == LLM_OK;
	emitter em = { .c = c };
	llm_json_edit_init(&em.ed);
	if (llm_writer_open(&em.out, c->co.output))
		die_lib();
	em.run = tool_run_new(&c->co);
	x.em = &em;
	llm_dedup_doc r;
	llm_dedup_doc_init(&r);
	int failed = 0, nin = c->nfiles ? c->nfiles : 1;
	for (int i = 0; i < nin && !failed; i++)
		failed |= each_record(c, c->nfiles ? c->files[i] : "-", -1, &r, apply_record, &x, NULL,
		                      em.run, NULL);
	if (!failed && x.k != x.l.nrecords) {
		llm_error("%s: removal list is for %llu records, input has %llu", c->removals,
		          (unsigned long long)x.l.nrecords, (unsigned long long)x.k);
		failed = 1;
	}
	if (failed) {
		llm_writer_abort(em.out);
	} else if (llm_writer_close(em.out)) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	llm_run_count(em.run, "duplicates", em.dups);
	llm_rmlist_reader_release(&x.l);
	llm_json_edit_release(&em.ed);
	llm_buf_release(&em.line);
	llm_dedup_doc_release(&r);
	return tool_run_finish(em.run, failed);
}

/* ---- --info ---- */

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

static int run_info(const struct cfg *c)
{
	if (!c->nfiles)
		usage_error("--info needs index files");
	llm_writer *w;
	if (llm_writer_open(&w, c->co.output))
		die_lib();
	int failed = 0;
	for (int i = 0; i < c->nfiles; i++) {
		const char *f = c->files[i];
		if (c->clusters) {
			if (llm_dedup_index_clusters(f, cluster_line, w)) {
				llm_error("%s", llm_last_error());
				failed = 1;
			}
			continue;
		}
		llm_dedup_index_info in;
		llm_buf runs = LLM_BUF_INIT, b = LLM_BUF_INIT;
		if (llm_dedup_index_info_read(f, &in, &runs)) {
			llm_error("%s", llm_last_error());
			failed = 1;
			continue;
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
	}
	if (llm_writer_close(w)) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	return failed;
}

/* ---- options ---- */

int main(int argc, char **argv)
{
	tool_init("llm-dedup");
	tool_save_cmdline(argc, argv);
	struct cfg c = { .line_max = 1, .min_len = 100 };
	long pages = sysconf(_SC_PHYS_PAGES), pagesize = sysconf(_SC_PAGESIZE);
	c.memory = pages > 0 && pagesize > 0 ? (size_t)pages / 4 * (size_t)pagesize : (size_t)1 << 30;
	tool_common_init(&c.co, &cli);
	if (argc > 1) {
		static const char *const sub[] = { "sign", "cluster", "apply" };
		for (int i = 0; i < 3; i++)
			if (!strcmp(argv[1], sub[i])) {
				c.mode = MODE_SIGN + i;
				argv++;
				argc--;
				break;
			}
	}
	int method = LLM_DEDUP_MINHASH, preset = -1, verify = 0, info = 0;
	long long ngram = -1, num_perm = -1, bands = -1, rows = -1, hash_bits = -1, units = -1;
	long long hamming = -1, blocks = -1, norm = -1;
	double threshold = -1;
	uint64_t seed = 1;
	int ch;
	while ((ch = tool_getopt(&c.co, argc, argv)) != -1) {
		switch (ch) {
		case OPT_MINHASH: method = LLM_DEDUP_MINHASH; c.lines = c.substring = 0; break;
		case OPT_EXACT: method = LLM_DEDUP_EXACT; c.lines = c.substring = 0; break;
		case OPT_SIMHASH: method = LLM_DEDUP_SIMHASH; c.lines = c.substring = 0; break;
		case OPT_LINES: c.lines = 1; c.substring = 0; break;
		case OPT_SUBSTRING: c.substring = 1; c.lines = 0; break;
		case OPT_DECON:
			c.decon = llm_realloc(c.decon, (size_t)(c.ndecon + 1) * sizeof *c.decon);
			c.decon[c.ndecon++] = optarg;
			break;
		case OPT_DECON_REPORT: c.decon_report = optarg; break;
		case OPT_MIN_LENGTH: c.min_len = (size_t)tool_int("--min-length", optarg, 1, 1 << 20); break;
		case OPT_NORMALIZE: norm = tool_choice("--normalize", optarg, "none\0space\0full\0"); break;
		case OPT_UNITS: units = tool_choice("--units", optarg, "auto\0word\0char\0"); break;
		case OPT_NGRAM: ngram = tool_int("--ngram", optarg, 1, 1 << 16); break;
		case OPT_NUM_PERM: num_perm = tool_int("--num-perm", optarg, 1, LLM_MINHASH_MAX_PERM); break;
		case OPT_BANDS: bands = tool_int("--bands", optarg, 1, LLM_MINHASH_MAX_PERM); break;
		case OPT_ROWS: rows = tool_int("--rows", optarg, 1, LLM_MINHASH_MAX_PERM); break;
		case OPT_THRESHOLD: threshold = tool_double("--threshold", optarg, 0.01, 1.0); break;
		case OPT_HASH_BITS:
			hash_bits = tool_choice("--hash-bits", optarg, "32\0" "64\0") ? 64 : 32;
			break;
		case OPT_PRESET: preset = tool_choice("--preset", optarg, "datatrove\0nemo\0"); break;
		case OPT_VERIFY: verify = 1; break;
		case OPT_HAMMING: hamming = tool_int("--hamming", optarg, 0, 63); break;
		case OPT_BLOCKS: blocks = tool_int("--blocks", optarg, 1, 64); break;
		case OPT_LINE_MAX: c.line_max = (unsigned)tool_int("--line-max", optarg, 1, 254); break;
		case OPT_SEED: seed = (uint64_t)tool_int("--seed", optarg, 0, INT64_MAX); break;
		case OPT_ANNOTATE: c.annotate = 1; break;
		case OPT_INDEX: c.index = optarg; break;
		case OPT_OUTDIR: c.outdir = optarg; break;
		case OPT_REMOVALS: c.removals = optarg; break;
		case OPT_MEMORY: c.memory = (size_t)tool_size("--memory", optarg); break;
		case OPT_TMPDIR: c.tmpdir = optarg; break;
		case OPT_DUP_COUNT: c.dup_count = 1; break;
		case OPT_INFO: info = 1; break;
		case OPT_CLUSTERS: c.clusters = 1; break;
		default: tool_bad_option();
		}
	}
	c.files = argv + optind;
	c.nfiles = argc - optind;
	if (info && c.mode != MODE_RUN)
		usage_error("--info is a mode of its own");
	if (c.clusters && !info)
		usage_error("--clusters belongs to --info");
	if (info)
		return run_info(&c);

	/* Presets first, explicit options over them, then bands x rows from the threshold. */
	llm_dedup_params *p = &c.p;
	llm_dedup_params_default(p, (llm_dedup_method)method);
	if (preset == 0) { /* datatrove MinhashConfig defaults */
		p->sh.units = LLM_UNITS_WORD;
		p->sh.ngram = 5, p->num_perm = 112, p->bands = 14, p->rows = 8, p->hash_bits = 64;
	} else if (preset == 1) { /* NeMo Curator fuzzy dedup defaults */
		p->sh.units = LLM_UNITS_CHAR;
		p->sh.ngram = 24, p->num_perm = 260, p->bands = 20, p->rows = 13, p->hash_bits = 32;
	}
	if (norm >= 0) p->sh.norm = (llm_norm_level)norm;
	if (units >= 0) p->sh.units = (llm_units)units;
	if (ngram > 0) p->sh.ngram = (unsigned)ngram;
	if (hash_bits > 0) p->hash_bits = (unsigned)hash_bits;
	if (hamming >= 0) p->hamming = (unsigned)hamming;
	if (blocks > 0) p->blocks = (unsigned)blocks;
	p->sh.seed = seed;
	if (num_perm > 0) {
		p->num_perm = (unsigned)num_perm;
		if (bands < 0 && rows < 0 && threshold < 0 && preset < 0)
			threshold = 0.8; /* a new permutation count needs a new band layout */
	}
	if (threshold > 0 && (bands > 0 || rows > 0))
		usage_error("--threshold chooses --bands and --rows; give one or the other");
	if (threshold > 0)
		llm_lsh_optimal(threshold, p->num_perm, 0.5, 0.5, &p->bands, &p->rows);
	if (bands > 0) p->bands = (unsigned)bands;
	if (rows > 0) p->rows = (unsigned)rows;
	if (bands > 0 && rows < 0) p->rows = p->num_perm / p->bands ? p->num_perm / p->bands : 1;
	if (rows > 0 && bands < 0) p->bands = p->num_perm / p->rows ? p->num_perm / p->rows : 1;
	if (verify) {
		if (method != LLM_DEDUP_MINHASH)
			usage_error("--verify applies to --minhash only");
		if (c.index)
			usage_error("--verify cannot be combined with --index (an index keeps no shingle sets)");
		p->verify = threshold > 0 ? threshold : 0.8;
	}
	if (llm_dedup_params_check(p))
		usage_error("%s", llm_last_error());
	if (c.lines && (c.mode != MODE_RUN || c.index || c.annotate || c.dup_count))
		usage_error("--lines runs in one process, without --index, --annotate or --dup-count");
	if (c.ndecon && (c.mode != MODE_RUN || c.index || c.dup_count || c.lines || c.substring))
		usage_error("--decontaminate runs in one process, without a dedup method, --index "
		            "or --dup-count");
	if (c.decon_report && !c.ndecon)
		usage_error("--decon-report belongs to --decontaminate");
	if (c.ndecon && ngram < 0)
		p->sh.ngram = 13; /* GPT-3's 13-grams */
	if (c.ndecon && p->sh.units == LLM_UNITS_AUTO)
		p->sh.units = LLM_UNITS_AUTO_CHAR; /* 13 characters of Chinese, not 13 words */
	if (c.substring && (c.mode != MODE_RUN || c.index || c.dup_count))
		usage_error("--substring runs in one process, without --index or --dup-count");
	if (c.dup_count && (c.mode == MODE_SIGN || c.mode == MODE_CLUSTER))
		usage_error("--dup-count belongs to the single run and apply");
	if (c.mode == MODE_APPLY && c.index)
		usage_error("apply takes no --index (cluster uses it)");
	if (c.outdir && c.mode != MODE_CLUSTER)
		usage_error("--outdir belongs to cluster");
	if (c.removals && c.mode != MODE_APPLY)
		usage_error("--removals belongs to apply");
	if (!c.lines && !c.substring && !c.ndecon && (c.mode == MODE_RUN || c.mode == MODE_SIGN)) {
		llm_buf desc = LLM_BUF_INIT;
		llm_dedup_params_describe(p, &desc);
		llm_info("%s", desc.p);
		llm_buf_release(&desc);
	}
	switch (c.mode) {
	case MODE_SIGN: return run_sign(&c);
	case MODE_CLUSTER: return run_cluster(&c);
	case MODE_APPLY: return run_apply(&c);
	}
	if (c.ndecon) {
		int rc = run_decon(&c);
		free(c.decon);
		return rc;
	}
	return c.substring ? run_substring(&c) : c.lines ? run_lines(&c) : run_docs(&c);
}
