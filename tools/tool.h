/*
 * tool.h — what every llm-* program shares at the process level: start-up, the exits of the
 * command-line contract (0 ok, 1 runtime or data failure, 2 usage), parsing of option values,
 * the options common to all tools, and the loop that reads input lines (tool_lines).
 *
 * This is the one place allowed to call exit(): lib/ reports, tools decide.
 *
 * Options are a table (opt.h) parsed by tool_getopt. The common ones, which a tool names in
 * its table with TOOL_COMMON, fill struct tool_common:
 *   -o, --output FILE   output (default stdout; .zst, .gz, .xz, .bz2 compress)
 *   -q, --quiet         no progress or summary
 *   -v, --verbose
 *       --stats FILE    run summary as JSON
 *       --rejects FILE  every dropped record plus "reject_reason"
 *       --strict        malformed input is fatal (exit 1) instead of rejected
 *       --max-line SIZE longest accepted input line (default 64M)
 *       --field KEY     document text field (default "text")
 *       --threads N     worker threads (default 1; 0 = number of cores)
 *       --version, -h/--help
 */
#ifndef LLM_TOOL_H
#define LLM_TOOL_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/io.h"
#include "core/run.h"
#include "opt.h"

/* Set program name, OOM handler (message + exit 1), SIGPIPE default, SIGINT/SIGTERM/SIGHUP
 * cleanup of temporary output files, and deferred publishing of outputs: every file written
 * through lib/core/tmpfile.h appears under its name only when the program exits with status 0
 * (a program that must publish at once, llm-train's checkpoints, turns it off). */
void tool_init(const char *name);

_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* die() with the message of the library call that just failed (llm_last_error()). */
_Noreturn void die_lib(void);
/* "PROG: msg" and "Try 'PROG --help' for more information.", exit 2. */
_Noreturn void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void tool_version(void);
/* Flush what --help, --version or the like printed and exit 0 (1 on a write error). */
_Noreturn void tool_exit_printed(void);

/* Option value parsers: on a bad value they call usage_error naming the option. */
uint64_t tool_size(const char *opt, const char *arg);          /* 64K, 1.5M, 1G, 2T; base 1024 */
long long tool_int(const char *opt, const char *arg, long long min, long long max);
double tool_double(const char *opt, const char *arg, double min, double max);
/* A comma-separated list of non-negative integers, appended to *list (n items so far, realloc'd);
 * returns the new count. */
size_t tool_u64_list(const char *opt, const char *arg, uint64_t **list, size_t n);
/* One of a NUL-separated list of words ("cpu\0cuda\0auto\0"); returns its index. */
int tool_choice(const char *opt, const char *arg, const char *words);
/* A choice that a library function parses (its error names the choices); usage error else. */
int tool_parsed(const char *opt, const char *arg, int (*parse)(const char *s, int *out));

struct tool_common {
	const char *output;  /* NULL = stdout */
	const char *stats;
	const char *rejects;
	int strict;
	size_t max_line;
	const char *field;   /* "text" */
	int threads;         /* resolved: >= 1 */
	int threads_given;   /* --threads was given */
	const struct tool_cli *cli; /* the command line's table, for tool_getopt and --help */
};

/* Defaults, and the table that tool_getopt parses. */
void tool_common_init(struct tool_common *co, const struct tool_cli *cli);
/* Handle a common option (tool_getopt calls it); returns 1 if c was one (exits for --help,
 * --version and bad values). */
int tool_common_option(struct tool_common *co, int c, const char *arg);
/* A getopt '?' or ':' result: usage error (getopt already printed why). */
_Noreturn void tool_bad_option(void);

/* Usage error (exit 2) when -o, --rejects and --stats name one file twice: one of them would
 * be lost. tool_run_new checks; a tool without a run calls it itself. */
void tool_check_outputs(const struct tool_common *co);
/* Whether two output names are one file (NULL and "-": standard output), as that check
 * decides: for a program's own further outputs. */
int tool_same_output(const char *a, const char *b);
/* Usage error when a binary stream (what: "the token stream") would go to a terminal. */
void tool_binary_output(const char *output, const char *what);

/* A run wired to the common options (stats file, rejects file), after tool_check_outputs.
 * Dies on open failure. */
llm_run *tool_run_new(const struct tool_common *co);
/* Finish the run; returns the exit status to use (0, or 1 when anything failed earlier or
 * the run's bookkeeping failed). failed: whether the tool saw a runtime error. */
int tool_run_finish(llm_run *run, int failed);

/*
 * Input lines: the one way a tool reads its inputs line by line. It counts lines, follows
 * the run (its input's name and size, the progress line), and hands on a line over
 * --max-line as its head, marked, for the tool to reject or die on as it does with any
 * malformed record:
 *
 *	tool_lines in;
 *	if (tool_lines_open(&in, path, &co, run) != LLM_OK) {
 *		llm_error("%s", llm_last_error());
 *		failed = 1;
 *		continue;
 *	}
 *	while (tool_lines_next(&in)) {
 *		if (in.too_long)
 *			... reject "FILE:LINE" (in.name, in.lineno), in.full_len bytes ...
 *		... use in.line, in.len ...
 *	}
 *	if (tool_lines_close(&in) != LLM_OK) {
 *		llm_error("%s", llm_last_error());
 *		failed = 1;
 *	}
 *
 * Breaking out of the loop is allowed; close is still due. Not thread safe: a tool that
 * hands lines to worker threads copies them (line is valid until the next call).
 */
typedef struct {
	char *line;       /* without its newline (and CR), NUL-terminated; writable */
	size_t len;       /* bytes in line */
	size_t full_len;  /* the line's bytes in the input: len, or more when too_long */
	int too_long;     /* over --max-line: line holds its first min(full_len, LLM_READER_HEAD)
	                   * bytes */
	const char *name; /* the input for messages: its path, or "<stdin>"; valid until close */
	uint64_t lineno;  /* 1-based number of the line */
	llm_reader *r;    /* the reader, for its positions (llm_reader_offset, ...) */
	llm_run *run;     /* NULL: no run to follow */
	int status;       /* LLM_OK while there are lines; LLM_EOF, or the read error */
} tool_lines;

/* Open path ("-" or NULL: standard input) under the common options (--max-line) and begin it
 * as the run's next input (run NULL: none). On failure the detail names the file (as
 * llm_reader_open) and there is nothing to close. */
int tool_lines_open(tool_lines *in, const char *path, const struct tool_common *co, llm_run *run);
/* The same over a reader already open (a descriptor, memory), which in now owns. */
void tool_lines_init(tool_lines *in, llm_reader *r, const struct tool_common *co, llm_run *run);
/* The next line into in; 0 at the end of the input or on a read error. */
int tool_lines_next(tool_lines *in);
/* Free the reader. Returns LLM_OK when the input was read to its end, else the read error
 * (its detail names the file), which the caller reports. */
int tool_lines_close(tool_lines *in);

/*
 * The data files llmkit ships (word lists, the toxicity model, stop words, recipes, pipelines),
 * by their path in the source tree ("samples/wordlists/en"). They are looked up under one root:
 * $LLMKIT_DATA when set; else PREFIX/share/llmkit when the program runs from PREFIX/bin and
 * `make install` put them there; else the source tree the program was built in (bin/..).
 * Writes the path into out (cap bytes, truncated paths fail to open) and returns out.
 */
#define TOOL_PATH_MAX 4096
char *tool_data_path(char *out, size_t cap, const char *rel);

/*
 * A file option's argument that may name shipped data (--recipe default, --stop-words en):
 * arg itself when it exists (or is "-", absolute, or starts with ./ or ../); else the first
 * of DATA/dir/arg, DATA/dir/arg+ext (ext NULL: none) and DATA/arg that exists, DATA being
 * tool_data_path's root; else arg, so that the error names what was typed. The string
 * returned lives until the program exits.
 */
const char *tool_data_find(const char *arg, const char *dir, const char *ext);

/* The command line as one shell-quoted string (for manifests and checkpoint state; escape it
 * with llm_json_put_str when writing JSON). tool_save_cmdline must have been called. */
const char *tool_cmdline(void);
void tool_save_cmdline(int argc, char **argv);

#endif
