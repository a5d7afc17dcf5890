/*
 * input.c — llm-dedup's inputs: the loop over the records of a file, the two passes of a
 * single run (standard input spooled to a temporary file in between), and the engine that
 * knows the run by its inputs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llm-dedup.h"

/*
 * Standard input's copy for the second pass. A line over --max-line is copied as its head
 * alone, and its line number and length are kept beside it: the second pass then rejects it
 * as too long, with its real length, whatever --max-line is.
 */
struct dedup_spool {
	FILE *f;
	struct long_line {
		uint64_t lineno;
		size_t len;
	} *longs;
	size_t nlong, cap;
	size_t next;     /* in the second pass: the first of longs not met yet */
	bool replaying;  /* the second pass has begun */
};

static dedup_spool *spool_new(const struct dedup_cfg *c)
{
	int fd = llm_tmpfd(c->tmpdir);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w+b");
	if (!f)
		die("%s", fd < 0 ? llm_last_error() : strerror(errno));
	dedup_spool *sp = llm_calloc(1, sizeof *sp);
	sp->f = f;
	return sp;
}

void dedup_spool_free(dedup_spool *sp)
{
	if (!sp)
		return;
	fclose(sp->f);
	free(sp->longs);
	free(sp);
}

llm_dedup *dedup_new_engine(const struct dedup_cfg *c, const llm_dedup_params *p)
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

void dedup_describe_params(const llm_dedup_params *p)
{
	llm_buf desc = LLM_BUF_INIT;
	llm_dedup_params_describe(p, &desc);
	llm_info("%s", desc.p);
	llm_buf_release(&desc);
}

/* A line of standard input into its spool. */
static void spool_line(dedup_spool *sp, const tool_lines *in)
{
	if (fwrite(in->line, 1, in->len, sp->f) != in->len || fputc('\n', sp->f) == EOF)
		die("temporary spool file: %s", strerror(errno));
	if (!in->too_long)
		return;
	if (sp->nlong == sp->cap) {
		sp->cap = sp->cap ? 2 * sp->cap : 16;
		sp->longs = llm_realloc(sp->longs, sp->cap * sizeof *sp->longs);
	}
	sp->longs[sp->nlong++] = (struct long_line){ in->lineno, in->full_len };
}

/* The second pass's view of a line read back from the spool: too long if the first pass
 * found it so, with the length it had. */
static void replay_line(dedup_spool *sp, tool_lines *in)
{
	in->too_long = false;
	if (sp->next < sp->nlong && sp->longs[sp->next].lineno == in->lineno) {
		in->too_long = true;
		in->full_len = sp->longs[sp->next++].len;
	}
}

/* Open path, or standard input's spool in the second pass; 1 when it cannot be read
 * (reported). */
static int open_input(tool_lines *in, const struct dedup_cfg *c, const char *path, dedup_spool *sp,
                      llm_run *run)
{
	llm_reader *rd;
	bool replay = sp && sp->replaying;
	int rc = replay ? llm_reader_open_fd(&rd, fileno(sp->f), "<stdin>")
	                : tool_lines_open(in, path, &c->co, run);
	if (rc) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	if (replay)
		tool_lines_init(in, rd, &c->co, run);
	return 0;
}

int dedup_each_record(const struct dedup_cfg *c, const char *path, dedup_spool *sp,
                      llm_dedup_doc *r, dedup_record_fn fn, void *ctx, llm_run *run,
                      llm_signpool *pool)
{
	tool_lines in;
	if (open_input(&in, c, path, sp, run))
		return 1;
	while (tool_lines_next(&in)) {
		if (sp && sp->replaying)
			replay_line(sp, &in);
		else if (sp)
			spool_line(sp, &in);
		int status = in.too_long ? LLM_ETOOLONG : LLM_OK;
		if (pool) {
			llm_signpool_add(pool, status, in.line, in.full_len, in.name, in.lineno);
		} else {
			llm_dedup_doc_parse(r, c->co.field, c->co.max_line, status, in.line, in.full_len,
			                    in.name, in.lineno);
			fn(ctx, r, in.name, in.lineno);
		}
	}
	if (tool_lines_close(&in) != LLM_OK) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	return 0;
}

int dedup_first_pass(const struct dedup_cfg *c, llm_dedup_doc *r, dedup_record_fn fn, void *ctx,
                     dedup_spool **sp, llm_signpool *pool)
{
	int failed = 0;
	for (int i = 0; i < dedup_input_count(c); i++) {
		const char *f = dedup_input_name(c, i);
		int is_stdin = !strcmp(f, "-");
		if (is_stdin) {
			if (*sp)
				die("standard input given twice");
			*sp = spool_new(c);
		}
		failed |= dedup_each_record(c, f, is_stdin ? *sp : NULL, r, fn, ctx, NULL, pool);
	}
	return failed;
}

int dedup_second_pass(const struct dedup_cfg *c, dedup_spool *sp, llm_dedup_doc *r,
                      dedup_record_fn fn, void *ctx, llm_run *run)
{
	int failed = 0;
	for (int i = 0; i < dedup_input_count(c); i++) {
		const char *f = dedup_input_name(c, i);
		bool is_stdin = !strcmp(f, "-");
		if (is_stdin) {
			if (fflush(sp->f) || fseek(sp->f, 0, SEEK_SET))
				die("temporary spool file: %s", strerror(errno));
			sp->replaying = true;
		}
		failed |= dedup_each_record(c, f, is_stdin ? sp : NULL, r, fn, ctx, run, NULL);
	}
	return failed;
}
