/*
 * llm-tokenize — documents to tokens with a byte-level BPE identical to tiktoken and Hugging
 * Face tokenizers; `decode` turns tokens back into documents; `train` learns a tokenizer.
 *
 * This file holds the options, the tokenizer's loading and main; each subcommand is a file
 * of tools/llm-tokenize/ (llm-tokenize.h lists them), and the work they share is lib/tok's.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llm-tokenize/llm-tokenize.h"
#include "tok/pretok.h"

static const char usage[] =
	"usage: llm-tokenize [options] -t TOKENIZER [file ...]\n"
	"       llm-tokenize decode [options] -t TOKENIZER [file ...]\n"
	"       llm-tokenize train [options] --vocab-size N -o tokenizer.json [file ...]\n"
	"\n"
	"Encode JSONL documents into the token stream (or JSONL with --format jsonl); decode a\n"
	"token stream or token JSONL back into documents; train a byte-level BPE tokenizer.\n"
	"TOKENIZER: tokenizer.json, a tiktoken rank file, a GPT-2 vocab.json, or a SentencePiece\n"
	"model (tokenizer.model).\n"
	"With no file, or when file is -, read standard input.\n"
	"\n";

enum {
	OPT_MERGES = TOOL_OPT_FIRST_PRIVATE, OPT_PATTERN, OPT_SPECIAL_TOKENS, OPT_EOS, OPT_NO_EOS, OPT_BOS, OPT_SPECIAL,
	OPT_META, OPT_KEEP_SPECIAL, OPT_VOCAB_SIZE, OPT_MIN_FREQ, OPT_TIKTOKEN,
	OPT_MEMORY, OPT_TMPDIR, OPT_SUPERBPE, OPT_SAMPLE, OPT_ALPHA, OPT_NBEST, OPT_SEED
};

static const struct tool_option cli_options[] = {
	TOOL_OPTION("tokenizer", 't', "FILE", 0,
	            "tokenizer.json, tiktoken rank file, GPT-2 vocab.json, or\n"
	            "SentencePiece model (BPE or Unigram)"),
	TOOL_OPTION("merges", 0, "FILE", OPT_MERGES, "merges.txt for a GPT-2 vocab.json"),
	TOOL_OPTION("encoding", 'e', "NAME", 0,
	            "rank file encoding: gpt2, r50k, p50k, cl100k, o200k, llama3, qwen,\n"
	            "qwen3.5 (default: from the file name)"),
	TOOL_OPTION("special-tokens", 0, "FILE", OPT_SPECIAL_TOKENS,
	            "a rank file's special tokens, a JSON object {\"text\": id}\n"
	            "(instead of the encoding's)"),
	TOOL_OPTION("pattern", 0, "REGEX", OPT_PATTERN,
	            "pre-tokenizer pattern (or an encoding name) instead of the file's;\n"
	            "train: default o200k, also deepseek"),
	TOOL_OPTION("format", 'f', "FMT", 0,
	            "encode: stream (default) or jsonl; decode: jsonl (default) or text"),
	TOOL_TEXT("      --eos, --no-eos   "
	          "append the end-of-text token to every document (default on)"),
	TOOL_OPTION_F("eos", 0, NULL, OPT_EOS, TOOL_OPTF_NOHELP, NULL),
	TOOL_OPTION_F("no-eos", 0, NULL, OPT_NO_EOS, TOOL_OPTF_NOHELP, NULL),
	TOOL_OPTION("bos", 0, NULL, OPT_BOS, "prepend the beginning-of-text token"),
	TOOL_OPTION("special", 0, "MODE", OPT_SPECIAL,
	            "special-token text in documents: ignore (default, plain text),\n"
	            "allow (becomes the special token), error (reject the document)"),
	TOOL_OPTION("meta", 0, "KEYS", OPT_META,
	            "fields copied into each record (default id,domain,lang,weight)"),
	TOOL_OPTION("keep-special", 0, NULL, OPT_KEEP_SPECIAL,
	            "decode: keep a leading BOS and trailing EOS"),
	TOOL_OPTION("sample", 0, NULL, OPT_SAMPLE,
	            "SentencePiece model: sample a segmentation (subword regularization;\n"
	            "BPE-dropout for a BPE model)"),
	TOOL_OPTION("alpha", 0, "A", OPT_ALPHA,
	            "--sample: smoothing (Unigram), or a merge's dropout (BPE); default 0.1"),
	TOOL_OPTION("nbest", 0, "N", OPT_NBEST,
	            "--sample: from the N best segmentations (default -1: from all)"),
	TOOL_OPTION("seed", 0, "N", OPT_SEED,
	            "--sample: seed; a document's sample depends on it and its text (default 0)"),
	TOOL_TEXT(""),
	TOOL_TEXT("train:"),
	TOOL_OPTION("vocab-size", 0, "N", OPT_VOCAB_SIZE,
	            "size of the vocabulary including the 256 bytes and specials"),
	TOOL_OPTION("min-frequency", 0, "F", OPT_MIN_FREQ,
	            "merge only pairs seen at least F times (default 2)"),
	TOOL_OPTION("special", 0, "TOKEN", OPT_SPECIAL,
	            "add a special token (repeatable; default <|endoftext|>)"),
	TOOL_OPTION("tiktoken", 0, "FILE", OPT_TIKTOKEN, "also write the ranks as a tiktoken file"),
	TOOL_OPTION("memory", 0, "SIZE", OPT_MEMORY,
	            "piece counts beyond SIZE spill to disk, and training goes in\n"
	            "rounds on the pieces that fit (default: a quarter of memory)"),
	TOOL_OPTION("superbpe", 0, "T", OPT_SUPERBPE,
	            "SuperBPE: from T tokens on, learn merges across spaces"),
	TOOL_OPTION("tmpdir", 0, "DIR", OPT_TMPDIR,
	            "temporary files there (default: $TMPDIR, else /tmp)"),
	TOOL_TEXT(""),
	TOOL_COMMON('o', "write to FILE (.zst, .gz, .xz, .bz2 compress)"),
	TOOL_COMMON(TOOL_OPT_THREADS, "worker threads (0 = one per core; default 1)"),
	TOOL_COMMON(TOOL_OPT_REJECTS, NULL),
	TOOL_COMMON(TOOL_OPT_STATS, "run summary as JSON, with per-domain token length sketches"),
	TOOL_COMMON(TOOL_OPT_STRICT, "stop at the first bad record (exit 1)"),
	TOOL_COMMON(TOOL_OPT_MAX_LINE, NULL),
	TOOL_COMMON(TOOL_OPT_FIELD, "text field of the documents (default \"text\")"),
	TOOL_COMMON_END,
};

static const struct tool_cli cli = { usage, cli_options, "decode\0train\0" };

enum { CMD_ENCODE, CMD_DECODE, CMD_TRAIN };


llm_bpe *tok_load_tokenizer(const struct tok_opts *o)
{
	if (!o->tokenizer)
		usage_error("a tokenizer is required (-t FILE)");
	const char *pattern = o->pattern;
	size_t npat = 0;
	if (pattern && llm_pretok_named_seq(pattern, &npat) && npat > 1)
		usage_error("--pattern %s is a sequence of patterns: only train takes it (the "
		            "tokenizer.json it writes holds them)", pattern);
	if (pattern && llm_pretok_named(pattern))
		pattern = llm_pretok_named(pattern);
	llm_bpe *b;
	llm_bpe_load_opts lo = { o->merges, o->encoding, pattern, o->special_tokens, o->co.threads };
	if (llm_bpe_load_with(&b, o->tokenizer, &lo) != LLM_OK)
		die_lib();
	return b;
}

int main(int argc, char **argv)
{
	tool_init("llm-tokenize");
	tool_save_cmdline(argc, argv);
	struct tok_opts o;
	int cmd = CMD_ENCODE;
	char *meta_list = NULL;
	memset(&o, 0, sizeof o);
	tool_common_init(&o.co, &cli);
	o.eos = true;
	o.min_freq = 2;
	o.alpha = 0.1; /* sentencepiece's default */
	o.nbest = -1;
	long pages = sysconf(_SC_PHYS_PAGES), pagesize = sysconf(_SC_PAGESIZE);
	o.memory = pages > 0 && pagesize > 0 ? (size_t)pages / 4 * (size_t)pagesize : (size_t)1 << 30;
	if (argc > 1 && strcmp(argv[1], "decode") == 0)
		cmd = CMD_DECODE;
	else if (argc > 1 && strcmp(argv[1], "train") == 0)
		cmd = CMD_TRAIN;
	if (cmd != CMD_ENCODE) {
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	int c;
	while ((c = tool_getopt(&o.co, argc, argv)) != -1) {
		switch (c) {
		case 't': o.tokenizer = optarg; break;
		case 'e': o.encoding = optarg; break;
		case 'f': o.format = optarg; break;
		case OPT_MERGES: o.merges = optarg; break;
		case OPT_PATTERN: o.pattern = optarg; break;
		case OPT_SPECIAL_TOKENS: o.special_tokens = optarg; break;
		case OPT_EOS: o.eos = true; break;
		case OPT_NO_EOS: o.eos = false; break;
		case OPT_BOS: o.bos = true; break;
		case OPT_SPECIAL:
			if (cmd == CMD_TRAIN) {
				if (o.nspecials == (int)(sizeof o.specials / sizeof *o.specials))
					usage_error("too many --special tokens");
				if (!*optarg)
					usage_error("--special needs a token");
				o.specials[o.nspecials++] = optarg;
			} else {
				o.special_arg = optarg;
			}
			break;
		case OPT_META: meta_list = optarg; break;
		case OPT_KEEP_SPECIAL: o.keep_special = true; break;
		case OPT_VOCAB_SIZE: o.vocab_size = tool_int("--vocab-size", optarg, 257, 1 << 24); break;
		case OPT_MIN_FREQ: o.min_freq = tool_int("--min-frequency", optarg, 1, 1LL << 40); break;
		case OPT_TIKTOKEN: o.tiktoken = optarg; break;
		case OPT_MEMORY:
			o.memory = (size_t)tool_size("--memory", optarg);
			if (o.memory < ((size_t)1 << 20))
				usage_error("--memory: at least 1M");
			break;
		case OPT_TMPDIR: o.tmpdir = optarg; break;
		case OPT_SUPERBPE: o.superbpe = tool_int("--superbpe", optarg, 256, 1 << 24); break;
		case OPT_SAMPLE: o.sample = true; break;
		case OPT_ALPHA: o.alpha = tool_double("--alpha", optarg, 0, 1e6); break;
		case OPT_NBEST: o.nbest = (int)tool_int("--nbest", optarg, -1, 1024); break;
		case OPT_SEED: o.seed = (unsigned long long)tool_int("--seed", optarg, 0, 1LL << 62); break;
		default: tool_bad_option();
		}
	}
	static const char *const default_meta[] = { "id", "domain", "lang", "weight", NULL };
	if (meta_list) {
		int n = 0;
		for (char *k = strtok(meta_list, ","); k; k = strtok(NULL, ",")) {
			if (n == (int)(sizeof o.meta_keys / sizeof *o.meta_keys) - 1)
				usage_error("--meta: too many keys");
			o.meta_keys[n++] = k;
		}
		o.meta_keys[n] = NULL;
	} else {
		memcpy(o.meta_keys, default_meta, sizeof default_meta);
	}
	if (cmd == CMD_DECODE)
		return tok_decode(&o, argc - optind, argv + optind);
	if (cmd == CMD_TRAIN)
		return tok_train(&o, argc - optind, argv + optind);
	return tok_encode(&o, argc - optind, argv + optind);
}
