/*
 * fasttext.h — fastText-compatible supervised linear classifiers: load, predict, save
 * (training: fasttext_train.h).
 *
 * Models: the files of fastText 0.9 (file format version 12, also reads 11): supervised
 * `.bin` models (dense matrices) and quantized `.ftz` models (product-quantized input and,
 * with -qout, output matrices, with a pruned n-gram table), with any of the supervised
 * losses: softmax, one-vs-all, negative sampling (both predict with a sigmoid per label) and
 * hierarchical softmax (e.g. lid.176.ftz, the language-id model). Unsupervised (cbow,
 * skipgram) models are rejected with LLM_EUNSUPPORTED.
 *
 * Prediction gives the same labels and probabilities as `fasttext predict-prob` on the same
 * line: the same tokenization (words split on ASCII whitespace and NUL, an end-of-sentence
 * token "</s>" after the line, "<word>" character n-grams and word n-grams hashed with
 * fastText's FNV-1a variant, which sign-extends each byte), the same float arithmetic in the
 * same order, and the same reported value: fastText reports exp(log(p + 1e-5)), so a
 * certain label scores 1.00001, and a threshold keeps labels whose p >= threshold.
 * One difference by design: the text is always one line. A '\n' inside it separates words
 * like a space instead of ending the line (fastText's Python binding refuses such text).
 *
 * Memory: a loaded model holds its matrices (a dense model as large as its .bin file) and, per
 * vocabulary word, its precomputed n-gram ids, as fastText does. A model is immutable after
 * loading or training, so any number of threads may predict with one model at once, each
 * with its own llm_fasttext_scratch.
 *
 * Errors: loading checks every size read from the file against the file's length and every
 * index against its table before use; a corrupt or truncated file gives LLM_EFORMAT with a
 * detail naming the file and what is wrong, never a crash.
 */
#ifndef LLM_FASTTEXT_H
#define LLM_FASTTEXT_H

#include <stddef.h>
#include <stdint.h>

typedef struct llm_fasttext llm_fasttext;

/* Loss functions, numbered as in fastText's file format. */
enum {
	LLM_FASTTEXT_HS = 1,      /* hierarchical softmax (Huffman tree over label counts) */
	LLM_FASTTEXT_NS = 2,      /* negative sampling */
	LLM_FASTTEXT_SOFTMAX = 3,
	LLM_FASTTEXT_OVA = 4      /* one-vs-all: independent sigmoid per label (multi-label) */
};

/* Load a .bin or .ftz file. On failure *m is NULL and llm_last_error() says why. */
int llm_fasttext_load(llm_fasttext **m, const char *path);
/* The same from memory (name is used in messages); data need not outlive the call. */
int llm_fasttext_load_mem(llm_fasttext **m, const void *data, size_t len, const char *name);
void llm_fasttext_free(llm_fasttext *m);

/* Write a model in fastText's .bin format (version 12), atomically (temporary name, rename).
 * A dense model loaded from a file is written back byte for byte; quantized models are
 * written back quantized (.ftz layout; the pruning table may come out in another order). */
int llm_fasttext_save(const llm_fasttext *m, const char *path);

/* Model facts. */
int llm_fasttext_nlabels(const llm_fasttext *m);
int llm_fasttext_nwords(const llm_fasttext *m);
int llm_fasttext_dim(const llm_fasttext *m);
int llm_fasttext_loss(const llm_fasttext *m);      /* LLM_FASTTEXT_* */
int llm_fasttext_quantized(const llm_fasttext *m); /* 1 for a .ftz-style model */
/* Label i (0 <= i < nlabels) as stored, e.g. "__label__en"; labels are ordered as in the
 * model (by decreasing training count). */
const char *llm_fasttext_label(const llm_fasttext *m, int i);
/* The same without the "__label__" prefix ("en"). */
const char *llm_fasttext_label_name(const llm_fasttext *m, int i);
/* Index of a label given with or without the prefix, or -1. */
int llm_fasttext_label_id(const llm_fasttext *m, const char *name);
/* Index of the vocabulary word w[0..n) (not a label), or -1. */
int llm_fasttext_word_id(const llm_fasttext *m, const char *w, size_t n);

/* Per-thread working memory for prediction (token ids, hidden and output vectors). */
typedef struct llm_fasttext_scratch llm_fasttext_scratch;
llm_fasttext_scratch *llm_fasttext_scratch_new(const llm_fasttext *m);
void llm_fasttext_scratch_free(llm_fasttext_scratch *s);

typedef struct {
	int label;  /* label index */
	float prob; /* as fastText reports it: exp(log(p + 1e-5)) */
} llm_fasttext_pred;

/*
 * The k most probable labels of text[0..len) with p >= threshold, most probable first,
 * into out[0..k); k <= 0 means all labels (out must then hold nlabels). Returns the
 * number written (0 when the text has no known feature, like fastText's empty answer).
 * s must have been made for m.
 */
int llm_fasttext_predict(const llm_fasttext *m, llm_fasttext_scratch *s, const char *text,
                         size_t len, int k, float threshold, llm_fasttext_pred *out);

/* The ids of the input rows the text maps to, in fastText's order (words with their
 * subwords, then word n-grams); valid until the next call with s. For tests and tools. */
int llm_fasttext_features(const llm_fasttext *m, llm_fasttext_scratch *s, const char *text,
                          size_t len, const int32_t **ids);

#endif
