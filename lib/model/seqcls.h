/*
 * seqcls.h — sequence classifiers and regressors: a Llama decoder (model.h) with a score
 * head, as transformers' LlamaForSequenceClassification, loaded from and saved as its model
 * directory.
 *
 *   logits = score.weight @ hidden[last non-pad token]      score.weight: [num_labels, C]
 *
 * hidden is the final norm's output (llm_model_forward_hidden); the decoder has no lm_head.
 * The pooled position is HF's: the rightmost token that is not pad_token_id (the first
 * position when every token is the pad; the last one when the model has no pad token).
 *
 * Directory (transformers' names, loads with AutoModelForSequenceClassification):
 *   config.json        a LlamaConfig with "architectures": ["LlamaForSequenceClassification"],
 *                      "id2label" and "label2id" (num_labels is the size of id2label; without
 *                      it "num_labels", else transformers' 2), "pad_token_id" (null: none) and
 *                      "problem_type" ("single_label_classification",
 *                      "multi_label_classification", "regression" or null)
 *   model.safetensors  the decoder's "model.*" tensors and "score.weight"
 *   and the files the caller adds (the tokenizer).
 * Without problem_type the kind is transformers': regression when num_labels is 1, else a
 * single-label classification.
 *
 * Outputs (llm_seqcls_output): the softmax of the logits for a single-label classifier, their
 * sigmoid for a multi-label one, the logit itself for a regressor.
 *
 * Training (llm_seqcls_train_batch): the loss of transformers' forward for the kind —
 * cross-entropy over the labels, binary cross-entropy with logits per label, or the mean
 * squared error — with its gradient added into the decoder's and the head's gradients.
 *
 * Memory: the model's parameters and gradients (model.h) and num_labels x C floats twice for
 * the head; a runner (inference on another thread) the activations of its batches only: it
 * reads the classifier's weights. Errors: hf.h's, LLM_EFORMAT naming the file for a config
 * that is no sequence classifier or a head of the wrong shape. Thread safety: a classifier is
 * read by any number of runners at once, one thread each; training is one thread.
 */
#ifndef LLM_SEQCLS_H
#define LLM_SEQCLS_H

#include <stddef.h>
#include <stdint.h>

#include "ckpt.h"
#include "hf.h"
#include "model.h"

enum { LLM_SEQCLS_SINGLE, LLM_SEQCLS_MULTI, LLM_SEQCLS_REGRESSION };

typedef struct llm_seqcls llm_seqcls;

/* Whether the model directory dir is a sequence classifier (config.json's architectures). */
int llm_seqcls_is(const char *dir);

/* Load the classifier of directory dir; info (may be NULL) as llm_hf_open fills it. */
int llm_seqcls_open(llm_seqcls **out, const char *dir, llm_hf_info *info);

/*
 * A new classifier over decoder m (taken; opened headless, hf.h, or any model: its lm_head is
 * not used): num_labels outputs named labels[i] (NULL: transformers' "LABEL_i"), of kind
 * problem (LLM_SEQCLS_*), pad_token_id pad (-1: none). The head is drawn as transformers
 * initialises a Linear of the model: N(0, initializer_range), from seed.
 */
llm_seqcls *llm_seqcls_new(llm_model *m, int num_labels, const char *const *labels, int problem,
                           int pad, uint64_t seed);
void llm_seqcls_free(llm_seqcls *sc);

/* Write the directory dir (created if needed; each file through a temporary and a rename),
 * with extra[nextra] beside config.json and model.safetensors. */
int llm_seqcls_save(const llm_seqcls *sc, const char *dir, const llm_ckpt_file *extra,
                    size_t nextra);

llm_model *llm_seqcls_model(const llm_seqcls *sc);
int llm_seqcls_nlabels(const llm_seqcls *sc);
const char *llm_seqcls_label(const llm_seqcls *sc, int i);
/* Index of label name, or -1. */
int llm_seqcls_label_id(const llm_seqcls *sc, const char *name);
int llm_seqcls_problem(const llm_seqcls *sc);
int llm_seqcls_pad(const llm_seqcls *sc);
/* The head's weights and gradients, [num_labels, C] row-major. */
float *llm_seqcls_head(llm_seqcls *sc);
float *llm_seqcls_head_grad(llm_seqcls *sc);

/* HF's pooled position of tokens tok[0..len) (len >= 1) for pad (-1: none). */
int llm_seqcls_pool_index(const int32_t *tok, int len, int pad);

/* The outputs of one document's logits[num_labels] into out[num_labels] (see above). */
void llm_seqcls_output(const llm_seqcls *sc, const float *logits, float *out);

/*
 * Inference on a thread of its own. llm_seqcls_logits writes the logits of n documents
 * tok[i][0..len[i]) (1 <= len[i] <= max_position_embeddings) into logits[i * num_labels ..]:
 * the documents run in batches of similar length padded at the right (which, the attention
 * being causal, changes no pooled position's state), through the CPU backend (backend.h).
 */
typedef struct llm_seqcls_runner llm_seqcls_runner;
int llm_seqcls_runner_new(llm_seqcls_runner **r, const llm_seqcls *sc);
void llm_seqcls_runner_free(llm_seqcls_runner *r);
int llm_seqcls_logits(llm_seqcls_runner *r, const int32_t *const *tok, const int *len, int n,
                      float *logits);

/*
 * One training batch of n documents (as llm_seqcls_logits) with targets y: the label index
 * of a single-label classifier, (as floats) 0/1 per label (n x num_labels) of a multi-label
 * one, the value of a regressor. Adds scale x the gradient of the batch's summed loss into
 * the gradients (model.h's, and the head's); *loss receives the batch's mean loss. The
 * classifier's own decoder runs it (not a view): one thread.
 */
int llm_seqcls_train_batch(llm_seqcls *sc, const int32_t *const *tok, const int *len, int n,
                           const float *y, float scale, double *loss);
/* Set the head's gradients to zero (the decoder's: llm_model_zero_grad). */
void llm_seqcls_zero_grad(llm_seqcls *sc);

#endif
