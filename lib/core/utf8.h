/*
 * utf8.h — UTF-8 validation, repair, decoding and Unicode character classes.
 *
 * Decoding follows the Unicode standard's "maximal subpart" rule (the one Python's
 * errors="replace" and WHATWG use): each maximal ill-formed subsequence becomes one U+FFFD.
 * Surrogates (U+D800..DFFF) and code points above U+10FFFF are ill-formed.
 *
 * Character classes come from tables generated from the Unicode Character Database
 * (scripts/gen-unicode.py -> lib/unicode_tables.h; Unicode version in LLM_UNICODE_VERSION).
 * Lookups are O(log n) with an ASCII fast path. All functions are pure and thread safe.
 */
#ifndef LLM_UTF8_H
#define LLM_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define LLM_UTF8_REPLACEMENT 0xFFFDu

/* Length of the longest valid UTF-8 prefix of s (== n when all of s is valid). */
size_t llm_utf8_valid_prefix(const char *s, size_t n);
static inline bool llm_utf8_valid(const char *s, size_t n)
{
	return llm_utf8_valid_prefix(s, n) == n;
}

/*
 * Decode one code point at s (n > 0 bytes available). Returns the number of bytes consumed
 * (1..4) and stores the code point, or U+FFFD for an ill-formed subsequence (then the return
 * value is the length of that maximal subpart, at least 1).
 */
size_t llm_utf8_decode(const char *s, size_t n, uint32_t *cp);
/* Encode cp (<= 0x10FFFF, not a surrogate; else U+FFFD) into out; returns 1..4. */
size_t llm_utf8_encode(uint32_t cp, char out[4]);
/* Append s to out with every ill-formed subpart replaced by U+FFFD; returns replacements. */
size_t llm_utf8_repair(const char *s, size_t n, llm_buf *out);
/* Number of code points (ill-formed subparts count one each). */
size_t llm_utf8_count(const char *s, size_t n);

/* Class bits of a code point. */
enum {
	LLM_UC_LETTER = 1u << 0,    /* General_Category L* */
	LLM_UC_MARK = 1u << 1,      /* M* */
	LLM_UC_DIGIT = 1u << 2,     /* Nd */
	LLM_UC_NUMBER = 1u << 3,    /* N* (includes Nd) */
	LLM_UC_PUNCT = 1u << 4,     /* P* (includes CJK and full-width punctuation) */
	LLM_UC_SYMBOL = 1u << 5,    /* S* */
	LLM_UC_SPACE = 1u << 6,     /* White_Space (includes U+3000 and U+00A0) */
	LLM_UC_CONTROL = 1u << 7,   /* Cc */
	LLM_UC_FORMAT = 1u << 8,    /* Cf */
	LLM_UC_ZEROWIDTH = 1u << 9, /* U+200B..U+200D, U+2060, U+FEFF, U+180E */
	LLM_UC_HAN = 1u << 10,      /* CJK ideographs (unified, extensions, compatibility) */
	LLM_UC_KANA = 1u << 11,     /* Hiragana, Katakana (incl. half-width) */
	LLM_UC_HANGUL = 1u << 12,   /* Hangul syllables and jamo */
	LLM_UC_UPPER = 1u << 13,    /* Lu */
	LLM_UC_LOWER = 1u << 14,    /* Ll */
	LLM_UC_CJK = LLM_UC_HAN | LLM_UC_KANA | LLM_UC_HANGUL
};

unsigned llm_uc_class(uint32_t cp);
static inline bool llm_uc_is(uint32_t cp, unsigned cls) { return (llm_uc_class(cp) & cls) != 0; }

/* Simple (one-to-one) lower-case mapping, as Unicode's Simple_Lowercase_Mapping. */
uint32_t llm_uc_tolower(uint32_t cp);
/* Full-width ASCII (U+FF01..U+FF5E) to ASCII and U+3000 to U+0020; others unchanged. */
uint32_t llm_uc_fold_width(uint32_t cp);

#endif
