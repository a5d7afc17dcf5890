/*
 * seqcls.c — LlamaForSequenceClassification on llmkit's decoder (see seqcls.h).
 */
#include "seqcls.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backend.h"
#include "core/err.h"
#include "core/hash.h"
#include "core/io.h"
#include "core/json.h"
#include "safetensors.h"

struct llm_seqcls {
	llm_model *m;
	int nlabels, problem, pad, C;
	int tie;        /* config.json's tie_word_embeddings, written back as read */
	char **labels;
	float *w, *gw;  /* the head and its gradient, [nlabels, C] */
	/* training scratch */
	int32_t *batch;
	float *dh;
	size_t batch_cap, dh_cap;
	float *z; /* 3 x nlabels: logits, their gradient, outputs */
};

static const char *const problem_names[] = { "single_label_classification",
	                                     "multi_label_classification", "regression" };

static void set_labels(llm_seqcls *sc, const char *const *labels)
{
	sc->labels = llm_calloc((size_t)sc->nlabels, sizeof *sc->labels);
	for (int i = 0; i < sc->nlabels; i++) {
		if (labels && labels[i]) {
			sc->labels[i] = llm_strdup(labels[i]);
		} else {
			char tmp[32];
			snprintf(tmp, sizeof tmp, "LABEL_%d", i);
			sc->labels[i] = llm_strdup(tmp);
		}
	}
}

llm_seqcls *llm_seqcls_new(llm_model *m, int num_labels, const char *const *labels, int problem,
                           int pad, uint64_t seed)
{
	llm_seqcls *sc = llm_calloc(1, sizeof *sc);
	const llm_model_config *c = llm_model_get_config(m);
	sc->m = m;
	sc->nlabels = num_labels;
	sc->problem = problem;
	sc->pad = pad;
	sc->C = c->hidden_size;
	sc->tie = c->tie_word_embeddings;
	set_labels(sc, labels);
	size_t n = (size_t)num_labels * sc->C;
	sc->w = llm_malloc(n * sizeof *sc->w);
	sc->gw = llm_calloc(n, sizeof *sc->gw);
	sc->z = llm_calloc(3 * (size_t)num_labels, sizeof *sc->z);
	llm_rng r;
	llm_rng_seed2(&r, seed, 0x5c07e);
	for (size_t i = 0; i < n; i++)
		sc->w[i] = (float)(llm_rng_normal(&r) * c->initializer_range);
	return sc;
}

void llm_seqcls_free(llm_seqcls *sc)
{
	if (!sc)
		return;
	llm_model_free(sc->m);
	for (int i = 0; i < sc->nlabels; i++)
		free(sc->labels[i]);
	free(sc->labels);
	free(sc->w);
	free(sc->gw);
	free(sc->batch);
	free(sc->dh);
	free(sc->z);
	free(sc);
}

llm_model *llm_seqcls_model(const llm_seqcls *sc) { return sc->m; }
int llm_seqcls_nlabels(const llm_seqcls *sc) { return sc->nlabels; }
const char *llm_seqcls_label(const llm_seqcls *sc, int i) { return sc->labels[i]; }
int llm_seqcls_problem(const llm_seqcls *sc) { return sc->problem; }
int llm_seqcls_pad(const llm_seqcls *sc) { return sc->pad; }
float *llm_seqcls_head(llm_seqcls *sc) { return sc->w; }
float *llm_seqcls_head_grad(llm_seqcls *sc) { return sc->gw; }

int llm_seqcls_label_id(const llm_seqcls *sc, const char *name)
{
	for (int i = 0; i < sc->nlabels; i++)
		if (strcmp(sc->labels[i], name) == 0)
			return i;
	return -1;
}

void llm_seqcls_zero_grad(llm_seqcls *sc)
{
	memset(sc->gw, 0, (size_t)sc->nlabels * sc->C * sizeof *sc->gw);
}

/* ---- config.json ---- */

/* The head's part of config.json: labels, pad, kind. */
typedef struct {
	int nlabels, problem, pad, is_seqcls;
	char **labels;
} head_cfg;

static void head_cfg_release(head_cfg *h)
{
	for (int i = 0; h->labels && i < h->nlabels; i++)
		free(h->labels[i]);
	free(h->labels);
}

/* id2label: {"0": "neg", "1": "pos"}; every index in 0..n-1 once. */
static int parse_id2label(head_cfg *h, const llm_json_val *v, const char *name)
{
	size_t it = 0, n = 0;
	llm_json_val k, x;
	while (llm_json_next(v, &it, &k, &x) == LLM_OK)
		n++;
	if (n == 0 || n > 100000)
		return llm_fail(LLM_EFORMAT, "%s: id2label has %zu labels", name, n);
	h->nlabels = (int)n;
	h->labels = llm_calloc(n, sizeof *h->labels);
	llm_buf b = LLM_BUF_INIT;
	int rc = LLM_OK;
	it = 0;
	while (rc == LLM_OK && llm_json_next(v, &it, &k, &x) == LLM_OK) {
		llm_buf_reset(&b);
		llm_json_str(&k, &b);
		char *end;
		errno = 0;
		long id = b.p ? strtol(b.p, &end, 10) : -1;
		if (!b.p || *end || errno || id < 0 || id >= (long)n || h->labels[id] ||
		    x.type != LLM_JSON_STRING) {
			rc = llm_fail(LLM_EFORMAT, "%s: id2label: '%s' is no label index 0..%zu with a "
			              "name", name, b.p ? b.p : "", n - 1);
			break;
		}
		llm_buf_reset(&b);
		llm_json_str(&x, &b);
		h->labels[id] = llm_strdup(b.p ? b.p : "");
	}
	llm_buf_release(&b);
	return rc;
}

static int parse_head(head_cfg *h, const char *json, size_t len, const char *name)
{
	memset(h, 0, sizeof *h);
	h->pad = -1;
	h->nlabels = 2;
	llm_json_rec r;
	llm_json_rec_init(&r);
	int rc = llm_json_parse(&r, json, len);
	if (rc) {
		rc = llm_fail(LLM_EFORMAT, "%s: bad JSON: %s", name, r.err_msg);
		goto out;
	}
	const llm_json_val *a = llm_json_get(&r, "architectures");
	size_t it = 0;
	llm_json_val k, x;
	while (a && a->type == LLM_JSON_ARRAY && llm_json_next(a, &it, &k, &x) == LLM_OK)
		h->is_seqcls |= x.type == LLM_JSON_STRING &&
		                llm_json_str_eq(&x, "LlamaForSequenceClassification");
	const llm_json_val *v = llm_json_get(&r, "id2label");
	int64_t n;
	if (v && v->type == LLM_JSON_OBJECT) {
		if ((rc = parse_id2label(h, v, name)))
			goto out;
	} else if ((v = llm_json_get(&r, "num_labels")) && v->type == LLM_JSON_NUMBER) {
		if (llm_json_i64(v, &n) != LLM_OK || n < 1 || n > 100000) {
			rc = llm_fail(LLM_EFORMAT, "%s: num_labels is not a count", name);
			goto out;
		}
		h->nlabels = (int)n;
	}
	if ((v = llm_json_get(&r, "pad_token_id")) && v->type == LLM_JSON_NUMBER &&
	    llm_json_i64(v, &n) == LLM_OK && n >= 0 && n < INT32_MAX)
		h->pad = (int)n;
	h->problem = h->nlabels == 1 ? LLM_SEQCLS_REGRESSION : LLM_SEQCLS_SINGLE;
	if ((v = llm_json_get(&r, "problem_type")) && v->type == LLM_JSON_STRING) {
		int p = -1;
		for (int i = 0; i < 3; i++)
			if (llm_json_str_eq(v, problem_names[i]))
				p = i;
		if (p < 0) {
			rc = llm_fail(LLM_EFORMAT, "%s: problem_type %.*s is none of transformers'",
			              name, (int)(v->len > 40 ? 40 : v->len), v->p);
			goto out;
		}
		h->problem = p;
	}
out:
	llm_json_rec_release(&r);
	return rc;
}

static int read_head(head_cfg *h, const char *dir)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/config.json", dir);
	char *text;
	size_t len;
	int rc = llm_read_file(p, &text, &len);
	if (rc)
		return rc;
	rc = parse_head(h, text, len, p);
	free(text);
	return rc;
}

int llm_seqcls_is(const char *dir)
{
	head_cfg h;
	int yes = read_head(&h, dir) == LLM_OK && h.is_seqcls;
	head_cfg_release(&h);
	return yes;
}

int llm_seqcls_open(llm_seqcls **out, const char *dir, llm_hf_info *info)
{
	*out = NULL;
	head_cfg h;
	int rc = read_head(&h, dir);
	if (rc == LLM_OK && !h.is_seqcls)
		rc = llm_fail(LLM_EFORMAT, "%s/config.json: not a sequence classifier (architectures "
		              "has no LlamaForSequenceClassification)", dir);
	llm_model_config c;
	if (rc == LLM_OK && (rc = llm_ckpt_read_config(dir, &c)) == LLM_OK &&
	    (c.hidden_size <= 0 || c.hidden_size > (1 << 20)))
		rc = llm_fail(LLM_EFORMAT, "%s/config.json: hidden_size %d", dir, c.hidden_size);
	if (rc) {
		head_cfg_release(&h);
		return rc;
	}
	float *w = llm_malloc((size_t)h.nlabels * c.hidden_size * sizeof *w);
	llm_hf_tensor head = { "score.weight", { h.nlabels, c.hidden_size }, w, 0 };
	llm_hf_opts o = { .headless = 1, .extra = &head, .nextra = 1 };
	llm_model *m;
	rc = llm_hf_open_with(dir, &m, info, &o);
	if (rc == LLM_OK && !head.found) {
		rc = llm_fail(LLM_EFORMAT, "%s: no tensor 'score.weight' (the classifier's head)", dir);
		llm_model_free(m);
		llm_hf_info_release(info);
	}
	if (rc) {
		free(w);
		head_cfg_release(&h);
		return rc;
	}
	llm_seqcls *sc = llm_seqcls_new(m, h.nlabels, (const char *const *)h.labels, h.problem,
	                                h.pad, 0);
	sc->tie = c.tie_word_embeddings;
	memcpy(sc->w, w, (size_t)h.nlabels * c.hidden_size * sizeof *w);
	free(w);
	head_cfg_release(&h);
	*out = sc;
	return LLM_OK;
}

/* config.json: the decoder's LlamaConfig with the head's fields and architecture. */
static void config_json(const llm_seqcls *sc, llm_buf *out)
{
	llm_model_config c = *llm_model_get_config(sc->m);
	c.tie_word_embeddings = sc->tie;
	llm_buf base = LLM_BUF_INIT;
	llm_model_config_json(&c, &base);
	/* model.h writes {"architectures": ["LlamaForCausalLM"], ...}: the head's fields go first */
	const char *arch = strstr(base.p, "\"LlamaForCausalLM\"");
	const char *rest = strchr(arch, '\n') + 1;
	llm_buf_adds(out, "{\n  \"architectures\": [\"LlamaForSequenceClassification\"],\n");
	llm_buf_adds(out, "  \"id2label\": {");
	for (int i = 0; i < sc->nlabels; i++) {
		llm_buf_addf(out, "%s\"%d\": ", i ? ", " : "", i);
		llm_json_put_str(out, sc->labels[i], strlen(sc->labels[i]));
	}
	llm_buf_adds(out, "},\n  \"label2id\": {");
	for (int i = 0; i < sc->nlabels; i++) {
		llm_buf_adds(out, i ? ", " : "");
		llm_json_put_str(out, sc->labels[i], strlen(sc->labels[i]));
		llm_buf_addf(out, ": %d", i);
	}
	llm_buf_addf(out, "},\n  \"num_labels\": %d,\n  \"problem_type\": \"%s\",\n", sc->nlabels,
	             problem_names[sc->problem]);
	if (sc->pad >= 0)
		llm_buf_addf(out, "  \"pad_token_id\": %d,\n", sc->pad);
	else
		llm_buf_adds(out, "  \"pad_token_id\": null,\n");
	llm_buf_adds(out, rest);
	llm_buf_release(&base);
}

int llm_seqcls_save(const llm_seqcls *sc, const char *dir, const llm_ckpt_file *extra,
                    size_t nextra)
{
	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		return llm_fail(LLM_EIO, "%s: %s", dir, strerror(errno));
	llm_buf p = LLM_BUF_INIT, cfg = LLM_BUF_INIT;
	config_json(sc, &cfg);
	llm_buf_addf(&p, "%s/config.json", dir);
	int rc = llm_write_file(p.p, cfg.p, cfg.len);
	llm_safetensors_writer *w = llm_safetensors_writer_new();
	llm_safetensors_writer_meta(w, "format", "pt");
	const float *params = llm_model_params(sc->m);
	for (size_t i = 0; i < llm_model_ntensors(sc->m); i++) {
		const llm_tensor *t = llm_model_tensor(sc->m, i);
		if (strcmp(t->name, "lm_head.weight") != 0)
			llm_safetensors_writer_add(w, t->name, LLM_ST_F32, t->ndim, t->shape,
			                           params + t->offset);
	}
	const int64_t shape[2] = { sc->nlabels, sc->C };
	llm_safetensors_writer_add(w, "score.weight", LLM_ST_F32, 2, shape, sc->w);
	llm_buf_reset(&p);
	llm_buf_addf(&p, "%s/model.safetensors", dir);
	if (rc == LLM_OK)
		rc = llm_safetensors_writer_write(w, p.p);
	llm_safetensors_writer_free(w);
	for (size_t i = 0; i < nextra && rc == LLM_OK; i++) {
		llm_buf_reset(&p);
		llm_buf_addf(&p, "%s/%s", dir, extra[i].name);
		rc = llm_write_file(p.p, extra[i].data, extra[i].len);
	}
	llm_buf_release(&p);
	llm_buf_release(&cfg);
	return rc;
}

/* ---- the head ---- */

int llm_seqcls_pool_index(const int32_t *tok, int len, int pad)
{
	if (pad < 0)
		return len - 1;
	/* transformers: argmax over positions of (position x [token != pad]), the first maximum */
	for (int i = len - 1; i > 0; i--)
		if (tok[i] != pad)
			return i;
	return 0;
}

void llm_seqcls_output(const llm_seqcls *sc, const float *logits, float *out)
{
	int n = sc->nlabels;
	if (sc->problem == LLM_SEQCLS_REGRESSION) {
		memcpy(out, logits, (size_t)n * sizeof *out);
	} else if (sc->problem == LLM_SEQCLS_MULTI) {
		for (int i = 0; i < n; i++)
			out[i] = (float)(1.0 / (1.0 + exp(-(double)logits[i])));
	} else {
		double mx = logits[0], sum = 0;
		for (int i = 1; i < n; i++)
			mx = logits[i] > mx ? logits[i] : mx;
		for (int i = 0; i < n; i++)
			sum += exp((double)logits[i] - mx);
		for (int i = 0; i < n; i++)
			out[i] = (float)(exp((double)logits[i] - mx) / sum);
	}
}

/* logits[nlabels] = W h; in double, as one dot product per label. */
static void head_fwd(const llm_seqcls *sc, const float *h, float *logits)
{
	for (int l = 0; l < sc->nlabels; l++) {
		const float *w = sc->w + (size_t)l * sc->C;
		double s = 0;
		for (int j = 0; j < sc->C; j++)
			s += (double)w[j] * h[j];
		logits[l] = (float)s;
	}
}

/* Documents idx[0..n) right-padded into tok[n * T] (T: the longest). */
static int pad_batch(const int32_t *const *tok, const int *len, const int *idx, int n, int pad,
                     int32_t *out)
{
	int T = 0;
	for (int b = 0; b < n; b++)
		T = len[idx[b]] > T ? len[idx[b]] : T;
	for (int b = 0; b < n; b++) {
		int l = len[idx[b]];
		memcpy(out + (size_t)b * T, tok[idx[b]], (size_t)l * sizeof *out);
		for (int t = l; t < T; t++)
			out[(size_t)b * T + t] = pad >= 0 ? pad : 0;
	}
	return T;
}

static int check_docs(const llm_model *m, const int *len, int n)
{
	int maxT = llm_model_get_config(m)->max_position_embeddings;
	for (int i = 0; i < n; i++)
		if (len[i] < 1 || len[i] > maxT)
			return llm_fail(LLM_EINVAL, "document %d: %d tokens, outside 1..%d", i, len[i],
			                maxT);
	return LLM_OK;
}

/* ---- inference ---- */

struct llm_seqcls_runner {
	const llm_seqcls *sc;
	llm_model *view;
	llm_backend *b;
	int *order;
	int32_t *batch;
	size_t order_cap, batch_cap;
};

int llm_seqcls_runner_new(llm_seqcls_runner **out, const llm_seqcls *sc)
{
	llm_seqcls_runner *r = llm_calloc(1, sizeof *r);
	r->sc = sc;
	r->view = llm_model_view(sc->m);
	llm_backend_options o;
	llm_backend_options_init(&o);
	int rc = llm_backend_open(&r->b, r->view, NULL, NULL, &o);
	if (rc) {
		llm_seqcls_runner_free(r);
		r = NULL;
	}
	*out = r;
	return rc;
}

void llm_seqcls_runner_free(llm_seqcls_runner *r)
{
	if (!r)
		return;
	llm_backend_free(r->b);
	llm_model_free(r->view);
	free(r->order);
	free(r->batch);
	free(r);
}

/* Tokens per forward of the batched inference: enough rows for the products to run at the
 * BLAS's speed, few enough that the activations of a batch stay small (model.h). */
#define RUN_TOKENS 2048
#define RUN_DOCS 64

/* order[0..n) stably sorted by len[order[i]] (a merge sort through tmp; qsort has no context
 * argument and a runner must stay reentrant). */
static void sort_by_len(int *order, int *tmp, const int *len, int n)
{
	for (int w = 1; w < n; w *= 2) {
		for (int lo = 0; lo < n; lo += 2 * w) {
			int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			int a = lo, b = mid, k = lo;
			while (a < mid || b < hi)
				tmp[k++] = b >= hi || (a < mid && len[order[a]] <= len[order[b]]) ? order[a++]
				                                                                 : order[b++];
		}
		memcpy(order, tmp, (size_t)n * sizeof *order);
	}
}

int llm_seqcls_logits(llm_seqcls_runner *r, const int32_t *const *tok, const int *len, int n,
                      float *logits)
{
	const llm_seqcls *sc = r->sc;
	int rc = check_docs(sc->m, len, n);
	if (rc || n == 0)
		return rc;
	if ((size_t)n > r->order_cap) {
		r->order = llm_realloc(r->order, 2 * (size_t)n * sizeof *r->order);
		r->order_cap = (size_t)n;
	}
	for (int i = 0; i < n; i++)
		r->order[i] = i;
	sort_by_len(r->order, r->order + n, len, n);
	for (int s = 0; s < n && rc == LLM_OK;) {
		int e = s + 1;
		/* similar lengths together; the batch's cost is its count times its longest */
		while (e < n && e - s < RUN_DOCS && (size_t)(e - s + 1) * len[r->order[e]] <= RUN_TOKENS)
			e++;
		int B = e - s, T = 0;
		for (int b = s; b < e; b++)
			T = len[r->order[b]] > T ? len[r->order[b]] : T;
		if ((size_t)B * T > r->batch_cap) {
			r->batch_cap = (size_t)B * T;
			r->batch = llm_realloc(r->batch, r->batch_cap * sizeof *r->batch);
		}
		T = pad_batch(tok, len, r->order + s, B, sc->pad, r->batch);
		const float *hidden;
		if ((rc = llm_backend_hidden(r->b, r->batch, B, T, &hidden)))
			break;
		for (int b = 0; b < B; b++) {
			int d = r->order[s + b];
			int at = llm_seqcls_pool_index(tok[d], len[d], sc->pad);
			head_fwd(sc, hidden + ((size_t)b * T + at) * sc->C, logits + (size_t)d * sc->nlabels);
		}
		s = e;
	}
	return rc;
}

/* ---- training ---- */

/* One document's loss and its gradient d[nlabels] with respect to the logits (HF's losses:
 * cross-entropy, binary cross-entropy with logits averaged over the labels, squared error). */
static double doc_loss(const llm_seqcls *sc, const float *z, const float *y, float *d, float *p)
{
	int n = sc->nlabels;
	double loss = 0;
	if (sc->problem == LLM_SEQCLS_SINGLE) {
		llm_seqcls_output(sc, z, p);
		int t = (int)y[0];
		loss = -log((double)p[t] > 1e-300 ? (double)p[t] : 1e-300);
		for (int i = 0; i < n; i++)
			d[i] = p[i] - (i == t);
	} else if (sc->problem == LLM_SEQCLS_MULTI) {
		for (int i = 0; i < n; i++) {
			double x = z[i], s = 1.0 / (1.0 + exp(-x));
			/* log(1 + e^-|x|) + max(x, 0) - x y, torch's stable form */
			loss += (x > 0 ? x : 0) - x * y[i] + log1p(exp(-fabs(x)));
			d[i] = (float)((s - y[i]) / n);
		}
		loss /= n;
	} else {
		for (int i = 0; i < n; i++) {
			double e = (double)z[i] - y[i];
			loss += e * e;
			d[i] = (float)(2 * e / n);
		}
		loss /= n;
	}
	return loss;
}

int llm_seqcls_train_batch(llm_seqcls *sc, const int32_t *const *tok, const int *len, int n,
                           const float *y, float scale, double *loss)
{
	int rc = check_docs(sc->m, len, n);
	if (rc || n == 0)
		return rc;
	int *idx = llm_malloc((size_t)n * sizeof *idx);
	for (int i = 0; i < n; i++)
		idx[i] = i;
	int T = 0;
	for (int i = 0; i < n; i++)
		T = len[i] > T ? len[i] : T;
	size_t N = (size_t)n * T, C = (size_t)sc->C;
	if (N > sc->batch_cap) {
		sc->batch = llm_realloc(sc->batch, N * sizeof *sc->batch);
		sc->batch_cap = N;
	}
	if (N * C > sc->dh_cap) {
		sc->dh = llm_realloc(sc->dh, N * C * sizeof *sc->dh);
		sc->dh_cap = N * C;
	}
	pad_batch(tok, len, idx, n, sc->pad, sc->batch);
	free(idx);
	if ((rc = llm_model_forward_hidden(sc->m, sc->batch, n, T)))
		return rc;
	const float *hidden = llm_model_hidden(sc->m);
	memset(sc->dh, 0, N * C * sizeof *sc->dh);
	int ny = sc->problem == LLM_SEQCLS_SINGLE ? 1 : sc->nlabels;
	float *z = sc->z, *d = sc->z + sc->nlabels;
	double sum = 0;
	for (int b = 0; b < n; b++) {
		size_t row = (size_t)b * T + (size_t)llm_seqcls_pool_index(tok[b], len[b], sc->pad);
		const float *h = hidden + row * C;
		if (sc->problem == LLM_SEQCLS_SINGLE && (y[b] < 0 || y[b] >= sc->nlabels))
			return llm_fail(LLM_EINVAL, "document %d: label %g outside 0..%d", b, y[b],
			                sc->nlabels - 1);
		head_fwd(sc, h, z);
		sum += doc_loss(sc, z, y + (size_t)b * ny, d, d + sc->nlabels);
		/* z = W h: dW += d h^T, dh = W^T d */
		float *dh = sc->dh + row * C;
		for (int l = 0; l < sc->nlabels; l++) {
			float g = d[l] * scale;
			float *gw = sc->gw + (size_t)l * C;
			const float *w = sc->w + (size_t)l * C;
			for (size_t j = 0; j < C; j++) {
				gw[j] += g * h[j];
				dh[j] += g * w[j];
			}
		}
	}
	llm_model_backward_hidden(sc->m, sc->dh);
	if (loss)
		*loss = sum / n;
	return LLM_OK;
}
