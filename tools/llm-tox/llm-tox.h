/*
 * llm-tox.h — what tools/llm-tox.c (options, main) and its subcommands in this folder share:
 * the resolved command line, the records of the input (toxrecord.c: parsed, labelled, the
 * policy that applies to each), the scorer built from the options, and one entry point per
 * subcommand.
 *
 * Each entry point runs to the end and returns the exit status (0, or 1 when an input or an
 * output failed); it dies (tool.h) on usage errors and on errors of the library that end the
 * run.
 */
#ifndef LLM_TOX_TOOL_H
#define LLM_TOX_TOOL_H

#include <stddef.h>
#include <stdint.h>

#include "../tool.h"
#include "core/json.h"
#include "text/fasttext_train.h"
#include "text/recipe.h"
#include "tox/tox.h"
#include "tox/toxeval.h"
#include "tox/toxlang.h"

enum { CMD_FILTER, CMD_TRAIN, CMD_EVAL, CMD_PREDICT, CMD_NORMALIZE };

#define MAX_WORDS 64
#define MAX_THRESHOLDS 64
#define MAX_TARGETS 16

struct cfg {
	struct tool_common co;
	int cmd, annotate, no_words, no_model, json, k, cjk_min, zh_substrings, zh_words;
	const char *words[MAX_WORDS];
	int nwords, nreplace; /* --words and --add-words in order; how many were --words */
	llm_toxlang threshold, per_1k; /* by language */
	int threshold_set;
	llm_recipe *recipe; /* --recipe, or NULL */
	const char *model, *label, *label_field;
	double thresholds[MAX_THRESHOLDS];
	int nthresholds;
	llm_toxeval_target targets[MAX_TARGETS];
	int ntargets;
	llm_fasttext_train_args ft;
};

/* ---- the records of the input (toxrecord.c) ---- */

typedef struct {
	const char *file;
	uint64_t lineno;
	const char *line;
	size_t len;      /* the line's length */
	size_t head_len; /* bytes in line: len, or the head of a line too long */
	int too_long;
	const char *reason; /* NULL: a document with text */
	char msg[160];
	llm_json_rec rec;
	int rec_ok;
	llm_buf text;
} record;

/* Parse r->line[0..r->len): r->reason set (with r->msg) when it is no document with text. */
void tox_record_parse(record *r, const struct cfg *c);

typedef int (*record_fn)(void *ctx, record *r);

/* Call fn for every line of every input (none: standard input), parsed. Returns 1 if an
 * input or fn failed (reported). */
int tox_each_record(const struct cfg *c, char **files, int nfiles, record_fn fn, void *ctx);

/* A malformed record outside the filter (train, eval): warn, or die with --strict. */
void tox_skip_record(const struct cfg *c, const record *r, const char *why);

/* The record's label: 1 toxic, 0 clean, -1 absent or unreadable. */
int tox_record_label(const struct cfg *c, const record *r, llm_buf *tmp);

/* The record's "lang" (NULL, 0 when it has none) in tmp; its "domain" (NULL: none). */
void tox_lang_of(const record *r, const char **lang, size_t *len, llm_buf *tmp);
const char *tox_domain_of(const record *r, llm_buf *tmp);

/* What applies to a document of language lang[0..len) and domain (either NULL: none). */
void tox_policy_for(const struct cfg *c, const char *lang, size_t len, const char *domain,
                    llm_tox_policy *p);

/* The word lists and the model of the options, ready (load failures die). */
llm_tox *tox_make(const struct cfg *c);

/* A transformer classifier's directory as the model stage (toxmodel.c): its label's
 * probability, on what the rules pass. The load's error, or LLM_ENOTFOUND without label. */
int tox_model_is_dir(const char *path);
int tox_model_open(llm_tox *t, const char *path, const char *label);

/* ---- the subcommands ---- */

int tox_cmd_filter(const struct cfg *c, char **files, int nfiles);    /* toxfilter.c */
int tox_cmd_train(const struct cfg *c, char **files, int nfiles);     /* toxcmd.c */
int tox_cmd_eval(const struct cfg *c, char **files, int nfiles);      /* toxcmd.c */
int tox_cmd_predict(const struct cfg *c, char **args, int nargs);     /* toxcmd.c */
int tox_cmd_normalize(const struct cfg *c, char **files, int nfiles); /* toxcmd.c */

#endif
