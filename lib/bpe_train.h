/*
 * bpe_train.h — byte-level BPE training, written as a Hugging Face tokenizer.json.
 *
 * Texts are pre-tokenized (pretok.h) and their distinct pieces counted. Training starts from
 * the 256 byte tokens (ids 0..255, in byte order) and repeatedly merges the most frequent
 * adjacent pair, counted over all pieces weighted by their frequency. Ties go to the pair
 * with the lower (left, right) ids, so the same input always gives the same tokenizer. A merge
 * whose bytes already are a token reuses that token, as Hugging Face's trainer does. Special
 * tokens take the ids after the merges.
 *
 * Output: tokenizer.json with a BPE model (merges as "a b", in order), a ByteLevel
 * pre-tokenizer (the GPT-2 pattern) or Split(pattern, Isolated) + ByteLevel, a ByteLevel
 * decoder and the special tokens as added tokens: loadable by HF tokenizers and by bpe.h,
 * which encode identically with it. Optionally the ranks as a tiktoken file (ids as ranks).
 *
 * Memory: the distinct pieces of the input (bytes + counts) and, while training, every
 * distinct adjacent pair with the list of pieces it occurs in.
 * Counting pairs costs O(total symbols); each merge touches only the pieces that contain it.
 * Not thread safe.
 */
#ifndef LLM_BPE_TRAIN_H
#define LLM_BPE_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

typedef struct llm_bpe_trainer llm_bpe_trainer;

/* pattern: a pre-tokenizer regex (see llm_pretok_named for the named ones). LLM_EINVAL on a
 * bad pattern. */
int llm_bpe_trainer_new(llm_bpe_trainer **tr, const char *pattern);
void llm_bpe_trainer_free(llm_bpe_trainer *tr);

/* Count the pieces of one text (UTF-8; invalid bytes are pieces of their own). */
int llm_bpe_trainer_add(llm_bpe_trainer *tr, const char *text, size_t len);

/*
 * Learn merges until the vocabulary (256 bytes + merges + specials) has vocab_size tokens or
 * no pair occurs min_freq times. LLM_EINVAL when vocab_size < 256 + nspecials or a special
 * is empty or repeated.
 */
int llm_bpe_trainer_train(llm_bpe_trainer *tr, size_t vocab_size, uint64_t min_freq,
                          const char *const *specials, size_t nspecials);

/* Number of tokens of the trained vocabulary. */
size_t llm_bpe_trainer_vocab_size(const llm_bpe_trainer *tr);

void llm_bpe_trainer_write_hf(const llm_bpe_trainer *tr, llm_buf *out);
void llm_bpe_trainer_write_tiktoken(const llm_bpe_trainer *tr, llm_buf *out);

#endif
