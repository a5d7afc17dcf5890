/*
 * wordlist.h — word lists (bad words, block lists) compiled into PCRE2 JIT patterns.
 *
 * Entries come from files (one per line; blank lines and lines starting with "#" are skipped,
 * surrounding whitespace and a final "\r" are trimmed) or from memory. Matching is
 * case-insensitive with Unicode case folding (PCRE2_CASELESS | PCRE2_UCP) and follows the
 * script of each entry:
 *  - an entry with a CJK character (Han, Kana, Hangul) matches as a substring anywhere,
 *    since those scripts do not separate words with spaces ("傻逼" in "你个傻逼吧");
 *  - any other entry matches as a whole word: not preceded or followed by a letter, a mark
 *    or a digit, so "ass" does not match "class" nor "assistant", but does match "ass!";
 *    CJK characters count as boundaries, since Chinese and Japanese run into Latin words
 *    without spaces ("他是个bitch");
 *  - a space inside an entry matches any run of white space ("2 girls 1 cup").
 * Matches are counted left to right without overlap; at one position the longest entry wins.
 * The entries are merged into prefix trees before compiling, so the patterns' size and speed
 * grow with the distinct prefixes, not with the number of entries. CJK entries are matched
 * byte by byte, so their case folding is ASCII only ("SB逼" matches "sb逼").
 * Text need not be valid UTF-8: no match spans an invalid byte sequence.
 *
 * A compiled list is immutable and may be used from many threads at once, each with its own
 * llm_wordlist_scratch. Errors: LLM_EIO for unreadable files (detail names the file),
 * LLM_EINVAL for an empty list or a pattern PCRE2 rejects.
 */
#ifndef LLM_WORDLIST_H
#define LLM_WORDLIST_H

#include <stddef.h>

typedef struct llm_wordlist llm_wordlist;

llm_wordlist *llm_wordlist_new(void);
void llm_wordlist_free(llm_wordlist *w);

/*
 * Skip CJK entries of fewer than n characters from now on (default 1: skip none). Lists such
 * as LDNOOBW zh hold single characters ("性", "乳") that, matched as substrings, hit most
 * ordinary Chinese text ("可能性", "乳制品").
 */
void llm_wordlist_set_cjk_min(llm_wordlist *w, size_t n);
/* Add one entry (UTF-8). Duplicates (after case folding) are kept once. */
void llm_wordlist_add(llm_wordlist *w, const char *word, size_t len);
/* Add every entry of a file (any compression the reader detects). */
int llm_wordlist_load(llm_wordlist *w, const char *path);
/* Distinct entries so far. */
size_t llm_wordlist_size(const llm_wordlist *w);

/* Build and JIT-compile the pattern; no more entries may be added after. */
int llm_wordlist_compile(llm_wordlist *w);
/* The PCRE2 patterns (after compile), for messages and tests: the whole-word entries' (UTF
 * mode) and the CJK substring entries' (byte mode); "" when there is no such entry. */
const char *llm_wordlist_pattern(const llm_wordlist *w);
const char *llm_wordlist_sub_pattern(const llm_wordlist *w);

/* Per-thread match state of a compiled list; NULL only when PCRE2 cannot allocate it. */
typedef struct llm_wordlist_scratch llm_wordlist_scratch;
llm_wordlist_scratch *llm_wordlist_scratch_new(const llm_wordlist *w);
void llm_wordlist_scratch_free(llm_wordlist_scratch *s);

typedef struct {
	size_t off, len; /* byte span of the match in the text */
} llm_wordlist_hit;

/*
 * Count the matches in text[0..len). The first max_hits of them are stored in hits (which
 * may be NULL when max_hits is 0). Returns the number of matches.
 */
size_t llm_wordlist_scan(const llm_wordlist *w, llm_wordlist_scratch *s, const char *text,
                         size_t len, llm_wordlist_hit *hits, size_t max_hits);

#endif
