/*
 * score.h — per-document scores from trained classifiers: llm-score's models.
 *
 * A scorer holds named models. Each name gets, for a document's text, either the
 * probability of one label of its model or the model's whole label distribution, and the
 * scorer writes them as the record's "scores" object:
 *   "scores": {"quality": 0.91, "topic": {"news": 0.7, "sports": 0.2, "other": 0.1}}
 * Models are fastText supervised classifiers (.bin and .ftz, fasttext.h): the value of a
 * label is what `fasttext predict-prob` prints for it on the text as one line (newlines are
 * spaces; p + 1e-5, so at most 1.00001), written with the fewest digits that read back as
 * the same float. A text with no word or n-gram the model knows (fastText's empty answer)
 * scores 0 for every label. One model file named by several names is loaded and run once.
 * Other models come from an opener (below); their values are written the same way. A model
 * of one value (a regressor, a perplexity) is named without a label: NAME=MODEL.
 *
 * Names: WORD (scorekeep.h: [A-Za-z_][A-Za-z0-9_-]*), not "bucket" (which --keep reserves).
 * Default label: LLM_SCORE_LABEL ("hq"), the positive label of DCLM's quality classifier
 * and of the models llm-score train writes from --positive and --negative; a model without
 * the label must be given one, so that a model is never read the wrong way round.
 *
 * Memory: the models (fasttext.h) and, per scratch, one prediction per label. A scorer is
 * immutable once its models are added: threads score at once, each with its own scratch.
 */
#ifndef LLM_SCORE_H
#define LLM_SCORE_H

#include <stddef.h>

#include "core/buf.h"
#include "core/json.h"

#define LLM_SCORE_LABEL "hq"
/* The label of the negative examples of llm-score train --negative (DCLM's: Common Crawl). */
#define LLM_SCORE_NEGATIVE_LABEL "cc"
/* As a label: the whole distribution. */
#define LLM_SCORE_ALL "*"

typedef struct llm_scorer llm_scorer;

llm_scorer *llm_scorer_new(void);
void llm_scorer_free(llm_scorer *sc);

/*
 * Models of another layer, behind calls: the transformer classifiers, regressors and
 * language models of lib/model, which this layer may not include (llm-score's opener). A
 * model gives nlabels values per text: probabilities, or (value set) one number that is no
 * probability, a regression's output or a perplexity, which a score names without a label.
 * score writes out[nlabels] for text[0..len) with the scratch of its thread and returns 0, or
 * 1 when the model has nothing to go on (an empty text: out is 0); it cannot fail (the
 * opener checks what could make it). free releases ctx, once, with the scorer.
 */
typedef struct {
	void *ctx;
	int nlabels;
	const char *const *labels; /* nlabels names, valid as long as ctx */
	int value;                 /* 1: one value, not a probability */
	void *(*scratch_new)(void *ctx);
	void (*scratch_free)(void *scratch);
	int (*score)(void *ctx, void *scratch, const char *text, size_t len, float *out);
	void (*free)(void *ctx);
} llm_score_model;

/* Asked first for every MODEL of llm_scorer_add: fill *out and return LLM_OK, LLM_ENOTFOUND
 * when path is no model of the opener's (it is then loaded as fastText), or an error. */
typedef int (*llm_score_opener)(void *arg, const char *path, llm_score_model *out);
void llm_scorer_set_opener(llm_scorer *sc, llm_score_opener fn, void *arg);

/* Whether name[0..len) may name a score. */
int llm_score_name_ok(const char *name, size_t len);

/*
 * Add "NAME=MODEL[:LABEL]": model MODEL scores into NAME, by the probability of LABEL (with
 * or without "__label__"; LLM_SCORE_ALL: the distribution). Without ":LABEL" the label is
 * default_label (NULL: LLM_SCORE_LABEL), or the value of a model of one value. LABEL is what
 * follows the last ':' after the last '/', so a model file with ':' in its name is given with
 * its label. LLM_EINVAL for a
 * malformed spec or a name given twice, the load's error for the model, LLM_ENOTFOUND (with
 * the model's labels in the detail) when the model has no such label.
 */
int llm_scorer_add(llm_scorer *sc, const char *spec, const char *default_label);

/* Names, in the order added. */
size_t llm_scorer_count(const llm_scorer *sc);
const char *llm_scorer_name(const llm_scorer *sc, size_t i);
/* Whether the scorer gives score name[0..len) as one number (label NULL) or a distribution
 * with label: LLM_OK; LLM_ENOTFOUND when it does not name it; LLM_EINVAL (with a detail)
 * when it gives it in the other shape or without that label. */
int llm_scorer_check(const llm_scorer *sc, const char *name, size_t len, const char *label);
/* Index of name[0..len), or -1. */
int llm_scorer_find(const llm_scorer *sc, const char *name, size_t len);
/* Whether name i is the value of a model of one value (no probability). */
int llm_scorer_is_value(const llm_scorer *sc, size_t i);

typedef struct llm_scorer_scratch llm_scorer_scratch;
llm_scorer_scratch *llm_scorer_scratch_new(const llm_scorer *sc);
void llm_scorer_scratch_free(llm_scorer_scratch *s);

/*
 * Score text[0..len) with every model and append the "scores" object value to out: the
 * members of prev (the record's "scores" object, or NULL) in their order, those that the
 * scorer names replaced by its values, then the scorer's other names in order. Returns the
 * number of models that knew no feature of the text (their labels scored 0).
 */
int llm_scorer_run(const llm_scorer *sc, llm_scorer_scratch *s, const char *text, size_t len,
                   const llm_json_val *prev, llm_buf *out);

/* One training line of fastText's format for a document: "__label__LABEL " and the text with
 * its newlines as spaces (fastText ends an example at a newline), then a newline. */
void llm_score_train_line(llm_buf *out, const char *label, const char *text, size_t len);

#endif
