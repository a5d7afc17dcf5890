/*
 * pretok.h — pre-tokenization: split text into the pieces that byte-level BPE merges within.
 *
 * A pre-tokenizer is a regular expression compiled with PCRE2 (UTF, UCP, JIT). Named patterns
 * are the exact ones of tiktoken's encodings (gpt2/r50k, p50k, cl100k, o200k, llama3, qwen,
 * qwen3.5);
 * any other pattern may be given as a regex.
 *
 * Patterns are rewritten before compiling so that PCRE2 matches what the reference engines
 * (Rust regex in tiktoken, Oniguruma in Hugging Face tokenizers) match:
 *   - \s and \S mean Unicode White_Space. PCRE2's UCP \s also matches U+180E (MONGOLIAN VOWEL
 *     SEPARATOR, Cf since Unicode 6.3), which changes ids (see tests/data/tokenize/NOTICE.md).
 *   - \p{L}, \p{N}, \p{M} and the letter subcategories include the code points that later
 *     Unicode versions assigned beyond this PCRE2's tables (Kawi, CJK extension H, ...).
 *   - $ matches only at the end of the text.
 *
 * The named patterns are not compiled: a hand-compiled matcher for each (pretok_fast.h) finds
 * the same pieces several times faster than PCRE2's JIT.
 *
 * Splitting: llm_pretok_next returns the pieces in order and covers every byte of the text.
 * Text the pattern does not match ("gaps") is returned as pieces too when keep_gaps is set
 * (Hugging Face Split/ByteLevel "isolated" behaviour), else skipped (tiktoken's find_iter).
 * Invalid UTF-8 never reaches PCRE2: each maximal ill-formed subsequence is its own piece, so
 * any bytes can be encoded and decoded back.
 *
 * Memory: the compiled pattern (shared, read-only) plus per-thread match state with a JIT stack
 * that grows up to 64 MiB for pathological inputs. Thread safety: llm_pretok is immutable after
 * creation and may be shared; each thread needs its own llm_pretok_state.
 */
#ifndef LLM_PRETOK_H
#define LLM_PRETOK_H

#include <stdbool.h>
#include <stddef.h>

typedef struct llm_pretok llm_pretok;
typedef struct llm_pretok_state llm_pretok_state;

/* The pattern of a named encoding ("gpt2", "r50k", "r50k_base", "p50k", "cl100k", "o200k",
 * "llama3", "qwen", "qwen3.5"), or NULL when the name is unknown. */
const char *llm_pretok_named(const char *name);

/* The patterns of a named pre-tokenizer for training, each splitting what the ones before
 * left (tokenizer.json's Sequence of Isolated Splits): one for the encodings above, three
 * for "deepseek" (digits, CJK runs, its main pattern). NULL when the name is unknown. */
const char *const *llm_pretok_named_seq(const char *name, size_t *n);

/* Compile regex (a pattern, not a name). LLM_EINVAL with PCRE2's message and offset on error.
 * The named patterns (and DeepSeek's, and tokenizer.json's spelling of GPT-2's) are matched by
 * hand-compiled matchers instead, with the same pieces as PCRE2 (test_pretok, fuzz_pretok). */
int llm_pretok_new(llm_pretok **pt, const char *regex, bool keep_gaps);
/* The same with PCRE2 for every pattern: the reference the matchers are tested against. */
int llm_pretok_new_pcre2(llm_pretok **pt, const char *regex, bool keep_gaps);
/* Whether pt uses a hand-compiled matcher. */
bool llm_pretok_is_fast(const llm_pretok *pt);
void llm_pretok_free(llm_pretok *pt);
/* The pattern as given (before rewriting). */
const char *llm_pretok_pattern(const llm_pretok *pt);

llm_pretok_state *llm_pretok_state_new(const llm_pretok *pt);
void llm_pretok_state_free(llm_pretok_state *st);

/*
 * Begin splitting s[0..n) (the text must stay unchanged until the last llm_pretok_next).
 * Then each llm_pretok_next stores the next piece as [*start, *end) and returns LLM_OK, or
 * returns LLM_EOF after the last piece, LLM_ETOOLONG when the text makes PCRE2 reach one of
 * its limits (match, depth, heap, or the JIT stack's cap: backtracking a pattern needs on this
 * text), or LLM_EINTERNAL when PCRE2 fails otherwise; the detail names the reason and byte.
 */
void llm_pretok_begin(llm_pretok_state *st, const char *s, size_t n);
/* llm_pretok_begin for text the caller knows to be valid UTF-8 (it must be: the matchers then
 * read whole characters without a check), which is then not validated again. */
void llm_pretok_begin_valid(llm_pretok_state *st, const char *s, size_t n);
int llm_pretok_next(llm_pretok_state *st, size_t *start, size_t *end);
/*
 * The next pieces at once: up to max (> 0) of them, those that llm_pretok_next would return
 * one by one, as [start[i], end[i]) for i < *n. Returns LLM_OK with *n > 0, LLM_EOF (with
 * *n = 0) after the last piece, or LLM_ETOOLONG or LLM_EINTERNAL as llm_pretok_next (the
 * batch is lost).
 * A hand-compiled matcher finds a batch in one loop: for the short pieces of most text, a
 * call per piece costs as much as finding it.
 */
int llm_pretok_next_n(llm_pretok_state *st, size_t *start, size_t *end, size_t max, size_t *n);
/* Whether the piece llm_pretok_next returned last (or the last of llm_pretok_next_n's batch)
 * is a match of the pattern (else a gap, or an ill-formed UTF-8 sequence). */
bool llm_pretok_matched(const llm_pretok_state *st);

#endif
