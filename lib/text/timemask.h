/*
 * timemask.h — replace absolute dates and times with a placeholder ("[TIME]"), so that a model
 * learns relative time instead of stale anchors ("as of December 2023").
 *
 * Masked (English and Chinese), each whole expression becoming one placeholder:
 *   ISO and numeric dates   2023-12-01, 2023/12/01, 2023.12.01, 12/01/2023, 01.12.2023,
 *                           ISO date-times 2023-12-01T14:30:00Z
 *   month names             December 2023, Dec. 1, 2023, 1 December 2023, December 1st,
 *                           mid-December 2023 (month + day or month + year; a bare month
 *                           name such as "May" or "March" alone is left alone)
 *   clock times             14:30, 14:30:05, 2:30 pm, 9 a.m.
 *   Chinese                 2023年, 2023年12月, 2023年12月31日, 12月31日, 31日 after a month,
 *                           下午3点, 14时30分, 二〇二三年十二月 (Chinese numerals)
 * Text around an expression stays: "截至2023年12月31日" -> "截至[TIME]".
 * A 4-digit year alone ("in 2023") is masked only with LLM_TIME_YEARS.
 *
 * Uses PCRE2 with JIT. An llm_timemask is immutable after llm_timemask_new and may be shared
 * by threads; each thread passes its own llm_timemask_scratch.
 */
#ifndef LLM_TIMEMASK_H
#define LLM_TIMEMASK_H

#include <stddef.h>

#include "core/buf.h"

enum { LLM_TIME_YEARS = 1u << 0 };

typedef struct llm_timemask llm_timemask;
typedef struct llm_timemask_scratch llm_timemask_scratch;

/* placeholder NULL = "[TIME]". Returns NULL only if the built-in pattern fails to compile
 * (a bug), with llm_last_error set. */
llm_timemask *llm_timemask_new(const char *placeholder, unsigned flags);
void llm_timemask_free(llm_timemask *t);
llm_timemask_scratch *llm_timemask_scratch_new(const llm_timemask *t);
void llm_timemask_scratch_free(llm_timemask_scratch *s);

/* Append s[0..n) to out with time expressions masked; returns the number masked. */
size_t llm_timemask_apply(const llm_timemask *t, llm_timemask_scratch *s, const char *str,
                          size_t n, llm_buf *out);

#endif
