/*
 * normalize.h — text normalisation for training documents.
 *
 * Steps (each a bit of the flags; LLM_NORM_DEFAULT is the default of llm-clean):
 *   REPAIR      invalid UTF-8 -> U+FFFD (maximal subparts, as utf8.h)
 *   CONTROLS    C0/C1 control characters removed (tab and newlines are white space, kept)
 *   ZEROWIDTH   U+200B..U+200D, U+2060, U+FEFF, U+180E and U+00AD (soft hyphen) removed
 *   WIDTH       full-width Latin letters and digits (U+FF10..U+FF19, U+FF21..U+FF3A,
 *               U+FF41..U+FF5A) -> ASCII
 *   NEWLINES    CR LF, CR, VT, FF, U+0085, U+2028, U+2029 -> LF
 *   SPACES      runs of horizontal white space (tab, NBSP, U+2000..U+200A, ...) -> one space
 *   TRIM        white space at the start and end of each line and of the text removed
 *   BLANKS      runs of blank lines capped at max_blank_lines (default 1, i.e. paragraphs)
 * and two steps outside the default, because they change Chinese and Japanese typography:
 *   WIDTH_PUNCT the other full-width ASCII forms U+FF01..U+FF5E (，；（）！？ ...) -> ASCII
 *   IDEO_SPACE  U+3000 IDEOGRAPHIC SPACE is white space (for SPACES and TRIM) and becomes
 *               ' '; without it, it is kept as written (a paragraph's indent in Chinese)
 *
 * Idempotent: for any input x and flags f, normalize(normalize(x)) == normalize(x). All steps
 * run in one pass over the code points, so removing a character can never leave behind a
 * pattern that a later pass would still change (e.g. "a \u200B b" becomes "a b" at once).
 *
 * Pure and thread safe; output appended to a caller buffer (at most the input length plus
 * 2 bytes per invalid byte).
 */
#ifndef LLM_NORMALIZE_H
#define LLM_NORMALIZE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"

enum {
	LLM_NORM_REPAIR = 1u << 0,
	LLM_NORM_CONTROLS = 1u << 1,
	LLM_NORM_ZEROWIDTH = 1u << 2,
	LLM_NORM_WIDTH = 1u << 3,
	LLM_NORM_NEWLINES = 1u << 4,
	LLM_NORM_SPACES = 1u << 5,
	LLM_NORM_TRIM = 1u << 6,
	LLM_NORM_BLANKS = 1u << 7,
	LLM_NORM_WIDTH_PUNCT = 1u << 8,
	LLM_NORM_IDEO_SPACE = 1u << 9,
	LLM_NORM_DEFAULT = 0xFF,
	LLM_NORM_ALL = 0x3FF
};

typedef struct {
	unsigned flags;
	unsigned max_blank_lines; /* BLANKS: blank lines kept between two non-blank lines */
} llm_norm_opts;

#define LLM_NORM_OPTS_DEFAULT { LLM_NORM_DEFAULT, 1 }

/* Parse a comma- or space-separated list of step names ("repair,width,spaces", "default",
 * "all", "none") into flags; LLM_EINVAL naming the bad word. */
int llm_norm_parse(const char *list, unsigned *flags);
/* The names of flags, space-separated ("none" when 0), appended to out. */
void llm_norm_format(unsigned flags, llm_buf *out);

/* Append the normalised s[0..n) to out. Returns true when the text changed. */
bool llm_normalize(const char *s, size_t n, const llm_norm_opts *o, llm_buf *out);

#endif
