/*
 * fasttext_internal.h — the layout of a fastText model and the steps that prediction
 * (fasttext.c) and training (fasttext_train.c) share. Not part of the library's interface:
 * only those two files include it.
 */
#ifndef LLM_FASTTEXT_INTERNAL_H
#define LLM_FASTTEXT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/hash.h"
#include "fasttext.h"

#define FT_MODEL_SUP 3
#define FT_EOS "</s>"
#define FT_LABEL "__label__"
#define FT_SIGMOID_TABLE 512
#define FT_MAX_SIGMOID 8
#define FT_LOG_TABLE 512
/* Limits that only reject nonsense (a corrupt header), far above any real model. */
#define FT_MAX_DIM 100000
#define FT_MAX_NGRAM 64

typedef struct {
	int32_t dim, nsubq, dsub, lastdsub;
	float *centroids; /* dim * 256 */
} ft_pq;

typedef struct {
	int64_t m, n;
	float *data; /* dense: m * n */
	/* quantized */
	int quant, qnorm;
	uint8_t *codes; /* m * nsubq */
	ft_pq pq;
	uint8_t *norm_codes; /* m, when qnorm */
	ft_pq npq;
} ft_matrix;

struct llm_fasttext {
	/* Args, in file order. */
	int32_t dim, ws, epoch, min_count, neg, word_ngrams, loss, model, bucket, minn, maxn,
		lr_update_rate;
	double t;
	/* Dictionary. */
	int32_t size, nwords, nlabels;
	int64_t ntokens, pruneidx_size; /* pruneidx_size -1: not pruned */
	char *arena;                    /* words, NUL-terminated, back to back */
	size_t *woff;
	uint32_t *wlen;
	int64_t *counts;
	int8_t *types; /* 0 word, 1 label */
	int32_t *word2int;
	uint32_t w2i_size;
	int32_t *sub_off, *sub; /* subword ids of word i: sub[sub_off[i] .. sub_off[i+1]) */
	int32_t *prune_key, *prune_val;
	uint32_t prune_cap; /* open addressing, power of two; key -1 = empty */
	ft_matrix in, out;
	int32_t osz; /* rows of the output layer that are labels (nlabels) */
	/* Hierarchical softmax tree: 2 * osz - 1 nodes, leaves first. */
	int32_t *left, *right;
	/* Training only: the HS paths (node rows and binary codes) of each label. */
	int32_t *path_off, *path;
	uint8_t *code;
	float t_sigmoid[FT_SIGMOID_TABLE + 1];
	float t_log[FT_LOG_TABLE + 1];
};

struct llm_fasttext_scratch {
	int32_t *ids;
	size_t nids, cap;
	int32_t *wh; /* word hashes of the line (int32, as fastText keeps them) */
	size_t nwh, whcap;
	float *hidden, *output, *grad;
	llm_fasttext_pred *heap;
	size_t heapcap;
	llm_buf tok;
	/* Training. */
	int32_t *labels;
	size_t nlab, labcap;
	llm_rng rng;
};
/* fastText's FNV-1a variant (see fasttext.c for why each byte is sign-extended). */
static inline uint32_t ft_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++) {
		h ^= (uint32_t)(int8_t)s[i];
		h *= 16777619u;
	}
	return h;
}

static inline int is_ft_space(char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f' || c == 0;
}

static inline float ft_sigmoid(const llm_fasttext *m, float x)
{
	/* "not above the lower end" also sends NaN (from a corrupt model) to 0 instead of to an
	 * undefined float-to-integer conversion. */
	if (!(x >= -FT_MAX_SIGMOID))
		return 0.0f;
	if (x > FT_MAX_SIGMOID)
		return 1.0f;
	int64_t i = (int64_t)((x + FT_MAX_SIGMOID) * FT_SIGMOID_TABLE / FT_MAX_SIGMOID / 2);
	return m->t_sigmoid[i];
}

/* Dense row i of a: row . x, and x += alpha * row, in fastText's order of operations. */
static inline float ft_dense_dot(const ft_matrix *a, const float *x, int64_t i)
{
	const float *r = a->data + i * a->n;
	float d = 0.0f;
	for (int64_t j = 0; j < a->n; j++)
		d += r[j] * x[j];
	return d;
}

static inline void ft_dense_axpy(const ft_matrix *a, float *x, int64_t i, float alpha)
{
	const float *r = a->data + i * a->n;
	for (int64_t j = 0; j < a->n; j++)
		x[j] += alpha * r[j];
}

/* The sigmoid and log tables of m. */
void llm_fasttext_init_tables(llm_fasttext *m);
/* The word hash table and each word's subword ids, from the dictionary. */
void llm_fasttext_build_word2int(llm_fasttext *m);
void llm_fasttext_build_subwords(llm_fasttext *m);
/* The hierarchical-softmax tree over the label counts; with_paths also the training paths.
 * LLM_EFORMAT when the counts make it deeper than prediction may recurse. */
int llm_fasttext_build_tree(llm_fasttext *m, int with_paths);
/* The input rows of one line into s->ids (and, with want_labels, its labels into s->labels). */
void llm_fasttext_line_features(const llm_fasttext *m, llm_fasttext_scratch *s, const char *text,
                                size_t len, int want_labels);
/* s->hidden from s->ids; s->output from s->hidden (softmax or sigmoids, by the loss). */
void llm_fasttext_compute_hidden(const llm_fasttext *m, llm_fasttext_scratch *s);
void llm_fasttext_compute_output(const llm_fasttext *m, llm_fasttext_scratch *s);

#endif
