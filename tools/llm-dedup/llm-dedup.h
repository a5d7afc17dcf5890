/*
 * llm-dedup.h — what tools/llm-dedup.c (options, main) and its subcommands in this folder
 * share: the run's configuration, the input loop over the documents, the writer of one
 * record, and one entry point per subcommand or method.
 *
 * Each entry point runs to the end and returns the exit status (0, or 1 when an input or an
 * output failed); it dies (tool.h) on usage errors and on errors of the library that end the
 * run. Everything here runs on the main thread.
 */
#ifndef LLM_DEDUP_TOOL_H
#define LLM_DEDUP_TOOL_H

#include <stdint.h>
#include <stdio.h>

#include "../tool.h"
#include "core/io.h"
#include "dedup/dedup.h"
#include "dedup/dedupdoc.h"
#include "dedup/sigfile.h"

/* The command line, resolved. */
struct dedup_cfg {
	struct tool_common co;
	int lines, substring, annotate, dup_count, clusters;
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

/* ---- the inputs (input.c) ---- */

/* Called for every record of the input, parsed into r. */
typedef void (*dedup_record_fn)(void *ctx, llm_dedup_doc *r, const char *file, uint64_t lineno);

/* Standard input's copy for a single run's second pass (input.c). */
typedef struct dedup_spool dedup_spool;
void dedup_spool_free(dedup_spool *sp);

/*
 * Call fn for every record of path, read by tool_lines, or with pool, queue every line there
 * to be signed. With sp, path is standard input: the first pass copies every line to sp, the
 * second reads them back from it, and a line over --max-line is rejected as too long in both.
 * With run, the input is the run's next one. Returns 0, or 1 when the input failed (reported).
 */
int dedup_each_record(const struct dedup_cfg *c, const char *path, dedup_spool *sp,
                      llm_dedup_doc *r, dedup_record_fn fn, void *ctx, llm_run *run,
                      llm_signpool *pool);
/* The first pass over every input: standard input ("-", or no file) is copied to *sp, a
 * temporary file (dies when it is named twice). Returns 1 when an input failed. */
int dedup_first_pass(const struct dedup_cfg *c, llm_dedup_doc *r, dedup_record_fn fn, void *ctx,
                     dedup_spool **sp, llm_signpool *pool);
/* Read every input again for the second pass; standard input comes back from sp. */
int dedup_second_pass(const struct dedup_cfg *c, dedup_spool *sp, llm_dedup_doc *r,
                      dedup_record_fn fn, void *ctx, llm_run *run);
/* The inputs as the loops see them: the files, or standard input alone. */
static inline int dedup_input_count(const struct dedup_cfg *c) { return c->nfiles ? c->nfiles : 1; }
static inline const char *dedup_input_name(const struct dedup_cfg *c, int i)
{
	return c->nfiles ? c->files[i] : "-";
}

/*
 * An engine with the run's memory budget and p, the saved index (--index) loaded when there
 * is one. The index knows a run by the real paths of its inputs (the documents, or for
 * cluster the signature files), so that a rerun replaces its own earlier run instead of
 * finding every document a duplicate of itself.
 */
llm_dedup *dedup_new_engine(const struct dedup_cfg *c, const llm_dedup_params *p);
/* The parameters' one-line description, as an info message. */
void dedup_describe_params(const llm_dedup_params *p);

/* ---- the output of one record (emit.c) ---- */

typedef struct {
	const struct dedup_cfg *c;
	llm_writer *out;
	llm_run *run;
	llm_json_edit ed;
	llm_buf line;
	uint64_t dups;
} dedup_emitter;

/* The output (-o) and the run (--rejects, --stats) opened; dies when either fails. */
void dedup_emitter_open(dedup_emitter *e, const struct dedup_cfg *c);
/* Close the output (abort it when failed) and free; returns failed, or 1 when closing the
 * output failed (reported). The run stays open for the caller to count and finish. */
int dedup_emitter_close(dedup_emitter *e, int failed);

/* What becomes of a record, beyond 0 (kept as it is), LLM_RMLIST_SURVIVOR and
 * LLM_RMLIST_DUPLICATE (rmlist.h). */
enum {
	DEDUP_KIND_ALL_LINES = 3,  /* --lines: a document whose every line was dropped */
	DEDUP_KIND_SUBSTRING = 4   /* --substring: one that was all repeats */
};

/* Write or reject one record. kind: 0 or a KIND_* or LLM_RMLIST_* value; cid: the survivor's
 * id; count: its cluster's size; text: a replacement text or NULL. */
void dedup_emit(dedup_emitter *e, llm_dedup_doc *r, const char *file, uint64_t lineno, int kind,
          const char *cid, size_t cidlen, uint64_t count, const llm_buf *text);
/* A document kept with the edits already in e->ed. */
void dedup_emit_edited(dedup_emitter *e, llm_dedup_doc *r, const char *file, uint64_t lineno);
/* Reject a document that the library found (reason "contaminated", ...) with extra JSON. */
void dedup_emit_reject(dedup_emitter *e, llm_dedup_doc *r, const char *file, uint64_t lineno,
                 const char *reason, const char *extra);

/* Whether nothing but white space is left of a text. */
int dedup_blank(const llm_buf *t);

/*
 * The filters that edit texts (--lines, --substring), run by dedup_run_filter: pass 1 sees every
 * record (standard input is spooled for pass 2), between() runs after it (nonzero: fail),
 * pass 2 writes through the emitter, finish() adds the filter's counts to the run summary.
 * The filter's context starts with the emitter, which dedup_run_filter sets up.
 */
typedef struct {
	dedup_record_fn pass1, pass2;
	int (*between)(void *ctx);
	void (*finish)(void *ctx, llm_run *run);
} dedup_filter;
int dedup_run_filter(const struct dedup_cfg *c, const dedup_filter *f, void *ctx);

/* ---- the subcommands and methods ---- */

/* docs.c: the single run of --exact, --minhash, --simhash (with --index). */
int dedup_run_docs(const struct dedup_cfg *c);
/* lines.c: --lines. */
int dedup_run_lines(const struct dedup_cfg *c);
/* substring.c: --substring. */
int dedup_run_substring(const struct dedup_cfg *c);
/* decontaminate.c: --decontaminate. */
int dedup_run_decon(const struct dedup_cfg *c);
/* sign.c: sign, and the signing pool of the single run, which hands each signature to
 * llm_dedup_add (sigw NULL) or to the signature file. */
typedef struct {
	const struct dedup_cfg *c;
	llm_dedup *d;
	llm_sigfile_writer *sigw;  /* sign: the signature file */
	dedup_emitter *em;               /* the single run's second pass */
	uint64_t node, docs, bytes;
} dedup_runctx;
llm_signpool *dedup_new_pool(const struct dedup_cfg *c, dedup_runctx *x);
int dedup_run_sign(const struct dedup_cfg *c);
/* cluster.c */
int dedup_run_cluster(const struct dedup_cfg *c);
/* apply.c */
int dedup_run_apply(const struct dedup_cfg *c);
/* info.c: --info */
int dedup_run_info(const struct dedup_cfg *c);

#endif
