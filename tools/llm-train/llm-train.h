/*
 * llm-train.h — what tools/llm-train.c (options, main) and its files in this folder share:
 * the progress line and report page of a run (progress.c), and llm-train classify, the
 * fine-tuning of a classifier or regressor (classify.c).
 */
#ifndef LLM_TRAIN_TOOL_H
#define LLM_TRAIN_TOOL_H

#include <stdint.h>

#include "../tool.h"
#include "model/runlog.h"
#include "model/train.h"

/* The command line, resolved. */
typedef struct {
	llm_train_options t;
	int log_every, report_every, precision_given;
	uint64_t *skip;
	size_t nskip;
} options;

/* The progress line's state: the clock and counts at the first step shown. */
typedef struct {
	const options *o;
	double t_begin;
	int64_t first, tok0;
	int started;
	llm_runlog *rl;      /* --report-every: the run read back, as it grows */
} progress;

/* Seconds of CLOCK_MONOTONIC. */
double train_now(void);
/* --report-every: the run's page, live (reloading) or the last one (live 0). */
void train_report_page(progress *p, int64_t steps_done, int live);
/* llm_train_run's step callback (ctx: a progress): the line on stderr, the page when due. */
void train_show_progress(void *ctx, const llm_trainer *t, const llm_train_step *s);
/* The line's end after the last step, on a terminal. */
void train_end_progress(const options *o);

/* llm-train classify's own options; the schedule and the batch are llm-train's (t). */
struct classify_args {
	const struct tool_common *co; /* -o: the directory written; --field: the text */
	const char *init;             /* --init: the pretrained checkpoint or HF directory */
	const char *label_field;      /* --label-field (default "label") */
	const char *labels;           /* --labels a,b,c: their order (default: sorted) */
	int problem;                  /* --problem: LLM_SEQCLS_* */
};

/*
 * Fine-tune a sequence classifier (model/seqcls.h) from a->init on the labelled JSONL of
 * files[0..nfiles) (none: standard input) for t->steps AdamW steps of t->batch documents cut
 * at t->seq tokens, with t->opt's schedule, and write it to a->co->output as a Hugging Face
 * LlamaForSequenceClassification directory with its tokenizer. Returns the exit status.
 */
int train_classify(const llm_train_options *t, const struct classify_args *a, char **files,
                   int nfiles);

#endif
