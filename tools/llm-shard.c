/*
 * llm-shard — token streams into checksummed, mmap-able shards (or Megatron, llm.c and raw
 * exports), with a train/val split by document id and per-domain length-quantile truncation;
 * and the tools around shards: --info, --verify, --dump.
 *
 * Input: token streams (llm-tokenize, llm-noise). Output: DIR/manifest.json naming the shards
 * of one generation, DIR/gen-N/train-00000.bin ... (lib/data/shard.h); a new dataset replaces
 * the old one when its manifest is renamed over the old one's, then the old generation is
 * removed. Memory: the shard writer's buffer, 24 bytes per document
 * of the shard being written, one document, and one small sketch per domain. Truncation
 * without --sketches reads the input twice (stdin is spooled to a temporary file first).
 *
 * This file holds the options and main; the work of each mode is in tools/llm-shard/, the
 * dataset directory's generations in lib/data/dataset.h.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "llm-shard/llm-shard.h"
#include "tok/bpe.h"

static const char usage[] =
	"usage: llm-shard [options] -o dir [file ...]\n"
	"       llm-shard --info file ...\n"
	"       llm-shard --verify file ...\n"
	"       llm-shard --dump [options] file ...\n"
	"\n"
	"Write token streams as shards plus DIR/manifest.json (or export them), or inspect,\n"
	"verify and dump shards and manifests. With no input file, or -, read standard input.\n"
	"\n";

enum {
	OPT_FORMAT = TOOL_OPT_FIRST_PRIVATE, OPT_PREFIX, OPT_SHARD_SIZE, OPT_VAL, OPT_SEED, OPT_EOS,
	OPT_TOKENIZER, OPT_TRUNCATE, OPT_SKETCHES, OPT_INFO, OPT_VERIFY, OPT_DUMP
};

static const struct tool_option cli_options[] = {
	TOOL_COMMON_ARG('o', "DIR", "output directory (created if missing); --dump: output file"),
	TOOL_CHOICE("format", 0, "FMT", OPT_FORMAT, "shards\0megatron\0llmc\0raw\0tokens\0jsonl\0",
	            "shards (default), megatron, llmc, raw; --dump: tokens, jsonl"),
	TOOL_OPTION("prefix", 0, "NAME", OPT_PREFIX,
	            "name files NAME-train-00000.bin (default: train-00000.bin)"),
	TOOL_OPTION("shard-size", 0, "SIZE", OPT_SHARD_SIZE, "bytes per shard (default 1G)"),
	TOOL_OPTION("val-fraction", 0, "F", OPT_VAL,
	            "share of documents in the val split (default 0.01)"),
	TOOL_OPTION("seed", 0, "N", OPT_SEED, "seed of the split hash (default 0)"),
	TOOL_OPTION("eos", 0, "ID", OPT_EOS, "end-of-text id, appended to documents that lack it"),
	TOOL_OPTION("tokenizer", 0, "FILE", OPT_TOKENIZER,
	            "take the end-of-text id from this tokenizer"),
	TOOL_OPTION("truncate-quantile", 0, "Q", OPT_TRUNCATE,
	            "cut each domain's documents at its Q length quantile"),
	TOOL_OPTION("sketches", 0, "FILE", OPT_SKETCHES,
	            "length sketches from llm-tokenize --stats (else a first pass)"),
	TOOL_OPTION("info", 0, NULL, OPT_INFO, "summarise shards and manifests"),
	TOOL_OPTION("verify", 0, NULL, OPT_VERIFY, "check every checksum (exit 1 on any mismatch)"),
	TOOL_OPTION("dump", 0, NULL, OPT_DUMP, "write shards back as a token stream or JSONL"),
	TOOL_COMMON(TOOL_OPT_REJECTS, NULL),
	TOOL_COMMON(TOOL_OPT_STATS, NULL),
	TOOL_COMMON(TOOL_OPT_STRICT, "stop at the first bad record (exit 1)"),
	TOOL_COMMON_END,
};

static const struct tool_cli cli = { usage, cli_options, NULL };


/* The command line beyond what it sets in the run. */
struct args {
	struct tool_common co;
	const char *format, *tokenizer, *sketches;
	int mode;
};

static void parse_option(struct args *a, struct shard_run *r, int c, const char *arg)
{
	switch (c) {
	case OPT_FORMAT: a->format = arg; break;
	case OPT_PREFIX: r->prefix = arg; break;
	case OPT_SHARD_SIZE:
		r->shard_size = tool_size("--shard-size", arg);
		if (r->shard_size < 4 * LLM_SHARD_ALIGN)
			usage_error("--shard-size must be at least 16K");
		break;
	case OPT_VAL: r->val_fraction = tool_double("--val-fraction", arg, 0, 1); break;
	case OPT_SEED: r->seed = (uint64_t)tool_int("--seed", arg, 0, INT64_MAX); break;
	case OPT_EOS: r->eos = (uint32_t)tool_int("--eos", arg, 0, UINT32_MAX - 1); break;
	case OPT_TOKENIZER: a->tokenizer = arg; break;
	case OPT_TRUNCATE: r->quantile = tool_double("--truncate-quantile", arg, 0, 1); break;
	case OPT_SKETCHES: a->sketches = arg; break;
	case OPT_INFO: a->mode = SHARD_MODE_INFO; break;
	case OPT_VERIFY: a->mode = SHARD_MODE_VERIFY; break;
	case OPT_DUMP: a->mode = SHARD_MODE_DUMP; break;
	default: tool_bad_option();
	}
}

static void parse_args(struct args *a, struct shard_run *r, int argc, char **argv)
{
	memset(a, 0, sizeof *a);
	tool_common_init(&a->co, &cli);
	a->mode = SHARD_MODE_WRITE;
	memset(r, 0, sizeof *r);
	r->shard_size = (uint64_t)1 << 30;
	r->val_fraction = 0.01;
	r->eos = LLM_SHARD_NO_EOS;
	llm_json_rec_init(&r->rec); /* before the first pass, which parses metadata too */
	int c;
	while ((c = tool_getopt(&a->co, argc, argv)) != -1)
		parse_option(a, r, c, optarg);
	r->strict = a->co.strict;
	if (a->mode != SHARD_MODE_WRITE && (a->co.rejects || a->co.strict))
		usage_error("--rejects and --strict are for writing shards or exports");
}

/* Check the writing options and make the output directory. */
static void setup_output(const struct args *a, struct shard_run *r)
{
	static const int fmts[] = { SHARD_FMT_SHARDS, LLM_EXPORT_MEGATRON, LLM_EXPORT_LLMC, LLM_EXPORT_RAW };
	r->format = a->format ? fmts[tool_choice("--format", a->format, "shards\0megatron\0llmc\0raw\0")]
	                      : SHARD_FMT_SHARDS;
	if (!a->co.output)
		usage_error("-o DIR is required: shards are files in a directory");
	if (a->sketches && r->quantile == 0)
		usage_error("--sketches is only used with --truncate-quantile");
	r->dir = a->co.output;
	if (mkdir(r->dir, 0777) != 0 && errno != EEXIST)
		die("%s: %s", r->dir, strerror(errno));
}

/* --tokenizer: its id for the manifest, and its end-of-text id unless --eos gave one. */
static void take_tokenizer(struct shard_run *r, const char *path)
{
	llm_bpe *bpe;
	if (llm_bpe_load(&bpe, path, NULL, NULL, NULL) != LLM_OK)
		die_lib();
	r->tokenizer_id = llm_bpe_file_id(bpe);
	if (r->eos == LLM_SHARD_NO_EOS) {
		if (llm_bpe_eos(bpe) < 0)
			die("%s: the tokenizer has no end-of-text token; give --eos", path);
		r->eos = (uint32_t)llm_bpe_eos(bpe);
	}
	llm_bpe_free(bpe);
}

int main(int argc, char **argv)
{
	tool_init("llm-shard");
	tool_save_cmdline(argc, argv);
	struct args a;
	struct shard_run r;
	parse_args(&a, &r, argc, argv);
	if (a.mode != SHARD_MODE_WRITE)
		return shard_inspect(a.mode, a.format, a.co.output, argc, argv);
	setup_output(&a, &r);
	int shards = r.format == SHARD_FMT_SHARDS;
	llm_dataset ds;
	if (shards) {
		if (llm_dataset_open(&ds, r.dir) != LLM_OK)
			die_lib();
		r.gen = ds.name;
	}
	if (a.tokenizer)
		take_tokenizer(&r, a.tokenizer);
	shard_inputs in;
	shard_inputs_open(&in, &r, r.quantile > 0 && !a.sketches, argc, argv);
	int failed = r.quantile > 0 ? shard_find_cuts(&r, &in, a.sketches) : 0;
	r.run = tool_run_new(&a.co);
	failed |= shard_write_inputs(&r, &in);
	if (shards && !failed)
		failed |= shard_write_manifest(&r);
	if (r.quantile > 0)
		shard_stats_cuts(&r);
	shard_run_release(&r);
	shard_inputs_release(&in);
	return shards ? shard_publish(r.run, &ds, failed) : tool_run_finish(r.run, failed);
}
