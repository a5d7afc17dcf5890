/*
 * opt.h — declarative option tables, in the spirit of git's parse-options.h.
 *
 * Each option of a tool is written once, as one row of a table:
 *
 *	static const struct tool_option options[] = {
 *		TOOL_CHOICE("format", 'f', "FMT", 0, "auto\0jsonl\0text\0", "auto (default), jsonl, text"),
 *		TOOL_OPTION("lines", 0, NULL, OPT_LINES, "text: one document per line"),
 *		TOOL_COMMON(TOOL_OPT_REJECTS, NULL),
 *		TOOL_COMMON_END,
 *	};
 *
 * and from that table come the getopt_long table and the short-option string (tool_getopt),
 * the option lines of --help, and --list-options, the list that the man page check in
 * tests/t/t0000-tools.sh and the bash completion (mk/completion.sh) read. The options every
 * tool may take (-o, --rejects, --stats, --strict, --max-line, --field, --threads, -q, -v,
 * --version, --help) are one shared table in opt.c: a tool names the ones it takes with
 * TOOL_COMMON, at the place in its --help where they belong, and a tool that does not name
 * --rejects refuses it like any unknown option.
 */
#ifndef LLM_TOOL_OPT_H
#define LLM_TOOL_OPT_H

/* The ids of the common options; tools number their own long-only options from
 * TOOL_OPT_FIRST_PRIVATE, and a short option's id is its letter. */
enum {
	TOOL_OPT_STATS = 0x1000,
	TOOL_OPT_REJECTS,
	TOOL_OPT_STRICT,
	TOOL_OPT_MAX_LINE,
	TOOL_OPT_FIELD,
	TOOL_OPT_THREADS,
	TOOL_OPT_VERSION,
	TOOL_OPT_LIST_OPTIONS,
	TOOL_OPT_FIRST_PRIVATE = 0x1100
};

/* struct tool_option.flags */
enum {
	TOOL_OPTF_NOHELP = 1, /* no line of its own in --help (a TOOL_TEXT row describes it) */
	TOOL_OPTF_OPTARG = 2, /* the argument is optional: --name[=ARG] */
};

struct tool_option {
	/* Long name without "--". NULL without a short name: a common option (id says which,
	 * see TOOL_COMMON), or, with id 0, a line of text of its own in --help (TOOL_TEXT). */
	const char *name;
	int short_name;      /* 'f', or 0 */
	const char *arg;     /* name of the argument in --help ("FILE"); NULL: no argument */
	int id;              /* what tool_getopt returns; 0: short_name */
	const char *help;    /* one line per '\n'; common options: NULL = the shared text */
	unsigned flags;      /* TOOL_OPTF_* */
	const char *choices; /* NUL-separated values of the argument, for completion, or NULL */
};

/* The rows of a table. */
#define TOOL_OPTION(name, short_name, arg, id, help) { name, short_name, arg, id, help, 0, NULL }
#define TOOL_OPTION_F(name, short_name, arg, id, flags, help) \
	{ name, short_name, arg, id, help, flags, NULL }
#define TOOL_CHOICE(name, short_name, arg, id, choices, help) \
	{ name, short_name, arg, id, help, 0, choices }
/* A common option (TOOL_OPT_STATS, 'o', ...), with the shared help text when help is NULL. */
#define TOOL_COMMON(id, help) { NULL, 0, NULL, id, help, 0, NULL }
/* The same with the argument named otherwise ("DIR" for FILE). */
#define TOOL_COMMON_ARG(id, arg, help) { NULL, 0, arg, id, help, 0, NULL }
/* A line of --help that is no option ("loss:", "" for a blank line). */
#define TOOL_TEXT(text) { NULL, 0, NULL, 0, text, 0, NULL }
/* The end of a table. */
#define TOOL_OPTIONS_END { NULL, 0, NULL, 0, NULL, 0, NULL }
/* -q, -v, --version, -h and the end of the table. */
#define TOOL_COMMON_END                                                                    \
	TOOL_COMMON('q', NULL), TOOL_COMMON('v', NULL), TOOL_COMMON(TOOL_OPT_VERSION, NULL), \
	TOOL_COMMON('h', NULL), TOOL_OPTIONS_END

/* What a tool's command line is: the head of --help (usage lines and description, up to and
 * with the blank line before the options), the options, the subcommands. */
struct tool_cli {
	const char *usage;
	const struct tool_option *options;
	const char *commands; /* NUL-separated ("train\0eval\0"), or NULL */
};

struct tool_common;

/* The subcommand argv[1] names: its place in cli->commands from 1, with *argi = 2 (its
 * options start at argv[2]); else 0 (the default command) with *argi = 1. */
int tool_subcommand(const struct tool_cli *cli, int argc, char **argv, int *argi);

/* The next option of argv, as getopt_long would return it, with its argument in optarg: the
 * row's id, or -1 after the last option (optind is then the first operand). Common options
 * are handled here (into co; --help, --version and --list-options print and exit 0); an
 * unknown option, or a missing argument, is a usage error (exit 2). */
int tool_getopt(struct tool_common *co, int argc, char **argv);

/* The --help text of cli, to stdout. */
void tool_print_help(const struct tool_cli *cli);

#endif
