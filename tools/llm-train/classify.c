/*
 * classify.c — llm-train classify: a score head on a pretrained decoder, fine-tuned on
 * labelled JSONL (model/seqcls.h), written as a LlamaForSequenceClassification directory
 * that llm-score loads (-m NAME=DIR) and transformers too.
 *
 * Examples: documents with their text (--field) and label (--label-field): a string, an
 * integer or a boolean names a class (single-label; the classes are --labels in its order,
 * else the labels seen, sorted); with --problem regression a number is the target. Each
 * document is cut to its first --seq-len tokens, as llm-score reads it. Training: AdamW on
 * every parameter (weight decay on matrices, the head's too), llm-train's schedule and
 * clipping, batches of --batch documents drawn in a fresh order each pass (--seed).
 *
 * Memory: the texts' tokens, the model with its gradients and moments (20 bytes a
 * parameter) and one batch's activations.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "core/io.h"
#include "core/json.h"
#include "llm-train.h"
#include "model/hf.h"
#include "model/optim.h"
#include "model/seqcls.h"
#include "tok/bpe.h"

typedef struct {
	int32_t *tok;
	int len;
	float y;
} example;

struct data {
	const struct classify_args *a;
	llm_bpe *bpe;
	llm_bpe_enc *enc;
	int max_len;
	example *ex;
	size_t n, cap;
	char **labels;  /* single-label: the classes */
	int nlabels;
	int fixed;      /* --labels: no class beyond them */
	char **raw;     /* single-label: each example's label text, until the classes are known */
	uint64_t skipped;
};

static void skip(struct data *d, const tool_lines *in, const char *why, const char *arg)
{
	char msg[200];
	snprintf(msg, sizeof msg, why, arg);
	if (d->a->co->strict)
		die("%s:%llu: %s", in->name, (unsigned long long)in->lineno, msg);
	llm_warn_at(in->name, in->lineno, "%s", msg);
	d->skipped++;
}

/* The label of a record as text (a class) into b, or its number into *x; 0 when none. */
static int read_label(const llm_json_rec *rec, const char *key, llm_buf *b, double *x, int num)
{
	const llm_json_val *v = llm_json_get(rec, key);
	int64_t i;
	llm_buf_reset(b);
	if (!v)
		return 0;
	if (num)
		return v->type == LLM_JSON_NUMBER && llm_json_num(v, x) == LLM_OK && isfinite(*x);
	if (v->type == LLM_JSON_STRING)
		llm_json_str(v, b);
	else if (v->type == LLM_JSON_TRUE || v->type == LLM_JSON_FALSE)
		llm_buf_adds(b, v->type == LLM_JSON_TRUE ? "true" : "false");
	else if (v->type == LLM_JSON_NUMBER && llm_json_i64(v, &i) == LLM_OK)
		llm_buf_addf(b, "%lld", (long long)i);
	return b->len > 0;
}

static int class_of(struct data *d, const char *name)
{
	for (int i = 0; i < d->nlabels; i++)
		if (strcmp(d->labels[i], name) == 0)
			return i;
	return -1;
}

static int read_file(struct data *d, const char *path)
{
	const struct classify_args *a = d->a;
	int num = a->problem == LLM_SEQCLS_REGRESSION;
	tool_lines in;
	if (tool_lines_open(&in, path, a->co, NULL) != LLM_OK) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	llm_buf text = LLM_BUF_INIT, lab = LLM_BUF_INIT;
	llm_ids ids;
	llm_ids_init(&ids);
	while (tool_lines_next(&in)) {
		double x = 0;
		const llm_json_val *t;
		if (in.too_long) {
			skip(d, &in, "line is longer than --max-line", NULL);
			continue;
		}
		if (llm_json_parse(&rec, in.line, in.len) != LLM_OK) {
			skip(d, &in, "bad JSON: %s", rec.err_msg);
			continue;
		}
		if (!(t = llm_json_get(&rec, a->co->field)) || t->type != LLM_JSON_STRING) {
			skip(d, &in, "no text in field '%s'", a->co->field);
			continue;
		}
		if (!read_label(&rec, a->label_field, &lab, &x, num)) {
			skip(d, &in, num ? "no number in field '%s'" : "no label in field '%s'",
			     a->label_field);
			continue;
		}
		if (!num && d->fixed && class_of(d, lab.p) < 0) {
			skip(d, &in, "label '%s' is not one of --labels", lab.p);
			continue;
		}
		llm_buf_reset(&text);
		llm_json_str(t, &text);
		ids.n = 0;
		if (llm_bpe_encode(d->enc, text.p ? text.p : "", text.len, LLM_BPE_SPECIAL_IGNORE,
		                   &ids) != LLM_OK || ids.n == 0) {
			skip(d, &in, "the text encodes to no token", NULL);
			continue;
		}
		if (d->n == d->cap) {
			d->cap = d->cap ? 2 * d->cap : 1024;
			d->ex = llm_realloc(d->ex, d->cap * sizeof *d->ex);
			d->raw = llm_realloc(d->raw, d->cap * sizeof *d->raw);
		}
		example *e = &d->ex[d->n];
		e->len = ids.n < (size_t)d->max_len ? (int)ids.n : d->max_len;
		e->tok = llm_malloc((size_t)e->len * sizeof *e->tok);
		for (int i = 0; i < e->len; i++)
			e->tok[i] = (int32_t)ids.v[i];
		e->y = (float)x;
		d->raw[d->n++] = num ? NULL : llm_strdup(lab.p);
		if (!num && !d->fixed && class_of(d, lab.p) < 0) {
			d->labels = llm_realloc(d->labels, (size_t)(d->nlabels + 1) * sizeof *d->labels);
			d->labels[d->nlabels++] = llm_strdup(lab.p);
		}
	}
	llm_ids_release(&ids);
	llm_buf_release(&text);
	llm_buf_release(&lab);
	llm_json_rec_release(&rec);
	if (tool_lines_close(&in) != LLM_OK) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	return 0;
}

static int by_name(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The classes: --labels, else the labels seen, sorted; each example's target its index. */
static void resolve_classes(struct data *d)
{
	if (d->a->problem == LLM_SEQCLS_REGRESSION)
		return;
	if (!d->fixed)
		qsort(d->labels, (size_t)d->nlabels, sizeof *d->labels, by_name);
	if (d->nlabels < 2)
		die("classify: %d class%s in the input: a classifier needs two", d->nlabels,
		    d->nlabels == 1 ? "" : "es");
	for (size_t i = 0; i < d->n; i++) {
		d->ex[i].y = (float)class_of(d, d->raw[i]);
		free(d->raw[i]);
	}
}

static void split_labels(struct data *d, const char *list)
{
	char *copy = llm_strdup(list), *save = NULL;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (class_of(d, t) >= 0)
			usage_error("--labels: '%s' given twice", t);
		d->labels = llm_realloc(d->labels, (size_t)(d->nlabels + 1) * sizeof *d->labels);
		d->labels[d->nlabels++] = llm_strdup(t);
	}
	free(copy);
	d->fixed = 1;
}

/* The model with its tokenizer, and the examples read with it. */
static llm_model *load(struct data *d, const llm_train_options *t, char **files, int nfiles,
                       char **tok_path)
{
	llm_hf_info info;
	llm_model *m;
	llm_hf_opts o = { .headless = 1 };
	if (llm_hf_open_with(d->a->init, &m, &info, &o) != LLM_OK)
		die("--init: %s", llm_last_error());
	if (!info.tokenizer)
		die("--init %s: no tokenizer.json with the model", d->a->init);
	if (llm_bpe_load(&d->bpe, info.tokenizer, NULL, NULL, NULL) != LLM_OK)
		die_lib();
	*tok_path = llm_strdup(info.tokenizer);
	llm_hf_info_release(&info);
	const llm_model_config *c = llm_model_get_config(m);
	if (llm_bpe_vocab_size(d->bpe) > (uint32_t)c->vocab_size)
		die("--init %s: the tokenizer has %u tokens, the model's vocabulary %d", d->a->init,
		    llm_bpe_vocab_size(d->bpe), c->vocab_size);
	d->max_len = t->seq > 0 && t->seq < c->max_position_embeddings ? t->seq
	                                                               : c->max_position_embeddings;
	d->enc = llm_bpe_enc_new(d->bpe);
	int failed = 0;
	if (nfiles == 0)
		failed |= read_file(d, "-");
	for (int i = 0; i < nfiles; i++)
		failed |= read_file(d, files[i]);
	if (failed)
		exit(1);
	if (d->n == 0)
		die("classify: no labelled document in the input");
	resolve_classes(d);
	return m;
}

/* One AdamW step over the decoder's tensors and the head, the gradient clipped. */
typedef struct {
	float *m, *v, *hm, *hv;
} moments;

static double step(llm_seqcls *sc, const llm_optim_config *oc, double lr, int64_t t, moments *mo)
{
	llm_model *m = llm_seqcls_model(sc);
	size_t nh = (size_t)llm_seqcls_nlabels(sc) * llm_model_get_config(m)->hidden_size;
	double ss = llm_sum_squares(llm_model_grads(m), llm_model_nparams(m)) +
	            llm_sum_squares(llm_seqcls_head_grad(sc), nh);
	double clip = llm_clip_factor(sqrt(ss), oc->clip);
	float *p = llm_model_params(m), *g = llm_model_grads(m);
	for (size_t i = 0; i < llm_model_ntensors(m); i++) {
		const llm_tensor *x = llm_model_tensor(m, i);
		llm_adamw_update(p + x->offset, g + x->offset, mo->m + x->offset, mo->v + x->offset,
		                 x->numel, clip, lr, x->decay ? oc->weight_decay : 0, oc, t);
	}
	llm_adamw_update(llm_seqcls_head(sc), llm_seqcls_head_grad(sc), mo->hm, mo->hv, nh, clip, lr,
	                 oc->weight_decay, oc, t);
	return sqrt(ss);
}

static int save(const llm_seqcls *sc, const llm_bpe *bpe, const char *tok_path, const char *dir)
{
	char *tok;
	size_t len;
	int rc = llm_read_file(tok_path, &tok, &len);
	if (rc)
		return rc;
	llm_buf tc = LLM_BUF_INIT;
	llm_hf_tokenizer_config(bpe, llm_model_get_config(llm_seqcls_model(sc))->max_position_embeddings,
	                        &tc);
	llm_ckpt_file extra[] = { { "tokenizer.json", tok, len },
		                  { "tokenizer_config.json", tc.p, tc.len } };
	rc = llm_seqcls_save(sc, dir, extra, 2);
	llm_buf_release(&tc);
	free(tok);
	return rc;
}

int train_classify(const llm_train_options *t, const struct classify_args *a, char **files,
                   int nfiles)
{
	struct data d = { .a = a };
	if (a->labels && a->problem == LLM_SEQCLS_REGRESSION)
		usage_error("classify: --labels names classes, and a regression has none");
	if (a->labels)
		split_labels(&d, a->labels);
	char *tok_path;
	llm_model *m = load(&d, t, files, nfiles, &tok_path);
	int nl = a->problem == LLM_SEQCLS_REGRESSION ? 1 : d.nlabels;
	/* the pad is the end-of-text token, as llmkit's tokenizer_config.json pads */
	llm_seqcls *sc = llm_seqcls_new(m, nl, a->problem == LLM_SEQCLS_REGRESSION ? NULL :
	                                (const char *const *)d.labels, a->problem,
	                                (int)llm_bpe_eos(d.bpe), t->seed);
	size_t np = llm_model_nparams(m), nh = (size_t)nl * llm_model_get_config(m)->hidden_size;
	moments mo = { llm_calloc(np, sizeof(float)), llm_calloc(np, sizeof(float)),
		       llm_calloc(nh, sizeof(float)), llm_calloc(nh, sizeof(float)) };
	llm_info("%zu documents (%llu skipped), %d %s; %lld steps of %d", d.n,
	         (unsigned long long)d.skipped, nl, nl == 1 ? "output" : "classes",
	         (long long)t->steps, t->batch);
	size_t *order = llm_malloc(d.n * sizeof *order), at = d.n;
	const int32_t **tok = llm_malloc((size_t)t->batch * sizeof *tok);
	int *len = llm_malloc((size_t)t->batch * sizeof *len);
	float *y = llm_malloc((size_t)t->batch * sizeof *y);
	llm_rng rng;
	llm_rng_seed2(&rng, t->seed, 0xc1a55);
	double first = NAN, last = 0, avg = 0;
	for (int64_t s = 0; s < t->steps; s++) {
		int B = 0;
		for (; B < t->batch; B++) {
			if (at == d.n) { /* a fresh order for every pass over the examples */
				for (size_t i = 0; i < d.n; i++)
					order[i] = i;
				for (size_t i = d.n; i > 1; i--) {
					size_t j = (size_t)(llm_rng_next(&rng) % i), x = order[i - 1];
					order[i - 1] = order[j];
					order[j] = x;
				}
				at = 0;
			}
			const example *e = &d.ex[order[at++]];
			tok[B] = e->tok;
			len[B] = e->len;
			y[B] = e->y;
		}
		llm_model_zero_grad(m);
		llm_seqcls_zero_grad(sc);
		double loss;
		if (llm_seqcls_train_batch(sc, tok, len, B, y, 1.0f / (float)B, &loss) != LLM_OK)
			die_lib();
		double norm = step(sc, &t->opt, llm_lr_at(&t->opt, s), s + 1, &mo);
		if (!isfinite(loss) || !isfinite(norm))
			die("classify: step %lld: the loss or the gradient is not finite (lower --lr)",
			    (long long)s + 1);
		first = isnan(first) ? loss : first;
		last = loss;
		avg = s ? 0.9 * avg + 0.1 * loss : loss;
		if ((s + 1) % 10 == 0 || s + 1 == t->steps)
			llm_debug("step %lld: loss %.4f (average %.4f), gradient norm %.3g",
			          (long long)s + 1, loss, avg, norm);
	}
	if (save(sc, d.bpe, tok_path, a->co->output) != LLM_OK)
		die_lib();
	llm_info("%lld steps: loss %.4f at the first, %.4f at the last (average %.4f) -> %s",
	         (long long)t->steps, first, last, avg, a->co->output);
	free(order);
	free(tok);
	free(len);
	free(y);
	free(mo.m);
	free(mo.v);
	free(mo.hm);
	free(mo.hv);
	for (size_t i = 0; i < d.n; i++)
		free(d.ex[i].tok);
	free(d.ex);
	free(d.raw);
	for (int i = 0; i < d.nlabels; i++)
		free(d.labels[i]);
	free(d.labels);
	free(tok_path);
	llm_bpe_enc_free(d.enc);
	llm_bpe_free(d.bpe);
	llm_seqcls_free(sc);
	return 0;
}
