/*
 * substr.h — exact substring dedup (Lee et al. 2022, "Deduplicating Training Data Makes
 * Language Models Better"): remove every span of at least min_len bytes that occurs earlier in
 * the corpus, so that the first occurrence of each repeated span is kept.
 *
 * Definition (the brute-force oracle of the tests): a window is min_len consecutive bytes of
 * one document's text; a window is a duplicate when the same bytes occur at an earlier
 * position of the corpus (documents in input order, texts back to back, a window never
 * crossing a document's end). The bytes removed from a document are the union of its
 * duplicate windows, widened to whole UTF-8 characters. A span that occurs twice is thus
 * removed where it occurs the second time, and a document whose text is all repeated
 * (boilerplate seen before, a copied page) loses all of it.
 *
 * How: the texts go to a temporary file; at finish, a shard of whole documents at a time
 * goes into a buffer whose suffix array libdivsufsort builds, and the permuted LCP array
 * (computed in text order, capped at min_len) takes the array's memory while the array is
 * streamed back from a second temporary file. Walking the array, kept suffixes (window inside
 * the document) that share min_len bytes with the kept one before them form a run: every
 * member but the earliest starts a duplicate window (one bit per text byte). With several
 * shards, each run's earliest window (16 bytes: its first 8 bytes, position and LCP with the
 * run before) goes to a third file, and a binary tree of LCP merges, earlier shards on the
 * left, marks the windows an earlier shard holds too. As the reference implementation does
 * for C4, no suffix array of the whole corpus is ever held.
 *
 * Shards: at most budget / 5 bytes, and at most a quarter of the text when that is more than
 * 16 MiB (a document larger than a shard is a shard alone).
 * Memory: the shard and its suffix array, 5 bytes per byte of a shard (so 1.25 per byte of
 * text once the text is over 64 MiB); one bit per text byte for the duplicate windows; 8
 * bytes per document; during the merge, the text (1 byte per byte) and 64 KiB per shard.
 * Disk: the text (1 byte per byte), the largest shard's suffix array (4 bytes per byte of
 * it), and with several shards 16 bytes per distinct window of each shard.
 * Not thread safe.
 */
#ifndef LLM_SUBSTR_H
#define LLM_SUBSTR_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

typedef struct llm_substr llm_substr;

/* 1 <= min_len <= 1 << 20; budget: bytes for a shard's buffer and suffix array; tmpdir as in io.h. */
llm_substr *llm_substr_new(size_t min_len, size_t budget, const char *tmpdir);
void llm_substr_free(llm_substr *s);

/* Pass 1: the next document's text. LLM_EIO when a temporary file fails (the detail says
 * why; later calls do nothing and finish returns the error). */
int llm_substr_add(llm_substr *s, const char *text, size_t n);
/* After the last add: the last shard, the merge, the duplicate windows. */
int llm_substr_finish(llm_substr *s);

/*
 * Pass 2, the documents again in the same order: the spans of the next document's text to
 * remove, as *nspans pairs [start, end) in increasing order, disjoint and not adjacent,
 * at character boundaries (valid until the next call). LLM_EINVAL when the text is not the
 * length it had in pass 1 (the input changed between the passes).
 */
int llm_substr_next(llm_substr *s, const char *text, size_t n, const uint64_t **spans,
                    size_t *nspans);
/* The text without its spans (as llm_substr_next gives them), appended to out. */
void llm_substr_cut(const char *text, size_t n, const uint64_t *spans, size_t nspans,
                    llm_buf *out);

/* For the stats: text bytes read, shards built, bytes removed in pass 2 so far, bytes
 * written to disk, and the largest memory held (shard, array, bitmap, document table). */
typedef struct {
	uint64_t bytes, shards, removed, disk, memory;
} llm_substr_stats;
void llm_substr_get_stats(const llm_substr *s, llm_substr_stats *st);

#endif
