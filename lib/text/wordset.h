/*
 * wordset.h — a set of words (stop words), compared byte for byte.
 *
 * An open-addressing table of 64-bit hashes over a copy of the words; each word keeps the
 * index it was first added with. Memory: the words plus about 24 bytes per word. Not thread
 * safe while words are added; lookups on a finished set may run on any number of threads.
 */
#ifndef LLM_WORDSET_H
#define LLM_WORDSET_H

#include <stddef.h>

typedef struct llm_wordset llm_wordset;
llm_wordset *llm_wordset_new(void);
void llm_wordset_free(llm_wordset *ws);
/* Add w[0..n) (a word already present keeps its index). */
void llm_wordset_add(llm_wordset *ws, const char *w, size_t n);
/* Add one word per line of a file; blank lines and lines starting with '#' are skipped.
 * LLM_EIO / LLM_EFORMAT (invalid UTF-8) with detail naming the file and line. */
int llm_wordset_load(llm_wordset *ws, const char *path);
/* Index of w (0..size-1) or -1. */
int llm_wordset_find(const llm_wordset *ws, const char *w, size_t n);
size_t llm_wordset_size(const llm_wordset *ws);

#endif
