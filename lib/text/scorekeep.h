/*
 * scorekeep.h — the selection expressions of llm-score --keep: which documents to keep by
 * their scores and buckets.
 *
 * Grammar (white space allowed between tokens):
 *   expr  := and ( "||" and )*
 *   and   := unary ( "&&" unary )*
 *   unary := "!" unary | "(" expr ")" | NAME OP NUMBER
 *   OP    := "<" | "<=" | ">" | ">=" | "==" | "!="
 *   NAME  := WORD | WORD "." WORD      WORD := [A-Za-z_][A-Za-z0-9_-]*
 * NUMBER is a finite decimal number (strtod's syntax, no hex, no inf or nan). A NAME is a
 * variable the caller gives a value to: for llm-score, a score ("quality"), one label of a
 * distribution ("topic.news"), the combined bucket ("bucket") or one score's bucket
 * ("bucket.quality"). Examples: "quality >= 0.5", "bucket >= 15 && tox.toxic < 0.2".
 *
 * Memory: a few bytes per token. An expression is immutable once parsed: any number of
 * threads may evaluate it at once.
 */
#ifndef LLM_SCOREKEEP_H
#define LLM_SCOREKEEP_H

#include <stddef.h>

typedef struct llm_scorekeep llm_scorekeep;

/* Parse expr. LLM_EINVAL with a detail saying at which byte and what was expected. */
int llm_scorekeep_parse(llm_scorekeep **k, const char *expr);
void llm_scorekeep_free(llm_scorekeep *k);

/* The distinct variables the expression names, in order of first use: i in [0, nvars). */
size_t llm_scorekeep_nvars(const llm_scorekeep *k);
const char *llm_scorekeep_var(const llm_scorekeep *k, size_t i);

/* Whether a document whose variable i has value values[i] is kept (1) or not (0). */
int llm_scorekeep_eval(const llm_scorekeep *k, const double *values);

#endif
