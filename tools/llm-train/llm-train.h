/*
 * llm-train.h — what tools/llm-train.c (options, main) and its subcommand in this folder
 * share: llm-train classify, the fine-tuning of a classifier or regressor.
 */
#ifndef LLM_TRAIN_TOOL_H
#define LLM_TRAIN_TOOL_H

#include "../tool.h"
#include "model/train.h"

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
