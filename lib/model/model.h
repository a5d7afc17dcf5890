/*
 * model.h — the decoder-only LLaMA-style model: configuration, parameters under Hugging Face
 * tensor names, training forward/backward on the CPU ops (ops.h), and a forward-only path with
 * a key-value cache for evaluation and generation.
 *
 * Architecture (transformers' LlamaForCausalLM, no biases, SiLU, no RoPE scaling):
 *   x = embed_tokens[tokens]
 *   per layer: x += o_proj(attention(rope(q_proj(n)), rope(k_proj(n)), v_proj(n))), n = rms(x)
 *              x += down_proj(silu(gate_proj(n)) * up_proj(n)),                  n = rms(x)
 *   logits = lm_head(rms(x))   (lm_head is embed_tokens when tie_word_embeddings)
 *
 * Parameters live in one contiguous fp32 array, tensor after tensor in the order of
 * llm_model_tensor(), with the gradients in a second array of the same layout; the optimizer
 * and the all-reduce treat each as one flat vector. Tensor names and shapes are those of a
 * transformers Llama state dict, so a checkpoint written from them loads with from_pretrained.
 *
 * Memory: parameters and gradients (8 bytes per parameter) plus the activations kept for the
 * backward pass, allocated for the largest (B, T) seen: per layer about
 * B*T*(4C + 3*H*D + 2*KVH*D + 3I) + B*H*T*T floats, and B*T*V floats of logits.
 *
 * Thread safety: one model per thread; the products inside use OpenBLAS threads.
 */
#ifndef LLM_MODEL_H
#define LLM_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

/* Hugging Face LlamaConfig fields llmkit uses (head_dim = hidden_size / num_attention_heads). */
typedef struct {
	int vocab_size;
	int hidden_size;
	int intermediate_size;
	int num_hidden_layers;
	int num_attention_heads;
	int num_key_value_heads;
	int max_position_embeddings;
	int tie_word_embeddings;
	double rope_theta;
	double rms_norm_eps;
	double initializer_range; /* std of the normal init of every matrix */
	int bos_token_id, eos_token_id; /* written to config.json; -1 = null */
} llm_model_config;

/* Names of the presets, NUL-separated, ending with an empty name ("tiny\0small\0...\0"). */
extern const char llm_model_preset_names[];
/* Fill c with preset name (vocab_size left as given in c->vocab_size). LLM_ENOTFOUND if unknown. */
int llm_model_preset(llm_model_config *c, const char *name);
/* The presets and their parameter counts for a vocabulary, as a table (llm-train --list-models). */
void llm_model_presets_table(int vocab, llm_buf *out);
/* Parse a LlamaConfig config.json. Fields absent take transformers' defaults; features llmkit
 * does not implement (rope_scaling, biases, another hidden_act, a head_dim other than
 * hidden/heads) give LLM_EUNSUPPORTED naming the field. LLM_EFORMAT on bad JSON. */
int llm_model_config_parse(llm_model_config *c, const char *json, size_t n);
/* config.json text for c (LlamaForCausalLM, float32), appended to out. */
void llm_model_config_json(const llm_model_config *c, llm_buf *out);
/* Sizes consistent and positive (heads divide the width, kv heads divide heads, even head
 * width); LLM_EINVAL with the reason otherwise. */
int llm_model_config_check(const llm_model_config *c);
/* Number of parameters (embedding and, when untied, lm_head included). */
int64_t llm_model_config_params(const llm_model_config *c);
/* Training FLOPs per token for sequence length T: 6 x (parameters other than the embedding
 * lookup) + 12 x layers x width x T for the attention products (the PaLM accounting). */
double llm_model_flops_per_token(const llm_model_config *c, int T);

typedef struct {
	char name[64];     /* "model.layers.3.self_attn.q_proj.weight" */
	int ndim;          /* 1 or 2 */
	int64_t shape[2];  /* [out, in] for matrices, as nn.Linear and nn.Embedding store them */
	size_t offset;     /* into llm_model_params() / llm_model_grads(), in floats */
	size_t numel;
	int layer;         /* decoder layer, or -1 for embedding, final norm, lm_head */
	int decay;         /* 1 for matrices (weight decay applies), 0 for norm weights */
} llm_tensor;

typedef struct llm_model llm_model;

/* A model for a checked configuration (llm_model_config_check), parameters zero. */
llm_model *llm_model_new(const llm_model_config *c);
void llm_model_free(llm_model *m);

const llm_model_config *llm_model_get_config(const llm_model *m);
size_t llm_model_ntensors(const llm_model *m);
const llm_tensor *llm_model_tensor(const llm_model *m, size_t i);
/* Tensor by Hugging Face name, or NULL. */
const llm_tensor *llm_model_find(const llm_model *m, const char *name);
size_t llm_model_nparams(const llm_model *m);
float *llm_model_params(llm_model *m);
float *llm_model_grads(llm_model *m);
/* Every value of p (an array in the model's parameter layout: the parameters, or an optimizer
 * moment) finite: LLM_OK, else LLM_EFORMAT "FILE: WHAT'NAME' holds a non-finite value at
 * element J" for the first one (what: "" or a prefix such as "exp_avg of "). A model holding
 * a NaN or an infinity computes NaN losses everywhere: a checkpoint that has one is refused
 * where it is loaded rather than evaluated or trained into nonsense. */
int llm_model_check_finite(const llm_model *m, const float *p, const char *file,
                           const char *what);

/* transformers' init: every matrix ~ N(0, initializer_range), norm weights 1; deterministic
 * from seed. */
void llm_model_init(llm_model *m, uint64_t seed);

/*
 * Training forward over B sequences of T tokens: inputs[B*T] (model inputs) and targets[B*T]
 * (the token each position must predict; < 0 ignores the position). Keeps what the backward
 * needs. *loss = mean cross-entropy over the targets that count, *count their number.
 * T <= max_position_embeddings, tokens in [0, vocab). LLM_EINVAL (with detail) otherwise.
 * targets may be NULL: logits only (llm_model_logits), no loss.
 */
int llm_model_forward(llm_model *m, const int32_t *inputs, const int32_t *targets, int B, int T,
                      double *loss, int64_t *count);
/* Logits [B*T, V] of the last forward without targets (valid until the next forward). */
const float *llm_model_logits(const llm_model *m);

/*
 * The forward without the language-model head, for the heads that read the hidden states
 * (seqcls.h): as llm_model_forward up to the final norm, whose output [B*T, C] llm_model_hidden
 * gives (valid until the next forward). llm_model_backward_hidden then adds, into the
 * gradients, the backward of sum(d_hidden * hidden) over that forward: the head's gradient
 * d_hidden [B*T, C] flows down the decoder (lm_head gets none).
 */
int llm_model_forward_hidden(llm_model *m, const int32_t *inputs, int B, int T);
const float *llm_model_hidden(const llm_model *m);
void llm_model_backward_hidden(llm_model *m, const float *d_hidden);

/*
 * A model that reads src's parameters (not copied) with activations of its own: forward only
 * (llm_model_forward, _forward_hidden, decoding), so that several threads run one set of
 * weights at once, each on its own view. No gradients: never init, train or backward a view.
 * src must outlive it; free it with llm_model_free (src's parameters stay).
 */
llm_model *llm_model_view(const llm_model *src);

/* Set every gradient to zero. */
void llm_model_zero_grad(llm_model *m);
/*
 * Backward of the last forward (which had targets): adds d(scale * sum of token losses)/dparam
 * into the gradients. scale = 1 / (tokens in the whole optimizer batch) gives the gradient of
 * the batch mean. Consumes the forward's saved state (the logits buffer becomes their gradient).
 */
void llm_model_backward(llm_model *m, float scale);

/*
 * Forward-only decoding of one sequence with a key-value cache: llm_model_decode appends n
 * tokens at positions len .. len+n-1 of the cache and writes their logits to logits[n, V].
 * Equal, to fp32 rounding, to the training forward over the whole prefix. LLM_EINVAL when the
 * cache would exceed its max_len (at most max_position_embeddings). A cache belongs to the
 * model it was made for.
 */
typedef struct llm_kvcache llm_kvcache;
llm_kvcache *llm_kvcache_new(const llm_model *m, int max_len);
void llm_kvcache_free(llm_kvcache *kv);
void llm_kvcache_reset(llm_kvcache *kv);
int llm_kvcache_len(const llm_kvcache *kv);
int llm_model_decode(llm_model *m, llm_kvcache *kv, const int32_t *tokens, int n, float *logits);

#endif
