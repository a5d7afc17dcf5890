/*
 * common.c — what llm-eval's subcommands share: the model and its backend, the tokenizer,
 * the prefix token, the JSON file, standard output's check, rejected lines and the run.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/io.h"
#include "core/json.h"
#include "llm-eval.h"
#include "model/gpu.h"
#include "model/safetensors.h"

double evt_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The precision the forwards run in: fp32 unless --precision says otherwise (on a GPU). */
static int precision_of(const evt_opts *o)
{
	return o->device == LLM_DEVICE_CUDA && o->precision >= 0 ? o->precision : LLM_PREC_FP32;
}

void evt_load_model(evt_model *mt, const char *path, const evt_opts *o)
{
	memset(mt, 0, sizeof *mt);
	if (llm_hf_open(path, &mt->m, &mt->info) != LLM_OK)
		die_lib();
	llm_info("%s: %d layers, width %d, vocab %d, %s weights%s", mt->info.dir,
	         llm_model_get_config(mt->m)->num_hidden_layers,
	         llm_model_get_config(mt->m)->hidden_size, llm_model_get_config(mt->m)->vocab_size,
	         llm_safetensors_dtype_name(mt->info.dtype), mt->info.llmkit ? "" : " (Hugging Face)");
	llm_backend_options bo;
	llm_backend_options_init(&bo);
	bo.device = o->device;
	bo.precision = precision_of(o);
	bo.inference = 1;
	if (llm_backend_open(&mt->be, mt->m, NULL, NULL, &bo) != LLM_OK)
		die("%s: %s", mt->info.dir, llm_last_error());
	if (o->device != LLM_DEVICE_CPU)
		llm_info("%s: on %s", mt->info.dir, llm_backend_name(mt->be));
}

void evt_free_model(evt_model *mt)
{
	llm_backend_free(mt->be);
	llm_model_free(mt->m);
	llm_hf_info_release(&mt->info);
}

void evt_scorer_evaluator(llm_evaluator *ev, const evt_model *mt)
{
	llm_evaluator_set_scorer(ev, llm_backend_token_loss_fn(mt->be), mt->be);
}

void evt_scorer_chooser(llm_chooser *ch, const evt_model *mt)
{
	llm_chooser_set_scorer(ch, llm_backend_token_loss_fn(mt->be), mt->be);
}

void evt_device_json(llm_buf *b, const evt_opts *o)
{
	llm_buf_addf(b, ", \"device\": \"%s\", \"precision\": \"%s\"",
	             o->device == LLM_DEVICE_CUDA ? "cuda" : "cpu",
	             llm_precision_name(precision_of(o)));
}

int evt_seq_len(const evt_opts *o, const evt_model *mt)
{
	int maxT = llm_model_get_config(mt->m)->max_position_embeddings;
	/* rolling: lm-evaluation-harness's max_length, max_position_embeddings unless given */
	int T = o->seq ? o->seq : o->mode == EVT_MODE_ROLLING ? maxT
	      : mt->info.seq_len > 0 ? (int)mt->info.seq_len : 1024;
	if (T > maxT) {
		if (o->seq)
			usage_error("--seq-len %d exceeds the model's max_position_embeddings %d", T, maxT);
		T = maxT;
	}
	return T;
}

/* A tokenizer the checkpoint was not trained with is refused: its ids mean other text, and
 * the loss of the model on them means nothing. */
llm_bpe *evt_tokenizer(const evt_opts *o, const evt_model *mt)
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

/* What precedes a document in training. */
int64_t evt_doc_prefix(const evt_opts *o, const llm_bpe *bpe)
{
	if (o->no_prefix)
		return -1;
	int64_t b = llm_bpe_bos(bpe);
	return b >= 0 ? b : llm_bpe_eos(bpe);
}

void evt_write_json(const char *path, llm_buf *b)
{
	llm_buf_addc(b, '\n');
	if (path && llm_write_file(path, b->p, b->len) != LLM_OK)
		die_lib();
}

void evt_check_stdout(void)
{
	if (fflush(stdout) != 0 || ferror(stdout))
		die("write error: <stdout>: %s", strerror(errno));
}

/*
 * The record itself goes to --rejects when rec holds its parse, else the line wrapped (a line
 * over --max-line: its head and its length). The caller counted it in as dom. run NULL: a
 * pass over lines already accounted (compare's later checkpoints), silent.
 */
void evt_reject_line(const evt_opts *o, llm_run *run, int dom, const tool_lines *in,
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

/* Its rejects file is checked against --json: one of the two would be lost. */
llm_run *evt_new_run(const evt_opts *o)
{
	struct tool_common co = o->co;
	co.stats = o->json;
	tool_check_outputs(&co);
	return tool_run_new(&o->co);
}

/* Rejected lines fail the run unless --rejects keeps them. */
int evt_finish_run(const evt_opts *o, llm_run *run, int failed)
{
	if (!run)
		return failed;
	failed |= llm_run_records_rejected(run) && !o->co.rejects;
	return tool_run_finish(run, failed);
}
