/*
 * recipe.h — recipes: which filters, thresholds, normalisation steps and toxicity settings
 * apply to a document, chosen by its domain and language.
 *
 * A recipe file (llmkit-recipe(5)) is line-oriented: '#' starts a comment, a section header
 * names what it applies to, and "key = value" lines set things in it:
 *
 *   [default]                        every document
 *   [lang zh]                        documents whose lang is zh or starts with "zh-"
 *   [domain books, legal]            documents of these domains
 *   [domain web lang zh zh-Hant]     both: documents of that domain and one of those languages
 *
 *   filters = length gopher-rep fineweb     the set (names of filter.h, "default", "none");
 *   filters += cwt / filters -= c4          ... or a change to the set inherited so far
 *   normalize = default width-punct         normalisation steps (normalize.h), same forms
 *   tox = yes | no                          whether llm-tox judges these documents
 *   tox_threshold = 0.85                    llm-tox's threshold for them
 *   tox_words = yes | no                    whether its word lists apply (its model still does)
 *   segment = yes | no                      Chinese words from the jieba-compatible
 *                                           segmenter (zhseg.h), or one per Han character
 *   dup_line_frac = 0.287                   any parameter of filter.h (--set names)
 *
 * Precedence: a document gets the built-in defaults of its language (llm_quality_defaults),
 * then every section that matches it, least specific first: [default], then lang sections
 * (a shorter tag before a longer one: zh before zh-Hant), then domain sections, then sections
 * with both; among equals, file order. Overrides (llm_recipe_set: the command line's --set,
 * --filters, ...) come last. A key set by a later section wins.
 *
 * Language tags compare case-insensitively; a section tag matches the same tag and any
 * longer tag that continues it with '-' or '_'. A document without a domain matches only
 * sections without one.
 *
 * Ownership: the recipe owns everything it parsed; resolved settings point only to static
 * data (the built-in stop-word lists). Thread safety: a recipe is read only once loaded;
 * llm_recipe_resolve may run on any number of threads.
 */
#ifndef LLM_RECIPE_H
#define LLM_RECIPE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "quality.h"

/* What a recipe says for one (domain, language). */
typedef struct {
	unsigned filters;        /* bits of llm_filter_steps (LLM_FILTER_DEFAULT unless set) */
	unsigned normalize;      /* LLM_NORM_* (LLM_NORM_DEFAULT unless set) */
	llm_quality_params qp;   /* thresholds */
	bool tox;                /* llm-tox judges these documents (true unless set) */
	bool tox_words;          /* ... with its word lists too (true unless set) */
	bool segment;            /* Chinese text cut into words by zhseg (true unless set) */
	double tox_threshold;    /* llm-tox's threshold; negative: the tool's own default */
} llm_recipe_settings;

typedef struct llm_recipe llm_recipe;

/* The most sections one recipe holds (all files loaded into it together). */
#define LLM_RECIPE_MAX_SECTIONS 64

/* An empty recipe: every document gets the built-in defaults. */
llm_recipe *llm_recipe_new(void);
void llm_recipe_free(llm_recipe *r);

/* Add the sections of a recipe file. LLM_EIO, or LLM_EFORMAT with "FILE:LINE: what went
 * wrong" (an unknown key or filter names the closest valid one; more than
 * LLM_RECIPE_MAX_SECTIONS sections). */
int llm_recipe_load(llm_recipe *r, const char *path);
/* The same from text in memory; name is used in messages. */
int llm_recipe_parse(llm_recipe *r, const char *name, const char *text, size_t len);

/* An override that wins over every section: key and value as in a recipe line ("filters",
 * "+=cwt" is not accepted: op is "=", "+=" or "-="). LLM_EINVAL with the reason. */
int llm_recipe_set(llm_recipe *r, const char *key, const char *op, const char *value);

/* The settings for a document of domain (NULL or "" for none) and lang (NULL or "" when
 * unknown: the defaults of no language). */
void llm_recipe_resolve(const llm_recipe *r, const char *domain, const char *lang,
                        llm_recipe_settings *out);

/*
 * --explain: for every (domain, language) the sections name (and "any other" for each), the
 * sections that apply, the filter set, normalisation, toxicity, and every parameter of the
 * enabled filters with the section that set it ("built-in" for a language default,
 * "override" for llm_recipe_set). Appended to out as text.
 */
void llm_recipe_explain(const llm_recipe *r, llm_buf *out);

#endif
