/*
 * wordlist.h — word lists (bad words, block lists) of any size, matched in one pass.
 *
 * Entries come from files (one per line; blank lines and lines starting with "#" are skipped,
 * surrounding whitespace and a final "\r" are trimmed) or from memory. Matching is
 * case-insensitive (Unicode simple lower case on both sides) and follows the script of each
 * entry:
 *  - an entry with a CJK character (Han, Kana, Hangul) matches wherever it occurs, since
 *    those scripts do not separate words with spaces ("傻逼" in "你个傻逼吧"), unless the
 *    caller gives the text's word boundaries (a segmenter's, for Chinese): then it must start
 *    and end at one, so that an entry inside a longer word is no hit ("性" is not in
 *    "可能性", segmented as one word);
 *  - any other entry matches as a whole word: not preceded or followed by a letter, a mark
 *    or a digit, so "ass" does not match "class" nor "assistant", but does match "ass!";
 *    CJK characters count as boundaries, since Chinese and Japanese run into Latin words
 *    without spaces ("他是个bitch"); an entry that starts or ends with a symbol ("🖕") needs
 *    no boundary on that side;
 *  - a "*" at the start or the end of an entry lifts the boundary on that side: "fuck*"
 *    matches "fucking", "*傻逼*" matches inside any word;
 *  - a space inside an entry matches any run of white space ("2 girls 1 cup").
 * Matches are counted left to right without overlap; at one position the longest entry wins.
 * Text need not be valid UTF-8: no match spans an invalid byte sequence.
 *
 * Engine: one Aho-Corasick automaton (aho.h) over the lower-cased UTF-8 of all entries, fed
 * the lower-cased text with white space runs collapsed; the boundary rules are checked on the
 * candidates it reports. The cost per byte of text does not grow with the number of entries:
 * lists of millions of rules (Chinese safety pipelines use such) compile in seconds and scan
 * at a rate that falls only with the cache misses of a larger automaton. Memory: 17 bytes
 * per distinct prefix of the entries' bytes (10^6 Chinese rules of 2 to 5 characters: 136
 * MB, 177 MB at the peak of compiling), and before compiling the entries' bytes plus 24 each.
 *
 * A compiled list is immutable and may be used from many threads at once, each with its own
 * llm_wordlist_scratch. Errors: LLM_EIO for unreadable files (detail names the file),
 * LLM_EINVAL for an empty list.
 */
#ifndef LLM_WORDLIST_H
#define LLM_WORDLIST_H

#include <stddef.h>
#include <stdint.h>

typedef struct llm_wordlist llm_wordlist;

llm_wordlist *llm_wordlist_new(void);
void llm_wordlist_free(llm_wordlist *w);

/*
 * Skip CJK entries of fewer than n characters from now on (default 1: skip none). Lists such
 * as LDNOOBW zh hold single characters ("性", "乳") that, matched as substrings, hit most
 * ordinary Chinese text ("可能性", "乳制品").
 */
void llm_wordlist_set_cjk_min(llm_wordlist *w, size_t n);
/* Add one entry (UTF-8). Duplicates (after case folding) count once; of two that differ only
 * in their "*", the more permissive stays. */
void llm_wordlist_add(llm_wordlist *w, const char *word, size_t len);
/* Add every entry of a file (any compression the reader detects). */
int llm_wordlist_load(llm_wordlist *w, const char *path);
/* Entries so far; after compile, distinct entries. */
size_t llm_wordlist_size(const llm_wordlist *w);

/* Build the automaton; no more entries may be added after. */
int llm_wordlist_compile(llm_wordlist *w);
/* Whether the compiled list has CJK entries (which word boundaries would restrict). */
int llm_wordlist_has_cjk(const llm_wordlist *w);

/* Per-thread match state of a compiled list. */
typedef struct llm_wordlist_scratch llm_wordlist_scratch;
llm_wordlist_scratch *llm_wordlist_scratch_new(const llm_wordlist *w);
void llm_wordlist_scratch_free(llm_wordlist_scratch *s);

typedef struct {
	size_t off, len; /* byte span of the match in the text */
} llm_wordlist_hit;

/*
 * Count the matches in text[0..len). bounds, when not NULL, holds len + 1 bits (bit i of
 * byte i / 8, least significant first): bit i set where a word starts or ends at byte i; CJK
 * entries must then start and end at such a place. The first max_hits matches are stored in
 * hits (which may be NULL when max_hits is 0). Returns the number of matches.
 */
size_t llm_wordlist_scan(const llm_wordlist *w, llm_wordlist_scratch *s, const char *text,
                         size_t len, const uint8_t *bounds, llm_wordlist_hit *hits,
                         size_t max_hits);

#endif
