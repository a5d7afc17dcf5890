/*
 * eval.c — loss per domain, multiple-choice scoring and sampling over the model of model.h.
 *
 * Per-token losses are computed here from the logits (log-softmax in double) rather than taken
 * from the training forward, which returns only their mean: bits per byte and the per-domain
 * sums need each token's loss. The difference from the forward's fp32 cross-entropy is below
 * fp32 rounding of the mean.
 */
#include "eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"
#include "core/utf8.h"

void llm_eval_sums_add(llm_eval_sums *to, const llm_eval_sums *s)
{
	to->docs += s->docs;
	to->tokens += s->tokens;
	to->nats += s->nats;
	to->text_tokens += s->text_tokens;
	to->text_nats += s->text_nats;
	to->bytes += s->bytes;
	to->words += s->words;
}

double llm_eval_loss(const llm_eval_sums *s)
{
	return s->tokens ? s->nats / (double)s->tokens : NAN;
}

double llm_eval_ppl(const llm_eval_sums *s)
{
	return exp(llm_eval_loss(s));
}

double llm_eval_bits_per_byte(const llm_eval_sums *s)
{
	return s->bytes ? s->text_nats / M_LN2 / (double)s->bytes : NAN;
}

double llm_eval_word_ppl(const llm_eval_sums *s)
{
	return s->words ? exp(s->text_nats / (double)s->words) : NAN;
}

double llm_eval_byte_ppl(const llm_eval_sums *s)
{
	return s->bytes ? exp(s->text_nats / (double)s->bytes) : NAN;
}

/* Python's str.isspace(), which is what re's \s matches in a str pattern. */
static int py_space(uint32_t c)
{
	return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 ||
	       c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 ||
	       c == 0x202f || c == 0x205f || c == 0x3000;
}

size_t llm_eval_count_words(const char *text, size_t n)
{
	/* len(re.split(r"\s+", text)): one more than the runs of white space, whether or not
	 * they are at an end ("" is one word, " a " three). */
	size_t words = 1, i = 0;
	int in_space = 0;
	while (i < n) {
		uint32_t c;
		i += llm_utf8_decode(text + i, n - i, &c);
		int sp = py_space(c);
		words += sp && !in_space;
		in_space = sp;
	}
	return words;
}

/* -ln softmax(row)[t]: the terms in fp32 (expf; each is in (0, 1] after the shift by the
 * max), their sum and the logarithm in double. */
static double nll(const float *row, int V, int t)
{
	float mx = row[0];
	for (int i = 1; i < V; i++)
		mx = row[i] > mx ? row[i] : mx;
	double s = 0;
	for (int i = 0; i < V; i++)
		s += expf(row[i] - mx);
	return (double)mx + log(s) - (double)row[t];
}

/* ---- loss ---- */

typedef struct {
	char *name;
	llm_eval_sums sums;
	int32_t *buf; /* the window being filled: T+1 tokens */
	int len;
	int started;
} domain;

struct llm_evaluator {
	llm_model *m;
	int V, T, B;
	int32_t *tokbytes; /* bytes each id spells, -1 for special tokens and ids without one */
	int64_t start_id;
	domain *dom;
	size_t ndom;
	int32_t *x, *y;    /* pending windows [B, T] */
	size_t *wdom;      /* their domains */
	int *wlen;         /* their real lengths (the rest is padding) */
	uint8_t *wroll;    /* 1: a rolling window, whose document counted its own bytes */
	int32_t *roll;     /* a rolling window being built: inputs [T], targets [T] */
	int nwin;
	llm_token_loss_fn score; /* forwards there when set */
	void *score_ctx;
	float *losses;           /* [B, T] per-token losses from it */
};

llm_evaluator *llm_evaluator_new(llm_model *m, int seq_len, int batch, const llm_bpe *bpe,
                                 int64_t start_id)
{
	llm_evaluator *ev = llm_calloc(1, sizeof *ev);
	ev->m = m;
	ev->V = llm_model_get_config(m)->vocab_size;
	ev->T = seq_len;
	ev->B = batch;
	ev->start_id = start_id;
	if (bpe) {
		ev->tokbytes = llm_malloc((size_t)ev->V * sizeof *ev->tokbytes);
		uint32_t bv = llm_bpe_vocab_size(bpe);
		for (int i = 0; i < ev->V; i++) {
			size_t len;
			const char *p = (uint32_t)i < bv ? llm_bpe_token(bpe, (uint32_t)i, &len) : NULL;
			ev->tokbytes[i] = p && !llm_bpe_is_special(bpe, (uint32_t)i) ? (int32_t)len : -1;
		}
	}
	size_t bt = (size_t)batch * seq_len;
	ev->x = llm_malloc(2 * bt * sizeof *ev->x);
	ev->y = ev->x + bt;
	ev->wdom = llm_malloc((size_t)batch * sizeof *ev->wdom);
	ev->wlen = llm_malloc((size_t)batch * sizeof *ev->wlen);
	ev->wroll = llm_malloc((size_t)batch);
	return ev;
}

void llm_evaluator_free(llm_evaluator *ev)
{
	if (!ev)
		return;
	for (size_t i = 0; i < ev->ndom; i++) {
		free(ev->dom[i].name);
		free(ev->dom[i].buf);
	}
	free(ev->dom);
	free(ev->tokbytes);
	free(ev->x);
	free(ev->wdom);
	free(ev->wlen);
	free(ev->wroll);
	free(ev->roll);
	free(ev->losses);
	free(ev);
}

void llm_evaluator_set_scorer(llm_evaluator *ev, llm_token_loss_fn fn, void *ctx)
{
	ev->score = fn;
	ev->score_ctx = ctx;
	if (fn && !ev->losses)
		ev->losses = llm_malloc((size_t)ev->B * ev->T * sizeof *ev->losses);
}

static size_t domain_index(llm_evaluator *ev, const char *name)
{
	if (!name || !*name)
		name = "unknown";
	for (size_t i = 0; i < ev->ndom; i++)
		if (strcmp(ev->dom[i].name, name) == 0)
			return i;
	ev->dom = llm_realloc(ev->dom, (ev->ndom + 1) * sizeof *ev->dom);
	domain *d = &ev->dom[ev->ndom];
	memset(d, 0, sizeof *d);
	d->name = llm_strdup(name);
	d->buf = llm_malloc(((size_t)ev->T + 1) * sizeof *d->buf);
	return ev->ndom++;
}

static int run_batch(llm_evaluator *ev)
{
	if (!ev->nwin)
		return LLM_OK;
	/* The batch is as long as its longest window: short documents in rolling windows would
	 * otherwise cost a whole window each. Causal attention keeps the padding out of the
	 * logits of real tokens, whatever its length. Rows move towards the front, in order. */
	int T = 0, V = ev->V;
	for (int w = 0; w < ev->nwin; w++)
		T = ev->wlen[w] > T ? ev->wlen[w] : T;
	if (T < ev->T)
		for (int w = 1; w < ev->nwin; w++) {
			memmove(ev->x + (size_t)w * T, ev->x + (size_t)w * ev->T, (size_t)T * sizeof *ev->x);
			memmove(ev->y + (size_t)w * T, ev->y + (size_t)w * ev->T, (size_t)T * sizeof *ev->y);
		}
	const float *logits = NULL;
	int rc = ev->score ? ev->score(ev->score_ctx, ev->x, ev->y, ev->nwin, T, ev->losses)
	                   : llm_model_forward(ev->m, ev->x, NULL, ev->nwin, T, NULL, NULL);
	int nw = ev->nwin;
	ev->nwin = 0; /* the windows are spent, whether or not the forward succeeded */
	if (rc)
		return rc;
	if (!ev->score)
		logits = llm_model_logits(ev->m);
	for (int w = 0; w < nw; w++) {
		llm_eval_sums *s = &ev->dom[ev->wdom[w]].sums;
		for (int i = 0; i < T; i++) {
			size_t r = (size_t)w * T + i;
			int32_t t = ev->y[r];
			if (t < 0)
				continue;
			double l = ev->score ? (double)ev->losses[r] : nll(logits + r * V, V, t);
			s->tokens++;
			s->nats += l;
			if (ev->wroll[w]) {
				/* every token of a rolling document spells its text; it counted the bytes */
				s->text_tokens++;
				s->text_nats += l;
			} else if (ev->tokbytes && ev->tokbytes[t] >= 0) {
				s->text_tokens++;
				s->text_nats += l;
				s->bytes += (uint64_t)ev->tokbytes[t];
			}
		}
	}
	return LLM_OK;
}

/* Queue window inputs[T'], targets[T'] (T' <= T; the rest padded) of domain d. */
static int queue(llm_evaluator *ev, size_t d, const int32_t *in, const int32_t *tg, int n,
                 int roll)
{
	size_t off = (size_t)ev->nwin * ev->T;
	memcpy(ev->x + off, in, (size_t)n * sizeof *in);
	memcpy(ev->y + off, tg, (size_t)n * sizeof *tg);
	for (int i = n; i < ev->T; i++) {
		/* Padding after the real tokens: causal attention keeps it out of their logits. */
		ev->x[off + i] = 0;
		ev->y[off + i] = -1;
	}
	ev->wdom[ev->nwin] = d;
	ev->wlen[ev->nwin] = n;
	ev->wroll[ev->nwin++] = (uint8_t)roll;
	return ev->nwin == ev->B ? run_batch(ev) : LLM_OK;
}

static int check_ids(const llm_evaluator *ev, const void *ids, int is32, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int64_t t = is32 ? ((const int32_t *)ids)[i] : (int64_t)((const uint32_t *)ids)[i];
		if (t < 0 || t >= ev->V)
			return llm_fail(LLM_EINVAL, "token %lld at position %zu is outside the model's "
			                "vocabulary of %d", (long long)t, i, ev->V);
	}
	return LLM_OK;
}

int llm_eval_doc(llm_evaluator *ev, const char *domain_name, const uint32_t *tokens, size_t n)
{
	int rc = check_ids(ev, tokens, 0, n);
	if (rc)
		return rc;
	size_t di = domain_index(ev, domain_name);
	domain *d = &ev->dom[di];
	d->sums.docs++;
	if (!d->started) {
		d->started = 1;
		if (ev->start_id >= 0 && ev->start_id < ev->V)
			d->buf[d->len++] = (int32_t)ev->start_id;
	}
	for (size_t i = 0; i < n; i++) {
		d->buf[d->len++] = (int32_t)tokens[i];
		if (d->len == ev->T + 1) {
			if ((rc = queue(ev, di, d->buf, d->buf + 1, ev->T, 0)))
				return rc;
			d = &ev->dom[di];
			d->buf[0] = d->buf[ev->T];
			d->len = 1;
		}
	}
	return LLM_OK;
}

/*
 * lm-evaluation-harness's loglikelihood_rolling with context_len 1 (get_rolling_token_windows
 * and make_disjoint_window): the first window is the prefix token and the first T-1 tokens,
 * predicting the first T; each next one predicts the next T tokens (or what is left) from
 * the T tokens before each of them, so the last, short one still sees a whole window of
 * context. Every token is predicted once; the document alone, no end-of-text.
 */
int llm_eval_doc_rolling(llm_evaluator *ev, const char *domain_name, const char *text,
                         size_t len, const uint32_t *tokens, size_t n)
{
	if (ev->start_id < 0 || ev->start_id >= ev->V)
		return llm_fail(LLM_EINVAL, "rolling windows need a prefix token in the vocabulary");
	int rc = check_ids(ev, tokens, 0, n);
	if (rc)
		return rc;
	size_t di = domain_index(ev, domain_name);
	llm_eval_sums *s = &ev->dom[di].sums;
	s->docs++;
	s->bytes += len;
	s->words += llm_eval_count_words(text, len);
	size_t T = (size_t)ev->T;
	if (!ev->roll)
		ev->roll = llm_malloc(2 * T * sizeof *ev->roll);
	int32_t *x = ev->roll, *y = x + T; /* queue copies the window out */
	for (size_t done = 0; done < n;) {
		size_t npred = n - done < T ? n - done : T, end = done + npred, w;
		if (done == 0) {
			x[0] = (int32_t)ev->start_id;
			for (size_t i = 1; i < npred; i++)
				x[i] = (int32_t)tokens[i - 1];
			for (size_t i = 0; i < npred; i++)
				y[i] = (int32_t)tokens[i];
			w = npred;
		} else {
			/* tokens[end-T-1 .. end-1) predict tokens[end-T .. end); the first T-npred are
			 * context only */
			for (size_t i = 0; i < T; i++) {
				x[i] = (int32_t)tokens[end - T - 1 + i];
				y[i] = i < T - npred ? -1 : (int32_t)tokens[end - T + i];
			}
			w = T;
		}
		if ((rc = queue(ev, di, x, y, (int)w, 1)))
			return rc;
		done = end;
	}
	return LLM_OK;
}

int llm_eval_window(llm_evaluator *ev, const char *domain_name, const int32_t *inputs,
                    const int32_t *targets, int T)
{
	if (T <= 0 || T > ev->T)
		return llm_fail(LLM_EINVAL, "window of %d tokens (at most %d)", T, ev->T);
	int rc = check_ids(ev, inputs, 1, (size_t)T);
	for (int i = 0; !rc && i < T; i++)
		if (targets[i] >= ev->V)
			rc = llm_fail(LLM_EINVAL, "target %d outside the vocabulary of %d", targets[i],
			              ev->V);
	if (rc)
		return rc;
	return queue(ev, domain_index(ev, domain_name), inputs, targets, T, 0);
}

int llm_eval_flush(llm_evaluator *ev)
{
	int rc;
	for (size_t i = 0; i < ev->ndom; i++) {
		domain *d = &ev->dom[i];
		if (d->len > 1 && (rc = queue(ev, i, d->buf, d->buf + 1, d->len - 1, 0)))
			return rc;
		d->len = 0;
		d->started = 0;
	}
	return run_batch(ev);
}

size_t llm_eval_ndomains(const llm_evaluator *ev)
{
	return ev->ndom;
}

const char *llm_eval_domain_name(const llm_evaluator *ev, size_t i)
{
	return ev->dom[i].name;
}

const llm_eval_sums *llm_eval_domain_sums(const llm_evaluator *ev, size_t i)
{
	return &ev->dom[i].sums;
}

void llm_eval_total(const llm_evaluator *ev, llm_eval_sums *out)
{
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < ev->ndom; i++)
		llm_eval_sums_add(out, &ev->dom[i].sums);
}

/* ---- multiple choice ---- */

void llm_choice_item_release(llm_choice_item *it)
{
	free(it->context);
	for (size_t i = 0; i < it->nchoices; i++)
		free(it->choices[i]);
	free(it->choices);
	free(it->domain);
	free(it->id);
	memset(it, 0, sizeof *it);
}

static char *json_string(const llm_json_val *v)
{
	llm_buf b;
	llm_buf_init(&b);
	llm_json_str(v, &b);
	llm_buf_addc(&b, 0);
	return llm_buf_detach(&b, NULL);
}

int llm_choice_parse(llm_choice_item *it, const char *line, size_t n)
{
	memset(it, 0, sizeof *it);
	llm_json_rec r;
	llm_json_rec_init(&r);
	int rc = llm_json_parse(&r, line, n);
	if (rc) {
		rc = llm_fail(LLM_EFORMAT, "byte %zu: %s", r.err_pos, r.err_msg);
		goto out;
	}
	const llm_json_val *ctx = llm_json_get(&r, "context"), *ch = llm_json_get(&r, "choices");
	const llm_json_val *dom = llm_json_get(&r, "domain"), *id = llm_json_get(&r, "id");
	int64_t gold;
	if (!ctx || ctx->type != LLM_JSON_STRING) {
		rc = llm_fail(LLM_EFORMAT, "'context' is not a string");
		goto out;
	}
	if (!ch || ch->type != LLM_JSON_ARRAY) {
		rc = llm_fail(LLM_EFORMAT, "'choices' is not an array of strings");
		goto out;
	}
	if (llm_json_get_i64(&r, "gold", &gold) != LLM_OK) {
		rc = llm_fail(LLM_EFORMAT, "'gold' is not an integer");
		goto out;
	}
	it->context = json_string(ctx);
	size_t iter = 0;
	llm_json_val k, v;
	while (llm_json_next(ch, &iter, &k, &v) == LLM_OK) {
		if (v.type != LLM_JSON_STRING) {
			rc = llm_fail(LLM_EFORMAT, "choice %zu is not a string", it->nchoices);
			goto out;
		}
		it->choices = llm_realloc(it->choices, (it->nchoices + 1) * sizeof *it->choices);
		it->choices[it->nchoices++] = json_string(&v);
	}
	if (it->nchoices < 2) {
		rc = llm_fail(LLM_EFORMAT, "%zu choices (at least 2)", it->nchoices);
		goto out;
	}
	if (gold < 0 || (uint64_t)gold >= it->nchoices) {
		rc = llm_fail(LLM_EFORMAT, "'gold' %lld is not a choice index (0..%zu)", (long long)gold,
		              it->nchoices - 1);
		goto out;
	}
	it->gold = (size_t)gold;
	it->domain = dom && dom->type == LLM_JSON_STRING ? json_string(dom) : llm_strdup("unknown");
	if (id && id->type == LLM_JSON_STRING)
		it->id = json_string(id);
	else if (id && id->type == LLM_JSON_NUMBER)
		it->id = llm_strndup(id->p, id->len);
out:
	llm_json_rec_release(&r);
	return rc;
}

struct llm_chooser {
	llm_model *m;
	llm_bpe_enc *enc;
	int64_t prefix;
	char *delim;
	llm_ids ctx, whole;
	llm_buf text;
	int32_t *x, *y; /* [nchoices, T] inputs and targets (-1 outside the continuation) */
	size_t cap;
	llm_token_loss_fn score; /* forwards there when set */
	void *score_ctx;
	float *losses;           /* [nchoices, T] per-token losses from it */
	size_t *ntok;            /* [nchoices] continuation tokens of the last item */
	size_t ntok_cap;
};

llm_chooser *llm_chooser_new(llm_model *m, const llm_bpe *bpe, int64_t prefix_id,
                             const char *delimiter)
{
	llm_chooser *c = llm_calloc(1, sizeof *c);
	c->m = m;
	c->enc = llm_bpe_enc_new(bpe);
	c->prefix = prefix_id;
	c->delim = llm_strdup(delimiter ? delimiter : "");
	llm_ids_init(&c->ctx);
	llm_ids_init(&c->whole);
	llm_buf_init(&c->text);
	return c;
}

void llm_chooser_free(llm_chooser *c)
{
	if (!c)
		return;
	llm_bpe_enc_free(c->enc);
	free(c->delim);
	llm_ids_release(&c->ctx);
	llm_ids_release(&c->whole);
	llm_buf_release(&c->text);
	free(c->x);
	free(c->losses);
	free(c->ntok);
	free(c);
}

void llm_chooser_set_scorer(llm_chooser *c, llm_token_loss_fn fn, void *ctx)
{
	c->score = fn;
	c->score_ctx = ctx;
}

static int is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

/* Characters (code points) of a UTF-8 string, as Python's len(); a stray byte counts one. */
static size_t chars(const char *s)
{
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		n += (*p & 0xc0) != 0x80;
	return n;
}

/* Encode context + delimiter + choice i into c->whole; *nctx = tokens that are the context's. */
static int encode_choice(llm_chooser *c, const llm_choice_item *it, size_t i, size_t *nctx)
{
	llm_buf_reset(&c->text);
	llm_buf_adds(&c->text, it->context);
	llm_buf_adds(&c->text, c->delim);
	llm_buf_adds(&c->text, it->choices[i]);
	c->whole.n = 0;
	int rc = llm_bpe_encode(c->enc, c->text.p, c->text.len, LLM_BPE_SPECIAL_IGNORE, &c->whole);
	if (rc)
		return rc;
	*nctx = c->ctx.n < c->whole.n ? c->ctx.n : c->whole.n;
	if (*nctx == c->whole.n)
		return llm_fail(LLM_EINVAL, "choice %zu encodes to no token", i);
	if (*nctx == 0 && c->prefix < 0)
		return llm_fail(LLM_EINVAL, "an empty context needs a prefix token");
	return LLM_OK;
}

int llm_chooser_score(llm_chooser *c, const llm_choice_item *it, double *ll, size_t *pred,
                      size_t *pred_norm)
{
	const llm_model_config *cfg = llm_model_get_config(c->m);
	int V = cfg->vocab_size, maxT = cfg->max_position_embeddings;
	size_t nch = it->nchoices, npre = c->prefix >= 0, nctx;
	/* Trailing whitespace of the context belongs to the continuation (lm-evaluation-harness's
	 * _encode_pair), so that " Paris" stays one token rather than " " + "Paris". */
	size_t cut = strlen(it->context);
	while (cut > 0 && is_space(it->context[cut - 1]))
		cut--;
	c->ctx.n = 0;
	int rc = llm_bpe_encode(c->enc, it->context, cut, LLM_BPE_SPECIAL_IGNORE, &c->ctx);
	if (rc)
		return rc;
	/* The sequence is S = prefix + whole; the inputs are S without its last token, cut from
	 * the left to the model's length; every choice pads to the longest. */
	int T = 0;
	for (size_t i = 0; i < nch; i++) {
		if ((rc = encode_choice(c, it, i, &nctx)))
			return rc;
		size_t n = npre + c->whole.n - 1;
		n = n > (size_t)maxT ? (size_t)maxT : n;
		T = (int)n > T ? (int)n : T;
	}
	if (nch * (size_t)T > c->cap) {
		c->cap = nch * (size_t)T;
		free(c->x);
		free(c->losses);
		c->x = llm_malloc(2 * c->cap * sizeof *c->x);
		c->losses = llm_malloc(c->cap * sizeof *c->losses);
	}
	c->y = c->x + nch * (size_t)T;
	for (size_t i = 0; i < nch; i++) {
		if ((rc = encode_choice(c, it, i, &nctx)))
			return rc;
		size_t total = npre + c->whole.n - 1, drop = total > (size_t)maxT ? total - maxT : 0;
		if (c->whole.n - nctx > (size_t)maxT)
			return llm_fail(LLM_EINVAL, "choice %zu is longer than the model's %d positions", i,
			                maxT);
		int32_t *x = c->x + i * (size_t)T, *y = c->y + i * (size_t)T;
		for (size_t p = 0; p < (size_t)T; p++) {
			size_t s = drop + p; /* index into S of input p; its target is S[s + 1] */
			if (s >= total) {
				x[p] = 0;
				y[p] = -1;
				continue;
			}
			int64_t in = npre && s == 0 ? c->prefix : (int64_t)c->whole.v[s - npre];
			uint32_t tg = c->whole.v[s + 1 - npre];
			if (in >= V || tg >= (uint32_t)V)
				return llm_fail(LLM_EINVAL, "token %lld is outside the model's vocabulary of %d",
				                in >= V ? (long long)in : (long long)tg, V);
			x[p] = (int32_t)in;
			y[p] = s + 1 >= npre + nctx ? (int32_t)tg : -1;
		}
	}
	if ((rc = c->score ? c->score(c->score_ctx, c->x, c->y, (int)nch, T, c->losses)
	                   : llm_model_forward(c->m, c->x, NULL, (int)nch, T, NULL, NULL)))
		return rc;
	const float *logits = c->score ? NULL : llm_model_logits(c->m);
	double best = -INFINITY, best_norm = -INFINITY;
	*pred = *pred_norm = 0;
	if (nch > c->ntok_cap) {
		c->ntok_cap = nch;
		c->ntok = llm_realloc(c->ntok, nch * sizeof *c->ntok);
	}
	for (size_t i = 0; i < nch; i++) {
		double s = 0;
		c->ntok[i] = 0;
		for (size_t p = 0; p < (size_t)T; p++) {
			size_t r = i * (size_t)T + p;
			if (c->y[r] >= 0) {
				s -= c->score ? (double)c->losses[r] : nll(logits + r * V, V, c->y[r]);
				c->ntok[i]++;
			}
		}
		ll[i] = s;
		size_t len = chars(it->choices[i]);
		double norm = s / (double)(len ? len : 1);
		if (s > best) {
			best = s;
			*pred = i;
		}
		if (norm > best_norm) {
			best_norm = norm;
			*pred_norm = i;
		}
	}
	return LLM_OK;
}

const size_t *llm_chooser_ntokens(const llm_chooser *c)
{
	return c->ntok;
}

double llm_eval_acc_stderr(uint64_t hits, uint64_t n)
{
	if (n < 2)
		return NAN;
	double p = (double)hits / (double)n;
	return sqrt(p * (1 - p) / (double)(n - 1));
}

static void put_str(llm_buf *b, const char *s)
{
	llm_json_put_str(b, s, strlen(s));
}

void llm_choice_sample_json(llm_buf *b, const llm_choice_item *it, uint64_t doc_id,
                            const double *ll, const size_t *ntok, size_t pred, size_t pred_norm)
{
	llm_buf_addf(b, "{\"doc_id\": %llu", (unsigned long long)doc_id);
	if (it->id) {
		llm_buf_adds(b, ", \"id\": ");
		put_str(b, it->id);
	}
	llm_buf_adds(b, ", \"domain\": ");
	put_str(b, it->domain);
	llm_buf_adds(b, ", \"context\": ");
	put_str(b, it->context);
	llm_buf_adds(b, ", \"choices\": [");
	for (size_t i = 0; i < it->nchoices; i++) {
		llm_buf_adds(b, i ? ", " : "");
		put_str(b, it->choices[i]);
	}
	llm_buf_adds(b, "], \"loglikelihoods\": [");
	for (size_t i = 0; i < it->nchoices; i++) {
		llm_buf_adds(b, i ? ", " : "");
		llm_json_put_f64(b, ll[i]);
	}
	llm_buf_adds(b, "], \"tokens\": [");
	for (size_t i = 0; i < it->nchoices; i++)
		llm_buf_addf(b, i ? ", %zu" : "%zu", ntok[i]);
	llm_buf_adds(b, "], \"chars\": [");
	for (size_t i = 0; i < it->nchoices; i++)
		llm_buf_addf(b, i ? ", %zu" : "%zu", chars(it->choices[i]));
	llm_buf_addf(b, "], \"pred\": %zu, \"pred_norm\": %zu, \"gold\": %zu, \"acc\": %d, "
	             "\"acc_norm\": %d}", pred, pred_norm, it->gold, pred == it->gold,
	             pred_norm == it->gold);
}

/* ---- sampling and generation ---- */

struct llm_sampler {
	llm_sampling s;
	int V;
	llm_rng rng;
	struct cand {
		float logit;
		int32_t id;
	} *c;
	double *p;
};

llm_sampler *llm_sampler_new(int vocab, const llm_sampling *s, uint64_t seed)
{
	llm_sampler *sm = llm_calloc(1, sizeof *sm);
	sm->s = *s;
	sm->V = vocab;
	llm_rng_seed(&sm->rng, seed);
	sm->c = llm_malloc((size_t)vocab * sizeof *sm->c);
	sm->p = llm_malloc((size_t)vocab * sizeof *sm->p);
	return sm;
}

void llm_sampler_free(llm_sampler *s)
{
	if (!s)
		return;
	free(s->c);
	free(s->p);
	free(s);
}

/* Larger logit first, then smaller id: a total order, so the sorted result is unique. */
static int by_logit(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->logit != y->logit)
		return x->logit > y->logit ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

int32_t llm_sampler_next(llm_sampler *sm, const float *logits)
{
	int V = sm->V;
	if (sm->s.temperature <= 0) {
		int32_t best = 0;
		for (int i = 1; i < V; i++)
			if (logits[i] > logits[best])
				best = i;
		return best;
	}
	for (int i = 0; i < V; i++)
		sm->c[i] = (struct cand){ logits[i], i };
	qsort(sm->c, (size_t)V, sizeof *sm->c, by_logit);
	int n = sm->s.top_k > 0 && sm->s.top_k < V ? sm->s.top_k : V;
	double t = sm->s.temperature, mx = sm->c[0].logit / t, z = 0;
	for (int i = 0; i < n; i++) {
		sm->p[i] = exp(sm->c[i].logit / t - mx);
		z += sm->p[i];
	}
	if (sm->s.top_p < 1) {
		/* transformers' TopPLogitsWarper keeps the tokens whose cumulative probability,
		 * before adding their own, is below p: the smallest prefix reaching p. */
		double cum = 0;
		int keep = n;
		for (int i = 0; i < n; i++) {
			cum += sm->p[i] / z;
			if (cum >= sm->s.top_p) {
				keep = i + 1;
				break;
			}
		}
		n = keep;
		z = 0;
		for (int i = 0; i < n; i++)
			z += sm->p[i];
	}
	double u = llm_rng_uniform(&sm->rng) * z, cum = 0;
	for (int i = 0; i < n; i++) {
		cum += sm->p[i];
		if (u < cum)
			return sm->c[i].id;
	}
	return sm->c[n - 1].id; /* u within rounding of z */
}

int llm_generate(llm_model *m, const int32_t *prompt, int n, int max_new, int64_t stop_id,
                 llm_sampler *s, int use_cache, int (*emit)(void *ctx, int32_t tok), void *ctx,
                 int32_t *out, int *nout)
{
	const llm_model_config *cfg = llm_model_get_config(m);
	int V = cfg->vocab_size, maxT = cfg->max_position_embeddings;
	*nout = 0;
	if (n < 1)
		return llm_fail(LLM_EINVAL, "an empty prompt");
	if (n >= maxT)
		return llm_fail(LLM_EINVAL, "a prompt of %d tokens leaves no room in the model's %d "
		                "positions", n, maxT);
	if (max_new > maxT - n)
		max_new = maxT - n;
	int32_t *seq = llm_malloc((size_t)(n + max_new) * sizeof *seq);
	memcpy(seq, prompt, (size_t)n * sizeof *seq);
	float *logits = llm_malloc((size_t)(use_cache ? n : 1) * V * sizeof *logits);
	llm_kvcache *kv = use_cache ? llm_kvcache_new(m, n + max_new) : NULL;
	int len = n, rc = LLM_OK;
	const float *last = NULL;
	if (use_cache) {
		rc = llm_model_decode(m, kv, seq, n, logits);
		last = logits + (size_t)(n - 1) * V;
	}
	while (rc == LLM_OK && *nout < max_new) {
		if (!use_cache) {
			if ((rc = llm_model_forward(m, seq, NULL, 1, len, NULL, NULL)))
				break;
			last = llm_model_logits(m) + (size_t)(len - 1) * V;
		}
		int32_t t = llm_sampler_next(s, last);
		seq[len++] = t;
		if (out)
			out[*nout] = t;
		(*nout)++;
		if ((emit && emit(ctx, t)) || t == stop_id || *nout == max_new)
			break;
		if (use_cache) {
			rc = llm_model_decode(m, kv, &t, 1, logits);
			last = logits;
		}
	}
	llm_kvcache_free(kv);
	free(logits);
	free(seq);
	return rc;
}
