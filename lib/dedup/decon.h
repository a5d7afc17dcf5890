/*
 * decon.h — benchmark decontamination: find the training documents that share an n-gram
 * with an evaluation item (GPT-3's rule: Brown et al. 2020, appendix C, 13-word n-grams).
 *
 * Items and documents are shingled alike (shingle.h: the same normalisation, units and n):
 * words for space-delimited scripts and, with LLM_UNITS_AUTO, one unit per Han or Kana
 * character, so that a Chinese or Japanese n-gram is n characters. A document matches when
 * one of its n-grams is an n-gram of an item; a text shorter than n units has no n-gram, so
 * short items cannot be matched (llm_decon_short counts them).
 *
 * Matching is exact on 64-bit n-gram hashes (two distinct n-grams collide with probability
 * about 2^-64 per pair), never a Bloom filter alone: while the set fits in half the budget
 * it is a hash table; past it the sorted set goes to a temporary file, found by binary
 * search behind a Bloom filter of the other half of the budget that only skips the lookups
 * of n-grams that are surely absent.
 *
 * Memory: the n-grams of the items pass through an external sort (xsort.h) within the
 * budget; then 16 bytes per distinct n-gram over the table's load factor, or the filter.
 * A document costs its shingles. Not thread safe.
 */
#ifndef LLM_DECON_H
#define LLM_DECON_H

#include <stddef.h>
#include <stdint.h>

#include "core/json.h"
#include "shingle.h"

typedef struct llm_decon llm_decon;

llm_decon *llm_decon_new(const llm_shingle_opts *o, size_t budget, const char *tmpdir);
void llm_decon_free(llm_decon *dc);

/* The n-grams of one text of item `item` (an item may have several texts: a context, its
 * choices). Returns the number of n-grams (0: the text is too short to be matched). */
size_t llm_decon_add(llm_decon *dc, uint32_t item, const char *text, size_t n);
/*
 * All texts of one benchmark record: its text field, "context", "question", "passage",
 * "answer", every string of "choices", and for an llm-eval choice task ("gold") the context
 * followed by its gold choice, as a document quoting the item would hold it. Returns the
 * number of n-grams (0: nothing in it can be matched).
 */
size_t llm_decon_add_item(llm_decon *dc, uint32_t item, const llm_json_rec *rec,
                          const char *field);
/* After the last add, before the first match. LLM_EIO when a temporary file fails. */
int llm_decon_ready(llm_decon *dc);
/* Distinct n-grams of the items; whether they went to disk. */
uint64_t llm_decon_ngrams(const llm_decon *dc);
int llm_decon_on_disk(const llm_decon *dc);

/*
 * The items a document shares an n-gram with: *items (valid until the next call) holds the
 * distinct items in the order their first shared n-gram appears in the text, *nitems of
 * them; returns the number of the document's n-grams that are an item's. An item's number
 * is the smallest of the items that have that n-gram. LLM_EIO as *err when the file fails.
 */
size_t llm_decon_match(llm_decon *dc, const char *text, size_t n, const uint32_t **items,
                       size_t *nitems, int *err);

#endif
