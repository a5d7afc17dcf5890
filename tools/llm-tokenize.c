/*
 * llm-tokenize — documents to tokens with a byte-level BPE identical to tiktoken and Hugging
 * Face tokenizers; `decode` turns tokens back into documents; `train` learns a tokenizer.
 *
 * encode: JSONL documents -> token stream (DESIGN §4) or JSONL with "tokens". This thread
 * reads lines into batches and hands each to the pool's stream as it fills; with --threads N
 * the N workers parse and encode batches as they come, and this thread writes each one back
 * in input order once it and those before it are done, so output is identical for every N.
 * Memory: the vocabulary plus a ring of 4N batches of at most 256 KiB of input, their output
 * (and one line up to --max-line).
 * decode: token stream or JSONL with "tokens" -> JSONL documents; one record in memory.
 * train: the distinct pieces of the input and, while training, their adjacent pairs, within
 * --memory (default a quarter of physical memory): beyond it counts spill to --tmpdir and
 * training goes in rounds on the pieces that fit (lib/tok/bpe_train.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/io.h"
#include "core/json.h"
#include "core/pool.h"
#include "core/sketch.h"
#include "tok/bpe.h"
#include "tok/bpe_doc.h"
#include "tok/bpe_train.h"
#include "tok/pretok.h"
#include "tok/tokstream.h"
#include "tool.h"

static const char usage[] =
	"usage: llm-tokenize [options] -t TOKENIZER [file ...]\n"
	"       llm-tokenize decode [options] -t TOKENIZER [file ...]\n"
	"       llm-tokenize train [options] --vocab-size N -o tokenizer.json [file ...]\n"
	"\n"
	"Encode JSONL documents into the token stream (or JSONL with --format jsonl); decode a\n"
	"token stream or token JSONL back into documents; train a byte-level BPE tokenizer.\n"
	"With no file, or when file is -, read standard input.\n"
	"\n";

enum {
	OPT_MERGES = TOOL_OPT_FIRST_PRIVATE, OPT_PATTERN, OPT_SPECIAL_TOKENS, OPT_EOS, OPT_NO_EOS, OPT_BOS, OPT_SPECIAL,
	OPT_META, OPT_KEEP_SPECIAL, OPT_VOCAB_SIZE, OPT_MIN_FREQ, OPT_TIKTOKEN,
	OPT_MEMORY, OPT_TMPDIR, OPT_SUPERBPE
};

static const struct tool_option cli_options[] = {
	TOOL_OPTION("tokenizer", 't', "FILE", 0,
	            "tokenizer.json, tiktoken rank file, or GPT-2 vocab.json"),
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

struct opts {
	struct tool_common co;
	int cmd;
	const char *tokenizer, *merges, *encoding, *pattern, *format, *tiktoken, *tmpdir;
	const char *special_tokens;
	const char *special_arg;
	const char *specials[64];
	int nspecials;
	bool eos, bos, keep_special;
	char *meta_list;
	const char *meta_keys[32];
	long long vocab_size, min_freq, superbpe;
	size_t memory;
};

/* ---- encode ---- */

/* A batch is the unit a worker takes: large enough that taking one costs nothing beside
 * encoding it (~10 ms), small enough that the last ones of the input, encoded while other
 * workers have nothing left, are a small part of a run. */
#define BATCH_BYTES ((size_t)256 << 10)
#define BATCH_LINES 1024
/* Batches in flight per worker: documents differ in size by orders of magnitude, so a worker
 * on a whole book must not stop the others; they go on with the batches behind it until the
 * ring is full, and this thread writes while they encode. */
#define RING_PER_WORKER 4

typedef struct {
	llm_buf in;              /* the lines back to back */
	size_t *off, *len;       /* per line */
	uint64_t *lineno;
	unsigned char *toolong;
	size_t n, cap;
	const char *file;
	llm_buf out;             /* encoded records of the accepted lines, in order */
	llm_bpe_doc_result *res;
	size_t *out_end;         /* end offset in out after line i */
	int err;                 /* a pre-tokenizer failure (LLM_EINTERNAL) */
	char errmsg[256];
} batch;

struct domain_stats {
	char name[64];
	uint64_t docs, bytes, tokens;
	llm_sketch *len;
};

typedef struct {
	const struct opts *o;
	llm_bpe_doc_opts dopts;
	llm_pool *pool;
	llm_bpe_doc **docs;      /* per pool worker */
	batch *ring;             /* batch i of the stream is ring[i % nring] */
	size_t nring;
	size_t pushed, popped;   /* batches handed to the pool, and written */
	batch *fill;             /* the batch being filled (ring[pushed % nring]), or NULL */
	char **names;            /* the inputs' names, which the batches in flight point to */
	size_t nnames;
	llm_writer *w;
	llm_run *run;
	struct domain_stats *dom;
	size_t ndom;
	/* CPU microseconds, for --stats: this thread before the stream (loading), the load's
	 * threads beside it, this thread in the stream (reading, writing), and each worker's
	 * encoding */
	uint64_t cpu_load, cpu_load_pool, cpu_main, *cpu_worker;
} encoder;

static uint64_t cpu_clock(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* CPU microseconds of the calling thread since it started. */
static uint64_t thread_cpu(void)
{
	return cpu_clock(CLOCK_THREAD_CPUTIME_ID);
}

/* CPU microseconds of the process's threads but this one, those that ended included: after
 * the load, whose threads have been joined, and before the workers start, the load's share.
 * The process is read first so that a process of one thread gives 0. */
static uint64_t other_threads_cpu(void)
{
	uint64_t all = cpu_clock(CLOCK_PROCESS_CPUTIME_ID), self = thread_cpu();
	return all > self ? all - self : 0;
}

static void batch_push_line(batch *b, const char *line, size_t len, uint64_t lineno, int toolong)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 256;
		b->off = llm_realloc(b->off, b->cap * sizeof *b->off);
		b->len = llm_realloc(b->len, b->cap * sizeof *b->len);
		b->lineno = llm_realloc(b->lineno, b->cap * sizeof *b->lineno);
		b->toolong = llm_realloc(b->toolong, b->cap);
		b->res = llm_realloc(b->res, b->cap * sizeof *b->res);
		b->out_end = llm_realloc(b->out_end, b->cap * sizeof *b->out_end);
	}
	b->off[b->n] = b->in.len;
	b->len[b->n] = len;
	b->lineno[b->n] = lineno;
	b->toolong[b->n] = (unsigned char)toolong;
	llm_buf_add(&b->in, line, len);
	b->n++;
}

static void batch_encode(llm_bpe_doc *d, batch *b)
{
	llm_buf_reset(&b->out);
	b->err = 0;
	for (size_t i = 0; i < b->n; i++) {
		if (b->toolong[i]) {
			memset(&b->res[i], 0, sizeof b->res[i]);
			b->res[i].reason = "too_long";
			snprintf(b->res[i].detail, sizeof b->res[i].detail, "line over --max-line");
		} else if (!b->err) {
			int rc = llm_bpe_doc_encode(d, b->in.p + b->off[i], b->len[i], &b->out, &b->res[i]);
			if (rc) {
				b->err = rc;
				snprintf(b->errmsg, sizeof b->errmsg, "%s", llm_last_error());
			}
		}
		b->out_end[i] = b->out.len;
	}
}

static void encode_job(void *ctx, size_t i, int worker)
{
	encoder *e = ctx;
	uint64_t t = thread_cpu();
	batch_encode(e->docs[worker], &e->ring[i % e->nring]);
	e->cpu_worker[worker] += thread_cpu() - t;
}

static struct domain_stats *domain_of(encoder *e, const char *name)
{
	const char *n = *name ? name : "unknown";
	for (size_t i = 0; i < e->ndom; i++)
		if (strcmp(e->dom[i].name, n) == 0)
			return &e->dom[i];
	e->dom = llm_realloc(e->dom, (e->ndom + 1) * sizeof *e->dom);
	struct domain_stats *d = &e->dom[e->ndom++];
	memset(d, 0, sizeof *d);
	snprintf(d->name, sizeof d->name, "%s", n);
	d->len = llm_sketch_new(LLM_SKETCH_ALPHA);
	return d;
}

/* Account and write a finished batch in input order. Returns 1 on a fatal error. */
static int batch_write(encoder *e, const batch *b)
{
	const struct opts *o = e->o;
	llm_run *run = e->run;
	size_t start = 0;
	for (size_t i = 0; i < b->n; i++) {
		const llm_bpe_doc_result *r = &b->res[i];
		size_t end = b->out_end[i];
		const char *line = b->in.p + b->off[i];
		/* A record that stops the run is not counted in: in = out + rejected still holds. */
		if (b->err && !r->reason && end == start) {
			/* Lines after a pre-tokenizer failure were not encoded. */
			llm_error_at(b->file, b->lineno[i], "%s", b->errmsg);
			return 1;
		}
		if (r->reason && o->co.strict) {
			llm_error_at(b->file, b->lineno[i], "%s", r->detail);
			return 1;
		}
		int dom = llm_run_in(run, b->len[i] + 1, r->domain, strlen(r->domain));
		if (r->reason) {
			llm_warn_at(b->file, b->lineno[i], "%s", r->detail);
			llm_json_rec rec;
			llm_json_rec_init(&rec);
			int ok = !b->toolong[i] && llm_json_parse(&rec, line, b->len[i]) == LLM_OK;
			int rc = llm_run_reject(run, dom, r->reason, line, b->len[i], ok ? &rec : NULL, NULL,
			                        b->file, b->lineno[i]);
			llm_json_rec_release(&rec);
			if (rc)
				die_lib();
		} else {
			if (llm_writer_write(e->w, b->out.p + start, end - start) != LLM_OK)
				die_lib();
			llm_run_out(run, dom, end - start);
			struct domain_stats *d = domain_of(e, r->domain);
			d->docs++;
			d->bytes += r->text_bytes;
			d->tokens += r->tokens;
			llm_sketch_add(d->len, (double)r->tokens, 1);
		}
		start = end;
	}
	return 0;
}

/* A batch that held a document larger than itself would keep that size, and over a long
 * stream each of the 4N batches of the ring meets one: peak memory grew with the stream, up
 * to 4N times the largest document and its tokens. Once written, a batch keeps buffers of at
 * most what a full batch needs, twice BATCH_BYTES; larger ones are freed and grown again
 * when needed. */
static void batch_trim(batch *b)
{
	if (b->in.cap > 2 * BATCH_BYTES)
		llm_buf_release(&b->in);
	if (b->out.cap > 2 * BATCH_BYTES)
		llm_buf_release(&b->out);
}

static void batch_reset(batch *b, const char *file)
{
	llm_buf_reset(&b->in);
	b->n = 0;
	b->file = file;
}

/* Write the batches the workers have finished, in input order, and return once the oldest
 * in flight is still being encoded (when `all`, once every batch is written); wait for it
 * when the ring is full, so that the next batch to fill is free. Returns 1 on a fatal error. */
static int write_done(encoder *e, bool all)
{
	while (e->popped < e->pushed) {
		if (!llm_pool_pop(e->pool, all || e->pushed - e->popped == e->nring))
			return 0;
		batch *b = &e->ring[e->popped++ % e->nring];
		if (batch_write(e, b))
			return 1;
		batch_trim(b);
	}
	return 0;
}

/* Hand the batch being filled, if any, to the workers. Returns 1 on a fatal error. */
static int push_batch(encoder *e)
{
	if (!e->fill)
		return 0;
	e->fill = NULL;
	e->pushed++;
	llm_pool_push(e->pool);
	return write_done(e, false);
}

/* The batch lines of `file` are added to: the one being filled, a new one when that is full
 * or holds another file's lines. NULL on a fatal error. */
static batch *fill_batch(encoder *e, const char *file)
{
	batch *b = e->fill;
	if (b && b->n < BATCH_LINES && b->in.len < BATCH_BYTES && b->file == file)
		return b;
	if (push_batch(e))
		return NULL;
	b = e->fill = &e->ring[e->pushed % e->nring];
	batch_reset(b, file);
	return b;
}

static void ring_release(encoder *e)
{
	for (size_t i = 0; i < e->nring; i++) {
		batch *b = &e->ring[i];
		llm_buf_release(&b->in);
		llm_buf_release(&b->out);
		free(b->off);
		free(b->len);
		free(b->lineno);
		free(b->toolong);
		free(b->res);
		free(b->out_end);
	}
	free(e->ring);
	for (size_t i = 0; i < e->nnames; i++)
		free(e->names[i]);
	free(e->names);
}

static void stats_json(encoder *e, llm_run *run)
{
	llm_buf m = LLM_BUF_INIT, s = LLM_BUF_INIT;
	llm_buf_adds(&m, "\"tokens\": {");
	llm_buf_adds(&s, "\"" LLM_SKETCH_STATS_KEY "\": {");
	static const double qs[] = { 0.5, 0.9, 0.99, 0.995 };
	static const char *const qn[] = { "p50", "p90", "p99", "p99.5" };
	for (size_t i = 0; i < e->ndom; i++) {
		struct domain_stats *d = &e->dom[i];
		if (i) {
			llm_buf_adds(&m, ", ");
			llm_buf_adds(&s, ", ");
		}
		llm_json_put_str(&m, d->name, strlen(d->name));
		llm_buf_addf(&m, ": {\"documents\": %llu, \"bytes\": %llu, \"tokens\": %llu, "
		             "\"bytes_per_token\": ", (unsigned long long)d->docs,
		             (unsigned long long)d->bytes, (unsigned long long)d->tokens);
		llm_json_put_f64(&m, d->tokens ? (double)d->bytes / (double)d->tokens : 0);
		llm_buf_adds(&m, ", \"length\": {");
		for (size_t q = 0; q < 4; q++) {
			llm_buf_addf(&m, "\"%s\": ", qn[q]);
			llm_json_put_f64(&m, llm_sketch_quantile(d->len, qs[q]));
			llm_buf_adds(&m, ", ");
		}
		llm_buf_adds(&m, "\"max\": ");
		llm_json_put_f64(&m, llm_sketch_max(d->len));
		llm_buf_adds(&m, "}}");
		llm_json_put_str(&s, d->name, strlen(d->name));
		llm_buf_adds(&s, ": ");
		llm_sketch_to_json(d->len, &s);
	}
	llm_buf_addc(&m, '}');
	llm_buf_addc(&s, '}');
	llm_run_stats_extra(run, m.p);
	llm_run_stats_extra(run, s.p);
	llm_buf_reset(&m);
	llm_buf_addf(&m, "\"threads\": {\"load_cpu_seconds\": %.6f, \"load_pool_cpu_seconds\": %.6f, "
	             "\"main_cpu_seconds\": %.6f, \"worker_cpu_seconds\": [", (double)e->cpu_load / 1e6,
	             (double)e->cpu_load_pool / 1e6, (double)e->cpu_main / 1e6);
	for (int i = 0; i < llm_pool_workers(e->pool); i++)
		llm_buf_addf(&m, i ? ", %.6f" : "%.6f", (double)e->cpu_worker[i] / 1e6);
	llm_buf_adds(&m, "]}");
	llm_run_stats_extra(run, m.p);
	llm_buf_release(&m);
	llm_buf_release(&s);
}

static llm_bpe *load_tokenizer(const struct opts *o)
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

/* The encoder of o's options: a document encoder per pool worker, the ring of batches, the
 * output (with the stream's header) and the run. h must outlive it. */
static void encoder_open(encoder *e, const struct opts *o, const llm_bpe *bpe, llm_tok_header *h,
                         int nfiles)
{
	memset(e, 0, sizeof *e);
	e->o = o;
	e->dopts = (llm_bpe_doc_opts){ bpe, h, o->co.field, o->meta_keys, LLM_BPE_SPECIAL_IGNORE,
		                       o->bos, o->eos, false };
	if (o->format)
		e->dopts.jsonl = tool_choice("--format", o->format, "stream\0jsonl\0") == 1;
	if (o->special_arg)
		e->dopts.special = (llm_bpe_special)tool_choice("--special", o->special_arg,
		                                                "allow\0ignore\0error\0");
	if (llm_pool_new(&e->pool, o->co.threads) != LLM_OK)
		die_lib();
	int workers = llm_pool_workers(e->pool);
	e->docs = llm_calloc((size_t)workers, sizeof *e->docs);
	for (int i = 0; i < workers; i++)
		e->docs[i] = llm_bpe_doc_new(&e->dopts);
	e->cpu_worker = llm_calloc((size_t)workers, sizeof *e->cpu_worker);
	e->nring = (size_t)workers * RING_PER_WORKER;
	e->ring = llm_calloc(e->nring, sizeof *e->ring);
	if (llm_writer_open(&e->w, o->co.output) != LLM_OK)
		die_lib();
	if (!e->dopts.jsonl) {
		unsigned char hb[LLM_TOK_HEADER_SIZE];
		llm_tok_header_encode(h, hb);
		if (llm_writer_write(e->w, hb, sizeof hb) != LLM_OK)
			die_lib();
	}
	e->run = tool_run_new(&o->co);
	e->names = llm_calloc((size_t)(nfiles ? nfiles : 1), sizeof *e->names);
}

/* Read every input into batches for the pool. Returns 1 if an input failed (reported); sets
 * *fatal when writing failed, which ends the reading. */
static int encode_inputs(encoder *e, char **files, int nfiles, int *fatal)
{
	static char *dash[] = { "-" };
	if (nfiles == 0) {
		nfiles = 1;
		files = dash;
	}
	int failed = 0;
	for (int f = 0; f < nfiles && !*fatal; f++) {
		tool_lines in;
		if (tool_lines_open(&in, files[f], &e->o->co, e->run) != LLM_OK) {
			llm_error("%s", llm_last_error());
			failed = 1;
			continue;
		}
		const char *fname = e->names[e->nnames++] = llm_strdup(in.name);
		while (tool_lines_next(&in)) {
			batch *b = fill_batch(e, fname);
			if (!b) {
				*fatal = 1;
				break;
			}
			batch_push_line(b, in.line, in.len, in.lineno, in.too_long);
		}
		if (tool_lines_close(&in) != LLM_OK) {
			llm_error("%s", llm_last_error());
			failed = 1;
		}
	}
	return failed;
}

/* Wait for the pool, finish (or, after a fatal error, abandon) the output, write --stats and
 * free the encoder but its run. Returns 1 if the output failed. */
static int encoder_close(encoder *e, int fatal)
{
	int failed = 0;
	llm_pool_wait(e->pool); /* after a fatal error, the batches in flight are finished unwritten */
	int workers = llm_pool_workers(e->pool);
	for (int i = 0; i < workers; i++)
		llm_bpe_doc_free(e->docs[i]);
	free(e->docs);
	if (fatal) {
		llm_writer_abort(e->w);
		failed = 1;
	} else if (llm_writer_close(e->w) != LLM_OK) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	/* on one thread the batches were encoded on this one */
	e->cpu_main = thread_cpu() - e->cpu_load - (workers == 1 ? e->cpu_worker[0] : 0);
	stats_json(e, e->run);
	llm_pool_free(e->pool);
	free(e->cpu_worker);
	ring_release(e);
	for (size_t i = 0; i < e->ndom; i++)
		llm_sketch_free(e->dom[i].len);
	free(e->dom);
	return failed;
}

static int cmd_encode(struct opts *o, int nfiles, char **files)
{
	if (!o->format || tool_choice("--format", o->format, "stream\0jsonl\0") == 0)
		tool_binary_output(o->co.output, "the token stream");
	llm_bpe *bpe = load_tokenizer(o);
	uint64_t load_pool = other_threads_cpu();
	if (o->eos && llm_bpe_eos(bpe) < 0)
		die("%s: the tokenizer has no end-of-text token; use --no-eos", o->tokenizer);
	if (o->bos && llm_bpe_bos(bpe) < 0)
		die("%s: the tokenizer has no beginning-of-text token", o->tokenizer);
	llm_tok_header h;
	llm_tok_header_init(&h, llm_bpe_vocab_size(bpe), llm_bpe_file_id(bpe), 0);
	encoder e;
	encoder_open(&e, o, bpe, &h, nfiles);
	e.cpu_load_pool = load_pool;
	llm_pool_stream(e.pool, e.nring, encode_job, &e);
	e.cpu_load = thread_cpu();
	int fatal = 0;
	int failed = encode_inputs(&e, files, nfiles, &fatal);
	if (!fatal)
		fatal = push_batch(&e) || write_done(&e, true);
	failed |= encoder_close(&e, fatal);
	llm_bpe_free(bpe);
	return tool_run_finish(e.run, failed);
}

/* ---- decode ---- */

struct decoder {
	const struct opts *o;
	const llm_bpe *bpe;
	llm_writer *w;
	llm_run *run;
	bool text;
	llm_buf bytes, out;
	llm_json_rec rejrec; /* a token stream record being rejected, as JSON */
};

/* The metadata object (or NULL) with a member appended: `"key": ` is added and the caller
 * writes the value and the closing brace. */
static void meta_open(llm_buf *out, const char *meta, size_t meta_len, const char *key)
{
	size_t end = meta ? meta_len : 0;
	while (end && meta[end - 1] != '}')
		end--;
	if (end) {
		size_t k = end - 1;
		llm_buf_add(out, meta, k);
		while (k && (meta[k - 1] == ' ' || meta[k - 1] == '\n'))
			k--;
		if (meta[k - 1] != '{')
			llm_buf_adds(out, ", ");
	} else {
		llm_buf_addc(out, '{');
	}
	llm_buf_addf(out, "\"%s\": ", key);
}

/*
 * One record's tokens and metadata object (or NULL) to a document line. rec is the parsed
 * JSONL line (line, len) it came from, or NULL for a token stream record, which a reject
 * then shows as its metadata with "tokens". Returns 0, or 1 to stop the run.
 */
static int decode_one(struct decoder *d, const uint32_t *t, size_t n, const char *meta,
                      size_t meta_len, const char *file, uint64_t where, size_t bytes_in,
                      const llm_json_rec *rec, const char *line, size_t len)
{
	const llm_bpe *b = d->bpe;
	const uint32_t *all = t;
	size_t nall = n;
	if (!d->o->keep_special) {
		if (n && llm_bpe_bos(b) >= 0 && t[0] == (uint32_t)llm_bpe_bos(b)) {
			t++;
			n--;
		}
		if (n && llm_bpe_eos(b) >= 0 && t[n - 1] == (uint32_t)llm_bpe_eos(b))
			n--;
	}
	llm_buf_reset(&d->bytes);
	llm_buf_reset(&d->out);
	if (llm_bpe_decode(b, t, n, &d->bytes) != LLM_OK) {
		/* Checked before the record is counted in: a --strict stop keeps the invariant. */
		if (d->o->co.strict) {
			llm_error_at(file, where, "%s", llm_last_error());
			return 1;
		}
		llm_warn_at(file, where, "%s", llm_last_error());
		int dom = rec ? llm_run_in_rec(d->run, bytes_in, rec) : llm_run_in(d->run, bytes_in, NULL, 0);
		if (!rec) {
			meta_open(&d->out, meta, meta_len, "tokens");
			llm_buf_addc(&d->out, '[');
			for (size_t i = 0; i < nall; i++)
				llm_buf_addf(&d->out, i ? ",%u" : "%u", all[i]);
			llm_buf_adds(&d->out, "]}");
			if (llm_json_parse(&d->rejrec, d->out.p, d->out.len) != LLM_OK)
				die("internal error: cannot parse a rejected record");
			rec = &d->rejrec;
			line = d->out.p;
			len = d->out.len;
		}
		if (llm_run_reject(d->run, dom, "bad_token", line, len, rec, NULL, file, where) != LLM_OK)
			die_lib();
		return 0;
	}
	int dom = rec ? llm_run_in_rec(d->run, bytes_in, rec) : llm_run_in(d->run, bytes_in, NULL, 0);
	if (d->text) {
		llm_buf_add(&d->out, d->bytes.p, d->bytes.len);
	} else {
		meta_open(&d->out, meta, meta_len, "text");
		llm_json_put_str(&d->out, d->bytes.p, d->bytes.len);
		llm_buf_addc(&d->out, '}');
	}
	llm_buf_addc(&d->out, '\n');
	if (llm_writer_write(d->w, d->out.p, d->out.len) != LLM_OK)
		die_lib();
	llm_run_out(d->run, dom, d->out.len);
	return 0;
}

static int decode_stream(struct decoder *d, llm_tokreader *tr)
{
	llm_tok_rec rec;
	int rc;
	const char *name = llm_tokreader_name(tr);
	if (llm_tokreader_header(tr)->tokenizer_id != llm_bpe_file_id(d->bpe) &&
	    llm_tokreader_header(tr)->tokenizer_id)
		llm_warn("%s: made with another tokenizer file than %s", name, d->o->tokenizer);
	while ((rc = llm_tokreader_next(tr, &rec)) == LLM_OK)
		if (decode_one(d, rec.tokens, rec.n, rec.meta, rec.meta_len, name, rec.index + 1,
		               rec.n * 4 + rec.meta_len + 8, NULL, NULL, 0))
			return 1;
	if (rc != LLM_EOF) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	return 0;
}

/* One JSONL line with "tokens": the other fields are kept, "tokens" becomes "text". */
struct jsonl_state {
	llm_json_rec rec;
	llm_ids ids;
	llm_buf meta;
	llm_json_edit ed;
};

/* A line of token JSONL that is not a record: fatal with --strict, else warned and rejected. */
static int decode_reject(struct decoder *d, const tool_lines *in, const char *reason,
                         const char *why, const llm_json_rec *rec)
{
	if (d->o->co.strict) {
		llm_error_at(in->name, in->lineno, "%s", why);
		return 1;
	}
	llm_warn_at(in->name, in->lineno, "%s", why);
	int dom = rec ? llm_run_in_rec(d->run, in->full_len + 1, rec)
	              : llm_run_in(d->run, in->full_len + 1, NULL, 0);
	if (llm_run_reject(d->run, dom, reason, in->line, in->len, rec, NULL, in->name,
	                   in->lineno) != LLM_OK)
		die_lib();
	return 0;
}

static int decode_jsonl_line(struct decoder *d, struct jsonl_state *js, const tool_lines *in)
{
	if (in->too_long)
		return decode_reject(d, in, "too_long", "line over --max-line", NULL);
	const llm_json_val *t = NULL;
	const char *line = in->line, *name = in->name;
	size_t len = in->len;
	uint64_t ln = in->lineno;
	bool parsed = llm_json_parse(&js->rec, line, len) == LLM_OK;
	if (!parsed || !(t = llm_json_get(&js->rec, "tokens")) || t->type != LLM_JSON_ARRAY)
		return decode_reject(d, in, parsed ? "no_tokens" : "bad_json",
		                     "not a JSON object with a \"tokens\" array", parsed ? &js->rec : NULL);
	js->ids.n = 0;
	size_t it = 0;
	llm_json_val k, v;
	int64_t x;
	while (llm_json_next(t, &it, &k, &v) == LLM_OK)
		llm_ids_push(&js->ids, llm_json_i64(&v, &x) || x < 0 || x > UINT32_MAX ? UINT32_MAX : (uint32_t)x);
	llm_json_edit_reset(&js->ed);
	llm_json_edit_del(&js->ed, "tokens");
	llm_buf_reset(&js->meta);
	llm_json_write(&js->rec, &js->ed, &js->meta);
	return decode_one(d, js->ids.v, js->ids.n, js->meta.p, js->meta.len, name, ln, len + 1,
	                  &js->rec, line, len);
}

/* Decode the token JSONL that r reads, and free r. */
static int decode_jsonl(struct decoder *d, struct jsonl_state *js, llm_reader *r)
{
	tool_lines in;
	tool_lines_init(&in, r, &d->o->co, NULL);
	int failed = 0;
	while (!failed && tool_lines_next(&in))
		failed = decode_jsonl_line(d, js, &in);
	if (tool_lines_close(&in) != LLM_OK) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	return failed;
}

/* Standard input cannot be reopened once its first bytes told the format, so it is read
 * whole: decoding from stdin holds the input in memory. */
static int decode_stdin(struct decoder *d, struct jsonl_state *js)
{
	llm_reader *r;
	if (llm_reader_open(&r, "-") != LLM_OK) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	llm_buf all = LLM_BUF_INIT;
	ssize_t got;
	do {
		llm_buf_grow(&all, 1 << 20);
		got = llm_reader_read(r, all.p + all.len, 1 << 20);
		if (got > 0)
			all.len += (size_t)got;
	} while (got > 0);
	llm_reader_free(r);
	int failed = 0;
	if (got < 0) {
		llm_error("%s", llm_last_error());
		failed = 1;
	} else if (all.len >= 8 && memcmp(all.p, LLM_TOK_MAGIC, 8) == 0) {
		llm_tokreader *tr;
		if (llm_tokreader_open_mem(&tr, all.p, all.len, "<stdin>") != LLM_OK) {
			llm_error("%s", llm_last_error());
			failed = 1;
		} else {
			failed = decode_stream(d, tr);
			llm_tokreader_free(tr);
		}
	} else if (llm_reader_open_mem(&r, all.p, all.len, "<stdin>") != LLM_OK) {
		llm_error("%s", llm_last_error());
		failed = 1;
	} else {
		failed = decode_jsonl(d, js, r);
	}
	llm_buf_release(&all);
	return failed;
}

static int decode_file(struct decoder *d, struct jsonl_state *js, const char *path)
{
	/* A token stream starts with its magic; anything else is read as JSONL. */
	llm_reader *r;
	if (llm_reader_open(&r, path) != LLM_OK) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	char magic[8];
	ssize_t got = llm_reader_read(r, magic, sizeof magic);
	llm_reader_free(r);
	int failed = 0;
	if (got == 8 && memcmp(magic, LLM_TOK_MAGIC, 8) == 0) {
		llm_tokreader *tr;
		if (llm_tokreader_open(&tr, path) != LLM_OK) {
			llm_error("%s", llm_last_error());
			return 1;
		}
		failed = decode_stream(d, tr);
		llm_tokreader_free(tr);
		return failed;
	}
	if (llm_reader_open(&r, path) != LLM_OK) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	return decode_jsonl(d, js, r);
}

static int cmd_decode(struct opts *o, int nfiles, char **files)
{
	llm_bpe *bpe = load_tokenizer(o);
	struct decoder d = { o, bpe, NULL, NULL, false, LLM_BUF_INIT, LLM_BUF_INIT, { 0 } };
	llm_json_rec_init(&d.rejrec);
	if (o->format)
		d.text = tool_choice("--format", o->format, "jsonl\0text\0") == 1;
	if (llm_writer_open(&d.w, o->co.output) != LLM_OK)
		die_lib();
	d.run = tool_run_new(&o->co);
	struct jsonl_state js;
	llm_json_rec_init(&js.rec);
	llm_ids_init(&js.ids);
	llm_buf_init(&js.meta);
	llm_json_edit_init(&js.ed);
	int failed = 0;
	if (nfiles == 0)
		failed = decode_stdin(&d, &js);
	for (int f = 0; f < nfiles; f++)
		failed |= strcmp(files[f], "-") == 0 ? decode_stdin(&d, &js) : decode_file(&d, &js, files[f]);
	if (llm_writer_close(d.w) != LLM_OK) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	llm_json_rec_release(&js.rec);
	llm_ids_release(&js.ids);
	llm_buf_release(&js.meta);
	llm_json_edit_release(&js.ed);
	llm_buf_release(&d.bytes);
	llm_buf_release(&d.out);
	llm_json_rec_release(&d.rejrec);
	llm_bpe_free(bpe);
	return tool_run_finish(d.run, failed);
}

/* ---- train ---- */

/* What was counted and what training left out, as a line before the summary and in --stats. */
static void train_report(const struct opts *o, const llm_bpe_trainer *tr, llm_run *run)
{
	llm_bpe_train_stats st;
	llm_bpe_trainer_stats(tr, &st);
	double frac = st.occurrences ? (double)st.pruned_occurrences / (double)st.occurrences : 0;
	double bfrac = st.bytes ? (double)st.pruned_bytes / (double)st.bytes : 0;
	llm_buf b = LLM_BUF_INIT;
	llm_buf_addf(&b, "%llu distinct pieces, %llu occurrences; ", (unsigned long long)st.pieces,
	             (unsigned long long)st.occurrences);
	if (st.pruned_pieces)
		llm_buf_addf(&b, "pruned %llu pieces seen fewer than %llu times (%.2f%% of occurrences, "
		             "%.2f%% of bytes) to fit --memory", (unsigned long long)st.pruned_pieces,
		             (unsigned long long)st.min_count, 100 * frac, 100 * bfrac);
	else
		llm_buf_adds(&b, "none pruned");
	if (st.runs)
		llm_buf_addf(&b, "; %u runs spilled to disk", st.runs);
	llm_buf_addf(&b, "; %zu tokens, peak %.1f MB", llm_bpe_trainer_vocab_size(tr),
	             (double)st.peak_memory / 1e6);
	llm_info("%s", b.p);
	if (llm_bpe_trainer_vocab_size(tr) < (size_t)o->vocab_size) {
		if (st.pruned_pieces)
			llm_warn("%zu tokens, not %lld: no more pairs of the pieces kept within --memory are "
			         "seen %lld times; raise --memory", llm_bpe_trainer_vocab_size(tr),
			         o->vocab_size, o->min_freq);
		else
			llm_warn("%zu tokens, not %lld: no more pairs are seen %lld times in the input",
			         llm_bpe_trainer_vocab_size(tr), o->vocab_size, o->min_freq);
	}
	llm_buf_reset(&b);
	llm_buf_addf(&b, "\"train\": {\"pieces\": %llu, \"occurrences\": %llu, \"bytes\": %llu, "
	             "\"pruned_pieces\": %llu, \"pruned_occurrences\": %llu, \"pruned_bytes\": %llu, "
	             "\"pruned_fraction\": ", (unsigned long long)st.pieces,
	             (unsigned long long)st.occurrences, (unsigned long long)st.bytes,
	             (unsigned long long)st.pruned_pieces, (unsigned long long)st.pruned_occurrences,
	             (unsigned long long)st.pruned_bytes);
	llm_json_put_f64(&b, frac);
	llm_buf_adds(&b, ", \"pruned_bytes_fraction\": ");
	llm_json_put_f64(&b, bfrac);
	llm_buf_addf(&b, ", \"min_count\": %llu, \"pairs\": %llu, \"runs\": %u, \"merge_passes\": %u, "
	             "\"retrains\": %u, \"rounds\": %u, \"first_merges\": %llu, \"exact_merges\": %llu, "
	             "\"superbpe_from\": %llu, \"memory_limit\": %zu, \"peak_memory\": %zu, "
	             "\"vocab_size\": %zu}",
	             (unsigned long long)st.min_count, (unsigned long long)st.pairs, st.runs,
	             st.merge_passes, st.retrains, st.rounds, (unsigned long long)st.first_merges,
	             (unsigned long long)st.exact_merges, (unsigned long long)st.superbpe_from,
	             o->memory, st.peak_memory, llm_bpe_trainer_vocab_size(tr));
	llm_run_stats_extra(run, b.p);
	llm_buf_release(&b);
}

/* The default pre-tokenizer of train, measured for mixed Chinese and English text
 * (bench/tokenize_patterns.sh, man page): o200k's gives the most characters per token on
 * Chinese and within 0.3% of the most on English. */
#define TRAIN_PATTERN "o200k"

static int cmd_train(struct opts *o, int nfiles, char **files)
{
	if (o->vocab_size <= 0)
		usage_error("train needs --vocab-size N");
	if (!o->co.output)
		usage_error("train needs -o tokenizer.json");
	const char *pattern = o->pattern ? o->pattern : TRAIN_PATTERN;
	size_t npat = 1;
	const char *const *pats = llm_pretok_named_seq(pattern, &npat);
	llm_bpe_trainer *tr;
	if (llm_bpe_trainer_new_seq(&tr, pats ? pats : &pattern, pats ? npat : 1) != LLM_OK)
		usage_error("%s", llm_last_error());
	llm_bpe_trainer_set_memory(tr, o->memory, o->tmpdir);
	if (o->superbpe && llm_bpe_trainer_set_superbpe(tr, NULL, (size_t)o->superbpe) != LLM_OK)
		usage_error("--superbpe: %s", llm_last_error());
	llm_run *run = tool_run_new(&o->co);
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	llm_buf text = LLM_BUF_INIT;
	int failed = 0;
	char *dash[] = { "-" };
	if (nfiles == 0) {
		nfiles = 1;
		files = dash;
	}
	for (int f = 0; f < nfiles; f++) {
		tool_lines in;
		if (tool_lines_open(&in, files[f], &o->co, run) != LLM_OK) {
			llm_error("%s", llm_last_error());
			failed = 1;
			continue;
		}
		while (tool_lines_next(&in)) {
			const char *reason = NULL;
			const llm_json_val *t = NULL;
			int ok = !in.too_long && llm_json_parse(&rec, in.line, in.len) == LLM_OK;
			int dom = ok ? llm_run_in_rec(run, in.full_len + 1, &rec)
			             : llm_run_in(run, in.full_len + 1, NULL, 0);
			if (in.too_long)
				reason = "too_long";
			else if (!ok)
				reason = "bad_json";
			else if (!(t = llm_json_get(&rec, o->co.field)) || t->type != LLM_JSON_STRING)
				reason = "no_text";
			if (reason) {
				if (o->co.strict)
					die("%s:%llu: %s", in.name, (unsigned long long)in.lineno, reason);
				llm_warn_at(in.name, in.lineno, "%s", reason);
				if (llm_run_reject(run, dom, reason, in.line, in.len, ok ? &rec : NULL, NULL,
				                   in.name, in.lineno))
					die_lib();
				continue;
			}
			llm_buf_reset(&text);
			llm_json_str(t, &text);
			if (llm_bpe_trainer_add(tr, text.p, text.len) != LLM_OK)
				die("%s:%llu: %s", in.name, (unsigned long long)in.lineno, llm_last_error());
			llm_run_out(run, dom, in.full_len + 1);
		}
		if (tool_lines_close(&in) != LLM_OK) {
			llm_error("%s", llm_last_error());
			failed = 1;
		}
	}
	llm_json_rec_release(&rec);
	llm_buf_release(&text);
	if (llm_run_records_out(run) == 0) {
		/* A tokenizer of the 256 bytes alone is never what was asked for. */
		llm_error("no documents to train on; %s not written", o->co.output);
		llm_bpe_trainer_free(tr);
		tool_run_finish(run, 1);
		return 1;
	}
	if (o->nspecials == 0)
		o->specials[o->nspecials++] = "<|endoftext|>";
	if (llm_bpe_trainer_train(tr, (size_t)o->vocab_size, (uint64_t)o->min_freq, o->specials,
	                          (size_t)o->nspecials) != LLM_OK)
		die_lib();
	llm_buf out = LLM_BUF_INIT;
	llm_bpe_trainer_write_hf(tr, &out);
	if (llm_write_file(o->co.output, out.p, out.len) != LLM_OK)
		die_lib();
	if (o->tiktoken) {
		llm_buf_reset(&out);
		llm_bpe_trainer_write_tiktoken(tr, &out);
		if (llm_write_file(o->tiktoken, out.p, out.len) != LLM_OK)
			die_lib();
	}
	llm_buf_release(&out);
	train_report(o, tr, run);
	llm_bpe_trainer_free(tr);
	return tool_run_finish(run, failed);
}

int main(int argc, char **argv)
{
	tool_init("llm-tokenize");
	tool_save_cmdline(argc, argv);
	struct opts o;
	memset(&o, 0, sizeof o);
	tool_common_init(&o.co, &cli);
	o.eos = true;
	o.min_freq = 2;
	long pages = sysconf(_SC_PHYS_PAGES), pagesize = sysconf(_SC_PAGESIZE);
	o.memory = pages > 0 && pagesize > 0 ? (size_t)pages / 4 * (size_t)pagesize : (size_t)1 << 30;
	o.cmd = CMD_ENCODE;
	if (argc > 1 && strcmp(argv[1], "decode") == 0)
		o.cmd = CMD_DECODE;
	else if (argc > 1 && strcmp(argv[1], "train") == 0)
		o.cmd = CMD_TRAIN;
	if (o.cmd != CMD_ENCODE) {
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
			if (o.cmd == CMD_TRAIN) {
				if (o.nspecials == (int)(sizeof o.specials / sizeof *o.specials))
					usage_error("too many --special tokens");
				if (!*optarg)
					usage_error("--special needs a token");
				o.specials[o.nspecials++] = optarg;
			} else {
				o.special_arg = optarg;
			}
			break;
		case OPT_META: o.meta_list = optarg; break;
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
		default: tool_bad_option();
		}
	}
	static const char *const default_meta[] = { "id", "domain", "lang", "weight", NULL };
	if (o.meta_list) {
		int n = 0;
		for (char *k = strtok(o.meta_list, ","); k; k = strtok(NULL, ",")) {
			if (n == (int)(sizeof o.meta_keys / sizeof *o.meta_keys) - 1)
				usage_error("--meta: too many keys");
			o.meta_keys[n++] = k;
		}
		o.meta_keys[n] = NULL;
	} else {
		memcpy(o.meta_keys, default_meta, sizeof default_meta);
	}
	if (o.cmd == CMD_DECODE)
		return cmd_decode(&o, argc - optind, argv + optind);
	if (o.cmd == CMD_TRAIN)
		return cmd_train(&o, argc - optind, argv + optind);
	return cmd_encode(&o, argc - optind, argv + optind);
}
