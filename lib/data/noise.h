/*
 * noise.h — token-level noise on model inputs, labels untouched (llm-noise).
 *
 * A document is noised with probability docs; its inputs start as a copy of its labels (or of
 * inputs it already has) and then, in this order:
 *   1. confusions: scanning left to right, where a confusion's "from" sequence starts, the
 *      "to" sequence replaces it with probability confuse, and the scan continues after it
 *      (several candidates at one position: the longest "from" wins, then the first loaded);
 *   2. swaps: scanning left to right, the pair (i, i+1) is exchanged with probability swap
 *      and the scan continues at i+2, so swaps never overlap; the expected share of tokens
 *      that start a swap is swap / (1 + swap);
 *   3. masks: every position becomes mask_id with probability mask.
 * Only equal-length confusion pairs are kept: the inputs must stay aligned with the labels
 * token for token, so a pair whose sequences differ in length is refused by
 * llm_confusions_add (LLM_EINVAL), and tools skip and count it.
 *
 * Determinism: every random draw for a document comes from a generator seeded with (seed,
 * key), where key is the document's identity (llm_noise_doc_key: XXH3-64 of its "id", or of
 * its tokens when it has none). The same document gets the same noise wherever it sits in the
 * stream, and with any number of threads.
 *
 * Memory: the confusion table (about 32 bytes plus the sequences per pair). Thread safety:
 * options and table are read-only during llm_noise_apply; call it from any thread.
 */
#ifndef LLM_NOISE_H
#define LLM_NOISE_H

#include <stddef.h>
#include <stdint.h>

#include "tok/bpe.h"

typedef struct llm_confusions llm_confusions;

llm_confusions *llm_confusions_new(void);
void llm_confusions_free(llm_confusions *c);
/* Add a pair; LLM_EINVAL when the lengths differ or are 0 (nothing added). */
int llm_confusions_add(llm_confusions *c, const uint32_t *from, size_t from_n,
                       const uint32_t *to, size_t to_n);
size_t llm_confusions_count(const llm_confusions *c);
/*
 * Load a confusions file (any compression): one directed pair per line, "FROM<TAB>TO";
 * blank lines and lines starting with '#' are skipped. With a tokenizer, FROM and TO are
 * strings, each encoded alone (so a word met after a space needs its leading space: " their\t
 * there"); without one, each side is token ids separated by spaces ("318 1110\t318 1111").
 * Pairs whose sides have different token lengths are skipped and counted in *skipped.
 * LLM_EFORMAT with "FILE:LINE: what" for a line without a tab or with a bad id.
 */
int llm_confusions_load(llm_confusions *c, const char *path, const llm_bpe *bpe,
                        uint64_t *skipped);
/* Largest token id in any pair (for checks against a vocabulary), 0 when empty. */
uint32_t llm_confusions_max_id(const llm_confusions *c);

typedef struct {
	double docs;        /* fraction of documents noised */
	double mask;        /* per-token probability of masking */
	double swap;        /* per-pair probability of an adjacent swap */
	double confuse;     /* per-occurrence probability of a confusion */
	uint32_t mask_id;
	uint64_t seed;
	const llm_confusions *confusions; /* may be NULL */
} llm_noise_opts;

typedef struct {
	uint64_t docs, docs_noised, tokens, tokens_noised; /* tokens_noised: in noised documents */
	uint64_t masked, swapped, confused;                 /* swapped: pairs; confused: occurrences */
	uint64_t changed;                                   /* positions where input != label */
} llm_noise_counts;

/* Defaults: docs 0.05, mask 0.03, swap 0.15, confuse 0.01, mask_id 0, seed 0. */
void llm_noise_opts_init(llm_noise_opts *o);

/* The identity of a document: XXH3-64 of its id bytes, or of its tokens when id is NULL. */
uint64_t llm_noise_doc_key(const char *id, size_t id_len, const uint32_t *labels, size_t n);

/*
 * Whether llm_noise_apply would noise the document of this key: its first draw, with no
 * tokens needed. When it would not (0), the document is counted as a clean one of n tokens
 * and needs no llm_noise_apply: its inputs are its labels, or the inputs it has. When it
 * would (1), nothing is counted: call llm_noise_apply. This lets a caller pass the clean
 * documents, the large majority, through as they are stored.
 */
int llm_noise_select(const llm_noise_opts *o, uint64_t key, size_t n, llm_noise_counts *counts);

/*
 * Noise one document. labels: n tokens (read only); inputs: n tokens, holding the inputs to
 * start from (a copy of labels for a clean document), modified in place. Returns 1 when the
 * document was selected for noise, 0 otherwise (inputs unchanged). counts are added to.
 */
int llm_noise_apply(const llm_noise_opts *o, uint64_t key, const uint32_t *labels,
                    uint32_t *inputs, size_t n, llm_noise_counts *counts);

#endif
