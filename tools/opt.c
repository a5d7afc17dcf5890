/*
 * opt.c — option tables (see opt.h): the shared common block, getopt_long's tables built from
 * a tool's rows, --help and --list-options.
 */
#include "opt.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "tool.h"

/* The common block, in the order the tools' --help lists it. */
static const struct tool_option common[] = {
	TOOL_OPTION("output", 'o', "FILE", 'o',
	            "write to FILE (NAME.zst compresses) instead of standard output"),
	TOOL_OPTION("rejects", 0, "FILE", TOOL_OPT_REJECTS,
	            "write every rejected record there, with \"reject_reason\""),
	TOOL_OPTION("stats", 0, "FILE", TOOL_OPT_STATS, "write the run summary as JSON"),
	TOOL_OPTION("strict", 0, NULL, TOOL_OPT_STRICT, "stop at the first malformed record (exit 1)"),
	TOOL_OPTION("max-line", 0, "SIZE", TOOL_OPT_MAX_LINE, "longest line accepted (default 64M)"),
	TOOL_OPTION("field", 0, "KEY", TOOL_OPT_FIELD, "text field of JSONL records (default \"text\")"),
	TOOL_OPTION("threads", 0, "N", TOOL_OPT_THREADS, "worker threads (default 1; 0 = all cores)"),
	TOOL_OPTION("quiet", 'q', NULL, 'q', "no progress line or summary"),
	TOOL_OPTION("verbose", 'v', NULL, 'v', "more messages"),
	TOOL_OPTION("version", 0, NULL, TOOL_OPT_VERSION, "print the version and exit"),
	TOOL_OPTION("help", 'h', NULL, 'h', "print this help and exit"),
};

/* Row i of a tool's table as it applies: a common row resolved to the shared one, with the
 * tool's help text and argument name where it gives them. NULL name and 0 id: a line of text; all NULL: the end. */
static struct tool_option resolve(const struct tool_option *row)
{
	struct tool_option o = *row;
	if (o.name || o.short_name || !o.id)
		return o;
	for (size_t i = 0; i < sizeof common / sizeof *common; i++)
		if (common[i].id == o.id) {
			o = common[i];
			if (row->help)
				o.help = row->help;
			if (row->arg)
				o.arg = row->arg;
			return o;
		}
	llm_error("option table: no common option %#x", row->id); /* a programming error */
	abort();
}

static int is_end(const struct tool_option *row)
{
	return !row->name && !row->id && !row->help;
}

static int row_id(const struct tool_option *o)
{
	return o->id ? o->id : o->short_name;
}

static int is_common_id(int id)
{
	for (size_t i = 0; i < sizeof common / sizeof *common; i++)
		if (common[i].id == id)
			return 1;
	return 0;
}

/* Whether an earlier row of cli names the same option (llm-eval's --seed is described once
 * per command that reads it). */
static int seen_before(const struct tool_cli *cli, const struct tool_option *row)
{
	struct tool_option o = resolve(row);
	for (const struct tool_option *r = cli->options; r < row; r++) {
		struct tool_option p = resolve(r);
		if ((o.name && p.name && strcmp(o.name, p.name) == 0) ||
		    (o.short_name && p.short_name == o.short_name))
			return 1;
	}
	return 0;
}

/* getopt_long's tables for cli, built once (a process parses one command line). They stay
 * reachable from here until exit. */
static struct option *longopts;
static char *shortopts;
static const struct tool_cli *built;

static void build(const struct tool_cli *cli)
{
	size_t n = 0;
	for (const struct tool_option *r = cli->options; !is_end(r); r++)
		n++;
	free(longopts);
	free(shortopts);
	longopts = llm_calloc(n + 2, sizeof *longopts);
	shortopts = llm_malloc(3 * n + 1);
	size_t nl = 0, ns = 0;
	for (const struct tool_option *r = cli->options; !is_end(r); r++) {
		struct tool_option o = resolve(r);
		if (!o.name && !o.short_name)
			continue;
		int has = o.arg ? (o.flags & TOOL_OPTF_OPTARG ? optional_argument : required_argument)
		                : no_argument;
		if (o.name && !seen_before(cli, r))
			longopts[nl++] = (struct option){ o.name, has, NULL, row_id(&o) };
		if (o.short_name) {
			shortopts[ns++] = (char)o.short_name;
			if (has != no_argument)
				shortopts[ns++] = ':';
			if (has == optional_argument)
				shortopts[ns++] = ':';
		}
	}
	longopts[nl] = (struct option){ "list-options", no_argument, NULL, TOOL_OPT_LIST_OPTIONS };
	shortopts[ns] = 0;
	built = cli;
}

/* --list-options: one line per option name, tab-separated: "--name" or "-x", the argument's
 * name (empty if none), the argument's values separated by spaces; then one line per
 * subcommand. The man page check and mk/completion.sh read it. */
static void list_options(const struct tool_cli *cli)
{
	for (const struct tool_option *r = cli->options; !is_end(r); r++) {
		struct tool_option o = resolve(r);
		llm_buf tail = LLM_BUF_INIT;
		llm_buf_adds(&tail, o.arg ? o.arg : "");
		llm_buf_addc(&tail, '\t');
		for (const char *w = o.choices; w && *w; w += strlen(w) + 1)
			llm_buf_addf(&tail, "%s%s", w == o.choices ? "" : " ", w);
		if (o.name && !seen_before(cli, r))
			printf("--%s\t%s\n", o.name, tail.p);
		if (o.short_name && !seen_before(cli, r))
			printf("-%c\t%s\n", o.short_name, tail.p);
		llm_buf_release(&tail);
	}
	for (const char *w = cli->commands; w && *w; w += strlen(w) + 1)
		printf("%s\n", w);
}

/* The left column of an option's line: "  -f, --format FMT", "      --lines". */
static void left_column(const struct tool_option *o, llm_buf *b)
{
	llm_buf_reset(b);
	if (o->short_name)
		llm_buf_addf(b, "  -%c%s", o->short_name, o->name ? ", " : "");
	else
		llm_buf_adds(b, "      ");
	if (o->name)
		llm_buf_addf(b, "--%s", o->name);
	if (o->arg)
		llm_buf_addf(b, o->flags & TOOL_OPTF_OPTARG ? "[=%s]" : " %s", o->arg);
}

/* The help column follows the widest left column up to this width; wider ones are followed
 * by one space. */
enum { HELP_COLUMN_MAX = 26 };

void tool_print_help(const struct tool_cli *cli)
{
	llm_buf left = LLM_BUF_INIT;
	size_t col = 0;
	for (const struct tool_option *r = cli->options; !is_end(r); r++) {
		struct tool_option o = resolve(r);
		if ((!o.name && !o.short_name) || (o.flags & TOOL_OPTF_NOHELP))
			continue;
		left_column(&o, &left);
		if (left.len <= HELP_COLUMN_MAX && left.len > col)
			col = left.len;
	}
	col += 1; /* the longest is followed by one space */
	fputs(cli->usage, stdout);
	for (const struct tool_option *r = cli->options; !is_end(r); r++) {
		struct tool_option o = resolve(r);
		if (!o.name && !o.short_name) {
			printf("%s\n", o.help);
			continue;
		}
		if (o.flags & TOOL_OPTF_NOHELP)
			continue;
		left_column(&o, &left);
		fputs(left.p, stdout);
		/* One line per '\n' of the help, from the column; a left column too wide for it
		 * (or an empty first line) puts one space (or the break) before the first. */
		size_t at = left.len;
		for (const char *h = o.help ? o.help : "";;) {
			const char *nl = strchr(h, '\n');
			int len = nl ? (int)(nl - h) : (int)strlen(h);
			if (len)
				printf("%*s%.*s", at < col ? (int)(col - at) : 1, "", len, h);
			putchar('\n');
			at = 0;
			if (!nl)
				break;
			h = nl + 1;
		}
	}
	llm_buf_release(&left);
}

int tool_getopt(struct tool_common *co, int argc, char **argv)
{
	if (built != co->cli)
		build(co->cli);
	for (;;) {
		int c = getopt_long(argc, argv, shortopts, longopts, NULL);
		if (c == -1)
			return -1;
		if (c == '?' || c == ':')
			tool_bad_option();
		if (c == TOOL_OPT_LIST_OPTIONS) {
			list_options(co->cli);
			tool_exit_printed();
		}
		if (!is_common_id(c) || !tool_common_option(co, c, optarg))
			return c;
	}
}

int tool_subcommand(const struct tool_cli *cli, int argc, char **argv, int *argi)
{
	*argi = 1;
	if (argc < 2 || argv[1][0] == '-')
		return 0;
	int i = 1;
	for (const char *w = cli->commands; w && *w; w += strlen(w) + 1, i++)
		if (strcmp(argv[1], w) == 0) {
			*argi = 2;
			return i;
		}
	return 0;
}
