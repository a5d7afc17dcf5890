/*
 * eval.h — evaluation of a language model (model.h): loss, perplexity and bits per byte per
 * domain; multiple-choice scoring as lm-evaluation-harness defines acc and acc_norm; sampling
 * and generation with a key-value cache.
 *
 * Loss, in one of two ways. Stream (llm_eval_doc): documents are added one at a time with
 * their domain; each domain's documents form one stream, in the order given, preceded by the start id (the end-of-text id, which is what
 * precedes a document in training windows); the stream is cut into windows of T+1 tokens
 * overlapping by one, so every token of every document is predicted exactly once, with the
 * context of its window (as llm-train's windows, which also run across document boundaries).
 * The last window of a domain is padded (ignored targets). Windows go through the training
 * forward B at a time; the per-token losses are the cross-entropy of ops.h in fp32, summed in
 * double. Windows can also be given directly (llm_eval_window), e.g. the trainer's own
 * validation batches, so that both tools compute the same number on the same batches.
 *
 * Rolling (llm_eval_doc_rolling): each document alone, as lm-evaluation-harness's
 * loglikelihood_rolling scores it: its tokens (no end-of-text) in windows of T, the first
 * token conditioned on the prefix token (start_id: lm-evaluation-harness's prefix_token_id,
 * BOS else EOS), each later window predicting the next T tokens, or those left, from the T
 * tokens before each. Its bytes are the UTF-8 bytes of the text and its words lm-evaluation-
 * harness's count_words, len(re.split(r"\s+", text)); so
 *   bits_per_byte   = -sum ln p / ln 2 / sum bytes  (lm-evaluation-harness's bits_per_byte)
 *   byte_perplexity = exp(-sum ln p / sum bytes)    (weighted_perplexity over bytes)
 *   word_perplexity = exp(-sum ln p / sum words)    (weighted_perplexity over words)
 * Windows of both kinds, of any document, share batches; a batch is as long as its longest
 * window, so short documents do not cost a full window each.
 *
 * Bits per byte (comparable across tokenizers): the negative log-likelihood in bits of the
 * tokens that spell text, divided by the UTF-8 bytes they spell. Special tokens (end-of-text)
 * are predicted and count in loss and perplexity, but spell no bytes and are left out of bits
 * per byte, as lm-evaluation-harness scores a document's text without an end-of-text token.
 * Without a tokenizer the byte count is unknown and bits per byte is NaN.
 *
 * Scorers: llm_evaluator_set_scorer / llm_chooser_set_scorer take the per-token losses from
 * another forward, e.g. a GPU copy of the model (llm_cudamodel_token_losses, llm-eval --device
 * cuda), instead of this model's logits. With the GPU they come from its fused cross-entropy
 * (fp32 log-sum-exp over the logits in the compute type) rather than the double log-sum-exp
 * here; everything else (windows, sums, bytes, choices) is the same code. In fp32 the two
 * agree to about 1e-6 relative per token (the products' summation order). A function pointer
 * rather than a cudamodel.h dependency: users of eval.c do not link the CUDA backend.
 *
 * Memory: the model's activations for B x T plus B x T x V logits, and per domain a window
 * buffer of T+1 tokens. Thread safety: an evaluator uses its model; one per thread.
 */
#ifndef LLM_EVAL_H
#define LLM_EVAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/hash.h"
#include "model.h"
#include "tok/bpe.h"

/* Sums of one domain, or of all. */
typedef struct {
	uint64_t docs;      /* documents added (windows given directly count none) */
	uint64_t tokens;    /* predicted tokens, special tokens included */
	double nats;        /* sum of -ln p over them */
	uint64_t text_tokens; /* predicted tokens that spell bytes (known only with a tokenizer) */
	double text_nats;   /* sum of -ln p over those */
	uint64_t bytes;     /* the UTF-8 bytes they spell (rolling: of the documents' text) */
	uint64_t words;     /* rolling documents' words (llm_eval_count_words); 0 in a stream */
} llm_eval_sums;

void llm_eval_sums_add(llm_eval_sums *to, const llm_eval_sums *s);
double llm_eval_loss(const llm_eval_sums *s);          /* nats / tokens; NaN when none */
double llm_eval_ppl(const llm_eval_sums *s);           /* exp(loss) */
double llm_eval_bits_per_byte(const llm_eval_sums *s); /* text_nats / ln 2 / bytes; NaN when 0 */
double llm_eval_byte_ppl(const llm_eval_sums *s);      /* exp(text_nats / bytes); NaN when 0 */
double llm_eval_word_ppl(const llm_eval_sums *s);      /* exp(text_nats / words); NaN when 0 */
/* Words of text[n] as lm-evaluation-harness counts them: len(re.split(r"\s+", text)) with
 * Python's Unicode white space (str.isspace), so one more than the runs of white space. */
size_t llm_eval_count_words(const char *text, size_t n);

typedef struct llm_evaluator llm_evaluator;

/*
 * An evaluator over model m (which it uses, not owns) with windows of seq_len tokens
 * (<= max_position_embeddings), batch windows per forward. bpe (may be NULL; used, not owned)
 * gives the bytes of each token. start_id: the token that precedes each domain's stream, or -1
 * for none (then a stream's first token is context only).
 */
llm_evaluator *llm_evaluator_new(llm_model *m, int seq_len, int batch, const llm_bpe *bpe,
                                 int64_t start_id);
void llm_evaluator_free(llm_evaluator *ev);
/* Per-token losses of a batch: losses[B*T] receives -ln p(targets[i]) given the inputs of its
 * row up to i, 0 where targets[i] < 0; LLM_OK or a negative status with its detail. */
typedef int (*llm_token_loss_fn)(void *ctx, const int32_t *inputs, const int32_t *targets, int B,
                                 int T, float *losses);
/* Score with fn(ctx, ...) instead of the model's own forward (fn NULL: the model again); the
 * scorer must compute the same model. Call before adding windows. */
void llm_evaluator_set_scorer(llm_evaluator *ev, llm_token_loss_fn fn, void *ctx);

/* Add a document of domain (NULL or "" = "unknown"). Tokens must be below the model's vocabulary
 * (LLM_EINVAL naming the token otherwise, nothing added). May run forwards. */
int llm_eval_doc(llm_evaluator *ev, const char *domain, const uint32_t *tokens, size_t n);
/* Add a document of domain alone, in rolling windows: text[len] (its bytes and words are
 * counted) and its tokens[n]. Needs start_id >= 0 (LLM_EINVAL otherwise, as for a token
 * beyond the model; nothing added). May run forwards. */
int llm_eval_doc_rolling(llm_evaluator *ev, const char *domain, const char *text, size_t len,
                         const uint32_t *tokens, size_t n);
/* Add one window: inputs[T] and targets[T] (< 0: ignored), T <= seq_len. */
int llm_eval_window(llm_evaluator *ev, const char *domain, const int32_t *inputs,
                    const int32_t *targets, int T);
/* Evaluate every pending window (the partial last one of each stream too). Call before reading
 * the sums; more documents may follow (they start new windows, with no context). */
int llm_eval_flush(llm_evaluator *ev);

size_t llm_eval_ndomains(const llm_evaluator *ev);              /* in first-seen order */
const char *llm_eval_domain_name(const llm_evaluator *ev, size_t i);
const llm_eval_sums *llm_eval_domain_sums(const llm_evaluator *ev, size_t i);
void llm_eval_total(const llm_evaluator *ev, llm_eval_sums *out);

/*
 * Multiple choice. One item: a context, n choices and the index of the right one. Each choice
 * is scored as lm-evaluation-harness's loglikelihood request (context, delimiter + choice):
 * trailing whitespace of the context moves to the continuation, context and context +
 * continuation are encoded, and the continuation's tokens are those of the whole past the
 * context's; the context is preceded by the prefix id (BOS, else end-of-text; -1: none) and cut
 * from the left to fit the model. ll[i] = sum of ln p of choice i's continuation tokens.
 *   acc      = argmax_i ll[i] == gold
 *   acc_norm = argmax_i ll[i] / (characters of choice i, delimiter excluded) == gold
 * (numpy argmax: the first of equal maxima). All choices run as one batch of the training
 * forward, padded to the longest.
 */
typedef struct {
	char *context;
	char **choices;
	size_t nchoices;
	size_t gold;
	char *domain; /* "unknown" when absent */
	char *id;     /* NULL when absent */
} llm_choice_item;

/* Parse one task line {"context": str, "choices": [str, ...], "gold": int, "domain": str?,
 * "id": str|int?}. LLM_EFORMAT with the reason (no position) on anything else, gold out of
 * range or fewer than 2 choices. llm_choice_item_release frees it (also after a failure). */
int llm_choice_parse(llm_choice_item *it, const char *line, size_t n);
void llm_choice_item_release(llm_choice_item *it);

typedef struct llm_chooser llm_chooser;

/* delimiter: between context and each choice (lm-evaluation-harness: " "). */
llm_chooser *llm_chooser_new(llm_model *m, const llm_bpe *bpe, int64_t prefix_id,
                             const char *delimiter);
void llm_chooser_free(llm_chooser *c);
/* As llm_evaluator_set_scorer. */
void llm_chooser_set_scorer(llm_chooser *c, llm_token_loss_fn fn, void *ctx);
/* Score it; ll[nchoices] receives the log-likelihoods, *pred / *pred_norm the chosen indices.
 * LLM_EINVAL when a continuation encodes to no token or a token is beyond the model. */
int llm_chooser_score(llm_chooser *c, const llm_choice_item *it, double *ll, size_t *pred,
                      size_t *pred_norm);

/* Continuation tokens of each choice of the last item llm_chooser_score scored (valid until the
 * next call): the count of log-probabilities in ll[i]. */
const size_t *llm_chooser_ntokens(const llm_chooser *c);

/* lm-evaluation-harness's mean_stderr (sample standard deviation / sqrt(n)) of n values of
 * which hits are 1 and the others 0, as acc and acc_norm are: sqrt(p (1 - p) / (n - 1)) with
 * p = hits / n. NaN when n < 2, where the sample deviation is undefined. */
double llm_eval_acc_stderr(uint64_t hits, uint64_t n);

/* Append to out one --log-samples record of a scored item, no newline:
 *   {"doc_id": N, "id": ..., "domain": ..., "context": ..., "choices": [...],
 *    "loglikelihoods": [...], "tokens": [...], "chars": [...], "pred": i, "pred_norm": i,
 *    "gold": i, "acc": 0|1, "acc_norm": 0|1}
 * doc_id: the item's place in the input; "id" only when the item has one; "tokens" the
 * continuation tokens of each choice, "chars" the characters acc_norm divides by. */
void llm_choice_sample_json(llm_buf *out, const llm_choice_item *it, uint64_t doc_id,
                            const double *ll, const size_t *ntokens, size_t pred,
                            size_t pred_norm);

/*
 * Sampling, in the order of transformers' logits processors: temperature, then top-k, then
 * top-p (the smallest set of most likely tokens whose probability reaches p; always at least
 * one). temperature 0 is greedy: the largest logit, the lowest id among equals, no random
 * draw. Ties in the sort are broken by id, so a seed fixes the output on any machine with the
 * same logits.
 */
typedef struct {
	double temperature; /* >= 0 */
	int top_k;          /* 0 = off */
	double top_p;       /* (0, 1]; 1 = off */
} llm_sampling;

typedef struct llm_sampler llm_sampler;
llm_sampler *llm_sampler_new(int vocab, const llm_sampling *s, uint64_t seed);
void llm_sampler_free(llm_sampler *s);
/* The next token from logits[vocab]. */
int32_t llm_sampler_next(llm_sampler *s, const float *logits);

/*
 * Generate up to max_new tokens after prompt[n] (n >= 1), stopping after stop_id (-1: never).
 * With use_cache the prompt is decoded once into a key-value cache and each new token costs one
 * decode step; without, every step runs the training forward over the whole sequence (the
 * reference the cache must equal). Sequences are cut to max_position_embeddings. Each new
 * token is given to emit (may be NULL) as it comes; a nonzero return stops. out (may be NULL)
 * receives the new tokens (room for max_new); *nout their count.
 */
int llm_generate(llm_model *m, const int32_t *prompt, int n, int max_new, int64_t stop_id,
                 llm_sampler *s, int use_cache, int (*emit)(void *ctx, int32_t tok),
                 void *ctx, int32_t *out, int *nout);

#endif
