/*
 * toxlang.h — toxicity settings by language: "0.85", "zh=0.9,en=0.85" or both at once.
 *
 * A spec is a comma-separated list of items. "LANG=VALUE" sets the value for documents whose
 * "lang" field has LANG as its primary subtag ("zh" covers "zh-Hant" and "zh_CN"; case is
 * ignored); a bare VALUE sets the default, for every other language and for documents
 * without "lang". Later items win, so "0.8,zh=0.9" and "zh=0.9,0.8" mean the same and
 * "zh=0.9,zh=0.95" means zh=0.95. Parsing again (a repeated option) adds to what is set.
 *
 * Caller-owned, no allocation: at most LLM_TOXLANG_MAX languages, tags of at most
 * LLM_TOXLANG_TAG - 1 characters. Read-only use is thread safe.
 */
#ifndef LLM_TOXLANG_H
#define LLM_TOXLANG_H

#include <stddef.h>

#include "core/buf.h"

#define LLM_TOXLANG_MAX 64
#define LLM_TOXLANG_TAG 16

/* The primary subtag of lang[0..len) in lower case into key ("und" when lang is NULL or
 * empty; cut at LLM_TOXLANG_TAG - 1 characters). Returns key. */
char *llm_toxlang_key(const char *lang, size_t len, char key[LLM_TOXLANG_TAG]);

typedef struct {
	double dflt;
	int dflt_set; /* the default was set (a bare value), not only initialised */
	int n;
	struct {
		char lang[LLM_TOXLANG_TAG];
		double value;
	} by[LLM_TOXLANG_MAX];
} llm_toxlang;

/* Every language at value. */
void llm_toxlang_init(llm_toxlang *m, double value);
/* Add the items of spec. Values must lie in [lo, hi]. LLM_EINVAL with a detail that names
 * the bad item (the caller prefixes the option). */
int llm_toxlang_parse(llm_toxlang *m, const char *spec, double lo, double hi);
/* Set one language (lang NULL: the default). LLM_EINVAL when the table is full. */
int llm_toxlang_set(llm_toxlang *m, const char *lang, double value);
/* The value for a document whose lang field is lang[0..len) (NULL: none). */
double llm_toxlang_get(const llm_toxlang *m, const char *lang, size_t len);
/* Whether a LANG=VALUE item names that document's language. */
int llm_toxlang_named(const llm_toxlang *m, const char *lang, size_t len);
/* The spec back, in the canonical order: the default, then the languages sorted ("%g"). */
void llm_toxlang_format(const llm_toxlang *m, llm_buf *out);

#endif
