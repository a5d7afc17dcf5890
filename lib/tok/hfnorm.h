/*
 * hfnorm.h — the normalizers of a Hugging Face tokenizer.json, applied to text before it is
 * pre-tokenized, as `tokenizers` applies them.
 *
 * Implemented: NFC, NFD, NFKC, NFKD (utf8proc), Lowercase, Prepend, Replace (a string or a
 * regex), Strip, and Sequence of these (an empty Sequence is the identity). Any other type
 * (BertNormalizer, Precompiled, StripAccents, Nmt, ...) is refused by name (LLM_EUNSUPPORTED)
 * rather than approximated.
 *
 * Text is bytes: each maximal valid UTF-8 run is normalized, ill-formed bytes pass unchanged
 * (tokenizers never sees them: its strings are valid). Lowercase maps each code point as
 * Rust's str::to_lowercase does except for the context-dependent final sigma (Σ at the end of
 * a word stays σ).
 *
 * Memory: the parsed steps (compiled regexes of Replace); scratch per call in the caller's
 * buffers. Thread safety: an llm_hfnorm is immutable after parsing; llm_hfnorm_apply may run
 * on many threads at once (it allocates its own match state for a regex Replace, cached per
 * llm_hfnorm_state).
 */
#ifndef LLM_HFNORM_H
#define LLM_HFNORM_H

#include <stddef.h>

#include "core/buf.h"
#include "core/json.h"

typedef struct llm_hfnorm llm_hfnorm;
typedef struct llm_hfnorm_state llm_hfnorm_state;

/*
 * Parse the "normalizer" member of a tokenizer.json (v may be absent or null). *out is NULL
 * when the normalizer is the identity (none, or an empty Sequence). name is used in messages.
 * LLM_EUNSUPPORTED names a type that is not implemented; LLM_EFORMAT a malformed one.
 */
int llm_hfnorm_parse(llm_hfnorm **out, const llm_json_val *v, const char *name);
void llm_hfnorm_free(llm_hfnorm *n);

llm_hfnorm_state *llm_hfnorm_state_new(const llm_hfnorm *n);
void llm_hfnorm_state_free(llm_hfnorm_state *st);

/* Replace out's content with the normalized s[0..len). */
void llm_hfnorm_apply(llm_hfnorm_state *st, const char *s, size_t len, llm_buf *out);

#endif
