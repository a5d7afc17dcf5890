/*
 * pretok_fast.h — hand-compiled matchers for the named pre-tokenizer patterns (internal to
 * pretok.c; not part of libllm's interface).
 *
 * Each matcher is the regex it replaces, worked out by hand as PCRE2 runs it (leftmost
 * alternative first, greedy quantifiers backtracking one character at a time), over a table
 * of the character classes the patterns use. The table (pretok_classes.h) is generated from
 * PCRE2 itself with pretok.c's rewriting of the classes, so both paths see the same Unicode;
 * test_pretok checks it on every code point and compares the matchers with PCRE2 on the
 * test strings, random strings over every class and the sample corpus; fuzz_pretok compares
 * them on arbitrary bytes.
 *
 * The text handed to a matcher is valid UTF-8 (pretok.c splits ill-formed bytes off first).
 * Pure functions: thread safe.
 */
#ifndef LLM_PRETOK_FAST_H
#define LLM_PRETOK_FAST_H

#include <stdbool.h>
#include <stddef.h>

/* Class bits of a code point; bit i is the set pretok_fast_class_re[i] matches. */
enum {
	PT_L = 1u << 0,  /* \p{L} */
	PT_N = 1u << 1,  /* \p{N} */
	PT_WS = 1u << 2, /* \s: Unicode White_Space */
	PT_M = 1u << 3,  /* \p{M} */
	PT_UP = 1u << 4, /* [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]: o200k's upper-case word start */
	PT_LO = 1u << 5, /* [\p{Ll}\p{Lm}\p{Lo}\p{M}]: o200k's lower-case word rest */
	PT_P = 1u << 6,  /* \p{P} */
	PT_S = 1u << 7   /* \p{S} */
};
#define PRETOK_FAST_NCLASS 8
extern const char *const pretok_fast_class_re[PRETOK_FAST_NCLASS];

/* The class bits of code point cp (<= 0x10FFFF), from the generated table. */
unsigned pretok_fast_class(unsigned cp);

/* The matchers. Patterns that differ only in spelling share one (cl100k's and Llama 3's
 * contractions are the same seven alternatives); pretok.c maps each pattern text to its. */
enum {
	PRETOK_FAST_NONE,
	PRETOK_FAST_GPT2,     /* gpt2, r50k, p50k */
	PRETOK_FAST_CL100K,   /* cl100k, llama3 */
	PRETOK_FAST_QWEN,     /* qwen: single digits */
	PRETOK_FAST_QWEN35,   /* qwen3.5: marks join letters */
	PRETOK_FAST_O200K,    /* o200k */
	PRETOK_FAST_DIGITS3,  /* \p{N}{1,3}: DeepSeek's first split */
	PRETOK_FAST_CJK,      /* DeepSeek's runs of ideographs and kana */
	PRETOK_FAST_DEEPSEEK  /* DeepSeek's main pattern */
};

/*
 * Up to max (> 0) successive matches of matcher kind in s[from..end) (valid UTF-8, end the end
 * of the subject), as PCRE2 finds them with the pattern, each search starting at the end of
 * the match before: the i-th as [ms[i], me[i]), never empty. Returns how many; fewer than max
 * when no match is left before end.
 */
size_t pretok_fast_find_n(int kind, const char *s, size_t end, size_t from, size_t *ms,
                          size_t *me, size_t max);

#endif
