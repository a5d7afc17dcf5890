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
 *    outgrow the budget before the first merge, that round starts again
 *    (llm_bpe_train_stats.retrains) from the most frequent pieces whose training state fits:
 *    all pieces seen at least T times, T the smallest count for which 5n + 20 bytes per piece
 *    plus a pair allowance per byte do (twice what the pairs took per byte, at least 40).
 *    An array that would grow past the budget grows by an eighth instead, and the round
 *    stops after that merge, so the budget is passed by at most an eighth of one array.
 *  - the vocabulary is reached in rounds (llm_bpe_train_stats.rounds), not cut short by the
 *    budget: a round ends when its pairs outgrow the budget, or, when it left pieces out (T
 *    above 1), once its most frequent pair is seen fewer than T times (a pair of the pieces
 *    left out may then be as frequent) or its pieces have no pair left. Every piece (all of
 *    them are on disk: the runs, or the table written out) is then read again and encoded
 *    with the merges so far; those left with one token are done; of the others the next
 *    round keeps those seen at least T' times and a sample of the rarer ones, each seen c
 *    times kept with probability c / T' (by its hash: the same whatever the order) and
 *    counted T' times, so that a pair's count stays right on average even when it comes
 *    from many rare pieces, as Chinese characters do. T' is the smallest threshold whose
 *    sample is expected to fit (20 bytes per word, 4 per token, the pair allowance per
 *    token). Each round makes one merge at least, so training ends.
 *  - which merges are exact: as long as no round has left a piece out, the merges are those
 *    of a run without a budget (llm_bpe_train_stats.exact_merges counts them): a round on
 *    every piece, encoded with the merges so far, continues the same greedy choice with the
 *    same counts and ties. After a round that left pieces out they are an approximation
 *    (the counts of the pieces kept, then of samples).
 *  - the merges and the vocabulary, about 100 bytes per token, are not within the budget.
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

/*
 * SuperBPE (Liu et al. 2025, "SuperBPE: Space Travel for Language Models"): train the
 * ordinary subword merges only until the vocabulary has transition tokens, then go on
 * learning merges on the pieces of a second pre-tokenizer, pattern (NULL:
 * LLM_BPE_SUPERBPE_PATTERN), which does not split at spaces, so that the later tokens may
 * span several words ("superwords"). The second stage's pieces, counted while adding, start
 * as the tokens of the first stage's merges. The tokenizer written pre-tokenizes with pattern
 * alone, as SuperBPE's tokenizers do, and encoding applies every merge by rank in its pieces.
 * Both pieces tables count at once, in half of the table's share each; the second stage
 * trains in rounds within the budget as later rounds do (above). Call after
 * llm_bpe_trainer_set_memory and before the first add. LLM_EINVAL on a bad pattern or a
 * transition below 256.
 */
int llm_bpe_trainer_set_superbpe(llm_bpe_trainer *tr, const char *pattern, size_t transition);

/* The second stage's pre-tokenizer of the SuperBPE scripts (github.com/PythonNut/superbpe,
 * scripts/extend_tokenizer.sh): one to three digits, runs of two or more punctuation
 * characters with the line breaks after them, and runs of spaces before a space or a line
 * break are pieces; the text between them, words and the single spaces before them, is one. */
#define LLM_BPE_SUPERBPE_PATTERN "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]{2,}[\\r\\n/]*| +(?!\\S)"

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
	uint64_t pruned_pieces;           /* distinct pieces left out of the first round */
	uint64_t pruned_occurrences;      /* their occurrences */
	uint64_t pruned_bytes;            /* and the bytes of those */
	uint64_t min_count;               /* the first round left out pieces seen fewer times */
	uint64_t pairs;                   /* distinct adjacent pairs made while training */
	unsigned runs;                    /* sorted runs written to disk while counting */
	unsigned merge_passes;            /* merges of runs into longer runs before training */
	unsigned retrains;                /* rounds tried again with fewer pieces when the pairs
	                                   * outgrew the budget before the round's first merge */
	unsigned rounds;                  /* rounds of training (see above) */
	uint64_t first_merges;            /* merges learned in the first round */
	uint64_t superbpe_from;           /* SuperBPE: the first stage's merges */
	uint64_t exact_merges;            /* the leading merges that are those of a run without a
	                                   * budget: all of them when no round left pieces out */
	size_t peak_memory;               /* most bytes held by the counted and trained state */
} llm_bpe_train_stats;

/* After llm_bpe_trainer_train. */
void llm_bpe_trainer_stats(const llm_bpe_trainer *tr, llm_bpe_train_stats *st);

/* Number of tokens of the trained vocabulary. */
size_t llm_bpe_trainer_vocab_size(const llm_bpe_trainer *tr);

void llm_bpe_trainer_write_hf(const llm_bpe_trainer *tr, llm_buf *out);
void llm_bpe_trainer_write_tiktoken(const llm_bpe_trainer *tr, llm_buf *out);

#endif
