/*
 * llm-cat — the first stage: any input becomes the JSONL document stream.
 *
 * Input: JSONL (any compression), text, HTML, WARC/WARC.gz, tar/zip archives, from files or
 * stdin. Output: one JSON document per line (DESIGN §3). Memory: one input buffer and one
 * document (bounded by --max-line).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/io.h"
#include "text/charset.h"
#include "text/docsrc.h"
#include "tool.h"

static const char usage[] =
	"usage: llm-cat [options] [file ...]\n"
	"\n"
	"Read JSONL, text, HTML, WARC, ARC or archives (compression detected) and write the JSONL\n"
	"document stream. With no file, or when file is -, read standard input.\n"
	"\n";

enum { OPT_LINES = TOOL_OPT_FIRST_PRIVATE, OPT_PARAGRAPHS, OPT_DOMAIN, OPT_LANG, OPT_SOURCE,
       OPT_ENCODING };

static const struct tool_option cli_options[] = {
	TOOL_CHOICE("format", 'f', "FMT", 0, llm_docsrc_format_names,
	            "auto (default), jsonl, text, html, warc, arc, archive"),
	TOOL_OPTION("lines", 0, NULL, OPT_LINES, "text: one document per line"),
	TOOL_OPTION("paragraphs", 0, NULL, OPT_PARAGRAPHS,
	            "text: one document per blank-line separated block"),
	TOOL_OPTION("domain", 0, "NAME", OPT_DOMAIN,
	            "stamp \"domain\" on documents that have none"),
	TOOL_OPTION("lang", 0, "CODE", OPT_LANG, "stamp \"lang\" on documents that have none"),
	TOOL_OPTION("source", 0, "NAME", OPT_SOURCE,
	            "stamp \"source\" (default for non-JSONL input: the file name)"),
	TOOL_OPTION("encoding", 0, "ENC", OPT_ENCODING,
	            "auto (default: BOM, HTTP charset, <meta>, detection) or an\n"
	            "encoding to decode every non-JSONL input as (gbk, big5, ...)"),
	TOOL_COMMON('o', "write to FILE (.zst, .gz, .xz, .bz2 compress)"),
	TOOL_COMMON(TOOL_OPT_REJECTS, NULL),
	TOOL_COMMON(TOOL_OPT_STATS, NULL),
	TOOL_COMMON(TOOL_OPT_STRICT, NULL),
	TOOL_COMMON(TOOL_OPT_MAX_LINE, "longest line or document accepted (default 64M)"),
	TOOL_COMMON(TOOL_OPT_FIELD, NULL),
	TOOL_COMMON_END,
};

static const struct tool_cli cli = { usage, cli_options, NULL };

/* Counters of the decoding: documents per source encoding other than UTF-8, and the
 * replacements made ("repaired_utf8" for ill-formed UTF-8, "undecodable" for bytes that
 * the source encoding does not define). */
static void count_encoding(llm_run *run, const llm_doc *d)
{
	bool utf8 = !d->encoding || strcmp(d->encoding, "utf-8") == 0;
	if (!utf8) {
		char name[64];
		snprintf(name, sizeof name, "encoding_%s", d->encoding);
		llm_run_count(run, name, 1);
	}
	if (d->repaired)
		llm_run_count(run, utf8 ? "repaired_utf8" : "undecodable", d->repaired);
}

/* Copy one input's documents to out; returns 0, or 1 when the input failed (already reported). */
static int cat_one(const char *path, const llm_docsrc_opts *o, const struct tool_common *co,
                   llm_writer *out, llm_run *run, llm_doc *d)
{
	llm_docsrc *src;
	if (llm_docsrc_open(&src, path, o) != LLM_OK) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	llm_run_begin_input(run, path, llm_docsrc_size(src));
	int rc, failed = 0;
	while ((rc = llm_docsrc_next(src, d)) != LLM_EOF) {
		if (rc == LLM_OK) {
			int dom = llm_run_lang(run, llm_run_in(run, d->bytes, d->domain, d->domain_len),
			                       d->lang, d->lang_len);
			count_encoding(run, d);
			if (llm_writer_write(out, d->out, d->out_len) != LLM_OK ||
			    llm_writer_write(out, "\n", 1) != LLM_OK)
				die_lib();
			llm_run_out(run, dom, d->out_len + 1);
		} else if (rc == LLM_EFORMAT && d->reason) {
			if (co->strict)
				die("%s:%llu: %s", d->file, (unsigned long long)d->line, d->msg);
			llm_warn_at(d->file, d->line, "%s", d->msg);
			int dom = d->rec ? llm_run_in_rec(run, d->bytes, d->rec)
			                 : llm_run_in(run, d->bytes, d->domain, d->domain_len);
			dom = llm_run_lang(run, dom, d->lang, d->lang_len);
			if (llm_run_reject(run, dom, d->reason, d->raw ? d->raw : "", d->raw_len, d->rec,
			                   d->extra.len ? d->extra.p : NULL, d->file, d->line) != LLM_OK)
				die_lib();
		} else {
			llm_error("%s", llm_last_error());
			failed = 1;
			break;
		}
		llm_run_progress(run, d->raw_bytes);
	}
	if (llm_docsrc_skipped(src))
		llm_run_count(run, "warc_records_without_document", llm_docsrc_skipped(src));
	llm_docsrc_free(src);
	return failed;
}

int main(int argc, char **argv)
{
	tool_init("llm-cat");
	struct tool_common co;
	tool_common_init(&co, &cli);
	llm_docsrc_opts o = { 0 };
	int c;
	while ((c = tool_getopt(&co, argc, argv)) != -1) {
		switch (c) {
		case 'f': o.format = tool_choice("--format", optarg, llm_docsrc_format_names); break;
		case OPT_LINES: o.split = LLM_DOCSRC_LINES; break;
		case OPT_PARAGRAPHS: o.split = LLM_DOCSRC_PARAGRAPHS; break;
		case OPT_DOMAIN: o.domain = optarg; break;
		case OPT_LANG: o.lang = optarg; break;
		case OPT_SOURCE: o.source = optarg; break;
		case OPT_ENCODING:
			if (strcmp(optarg, "auto") == 0)
				o.encoding = NULL;
			else if (llm_charset_known(optarg))
				o.encoding = optarg;
			else
				usage_error("--encoding: unknown encoding '%s'", optarg);
			break;
		default: tool_bad_option();
		}
	}
	o.field = co.field;
	o.max_line = co.max_line;

	llm_writer *out;
	if (llm_writer_open(&out, co.output) != LLM_OK)
		die_lib();
	llm_run *run = tool_run_new(&co);
	llm_doc d;
	llm_doc_init(&d);
	int failed = 0;
	if (optind == argc)
		failed |= cat_one("-", &o, &co, out, run, &d);
	for (int i = optind; i < argc; i++)
		failed |= cat_one(argv[i], &o, &co, out, run, &d);
	llm_doc_release(&d);
	if (llm_writer_close(out) != LLM_OK) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	return tool_run_finish(run, failed);
}
