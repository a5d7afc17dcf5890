/*
 * tox.h — toxicity scoring of documents: word-list rules plus a fastText classifier.
 *
 * Two stages, both optional, combined by one documented rule (llm_tox_decide):
 *  1. Rules: word lists (wordlist.h) bound to languages. A document with a "lang" field is
 *     matched against the lists of its primary language subtag ("zh-Hant" uses "zh") plus
 *     the lists bound to no language; in a language no list names, against the lists bound
 *     to no language only (French "con" is no insult in Italian); a document without "lang"
 *     against every list, since its language is unknown. Chinese documents (lang zh, or no
 *     lang) are segmented into words (zhseg.h, jieba's algorithm and dictionary) and a CJK
 *     entry hits only where words start and end: "成人" (adult) is no hit in "组成人员"
 *     (组成 / 人员, members), unless the list marks it with "*" (wordlist.h). The rule fires
 *     when there is at least one hit and hits per 1,000 characters (code points) reach
 *     words_per_1k; density rather than "any hit" keeps a long page that mentions one word
 *     once, while a short comment built around it goes.
 *  2. Model: a fastText supervised model (fasttext.h) scores the normalized text
 *     (llm_tox_normalize); tox_score is the probability it gives the toxic label, clamped to
 *     [0, 1]. The model fires when tox_score >= threshold. A transformer classifier
 *     (llm_tox_set_external) scores the text itself, on the documents the rules pass.
 * Decision: rules OR model. A document both fire on counts under "tox_words" (the rule is
 * checked first); both verdicts are reported in the result so callers can count overlaps.
 *
 * Normalization (the same for training, prediction and evaluation): lower case (Unicode
 * simple mapping), full-width ASCII folded to ASCII, every CJK character (Han, Kana, Hangul),
 * punctuation mark and symbol becomes a token of its own, white space and control characters
 * separate tokens. So word bigrams of CJK text are character bigrams, and "bitch!" holds the
 * word "bitch". With a segmenter (a model trained with Chinese words), the Chinese words of
 * two or more characters follow, after the token "__zhseg__": "你个傻逼吧" is seen as
 * "你 个 傻 逼 吧 __zhseg__ 傻逼". A model whose vocabulary holds "__zhseg__" is given the
 * words; any other model, the characters alone.
 *
 * A configured llm_tox is immutable after llm_tox_ready and can be shared by threads, each
 * with its own llm_tox_scratch.
 */
#ifndef LLM_TOX_H
#define LLM_TOX_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "text/zhseg.h"

/* The token that marks a model trained with Chinese words, and that precedes them. */
#define LLM_TOX_ZHSEG_TOKEN "__zhseg__"

/* Append the model's view of text[0..len) to out: tokens separated by single spaces; with
 * seg (not NULL), the Chinese words too. */
void llm_tox_normalize(const char *text, size_t len, llm_zhseg *seg, llm_buf *out);

typedef struct llm_tox llm_tox;

llm_tox *llm_tox_new(void);
void llm_tox_free(llm_tox *t);

/* Load a word list for documents of language lang ("en"), or for all documents (lang NULL). */
int llm_tox_add_words(llm_tox *t, const char *lang, const char *path);
/* Load the model; label is the toxic label with or without "__label__" (LLM_ENOTFOUND when
 * the model has no such label). */
int llm_tox_set_model(llm_tox *t, const char *path, const char *label);

/*
 * A model of another layer instead (a transformer classifier, model/textscore.h, which this
 * layer may not include), behind calls: score gives the toxic label's probability for the
 * document's text as it is (the transformer has its own tokenizer: no normalization). It
 * runs on what the rules pass, as a second stage: a document the rules fire on is not
 * scored (score -1), which saves the transformer's time and changes no verdict. free
 * releases ctx with the llm_tox. Replaces a fastText model, and the other way round.
 */
typedef struct {
	void *ctx;
	void *(*scratch_new)(void *ctx);
	void (*scratch_free)(void *scratch);
	double (*score)(void *ctx, void *scratch, const char *text, size_t len);
	void (*free)(void *ctx);
} llm_tox_model;
void llm_tox_set_external(llm_tox *t, const llm_tox_model *m);
/* CJK word-list entries shorter than n characters are ignored (llm_wordlist_set_cjk_min);
 * call before adding lists. */
void llm_tox_set_cjk_min(llm_tox *t, size_t n);
/* Chinese word boundaries for the word lists (on by default); off: CJK entries match as
 * substrings anywhere, and no dictionary is needed for the lists. */
void llm_tox_set_zh_bounds(llm_tox *t, int on);
/* Compile the word lists, and load the segmenter's dictionary (llm_zhseg_dict_default) when
 * the lists or the model need it: LLM_ENOTFOUND when it cannot be loaded. Call once, after
 * the last add. */
int llm_tox_ready(llm_tox *t);
int llm_tox_has_words(const llm_tox *t);
int llm_tox_has_model(const llm_tox *t);

/* Per-thread working memory; NULL only when PCRE2 cannot allocate its match data. */
typedef struct llm_tox_scratch llm_tox_scratch;
llm_tox_scratch *llm_tox_scratch_new(const llm_tox *t);
void llm_tox_scratch_free(llm_tox_scratch *s);

typedef struct {
	size_t hits;     /* word-list matches */
	size_t chars;    /* code points of the text */
	double per_1k;   /* hits per 1,000 characters */
	double score;    /* model probability of the toxic label, or -1 without a model */
	int words;       /* the word lists were applied: hits counts their matches */
} llm_tox_result;

/*
 * What applies to one document: which stages judge it and at what level. A tool builds it
 * per record, from per-language values (toxlang.h) or from a recipe (domain and language).
 */
typedef struct {
	double threshold;    /* the model fires at tox_score >= threshold */
	double words_per_1k; /* the word rule fires at one hit or more and this density or more */
	int words, model;    /* 0: that stage does not apply (legal text and the word lists) */
} llm_tox_policy;

/* Score text[0..len) of a document whose lang field is lang[0..lang_len) (lang NULL when
 * it has none) with the stages p applies (p NULL: every stage there is). A stage left out
 * costs nothing and reads as absent: words 0, score -1. */
void llm_tox_score(const llm_tox *t, llm_tox_scratch *s, const char *text, size_t len,
                   const char *lang, size_t lang_len, const llm_tox_policy *p, llm_tox_result *r);

enum { LLM_TOX_KEEP = 0, LLM_TOX_WORDS = 1, LLM_TOX_MODEL = 2 };

/* The combination rule above, under policy p. */
static inline int llm_tox_words_fire(const llm_tox_result *r, const llm_tox_policy *p)
{
	return p->words && r->hits > 0 && r->per_1k >= p->words_per_1k;
}
static inline int llm_tox_model_fires(const llm_tox_result *r, const llm_tox_policy *p)
{
	return p->model && r->score >= 0 && r->score >= p->threshold;
}
static inline int llm_tox_decide(const llm_tox_result *r, const llm_tox_policy *p)
{
	if (llm_tox_words_fire(r, p))
		return LLM_TOX_WORDS;
	return llm_tox_model_fires(r, p) ? LLM_TOX_MODEL : LLM_TOX_KEEP;
}

#endif
