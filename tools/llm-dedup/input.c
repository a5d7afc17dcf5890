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

/* A temporary file for standard input's copy. */
static FILE *temp_file(const struct cfg *c)
{
	int fd = llm_tmpfd(c->tmpdir);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w+b");
	if (!f)
		die("%s", fd < 0 ? llm_last_error() : strerror(errno));
	return f;
}

llm_dedup *new_engine(const struct cfg *c, const llm_dedup_params *p)
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

void describe_params(const llm_dedup_params *p)
{
	llm_buf desc = LLM_BUF_INIT;
	llm_dedup_params_describe(p, &desc);
	llm_info("%s", desc.p);
	llm_buf_release(&desc);
}

/* A line of standard input into its spool. */
static void spool_line(FILE *spool, const tool_lines *in)
{
	if (fwrite(in->line, 1, in->len, spool) != in->len ||
	    (in->too_long && fputc('x', spool) == EOF) || fputc('\n', spool) == EOF)
		die("temporary spool file: %s", strerror(errno));
}

/* Open path, or standard input's spool (fd); 1 when it cannot be read (reported). */
static int open_input(tool_lines *in, const struct cfg *c, const char *path, int fd, llm_run *run)
{
	llm_reader *rd;
	int rc = fd < 0 ? tool_lines_open(in, path, &c->co, run)
	                : llm_reader_open_fd(&rd, fd, "<stdin>");
	if (rc) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	if (fd >= 0)
		tool_lines_init(in, rd, &c->co, run);
	return 0;
}

int each_record(const struct cfg *c, const char *path, int fd, llm_dedup_doc *r, record_fn fn,
                void *ctx, FILE *spool, llm_run *run, llm_signpool *pool)
{
	tool_lines in;
	if (open_input(&in, c, path, fd, run))
		return 1;
	while (tool_lines_next(&in)) {
		int status = in.too_long ? LLM_ETOOLONG : LLM_OK;
		if (spool)
			spool_line(spool, &in);
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

int first_pass(const struct cfg *c, llm_dedup_doc *r, record_fn fn, void *ctx, FILE **spool,
               llm_signpool *pool)
{
	int failed = 0;
	for (int i = 0; i < input_count(c); i++) {
		const char *f = input_name(c, i);
		int is_stdin = !strcmp(f, "-");
		if (is_stdin) {
			if (*spool)
				die("standard input given twice");
			*spool = temp_file(c);
		}
		failed |= each_record(c, f, -1, r, fn, ctx, is_stdin ? *spool : NULL, NULL, pool);
	}
	return failed;
}

int second_pass(const struct cfg *c, FILE *spool, llm_dedup_doc *r, record_fn fn, void *ctx,
                llm_run *run)
{
	int failed = 0;
	for (int i = 0; i < input_count(c); i++) {
		const char *f = input_name(c, i);
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
