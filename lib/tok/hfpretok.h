/*
 * hfpretok.h — the pre-tokenizers of a Hugging Face tokenizer.json, as a pipeline that
 * splits text into the pieces BPE merges within, as `tokenizers` does.
 *
 * Implemented: Split (a regex or a string; behaviors Removed, Isolated, MergedWithPrevious,
 * MergedWithNext, Contiguous; invert), ByteLevel (add_prefix_space, use_regex: GPT-2's
 * pattern), Metaspace (replacement, prepend_scheme always/first/never, split), Digits
 * (individual_digits), Punctuation (behavior), Whitespace, WhitespaceSplit, and Sequence of
 * these; each step splits every piece of the step before, as tokenizers' Sequence does. Any
 * other type is refused by name (LLM_EUNSUPPORTED).
 *
 * Regexes are compiled by pretok.h, with its rewrites that make PCRE2 match Oniguruma.
 * Character predicates follow Rust's char methods (is_numeric: Nd, Nl, No; is_whitespace:
 * White_Space; punctuation: ASCII punctuation and the P categories), each matching character
 * its own match, as in tokenizers.
 *
 * Memory: the compiled steps; per state, two piece lists and two text buffers as long as the
 * longest text split (Metaspace and add_prefix_space change the text). Thread safety: an
 * llm_hfpretok is immutable after parsing; each thread needs its own llm_hfpretok_state.
 */
#ifndef LLM_HFPRETOK_H
#define LLM_HFPRETOK_H

#include <stdbool.h>
#include <stddef.h>

#include "core/json.h"

typedef struct llm_hfpretok llm_hfpretok;
typedef struct llm_hfpretok_state llm_hfpretok_state;

/* What the loader needs to know of a parsed pipeline. */
typedef struct {
	bool bytelevel;     /* a ByteLevel step: the vocabulary is written in GPT-2's byte map */
	bool metaspace;     /* a Metaspace step */
	const char *simple; /* the pipeline is this one regex, Isolated (NULL otherwise) */
	bool prefix_space;  /* with ByteLevel add_prefix_space (only set with simple) */
	bool lossy;         /* a step drops or rewrites text (Removed, Metaspace, a prefix space) */
} llm_hfpretok_info;

/* Parse the "pre_tokenizer" member (absent or null: *out NULL, no splitting). */
int llm_hfpretok_parse(llm_hfpretok **out, const llm_json_val *v, const char *name,
                       llm_hfpretok_info *info);
void llm_hfpretok_free(llm_hfpretok *p);

llm_hfpretok_state *llm_hfpretok_state_new(const llm_hfpretok *p);
void llm_hfpretok_state_free(llm_hfpretok_state *st);

/*
 * Split s[0..n). at_start: s begins the text (Metaspace's "first" scheme prepends only there).
 * On LLM_OK, piece i is (*text)[bounds[i] .. bounds[i + 1]) for i < *npieces; the arrays stay
 * valid until the next call. LLM_EINTERNAL when a regex fails (the detail says why).
 */
int llm_hfpretok_run(llm_hfpretok_state *st, const char *s, size_t n, bool at_start,
                     const char **text, const size_t **bounds, size_t *npieces);

#endif
