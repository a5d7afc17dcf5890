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
	"\n"
	"  -f, --format FMT    auto (default), jsonl, text, html, warc, arc, archive\n"
	"      --lines         text: one document per line\n"
	"      --paragraphs    text: one document per blank-line separated block\n"
	"      --domain NAME   stamp \"domain\" on documents that have none\n"
	"      --lang CODE     stamp \"lang\" on documents that have none\n"
	"      --source NAME   stamp \"source\" (default for non-JSONL input: the file name)\n"
	"      --encoding ENC  auto (default: BOM, HTTP charset, <meta>, detection) or an\n"
	"                      encoding to decode every non-JSONL input as (gbk, big5, ...)\n"
	"  -o, --output FILE   write to FILE (.zst, .gz, .xz, .bz2 compress)\n"
	"      --rejects FILE  write every rejected record there, with \"reject_reason\"\n"
	"      --stats FILE    write the run summary as JSON\n"
	"      --strict        stop at the first malformed record (exit 1)\n"
	"      --max-line SIZE longest line or document accepted (default 64M)\n"
	"      --field KEY     text field of JSONL records (default \"text\")\n"
	"  -q, --quiet         no progress line or summary\n"
	"  -v, --verbose       more messages\n"
	"      --version       print the version and exit\n"
	"  -h, --help          print this help and exit\n";

enum { OPT_LINES = TOOL_OPT_FIRST_PRIVATE, OPT_PARAGRAPHS, OPT_DOMAIN, OPT_LANG, OPT_SOURCE,
       OPT_ENCODING };

static const struct option longopts[] = {
	TOOL_COMMON_OPTIONS,
	{ "format", required_argument, NULL, 'f' },
	{ "lines", no_argument, NULL, OPT_LINES },
	{ "paragraphs", no_argument, NULL, OPT_PARAGRAPHS },
	{ "domain", required_argument, NULL, OPT_DOMAIN },
	{ "lang", required_argument, NULL, OPT_LANG },
	{ "source", required_argument, NULL, OPT_SOURCE },
	{ "encoding", required_argument, NULL, OPT_ENCODING },
	{ NULL, 0, NULL, 0 }
};

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
				die("%s", llm_last_error());
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
				die("%s", llm_last_error());
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
	tool_common_init(&co, usage);
	llm_docsrc_opts o = { 0 };
	int c;
	while ((c = getopt_long(argc, argv, TOOL_COMMON_SHORT "f:", longopts, NULL)) != -1) {
		if (tool_common_option(&co, c, optarg))
			continue;
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
		die("%s", llm_last_error());
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
