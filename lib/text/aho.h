/*
 * aho.h — an Aho-Corasick automaton over bytes: every occurrence of every pattern of a set in
 * one pass over the text, at a cost per byte that does not grow with the number of patterns.
 *
 * Patterns are byte strings of 1 to LLM_AHO_MAX_LEN bytes, each with a 32-bit value the caller
 * chooses (an index into its own table). A pattern added twice keeps the value it was added
 * with first. After llm_aho_compile the automaton is read only: any number of threads may
 * scan with it, each with its own state, a uint32_t that starts at LLM_AHO_START.
 *
 * The caller drives the scan one byte at a time (llm_aho_step), so that it can feed a text it
 * transforms on the way (case folding, white space collapsed) without copying it. Each step
 * gives the patterns that end at that byte, longest first.
 *
 * Layout: the states are numbered breadth first, so the children of a state are consecutive
 * and sorted by byte; a step is a binary search among them (at most 256) and, on a miss, the
 * failure link, except at the start state, which has a table of all 256 bytes. Memory: 17
 * bytes per state (a distinct prefix of the patterns) and 8 per pattern once compiled;
 * before, the patterns (their bytes plus 32), and while compiling 26 bytes per state.
 *
 * Errors: LLM_EINVAL from llm_aho_compile when the patterns need more than 2^32 - 2 states.
 */
#ifndef LLM_AHO_H
#define LLM_AHO_H

#include <stddef.h>
#include <stdint.h>

#define LLM_AHO_MAX_LEN 65535
#define LLM_AHO_START 0u
#define LLM_AHO_NONE UINT32_MAX

typedef struct llm_aho llm_aho;

llm_aho *llm_aho_new(void);
void llm_aho_free(llm_aho *a);

/* Add a pattern (copied). Patterns longer than LLM_AHO_MAX_LEN bytes or empty are ignored
 * (returns 0; 1 when added). Not after llm_aho_compile. */
int llm_aho_add(llm_aho *a, const void *pattern, size_t len, uint32_t value);
int llm_aho_compile(llm_aho *a);

/* After compile: distinct patterns, states, the longest pattern, bytes held. */
size_t llm_aho_patterns(const llm_aho *a);
size_t llm_aho_max_len(const llm_aho *a);
size_t llm_aho_memory(const llm_aho *a);

/*
 * Read byte b in state *s (updated), and return the longest pattern that ends there, or
 * LLM_AHO_NONE; llm_aho_next gives the next shorter one after m. Each m names one pattern:
 * llm_aho_value and llm_aho_len give its value and length.
 */
uint32_t llm_aho_step(const llm_aho *a, uint32_t *s, unsigned char b);
uint32_t llm_aho_next(const llm_aho *a, uint32_t m);
uint32_t llm_aho_value(const llm_aho *a, uint32_t m);
uint32_t llm_aho_len(const llm_aho *a, uint32_t m);

#endif
