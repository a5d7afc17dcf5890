/*
 * textscore.h — a document's text scored by a transformer, for the tools that score
 * documents (llm-score, llm-tox): a model directory is a sequence classifier or regressor
 * (seqcls.h) when its config.json says LlamaForSequenceClassification, and otherwise (any
 * llmkit checkpoint or run, or Hugging Face Llama directory, hf.h) a language model whose
 * one value is the document's perplexity.
 *
 * Text to tokens: the tokenizer.json found with the model (hf.h), the text encoded as plain
 * text (special-token text is not special), nothing added: what transformers' tokenizer
 * gives with the tokenizer_config.json llmkit writes (no BOS, no EOS added). A classifier
 * reads the first max_position_embeddings tokens. The perplexity is CCNet's measure on the
 * model's tokens, exp of the mean negative log-likelihood of every token of the document,
 * computed as `llm-eval loss --mode rolling` computes it for a document alone (eval.h:
 * lm-evaluation-harness's loglikelihood_rolling, the first token given the BOS, else the
 * end-of-text token).
 *
 * Values: a classifier's outputs (llm_seqcls_output), one per label; a regressor's; the
 * perplexity ("ppl"). Memory: the weights once; a scratch, one document's activations.
 * Thread safety: a textscore is read by any number of threads, each with its own scratch.
 * Errors: hf.h's and seqcls.h's, LLM_ENOTFOUND when path is no directory, LLM_EFORMAT for
 * a model without its tokenizer (or one larger than its vocabulary).
 */
#ifndef LLM_TEXTSCORE_H
#define LLM_TEXTSCORE_H

#include <stddef.h>

typedef struct llm_textscore llm_textscore;
typedef struct llm_textscore_scratch llm_textscore_scratch;

int llm_textscore_open(llm_textscore **out, const char *path);
void llm_textscore_free(llm_textscore *t);

/* The values per document, their names, and whether they are one value (a regressor's, a
 * perplexity: no probability). */
int llm_textscore_nvalues(const llm_textscore *t);
const char *const *llm_textscore_labels(const llm_textscore *t);
int llm_textscore_is_value(const llm_textscore *t);

/* NULL when the backend cannot start (the detail says why). */
llm_textscore_scratch *llm_textscore_scratch_new(const llm_textscore *t);
void llm_textscore_scratch_free(llm_textscore_scratch *s);

/* out[nvalues] for text[0..len): 0, or 1 when the text has no token (out is 0). Cannot fail:
 * lengths and token ids are checked when the model is opened. */
int llm_textscore_run(const llm_textscore *t, llm_textscore_scratch *s, const char *text,
                      size_t len, float *out);

#endif
