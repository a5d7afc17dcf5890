/*
 * llm-eval — evaluate a checkpoint (llmkit or Hugging Face Llama) on the CPU or a GPU.
 *
 *   loss      shards, manifests (val split by default) or raw JSONL documents -> loss,
 *             perplexity and bits per byte per domain
 *   choice    multiple-choice task JSONL -> acc and acc_norm per domain
 *   generate  a prompt -> sampled or greedy continuation (key-value cache)
 *   compare   several checkpoints -> one row each (step, tokens, loss, ppl, bits/byte, acc)
 * A table goes to stdout (generate: the text), --json FILE writes the same as JSON.
 * Documents and task items are the records of the run (core/run.h): each one read is scored
 * or rejected, a malformed line with its reason to --rejects.
 * --device is resolved here, once; the forwards of loss, choice and compare run on the
 * backend it names (model/backend.h); generate stays on the CPU.
 * Memory: the model, its activations for --batch x --seq-len and the logits (eval.h); shards
 * are mapped, documents and task items read one at a time.
 *
 * This file holds the options and main; the subcommands are in tools/llm-eval/.
 */
#include <stdlib.h>
#include <string.h>

#include "llm-eval/llm-eval.h"
#include "model/gpu.h"
#include "model/ops.h"
#include "tool.h"


static const char usage[] =
	"usage: llm-eval loss --ckpt DIR [options] [file ...]\n"
	"       llm-eval choice --ckpt DIR [-t TOKENIZER] [options] [task.jsonl ...]\n"
	"       llm-eval generate --ckpt DIR [-t TOKENIZER] --prompt TEXT [options]\n"
	"       llm-eval compare --data MANIFEST [options] checkpoint ...\n"
	"       llm-eval task --ckpt DIR [-t TOKENIZER] [options] task.yaml ...\n"
	"\n"
	"Evaluate a checkpoint: loss, perplexity and bits per byte per domain on shards, a\n"
	"manifest's split or JSONL documents; multiple-choice accuracy; generation; a table over\n"
	"the checkpoints of a run; lm-evaluation-harness task YAML over local JSONL. A file is a\n"
	"shard, a manifest.json (or its directory), or JSONL documents (tokenized with -t); with\n"
	"no file, or -, documents come from standard input.\n"
	"\n";

enum {
	OPT_CKPT = TOOL_OPT_FIRST_PRIVATE, OPT_TOKENIZER, OPT_JSON, OPT_SEQ, OPT_BATCH, OPT_SPLIT,
	OPT_SAMPLED, OPT_SEED, OPT_DELIM, OPT_PROMPT, OPT_MAX_TOKENS, OPT_TEMP, OPT_TOP_K,
	OPT_TOP_P, OPT_NO_CACHE, OPT_IDS, OPT_DATA, OPT_TASK, OPT_NO_PREFIX, OPT_DEVICE,
	OPT_PRECISION, OPT_MODE, OPT_LOG_SAMPLES, OPT_FEWSHOT, OPT_FEWSHOT_FROM, OPT_DESCRIPTION
};

static const struct tool_option cli_options[] = {
	TOOL_OPTION("ckpt", 0, "DIR", OPT_CKPT,
	            "llmkit checkpoint, checkpoint root or run directory, or a\n"
	            "Hugging Face Llama directory (config.json, model.safetensors)"),
	TOOL_OPTION("tokenizer", 't', "FILE", 0,
	            "tokenizer (documents, tasks, prompts; bits per byte on shards);\n"
	            "default: tokenizer.json beside the model or in its run\n"
	            "directory. It must be the one the checkpoint was trained with"),
	TOOL_OPTION("stats", 0, "FILE", OPT_JSON,
	            "write the results as JSON too (--json FILE: the same)"),
	TOOL_OPTION_F("json", 0, "FILE", OPT_JSON, TOOL_OPTF_NOHELP, NULL),
	TOOL_OPTION("seq-len", 0, "T", OPT_SEQ,
	            "tokens per window (default: the checkpoint's training length,\n"
	            "else 1024, at most max_position_embeddings)"),
	TOOL_OPTION("batch", 0, "B", OPT_BATCH, "windows per forward pass (default 8)"),
	TOOL_TEXT("loss:"),
	TOOL_CHOICE("mode", 0, "M", OPT_MODE, "stream\0rolling\0",
	            "stream (default): each domain's documents as one stream;\n"
	            "rolling: each JSONL document alone, as lm-evaluation-harness's\n"
	            "loglikelihood_rolling (word and byte perplexity too)"),
	TOOL_CHOICE("split", 0, "NAME", OPT_SPLIT, "val\0train\0all\0",
	            "manifest split: val (default), train or all"),
	TOOL_OPTION("sampled", 0, "N", OPT_SAMPLED,
	            "instead, the N validation micro-batches llm-train draws with\n"
	            "--eval-batches N (its seed, --batch and --seq-len by default)"),
	TOOL_OPTION("seed", 0, "N", OPT_SEED, "seed of --sampled (default: the checkpoint's)"),
	TOOL_TEXT("choice:"),
	TOOL_OPTION("delimiter", 0, "STR", OPT_DELIM, "between context and choice (default \" \")"),
	TOOL_OPTION("num-fewshot", 0, "N", OPT_FEWSHOT,
	            "N examples before each item, drawn as lm-evaluation-harness\n"
	            "draws them (default 0)"),
	TOOL_OPTION("fewshot-from", 0, "FILE", OPT_FEWSHOT_FROM,
	            "task items to draw them from (default: the task itself,\n"
	            "never an item for itself)"),
	TOOL_OPTION("description", 0, "TEXT", OPT_DESCRIPTION, "text before the examples"),
	TOOL_OPTION("seed", 0, "N", OPT_SEED, "seed of the few-shot draws (default 1234)"),
	TOOL_OPTION("log-samples", 0, "FILE", OPT_LOG_SAMPLES,
	            "write each item as JSONL: choices, log-likelihoods, lengths,\n"
	            "the pick and the gold"),
	TOOL_OPTION("no-prefix", 0, NULL, OPT_NO_PREFIX,
	            "no beginning-of-text (else end-of-text) token before contexts\n"
	            "and prompts (lm-evaluation-harness's default for most models)"),
	TOOL_TEXT("generate:"),
	TOOL_OPTION("prompt", 0, "TEXT", OPT_PROMPT, "the prompt"),
	TOOL_OPTION("max-tokens", 0, "N", OPT_MAX_TOKENS,
	            "new tokens at most (default 64); stops after end-of-text"),
	TOOL_OPTION("temperature", 0, "X", OPT_TEMP, "0 = greedy (default 1)"),
	TOOL_OPTION("top-k", 0, "K", OPT_TOP_K,
	            "sample from the K most likely tokens (default 0 = all)"),
	TOOL_OPTION("top-p", 0, "P", OPT_TOP_P, "nucleus sampling (default 1 = off)"),
	TOOL_OPTION("seed", 0, "N", OPT_SEED, "sampling seed (default 1)"),
	TOOL_OPTION("no-cache", 0, NULL, OPT_NO_CACHE,
	            "recompute the whole sequence per token (the reference)"),
	TOOL_OPTION("ids", 0, NULL, OPT_IDS, "print token ids instead of text"),
	TOOL_TEXT("compare:"),
	TOOL_OPTION("data", 0, "MANIFEST", OPT_DATA,
	            "shards to evaluate each checkpoint on (val split)"),
	TOOL_OPTION("task", 0, "FILE", OPT_TASK, "also a multiple-choice task (needs -t)"),
	TOOL_TEXT(""),
	TOOL_CHOICE("device", 0, "D", OPT_DEVICE, "cpu\0cuda\0auto\0",
	            "cpu, cuda or auto (cuda when a GPU is visible; default cpu);\n"
	            "loss, choice and compare (generate runs on the CPU)"),
	TOOL_CHOICE("precision", 0, "P", OPT_PRECISION, "fp32\0bf16\0fp16\0mixed\0",
	            "on a GPU: fp32 (default), bf16, fp16 or mixed"),
	TOOL_COMMON(TOOL_OPT_FIELD, "text field of documents (default \"text\")"),
	TOOL_COMMON(TOOL_OPT_MAX_LINE, NULL),
	TOOL_COMMON(TOOL_OPT_REJECTS,
	            "write every malformed document or task line there, with\n"
	            "\"reject_reason\" (then they do not fail the run)"),
	TOOL_COMMON(TOOL_OPT_STRICT, "a malformed document or task line is fatal"),
	TOOL_COMMON(TOOL_OPT_THREADS, "threads for matrix products (default: OpenBLAS's choice)"),
	TOOL_COMMON('q', "no progress line or summary on stderr"),
	TOOL_COMMON('v', NULL),
	TOOL_COMMON(TOOL_OPT_VERSION, NULL),
	TOOL_COMMON('h', NULL),
	TOOL_OPTIONS_END,
};

static const struct tool_cli cli = { usage, cli_options,
                                     "loss\0choice\0generate\0compare\0task\0" };


int main(int argc, char **argv)
{
	tool_init("llm-eval");
	tool_save_cmdline(argc, argv);
	evt_opts o = { .batch = 0, .split = EVT_SPLIT_VAL, .max_tokens = 64, .seed = -1,
	           .temperature = 1, .top_p = 1, .device = LLM_DEVICE_CPU, .precision = -1 };
	tool_common_init(&o.co, &cli);
	if (argc < 2)
		usage_error("a command is required: loss, choice, generate, compare or task");
	const char *cmd = argv[1];
	if (cmd[0] == '-') {
		/* --help and --version before any command */
		cmd = NULL;
	} else {
		argv[1] = argv[0]; /* getopt's messages name the program, not the command */
		argv++;
		argc--;
	}
	int c;
	while ((c = tool_getopt(&o.co, argc, argv)) != -1) {
		switch (c) {
		case OPT_CKPT: o.ckpt = optarg; break;
		case 't': o.tokenizer = optarg; break;
		case OPT_JSON: o.json = optarg; break;
		case OPT_SEQ: o.seq = (int)tool_int("--seq-len", optarg, 1, 1 << 20); break;
		case OPT_BATCH: o.batch = (int)tool_int("--batch", optarg, 1, 1 << 16); break;
		case OPT_SPLIT: o.split = tool_choice("--split", optarg, "val\0train\0all\0"); break;
		case OPT_MODE: o.mode = tool_choice("--mode", optarg, "stream\0rolling\0"); break;
		case OPT_SAMPLED: o.sampled = (int)tool_int("--sampled", optarg, 1, 1 << 20); break;
		case OPT_SEED: o.seed = tool_int("--seed", optarg, 0, INT64_MAX); break;
		case OPT_DELIM: o.delim = optarg; break;
		case OPT_LOG_SAMPLES: o.log_samples = optarg; break;
		case OPT_FEWSHOT:
			o.num_fewshot = (int)tool_int("--num-fewshot", optarg, 0, 1 << 16);
			o.fewshot_given = 1;
			break;
		case OPT_FEWSHOT_FROM: o.fewshot_from = optarg; break;
		case OPT_DESCRIPTION: o.description = optarg; break;
		case OPT_PROMPT: o.prompt = optarg; break;
		case OPT_MAX_TOKENS: o.max_tokens = (int)tool_int("--max-tokens", optarg, 0, 1 << 20); break;
		case OPT_TEMP: o.temperature = tool_double("--temperature", optarg, 0, 1e6); break;
		case OPT_TOP_K: o.top_k = (int)tool_int("--top-k", optarg, 0, INT32_MAX); break;
		case OPT_TOP_P: o.top_p = tool_double("--top-p", optarg, 1e-9, 1); break;
		case OPT_NO_CACHE: o.no_cache = 1; break;
		case OPT_IDS: o.ids = 1; break;
		case OPT_DATA: o.data = optarg; break;
		case OPT_TASK: o.task = optarg; break;
		case OPT_NO_PREFIX: o.no_prefix = 1; break;
		case OPT_DEVICE: o.device = tool_parsed("--device", optarg, llm_device_parse); break;
		case OPT_PRECISION: o.precision = tool_parsed("--precision", optarg, llm_precision_parse); break;
		default: tool_bad_option();
		}
	}
	if (!cmd)
		usage_error("a command is required: loss, choice, generate, compare or task");
	if (o.co.threads_given)
		llm_ops_set_threads(o.co.threads);
	if (o.device == LLM_DEVICE_CPU && o.precision >= 0 && o.precision != LLM_PREC_FP32)
		usage_error("--precision other than fp32 needs --device cuda");
	if (strcmp(cmd, "generate") == 0) {
		/* Generation decodes token by token with a key-value cache, on the CPU only. */
		if (o.device == LLM_DEVICE_CUDA)
			usage_error("generate runs on the CPU only (no --device cuda)");
		o.device = LLM_DEVICE_CPU;
	}
	if (llm_device_resolve(o.device, &o.device) != LLM_OK)
		die_lib();
	char **files = argv + optind;
	int nfiles = argc - optind;
	int rc;
	if (strcmp(cmd, "loss") == 0)
		rc = evt_cmd_loss(&o, files, nfiles);
	else if (strcmp(cmd, "choice") == 0)
		rc = evt_cmd_choice(&o, files, nfiles);
	else if (strcmp(cmd, "generate") == 0)
		rc = evt_cmd_generate(&o, nfiles);
	else if (strcmp(cmd, "compare") == 0)
		rc = evt_cmd_compare(&o, files, nfiles);
	else if (strcmp(cmd, "task") == 0)
		rc = evt_cmd_task(&o, files, nfiles);
	else
		usage_error("unknown command '%s' (loss, choice, generate, compare or task)", cmd);
	return rc;
}
