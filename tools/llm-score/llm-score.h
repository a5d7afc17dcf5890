/*
 * llm-score.h — what tools/llm-score.c (options, main) and its subcommands in this folder
 * share: the resolved command line, the scoring pass over the records (scorepass.c, on the batch
 * loop of batchloop.h) and one entry point per subcommand.
 *
 * Each entry point runs to the end and returns the exit status (0, or 1 when an input or an
 * output failed); it dies (tool.h) on usage errors and on errors of the library that end the
 * run. The pass's emitter runs on the main thread, the scoring of a record on the pool.
 */
#ifndef LLM_SCORE_TOOL_H
#define LLM_SCORE_TOOL_H

#include <stddef.h>
#include <stdint.h>

#include "../batchloop.h"
#include "../tool.h"
#include "core/json.h"
#include "core/pool.h"
#include "text/fasttext_train.h"
#include "text/score.h"
#include "text/scorekeep.h"
#include "text/scoresketch.h"

enum { CMD_SCORE, CMD_TRAIN, CMD_SKETCH, CMD_MERGE };

#define SCORE_MAX_FILES 256

/* The command line. */
struct cfg {
	struct tool_common co;
	int cmd, nbuckets, mean;
	const char *models[SCORE_MAX_FILES];
	int nmodels;
	const char *label, *keep_expr, *sketch, *label_field;
	const char *positive[SCORE_MAX_FILES], *negative[SCORE_MAX_FILES];
	int npositive, nnegative;
	size_t batch_bytes;
	llm_fasttext_train_args ft;
};

/* ---- the scoring pass (scorepass.c) ---- */

/* What a --keep variable reads. */
enum { VAR_SCORE, VAR_LABEL, VAR_BUCKET, VAR_BUCKET_OF };

typedef struct {
	int kind;
	char *name, *label; /* VAR_SCORE, VAR_LABEL: the score (and label) */
	int sk;             /* VAR_BUCKET_OF: the sketch's index */
} score_var;

/* What every worker reads: the models, the sketch, the expression. */
struct job {
	const struct cfg *c;
	llm_scorer *sc;
	llm_scoresketch *sk;   /* --sketch */
	llm_scorekeep *keep;   /* --keep */
	score_var *vars;
	size_t nvars;
};

/* One record of a batch. */
typedef struct {
	tool_batch_line ln; /* first: the loop's */
	llm_json_rec rec;
	const char *reason; /* NULL: scored */
	char msg[200];
	int parsed;         /* rec holds the record */
	int unknown;        /* models that knew no feature of the text */
	int kept;
	llm_buf scores;     /* the "scores" object */
	llm_buf out;        /* the output record (score command) */
} score_item;

typedef struct {
	llm_scorer_scratch *s;
	llm_buf text, buckets;
	llm_json_edit ed;
	int *bucket;   /* per sketch name */
	double *value; /* per --keep variable */
} score_worker;

struct pass {
	struct job *j;
	llm_pool *pool;
	score_worker *w;
	tool_batchloop loop;
	/* called on the main thread for every record, in input order; line: its bytes */
	void (*emit)(struct pass *p, score_item *it, const char *line);
	/* the score command */
	llm_run *run;
	llm_writer *out;
	llm_json_rec outrec;
	/* sketch */
	llm_scoresketch *acc;
	char **warned;
	size_t nwarned;
};

/* The models, the sketch and the --keep expression of the options (usage errors die). */
void score_job_open(struct job *j, const struct cfg *c);
void score_job_close(struct job *j);

/* The pool, a scratch per worker and the batch loop; emit set by the caller. */
void score_pass_open(struct pass *p, struct job *j);
/* Every input (none: standard input) through the pass; 1 when one failed. */
int score_pass_run(struct pass *p, char **files, int nfiles);
void score_pass_close(struct pass *p);
/* The input being read, for messages. */
const char *score_pass_name(const struct pass *p);

/* The scorer's opener of transformer models (scoremodel.c, text/score.h's llm_score_opener):
 * a classifier or regressor directory, or a language model scored by perplexity. */
int score_model_open(void *arg, const char *path, llm_score_model *out);

/* ---- the subcommands ---- */

int score_cmd_score(const struct cfg *c, char **files, int nfiles);  /* scorefilter.c */
int score_cmd_sketch(const struct cfg *c, char **files, int nfiles); /* scorefilter.c */
int score_cmd_merge(const struct cfg *c, char **files, int nfiles);  /* scorefilter.c */
int score_cmd_train(const struct cfg *c, char **files, int nfiles);  /* scoretrain.c */

#endif
