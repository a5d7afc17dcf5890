/*
 * model.c — LLaMA-style decoder on the CPU ops: configuration, parameter table, training
 * forward/backward, cached decoding.
 *
 * The training forward keeps every intermediate the backward needs (no recomputation): on a
 * CPU the small presets fit easily and recomputing would cost a third more time.
 */
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/hash.h"
#include "core/json.h"
#include "ops.h"

/* ---- configuration --------------------------------------------------------------------- */

/* Shapes after llama2.c's and TinyLlama's published models, with grouped-query attention;
 * intermediate sizes near 8/3 of the width rounded to a multiple of 32 as LLaMA does. */
static const struct preset {
	const char *name;
	int hidden, inter, layers, heads, kv_heads, max_pos, tied;
} presets[] = {
	{ "tiny", 128, 352, 4, 4, 2, 512, 1 },
	{ "small", 288, 768, 6, 6, 2, 1024, 1 },
	{ "medium", 512, 1376, 8, 8, 4, 1024, 1 },
	{ "base", 768, 2048, 12, 12, 4, 2048, 0 },
	{ "1b", 2048, 5632, 22, 32, 4, 2048, 0 },
};

const char llm_model_preset_names[] = "tiny\0small\0medium\0base\0" "1b\0";

int llm_model_preset(llm_model_config *c, const char *name)
{
	for (size_t i = 0; i < sizeof presets / sizeof *presets; i++) {
		const struct preset *p = &presets[i];
		if (strcmp(p->name, name) != 0)
			continue;
		int vocab = c->vocab_size;
		*c = (llm_model_config){ .vocab_size = vocab,
		                         .hidden_size = p->hidden,
		                         .intermediate_size = p->inter,
		                         .num_hidden_layers = p->layers,
		                         .num_attention_heads = p->heads,
		                         .num_key_value_heads = p->kv_heads,
		                         .max_position_embeddings = p->max_pos,
		                         .tie_word_embeddings = p->tied,
		                         .rope_theta = 10000,
		                         .rms_norm_eps = 1e-5,
		                         .initializer_range = 0.02,
		                         .bos_token_id = -1,
		                         .eos_token_id = -1 };
		return LLM_OK;
	}
	return llm_fail(LLM_ENOTFOUND, "unknown model preset '%s'", name);
}

static int get_int(const llm_json_rec *r, const char *key, int *out, int required)
{
	int64_t v;
	int rc = llm_json_get_i64(r, key, &v);
	if (rc == LLM_ENOTFOUND && !required)
		return LLM_OK;
	if (rc == LLM_ENOTFOUND)
		return llm_fail(LLM_EFORMAT, "config: missing '%s'", key);
	if (rc != LLM_OK || v < 0 || v > INT32_MAX)
		return llm_fail(LLM_EFORMAT, "config: '%s' is not a count", key);
	*out = (int)v;
	return LLM_OK;
}

static int get_num(const llm_json_rec *r, const char *key, double *out)
{
	int rc = llm_json_get_num(r, key, out);
	if (rc == LLM_ENOTFOUND)
		return LLM_OK;
	if (rc != LLM_OK || !(*out > 0))
		return llm_fail(LLM_EFORMAT, "config: '%s' is not a positive number", key);
	return LLM_OK;
}

/* A field that must be absent, null, false or the given string: the features we lack. */
static int unsupported(const llm_json_rec *r, const char *key, const char *allowed)
{
	const llm_json_val *v = llm_json_get(r, key);
	if (!v || v->type == LLM_JSON_NULL || v->type == LLM_JSON_FALSE)
		return LLM_OK;
	if (allowed && v->type == LLM_JSON_STRING && llm_json_str_eq(v, allowed))
		return LLM_OK;
	return llm_fail(LLM_EUNSUPPORTED, "config: '%s' = %.*s is not supported", key,
	                (int)(v->len > 40 ? 40 : v->len), v->p);
}

void llm_model_presets_table(int vocab, llm_buf *out)
{
	llm_buf_addf(out, "%-8s %6s %6s %6s %8s %6s %14s\n", "name", "layers", "width", "heads",
	             "kv_heads", "tied", "parameters");
	for (const char *p = llm_model_preset_names; *p; p += strlen(p) + 1) {
		llm_model_config c = { .vocab_size = vocab };
		llm_model_preset(&c, p);
		llm_buf_addf(out, "%-8s %6d %6d %6d %8d %6s %14lld\n", p, c.num_hidden_layers,
		             c.hidden_size, c.num_attention_heads, c.num_key_value_heads,
		             c.tie_word_embeddings ? "yes" : "no", (long long)llm_model_config_params(&c));
	}
}

int llm_model_config_parse(llm_model_config *c, const char *json, size_t n)
{
	llm_json_rec r;
	llm_json_rec_init(&r);
	int rc = llm_json_parse(&r, json, n);
	if (rc != LLM_OK) {
		rc = llm_fail(LLM_EFORMAT, "config: byte %zu: %s", r.err_pos, r.err_msg);
		goto out;
	}
	/* transformers' LlamaConfig defaults for what is absent. */
	*c = (llm_model_config){ .vocab_size = 32000,
	                         .max_position_embeddings = 2048,
	                         .rope_theta = 10000,
	                         .rms_norm_eps = 1e-6,
	                         .initializer_range = 0.02,
	                         .bos_token_id = -1,
	                         .eos_token_id = -1 };
	if ((rc = get_int(&r, "hidden_size", &c->hidden_size, 1)) ||
	    (rc = get_int(&r, "intermediate_size", &c->intermediate_size, 1)) ||
	    (rc = get_int(&r, "num_hidden_layers", &c->num_hidden_layers, 1)) ||
	    (rc = get_int(&r, "num_attention_heads", &c->num_attention_heads, 1)) ||
	    (rc = get_int(&r, "vocab_size", &c->vocab_size, 0)) ||
	    (rc = get_int(&r, "max_position_embeddings", &c->max_position_embeddings, 0)) ||
	    (rc = get_num(&r, "rope_theta", &c->rope_theta)) ||
	    (rc = get_num(&r, "rms_norm_eps", &c->rms_norm_eps)) ||
	    (rc = get_num(&r, "initializer_range", &c->initializer_range)))
		goto out;
	c->num_key_value_heads = c->num_attention_heads;
	if ((rc = get_int(&r, "num_key_value_heads", &c->num_key_value_heads, 0)))
		goto out;
	int64_t id;
	if (llm_json_get_i64(&r, "bos_token_id", &id) == LLM_OK && id >= 0 && id <= INT32_MAX)
		c->bos_token_id = (int)id;
	if (llm_json_get_i64(&r, "eos_token_id", &id) == LLM_OK && id >= 0 && id <= INT32_MAX)
		c->eos_token_id = (int)id;
	const llm_json_val *tie = llm_json_get(&r, "tie_word_embeddings");
	c->tie_word_embeddings = tie && tie->type == LLM_JSON_TRUE;
	if ((rc = unsupported(&r, "rope_scaling", NULL)) ||
	    (rc = unsupported(&r, "attention_bias", NULL)) ||
	    (rc = unsupported(&r, "mlp_bias", NULL)) || (rc = unsupported(&r, "hidden_act", "silu")))
		goto out;
	int head_dim = 0;
	if ((rc = get_int(&r, "head_dim", &head_dim, 0)))
		goto out;
	if (head_dim && c->num_attention_heads && head_dim * c->num_attention_heads != c->hidden_size) {
		rc = llm_fail(LLM_EUNSUPPORTED, "config: head_dim %d other than hidden_size / heads",
		              head_dim);
		goto out;
	}
	rc = llm_model_config_check(c);
out:
	llm_json_rec_release(&r);
	return rc;
}

void llm_model_config_json(const llm_model_config *c, llm_buf *o)
{
	llm_buf_addf(o, "{\n  \"architectures\": [\"LlamaForCausalLM\"],\n  \"model_type\": \"llama\",\n");
	llm_buf_addf(o, "  \"vocab_size\": %d,\n  \"hidden_size\": %d,\n  \"intermediate_size\": %d,\n",
	             c->vocab_size, c->hidden_size, c->intermediate_size);
	llm_buf_addf(o, "  \"num_hidden_layers\": %d,\n  \"num_attention_heads\": %d,\n",
	             c->num_hidden_layers, c->num_attention_heads);
	llm_buf_addf(o, "  \"num_key_value_heads\": %d,\n  \"head_dim\": %d,\n", c->num_key_value_heads,
	             c->hidden_size / c->num_attention_heads);
	llm_buf_addf(o, "  \"max_position_embeddings\": %d,\n  \"rope_theta\": ",
	             c->max_position_embeddings);
	llm_json_put_f64(o, c->rope_theta);
	llm_buf_adds(o, ",\n  \"rope_scaling\": null,\n  \"rms_norm_eps\": ");
	llm_json_put_f64(o, c->rms_norm_eps);
	llm_buf_adds(o, ",\n  \"initializer_range\": ");
	llm_json_put_f64(o, c->initializer_range);
	llm_buf_addf(o, ",\n  \"tie_word_embeddings\": %s,\n", c->tie_word_embeddings ? "true" : "false");
	if (c->bos_token_id >= 0)
		llm_buf_addf(o, "  \"bos_token_id\": %d,\n", c->bos_token_id);
	if (c->eos_token_id >= 0)
		llm_buf_addf(o, "  \"eos_token_id\": %d,\n", c->eos_token_id);
	llm_buf_adds(o, "  \"hidden_act\": \"silu\",\n  \"attention_bias\": false,\n"
	                "  \"mlp_bias\": false,\n  \"attention_dropout\": 0.0,\n"
	                "  \"pretraining_tp\": 1,\n  \"use_cache\": true,\n"
	                "  \"torch_dtype\": \"float32\"\n}\n");
}

int llm_model_config_check(const llm_model_config *c)
{
	if (c->vocab_size <= 0 || c->hidden_size <= 0 || c->intermediate_size <= 0 ||
	    c->num_hidden_layers <= 0 || c->num_attention_heads <= 0 || c->num_key_value_heads <= 0 ||
	    c->max_position_embeddings <= 0)
		return llm_fail(LLM_EINVAL, "model config: sizes must be positive");
	if (c->hidden_size % c->num_attention_heads)
		return llm_fail(LLM_EINVAL, "model config: %d heads do not divide hidden_size %d",
		                c->num_attention_heads, c->hidden_size);
	if (c->num_attention_heads % c->num_key_value_heads)
		return llm_fail(LLM_EINVAL, "model config: %d key-value heads do not divide %d heads",
		                c->num_key_value_heads, c->num_attention_heads);
	int D = c->hidden_size / c->num_attention_heads;
	if (D % 2 || D > 2048)
		return llm_fail(LLM_EINVAL, "model config: head width %d must be even and <= 2048", D);
	if (!(c->rope_theta > 0) || !(c->rms_norm_eps > 0) || !(c->initializer_range >= 0))
		return llm_fail(LLM_EINVAL, "model config: rope_theta and rms_norm_eps must be positive");
	return LLM_OK;
}

int64_t llm_model_config_params(const llm_model_config *c)
{
	int64_t C = c->hidden_size, V = c->vocab_size, I = c->intermediate_size;
	int64_t D = C / c->num_attention_heads, kv = (int64_t)c->num_key_value_heads * D;
	int64_t layer = 2 * C + C * C + 2 * C * kv + C * C + 3 * C * I;
	return V * C + c->num_hidden_layers * layer + C + (c->tie_word_embeddings ? 0 : V * C);
}

double llm_model_flops_per_token(const llm_model_config *c, int T)
{
	double n = (double)llm_model_config_params(c);
	if (!c->tie_word_embeddings)
		n -= (double)c->vocab_size * c->hidden_size; /* the lookup costs no products */
	return 6 * n + 12.0 * c->num_hidden_layers * c->hidden_size * T;
}

/* ---- the model ------------------------------------------------------------------------- */

/* Indexes into the tensor table per layer. */
enum { T_LN1, T_Q, T_K, T_V, T_O, T_LN2, T_GATE, T_UP, T_DOWN, T_PER_LAYER };

/* Activations of one layer kept for the backward. */
typedef struct {
	float *res;     /* [N, C] input of the layer (residual stream) */
	float *ln1;     /* [N, C] */
	float *rstd1;   /* [N] */
	float *q;       /* [N, H*D] after RoPE */
	float *k, *v;   /* [N, KVH*D], k after RoPE */
	float *att;     /* [B, H, T, T] probabilities */
	float *atty;    /* [N, H*D] attention output before o_proj */
	float *mid;     /* [N, C] residual after attention */
	float *ln2;     /* [N, C] */
	float *rstd2;   /* [N] */
	float *gate, *up, *h; /* [N, I] */
} layer_acts;

struct llm_model {
	llm_model_config cfg;
	int C, I, L, H, KVH, D, V;
	llm_tensor *tensors;
	size_t ntensors, nparams;
	float *params, *grads;
	/* activations, for capacity N = B*T and T */
	int cap_B, cap_T;
	float *acts;
	layer_acts *la;
	float *res_final, *lnf, *rstdf, *logits, *losses, *lse;
	int32_t *inputs, *targets, *pos;
	/* backward scratch */
	float *d_res, *d_ln, *d_attn, *d_q, *d_k, *d_v, *d_i1, *d_i2, *d_i3, *d_scratch;
	int B, T, have_targets, fwd_done;
	int view; /* llm_model_view: params are another model's, no gradients */
};

static void add_tensor(llm_model *m, const char *name, int layer, int64_t d0, int64_t d1)
{
	llm_tensor *t = &m->tensors[m->ntensors++];
	snprintf(t->name, sizeof t->name, "%s", name);
	t->layer = layer;
	t->ndim = d1 ? 2 : 1;
	t->shape[0] = d0;
	t->shape[1] = d1;
	t->numel = (size_t)d0 * (size_t)(d1 ? d1 : 1);
	t->offset = m->nparams;
	t->decay = t->ndim == 2;
	m->nparams += t->numel;
}

llm_model *llm_model_new(const llm_model_config *c)
{
	llm_model *m = llm_calloc(1, sizeof *m);
	m->cfg = *c;
	m->C = c->hidden_size;
	m->I = c->intermediate_size;
	m->L = c->num_hidden_layers;
	m->H = c->num_attention_heads;
	m->KVH = c->num_key_value_heads;
	m->D = m->C / m->H;
	m->V = c->vocab_size;
	m->tensors = llm_calloc((size_t)m->L * T_PER_LAYER + 3, sizeof *m->tensors);
	int C = m->C, qd = m->H * m->D, kvd = m->KVH * m->D;
	add_tensor(m, "model.embed_tokens.weight", -1, m->V, C);
	static const char *const names[T_PER_LAYER] = {
		"input_layernorm", "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
		"self_attn.o_proj", "post_attention_layernorm", "mlp.gate_proj", "mlp.up_proj",
		"mlp.down_proj"
	};
	const int64_t shapes[T_PER_LAYER][2] = { { C, 0 },     { qd, C },   { kvd, C },
		                                 { kvd, C },   { C, qd },   { C, 0 },
		                                 { m->I, C },  { m->I, C }, { C, m->I } };
	for (int l = 0; l < m->L; l++)
		for (int j = 0; j < T_PER_LAYER; j++) {
			char name[64];
			snprintf(name, sizeof name, "model.layers.%d.%s.weight", l, names[j]);
			add_tensor(m, name, l, shapes[j][0], shapes[j][1]);
		}
	add_tensor(m, "model.norm.weight", -1, C, 0);
	if (!c->tie_word_embeddings)
		add_tensor(m, "lm_head.weight", -1, m->V, C);
	m->params = llm_calloc(m->nparams, sizeof *m->params);
	m->grads = llm_calloc(m->nparams, sizeof *m->grads);
	return m;
}

llm_model *llm_model_view(const llm_model *src)
{
	llm_model *m = llm_calloc(1, sizeof *m);
	*m = (llm_model){ .cfg = src->cfg, .C = src->C, .I = src->I, .L = src->L, .H = src->H,
		          .KVH = src->KVH, .D = src->D, .V = src->V, .ntensors = src->ntensors,
		          .nparams = src->nparams, .params = src->params, .view = 1 };
	m->tensors = llm_malloc(src->ntensors * sizeof *m->tensors);
	memcpy(m->tensors, src->tensors, src->ntensors * sizeof *m->tensors);
	return m;
}

void llm_model_free(llm_model *m)
{
	if (!m)
		return;
	free(m->tensors);
	if (!m->view)
		free(m->params);
	free(m->grads);
	free(m->acts);
	free(m->la);
	free(m->inputs);
	free(m);
}

const llm_model_config *llm_model_get_config(const llm_model *m) { return &m->cfg; }
size_t llm_model_ntensors(const llm_model *m) { return m->ntensors; }
const llm_tensor *llm_model_tensor(const llm_model *m, size_t i) { return &m->tensors[i]; }
size_t llm_model_nparams(const llm_model *m) { return m->nparams; }
float *llm_model_params(llm_model *m) { return m->params; }
float *llm_model_grads(llm_model *m) { return m->grads; }
const float *llm_model_logits(const llm_model *m) { return m->logits; }

int llm_model_check_finite(const llm_model *m, const float *p, const char *file,
                           const char *what)
{
	for (size_t i = 0; i < m->ntensors; i++) {
		const llm_tensor *t = &m->tensors[i];
		for (size_t j = 0; j < t->numel; j++)
			if (!isfinite(p[t->offset + j]))
				return llm_fail(LLM_EFORMAT, "%s: %s'%s' holds a non-finite value at element %zu",
				                file, what, t->name, j);
	}
	return LLM_OK;
}

const llm_tensor *llm_model_find(const llm_model *m, const char *name)
{
	for (size_t i = 0; i < m->ntensors; i++)
		if (strcmp(m->tensors[i].name, name) == 0)
			return &m->tensors[i];
	return NULL;
}

static float *P(llm_model *m, int layer, int which)
{
	return m->params + m->tensors[1 + (size_t)layer * T_PER_LAYER + which].offset;
}

static float *G(llm_model *m, int layer, int which)
{
	return m->grads + m->tensors[1 + (size_t)layer * T_PER_LAYER + which].offset;
}

static float *lm_head(llm_model *m, float *base)
{
	const llm_tensor *t = &m->tensors[m->cfg.tie_word_embeddings ? 0 : m->ntensors - 1];
	return base + t->offset;
}

static float *final_norm(llm_model *m, float *base)
{
	return base + m->tensors[1 + (size_t)m->L * T_PER_LAYER].offset;
}

void llm_model_init(llm_model *m, uint64_t seed)
{
	for (size_t i = 0; i < m->ntensors; i++) {
		const llm_tensor *t = &m->tensors[i];
		float *p = m->params + t->offset;
		/* One stream per tensor: adding a layer does not change the others' values. */
		llm_rng r;
		llm_rng_seed2(&r, seed, i);
		for (size_t j = 0; j < t->numel; j++)
			p[j] = t->ndim == 2 ? (float)(llm_rng_normal(&r) * m->cfg.initializer_range) : 1.0f;
	}
}

void llm_model_zero_grad(llm_model *m)
{
	llm_ops_zero(m->grads, m->nparams);
}

/* Carve all activation buffers for (B, T) out of one allocation. */
static void ensure_acts(llm_model *m, int B, int T)
{
	if (B <= m->cap_B && T == m->cap_T)
		return;
	free(m->acts);
	free(m->la);
	free(m->inputs);
	size_t N = (size_t)B * T, C = m->C, I = m->I, qd = (size_t)m->H * m->D,
	       kvd = (size_t)m->KVH * m->D, att = (size_t)B * m->H * T * T;
	size_t per_layer = 4 * N * C + 2 * N + 2 * N * qd + 2 * N * kvd + att + 3 * N * I;
	size_t big = N * (qd > I ? qd : I);
	size_t total = (size_t)m->L * per_layer + 2 * N * C + N + N * m->V + 2 * N + /* forward */
	               2 * N * C + N * qd + N * qd + 2 * N * kvd + 3 * big + (size_t)T * T;
	m->acts = llm_malloc(total * sizeof(float));
	m->la = llm_calloc((size_t)m->L, sizeof *m->la);
	float *p = m->acts;
#define TAKE(n) (p += (n), p - (n))
	for (int l = 0; l < m->L; l++) {
		layer_acts *a = &m->la[l];
		a->res = TAKE(N * C);
		a->ln1 = TAKE(N * C);
		a->rstd1 = TAKE(N);
		a->q = TAKE(N * qd);
		a->k = TAKE(N * kvd);
		a->v = TAKE(N * kvd);
		a->att = TAKE(att);
		a->atty = TAKE(N * qd);
		a->mid = TAKE(N * C);
		a->ln2 = TAKE(N * C);
		a->rstd2 = TAKE(N);
		a->gate = TAKE(N * I);
		a->up = TAKE(N * I);
		a->h = TAKE(N * I);
	}
	m->res_final = TAKE(N * C);
	m->lnf = TAKE(N * C);
	m->rstdf = TAKE(N);
	m->logits = TAKE(N * m->V);
	m->losses = TAKE(N);
	m->lse = TAKE(N);
	m->d_res = TAKE(N * C);
	m->d_ln = TAKE(N * C);
	m->d_attn = TAKE(N * qd);
	m->d_q = TAKE(N * qd);
	m->d_k = TAKE(N * kvd);
	m->d_v = TAKE(N * kvd);
	m->d_i1 = TAKE(big);
	m->d_i2 = TAKE(big);
	m->d_i3 = TAKE(big);
	m->d_scratch = TAKE((size_t)T * T);
#undef TAKE
	m->inputs = llm_malloc(3 * N * sizeof *m->inputs);
	m->targets = m->inputs + N;
	m->pos = m->targets + N;
	for (size_t n = 0; n < N; n++)
		m->pos[n] = (int32_t)(n % (size_t)T);
	m->cap_B = B;
	m->cap_T = T;
}

static int check_tokens(const llm_model *m, const int32_t *tok, size_t n, int allow_neg,
                        const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (tok[i] >= m->V || (tok[i] < 0 && !allow_neg))
			return llm_fail(LLM_EINVAL, "%s token %d at position %zu is outside the vocabulary "
			                "of %d", what, (int)tok[i], i, m->V);
	return LLM_OK;
}

/* One decoder layer forward for rows of B sequences of Tq queries over Tk keys (Tk > Tq when
 * k and v already hold cached rows before the new ones). */
static void layer_forward(llm_model *m, int l, layer_acts *a, float *out, const int32_t *pos,
                          int B, int Tq, int Tk, float *kbuf, float *vbuf)
{
	int N = B * Tq, C = m->C, qd = m->H * m->D, kvd = m->KVH * m->D;
	float theta = (float)m->cfg.rope_theta, eps = (float)m->cfg.rms_norm_eps;
	llm_rmsnorm_fwd(a->ln1, a->rstd1, a->res, P(m, l, T_LN1), N, C, eps);
	llm_matmul_fwd(a->q, a->ln1, P(m, l, T_Q), N, C, qd);
	llm_matmul_fwd(kbuf, a->ln1, P(m, l, T_K), N, C, kvd);
	llm_matmul_fwd(vbuf, a->ln1, P(m, l, T_V), N, C, kvd);
	llm_rope_fwd(a->q, a->q, pos, N, m->H, m->D, theta);
	llm_rope_fwd(kbuf, kbuf, pos, N, m->KVH, m->D, theta);
	const float *k0 = kbuf - (size_t)(Tk - Tq) * kvd, *v0 = vbuf - (size_t)(Tk - Tq) * kvd;
	llm_attention_fwd(a->atty, a->att, a->q, k0, v0, B, Tq, Tk, m->H, m->KVH, m->D);
	llm_matmul_fwd(a->mid, a->atty, P(m, l, T_O), N, qd, C);
	llm_residual_fwd(a->mid, a->mid, a->res, (size_t)N * C);
	llm_rmsnorm_fwd(a->ln2, a->rstd2, a->mid, P(m, l, T_LN2), N, C, eps);
	llm_matmul_fwd(a->gate, a->ln2, P(m, l, T_GATE), N, C, m->I);
	llm_matmul_fwd(a->up, a->ln2, P(m, l, T_UP), N, C, m->I);
	llm_swiglu_fwd(a->h, a->gate, a->up, (size_t)N * m->I);
	llm_matmul_fwd(out, a->h, P(m, l, T_DOWN), N, m->I, C);
	llm_residual_fwd(out, out, a->mid, (size_t)N * C);
}

/* The forward up to the final norm (m->lnf), the part every head shares. */
static int forward_trunk(llm_model *m, const int32_t *inputs, const int32_t *targets, int B,
                         int T)
{
	if (B <= 0 || T <= 0 || T > m->cfg.max_position_embeddings)
		return llm_fail(LLM_EINVAL, "sequence length %d outside 1..%d", T,
		                m->cfg.max_position_embeddings);
	size_t N = (size_t)B * T;
	int rc;
	if ((rc = check_tokens(m, inputs, N, 0, "input")) ||
	    (targets && (rc = check_tokens(m, targets, N, 1, "target"))))
		return rc;
	ensure_acts(m, B, T);
	m->B = B;
	m->T = T;
	memcpy(m->inputs, inputs, N * sizeof *inputs);
	llm_embedding_fwd(m->la[0].res, inputs, m->params, (int)N, m->C);
	for (int l = 0; l < m->L; l++) {
		layer_acts *a = &m->la[l];
		layer_forward(m, l, a, l + 1 < m->L ? m->la[l + 1].res : m->res_final, m->pos, B, T, T,
		              a->k, a->v);
	}
	llm_rmsnorm_fwd(m->lnf, m->rstdf, m->res_final, final_norm(m, m->params), (int)N, m->C,
	                (float)m->cfg.rms_norm_eps);
	return LLM_OK;
}

int llm_model_forward_hidden(llm_model *m, const int32_t *inputs, int B, int T)
{
	int rc = forward_trunk(m, inputs, NULL, B, T);
	m->have_targets = 0;
	m->fwd_done = rc == LLM_OK;
	return rc;
}

const float *llm_model_hidden(const llm_model *m) { return m->lnf; }

int llm_model_forward(llm_model *m, const int32_t *inputs, const int32_t *targets, int B, int T,
                      double *loss, int64_t *count)
{
	int rc = forward_trunk(m, inputs, targets, B, T);
	if (rc)
		return rc;
	size_t N = (size_t)B * T;
	llm_matmul_fwd(m->logits, m->lnf, lm_head(m, m->params), (int)N, m->C, m->V);
	m->have_targets = targets != NULL;
	m->fwd_done = 1;
	if (!targets)
		return LLM_OK;
	memcpy(m->targets, targets, N * sizeof *targets);
	llm_xent_fwd(m->losses, m->lse, m->logits, targets, (int)N, m->V);
	double sum = 0;
	int64_t cnt = 0;
	for (size_t n = 0; n < N; n++)
		if (targets[n] >= 0) {
			sum += m->losses[n];
			cnt++;
		}
	if (loss)
		*loss = cnt ? sum / cnt : 0;
	if (count)
		*count = cnt;
	return LLM_OK;
}

static void backward_trunk(llm_model *m);

void llm_model_backward(llm_model *m, float scale)
{
	if (!m->fwd_done || !m->have_targets)
		return;
	m->fwd_done = 0;
	int N = m->B * m->T, C = m->C;
	size_t NC = (size_t)N * C;
	/* dloss per row: scale, reusing the losses buffer. */
	for (int n = 0; n < N; n++)
		m->losses[n] = scale;
	llm_xent_bwd(m->logits, m->logits, m->lse, m->targets, m->losses, N, m->V);
	llm_ops_zero(m->d_ln, NC);
	llm_matmul_bwd(m->d_ln, lm_head(m, m->grads), m->logits, m->lnf, lm_head(m, m->params), N, C,
	               m->V);
	backward_trunk(m);
}

void llm_model_backward_hidden(llm_model *m, const float *d_hidden)
{
	if (!m->fwd_done || m->view)
		return;
	m->fwd_done = 0;
	memcpy(m->d_ln, d_hidden, (size_t)m->B * m->T * m->C * sizeof(float));
	backward_trunk(m);
}

/* The backward from the gradient of the final norm's output (m->d_ln) to the embedding. */
static void backward_trunk(llm_model *m)
{
	int N = m->B * m->T, C = m->C, I = m->I, qd = m->H * m->D, kvd = m->KVH * m->D;
	size_t NC = (size_t)N * C, NI = (size_t)N * I;
	float theta = (float)m->cfg.rope_theta;
	llm_ops_zero(m->d_res, NC);
	llm_rmsnorm_bwd(m->d_res, final_norm(m, m->grads), m->d_ln, m->res_final,
	                final_norm(m, m->params), m->rstdf, N, C);
	for (int l = m->L - 1; l >= 0; l--) {
		layer_acts *a = &m->la[l];
		/* out = mid + down(h): d_res flows to mid unchanged, plus the MLP branch. */
		float *dh = m->d_i1, *dgate = m->d_i2, *dup = m->d_i3;
		llm_ops_zero(dh, NI);
		llm_matmul_bwd(dh, G(m, l, T_DOWN), m->d_res, a->h, P(m, l, T_DOWN), N, I, C);
		llm_ops_zero(dgate, NI);
		llm_ops_zero(dup, NI);
		llm_swiglu_bwd(dgate, dup, dh, a->gate, a->up, NI);
		llm_ops_zero(m->d_ln, NC);
		llm_matmul_bwd(m->d_ln, G(m, l, T_GATE), dgate, a->ln2, P(m, l, T_GATE), N, C, I);
		llm_matmul_bwd(m->d_ln, G(m, l, T_UP), dup, a->ln2, P(m, l, T_UP), N, C, I);
		llm_rmsnorm_bwd(m->d_res, G(m, l, T_LN2), m->d_ln, a->mid, P(m, l, T_LN2), a->rstd2, N,
		                C);
		/* mid = res + o_proj(attention): same pattern. */
		llm_ops_zero(m->d_attn, (size_t)N * qd);
		llm_matmul_bwd(m->d_attn, G(m, l, T_O), m->d_res, a->atty, P(m, l, T_O), N, qd, C);
		llm_ops_zero(m->d_q, (size_t)N * qd);
		llm_ops_zero(m->d_k, (size_t)N * kvd);
		llm_ops_zero(m->d_v, (size_t)N * kvd);
		llm_attention_bwd(m->d_q, m->d_k, m->d_v, m->d_scratch, m->d_attn, a->q, a->k, a->v,
		                  a->att, m->B, m->T, m->T, m->H, m->KVH, m->D);
		llm_rope_bwd(m->d_q, m->d_q, m->pos, N, m->H, m->D, theta);
		llm_rope_bwd(m->d_k, m->d_k, m->pos, N, m->KVH, m->D, theta);
		llm_ops_zero(m->d_ln, NC);
		llm_matmul_bwd(m->d_ln, G(m, l, T_Q), m->d_q, a->ln1, P(m, l, T_Q), N, C, qd);
		llm_matmul_bwd(m->d_ln, G(m, l, T_K), m->d_k, a->ln1, P(m, l, T_K), N, C, kvd);
		llm_matmul_bwd(m->d_ln, G(m, l, T_V), m->d_v, a->ln1, P(m, l, T_V), N, C, kvd);
		llm_rmsnorm_bwd(m->d_res, G(m, l, T_LN1), m->d_ln, a->res, P(m, l, T_LN1), a->rstd1, N,
		                C);
	}
	llm_embedding_bwd(m->grads, m->d_res, m->inputs, N, C);
}

/* ---- cached decoding ------------------------------------------------------------------- */

struct llm_kvcache {
	const llm_model *m;
	int max_len, len;
	float *k, *v; /* per layer [max_len, KVH*D] */
	/* per-call activations for up to max_len new tokens */
	layer_acts a;
	float *next, *lnf;
	int32_t *pos;
};

llm_kvcache *llm_kvcache_new(const llm_model *m, int max_len)
{
	if (max_len > m->cfg.max_position_embeddings)
		max_len = m->cfg.max_position_embeddings;
	llm_kvcache *kv = llm_calloc(1, sizeof *kv);
	kv->m = m;
	kv->max_len = max_len;
	size_t n = (size_t)max_len, C = m->C, I = m->I, qd = (size_t)m->H * m->D,
	       kvd = (size_t)m->KVH * m->D;
	kv->k = llm_malloc(2 * m->L * n * kvd * sizeof(float));
	kv->v = kv->k + m->L * n * kvd;
	layer_acts *a = &kv->a;
	/* The attention probabilities of n queries over up to max_len keys. */
	float *p = llm_malloc((4 * n * C + 2 * n + 2 * n * qd + (size_t)m->H * n * n + 3 * n * I + n * C) *
	                      sizeof(float));
	a->res = p, p += n * C;
	a->ln1 = p, p += n * C;
	a->rstd1 = p, p += n;
	a->q = p, p += n * qd;
	a->atty = p, p += n * qd;
	a->att = p, p += (size_t)m->H * n * n;
	a->mid = p, p += n * C;
	a->ln2 = p, p += n * C;
	a->rstd2 = p, p += n;
	a->gate = p, p += n * I;
	a->up = p, p += n * I;
	a->h = p, p += n * I;
	kv->next = p;
	kv->lnf = a->ln1; /* free once the layers are done */
	kv->pos = llm_malloc(n * sizeof *kv->pos);
	return kv;
}

void llm_kvcache_free(llm_kvcache *kv)
{
	if (!kv)
		return;
	free(kv->k);
	free(kv->a.res);
	free(kv->pos);
	free(kv);
}

void llm_kvcache_reset(llm_kvcache *kv) { kv->len = 0; }
int llm_kvcache_len(const llm_kvcache *kv) { return kv->len; }

int llm_model_decode(llm_model *m, llm_kvcache *kv, const int32_t *tokens, int n, float *logits)
{
	if (kv->m != m)
		return llm_fail(LLM_EINVAL, "key-value cache of another model");
	if (n <= 0 || kv->len + n > kv->max_len)
		return llm_fail(LLM_EINVAL, "%d tokens after %d exceed the cache of %d positions", n,
		                kv->len, kv->max_len);
	int rc = check_tokens(m, tokens, (size_t)n, 0, "input");
	if (rc)
		return rc;
	size_t kvd = (size_t)m->KVH * m->D, C = m->C;
	for (int i = 0; i < n; i++)
		kv->pos[i] = kv->len + i;
	layer_acts *a = &kv->a;
	llm_embedding_fwd(a->res, tokens, m->params, n, m->C);
	for (int l = 0; l < m->L; l++) {
		float *kl = kv->k + (size_t)l * kv->max_len * kvd + (size_t)kv->len * kvd;
		float *vl = kv->v + (size_t)l * kv->max_len * kvd + (size_t)kv->len * kvd;
		layer_forward(m, l, a, kv->next, kv->pos, 1, n, kv->len + n, kl, vl);
		memcpy(a->res, kv->next, (size_t)n * C * sizeof(float));
	}
	llm_rmsnorm_fwd(kv->lnf, NULL, a->res, final_norm(m, m->params), n, m->C,
	                (float)m->cfg.rms_norm_eps);
	llm_matmul_fwd(logits, kv->lnf, lm_head(m, m->params), n, m->C, m->V);
	kv->len += n;
	return LLM_OK;
}
