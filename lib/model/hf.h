/*
 * hf.h — open a model for evaluation from an llmkit checkpoint or a Hugging Face
 * Llama-architecture model directory.
 *
 * A path names (tried in this order):
 *   - an llmkit checkpoint, a checkpoint root or a run directory (ckpt.h's llm_ckpt_resolve);
 *   - a Hugging Face model directory: config.json (LlamaConfig; model_type "llama" or absent)
 *     and model.safetensors, or model.safetensors.index.json with its "weight_map" shards.
 * Weights may be F32, BF16 or F16 (or F64); they become the fp32 parameters of the model.
 * The tokenizer that goes with the model is looked for beside it (a Hugging Face model's
 * tokenizer.json) and, for a checkpoint, in its run directory (where llm-train --tokenizer
 * copies it). Every tensor of the model must be present with its exact shape. A tensor the model has no
 * place for is refused (LLM_EUNSUPPORTED: biases, another architecture), except the ones
 * transformers also ignores: "*.rotary_emb.inv_freq" buffers and "lm_head.weight" of a model
 * with tied embeddings.
 *
 * Hostile files: the safetensors reader validates every file before use, and the parameter
 * count of config.json may not exceed the bytes of the weights before the model is allocated,
 * so a small file never makes a large allocation.
 *
 * A weight that is NaN or infinite is refused (LLM_EFORMAT naming the file and the tensor, as
 * llm-train refuses such a checkpoint): every score of that model would be NaN.
 *
 * Errors: LLM_ENOTFOUND (nothing loadable at path), LLM_EFORMAT / LLM_EUNSUPPORTED / LLM_EIO
 * with the file in the detail. Not thread safe (error detail).
 */
#ifndef LLM_HFLOAD_H
#define LLM_HFLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "model.h"
#include "tok/bpe.h"

typedef struct {
	char *dir;            /* the directory the model came from (malloc'd) */
	int llmkit;           /* 1: an llmkit checkpoint with state.json */
	int64_t step, tokens; /* state.json's "step" and "tokens"; -1 when unknown */
	uint64_t tokenizer_id; /* state.json's "tokenizer_id"; 0 when unknown */
	int64_t seed, batch, seq_len; /* the run's, for its validation draws; -1 when unknown */
	char *tokenizer;      /* tokenizer.json beside the model, else in the run directory of an
	                       * llmkit checkpoint (RUN/ckpt/X -> RUN/tokenizer.json); NULL: none */
	int dtype;            /* LLM_ST_* of the embedding weights as stored */
} llm_hf_info;

/* Load the model at path. On success *m is a new model and info (may be NULL) is filled (release
 * it with llm_hf_info_release). *m is NULL on failure. */
int llm_hf_open(const char *path, llm_model **m, llm_hf_info *info);
void llm_hf_info_release(llm_hf_info *info);

/* A tensor beside the decoder's that the caller takes (a head's: "score.weight"). */
typedef struct {
	const char *name;
	int64_t shape[2]; /* its exact shape, [out, in] */
	float *data;      /* shape[0] x shape[1] floats, filled when found */
	int found;        /* set by the load: whether a file had it */
} llm_hf_tensor;

typedef struct {
	int headless;         /* no language-model head: the model is built with tied embeddings
	                       * (llm_model_get_config says so), a file's lm_head.weight is ignored */
	llm_hf_tensor *extra; /* further tensors: accepted, read into data when present, finite */
	size_t nextra;
} llm_hf_opts;

/* llm_hf_open with options (o NULL: llm_hf_open). A missing extra tensor is no error: the
 * caller reads found. */
int llm_hf_open_with(const char *path, llm_model **m, llm_hf_info *info, const llm_hf_opts *o);

/*
 * What makes an llmkit checkpoint a complete Hugging Face model directory beside config.json,
 * model.safetensors and tokenizer.json (the tokenizer's own bytes), so that transformers'
 * AutoTokenizer.from_pretrained(dir) gives llm-tokenize's ids:
 *   tokenizer_config.json: PreTrainedTokenizerFast over tokenizer.json, its bos/eos tokens as
 *     llmkit uses them (llm_bpe_bos/llm_bpe_eos; null when the tokenizer has none), pad the
 *     end-of-text token (padding is masked, never scored), nothing added to an encoding
 *     (add_bos_token, add_eos_token false: llmkit adds its start and end tokens itself), no
 *     clean-up of spaces on decoding, model_max_length the model's positions. Without it
 *     transformers takes config.json's model_type and builds a Llama tokenizer whose <s>
 *     and </s> lie outside the vocabulary.
 *   generation_config.json: bos/eos/pad ids of config c (null where c has none).
 * Appended to out.
 */
void llm_hf_tokenizer_config(const llm_bpe *bpe, int model_max_length, llm_buf *out);
void llm_hf_generation_config(const llm_model_config *c, llm_buf *out);

/* The same over memory: config.json text and one safetensors file image (the fuzz target's
 * entry point). name is used in messages. */
int llm_hf_from_mem(llm_model **m, const char *config, size_t config_len, const void *st,
                    size_t st_len, const char *name);

#endif
