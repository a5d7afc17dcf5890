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
 * Memory, for a piece of n bytes. Counting: n + 16 bytes (bytes, offset, count) plus 4-byte
 * hash slots at most half full (8 to 16 bytes). Training: 5n + 20 bytes per piece trained on
 * (bytes, offset, count, symbols as 32-bit ids and their number) and, per distinct adjacent
 * pair, a 40-byte entry, 8 to 16 bytes of slots and a 16-byte heap entry (about 100 bytes
 * with growth slack) plus a list of the pieces it occurs in (4 bytes each, 16 of allocation).
 * On the samples at 32k tokens the pairs and lists take 30 bytes per byte of the pieces.
 * Not bounded by the budget: about 100 bytes per vocabulary token.
 * Counting pairs costs O(total symbols); each merge touches only the pieces that contain it.
 *
 * With a budget (llm_bpe_trainer_set_memory), what the above holds stays within it:
 *  - a piece table that would outgrow it (less a 64 KiB write buffer) is sorted by piece and
 *    written as a run to one unlinked temporary file, and counting starts again in the same
 *    memory;
 *  - at training the runs are merged with read windows of an eighth of the budget (in several
 *    passes when there are too many runs for 4 KiB windows), summing each piece's counts;
 *  - training first keeps every piece whose words (5n + 20 bytes per piece) fit, so that a
 *    budget the unlimited run fits in gives the unlimited run's tokenizer. When the pairs
 *    outgrow the budget, training starts again (llm_bpe_train_stats.retrains) from the most
 *    frequent pieces whose training state fits: all pieces seen at least T times, T the
 *    smallest count for which 5n + 20 bytes per piece plus a pair allowance per byte do (twice
 *    what the pairs took per byte, at least 40); and again with a larger allowance if they
 *    still outgrow it. An array that would grow past the budget grows by an eighth instead,
 *    and training stops after that merge, so the budget is passed by at most an eighth of one
 *    array.
 * Pieces seen equally often are kept or pruned together: the result depends neither on the
 * order of the input nor on where runs were cut. When nothing is pruned the tokenizer is the
 * same, byte for byte, as without a budget, spilled or not. Pruned pieces are mostly long and
 * unique (runs of CJK text or white space), so the stats give the pruned bytes too.
 * Not thread safe.
 */
#ifndef LLM_BPE_TRAIN_H
#define LLM_BPE_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

typedef struct llm_bpe_trainer llm_bpe_trainer;

/* pattern: a pre-tokenizer regex (see llm_pretok_named for the named ones). LLM_EINVAL on a
 * bad pattern. */
int llm_bpe_trainer_new(llm_bpe_trainer **tr, const char *pattern);
/* A pre-tokenizer of several patterns, each splitting every piece of the one before
 * (llm_pretok_named_seq; written as a Sequence of Splits). */
int llm_bpe_trainer_new_seq(llm_bpe_trainer **tr, const char *const *patterns, size_t n);
void llm_bpe_trainer_free(llm_bpe_trainer *tr);

/*
 * Bound memory to budget bytes (0: unlimited, the default); temporary files go to tmpdir
 * (NULL: $TMPDIR, else /tmp; the string must outlive the trainer). Call before the first add.
 */
void llm_bpe_trainer_set_memory(llm_bpe_trainer *tr, size_t budget, const char *tmpdir);
/* The piece table's share alone (default: the budget), so that tests can spill without
 * pruning. */
void llm_bpe_trainer_set_table_memory(llm_bpe_trainer *tr, size_t bytes);

/* Count the pieces of one text (UTF-8; invalid bytes are pieces of their own). LLM_EIO when
 * a run cannot be written; every later add or train then fails too. */
int llm_bpe_trainer_add(llm_bpe_trainer *tr, const char *text, size_t len);

/*
 * Learn merges until the vocabulary (256 bytes + merges + specials) has vocab_size tokens or
 * no pair occurs min_freq times. LLM_EINVAL when vocab_size < 256 + nspecials or a special
 * is empty or repeated; LLM_EIO when the runs cannot be read back.
 */
int llm_bpe_trainer_train(llm_bpe_trainer *tr, size_t vocab_size, uint64_t min_freq,
                          const char *const *specials, size_t nspecials);

typedef struct {
	uint64_t pieces, occurrences;     /* distinct pieces of the input, and their occurrences */
	uint64_t bytes;                   /* bytes of the occurrences (of the text) */
	uint64_t pruned_pieces;           /* distinct pieces left out of training */
	uint64_t pruned_occurrences;      /* their occurrences */
	uint64_t pruned_bytes;            /* and the bytes of those */
	uint64_t min_count;               /* pieces seen fewer times were pruned (1: none) */
	uint64_t pairs;                   /* distinct adjacent pairs made while training */
	unsigned runs;                    /* sorted runs written to disk while counting */
	unsigned merge_passes;            /* merges of runs into longer runs before training */
	unsigned retrains;                /* restarts with fewer pieces when the pairs outgrew */
	size_t peak_memory;               /* most bytes held by the counted and trained state */
} llm_bpe_train_stats;

/* After llm_bpe_trainer_train. */
void llm_bpe_trainer_stats(const llm_bpe_trainer *tr, llm_bpe_train_stats *st);

/* Number of tokens of the trained vocabulary. */
size_t llm_bpe_trainer_vocab_size(const llm_bpe_trainer *tr);

void llm_bpe_trainer_write_hf(const llm_bpe_trainer *tr, llm_buf *out);
void llm_bpe_trainer_write_tiktoken(const llm_bpe_trainer *tr, llm_buf *out);

#endif
