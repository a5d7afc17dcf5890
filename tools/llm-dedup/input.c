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

int each_record(const struct cfg *c, const char *path, int fd, llm_dedup_doc *r, record_fn fn,
                void *ctx, FILE *spool, llm_run *run, llm_signpool *pool)
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
