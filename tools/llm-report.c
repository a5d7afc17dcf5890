/*
 * llm-report — the page and the diagnosis of a training run, from its run directory.
 *
 * Input: a run directory as llm-train writes it (metrics.jsonl, or TensorBoard event files,
 * train.json, config.json, data-manifest.json, ckpt/, metrics.prom, eval/ *.json) and
 * llm-eval --stats files. Output: one self-contained HTML page (lib/model/report.h); with
 * --diagnose the patterns of lib/model/diagnose.h found in the curves, one line each; with
 * --watch the page rewritten every N seconds while a trainer holds the directory; with
 * --pipeline the stages of a pipelines/Makefile run first (lib/model/reportpipe.h).
 * Memory: the curves (8 bytes per logged step and key) and the page.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/io.h"
#include "core/tmpfile.h"
#include "model/diagnose.h"
#include "model/report.h"
#include "model/reportpipe.h"
#include "model/runlog.h"
#include "tool.h"

static const char usage[] =
	"usage: llm-report [options] RUN_DIR\n"
	"       llm-report --diagnose [options] RUN_DIR\n"
	"       llm-report --watch N -o FILE [options] RUN_DIR\n"
	"       llm-report --pipeline DIR [options] DIR/run\n"
	"       llm-report --totals STAGE DIR\n"
	"\n"
	"Write the page of a training run, one self-contained HTML file, from its run directory.\n"
	"\n";

enum { OPT_DIAGNOSE = TOOL_OPT_FIRST_PRIVATE, OPT_WATCH, OPT_EVAL, OPT_TITLE, OPT_MAX_POINTS,
       OPT_PIPELINE, OPT_TOTALS };

static const struct tool_option cli_options[] = {
	TOOL_OPTION("output", 'o', "FILE", 0,
	            "write the page to FILE (replaced atomically), not standard output"),
	TOOL_OPTION("diagnose", 0, NULL, OPT_DIAGNOSE,
	            "print the patterns found in the curves, one per line; exit 1 when\n"
	            "there is one, 0 when none (the page only with -o)"),
	TOOL_OPTION("watch", 0, "N", OPT_WATCH,
	            "rewrite FILE every N seconds while a trainer holds RUN_DIR, and\n"
	            "once more after it has gone"),
	TOOL_OPTION("eval", 0, "FILE", OPT_EVAL,
	            "also show these llm-eval --stats results (repeatable;\n"
	            "RUN_DIR/eval/*.json are always shown)"),
	TOOL_OPTION("pipeline", 0, "DIR", OPT_PIPELINE,
	            "also show the stages of this pipelines/Makefile output directory\n"
	            "(documents, reasons, domains, tokens, generations, times), and\n"
	            "end with its summary: documents kept, tokens, validation loss"),
	TOOL_OPTION("totals", 0, "STAGE", OPT_TOTALS,
	            "print one line of what STAGE of the pipeline in DIR did over all\n"
	            "its files (files, documents in and out, top reasons), and exit"),
	TOOL_OPTION("title", 0, "TEXT", OPT_TITLE,
	            "the page's title (default: the directory and what the run trains)"),
	TOOL_OPTION("max-points", 0, "N", OPT_MAX_POINTS,
	            "points per curve; longer curves are drawn by the low and high\n"
	            "of each bucket of steps (default 4000)"),
	TOOL_OPTION("quiet", 'q', NULL, 0, "no summary line"),
	TOOL_OPTION("verbose", 'v', NULL, 0, "a line for every page written"),
	TOOL_OPTION("version", 0, NULL, TOOL_OPT_VERSION, "print the version and exit"),
	TOOL_OPTION("help", 'h', NULL, 0, "print this help and exit"),
	TOOL_OPTIONS_END,
};

static const struct tool_cli cli = { usage, cli_options, NULL };

/* Write the page of rl (and its findings) to path; stdout when path is NULL. */
static int write_page(const llm_runlog *rl, const llm_findings *f, const llm_report_options *o,
                      const char *path)
{
	llm_buf page = LLM_BUF_INIT;
	llm_report_html(rl, f, o, &page);
	int rc = llm_write_file(path ? path : "-", page.p, page.len);
	llm_buf_release(&page);
	return rc;
}

/* The end of a pipeline's run, on standard error: what it kept, its tokens, its validation
 * loss, and where the page is. */
static void pipeline_summary(const char *dir, const char *page)
{
	llm_buf b = LLM_BUF_INIT;
	llm_reportpipe_summary(dir, &b);
	for (char *s = b.p, *nl; s && *s; s = nl + 1) {
		if ((nl = strchr(s, '\n')))
			*nl = 0;
		llm_info("%s", s);
		if (!nl)
			break;
	}
	if (page && strcmp(page, "-") != 0)
		llm_info("report: %s", page);
	llm_buf_release(&b);
}

/* --totals STAGE DIR: the stage's line on standard output (none when it has no stats). */
static int stage_totals(const char *stage, const char *dir, int other_mode)
{
	static const char *const known[] = { "cat", "clean", "dedup", "decon", "tox", "tokens",
	                                      "noise", "shards" };
	size_t k = 0;
	while (k < sizeof known / sizeof *known && strcmp(known[k], stage) != 0)
		k++;
	if (k == sizeof known / sizeof *known)
		usage_error("--totals: unknown stage '%s' (cat, clean, dedup, decon, tox, tokens, "
		            "noise or shards)", stage);
	if (other_mode)
		usage_error("--totals goes alone with its pipeline directory");
	llm_buf b = LLM_BUF_INIT;
	if (llm_reportpipe_totals(dir, stage, &b))
		printf("%s\n", b.p);
	llm_buf_release(&b);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		llm_error("standard output: %s", strerror(errno));
		return 1;
	}
	return 0;
}

static int64_t last_step(const llm_runlog *rl)
{
	size_t n = llm_runlog_rows(rl);
	return n ? llm_runlog_steps(rl)[n - 1] : 0;
}

/*
 * --watch: the lock is looked at before the files are read, so that the page written after
 * the trainer was seen gone holds everything it logged, and is the last one.
 */
static int watch(llm_runlog *rl, llm_report_options *o, const char *path, int seconds)
{
	for (int first = 1;; first = 0) {
		char holder[256];
		int live = llm_runlog_live(llm_runlog_dir(rl), holder, sizeof holder);
		if (!first && llm_runlog_refresh(rl) != LLM_OK)
			llm_warn("%s", llm_last_error()); /* shown as it was; tried again next time */
		o->live = live ? holder : NULL;
		o->refresh = live ? seconds : 0;
		if (llm_report_write(rl, o, path, NULL) != LLM_OK) {
			llm_error("%s", llm_last_error());
			return 1;
		}
		llm_debug("%s: step %lld%s", path, (long long)last_step(rl),
		          live ? "" : ", no trainer: the last page");
		if (!live)
			return 0;
		struct timespec ts = { seconds, 0 };
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
	}
}

int main(int argc, char **argv)
{
	tool_init("llm-report");
	/* A page is published as it is written: --watch rewrites it while running, and
	 * --diagnose -o writes it and exits 1 when it finds something. */
	llm_tmpfile_defer(0);
	struct tool_common co;
	tool_common_init(&co, &cli);
	llm_report_options o;
	llm_report_options_init(&o);
	int diagnose = 0, seconds = 0, c;
	const char *totals = NULL;
	const char **evals = NULL;
	size_t nevals = 0;
	while ((c = tool_getopt(&co, argc, argv)) != -1) {
		switch (c) {
		case OPT_DIAGNOSE: diagnose = 1; break;
		case OPT_WATCH: seconds = (int)tool_int("--watch", optarg, 1, 86400); break;
		case OPT_EVAL:
			evals = llm_realloc(evals, (nevals + 1) * sizeof *evals);
			evals[nevals++] = optarg;
			break;
		case OPT_TITLE: o.title = optarg; break;
		case OPT_PIPELINE: o.pipeline = optarg; break;
		case OPT_TOTALS: totals = optarg; break;
		case OPT_MAX_POINTS:
			o.max_points = (size_t)tool_int("--max-points", optarg, 2, 100000000);
			break;
		default: tool_bad_option();
		}
	}
	if (optind + 1 != argc)
		usage_error(optind == argc ? "a run directory is required" : "one run directory only");
	if (seconds && (!co.output || strcmp(co.output, "-") == 0))
		usage_error("--watch rewrites a file: give it with -o");
	if (seconds && diagnose)
		usage_error("--watch and --diagnose do not go together");
	if (totals)
		return stage_totals(totals, argv[optind], diagnose || seconds || nevals || o.pipeline);
	/* The diagnosis answers yes or no, as grep does: its errors are 2. */
	int err = diagnose ? 2 : 1;
	const char *dir = argv[optind];
	llm_runlog *rl;
	if (llm_runlog_open(&rl, dir) != LLM_OK) {
		llm_error("%s", llm_last_error());
		return err;
	}
	for (size_t i = 0; i < nevals; i++)
		if (llm_runlog_add_eval(rl, evals[i]) != LLM_OK) {
			llm_error("%s", llm_last_error());
			llm_runlog_free(rl);
			return err;
		}
	free(evals);
	int status = 0;
	size_t nfound = 0;
	if (seconds) {
		status = watch(rl, &o, co.output, seconds);
	} else {
		llm_findings f;
		llm_findings_init(&f);
		nfound = llm_diagnose(rl, &f);
		char holder[256];
		if (llm_runlog_live(dir, holder, sizeof holder))
			o.live = holder;
		if ((!diagnose || co.output) && write_page(rl, &f, &o, co.output) != LLM_OK) {
			llm_error("%s", llm_last_error());
			status = err;
		}
		if (diagnose && !status) {
			llm_buf line = LLM_BUF_INIT;
			for (size_t i = 0; i < f.n; i++) {
				llm_buf_reset(&line);
				llm_finding_format(&f.v[i], &line);
				llm_buf_addc(&line, '\n');
				fwrite(line.p, 1, line.len, stdout);
			}
			llm_buf_release(&line);
			if (fflush(stdout) != 0 || ferror(stdout)) {
				llm_error("standard output: %s", strerror(errno));
				status = err;
			} else {
				status = nfound ? 1 : 0;
			}
		}
		llm_findings_release(&f);
	}
	if (!status && o.pipeline && !seconds)
		pipeline_summary(o.pipeline, co.output);
	if (!status || (diagnose && status == 1))
		llm_info("%s: %zu steps logged, %zu checkpoint%s, %zu finding%s", dir,
		         llm_runlog_rows(rl), llm_runlog_nckpts(rl), llm_runlog_nckpts(rl) == 1 ? "" : "s",
		         nfound, nfound == 1 ? "" : "s");
	llm_runlog_free(rl);
	return status;
}
