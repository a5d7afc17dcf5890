/*
 * words.h — a document split into words as the quality rules' references split it.
 *
 * Without a segmenter the text is split on white space, then punctuation is split off by
 * rules modelled on spaCy's English tokenizer (the one datatrove uses for English): leading
 * quotes/brackets/currency, trailing punctuation and "'s", contractions ("don't" -> "do"
 * "n't"), hyphens and slashes between letters; URLs and e-mail addresses (as spaCy's URL_MATCH
 * reads them: a host with a lower-case TLD or a public IPv4 address), numbers such as "3.5"
 * and abbreviations such as "U.S." stay whole. Han and kana characters are then one word each
 * (Hangul words are space separated like Latin ones).
 *
 * With a segmenter (llm_segmenter, for Chinese), each run of text between white space is cut
 * by the segmenter alone, with no English affix rules: that is what datatrove's word
 * tokenizer for cmn_Hani does (spaCy's Chinese tokenizer hands the whole text to jieba and
 * keeps its tokens; white space is dropped).
 *
 * Every word records its byte span, its length in code points, whether it has a letter,
 * whether it is only punctuation, and a polynomial hash modulo the Mersenne prime 2^61-1 with
 * the matching power of the base. The hash of a concatenation is then a fold of the parts'
 * hashes, so the repetition rules hash n-grams without building them ("ab"+"c" and "a"+"bc"
 * collide as they do for datatrove's "".join). Modular, not mod 2^64: power-of-two
 * polynomial hashes have well-known colliding families (Thue–Morse strings).
 *
 * Memory: about 32 bytes per word plus 10 per code point of the longest run between spaces.
 * Not thread safe: one llm_words per thread.
 */
#ifndef LLM_WORDS_H
#define LLM_WORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	LLM_WORD_ALPHA = 1,    /* has a letter (str.isalpha of some character) */
	LLM_WORD_SYMBOL = 2,   /* only characters of datatrove's PUNCTUATION_SET */
	LLM_WORD_TERMINAL = 4, /* one terminal punctuation mark */
	LLM_WORD_PUNCT = 8     /* spaCy's is_punct: every character in a P* category */
};

typedef struct {
	uint32_t off, len;  /* bytes, in the text given to llm_words_split */
	uint32_t nchars;    /* code points */
	uint32_t flags;     /* LLM_WORD_* */
	uint64_t h, pw;     /* hash of the bytes and LLM_WORDS_BASE^len, mod LLM_WORDS_MOD */
} llm_word;

/*
 * A word segmenter for text written without spaces. cut() receives a run s[0..n) that holds
 * no white space and stores the byte length of each word, in order, in lens[] (room for n
 * entries; the lengths are positive and sum to n); it returns the number of words. self is
 * the segmenter's own state: one segmenter per thread unless its documentation says more.
 */
typedef struct {
	size_t (*cut)(void *self, const char *s, size_t n, uint32_t *lens);
	void *self;
} llm_segmenter;

typedef struct {
	llm_word *w;
	size_t n, cap;
	/* scratch: the code points of one run, their byte offsets and class bits (charclass.h),
	 * segment lengths */
	uint32_t *cps, *cofs, *lens;
	uint16_t *cls;
	size_t ccap, lcap;
	unsigned rules;  /* LLM_WORDS_*: 0 for English */
} llm_words;

/* Where spaCy's tokenizer for a language splits differently from its English one (the
 * rules field, 0 by default). */
enum {
	LLM_WORDS_NO_ENGLISH = 1,  /* no English special cases ("don't", "im" -> "i" "m") */
	LLM_WORDS_NO_HYPHEN = 2,   /* letters-hyphen-letters stays one word (de es nl pt) */
	LLM_WORDS_ELISION = 4      /* "l'homme" -> "l'" "homme" (fr it) */
};

void llm_words_init(llm_words *ws);
void llm_words_release(llm_words *ws);

/* Append the words of t[start..end) to ws; offsets are relative to t. seg: NULL for the
 * spaCy-style rules, or a segmenter for every run between white space. */
void llm_words_split(llm_words *ws, const char *t, size_t start, size_t end, const llm_segmenter *seg);

/* The word t[off..off+len) with its flags and hash (as llm_words_split makes it). */
llm_word llm_words_make(const char *t, size_t off, size_t len);

/* Arithmetic modulo 2^61-1 for the word hashes. */
#define LLM_WORDS_MOD ((1ULL << 61) - 1)
#define LLM_WORDS_BASE 1000003ULL

static inline uint64_t llm_words_mulmod(uint64_t a, uint64_t b)
{
	unsigned __int128 p = (unsigned __int128)a * b;
	uint64_t lo = (uint64_t)p & LLM_WORDS_MOD, hi = (uint64_t)(p >> 61);
	uint64_t r = lo + hi;
	return r >= LLM_WORDS_MOD ? r - LLM_WORDS_MOD : r;
}

static inline uint64_t llm_words_addmod(uint64_t a, uint64_t b)
{
	uint64_t r = a + b;
	return r >= LLM_WORDS_MOD ? r - LLM_WORDS_MOD : r;
}

static inline uint64_t llm_words_submod(uint64_t a, uint64_t b)
{
	return a >= b ? a - b : a + LLM_WORDS_MOD - b;
}

#endif
