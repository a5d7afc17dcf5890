/*
 * fasttext.c — fastText 0.9 supervised models: file format, tokenization, prediction
 * (training is fasttext_train.c).
 *
 * Compatibility is the point of this module, so the numerics follow fastText 0.9.2
 * (src/dictionary.cc, model.cc, loss.cc, quantmatrix.cc, productquantizer.cc) operation by
 * operation: float accumulators in the same order, float(1.0 / n) as the averaging factor,
 * expf/logf where fastText calls std::exp/std::log on a float, its 512-entry sigmoid table
 * for one-vs-all, and its Huffman tree for hierarchical softmax. C11 without
 * -ffp-contract=fast keeps a * b + c from fusing, as in the Debian build of fastText.
 *
 * Hashing traps (each one changes every n-gram id if done "right"):
 *  - the FNV-1a variant xors uint32_t(int8_t(byte)): bytes >= 0x80 are sign-extended;
 *  - word hashes are kept in a vector<int32_t> and widened to uint64_t for word n-grams,
 *    so a hash >= 2^31 is sign-extended to 64 bits before "h * 116049371 + next".
 */
#include "fasttext_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/hash.h"
#include "core/io.h"

#define FT_MAGIC 793712314
#define FT_VERSION 12
#define FT_KSUB 256 /* product quantizer: 8-bit codes */


/* ---- hashing and tables ---- */

void llm_fasttext_init_tables(llm_fasttext *m)
{
	for (int i = 0; i <= FT_SIGMOID_TABLE; i++) {
		float x = (float)(i * 2 * FT_MAX_SIGMOID) / FT_SIGMOID_TABLE - FT_MAX_SIGMOID;
		m->t_sigmoid[i] = (float)(1.0 / (1.0 + (double)expf(-x)));
	}
	for (int i = 0; i <= FT_LOG_TABLE; i++) {
		float x = (float)(((double)i + 1e-5) / FT_LOG_TABLE);
		m->t_log[i] = logf(x);
	}
}

/* fastText's std_log: log(x + 1e-5) in double, stored as float. */
static float std_log(float x)
{
	return (float)log((double)x + 1e-5);
}

static int32_t word_find(const llm_fasttext *m, const char *w, size_t n, uint32_t h)
{
	uint32_t id = h % m->w2i_size;
	for (;;) {
		int32_t e = m->word2int[id];
		if (e < 0)
			return -1;
		if (m->wlen[e] == n && memcmp(m->arena + m->woff[e], w, n) == 0)
			return e;
		id = (id + 1) % m->w2i_size;
	}
}

static int32_t prune_get(const llm_fasttext *m, int32_t key)
{
	uint32_t mask = m->prune_cap - 1, i = ((uint32_t)key * 2654435761u) & mask;
	while (m->prune_key[i] != -1) {
		if (m->prune_key[i] == key)
			return m->prune_val[i];
		i = (i + 1) & mask;
	}
	return -1;
}

/* ---- small vectors ---- */

static void ids_push(llm_fasttext_scratch *s, int32_t id)
{
	if (s->nids == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 256;
		s->ids = llm_realloc(s->ids, s->cap * sizeof *s->ids);
	}
	s->ids[s->nids++] = id;
}

static void wh_push(llm_fasttext_scratch *s, int32_t h)
{
	if (s->nwh == s->whcap) {
		s->whcap = s->whcap ? s->whcap * 2 : 64;
		s->wh = llm_realloc(s->wh, s->whcap * sizeof *s->wh);
	}
	s->wh[s->nwh++] = h;
}

/* ---- features ---- */

/* fastText's pushHash: an n-gram bucket becomes input row nwords + bucket, through the
 * pruning map of a quantized model (where dropped buckets have no row at all). */
static void push_hash(const llm_fasttext *m, llm_fasttext_scratch *s, int32_t id)
{
	if (m->pruneidx_size == 0 || id < 0)
		return;
	if (m->pruneidx_size > 0) {
		id = prune_get(m, id);
		if (id < 0)
			return;
	}
	ids_push(s, m->nwords + id);
}

/* Character n-grams of "<word>" (w includes the brackets): every run of minn..maxn UTF-8
 * characters, except the lone "<" and ">". */
typedef void (*ngram_fn)(const llm_fasttext *m, void *ctx, int32_t bucket);

static void char_ngrams(const llm_fasttext *m, const char *w, size_t n, ngram_fn fn, void *ctx)
{
	for (size_t i = 0; i < n; i++) {
		if (((unsigned char)w[i] & 0xC0) == 0x80)
			continue;
		size_t j = i;
		for (int len = 1; j < n && len <= m->maxn; len++) {
			j++;
			while (j < n && ((unsigned char)w[j] & 0xC0) == 0x80)
				j++;
			if (len >= m->minn && !(len == 1 && (i == 0 || j == n)))
				fn(m, ctx, (int32_t)(ft_hash(w + i, j - i) % (uint32_t)m->bucket));
		}
	}
}

static void ngram_to_scratch(const llm_fasttext *m, void *ctx, int32_t bucket)
{
	push_hash(m, ctx, bucket);
}

static void add_oov_subwords(const llm_fasttext *m, llm_fasttext_scratch *s, const char *w,
                             size_t n)
{
	if (m->maxn <= 0 || m->bucket <= 0)
		return;
	llm_buf_reset(&s->tok);
	llm_buf_addc(&s->tok, '<');
	llm_buf_add(&s->tok, w, n);
	llm_buf_addc(&s->tok, '>');
	char_ngrams(m, s->tok.p, s->tok.len, ngram_to_scratch, s);
}

/* One token of the line (or the final "</s>"): fastText's getLine body. Labels found on the
 * line are collected when s->labels is in use (training). */
static void add_token(const llm_fasttext *m, llm_fasttext_scratch *s, const char *w, size_t n,
                      int want_labels)
{
	uint32_t h = ft_hash(w, n);
	int32_t wid = word_find(m, w, n, h);
	int is_label = wid >= 0 ? m->types[wid] == 1
	                        : (n >= sizeof FT_LABEL - 1 && memcmp(w, FT_LABEL, sizeof FT_LABEL - 1) == 0);
	if (!is_label) {
		if (wid < 0) {
			if (!(n == 4 && memcmp(w, FT_EOS, 4) == 0))
				add_oov_subwords(m, s, w, n);
		} else {
			for (int32_t i = m->sub_off[wid]; i < m->sub_off[wid + 1]; i++)
				ids_push(s, m->sub[i]);
		}
		wh_push(s, (int32_t)h);
	} else if (wid >= 0 && want_labels) {
		if (s->nlab == s->labcap) {
			s->labcap = s->labcap ? s->labcap * 2 : 8;
			s->labels = llm_realloc(s->labels, s->labcap * sizeof *s->labels);
		}
		s->labels[s->nlab++] = wid - m->nwords;
	}
}

static void add_word_ngrams(const llm_fasttext *m, llm_fasttext_scratch *s)
{
	if (m->bucket <= 0)
		return;
	for (size_t i = 0; i < s->nwh; i++) {
		uint64_t h = (uint64_t)(int64_t)s->wh[i];
		for (size_t j = i + 1; j < s->nwh && j < i + (size_t)m->word_ngrams; j++) {
			h = h * 116049371u + (uint64_t)(int64_t)s->wh[j];
			push_hash(m, s, (int32_t)(h % (uint64_t)m->bucket));
		}
	}
}

void llm_fasttext_line_features(const llm_fasttext *m, llm_fasttext_scratch *s, const char *text,
                          size_t len, int want_labels)
{
	s->nids = s->nwh = s->nlab = 0;
	size_t i = 0;
	while (i < len) {
		while (i < len && is_ft_space(text[i]))
			i++;
		size_t b = i;
		while (i < len && !is_ft_space(text[i]))
			i++;
		if (i > b)
			add_token(m, s, text + b, i - b, want_labels);
	}
	add_token(m, s, FT_EOS, 4, want_labels);
	if (m->word_ngrams > 1)
		add_word_ngrams(m, s);
}

int llm_fasttext_features(const llm_fasttext *m, llm_fasttext_scratch *s, const char *text,
                          size_t len, const int32_t **ids)
{
	llm_fasttext_line_features(m, s, text, len, 0);
	*ids = s->ids;
	return (int)s->nids;
}

/* ---- matrices ---- */

static const float *pq_centroids(const ft_pq *pq, int32_t m, uint8_t i)
{
	if (m == pq->nsubq - 1)
		return pq->centroids + (size_t)m * FT_KSUB * pq->dsub + (size_t)i * pq->lastdsub;
	return pq->centroids + ((size_t)m * FT_KSUB + i) * pq->dsub;
}

static float quant_norm(const ft_matrix *a, int64_t i)
{
	return a->qnorm ? pq_centroids(&a->npq, 0, a->norm_codes[i])[0] : 1.0f;
}

/* x += alpha * row i */
static void row_add(const ft_matrix *a, float *x, int64_t i, float alpha, int scaled)
{
	if (!a->quant) {
		if (scaled) {
			ft_dense_axpy(a, x, i, alpha);
		} else {
			const float *r = a->data + i * a->n;
			for (int64_t j = 0; j < a->n; j++)
				x[j] += r[j];
		}
		return;
	}
	float norm = quant_norm(a, i) * (scaled ? alpha : 1.0f);
	const ft_pq *pq = &a->pq;
	const uint8_t *code = a->codes + (size_t)pq->nsubq * i;
	int32_t d = pq->dsub;
	for (int32_t k = 0; k < pq->nsubq; k++) {
		const float *c = pq_centroids(pq, k, code[k]);
		if (k == pq->nsubq - 1)
			d = pq->lastdsub;
		for (int32_t j = 0; j < d; j++)
			x[k * pq->dsub + j] += norm * c[j];
	}
}

static float row_dot(const ft_matrix *a, const float *x, int64_t i)
{
	if (!a->quant)
		return ft_dense_dot(a, x, i);
	const ft_pq *pq = &a->pq;
	const uint8_t *code = a->codes + (size_t)pq->nsubq * i;
	float res = 0.0f;
	int32_t d = pq->dsub;
	for (int32_t k = 0; k < pq->nsubq; k++) {
		const float *c = pq_centroids(pq, k, code[k]);
		if (k == pq->nsubq - 1)
			d = pq->lastdsub;
		for (int32_t j = 0; j < d; j++)
			res += x[k * pq->dsub + j] * c[j];
	}
	return res * quant_norm(a, i);
}

static void matrix_release(ft_matrix *a)
{
	free(a->data);
	free(a->codes);
	free(a->pq.centroids);
	free(a->norm_codes);
	free(a->npq.centroids);
	memset(a, 0, sizeof *a);
}

/* ---- prediction ---- */

llm_fasttext_scratch *llm_fasttext_scratch_new(const llm_fasttext *m)
{
	llm_fasttext_scratch *s = llm_calloc(1, sizeof *s);
	s->hidden = llm_calloc((size_t)m->dim, sizeof(float));
	s->grad = llm_calloc((size_t)m->dim, sizeof(float));
	s->output = llm_calloc((size_t)m->out.m + 1, sizeof(float));
	s->heapcap = (size_t)m->nlabels + 1;
	s->heap = llm_calloc(s->heapcap, sizeof *s->heap);
	llm_buf_init(&s->tok);
	return s;
}

void llm_fasttext_scratch_free(llm_fasttext_scratch *s)
{
	if (!s)
		return;
	free(s->ids);
	free(s->wh);
	free(s->hidden);
	free(s->grad);
	free(s->output);
	free(s->heap);
	free(s->labels);
	llm_buf_release(&s->tok);
	free(s);
}

/*
 * x += the dense rows ids[0..n), in that order. Prediction is bound by fetching rows: a
 * document's features are scattered over a matrix of tens or hundreds of megabytes, each row
 * a few cache lines. So the rows a few features ahead are prefetched while this one is
 * added, and the additions go eight lanes at a time, a form -O2 vectorizes. Neither changes
 * what is added to each x[j] nor in which order: the sums stay fastText's to the bit.
 */
#define FT_PREFETCH_AHEAD 6

static void dense_sum_rows(const ft_matrix *a, float *restrict x, const int32_t *ids, size_t n)
{
	const int64_t dim = a->n;
	for (size_t i = 0; i < n; i++) {
		if (i + FT_PREFETCH_AHEAD < n) {
			const char *p = (const char *)(a->data + ids[i + FT_PREFETCH_AHEAD] * dim);
			for (int64_t b = 0; b < dim * (int64_t)sizeof(float); b += 64)
				__builtin_prefetch(p + b);
		}
		const float *restrict r = a->data + ids[i] * dim;
		int64_t j = 0;
		for (; j + 8 <= dim; j += 8)
			for (int k = 0; k < 8; k++)
				x[j + k] += r[j + k];
		for (; j < dim; j++)
			x[j] += r[j];
	}
}

void llm_fasttext_compute_hidden(const llm_fasttext *m, llm_fasttext_scratch *s)
{
	memset(s->hidden, 0, (size_t)m->dim * sizeof(float));
	if (!m->in.quant)
		dense_sum_rows(&m->in, s->hidden, s->ids, s->nids);
	else
		for (size_t i = 0; i < s->nids; i++)
			row_add(&m->in, s->hidden, s->ids[i], 1.0f, 0);
	float scale = (float)(1.0 / (double)s->nids);
	for (int j = 0; j < m->dim; j++)
		s->hidden[j] *= scale;
}

void llm_fasttext_compute_output(const llm_fasttext *m, llm_fasttext_scratch *s)
{
	float *o = s->output;
	for (int32_t i = 0; i < m->osz; i++)
		o[i] = row_dot(&m->out, s->hidden, i);
	if (m->loss == LLM_FASTTEXT_SOFTMAX) {
		float max = o[0], z = 0.0f;
		for (int32_t i = 0; i < m->osz; i++)
			max = o[i] > max ? o[i] : max;
		for (int32_t i = 0; i < m->osz; i++) {
			o[i] = (float)exp((double)(o[i] - max));
			z += o[i];
		}
		for (int32_t i = 0; i < m->osz; i++)
			o[i] /= z;
	} else {
		for (int32_t i = 0; i < m->osz; i++)
			o[i] = ft_sigmoid(m, o[i]);
	}
}

/*
 * The k best candidates, kept as fastText keeps them: a std::vector heap ordered by
 * "a.first > b.first" (the worst kept score on top), managed by libstdc++'s push_heap,
 * pop_heap and sort_heap. The algorithms are reproduced step for step because they decide
 * which of two labels with equal scores survives and which one is printed first.
 * Scores are log probabilities until the end.
 */
static int heap_less(const llm_fasttext_pred *a, const llm_fasttext_pred *b)
{
	return a->prob > b->prob;
}

static void std_push_heap(llm_fasttext_pred *h, size_t hole, size_t top, llm_fasttext_pred v)
{
	size_t parent = hole ? (hole - 1) / 2 : 0;
	while (hole > top && heap_less(&h[parent], &v)) {
		h[hole] = h[parent];
		hole = parent;
		parent = hole ? (hole - 1) / 2 : 0;
	}
	h[hole] = v;
}

static void std_adjust_heap(llm_fasttext_pred *h, size_t hole, size_t len, llm_fasttext_pred v)
{
	size_t top = hole, child = hole;
	while (len > 0 && child < (len - 1) / 2) {
		child = 2 * (child + 1);
		if (heap_less(&h[child], &h[child - 1]))
			child--;
		h[hole] = h[child];
		hole = child;
	}
	if ((len & 1) == 0 && len >= 2 && child == (len - 2) / 2) {
		child = 2 * (child + 1);
		h[hole] = h[child - 1];
		hole = child - 1;
	}
	std_push_heap(h, hole, top, v);
}

/* Move the top to h[n - 1] and restore the heap on h[0 .. n-1). */
static void std_pop_heap(llm_fasttext_pred *h, size_t n)
{
	if (n < 2)
		return;
	llm_fasttext_pred v = h[n - 1];
	h[n - 1] = h[0];
	std_adjust_heap(h, 0, n - 1, v);
}

typedef struct {
	llm_fasttext_pred *h;
	size_t n, k;
} topk;

static int topk_worse(const topk *t, float score)
{
	return t->n == t->k && score < t->h[0].prob;
}

static void topk_push(topk *t, float score, int label)
{
	llm_fasttext_pred v = { label, score };
	t->h[t->n++] = v;
	std_push_heap(t->h, t->n - 1, 0, v);
	if (t->n > t->k) {
		std_pop_heap(t->h, t->n);
		t->n--;
	}
}

/* std::sort_heap: best first. */
static void topk_sort(topk *t)
{
	for (size_t n = t->n; n > 1; n--)
		std_pop_heap(t->h, n);
}

static void hs_dfs(const llm_fasttext *m, llm_fasttext_scratch *s, topk *t, float threshold,
                   int32_t node, float score)
{
	if (score < std_log(threshold))
		return;
	if (topk_worse(t, score))
		return;
	if (m->left[node] == -1 && m->right[node] == -1) {
		topk_push(t, score, node);
		return;
	}
	float f = row_dot(&m->out, s->hidden, node - m->osz);
	f = (float)(1. / (1.0f + expf(-f)));
	hs_dfs(m, s, t, threshold, m->left[node], score + std_log(1.0f - f));
	hs_dfs(m, s, t, threshold, m->right[node], score + std_log(f));
}

int llm_fasttext_predict(const llm_fasttext *m, llm_fasttext_scratch *s, const char *text,
                         size_t len, int k, float threshold, llm_fasttext_pred *out)
{
	llm_fasttext_line_features(m, s, text, len, 0);
	if (s->nids == 0)
		return 0;
	if (k <= 0 || k > m->nlabels)
		k = m->nlabels;
	topk t = { s->heap, 0, (size_t)k };
	llm_fasttext_compute_hidden(m, s);
	if (m->loss == LLM_FASTTEXT_HS) {
		hs_dfs(m, s, &t, threshold, 2 * m->osz - 2, 0.0f);
	} else {
		llm_fasttext_compute_output(m, s);
		for (int32_t i = 0; i < m->osz; i++) {
			if (s->output[i] < threshold)
				continue;
			float score = std_log(s->output[i]);
			if (topk_worse(&t, score))
				continue;
			topk_push(&t, score, i);
		}
	}
	topk_sort(&t);
	for (size_t i = 0; i < t.n; i++) {
		out[i].label = t.h[i].label;
		out[i].prob = expf(t.h[i].prob);
	}
	return (int)t.n;
}

/* ---- model facts ---- */

int llm_fasttext_nlabels(const llm_fasttext *m) { return m->nlabels; }
int llm_fasttext_nwords(const llm_fasttext *m) { return m->nwords; }
int llm_fasttext_dim(const llm_fasttext *m) { return m->dim; }
int llm_fasttext_loss(const llm_fasttext *m) { return m->loss; }
int llm_fasttext_quantized(const llm_fasttext *m) { return m->in.quant; }

const char *llm_fasttext_label(const llm_fasttext *m, int i)
{
	if (i < 0 || i >= m->nlabels)
		return NULL;
	return m->arena + m->woff[m->nwords + i];
}

const char *llm_fasttext_label_name(const llm_fasttext *m, int i)
{
	const char *l = llm_fasttext_label(m, i);
	if (l && strncmp(l, FT_LABEL, sizeof FT_LABEL - 1) == 0)
		l += sizeof FT_LABEL - 1;
	return l;
}

int llm_fasttext_label_id(const llm_fasttext *m, const char *name)
{
	for (int i = 0; i < m->nlabels; i++)
		if (strcmp(llm_fasttext_label(m, i), name) == 0 ||
		    strcmp(llm_fasttext_label_name(m, i), name) == 0)
			return i;
	return -1;
}

int llm_fasttext_word_id(const llm_fasttext *m, const char *w, size_t n)
{
	int32_t id = word_find(m, w, n, ft_hash(w, n));
	return id >= 0 && m->types[id] == 0 ? id : -1;
}

/* ---- building the derived tables (after load or training) ---- */

void llm_fasttext_build_word2int(llm_fasttext *m)
{
	/* ceil(size / 0.7) slots, as fastText: the load factor stays under 0.7. */
	m->w2i_size = (uint32_t)ceil(m->size / 0.7);
	if (m->w2i_size < 1)
		m->w2i_size = 1;
	free(m->word2int);
	m->word2int = llm_malloc((size_t)m->w2i_size * sizeof *m->word2int);
	for (uint32_t i = 0; i < m->w2i_size; i++)
		m->word2int[i] = -1;
	for (int32_t i = 0; i < m->size; i++) {
		const char *w = m->arena + m->woff[i];
		uint32_t id = ft_hash(w, m->wlen[i]) % m->w2i_size;
		while (m->word2int[id] != -1)
			id = (id + 1) % m->w2i_size;
		m->word2int[id] = i;
	}
}

typedef struct {
	int32_t *v;
	size_t n, cap;
} ivec;

static void ivec_push(ivec *v, int32_t x)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? v->cap * 2 : 1024;
		v->v = llm_realloc(v->v, v->cap * sizeof *v->v);
	}
	v->v[v->n++] = x;
}

struct ngram_ctx {
	const llm_fasttext *m;
	ivec *v;
};

static void ngram_to_ivec(const llm_fasttext *m, void *ctx, int32_t id)
{
	struct ngram_ctx *c = ctx;
	if (m->pruneidx_size == 0 || id < 0)
		return;
	if (m->pruneidx_size > 0) {
		id = prune_get(m, id);
		if (id < 0)
			return;
	}
	ivec_push(c->v, m->nwords + id);
}

/* fastText's initNgrams: each word's own row, then its character n-grams. */
void llm_fasttext_build_subwords(llm_fasttext *m)
{
	ivec v = { NULL, 0, 0 };
	llm_buf w = LLM_BUF_INIT;
	free(m->sub_off);
	m->sub_off = llm_malloc(((size_t)m->size + 1) * sizeof *m->sub_off);
	for (int32_t i = 0; i < m->size; i++) {
		m->sub_off[i] = (int32_t)v.n;
		ivec_push(&v, i);
		const char *word = m->arena + m->woff[i];
		if (strcmp(word, FT_EOS) == 0 || m->maxn <= 0 || m->bucket <= 0)
			continue;
		llm_buf_reset(&w);
		llm_buf_addc(&w, '<');
		llm_buf_add(&w, word, m->wlen[i]);
		llm_buf_addc(&w, '>');
		struct ngram_ctx c = { m, &v };
		char_ngrams(m, w.p, w.len, ngram_to_ivec, &c);
	}
	m->sub_off[m->size] = (int32_t)v.n;
	free(m->sub);
	m->sub = v.v ? v.v : llm_malloc(sizeof(int32_t));
	llm_buf_release(&w);
}

/* fastText's HierarchicalSoftmaxLoss::buildTree over label counts (sorted decreasing). */
#define FT_MAX_TREE_DEPTH 4096 /* prediction recurses along the tree; real trees are ~log2(labels) */

int llm_fasttext_build_tree(llm_fasttext *m, int with_paths)
{
	int32_t osz = m->osz, nn = 2 * osz - 1;
	int64_t *count = llm_malloc((size_t)nn * sizeof *count);
	int32_t *parent = llm_malloc((size_t)nn * sizeof *parent);
	uint8_t *binary = llm_calloc((size_t)nn, 1);
	m->left = llm_malloc((size_t)nn * sizeof *m->left);
	m->right = llm_malloc((size_t)nn * sizeof *m->right);
	for (int32_t i = 0; i < nn; i++) {
		parent[i] = m->left[i] = m->right[i] = -1;
		count[i] = (int64_t)1e15;
	}
	/* Counts come from the file: negative ones (corrupt) count as 0 and sums saturate, so a
	 * hostile file cannot overflow them. */
	for (int32_t i = 0; i < osz; i++) {
		int64_t c = m->counts[m->nwords + i];
		/* Below the 1e15 of unbuilt nodes, or the merge could pick a node not yet made. */
		count[i] = c < 0 ? 0 : c >= (int64_t)1e15 ? (int64_t)1e15 - 1 : c;
	}
	int32_t leaf = osz - 1, node = osz;
	for (int32_t i = osz; i < nn; i++) {
		int32_t mini[2] = { 0, 0 };
		for (int j = 0; j < 2; j++) {
			if (leaf >= 0 && count[leaf] < count[node])
				mini[j] = leaf--;
			else
				mini[j] = node++;
		}
		m->left[i] = mini[0];
		m->right[i] = mini[1];
		count[i] = count[mini[0]] > INT64_MAX - count[mini[1]] ? INT64_MAX
		                                                        : count[mini[0]] + count[mini[1]];
		parent[mini[0]] = i;
		parent[mini[1]] = i;
		binary[mini[1]] = 1;
	}
	/* Zero or absurd label counts (a corrupt file) can chain the tree into a list. */
	int depth_ok = 1;
	for (int32_t i = 0; i < osz && depth_ok; i++) {
		int d = 0;
		for (int32_t j = parent[i]; j != -1 && depth_ok; j = parent[j])
			depth_ok = ++d <= FT_MAX_TREE_DEPTH;
	}
	if (with_paths && depth_ok) {
		ivec p = { NULL, 0, 0 };
		ivec c = { NULL, 0, 0 };
		m->path_off = llm_malloc(((size_t)osz + 1) * sizeof *m->path_off);
		for (int32_t i = 0; i < osz; i++) {
			m->path_off[i] = (int32_t)p.n;
			for (int32_t j = parent[i], at = i; j != -1; at = j, j = parent[j]) {
				ivec_push(&p, j - osz);
				ivec_push(&c, binary[at]);
			}
		}
		m->path_off[osz] = (int32_t)p.n;
		m->path = p.v;
		m->code = llm_malloc(c.n + 1);
		for (size_t i = 0; i < c.n; i++)
			m->code[i] = (uint8_t)c.v[i];
		free(c.v);
	}
	free(count);
	free(parent);
	free(binary);
	return depth_ok ? LLM_OK : LLM_EFORMAT;
}

void llm_fasttext_free(llm_fasttext *m)
{
	if (!m)
		return;
	free(m->arena);
	free(m->woff);
	free(m->wlen);
	free(m->counts);
	free(m->types);
	free(m->word2int);
	free(m->sub_off);
	free(m->sub);
	free(m->prune_key);
	free(m->prune_val);
	matrix_release(&m->in);
	matrix_release(&m->out);
	free(m->left);
	free(m->right);
	free(m->path_off);
	free(m->path);
	free(m->code);
	free(m);
}

/* ---- loading ---- */

typedef struct {
	const unsigned char *p;
	size_t len, pos;
	const char *name;
} cursor;

static int rd(cursor *c, void *out, size_t n, const char *what)
{
	if (c->len - c->pos < n) {
		llm_fail(LLM_EFORMAT, "%s: truncated model file (reading %s at byte %zu)", c->name,
		         what, c->pos);
		return LLM_EFORMAT; /* a constant, so the compiler sees that out is set on LLM_OK */
	}
	memcpy(out, c->p + c->pos, n);
	c->pos += n;
	return LLM_OK;
}

#define RD(c, x, what) \
	do { \
		int rc_ = rd((c), &(x), sizeof(x), (what)); \
		if (rc_) \
			return rc_; \
	} while (0)

static int truncated(const cursor *c, const char *what)
{
	return llm_fail(LLM_EFORMAT, "%s: truncated model file (reading %s at byte %zu)", c->name,
	                what, c->pos);
}

static int bad(const cursor *c, const char *what)
{
	return llm_fail(LLM_EFORMAT, "%s: corrupt model file: %s", c->name, what);
}

static int load_pq(cursor *c, ft_pq *pq)
{
	RD(c, pq->dim, "quantizer");
	RD(c, pq->nsubq, "quantizer");
	RD(c, pq->dsub, "quantizer");
	RD(c, pq->lastdsub, "quantizer");
	if (pq->dim <= 0 || pq->dim > FT_MAX_DIM || pq->nsubq <= 0 || pq->dsub <= 0 ||
	    pq->lastdsub <= 0 || pq->lastdsub > pq->dsub ||
	    (int64_t)(pq->nsubq - 1) * pq->dsub + pq->lastdsub != pq->dim)
		return bad(c, "product quantizer shape");
	size_t n = (size_t)pq->dim * FT_KSUB;
	if ((c->len - c->pos) / sizeof(float) < n)
		return truncated(c, "centroids");
	pq->centroids = llm_malloc(n * sizeof(float));
	memcpy(pq->centroids, c->p + c->pos, n * sizeof(float));
	c->pos += n * sizeof(float);
	return LLM_OK;
}

static int load_matrix(cursor *c, ft_matrix *a, int quant)
{
	a->quant = quant;
	if (!quant) {
		RD(c, a->m, "matrix size");
		RD(c, a->n, "matrix size");
		if (a->m < 0 || a->n <= 0 || a->n > FT_MAX_DIM)
			return bad(c, "matrix shape");
		if ((uint64_t)a->m > (c->len - c->pos) / sizeof(float) / (uint64_t)a->n)
			return truncated(c, "matrix data");
		size_t bytes = (size_t)a->m * (size_t)a->n * sizeof(float);
		a->data = llm_malloc(bytes ? bytes : 1);
		memcpy(a->data, c->p + c->pos, bytes);
		c->pos += bytes;
		return LLM_OK;
	}
	uint8_t qnorm;
	int32_t codesize;
	RD(c, qnorm, "quantized matrix");
	RD(c, a->m, "quantized matrix");
	RD(c, a->n, "quantized matrix");
	RD(c, codesize, "quantized matrix");
	a->qnorm = qnorm != 0;
	if (a->m < 0 || a->n <= 0 || a->n > FT_MAX_DIM || codesize < 0)
		return bad(c, "quantized matrix shape");
	if ((size_t)codesize > c->len - c->pos)
		return truncated(c, "codes");
	a->codes = llm_malloc((size_t)codesize + 1);
	memcpy(a->codes, c->p + c->pos, (size_t)codesize);
	c->pos += (size_t)codesize;
	int rc = load_pq(c, &a->pq);
	if (rc)
		return rc;
	/* m comes from the file unbounded (only m >= 0 is checked above), so m * nsubq may not
	 * fit in 64 bits: a product that overflows cannot equal codesize either. */
	int64_t ncodes;
	if (a->pq.dim != a->n || __builtin_mul_overflow(a->m, (int64_t)a->pq.nsubq, &ncodes) ||
	    ncodes != (int64_t)codesize)
		return bad(c, "quantized matrix does not match its quantizer");
	if (a->qnorm) {
		if ((uint64_t)a->m > c->len - c->pos)
			return truncated(c, "norm codes");
		a->norm_codes = llm_malloc((size_t)a->m + 1);
		memcpy(a->norm_codes, c->p + c->pos, (size_t)a->m);
		c->pos += (size_t)a->m;
		rc = load_pq(c, &a->npq);
		if (rc)
			return rc;
		if (a->npq.dim != 1 || a->npq.nsubq != 1)
			return bad(c, "norm quantizer shape");
	}
	return LLM_OK;
}

static int load_dict(cursor *c, llm_fasttext *m)
{
	RD(c, m->size, "dictionary");
	RD(c, m->nwords, "dictionary");
	RD(c, m->nlabels, "dictionary");
	RD(c, m->ntokens, "dictionary");
	RD(c, m->pruneidx_size, "dictionary");
	if (m->size < 0 || m->nwords < 0 || m->nlabels <= 0 ||
	    (int64_t)m->nwords + m->nlabels != m->size || m->pruneidx_size < -1)
		return bad(c, "dictionary sizes");
	/* Each entry takes at least 10 bytes (NUL, count, type): bound size before allocating. */
	if ((uint64_t)m->size > (c->len - c->pos) / 10)
		return truncated(c, "dictionary entries");
	size_t start = c->pos;
	m->woff = llm_malloc((size_t)m->size * sizeof *m->woff);
	m->wlen = llm_malloc((size_t)m->size * sizeof *m->wlen);
	m->counts = llm_malloc((size_t)m->size * sizeof *m->counts);
	m->types = llm_malloc((size_t)m->size);
	size_t arena_len = 0;
	for (int32_t i = 0; i < m->size; i++) {
		const unsigned char *nul = memchr(c->p + c->pos, 0, c->len - c->pos);
		if (!nul)
			return truncated(c, "dictionary word");
		size_t n = (size_t)(nul - (c->p + c->pos));
		if (n > UINT32_MAX)
			return bad(c, "dictionary word length");
		m->woff[i] = arena_len;
		m->wlen[i] = (uint32_t)n;
		arena_len += n + 1;
		c->pos += n + 1;
		RD(c, m->counts[i], "dictionary count");
		RD(c, m->types[i], "dictionary type");
		if (m->types[i] != (i < m->nwords ? 0 : 1))
			return bad(c, "dictionary entry type");
	}
	/* Words are copied in one go: they sit in the file with their NULs, like the arena. */
	m->arena = llm_malloc(arena_len + 1);
	{
		size_t pos = start, a = 0;
		for (int32_t i = 0; i < m->size; i++) {
			memcpy(m->arena + a, c->p + pos, m->wlen[i] + 1);
			a += m->wlen[i] + 1;
			pos += m->wlen[i] + 1 + 9;
		}
	}
	if (m->pruneidx_size > 0) {
		if ((uint64_t)m->pruneidx_size > (c->len - c->pos) / 8)
			return truncated(c, "pruning index");
		uint32_t cap = 1;
		while (cap < (uint64_t)m->pruneidx_size * 2)
			cap *= 2;
		m->prune_cap = cap;
		m->prune_key = llm_malloc((size_t)cap * sizeof *m->prune_key);
		m->prune_val = llm_malloc((size_t)cap * sizeof *m->prune_val);
		for (uint32_t i = 0; i < cap; i++)
			m->prune_key[i] = -1;
		for (int64_t i = 0; i < m->pruneidx_size; i++) {
			int32_t k, v;
			RD(c, k, "pruning index");
			RD(c, v, "pruning index");
			if (k < 0 || v < 0)
				return bad(c, "pruning index entry");
			uint32_t mask = cap - 1, j = ((uint32_t)k * 2654435761u) & mask;
			while (m->prune_key[j] != -1 && m->prune_key[j] != k)
				j = (j + 1) & mask;
			/* A repeated key keeps the last value, as std::unordered_map assignment does. */
			m->prune_key[j] = k;
			m->prune_val[j] = v;
		}
	}
	return LLM_OK;
}

static int load_cursor(llm_fasttext *m, cursor *c)
{
	int32_t magic, version;
	RD(c, magic, "header");
	RD(c, version, "header");
	if (magic != FT_MAGIC)
		return llm_fail(LLM_EFORMAT, "%s: not a fastText model (bad magic number)", c->name);
	if (version != 11 && version != FT_VERSION)
		return llm_fail(LLM_EUNSUPPORTED, "%s: fastText file format version %d (supported: 11, 12)",
		                c->name, version);
	RD(c, m->dim, "arguments");
	RD(c, m->ws, "arguments");
	RD(c, m->epoch, "arguments");
	RD(c, m->min_count, "arguments");
	RD(c, m->neg, "arguments");
	RD(c, m->word_ngrams, "arguments");
	RD(c, m->loss, "arguments");
	RD(c, m->model, "arguments");
	RD(c, m->bucket, "arguments");
	RD(c, m->minn, "arguments");
	RD(c, m->maxn, "arguments");
	RD(c, m->lr_update_rate, "arguments");
	RD(c, m->t, "arguments");
	if (m->model != FT_MODEL_SUP)
		return llm_fail(LLM_EUNSUPPORTED, "%s: not a supervised fastText model", c->name);
	if (version == 11)
		m->maxn = 0; /* fastText: supervised models of version 11 had no character n-grams */
	if (m->dim <= 0 || m->dim > FT_MAX_DIM || m->loss < LLM_FASTTEXT_HS ||
	    m->loss > LLM_FASTTEXT_OVA || m->bucket < 0 || m->word_ngrams < 0 ||
	    m->word_ngrams > FT_MAX_NGRAM || m->maxn > FT_MAX_NGRAM || m->minn < 0)
		return bad(c, "arguments out of range");
	int rc = load_dict(c, m);
	if (rc)
		return rc;
	uint8_t qin, qout;
	RD(c, qin, "input matrix flag");
	if ((rc = load_matrix(c, &m->in, qin != 0)))
		return rc;
	if (!qin && m->pruneidx_size >= 0)
		return bad(c, "a pruned dictionary needs a quantized input matrix");
	RD(c, qout, "output matrix flag");
	if ((rc = load_matrix(c, &m->out, qin && qout)))
		return rc;
	if (m->in.n != m->dim || m->out.n != m->dim)
		return bad(c, "matrix width differs from the model dimension");
	m->osz = m->nlabels;
	/* One row per label whatever the loss (hierarchical softmax uses the first nlabels - 1
	 * for its inner nodes). */
	if (m->out.m != m->osz)
		return bad(c, "output matrix rows differ from the number of labels");
	/* Every input row a feature can name must exist. */
	int64_t rows = m->nwords;
	if (m->pruneidx_size < 0)
		rows += m->bucket;
	if (m->in.m < rows)
		return bad(c, "input matrix smaller than vocabulary plus buckets");
	for (uint32_t i = 0; m->prune_key && i < m->prune_cap; i++)
		if (m->prune_key[i] != -1 && (int64_t)m->nwords + m->prune_val[i] >= m->in.m)
			return bad(c, "pruning index points past the input matrix");
	if (m->bucket == 0 && (m->maxn > 0 || m->word_ngrams > 1)) {
		/* n-grams with no bucket to hash into: fastText would divide by zero; we drop them. */
		m->maxn = 0;
		m->word_ngrams = 1;
	}
	llm_fasttext_init_tables(m);
	llm_fasttext_build_word2int(m);
	llm_fasttext_build_subwords(m);
	if (m->loss == LLM_FASTTEXT_HS && llm_fasttext_build_tree(m, 0) != LLM_OK)
		return bad(c, "label counts make the hierarchical softmax tree too deep");
	return LLM_OK;
}

int llm_fasttext_load_mem(llm_fasttext **out, const void *data, size_t len, const char *name)
{
	llm_fasttext *m = llm_calloc(1, sizeof *m);
	cursor c = { data, len, 0, name ? name : "<memory>" };
	*out = NULL;
	int rc = load_cursor(m, &c);
	if (rc) {
		llm_fasttext_free(m);
		return rc;
	}
	*out = m;
	return LLM_OK;
}

int llm_fasttext_load(llm_fasttext **out, const char *path)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return llm_fail(LLM_EIO, "%s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return llm_fail(LLM_EIO, "%s: %s", path, strerror(e));
	}
	if (!S_ISREG(st.st_mode) || st.st_size == 0) {
		close(fd);
		return llm_fail(LLM_EFORMAT, "%s: not a fastText model (empty or not a file)", path);
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	int e = errno;
	close(fd);
	if (p == MAP_FAILED)
		return llm_fail(LLM_EIO, "%s: %s", path, strerror(e));
	int rc = llm_fasttext_load_mem(out, p, (size_t)st.st_size, path);
	munmap(p, (size_t)st.st_size);
	return rc;
}

/* ---- saving ---- */

static void put(llm_buf *b, const void *p, size_t n) { llm_buf_add(b, p, n); }
#define PUT(b, x) put((b), &(x), sizeof(x))

static void save_pq(llm_buf *b, const ft_pq *pq)
{
	PUT(b, pq->dim);
	PUT(b, pq->nsubq);
	PUT(b, pq->dsub);
	PUT(b, pq->lastdsub);
	put(b, pq->centroids, (size_t)pq->dim * FT_KSUB * sizeof(float));
}

static void save_matrix(llm_buf *b, const ft_matrix *a)
{
	if (!a->quant) {
		PUT(b, a->m);
		PUT(b, a->n);
		put(b, a->data, (size_t)(a->m * a->n) * sizeof(float));
		return;
	}
	uint8_t qnorm = (uint8_t)a->qnorm;
	int32_t codesize = (int32_t)(a->m * a->pq.nsubq);
	PUT(b, qnorm);
	PUT(b, a->m);
	PUT(b, a->n);
	PUT(b, codesize);
	put(b, a->codes, (size_t)codesize);
	save_pq(b, &a->pq);
	if (a->qnorm) {
		put(b, a->norm_codes, (size_t)a->m);
		save_pq(b, &a->npq);
	}
}

int llm_fasttext_save(const llm_fasttext *m, const char *path)
{
	llm_buf b = LLM_BUF_INIT;
	int32_t magic = FT_MAGIC, version = FT_VERSION;
	PUT(&b, magic);
	PUT(&b, version);
	PUT(&b, m->dim);
	PUT(&b, m->ws);
	PUT(&b, m->epoch);
	PUT(&b, m->min_count);
	PUT(&b, m->neg);
	PUT(&b, m->word_ngrams);
	PUT(&b, m->loss);
	PUT(&b, m->model);
	PUT(&b, m->bucket);
	PUT(&b, m->minn);
	PUT(&b, m->maxn);
	PUT(&b, m->lr_update_rate);
	PUT(&b, m->t);
	PUT(&b, m->size);
	PUT(&b, m->nwords);
	PUT(&b, m->nlabels);
	PUT(&b, m->ntokens);
	PUT(&b, m->pruneidx_size);
	for (int32_t i = 0; i < m->size; i++) {
		put(&b, m->arena + m->woff[i], m->wlen[i] + 1);
		PUT(&b, m->counts[i]);
		PUT(&b, m->types[i]);
	}
	for (uint32_t i = 0; m->prune_key && i < m->prune_cap; i++)
		if (m->prune_key[i] != -1) {
			PUT(&b, m->prune_key[i]);
			PUT(&b, m->prune_val[i]);
		}
	uint8_t qin = (uint8_t)m->in.quant, qout = (uint8_t)m->out.quant;
	PUT(&b, qin);
	save_matrix(&b, &m->in);
	PUT(&b, qout);
	save_matrix(&b, &m->out);
	int rc = llm_write_file(path, b.p, b.len);
	llm_buf_release(&b);
	return rc;
}
