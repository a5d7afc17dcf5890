/*
 * fasttext_train.h — training of fastText-compatible supervised classifiers (fasttext.h).
 *
 * The same algorithm as `fasttext supervised` of fastText 0.9: the dictionary counted and
 * sorted as fastText does, input rows initialised uniformly in [-1/dim, 1/dim], stochastic
 * gradient descent with a rate that decays linearly to zero over all epochs, shared between
 * threads without locks (Hogwild). The model it returns predicts and saves like a loaded one.
 */
#ifndef LLM_FASTTEXT_TRAIN_H
#define LLM_FASTTEXT_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "fasttext.h"

/* Training parameters; the defaults (llm_fasttext_train_args_init) are fastText's for supervised. */
typedef struct {
	int dim;            /* 100 */
	int epoch;          /* 5 */
	double lr;          /* 0.1; decays linearly to 0 over all epochs */
	int lr_update_rate; /* 100 tokens between updates of the shared rate */
	int word_ngrams;    /* 1 */
	int minn, maxn;     /* 0, 0: character n-gram lengths (0 = none) */
	int min_count;      /* 1: words seen fewer times are dropped from the vocabulary */
	int min_count_label;/* 0 */
	int bucket;         /* 2000000: hash buckets for n-grams (0 when there are none) */
	int loss;           /* LLM_FASTTEXT_SOFTMAX; also OVA and HS */
	int threads;        /* 1; more threads update shared weights without locks (Hogwild),
	                       like fastText, which makes the result vary from run to run */
	uint64_t seed;      /* 0; with threads == 1 the model is a function of data and seed */
	int shuffle;        /* 1: shuffle the examples once (by seed) before the first epoch */
} llm_fasttext_train_args;

void llm_fasttext_train_args_init(llm_fasttext_train_args *a);

/*
 * Train a supervised model on data[0..len): fastText's training-file format, one example
 * per line, labels as "__label__NAME" tokens anywhere on the line. Lines without a label
 * or without a word are skipped, as fastText does. Memory: the data plus the model
 * ((nwords + bucket + nlabels) x dim floats). *m is NULL on failure (LLM_EINVAL for bad
 * arguments, LLM_EFORMAT when the data has no labelled example).
 * progress, when not NULL, is called by the first training thread after about every 1% of
 * the work, with the fraction done and the average loss so far.
 */
int llm_fasttext_train(llm_fasttext **m, const llm_fasttext_train_args *a, const char *data,
                       size_t len, void (*progress)(double done, double loss, void *ctx),
                       void *ctx);

#endif
