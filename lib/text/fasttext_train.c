/*
 * fasttext_train.c — fastText 0.9's supervised training (src/fasttext.cc, model.cc, loss.cc),
 * step for step, so that one thread and one seed give one model.
 */
#include "fasttext_train.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "fasttext_internal.h"

/* The log table fastText uses for training losses. */
static float ft_tlog(const llm_fasttext *m, float x)
{
	if (x > 1.0f)
		return 0.0f;
	if (!(x >= 0.0f))
		return m->t_log[0];
	int64_t i = (int64_t)(x * FT_LOG_TABLE);
	return m->t_log[i];
}

void llm_fasttext_train_args_init(llm_fasttext_train_args *a)
{
	memset(a, 0, sizeof *a);
	a->dim = 100;
	a->epoch = 5;
	a->lr = 0.1;
	a->lr_update_rate = 100;
	a->word_ngrams = 1;
	a->min_count = 1;
	a->bucket = 2000000;
	a->loss = LLM_FASTTEXT_SOFTMAX;
	a->threads = 1;
	a->shuffle = 1;
}

/* Vocabulary counting: an open-addressing table over the tokens of the training data. */
typedef struct {
	const char *w;
	uint32_t len, first; /* first: order of first appearance, the tie-break of the sort */
	int64_t count;
	int8_t type;
} vocab_entry;

typedef struct {
	vocab_entry *e;
	int32_t *slot;
	uint32_t n, cap; /* cap: slots, power of two */
} vocab;

static void vocab_grow(vocab *v)
{
	uint32_t cap = v->cap ? v->cap * 2 : 1u << 16;
	int32_t *slot = llm_malloc((size_t)cap * sizeof *slot);
	for (uint32_t i = 0; i < cap; i++)
		slot[i] = -1;
	for (uint32_t i = 0; i < v->n; i++) {
		uint32_t j = ft_hash(v->e[i].w, v->e[i].len) & (cap - 1);
		while (slot[j] != -1)
			j = (j + 1) & (cap - 1);
		slot[j] = (int32_t)i;
	}
	free(v->slot);
	v->slot = slot;
	v->cap = cap;
	v->e = llm_realloc(v->e, (size_t)cap * sizeof *v->e);
}

static void vocab_add(vocab *v, const char *w, size_t n)
{
	if (v->n * 2 >= v->cap)
		vocab_grow(v);
	uint32_t j = ft_hash(w, n) & (v->cap - 1);
	while (v->slot[j] != -1) {
		vocab_entry *e = &v->e[v->slot[j]];
		if (e->len == n && memcmp(e->w, w, n) == 0) {
			e->count++;
			return;
		}
		j = (j + 1) & (v->cap - 1);
	}
	vocab_entry *e = &v->e[v->n];
	e->w = w;
	e->len = (uint32_t)n;
	e->first = v->n;
	e->count = 1;
	e->type = (n >= sizeof FT_LABEL - 1 && memcmp(w, FT_LABEL, sizeof FT_LABEL - 1) == 0);
	v->slot[j] = (int32_t)v->n++;
}

static int cmp_vocab(const void *a, const void *b)
{
	const vocab_entry *x = a, *y = b;
	if (x->type != y->type)
		return x->type - y->type;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->first < y->first ? -1 : 1;
}

/* fastText's Dictionary::readFromFile + threshold: count every token (with one "</s>" per
 * line), drop rare words and labels, sort words then labels by decreasing count. */
static int build_dict(llm_fasttext *m, const llm_fasttext_train_args *a, const char *data, size_t len)
{
	vocab v = { NULL, NULL, 0, 0 };
	size_t i = 0;
	while (i < len) {
		char ch = data[i];
		if (ch == '\n') {
			vocab_add(&v, FT_EOS, 4);
			m->ntokens++;
			i++;
			continue;
		}
		if (is_ft_space(ch)) {
			i++;
			continue;
		}
		size_t b = i;
		while (i < len && !is_ft_space(data[i]))
			i++;
		vocab_add(&v, data + b, i - b);
		m->ntokens++;
	}
	qsort(v.e, v.n, sizeof *v.e, cmp_vocab);
	llm_buf arena = LLM_BUF_INIT;
	uint32_t kept = 0;
	for (uint32_t k = 0; k < v.n; k++) {
		vocab_entry *e = &v.e[k];
		if (e->count < (e->type ? a->min_count_label : a->min_count))
			continue;
		v.e[kept++] = *e;
	}
	m->size = (int32_t)kept;
	m->woff = llm_malloc((size_t)kept * sizeof *m->woff + 1);
	m->wlen = llm_malloc((size_t)kept * sizeof *m->wlen + 1);
	m->counts = llm_malloc((size_t)kept * sizeof *m->counts + 1);
	m->types = llm_malloc((size_t)kept + 1);
	for (uint32_t k = 0; k < kept; k++) {
		m->woff[k] = arena.len;
		m->wlen[k] = v.e[k].len;
		m->counts[k] = v.e[k].count;
		m->types[k] = v.e[k].type;
		llm_buf_add(&arena, v.e[k].w, v.e[k].len);
		llm_buf_addc(&arena, 0);
		if (v.e[k].type)
			m->nlabels++;
		else
			m->nwords++;
	}
	m->arena = llm_buf_detach(&arena, NULL);
	if (!m->arena)
		m->arena = llm_calloc(1, 1);
	free(v.e);
	free(v.slot);
	m->pruneidx_size = -1;
	if (m->nlabels == 0)
		return llm_fail(LLM_EFORMAT, "training data has no label (no \"" FT_LABEL "\" token)");
	if (m->nwords == 0)
		return llm_fail(LLM_EFORMAT, "training data has no word");
	return LLM_OK;
}

typedef struct {
	llm_fasttext *m;
	const llm_fasttext_train_args *a;
	const char *data;
	const size_t *lines; /* start offsets of the examples; lines[n] = end */
	size_t nlines;
	atomic_llong tokens; /* shared progress, as fastText's tokenCount_ */
	int64_t total;       /* epoch * ntokens */
	void (*progress)(double, double, void *);
	void *ctx;
	pthread_mutex_t lock;
	double loss_sum;
	int64_t loss_n;
} trainer;

typedef struct {
	trainer *t;
	int id;
} worker;

/* One binary logistic unit (fastText's BinaryLogisticLoss::binaryLogistic). */
static float binary_logistic(llm_fasttext *m, llm_fasttext_scratch *s, int64_t row, int positive,
                             float lr)
{
	float score = ft_sigmoid(m, ft_dense_dot(&m->out, s->hidden, row));
	float alpha = lr * ((float)positive - score);
	ft_dense_axpy(&m->out, s->grad, row, alpha);
	float *w = m->out.data + row * m->dim;
	for (int j = 0; j < m->dim; j++)
		w[j] += alpha * s->hidden[j];
	return positive ? -ft_tlog(m, score) : -ft_tlog(m, 1.0f - score);
}

static float train_example(llm_fasttext *m, llm_fasttext_scratch *s, float lr)
{
	llm_fasttext_compute_hidden(m, s);
	memset(s->grad, 0, (size_t)m->dim * sizeof(float));
	float loss = 0.0f;
	if (m->loss == LLM_FASTTEXT_OVA) {
		for (int32_t i = 0; i < m->osz; i++) {
			int pos = 0;
			for (size_t j = 0; j < s->nlab; j++)
				pos |= s->labels[j] == i;
			loss += binary_logistic(m, s, i, pos, lr);
		}
	} else {
		int32_t target = s->labels[llm_rng_below(&s->rng, s->nlab)];
		if (m->loss == LLM_FASTTEXT_HS) {
			for (int32_t i = m->path_off[target]; i < m->path_off[target + 1]; i++)
				loss += binary_logistic(m, s, m->path[i], m->code[i], lr);
		} else {
			llm_fasttext_compute_output(m, s);
			for (int32_t i = 0; i < m->osz; i++) {
				float alpha = lr * ((i == target ? 1.0f : 0.0f) - s->output[i]);
				ft_dense_axpy(&m->out, s->grad, i, alpha);
				float *w = m->out.data + (int64_t)i * m->dim;
				for (int j = 0; j < m->dim; j++)
					w[j] += alpha * s->hidden[j];
			}
			loss = -ft_tlog(m, s->output[target]);
		}
	}
	float scale = (float)(1.0 / (double)s->nids);
	for (int j = 0; j < m->dim; j++)
		s->grad[j] *= scale;
	for (size_t i = 0; i < s->nids; i++) {
		float *w = m->in.data + (int64_t)s->ids[i] * m->dim;
		for (int j = 0; j < m->dim; j++)
			w[j] += s->grad[j];
	}
	return loss;
}

static void *train_thread(void *arg)
{
	worker *wk = arg;
	trainer *t = wk->t;
	llm_fasttext *m = t->m;
	llm_fasttext_scratch *s = llm_fasttext_scratch_new(m);
	llm_rng_seed2(&s->rng, t->a->seed, (uint64_t)wk->id + 1);
	size_t line = t->nlines * (size_t)wk->id / (size_t)t->a->threads;
	int64_t local = 0, report_every = t->total / 100 + 1, next_report = report_every;
	double loss_sum = 0;
	int64_t loss_n = 0;
	for (;;) {
		int64_t done = atomic_load(&t->tokens);
		if (done >= t->total)
			break;
		float progress = (float)done / (float)t->total;
		float lr = (float)(t->a->lr * (1.0 - progress));
		const char *b = t->data + t->lines[line];
		size_t n = t->lines[line + 1] - t->lines[line];
		line = (line + 1) % t->nlines;
		llm_fasttext_line_features(m, s, b, n, 1);
		/* Tokens of the line as fastText's getLine counts them: words, labels and "</s>". */
		int64_t ntok = 1;
		for (size_t i = 0; i < n;) {
			while (i < n && is_ft_space(b[i]))
				i++;
			if (i < n)
				ntok++;
			while (i < n && !is_ft_space(b[i]))
				i++;
		}
		local += ntok;
		if (s->nlab > 0 && s->nids > 0) {
			loss_sum += train_example(m, s, lr);
			loss_n++;
		}
		if (local > m->lr_update_rate) {
			int64_t now = atomic_fetch_add(&t->tokens, local) + local;
			local = 0;
			if (wk->id == 0 && t->progress && now >= next_report) {
				next_report = now + report_every;
				pthread_mutex_lock(&t->lock);
				double ls = t->loss_sum + loss_sum;
				int64_t ln = t->loss_n + loss_n;
				pthread_mutex_unlock(&t->lock);
				t->progress(now >= t->total ? 1.0 : (double)now / (double)t->total,
				            ln ? ls / (double)ln : 0.0, t->ctx);
			}
		}
	}
	pthread_mutex_lock(&t->lock);
	t->loss_sum += loss_sum;
	t->loss_n += loss_n;
	pthread_mutex_unlock(&t->lock);
	llm_fasttext_scratch_free(s);
	return NULL;
}

static int args_ok(const llm_fasttext_train_args *a)
{
	return a->dim > 0 && a->dim <= FT_MAX_DIM && a->epoch > 0 && a->lr > 0 &&
	       a->lr_update_rate > 0 && a->word_ngrams > 0 && a->word_ngrams <= FT_MAX_NGRAM &&
	       a->minn >= 0 && a->maxn >= 0 && a->maxn <= FT_MAX_NGRAM &&
	       !(a->maxn > 0 && a->minn > a->maxn) && a->bucket >= 0 && a->threads > 0 &&
	       a->min_count >= 1 &&
	       (a->loss == LLM_FASTTEXT_SOFTMAX || a->loss == LLM_FASTTEXT_OVA ||
	        a->loss == LLM_FASTTEXT_HS);
}

/* A supervised model with the arguments' settings and fastText's fixed ones. */
static llm_fasttext *new_model(const llm_fasttext_train_args *a)
{
	llm_fasttext *m = llm_calloc(1, sizeof *m);
	m->dim = a->dim;
	m->ws = 5;
	m->epoch = a->epoch;
	m->min_count = a->min_count;
	m->neg = 5;
	m->word_ngrams = a->word_ngrams;
	m->loss = a->loss;
	m->model = FT_MODEL_SUP;
	m->minn = a->minn;
	m->maxn = a->maxn;
	/* fastText: no n-grams, no buckets (the model would carry 2M unused rows otherwise). */
	m->bucket = (a->word_ngrams <= 1 && a->maxn == 0) ? 0 : a->bucket;
	if (m->bucket == 0) {
		m->maxn = 0;
		m->word_ngrams = 1;
	}
	m->lr_update_rate = a->lr_update_rate;
	m->t = 1e-4;
	return m;
}

/* The start of every example; the text after the last '\n' is an example too. */
static size_t *example_starts(const char *data, size_t len, size_t *nlines)
{
	size_t n = 0, cap = 1024;
	size_t *lines = llm_malloc(cap * sizeof *lines);
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(data + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - data) : len;
		if (n + 2 >= cap) {
			cap *= 2;
			lines = llm_realloc(lines, cap * sizeof *lines);
		}
		lines[n++] = i;
		i = e + 1;
	}
	*nlines = n;
	return lines;
}

/* The examples, shuffled when asked, laid out back to back so that offs[i]..offs[i+1] is
 * one (the caller frees both). */
static char *shuffled_copy(const char *data, size_t len, const size_t *lines, size_t nlines,
                           llm_rng *rng, int shuffle, size_t **offs_out)
{
	/* Examples as (start, end) pairs so that shuffling can reorder them. */
	size_t *spans = llm_malloc((2 * nlines) * sizeof *spans);
	for (size_t i = 0; i < nlines; i++) {
		spans[2 * i] = lines[i];
		const char *nl = memchr(data + lines[i], '\n', len - lines[i]);
		spans[2 * i + 1] = nl ? (size_t)(nl - data) : len;
	}
	if (shuffle)
		for (size_t i = nlines - 1; i > 0; i--) {
			size_t j = (size_t)llm_rng_below(rng, i + 1);
			size_t s0 = spans[2 * i], s1 = spans[2 * i + 1];
			spans[2 * i] = spans[2 * j];
			spans[2 * i + 1] = spans[2 * j + 1];
			spans[2 * j] = s0;
			spans[2 * j + 1] = s1;
		}
	char *copy = llm_malloc(len + nlines + 1);
	size_t *offs = llm_malloc((nlines + 1) * sizeof *offs);
	size_t at = 0;
	for (size_t i = 0; i < nlines; i++) {
		offs[i] = at;
		size_t n = spans[2 * i + 1] - spans[2 * i];
		memcpy(copy + at, data + spans[2 * i], n);
		at += n;
	}
	offs[nlines] = at;
	free(spans);
	*offs_out = offs;
	return copy;
}

/* The model's tables from its dictionary; the input matrix uniform in +-1/dim, the output
 * zero; the label tree for hierarchical softmax. */
static int init_weights(llm_fasttext *m, llm_rng *rng)
{
	llm_fasttext_init_tables(m);
	llm_fasttext_build_word2int(m);
	llm_fasttext_build_subwords(m);
	m->osz = m->nlabels;
	m->in.m = (int64_t)m->nwords + m->bucket;
	m->in.n = m->dim;
	m->in.data = llm_malloc((size_t)m->in.m * (size_t)m->dim * sizeof(float));
	float r = 1.0f / (float)m->dim;
	for (size_t i = 0; i < (size_t)m->in.m * (size_t)m->dim; i++)
		m->in.data[i] = (float)(llm_rng_uniform(rng) * 2.0 - 1.0) * r;
	m->out.m = m->osz;
	m->out.n = m->dim;
	m->out.data = llm_calloc((size_t)m->out.m * (size_t)m->dim, sizeof(float));
	if (m->loss == LLM_FASTTEXT_HS && llm_fasttext_build_tree(m, 1) != LLM_OK)
		return llm_fail(LLM_EINVAL, "fasttext: label counts make the tree too deep");
	return LLM_OK;
}

/* Train on a->threads threads, the calling one among them (fewer when threads fail to
 * start). */
static void run_threads(trainer *t, int threads)
{
	atomic_init(&t->tokens, 0);
	pthread_mutex_init(&t->lock, NULL);
	worker *w = llm_malloc((size_t)threads * sizeof *w);
	pthread_t *th = llm_malloc((size_t)threads * sizeof *th);
	int started = 0;
	for (int i = 0; i < threads; i++) {
		w[i].t = t;
		w[i].id = i;
		if (i > 0 && pthread_create(&th[i], NULL, train_thread, &w[i]) != 0)
			break;
		started = i + 1;
	}
	train_thread(&w[0]);
	for (int i = 1; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&t->lock);
	free(w);
	free(th);
}

/* Training-only tables are not part of the model. */
static void drop_training_tables(llm_fasttext *m)
{
	free(m->path_off);
	free(m->path);
	free(m->code);
	m->path_off = m->path = NULL;
	m->code = NULL;
}

int llm_fasttext_train(llm_fasttext **out, const llm_fasttext_train_args *a, const char *data,
                       size_t len, void (*progress)(double, double, void *), void *ctx)
{
	*out = NULL;
	if (!args_ok(a))
		return llm_fail(LLM_EINVAL, "fasttext: bad training arguments");
	llm_fasttext *m = new_model(a);
	size_t nlines;
	size_t *lines = example_starts(data, len, &nlines);
	int rc = build_dict(m, a, data, len);
	if (rc || nlines == 0) {
		free(lines);
		llm_fasttext_free(m);
		return rc ? rc : llm_fail(LLM_EFORMAT, "training data is empty");
	}
	llm_rng rng;
	llm_rng_seed(&rng, a->seed);
	size_t *offs;
	char *copy = shuffled_copy(data, len, lines, nlines, &rng, a->shuffle, &offs);
	free(lines);
	if ((rc = init_weights(m, &rng)) != LLM_OK) {
		free(copy);
		free(offs);
		llm_fasttext_free(m);
		return rc;
	}
	trainer t = { .m = m, .a = a, .data = copy, .lines = offs, .nlines = nlines,
	              .total = (int64_t)a->epoch * m->ntokens, .progress = progress, .ctx = ctx };
	run_threads(&t, a->threads);
	free(copy);
	free(offs);
	drop_training_tables(m);
	*out = m;
	return LLM_OK;
}
