/*
 * task.h — lm-evaluation-harness's task YAML for local data, the subset local JSONL tasks use:
 *
 *   task: NAME                       dataset_path: json
 *   data_files: PATH | {SPLIT: PATH, ...}           (relative to the working directory;
 *       lm-evaluation-harness 0.4 reads it under dataset_kwargs, taken here too)
 *   test_split / validation_split / training_split / fewshot_split: SPLIT
 *   output_type: multiple_choice | loglikelihood_rolling
 *   doc_to_text, doc_to_target, doc_to_choice: a template, a field name, or (doc_to_target)
 *       an integer, (doc_to_choice) a list of strings
 *   num_fewshot, description (plain text), target_delimiter (" "), fewshot_delimiter ("\n\n")
 *   metric_list: [{metric: acc | acc_norm | word_perplexity | byte_perplexity |
 *                  bits_per_byte, aggregation, higher_is_better}]
 *   metadata: {version: X}
 *
 * Templates are Jinja's {{ field }} with a top-level field of the document and text around
 * it: a string field as it is, a number as written in the JSON, true/false as Python prints
 * them. Anything else Jinja would evaluate ({% %}, filters, indexing, expressions) is refused
 * when the task loads, with LLM_EFORMAT naming the file and the line; so is any key not above
 * and an output type not above. A template without braces that names a field of the document
 * is that field (lm-evaluation-harness reads such a string as a column name).
 *
 * Multiple choice: each document becomes an llm_choice_item (eval.h): context = doc_to_text,
 * choices = doc_to_choice (a list field, or the YAML list), gold = doc_to_target (an index, or
 * a choice's text); few-shot examples are built from those items as fewshot.h builds them.
 * Rolling: the document's text is doc_to_target (as lm-evaluation-harness's
 * loglikelihood_rolling requests take it), scored as llm_eval_doc_rolling does.
 *
 * Thread safety: a loaded task is read-only.
 */
#ifndef LLM_TASK_H
#define LLM_TASK_H

#include <stddef.h>

#include "core/buf.h"
#include "core/json.h"
#include "eval.h"

enum { LLM_TASK_MULTIPLE_CHOICE, LLM_TASK_ROLLING };

typedef struct {
	char *split, *path;
} llm_task_file;

typedef struct {
	char *file;          /* the YAML's path, for messages */
	char *name;          /* task */
	int output_type;     /* LLM_TASK_* */
	llm_task_file *files;
	size_t nfiles;
	char *test_split, *validation_split, *training_split, *fewshot_split; /* NULL: unset */
	char *doc_to_text, *doc_to_target, *doc_to_choice;                    /* templates */
	long target_index;   /* doc_to_target given as an integer; -1 otherwise */
	char **choice_list;  /* doc_to_choice given as a list */
	size_t nchoice_list;
	char *description, *target_delimiter, *fewshot_delimiter;
	int num_fewshot;     /* -1: unset */
	char **metrics;      /* metric_list's names, in order */
	size_t nmetrics;
	char *version;       /* metadata.version as written; NULL: unset */
} llm_task;

/* Load path; LLM_EFORMAT "FILE:LINE: what" for what is outside the subset. */
int llm_task_load(llm_task *t, const char *path);
void llm_task_release(llm_task *t);

/* The data file of split, NULL when the task names none. */
const char *llm_task_split_file(const llm_task *t, const char *split);
/* The split scored: test_split, else validation_split; NULL when neither is set. */
const char *llm_task_eval_split(const llm_task *t);
/* The split the few-shot examples come from, as lm-evaluation-harness's fewshot_docs: the
 * fewshot_split, else training_split, else validation_split, else test_split. */
const char *llm_task_fewshot_split(const llm_task *t);
/* 1 when an item is never its own example: the fewshot_split is the test_split (two unset
 * ones count as the same, as there). */
int llm_task_fewshot_self(const llm_task *t);

/* Render template tmpl with the fields of doc into out (appended). LLM_EFORMAT naming the
 * field when the document lacks it or it is not a string, number or boolean. */
int llm_task_render(const char *tmpl, const llm_json_rec *doc, llm_buf *out);

/* A document (one JSONL line) of a multiple-choice task as an item; its domain "unknown"
 * unless the document has a string "domain". LLM_EFORMAT with the reason otherwise. */
int llm_task_item(const llm_task *t, const char *line, size_t n, llm_choice_item *it);

#endif
