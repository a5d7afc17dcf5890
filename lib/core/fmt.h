/*
 * fmt.h — numbers as text that a person reads and a program reads back.
 *
 * A double is written in the shortest %g form (up to 17 significant digits) that strtod
 * turns back into the same double: 0.9, not 0.90000000000000002; 0.30000000000000004 where
 * that is what the value is. Every place that shows a value it read or computed in full (the
 * JSON writer, the report's tables) calls this one function, so that a number looks the same
 * wherever it appears and survives a copy from the page into a command line.
 *
 * Locale: the C locale's decimal point (llmkit never calls setlocale for LC_NUMERIC).
 * Thread safety: none needed (no state).
 */
#ifndef LLM_FMT_H
#define LLM_FMT_H

#include <stddef.h>

/* Room for any double: sign, 17 digits, point, exponent and the NUL. */
#define LLM_FMT_DOUBLE_MAX 32

/* x into out (cap bytes, at least LLM_FMT_DOUBLE_MAX for every value to fit): finite values
 * as above, "-0" for negative zero, "nan", "inf" and "-inf" otherwise (strtod reads each
 * back). Returns the length written, without the NUL. */
size_t llm_fmt_double(char *out, size_t cap, double x);

#endif
