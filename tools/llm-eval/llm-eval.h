/*
 * llm-eval.h — what tools/llm-eval.c (options, main) and its subcommands in this folder share:
 * the command line, the loaded model and its backend, the tokenizer and prefix rules, the run
 * that accounts the lines read, and one entry point per subcommand.
 *
 * Each entry point runs to the end and returns the exit status (0, or 1 when lines were
 * rejected without --rejects or an input failed); it dies (tool.h) on usage errors and on
 * errors of the library that end the run. Everything here runs on the main thread.
 */
#ifndef LLM_EVAL_TOOL_H
#define LLM_EVAL_TOOL_H

#include <stdint.h>

#include "../tool.h"
#include "core/buf.h"
#include "core/run.h"
#include "model/backend.h"
#include "model/eval.h"
#include "model/evalres.h"
#include "model/fewshot.h"
#include "model/hf.h"
#include "model/task.h"
#include "model/model.h"
#include "tok/bpe.h"

enum { EVT_SPLIT_VAL, EVT_SPLIT_TRAIN, EVT_SPLIT_ALL };
enum { EVT_MODE_STREAM, EVT_MODE_ROLLING };

/* The command line, resolved: device is LLM_DEVICE_CPU or LLM_DEVICE_CUDA (main resolves
 * --device once; nothing below looks at the hardware). */
typedef struct {
	struct tool_common co;
	const char *ckpt, *tokenizer, *json, *prompt, *data, *task, *delim, *log_samples;
	const char *fewshot_from, *description;
	const char *fewshot_delim;   /* NULL: "\n\n" */
	const llm_task *ytask;       /* task: the YAML whose documents are the lines */
	int num_fewshot, fewshot_given;
	int fewshot_self;            /* --fewshot-from is the scored file: no item its own example */
	int seq, batch, split, mode, sampled, max_tokens, top_k, no_cache, ids, no_prefix;
	int device, precision; /* LLM_DEVICE_*, LLM_PREC_* (-1: not given) */
	int64_t seed; /* -1: default */
	double temperature, top_p;
} evt_opts;

/* A loaded checkpoint, the backend its forwards run on, and what its state says. */
typedef struct {
	llm_model *m;
	llm_backend *be;
	llm_hf_info info;
} evt_model;

/* ---- shared (common.c) ---- */

double evt_now(void);
void evt_load_model(evt_model *mt, const char *path, const evt_opts *o);
void evt_free_model(evt_model *mt);
/* Score ev or ch with the model's backend (the CPU's own forward, or the GPU's). */
void evt_scorer_evaluator(llm_evaluator *ev, const evt_model *mt);
void evt_scorer_chooser(llm_chooser *ch, const evt_model *mt);
/* ", \"device\": ..., \"precision\": ..." of the JSON results. */
void evt_device_json(llm_buf *b, const evt_opts *o);
/* --seq-len, else the checkpoint's training length (rolling: max_position_embeddings). */
int evt_seq_len(const evt_opts *o, const evt_model *mt);
/* -t, or the tokenizer beside the model or in its run directory; NULL when there is none. */
llm_bpe *evt_tokenizer(const evt_opts *o, const evt_model *mt);
/* BOS when the tokenizer has one, else end-of-text; -1 with --no-prefix. */
int64_t evt_doc_prefix(const evt_opts *o, const llm_bpe *bpe);
/* Write b plus a newline to path (NULL: nothing). */
void evt_write_json(const char *path, llm_buf *b);
void evt_check_stdout(void);
/* A malformed line of in: fatal with --strict; else warned and rejected (reason, why as
 * "error") to --rejects, the record itself when rec holds its parse. run NULL: silent. */
void evt_reject_line(const evt_opts *o, llm_run *run, int dom, const tool_lines *in,
                     const char *reason, const char *why, const llm_json_rec *rec);
/* The run that accounts a command's lines, and its exit status. */
llm_run *evt_new_run(const evt_opts *o);
int evt_finish_run(const evt_opts *o, llm_run *run, int failed);

/* ---- loss (loss.c) ---- */

/* Evaluate the loss of mt over files (or --sampled batches); their documents are the records
 * of run (NULL: not accounted); *secs the time it took. */
llm_evaluator *evt_run_loss(const evt_opts *o, const evt_model *mt, char **files, int nfiles,
                            const llm_bpe *bpe, llm_run *run, double *secs);
int evt_cmd_loss(const evt_opts *o, char **files, int nfiles);

/* ---- choice (choice.c) ---- */

/* Score the task items of files into t, after their few-shot examples (fs NULL: none); each
 * line a record of run (NULL: not accounted), each item a line of samples (NULL: none). */
void evt_run_choice(const evt_opts *o, const evt_model *mt, const llm_bpe *bpe, char **files,
                    int nfiles, llm_run *run, llm_choice_tally *t, llm_writer *samples,
                    llm_fewshot *fs);
int evt_cmd_choice(const evt_opts *o, char **files, int nfiles);
/* The few-shot pool: --fewshot-from's items (a malformed one is fatal), else the task's own;
 * NULL without --num-fewshot or --description. */
llm_fewshot *evt_load_fewshot(const evt_opts *o, char **files, int nfiles);

/* ---- task (harness.c): lm-evaluation-harness task YAML ---- */

int evt_cmd_task(const evt_opts *o, char **files, int nfiles);

/* ---- generate, compare ---- */

int evt_cmd_generate(const evt_opts *o, int nfiles);
int evt_cmd_compare(const evt_opts *o, char **files, int nfiles);

#endif
