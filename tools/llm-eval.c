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
 * --device cuda runs the forwards of loss, choice and compare on a GPU copy of the model
 * (cudamodel.h, forward only); generate stays on the CPU.
 * Memory: the model, its activations for --batch x --seq-len and the logits (eval.h); shards
 * are mapped, documents and task items read one at a time.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/io.h"
#include "core/json.h"
#include "data/loader.h"
#include "data/shard.h"
#include "model/cudamodel.h"
#include "model/eval.h"
#include "model/fewshot.h"
#include "model/gpu.h"
#include "model/hf.h"
#include "model/model.h"
#include "model/ops.h"
#include "model/safetensors.h"
#include "model/train.h"
#include "tok/bpe.h"
#include "tool.h"

static const char usage[] =
	"usage: llm-eval loss --ckpt DIR [options] [file ...]\n"
	"       llm-eval choice --ckpt DIR [-t TOKENIZER] [options] [task.jsonl ...]\n"
	"       llm-eval generate --ckpt DIR [-t TOKENIZER] --prompt TEXT [options]\n"
	"       llm-eval compare --data MANIFEST [options] checkpoint ...\n"
	"\n"
	"Evaluate a checkpoint: loss, perplexity and bits per byte per domain on shards, a\n"
	"manifest's split or JSONL documents; multiple-choice accuracy; generation; a table over\n"
	"the checkpoints of a run. A file is a shard, a manifest.json (or its directory), or JSONL\n"
	"documents (tokenized with -t); with no file, or -, documents come from standard input.\n"
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
	TOOL_COMMON('q', "no summary on stderr"),
	TOOL_COMMON('v', NULL),
	TOOL_COMMON(TOOL_OPT_VERSION, NULL),
	TOOL_COMMON('h', NULL),
	TOOL_OPTIONS_END,
};

static const struct tool_cli cli = { usage, cli_options, "loss\0choice\0generate\0compare\0" };

enum { SPLIT_VAL, SPLIT_TRAIN, SPLIT_ALL };
enum { MODE_STREAM, MODE_ROLLING };

typedef struct {
	struct tool_common co;
	const char *ckpt, *tokenizer, *json, *prompt, *data, *task, *delim, *log_samples;
	const char *fewshot_from, *description;
	int num_fewshot;
	int seq, batch, split, mode, sampled, max_tokens, top_k, no_cache, ids, no_prefix;
	int device, precision; /* LLM_DEVICE_*, LLM_PREC_* (-1: not given) */
	int64_t seed; /* -1: default */
	double temperature, top_p;
} opts;

/* A loaded checkpoint and what its state says. */
typedef struct {
	llm_model *m;
	llm_cudamodel *gpu; /* --device cuda: the forwards run there */
	llm_hf_info info;
} model_t;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void load_model(model_t *mt, const char *path, const opts *o)
{
	memset(mt, 0, sizeof *mt);
	if (llm_hf_open(path, &mt->m, &mt->info) != LLM_OK)
		die_lib();
	llm_info("%s: %d layers, width %d, vocab %d, %s weights%s", mt->info.dir,
	         llm_model_get_config(mt->m)->num_hidden_layers,
	         llm_model_get_config(mt->m)->hidden_size, llm_model_get_config(mt->m)->vocab_size,
	         llm_safetensors_dtype_name(mt->info.dtype), mt->info.llmkit ? "" : " (Hugging Face)");
	if (o->device != LLM_DEVICE_CUDA)
		return;
	llm_cuda_options co;
	llm_cuda_options_init(&co);
	co.precision = o->precision < 0 ? LLM_PREC_FP32 : o->precision;
	co.inference = 1;
	if (llm_cudamodel_new(&mt->gpu, mt->m, &co) != LLM_OK ||
	    llm_cudamodel_set_params(mt->gpu, llm_model_params(mt->m)) != LLM_OK)
		die("%s: %s", mt->info.dir, llm_last_error());
	llm_info("%s: on %s in %s", mt->info.dir, llm_cudamodel_device(mt->gpu, NULL),
	         llm_precision_name(co.precision));
}

/* "device": ..., "precision": ... of the JSON results. */
static void device_json(llm_buf *b, const opts *o)
{
	llm_buf_addf(b, ", \"device\": \"%s\", \"precision\": \"%s\"",
	             o->device == LLM_DEVICE_CUDA ? "cuda" : "cpu",
	             llm_precision_name(o->device == LLM_DEVICE_CUDA && o->precision >= 0
	                                    ? o->precision : LLM_PREC_FP32));
}

static void free_model(model_t *mt)
{
	llm_cudamodel_free(mt->gpu);
	llm_model_free(mt->m);
	llm_hf_info_release(&mt->info);
}

static int seq_len(const opts *o, const model_t *mt)
{
	int maxT = llm_model_get_config(mt->m)->max_position_embeddings;
	/* rolling: lm-evaluation-harness's max_length, max_position_embeddings unless given */
	int T = o->seq ? o->seq : o->mode == MODE_ROLLING ? maxT
	      : mt->info.seq_len > 0 ? (int)mt->info.seq_len : 1024;
	if (T > maxT) {
		if (o->seq)
			usage_error("--seq-len %d exceeds the model's max_position_embeddings %d", T, maxT);
		T = maxT;
	}
	return T;
}

/* -t, or else the tokenizer beside the model or in its run directory (hf.h); NULL when there
 * is none. A tokenizer the checkpoint was not trained with is refused: its ids mean other
 * text, and the loss of the model on them means nothing. */
static llm_bpe *model_tokenizer(const opts *o, const model_t *mt)
{
	const char *path = o->tokenizer ? o->tokenizer : mt->info.tokenizer;
	if (!path)
		return NULL;
	llm_bpe *bpe;
	if (llm_bpe_load(&bpe, path, NULL, NULL, NULL) != LLM_OK)
		die_lib();
	uint64_t want = mt->info.tokenizer_id, got = llm_bpe_file_id(bpe);
	if (want && got != want)
		die("%s: tokenizer id %016llx, but %s was trained with %016llx", path,
		    (unsigned long long)got, mt->info.dir, (unsigned long long)want);
	if (!o->tokenizer)
		llm_info("%s: the tokenizer of %s", path, mt->info.dir);
	return bpe;
}

/* BOS when the tokenizer has one, else end-of-text: what precedes a document in training. */
static int64_t doc_prefix(const opts *o, const llm_bpe *bpe)
{
	if (o->no_prefix)
		return -1;
	int64_t b = llm_bpe_bos(bpe);
	return b >= 0 ? b : llm_bpe_eos(bpe);
}

static void write_json(const char *path, llm_buf *b)
{
	llm_buf_addc(b, '\n');
	if (path && llm_write_file(path, b->p, b->len) != LLM_OK)
		die_lib();
}

static void check_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout))
		die("write error: <stdout>: %s", strerror(errno));
}

/* ---- loss ---- */

static int is_dir(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int has_magic(const char *p, const char *magic)
{
	FILE *f = fopen(p, "rb");
	char b[8];
	int yes = f && fread(b, 1, 8, f) == 8 && memcmp(b, magic, 8) == 0;
	if (f)
		fclose(f);
	return yes;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Shards must be tokenized like the tokenizer that counts their bytes. */
static void check_tokenizer(const char *name, uint64_t id, const llm_bpe *bpe, const model_t *mt)
{
	if (bpe && id && llm_bpe_file_id(bpe) != id)
		die("%s: tokenizer id %016llx, but the tokenizer given is %016llx", name,
		    (unsigned long long)id, (unsigned long long)llm_bpe_file_id(bpe));
	if (mt->info.tokenizer_id && id && mt->info.tokenizer_id != id)
		llm_warn("%s: tokenizer id %016llx, but the model was trained on %016llx", name,
		         (unsigned long long)id, (unsigned long long)mt->info.tokenizer_id);
}

/* A shard file, or (man, ms) one listed by a manifest, which it must match. */
static void eval_shard(llm_evaluator *ev, llm_run *run, const char *path,
                       const llm_manifest *man, const llm_manifest_shard *ms, const llm_bpe *bpe,
                       const model_t *mt)
{
	llm_shard *s;
	if (llm_shard_open(&s, path, 0) != LLM_OK ||
	    (man && llm_manifest_check_shard(man, ms, s) != LLM_OK) || llm_shard_verify(s) != LLM_OK)
		die_lib();
	const llm_shard_info *si = llm_shard_get_info(s);
	check_tokenizer(path, si->tokenizer_id, bpe, mt);
	uint32_t *tok = NULL;
	size_t cap = 0;
	for (uint64_t i = 0; i < si->docs; i++) {
		llm_shard_doc d;
		llm_shard_get_doc(s, i, &d);
		if (d.len > cap) {
			cap = d.len;
			free(tok);
			tok = llm_malloc(cap * sizeof *tok);
		}
		llm_shard_read_tokens(s, d.start, d.len, tok);
		const char *name = llm_shard_domain(s, d.domain);
		if (llm_eval_doc(ev, name, tok, d.len) != LLM_OK)
			die("%s: document %llu: %s", path, (unsigned long long)i, llm_last_error());
		if (run) {
			size_t bytes = (size_t)d.len * si->width;
			llm_run_out(run, llm_run_in(run, bytes, name, strlen(name)), bytes);
		}
	}
	free(tok);
	llm_shard_free(s);
}

static void eval_manifest(llm_evaluator *ev, llm_run *run, const char *path, int split,
                          const llm_bpe *bpe, const model_t *mt)
{
	llm_manifest man;
	llm_manifest_init(&man);
	if (llm_manifest_load(&man, path) != LLM_OK)
		die_lib();
	check_tokenizer(path, man.tokenizer_id, bpe, mt);
	size_t n = 0;
	for (size_t i = 0; i < man.nshards; i++)
		if (split == SPLIT_ALL || man.shards[i].split == (split == SPLIT_VAL ? LLM_SPLIT_VAL
		                                                                  : LLM_SPLIT_TRAIN)) {
			eval_shard(ev, run, man.shards[i].path, &man, &man.shards[i], bpe, mt);
			n++;
		}
	if (!n)
		die("%s: no shard in the %s split", path,
		    split == SPLIT_VAL ? "val" : split == SPLIT_TRAIN ? "train" : "any");
	llm_manifest_release(&man);
}

/*
 * A malformed line of in: fatal with --strict; else warned with its place and rejected, with
 * reason and why (as "error") to --rejects: the record itself when rec holds its parse, else
 * the line wrapped (a line over --max-line: its head and its length). The caller counted it
 * in as dom.
 * run NULL: a pass over lines already accounted (compare's later checkpoints), silent.
 */
static void reject_line(const opts *o, llm_run *run, int dom, const tool_lines *in,
                        const char *reason, const char *why, const llm_json_rec *rec)
{
	if (o->co.strict)
		die("%s:%llu: %s", in->name, (unsigned long long)in->lineno, why);
	if (!run)
		return;
	llm_warn_at(in->name, in->lineno, "%s: skipped", why);
	llm_buf extra = LLM_BUF_INIT;
	if (in->too_long) {
		llm_buf_addf(&extra, "\"length\": %zu", in->full_len);
	} else {
		llm_buf_adds(&extra, "\"error\": ");
		llm_json_put_str(&extra, why, strlen(why));
	}
	if (llm_run_reject(run, dom, reason, in->line, in->len, rec, extra.p, in->name,
	                   in->lineno) != LLM_OK)
		die_lib();
	llm_buf_release(&extra);
}

/* JSONL documents: text tokenized, in a stream with end-of-text appended as llm-tokenize
 * does, or alone in rolling windows; each line a record of run (NULL: none), scored or
 * rejected. */
static void eval_docs(llm_evaluator *ev, llm_run *run, const char *path, const opts *o,
                      const llm_bpe *bpe, llm_bpe_enc *enc)
{
	if (!bpe)
		usage_error("documents need a tokenizer (-t)");
	tool_lines in;
	if (tool_lines_open(&in, path, &o->co, run) != LLM_OK)
		die_lib();
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	llm_buf text, dom;
	llm_buf_init(&text);
	llm_buf_init(&dom);
	llm_ids ids;
	llm_ids_init(&ids);
	int64_t eos = llm_bpe_eos(bpe);
	while (tool_lines_next(&in)) {
		int json = !in.too_long && llm_json_parse(&rec, in.line, in.len) == LLM_OK;
		int h = !run ? 0 : json ? llm_run_in_rec(run, in.full_len + 1, &rec)
		                        : llm_run_in(run, in.full_len + 1, NULL, 0);
		llm_buf_reset(&text);
		llm_buf_reset(&dom);
		if (in.too_long) {
			reject_line(o, run, h, &in, "too_long", "line over --max-line", NULL);
			continue;
		}
		if (!json) {
			reject_line(o, run, h, &in, "bad_json", rec.err_msg, NULL);
			continue;
		}
		if (llm_json_get_str(&rec, o->co.field, &text) != LLM_OK) {
			reject_line(o, run, h, &in, "no_text", "no text field", &rec);
			continue;
		}
		llm_json_get_str(&rec, "domain", &dom);
		llm_buf_addc(&dom, 0);
		ids.n = 0;
		if (llm_bpe_encode(enc, text.p, text.len, LLM_BPE_SPECIAL_IGNORE, &ids) != LLM_OK)
			die("%s:%llu: %s", in.name, (unsigned long long)in.lineno, llm_last_error());
		int rc;
		if (o->mode == MODE_ROLLING) {
			rc = llm_eval_doc_rolling(ev, dom.p, text.p, text.len, ids.v, ids.n);
		} else {
			if (eos >= 0)
				llm_ids_push(&ids, (uint32_t)eos);
			rc = llm_eval_doc(ev, dom.p, ids.v, ids.n);
		}
		if (rc != LLM_OK)
			die("%s:%llu: %s", in.name, (unsigned long long)in.lineno, llm_last_error());
		if (run)
			llm_run_out(run, h, in.full_len + 1);
	}
	if (tool_lines_close(&in) != LLM_OK)
		die_lib();
	llm_ids_release(&ids);
	llm_buf_release(&text);
	llm_buf_release(&dom);
	llm_json_rec_release(&rec);
}

/* --sampled: the trainer's validation micro-batches, one window per row. */
static void eval_sampled(llm_evaluator *ev, const char *path, const opts *o, int B, int T,
                         uint64_t seed)
{
	llm_loader *L;
	if (llm_loader_open(&L, path, LLM_SPLIT_VAL, NULL, 0, llm_train_val_seed(seed)) != LLM_OK)
		die_lib();
	int32_t *x = llm_malloc(2 * (size_t)B * T * sizeof *x), *y = x + (size_t)B * T;
	for (int i = 0; i < o->sampled; i++) {
		llm_loader_next(L, B, T, x, y);
		for (int b = 0; b < B; b++)
			if (llm_eval_window(ev, "sampled", x + (size_t)b * T, y + (size_t)b * T, T) != LLM_OK)
				die("%s: %s", path, llm_last_error());
	}
	free(x);
	llm_loader_free(L);
}

static void sums_json(llm_buf *b, const llm_eval_sums *s)
{
	llm_buf_addf(b, "{\"documents\": %llu, \"tokens\": %llu, \"loss\": ",
	             (unsigned long long)s->docs, (unsigned long long)s->tokens);
	llm_json_put_f64(b, llm_eval_loss(s));
	llm_buf_adds(b, ", \"ppl\": ");
	llm_json_put_f64(b, llm_eval_ppl(s));
	llm_buf_addf(b, ", \"bytes\": %llu, \"bits_per_byte\": ", (unsigned long long)s->bytes);
	llm_json_put_f64(b, llm_eval_bits_per_byte(s));
	if (s->words) {
		llm_buf_addf(b, ", \"words\": %llu, \"word_perplexity\": ", (unsigned long long)s->words);
		llm_json_put_f64(b, llm_eval_word_ppl(s));
		llm_buf_adds(b, ", \"byte_perplexity\": ");
		llm_json_put_f64(b, llm_eval_byte_ppl(s));
	}
	llm_buf_addc(b, '}');
}

/* rolling: lm-evaluation-harness's word and byte perplexities after bits per byte */
static void print_row(const char *name, const llm_eval_sums *s, int rolling)
{
	char bpb[32] = "-";
	if (s->bytes)
		snprintf(bpb, sizeof bpb, "%.4f", llm_eval_bits_per_byte(s));
	printf("%-12s %8llu %10llu %9.4f %11.3f %9s", name, (unsigned long long)s->docs,
	       (unsigned long long)s->tokens, llm_eval_loss(s), llm_eval_ppl(s), bpb);
	if (rolling)
		printf(" %9.4f %11.6g", llm_eval_byte_ppl(s), llm_eval_word_ppl(s));
	putchar('\n');
}

/* The window length of loss: --sampled draws the trainer's windows, of its length unless
 * given (the trainer checked it against the model). */
static int loss_seq_len(const opts *o, const model_t *mt)
{
	return o->sampled && !o->seq && mt->info.seq_len > 0 ? (int)mt->info.seq_len : seq_len(o, mt);
}

/* Evaluate the loss of mt over files (or --sampled batches of the manifest); the documents
 * are the records of run (NULL: not accounted). */
static llm_evaluator *run_loss(const opts *o, const model_t *mt, char **files, int nfiles,
                               const llm_bpe *bpe, llm_run *run, double *secs)
{
	int T = loss_seq_len(o, mt);
	/* What precedes each domain's stream: the end-of-text id, from the tokenizer or else from
	 * the model's configuration (llm-train records the shards' there). */
	int64_t start = bpe ? llm_bpe_eos(bpe) : llm_model_get_config(mt->m)->eos_token_id;
	if (o->mode == MODE_ROLLING) {
		/* lm-evaluation-harness's prefix_token_id (BOS, else EOS) before each document */
		if (o->sampled)
			usage_error("--mode rolling scores documents, not --sampled windows");
		if (!bpe)
			usage_error("--mode rolling needs a tokenizer (-t)");
		if ((start = doc_prefix(o, bpe)) < 0)
			usage_error("--mode rolling needs a prefix token: no --no-prefix, and a tokenizer "
			            "with a beginning- or end-of-text token");
	}
	int B = o->sampled && !o->batch && mt->info.batch > 0 ? (int)mt->info.batch
	                                                          : o->batch ? o->batch : 8;
	double t0 = now();
	llm_evaluator *ev = llm_evaluator_new(mt->m, T, B, bpe, start);
	if (mt->gpu)
		llm_evaluator_set_scorer(ev, llm_cudamodel_token_loss_fn, mt->gpu);
	if (o->sampled) {
		if (nfiles != 1)
			usage_error("--sampled takes one manifest");
		int64_t seed = o->seed >= 0 ? o->seed : mt->info.seed;
		if (seed < 0)
			usage_error("--sampled needs --seed: %s has no training state", mt->info.dir);
		eval_sampled(ev, files[0], o, B, T, (uint64_t)seed);
	} else {
		llm_bpe_enc *enc = bpe ? llm_bpe_enc_new(bpe) : NULL;
		for (int i = 0; i < nfiles; i++) {
			const char *f = files[i];
			char p[4096];
			int shard = strcmp(f, "-") != 0 && has_magic(f, LLM_SHARD_MAGIC);
			if (o->mode == MODE_ROLLING && (shard || ends_with(f, ".json") ||
			                                (strcmp(f, "-") != 0 && is_dir(f))))
				usage_error("--mode rolling scores JSONL documents: %s holds tokens", f);
			if (strcmp(f, "-") != 0 && is_dir(f)) {
				snprintf(p, sizeof p, "%s/manifest.json", f);
				eval_manifest(ev, run, p, o->split, bpe, mt);
			} else if (shard) {
				eval_shard(ev, run, f, NULL, NULL, bpe, mt);
			} else if (ends_with(f, ".json")) {
				eval_manifest(ev, run, f, o->split, bpe, mt);
			} else {
				eval_docs(ev, run, f, o, bpe, enc);
			}
		}
		llm_bpe_enc_free(enc);
	}
	if (llm_eval_flush(ev) != LLM_OK)
		die_lib();
	*secs = now() - t0;
	return ev;
}

/* The run that accounts a command's documents or task items, with its rejects file (checked
 * against --json: one of the two would be lost). */
static llm_run *new_run(const opts *o)
{
	struct tool_common co = o->co;
	co.stats = o->json;
	tool_check_outputs(&co);
	return tool_run_new(&o->co);
}

/* The exit status: rejected lines fail the run unless --rejects keeps them. */
static int finish_run(const opts *o, llm_run *run, int failed)
{
	if (!run)
		return failed;
	failed |= llm_run_records_rejected(run) && !o->co.rejects;
	return tool_run_finish(run, failed);
}

static int cmd_loss(const opts *o, char **files, int nfiles)
{
	static char *stdin_only[] = { "-" };
	if (!o->ckpt)
		usage_error("loss needs --ckpt");
	if (!nfiles) {
		files = stdin_only;
		nfiles = 1;
	}
	if (o->sampled && o->co.rejects)
		usage_error("--rejects: --sampled reads windows, no lines to reject");
	/* --sampled windows are not records */
	llm_run *run = o->sampled ? NULL : new_run(o);
	model_t mt;
	load_model(&mt, o->ckpt, o);
	llm_bpe *bpe = model_tokenizer(o, &mt);
	double secs;
	llm_evaluator *ev = run_loss(o, &mt, files, nfiles, bpe, run, &secs);
	uint64_t bad = run ? llm_run_records_rejected(run) : 0;
	llm_eval_sums all;
	llm_eval_total(ev, &all);
	int rolling = o->mode == MODE_ROLLING;
	printf("%-12s %8s %10s %9s %11s %9s%s\n", "domain", "docs", "tokens", "loss", "ppl",
	       "bits/byte", rolling ? "  byte_ppl    word_ppl" : "");
	for (size_t i = 0; i < llm_eval_ndomains(ev); i++)
		print_row(llm_eval_domain_name(ev, i), llm_eval_domain_sums(ev, i), rolling);
	print_row("all", &all, rolling);
	check_stdout();
	if (o->json) {
		llm_buf b;
		llm_buf_init(&b);
		llm_buf_adds(&b, "{\"checkpoint\": ");
		llm_json_put_str(&b, mt.info.dir, strlen(mt.info.dir));
		llm_buf_addf(&b, ", \"step\": %lld, \"tokens_seen\": %lld, \"mode\": \"%s\"",
		             (long long)mt.info.step, (long long)mt.info.tokens,
		             o->sampled ? "sampled" : rolling ? "rolling" : "stream");
		llm_buf_addf(&b, ", \"seq_len\": %d", loss_seq_len(o, &mt));
		device_json(&b, o);
		llm_buf_adds(&b, ", \"all\": ");
		sums_json(&b, &all);
		llm_buf_adds(&b, ", \"domains\": {");
		for (size_t i = 0; i < llm_eval_ndomains(ev); i++) {
			const char *n = llm_eval_domain_name(ev, i);
			llm_buf_adds(&b, i ? ", " : "");
			llm_json_put_str(&b, n, strlen(n));
			llm_buf_adds(&b, ": ");
			sums_json(&b, llm_eval_domain_sums(ev, i));
		}
		llm_buf_addf(&b, "}, \"skipped\": %llu, \"seconds\": ", (unsigned long long)bad);
		llm_json_put_f64(&b, secs);
		llm_buf_addc(&b, '}');
		write_json(o->json, &b);
		llm_buf_release(&b);
	}
	llm_info("%llu tokens in %.2f s (%.0f tokens/s)%s", (unsigned long long)all.tokens, secs,
	         all.tokens / (secs > 0 ? secs : 1e-9), bad ? "; malformed lines skipped" : "");
	llm_evaluator_free(ev);
	llm_bpe_free(bpe);
	free_model(&mt);
	return finish_run(o, run, 0);
}

/* ---- choice ---- */

typedef struct {
	char *name;
	uint64_t items, acc, acc_norm;
} choice_dom;

typedef struct {
	choice_dom *d;
	size_t n;
	uint64_t bad;
} choice_res;

static choice_dom *choice_domain(choice_res *res, const char *name)
{
	for (size_t i = 0; i < res->n; i++)
		if (strcmp(res->d[i].name, name) == 0)
			return &res->d[i];
	res->d = llm_realloc(res->d, (res->n + 1) * sizeof *res->d);
	res->d[res->n] = (choice_dom){ .name = llm_strdup(name) };
	return &res->d[res->n++];
}

static void choice_total(const choice_res *res, choice_dom *all)
{
	*all = (choice_dom){ .name = "all" };
	for (size_t i = 0; i < res->n; i++) {
		all->items += res->d[i].items;
		all->acc += res->d[i].acc;
		all->acc_norm += res->d[i].acc_norm;
	}
}

/* The few-shot pool: --fewshot-from's items (a malformed one is fatal), else the task's own
 * (a malformed one is the scoring pass's to reject). NULL without --num-fewshot or
 * --description. */
static llm_fewshot *load_fewshot(const opts *o, char **files, int nfiles)
{
	if (!o->num_fewshot && !o->description)
		return NULL;
	char *from[] = { (char *)o->fewshot_from };
	if (o->fewshot_from) {
		files = from;
		nfiles = 1;
	}
	for (int f = 0; f < nfiles; f++)
		if (o->num_fewshot && strcmp(files[f], "-") == 0)
			usage_error("--num-fewshot from standard input needs --fewshot-from FILE");
	llm_fewshot *fs = llm_fewshot_new((size_t)o->num_fewshot, o->seed >= 0 ? (uint64_t)o->seed : 1234,
	                                  !o->fewshot_from, o->description, o->delim ? o->delim : " ",
	                                  "\n\n");
	for (int f = 0; f < nfiles && o->num_fewshot; f++) {
		tool_lines in;
		if (tool_lines_open(&in, files[f], &o->co, NULL) != LLM_OK)
			die_lib();
		while (tool_lines_next(&in)) {
			llm_choice_item it;
			if (!in.too_long && llm_choice_parse(&it, in.line, in.len) == LLM_OK)
				llm_fewshot_add(fs, &it);
			else if (o->fewshot_from)
				die("%s:%llu: %s", in.name, (unsigned long long)in.lineno,
				    in.too_long ? "line over --max-line" : llm_last_error());
			if (!in.too_long)
				llm_choice_item_release(&it);
		}
		if (tool_lines_close(&in) != LLM_OK)
			die_lib();
	}
	return fs;
}

/* Score the task items of files, after their few-shot examples (fs NULL: none); each line a
 * record of run (NULL: not accounted), each item scored a line of samples (NULL: none). */
static void run_choice(const opts *o, const model_t *mt, const llm_bpe *bpe, char **files,
                       int nfiles, llm_run *run, choice_res *res, llm_writer *samples,
                       llm_fewshot *fs)
{
	uint64_t doc_id = 0;
	llm_buf line = LLM_BUF_INIT;
	llm_chooser *ch = llm_chooser_new(mt->m, bpe, doc_prefix(o, bpe), o->delim ? o->delim : " ");
	if (mt->gpu)
		llm_chooser_set_scorer(ch, llm_cudamodel_token_loss_fn, mt->gpu);
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	double *ll = NULL;
	size_t llcap = 0;
	for (int f = 0; f < nfiles; f++) {
		tool_lines in;
		if (tool_lines_open(&in, files[f], &o->co, run) != LLM_OK)
			die_lib();
		while (tool_lines_next(&in)) {
			int json = !in.too_long && llm_json_parse(&rec, in.line, in.len) == LLM_OK;
			int h = !run ? 0 : json ? llm_run_in_rec(run, in.full_len + 1, &rec)
			                        : llm_run_in(run, in.full_len + 1, NULL, 0);
			llm_choice_item it;
			const char *reason = NULL;
			if (in.too_long) {
				reason = "too_long";
				llm_fail(LLM_ETOOLONG, "line over --max-line");
			} else if (llm_choice_parse(&it, in.line, in.len) != LLM_OK) {
				reason = json ? "bad_item" : "bad_json";
			} else {
				if (it.nchoices > llcap) {
					llcap = it.nchoices;
					ll = llm_realloc(ll, llcap * sizeof *ll);
				}
				size_t pred, pred_norm;
				if (fs) {
					if (llm_fewshot_context(fs, &it, &line) != LLM_OK)
						die("%s:%llu: %s", in.name, (unsigned long long)in.lineno,
						    llm_last_error());
					free(it.context);
					it.context = llm_strndup(line.p, line.len);
				}
				if (llm_chooser_score(ch, &it, ll, &pred, &pred_norm) == LLM_OK) {
					choice_dom *d = choice_domain(res, it.domain);
					d->items++;
					d->acc += pred == it.gold;
					d->acc_norm += pred_norm == it.gold;
					if (samples) {
						llm_buf_reset(&line);
						llm_choice_sample_json(&line, &it, doc_id, ll, llm_chooser_ntokens(ch),
						                       pred, pred_norm);
						llm_buf_addc(&line, '\n');
						if (llm_writer_write(samples, line.p, line.len) != LLM_OK)
							die_lib();
					}
				} else {
					reason = "unscorable";
				}
			}
			if (!in.too_long)
				llm_choice_item_release(&it);
			if (reason) {
				reject_line(o, run, h, &in, reason, llm_last_error(), json ? &rec : NULL);
				res->bad++;
			} else if (run) {
				llm_run_out(run, h, in.full_len + 1);
			}
			doc_id++;
		}
		if (tool_lines_close(&in) != LLM_OK)
			die_lib();
	}
	free(ll);
	llm_buf_release(&line);
	llm_json_rec_release(&rec);
	llm_chooser_free(ch);
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : NAN;
}

static void choice_free(choice_res *res)
{
	for (size_t i = 0; i < res->n; i++)
		free(res->d[i].name);
	free(res->d);
}

static void choice_json(llm_buf *b, const choice_dom *d)
{
	llm_buf_addf(b, "{\"items\": %llu, \"acc\": ", (unsigned long long)d->items);
	llm_json_put_f64(b, ratio(d->acc, d->items));
	llm_buf_adds(b, ", \"acc_stderr\": ");
	llm_json_put_f64(b, llm_eval_acc_stderr(d->acc, d->items));
	llm_buf_adds(b, ", \"acc_norm\": ");
	llm_json_put_f64(b, ratio(d->acc_norm, d->items));
	llm_buf_adds(b, ", \"acc_norm_stderr\": ");
	llm_json_put_f64(b, llm_eval_acc_stderr(d->acc_norm, d->items));
	llm_buf_addc(b, '}');
}

static int cmd_choice(const opts *o, char **files, int nfiles)
{
	static char *stdin_only[] = { "-" };
	if (!o->ckpt)
		usage_error("choice needs --ckpt");
	if (!nfiles) {
		files = stdin_only;
		nfiles = 1;
	}
	if (o->log_samples && (tool_same_output(o->log_samples, NULL) ||
	                       (o->json && tool_same_output(o->log_samples, o->json)) ||
	                       (o->co.rejects && tool_same_output(o->log_samples, o->co.rejects))))
		usage_error("--log-samples %s: the same file as standard output, --json or --rejects",
		            o->log_samples);
	llm_run *run = new_run(o);
	model_t mt;
	load_model(&mt, o->ckpt, o);
	llm_bpe *bpe = model_tokenizer(o, &mt);
	if (!bpe)
		usage_error("choice needs -t: no tokenizer.json beside %s or in its run directory",
		            mt.info.dir);
	choice_res res = { 0 };
	double t0 = now();
	llm_writer *samples = NULL;
	if (o->log_samples && llm_writer_open(&samples, o->log_samples) != LLM_OK)
		die_lib();
	llm_fewshot *fs = load_fewshot(o, files, nfiles);
	run_choice(o, &mt, bpe, files, nfiles, run, &res, samples, fs);
	llm_fewshot_free(fs);
	if (samples && llm_writer_close(samples) != LLM_OK)
		die_lib();
	double secs = now() - t0;
	choice_dom all;
	choice_total(&res, &all);
	printf("%-12s %8s %8s %8s %8s %8s\n", "domain", "items", "acc", "stderr", "acc_norm",
	       "stderr");
	for (size_t i = 0; i <= res.n; i++) {
		const choice_dom *d = i < res.n ? &res.d[i] : &all;
		printf("%-12s %8llu %8.4f %8.4f %8.4f %8.4f\n", d->name, (unsigned long long)d->items,
		       ratio(d->acc, d->items), llm_eval_acc_stderr(d->acc, d->items),
		       ratio(d->acc_norm, d->items), llm_eval_acc_stderr(d->acc_norm, d->items));
	}
	check_stdout();
	if (o->json) {
		llm_buf b;
		llm_buf_init(&b);
		llm_buf_adds(&b, "{\"checkpoint\": ");
		llm_json_put_str(&b, mt.info.dir, strlen(mt.info.dir));
		llm_buf_addf(&b, ", \"step\": %lld", (long long)mt.info.step);
		device_json(&b, o);
		llm_buf_adds(&b, ", \"all\": ");
		choice_json(&b, &all);
		llm_buf_adds(&b, ", \"domains\": {");
		for (size_t i = 0; i < res.n; i++) {
			llm_buf_adds(&b, i ? ", " : "");
			llm_json_put_str(&b, res.d[i].name, strlen(res.d[i].name));
			llm_buf_adds(&b, ": ");
			choice_json(&b, &res.d[i]);
		}
		llm_buf_addf(&b, "}, \"skipped\": %llu}", (unsigned long long)res.bad);
		write_json(o->json, &b);
		llm_buf_release(&b);
	}
	llm_info("%llu items in %.2f s%s", (unsigned long long)all.items, secs,
	         res.bad ? "; malformed items skipped" : "");
	choice_free(&res);
	llm_bpe_free(bpe);
	free_model(&mt);
	return finish_run(o, run, 0);
}

/* ---- generate ---- */

typedef struct {
	const llm_bpe *bpe;
	int ids;
	int64_t stop;
	int n;
} emit_ctx;

static int emit(void *ctx, int32_t tok)
{
	emit_ctx *e = ctx;
	if (e->ids) {
		printf(e->n++ ? " %d" : "%d", tok);
	} else if (tok != e->stop) {
		size_t len;
		const char *p = llm_bpe_token(e->bpe, (uint32_t)tok, &len);
		if (p)
			fwrite(p, 1, len, stdout);
	}
	return ferror(stdout) != 0;
}

static int cmd_generate(const opts *o, int nfiles)
{
	if (!o->ckpt || !o->prompt)
		usage_error("generate needs --ckpt and --prompt");
	if (nfiles)
		usage_error("generate takes no file");
	model_t mt;
	load_model(&mt, o->ckpt, o);
	llm_bpe *bpe = model_tokenizer(o, &mt);
	if (!bpe)
		usage_error("generate needs -t: no tokenizer.json beside %s or in its run directory",
		            mt.info.dir);
	const llm_model_config *cfg = llm_model_get_config(mt.m);
	llm_ids ids;
	llm_ids_init(&ids);
	int64_t pre = doc_prefix(o, bpe);
	if (pre >= 0)
		llm_ids_push(&ids, (uint32_t)pre);
	llm_bpe_enc *enc = llm_bpe_enc_new(bpe);
	if (llm_bpe_encode(enc, o->prompt, strlen(o->prompt), LLM_BPE_SPECIAL_IGNORE, &ids) != LLM_OK)
		die("--prompt: %s", llm_last_error());
	llm_bpe_enc_free(enc);
	if (!ids.n)
		usage_error("--prompt is empty and the tokenizer has no start token");
	int32_t *prompt = llm_malloc(ids.n * sizeof *prompt);
	for (size_t i = 0; i < ids.n; i++) {
		if (ids.v[i] >= (uint32_t)cfg->vocab_size)
			die("--prompt: token %u is outside the model's vocabulary of %d", ids.v[i],
			    cfg->vocab_size);
		prompt[i] = (int32_t)ids.v[i];
	}
	llm_sampling sp = { o->temperature, o->top_k, o->top_p };
	llm_sampler *s = llm_sampler_new(cfg->vocab_size, &sp, (uint64_t)(o->seed >= 0 ? o->seed : 1));
	int32_t *out = llm_malloc((size_t)(o->max_tokens ? o->max_tokens : 1) * sizeof *out);
	int64_t stop = llm_bpe_eos(bpe);
	emit_ctx e = { bpe, o->ids, stop, 0 };
	int nout;
	double t0 = now();
	if (llm_generate(mt.m, prompt, (int)ids.n, o->max_tokens, stop, s, !o->no_cache, emit, &e,
	                 out, &nout) != LLM_OK)
		die_lib();
	double secs = now() - t0;
	putchar('\n');
	check_stdout();
	if (o->json) {
		llm_buf b, text;
		llm_buf_init(&b);
		llm_buf_init(&text);
		int n = nout && out[nout - 1] == stop ? nout - 1 : nout;
		llm_bpe_decode(bpe, (const uint32_t *)out, (size_t)n, &text);
		llm_buf_addf(&b, "{\"prompt_tokens\": %zu, \"tokens\": [", ids.n);
		for (int i = 0; i < nout; i++)
			llm_buf_addf(&b, i ? ", %d" : "%d", out[i]);
		llm_buf_adds(&b, "], \"text\": ");
		llm_json_put_str(&b, text.p, text.len);
		llm_buf_addf(&b, ", \"stopped\": %s, \"seconds\": ",
		             nout && out[nout - 1] == stop ? "true" : "false");
		llm_json_put_f64(&b, secs);
		llm_buf_addc(&b, '}');
		write_json(o->json, &b);
		llm_buf_release(&b);
		llm_buf_release(&text);
	}
	llm_info("%zu prompt tokens, %d new in %.2f s (%.1f tokens/s%s)", ids.n, nout, secs,
	         nout / (secs > 0 ? secs : 1e-9), o->no_cache ? ", no cache" : "");
	free(out);
	free(prompt);
	llm_sampler_free(s);
	llm_ids_release(&ids);
	llm_bpe_free(bpe);
	free_model(&mt);
	return 0;
}

/* ---- compare ---- */

static int cmd_compare(const opts *o, char **files, int nfiles)
{
	if (!o->data)
		usage_error("compare needs --data");
	if (!nfiles)
		usage_error("compare needs checkpoints");
	char *data = (char *)o->data;
	llm_buf b;
	llm_buf_init(&b);
	llm_buf_adds(&b, "[");
	printf("%10s %12s %9s %11s %9s %8s %8s  %s\n", "step", "tokens", "val_loss", "ppl",
	       "bits/byte", "acc", "acc_norm", "checkpoint");
	/* The lines read are accounted on the first checkpoint's pass; the others read the same. */
	llm_run *run = new_run(o);
	uint64_t bad0 = 0;
	int failed = 0;
	for (int i = 0; i < nfiles; i++) {
		model_t mt;
		load_model(&mt, files[i], o);
		llm_bpe *bpe = model_tokenizer(o, &mt);
		if (o->task && !bpe)
			usage_error("--task needs -t: no tokenizer.json beside %s or in its run directory",
			            mt.info.dir);
		double secs;
		llm_evaluator *ev = run_loss(o, &mt, &data, 1, bpe, i ? NULL : run, &secs);
		llm_eval_sums all;
		llm_eval_total(ev, &all);
		choice_dom acc = { .name = "all" };
		choice_res res = { 0 };
		if (o->task) {
			char *task = (char *)o->task;
			run_choice(o, &mt, bpe, &task, 1, i ? NULL : run, &res, NULL, NULL);
			choice_total(&res, &acc);
			if (!i)
				bad0 = res.bad;
			if (res.bad != bad0) {
				/* not in the rejects file, which holds the first pass's */
				llm_error("%s: %llu items rejected with %s, %llu with %s", o->task,
				          (unsigned long long)res.bad, files[i], (unsigned long long)bad0,
				          files[0]);
				failed = 1;
			}
		}
		char bpb[32] = "-", a[32] = "-", an[32] = "-";
		if (all.bytes)
			snprintf(bpb, sizeof bpb, "%.4f", llm_eval_bits_per_byte(&all));
		if (acc.items) {
			snprintf(a, sizeof a, "%.4f", ratio(acc.acc, acc.items));
			snprintf(an, sizeof an, "%.4f", ratio(acc.acc_norm, acc.items));
		}
		printf("%10lld %12lld %9.4f %11.3f %9s %8s %8s  %s\n", (long long)mt.info.step,
		       (long long)mt.info.tokens, llm_eval_loss(&all), llm_eval_ppl(&all), bpb, a, an,
		       mt.info.dir);
		check_stdout();
		llm_buf_adds(&b, i ? ",\n " : "");
		llm_buf_adds(&b, "{\"checkpoint\": ");
		llm_json_put_str(&b, mt.info.dir, strlen(mt.info.dir));
		llm_buf_addf(&b, ", \"step\": %lld, \"tokens_seen\": %lld, \"val\": ",
		             (long long)mt.info.step, (long long)mt.info.tokens);
		sums_json(&b, &all);
		if (o->task) {
			llm_buf_adds(&b, ", \"choice\": ");
			choice_json(&b, &acc);
		}
		llm_buf_addc(&b, '}');
		choice_free(&res);
		llm_evaluator_free(ev);
		llm_bpe_free(bpe);
		free_model(&mt);
	}
	llm_buf_adds(&b, "]");
	if (o->json)
		write_json(o->json, &b);
	llm_buf_release(&b);
	return finish_run(o, run, failed);
}

int main(int argc, char **argv)
{
	tool_init("llm-eval");
	tool_save_cmdline(argc, argv);
	opts o = { .batch = 0, .split = SPLIT_VAL, .max_tokens = 64, .seed = -1,
	           .temperature = 1, .top_p = 1, .device = LLM_DEVICE_CPU, .precision = -1 };
	tool_common_init(&o.co, &cli);
	if (argc < 2)
		usage_error("a command is required: loss, choice, generate or compare");
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
		case OPT_FEWSHOT: o.num_fewshot = (int)tool_int("--num-fewshot", optarg, 0, 1 << 16); break;
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
		usage_error("a command is required: loss, choice, generate or compare");
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
		rc = cmd_loss(&o, files, nfiles);
	else if (strcmp(cmd, "choice") == 0)
		rc = cmd_choice(&o, files, nfiles);
	else if (strcmp(cmd, "generate") == 0)
		rc = cmd_generate(&o, nfiles);
	else if (strcmp(cmd, "compare") == 0)
		rc = cmd_compare(&o, files, nfiles);
	else
		usage_error("unknown command '%s' (loss, choice, generate or compare)", cmd);
	return rc;
}
