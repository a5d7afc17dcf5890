/*
 * tool.c — process-level support shared by every llm-* program (see tool.h).
 */
#include "tool.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/io.h"
#include "core/json.h"
#include "core/tmpfile.h"

static llm_buf cmdline = LLM_BUF_INIT;

static void oom_exit(size_t bytes)
{
	char msg[128];
	int n = snprintf(msg, sizeof msg, "%s: out of memory (allocating %zu bytes)\n", llm_prog(), bytes);
	ssize_t w = write(2, msg, n);
	(void)w;
	llm_tmpfile_unlink_all();
	_exit(1);
}

static void on_fatal_signal(int sig)
{
	llm_tmpfile_unlink_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * Every way out of a program passes here (a return from main, exit, die, usage_error), with
 * its status: outputs are published only when it is 0, so a run that fails, for whatever
 * reason and at whatever point, leaves the previous outputs as they were. A publish that
 * fails turns the status into 1.
 */
static void on_exit_status(int status, void *unused)
{
	(void)unused;
	if (status != 0) {
		llm_buf ready = LLM_BUF_INIT;
		llm_tmpfile_discard_all(&ready);
		if (ready.len)
			llm_error("the run failed: %s not written (any previous version is kept)", ready.p);
		llm_buf_release(&ready);
		return;
	}
	if (llm_tmpfile_commit() != LLM_OK) {
		llm_error("%s", llm_last_error());
		fflush(NULL);
		_exit(1);
	}
}

void tool_init(const char *name)
{
	llm_msg_init(name);
	llm_set_oom_handler(oom_exit);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, on_fatal_signal);
	signal(SIGTERM, on_fatal_signal);
	signal(SIGHUP, on_fatal_signal);
	llm_tmpfile_defer(1);
	on_exit(on_exit_status, NULL);
}

void die(const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	llm_error("%s", msg);
	exit(1);
}

void die_lib(void)
{
	die("%s", llm_last_error());
}

void usage_error(const char *fmt, ...)
{
	char msg[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	llm_error("%s", msg);
	fprintf(stderr, "Try '%s --help' for more information.\n", llm_prog());
	exit(2);
}

void tool_bad_option(void)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", llm_prog());
	exit(2);
}

void tool_exit_printed(void)
{
	if (fflush(stdout) != 0 || ferror(stdout))
		die("write error: <stdout>: %s", strerror(errno));
	exit(0);
}

void tool_version(void)
{
	printf("%s (llmkit) %s\n", llm_prog(), LLM_VERSION);
	tool_exit_printed();
}

uint64_t tool_size(const char *opt, const char *arg)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	if (end == arg || errno || v < 0 || !isfinite(v))
		usage_error("invalid size for %s: '%s'", opt, arg);
	double mult = 1;
	switch (*end) {
	case 'k': case 'K': mult = 1024.0; end++; break;
	case 'm': case 'M': mult = 1024.0 * 1024; end++; break;
	case 'g': case 'G': mult = 1024.0 * 1024 * 1024; end++; break;
	case 't': case 'T': mult = 1024.0 * 1024 * 1024 * 1024; end++; break;
	}
	if (*end == 'i' && mult > 1)
		end++;
	if ((*end == 'B' || *end == 'b') && end[1] == 0)
		end++;
	if (*end)
		usage_error("invalid size for %s: '%s' (use e.g. 64K, 1.5M, 1G)", opt, arg);
	v *= mult;
	if (v > 9.2e18)
		usage_error("size too large for %s: '%s'", opt, arg);
	return (uint64_t)v;
}

long long tool_int(const char *opt, const char *arg, long long min, long long max)
{
	char *end;
	errno = 0;
	long long v = strtoll(arg, &end, 10);
	if (end == arg || *end || errno)
		usage_error("invalid number for %s: '%s'", opt, arg);
	if (v < min || v > max)
		usage_error("%s must be between %lld and %lld, not %lld", opt, min, max, v);
	return v;
}

size_t tool_u64_list(const char *opt, const char *arg, uint64_t **list, size_t n)
{
	for (const char *s = arg; *s;) {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(s, &end, 10);
		if (end == s || errno || (*end && *end != ',') || *s == '-')
			usage_error("%s: bad list '%s'", opt, arg);
		*list = llm_realloc(*list, (n + 1) * sizeof **list);
		(*list)[n++] = v;
		s = *end ? end + 1 : end;
	}
	return n;
}

double tool_double(const char *opt, const char *arg, double min, double max)
{
	char *end;
	errno = 0;
	double v = strtod(arg, &end);
	if (end == arg || *end || errno || isnan(v))
		usage_error("invalid number for %s: '%s'", opt, arg);
	if (v < min || v > max)
		usage_error("%s must be between %g and %g, not %g", opt, min, max, v);
	return v;
}

int tool_choice(const char *opt, const char *arg, const char *words)
{
	llm_buf list = LLM_BUF_INIT;
	int i = 0;
	for (const char *w = words; *w; w += strlen(w) + 1, i++) {
		if (strcmp(w, arg) == 0) {
			llm_buf_release(&list);
			return i;
		}
		llm_buf_addf(&list, "%s'%s'", i ? ", " : "", w);
	}
	usage_error("invalid value for %s: '%s' (choose from %s)", opt, arg, list.p);
}

int tool_parsed(const char *opt, const char *arg, int (*parse)(const char *s, int *out))
{
	int v;
	if (parse(arg, &v) != LLM_OK)
		usage_error("%s: %s", opt, llm_last_error());
	return v;
}

void tool_common_init(struct tool_common *co, const struct tool_cli *cli)
{
	memset(co, 0, sizeof *co);
	co->max_line = (size_t)64 << 20;
	co->field = "text";
	co->threads = 1;
	co->cli = cli;
}

int tool_common_option(struct tool_common *co, int c, const char *arg)
{
	switch (c) {
	case 'o': co->output = arg; return 1;
	case 'q': llm_set_verbosity(0); return 1;
	case 'v': llm_set_verbosity(2); return 1;
	case 'h':
		tool_print_help(co->cli);
		tool_exit_printed();
	case TOOL_OPT_VERSION: tool_version();
	case TOOL_OPT_STATS: co->stats = arg; return 1;
	case TOOL_OPT_REJECTS: co->rejects = arg; return 1;
	case TOOL_OPT_STRICT: co->strict = 1; return 1;
	case TOOL_OPT_MAX_LINE:
		co->max_line = tool_size("--max-line", arg);
		if (!co->max_line)
			usage_error("--max-line must be positive");
		return 1;
	case TOOL_OPT_FIELD:
		if (!*arg)
			usage_error("--field needs a key");
		co->field = arg;
		return 1;
	case TOOL_OPT_THREADS: {
		long long n = tool_int("--threads", arg, 0, 1024);
		if (n == 0) {
			long cores = sysconf(_SC_NPROCESSORS_ONLN);
			n = cores > 0 ? cores : 1;
		}
		co->threads = (int)n;
		co->threads_given = 1;
		return 1;
	}
	}
	return 0;
}

/*
 * Whether two output options name one file, which would leave one output's bytes over the
 * other's. NULL and "-" are standard output; a file is the same as standard output when fd 1
 * is that file; two names are the same file when they are (device, inode), or, for a file not
 * there yet, when their directories are and the last components are equal.
 */
int tool_same_output(const char *a, const char *b)
{
	int out_a = !a || strcmp(a, "-") == 0, out_b = !b || strcmp(b, "-") == 0;
	struct stat sa, sb;
	if (out_a && out_b)
		return 1;
	if (out_a || out_b) {
		const char *f = out_a ? b : a;
		return fstat(1, &sa) == 0 && S_ISREG(sa.st_mode) && stat(f, &sb) == 0 &&
		       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	}
	if (strcmp(a, b) == 0)
		return 1;
	if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	const char *ba = strrchr(a, '/'), *bb = strrchr(b, '/');
	if (strcmp(ba ? ba + 1 : a, bb ? bb + 1 : b) != 0)
		return 0;
	char *da = ba ? llm_strndup(a, (size_t)(ba - a) + 1) : llm_strdup(".");
	char *db = bb ? llm_strndup(b, (size_t)(bb - b) + 1) : llm_strdup(".");
	int same = stat(da, &sa) == 0 && stat(db, &sb) == 0 && sa.st_dev == sb.st_dev &&
	           sa.st_ino == sb.st_ino;
	free(da);
	free(db);
	return same;
}

void tool_check_outputs(const struct tool_common *co)
{
	if (co->rejects && tool_same_output(co->output, co->rejects))
		usage_error("-o and --rejects name the same file '%s'", co->rejects);
	if (co->stats && tool_same_output(co->output, co->stats))
		usage_error("-o and --stats name the same file '%s'", co->stats);
	if (co->stats && co->rejects && tool_same_output(co->rejects, co->stats))
		usage_error("--rejects and --stats name the same file '%s'", co->stats);
}

void tool_binary_output(const char *output, const char *what)
{
	if ((!output || strcmp(output, "-") == 0) && isatty(1))
		usage_error("%s is binary and standard output is a terminal: use -o FILE or a pipe", what);
}

llm_run *tool_run_new(const struct tool_common *co)
{
	tool_check_outputs(co);
	llm_run *run = llm_run_new(llm_prog());
	if (co->rejects && llm_run_set_rejects(run, co->rejects) != LLM_OK)
		die("%s", llm_last_error());
	llm_run_set_stats(run, co->stats);
	return run;
}

int tool_run_finish(llm_run *run, int failed)
{
	if (llm_run_finish(run) != LLM_OK) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	return failed ? 1 : 0;
}

int tool_lines_open(tool_lines *in, const char *path, const struct tool_common *co, llm_run *run)
{
	llm_reader *r;
	int rc = llm_reader_open(&r, path);
	if (rc != LLM_OK)
		return rc;
	tool_lines_init(in, r, co, run);
	return LLM_OK;
}

void tool_lines_init(tool_lines *in, llm_reader *r, const struct tool_common *co, llm_run *run)
{
	memset(in, 0, sizeof *in);
	in->r = r;
	in->run = run;
	in->name = llm_reader_name(r);
	llm_reader_set_max_line(r, co->max_line);
	if (run)
		llm_run_begin_input(run, in->name, llm_reader_size(r));
}

int tool_lines_next(tool_lines *in)
{
	int rc = llm_reader_line(in->r, &in->line, &in->full_len);
	if (in->run)
		llm_run_progress(in->run, llm_reader_raw_bytes(in->r));
	if (rc != LLM_OK && rc != LLM_ETOOLONG) {
		in->status = rc;
		return 0;
	}
	in->too_long = rc == LLM_ETOOLONG;
	in->len = in->full_len;
	if (in->too_long && in->len > LLM_READER_HEAD)
		in->len = LLM_READER_HEAD;
	in->lineno = llm_reader_lineno(in->r);
	return 1;
}

int tool_lines_close(tool_lines *in)
{
	llm_reader_free(in->r);
	in->r = NULL;
	return in->status == LLM_EOF ? LLM_OK : in->status;
}

/* The data root, found once: see tool.h. */
static const char *data_root(void)
{
	static char root[TOOL_PATH_MAX];
	if (*root)
		return root;
	const char *env = getenv("LLMKIT_DATA");
	if (env && *env) {
		snprintf(root, sizeof root, "%s", env);
		return root;
	}
	char exe[TOOL_PATH_MAX - 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	char *slash = n > 0 ? (exe[n] = 0, strrchr(exe, '/')) : NULL;
	if (!slash) {
		snprintf(root, sizeof root, ".");
		return root;
	}
	*slash = 0;
	struct stat st;
	snprintf(root, sizeof root, "%s/../share/llmkit", exe);
	if (stat(root, &st) != 0 || !S_ISDIR(st.st_mode))
		snprintf(root, sizeof root, "%s/..", exe);
	return root;
}

char *tool_data_path(char *out, size_t cap, const char *rel)
{
	snprintf(out, cap, "%s/%s", data_root(), rel);
	return out;
}

/* The paths tool_data_find found, kept (and reachable) until exit: options hold them. */
struct found {
	struct found *next;
	char path[];
};
static struct found *found;

static const char *keep_found(const char *path)
{
	size_t n = strlen(path) + 1;
	struct found *f = llm_malloc(sizeof *f + n);
	memcpy(f->path, path, n);
	f->next = found;
	found = f;
	return f->path;
}

const char *tool_data_find(const char *arg, const char *dir, const char *ext)
{
	struct stat st;
	if (!*arg || !strcmp(arg, "-") || *arg == '/' || !strncmp(arg, "./", 2) ||
	    !strncmp(arg, "../", 3) || stat(arg, &st) == 0)
		return arg;
	char rel[TOOL_PATH_MAX], path[TOOL_PATH_MAX];
	const char *cand[3] = { NULL, NULL, arg };
	int n = 0;
	if (dir && snprintf(rel, sizeof rel, "%s/%s", dir, arg) < (int)sizeof rel)
		cand[n++] = rel;
	char relx[TOOL_PATH_MAX];
	if (dir && ext && snprintf(relx, sizeof relx, "%s/%s%s", dir, arg, ext) < (int)sizeof relx)
		cand[n++] = relx;
	for (int i = 0; i < 3; i++) {
		if (!cand[i])
			continue;
		int len = snprintf(path, sizeof path, "%s/%s", data_root(), cand[i]);
		if (len < (int)sizeof path && stat(path, &st) == 0 && S_ISREG(st.st_mode))
			return keep_found(path);
	}
	return arg;
}

void tool_save_cmdline(int argc, char **argv)
{
	llm_buf_reset(&cmdline);
	for (int i = 0; i < argc; i++) {
		if (i)
			llm_buf_addc(&cmdline, ' ');
		const char *a = argv[i];
		if (*a && !strpbrk(a, " \t\n'\"\\$`*?[]{}()<>|&;#~")) {
			llm_buf_adds(&cmdline, a);
			continue;
		}
		llm_buf_addc(&cmdline, '\'');
		for (; *a; a++) {
			if (*a == '\'')
				llm_buf_adds(&cmdline, "'\\''");
			else
				llm_buf_addc(&cmdline, *a);
		}
		llm_buf_addc(&cmdline, '\'');
	}
}

const char *tool_cmdline(void)
{
	return cmdline.p ? cmdline.p : "";
}
