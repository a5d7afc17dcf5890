/*
 * zhseg.h — Chinese word segmentation: jieba's algorithm in C, with jieba's dictionary.
 *
 * The result is the one of Python's jieba.lcut(text) (accurate mode, HMM on), token for
 * token, given the same dictionary:
 *   1. The text is cut into runs of "word" characters, jieba's re_han_default class:
 *      U+4E00..U+9FD5 and the ASCII characters a-z A-Z 0-9 + # & . _ % -. Between runs,
 *      "\r\n" and every other white-space character (Python's \s) are tokens of their own,
 *      and so is every other code point (punctuation, other scripts, emoji: one each).
 *   2. Over a run, every dictionary word that starts at each character forms a DAG; the path
 *      of maximum probability (the sum of log(freq / total), a character outside the
 *      dictionary counting freq 1) is found right to left, ties to the longer word (jieba's
 *      calc).
 *   3. Consecutive single characters of that path that do not form a dictionary word are
 *      segmented again by jieba's finalseg: runs of U+4E00..U+9FD5 by a Viterbi over the
 *      states B, M, E, S with finalseg's probabilities (new words), the rest by its
 *      [a-zA-Z0-9]+(\.\d+)?%? pattern (so "3.14" and "50%" stay whole).
 * Every byte of the text is in exactly one token and tokens come in text order, so a caller
 * can rebuild the text from them. Invalid UTF-8 is not repaired: each maximal ill-formed
 * subsequence is a token of its own (kind LLM_ZHSEG_INVALID). The only difference from jieba
 * is the bound on memory: a run of more than LLM_ZHSEG_MAX_RUN word characters (no space or
 * punctuation in 64 Ki characters) is segmented in pieces of that many characters.
 *
 * Dictionary: jieba's dict.txt format, one "word freq [tag]" per line, UTF-8, any
 * compression llm_reader reads; blank lines are skipped. Where it is read from
 * (llm_zhseg_dict_load): the path given; else $LLM_ZHSEG_DICT; else jieba/dict.txt under
 * llmkit's data root where it exists: $LLMKIT_DATA, then the copy `make install` puts beside
 * the programs (BINDIR/../share/llmkit); else Debian's python3-jieba
 * (/usr/lib/python3/dist-packages/jieba/dict.txt). The HMM is compiled in (zhseg_hmm.h,
 * generated from the same package). jieba and its data are MIT-licensed.
 *
 * Memory: a dictionary takes about 17 MB for jieba's 349,046 words (a trie of 498,110 nodes
 * in a hash table, 8 bytes a node plus 8 for its score and 1 for whether it is a leaf, and
 * the HMM's emission table). A
 * segmenter holds scratch arrays for the longest run seen, at most LLM_ZHSEG_MAX_RUN
 * characters (about 1.6 MB); llm_zhseg_cut's result array also grows with the number of
 * tokens of the longest text (16 bytes each). Nothing is allocated per word.
 *
 * Threads: a loaded dictionary is read only and may be shared by any number of threads; a
 * segmenter (llm_zhseg) belongs to one thread at a time.
 */
#ifndef LLM_ZHSEG_H
#define LLM_ZHSEG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "words.h"

/* Debian's python3-jieba ships the dictionary here. */
#define LLM_ZHSEG_DEBIAN_DICT "/usr/lib/python3/dist-packages/jieba/dict.txt"
/* The dictionary's path under llmkit's data root ($LLMKIT_DATA, PREFIX/share/llmkit). */
#define LLM_ZHSEG_DATA_DICT "jieba/dict.txt"
/* The longest run of word characters segmented as one unit (see above). */
#define LLM_ZHSEG_MAX_RUN 65536

typedef struct llm_zhseg_dict llm_zhseg_dict;

/*
 * Load a dictionary from path, or when path is NULL from the first place of the list above
 * that exists. LLM_ENOTFOUND: no dictionary (path NULL and none of the places has one; the
 * detail names them and says how to get one). LLM_EIO: unreadable. LLM_EFORMAT: a line that
 * is not "word freq [tag]" with freq a decimal integer, invalid UTF-8, or a frequency total
 * of 0 (the detail names file and line). On failure *out is NULL.
 */
int llm_zhseg_dict_load(llm_zhseg_dict **out, const char *path);
void llm_zhseg_dict_free(llm_zhseg_dict *d);

/*
 * The process-wide default dictionary (path NULL above), loaded by the first call and kept
 * until exit: modules that each need a segmenter share one copy. Thread safe. Returns the
 * status of that one load; *out is NULL on failure.
 */
int llm_zhseg_dict_default(const llm_zhseg_dict **out);

/* The file a dictionary was read from, its number of entries and its frequency total. */
const char *llm_zhseg_dict_path(const llm_zhseg_dict *d);
size_t llm_zhseg_dict_size(const llm_zhseg_dict *d);
uint64_t llm_zhseg_dict_total(const llm_zhseg_dict *d);
/* Frequency of a word, 0 when s[0..n) is not in the dictionary (or only a prefix of words). */
uint64_t llm_zhseg_dict_freq(const llm_zhseg_dict *d, const char *s, size_t n);

/* What a token is. */
enum {
	LLM_ZHSEG_WORD = 1,    /* from a run of word characters: Chinese words, ASCII words and
	                          numbers, and the + # & . _ % - between them */
	LLM_ZHSEG_SPACE = 2,   /* one white-space character, or "\r\n" */
	LLM_ZHSEG_OTHER = 3,   /* any other code point: punctuation, symbols, other scripts */
	LLM_ZHSEG_INVALID = 4  /* an ill-formed UTF-8 subsequence */
};

/* A token: text[off .. off + len). */
typedef struct {
	size_t off;
	uint32_t len;
	uint32_t kind; /* LLM_ZHSEG_* */
} llm_zhseg_span;

typedef struct llm_zhseg llm_zhseg;

/* A segmenter over d (which must outlive it). Never NULL (allocation failure aborts). */
llm_zhseg *llm_zhseg_new(const llm_zhseg_dict *d);
void llm_zhseg_free(llm_zhseg *z);

/*
 * Token by token: llm_zhseg_start sets the text (not copied: it must stay valid and unchanged
 * while tokens are read), then each llm_zhseg_next stores the next token and returns true,
 * or returns false at the end. Memory stays bounded whatever the length of the text.
 */
void llm_zhseg_start(llm_zhseg *z, const char *text, size_t n);
bool llm_zhseg_next(llm_zhseg *z, llm_zhseg_span *tok);

/*
 * All tokens at once: returns their number and points *toks at them (owned by z, valid until
 * the next call on z). Ends any llm_zhseg_start iteration.
 */
size_t llm_zhseg_cut(llm_zhseg *z, const char *text, size_t n, const llm_zhseg_span **toks);

/*
 * The text as words, appended to out: the tokens that are not white space, one space between
 * two on the same line, each line break ("\n", "\r\n" or "\r") kept as one "\n"; other white
 * space only separates. This is the form that word-level tools read (fastText, KenLM,
 * word2vec). Returns the number of words written.
 */
size_t llm_zhseg_join(llm_zhseg *z, const char *text, size_t n, llm_buf *out);

/* z as the word segmenter of the quality rules (words.h): the words of a run are its tokens.
 * The segmenter uses z, so it belongs to z's thread. */
llm_segmenter llm_zhseg_segmenter(llm_zhseg *z);

#endif
