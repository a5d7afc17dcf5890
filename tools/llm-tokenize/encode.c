/*
 * encode.c — llm-tokenize's encoding: JSONL documents to the token stream (DESIGN §4) or
 * JSONL with "tokens".
 *
 * This thread reads lines into batches (bpe_batch.h) and hands each to the pool's stream as
 * it fills; with --threads N the N workers encode batches as they come, and this thread
 * writes each one back in input order once it and those before it are done, so output is
 * identical for every N. Memory: the vocabulary plus a ring of 4N batches of at most
 * 256 KiB of input, their output (and one line up to --max-line).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/io.h"
#include "core/json.h"
#include "core/pool.h"
#include "llm-tokenize.h"
#include "tok/bpe_batch.h"
#include "tok/bpe_doc.h"
#include "tok/tokstats.h"
#include "tok/tokstream.h"

/* Batches in flight per worker: documents differ in size by orders of magnitude, so a worker
 * on a whole book must not stop the others; they go on with the batches behind it until the
 * ring is full, and this thread writes while they encode. */
#define RING_PER_WORKER 4

typedef struct {
	const struct tok_opts *o;
	llm_bpe_doc_opts dopts;
	llm_pool *pool;
	llm_bpe_doc **docs;      /* per pool worker */
	llm_bpe_batch *ring;     /* batch i of the stream is ring[i % nring] */
	size_t nring;
	size_t pushed, popped;   /* batches handed to the pool, and written */
	llm_bpe_batch *fill;     /* the batch being filled (ring[pushed % nring]), or NULL */
	char **names;            /* the inputs' names, which the batches in flight point to */
	size_t nnames;
	llm_writer *w;
	llm_run *run;
	llm_tokstats *tokstats;
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

static void encode_job(void *ctx, size_t i, int worker)
{
	encoder *e = ctx;
	uint64_t t = thread_cpu();
	llm_bpe_batch_encode(&e->ring[i % e->nring], e->docs[worker]);
	e->cpu_worker[worker] += thread_cpu() - t;
}

/* Account and write a finished batch in input order. Returns 1 on a fatal error. */
static int batch_write(encoder *e, const llm_bpe_batch *b)
{
	const struct tok_opts *o = e->o;
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
			llm_tokstats_add(e->tokstats, r->domain, r->text_bytes, r->tokens);
		}
		start = end;
	}
	return 0;
}

/* Write the batches the workers have finished, in input order, and return once the oldest
 * in flight is still being encoded (when `all`, once every batch is written); wait for it
 * when the ring is full, so that the next batch to fill is free. Returns 1 on a fatal error. */
static int write_done(encoder *e, bool all)
{
	while (e->popped < e->pushed) {
		if (!llm_pool_pop(e->pool, all || e->pushed - e->popped == e->nring))
			return 0;
		llm_bpe_batch *b = &e->ring[e->popped++ % e->nring];
		if (batch_write(e, b))
			return 1;
		llm_bpe_batch_trim(b);
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
static llm_bpe_batch *fill_batch(encoder *e, const char *file)
{
	llm_bpe_batch *b = e->fill;
	if (b && llm_bpe_batch_fits(b, file))
		return b;
	if (push_batch(e))
		return NULL;
	b = e->fill = &e->ring[e->pushed % e->nring];
	llm_bpe_batch_reset(b, file);
	return b;
}

static void ring_release(encoder *e)
{
	for (size_t i = 0; i < e->nring; i++)
		llm_bpe_batch_release(&e->ring[i]);
	free(e->ring);
	for (size_t i = 0; i < e->nnames; i++)
		free(e->names[i]);
	free(e->names);
}

static void stats_json(encoder *e, llm_run *run)
{
	llm_buf m = LLM_BUF_INIT, s = LLM_BUF_INIT;
	llm_tokstats_json(e->tokstats, &m, &s);
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

/* The encoder of o's options: a document encoder per pool worker, the ring of batches, the
 * output (with the stream's header) and the run. h must outlive it. */
static void encoder_open(encoder *e, const struct tok_opts *o, const llm_bpe *bpe, llm_tok_header *h,
                         int nfiles)
{
	memset(e, 0, sizeof *e);
	e->o = o;
	e->dopts = (llm_bpe_doc_opts){ .bpe = bpe, .header = h, .field = o->co.field,
		                       .meta_keys = o->meta_keys, .special = LLM_BPE_SPECIAL_IGNORE,
		                       .bos = o->bos, .eos = o->eos, .sample = o->sample,
		                       .nbest = o->nbest, .alpha = o->alpha, .seed = o->seed };
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
	e->tokstats = llm_tokstats_new();
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
			llm_bpe_batch *b = fill_batch(e, fname);
			if (!b) {
				*fatal = 1;
				break;
			}
			llm_bpe_batch_push(b, in.line, in.len, in.lineno, in.too_long);
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
	llm_tokstats_free(e->tokstats);
	return failed;
}

int tok_encode(struct tok_opts *o, int nfiles, char **files)
{
	if (!o->format || tool_choice("--format", o->format, "stream\0jsonl\0") == 0)
		tool_binary_output(o->co.output, "the token stream");
	llm_bpe *bpe = tok_load_tokenizer(o);
	uint64_t load_pool = other_threads_cpu();
	if (o->eos && llm_bpe_eos(bpe) < 0)
		die("%s: the tokenizer has no end-of-text token; use --no-eos", o->tokenizer);
	if (o->bos && llm_bpe_bos(bpe) < 0)
		die("%s: the tokenizer has no beginning-of-text token", o->tokenizer);
	if (o->sample) {
		llm_bpe_enc *probe = llm_bpe_enc_new(bpe);
		int rc = llm_bpe_enc_sample(probe, o->nbest, o->alpha, o->seed);
		llm_bpe_enc_free(probe);
		if (rc)
			usage_error("--sample: %s", llm_last_error());
	}
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
