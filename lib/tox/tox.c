/*
 * tox.c — word lists by language plus a fastText model, and the text they see.
 *
 * Each distinct language gets one compiled list (its own files plus the language-free ones)
 * and one more list holds every file for documents of unknown language, so a document is
 * scanned by exactly one automaton. One segmentation of a Chinese document gives both the
 * word boundaries of the lists and the words of the model's view.
 */
#include "tox.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/err.h"
#include "core/utf8.h"
#include "text/fasttext.h"
#include "text/wordlist.h"
#include "toxlang.h"

typedef struct {
	char *lang; /* NULL: all languages */
	char *path;
} words_file;

typedef struct {
	char *lang; /* NULL: the list for unknown languages */
	llm_wordlist *w;
} lang_list;

struct llm_tox {
	words_file *files;
	size_t nfiles;
	lang_list *lists;
	size_t nlists;
	llm_fasttext *model;
	llm_tox_model ext;  /* a second-stage model of another layer (ext.score set) */
	int label;
	size_t cjk_min;
	long all, free; /* indexes in lists: every file; the language-free files (-1: none) */
	int zh_bounds;     /* segment Chinese documents for the lists' CJK entries */
	int model_words;   /* the model was trained with Chinese words */
	const llm_zhseg_dict *dict; /* when either needs it */
};

struct llm_tox_scratch {
	const llm_tox *t;
	void *ext;
	llm_wordlist_scratch **ws;
	llm_fasttext_scratch *fs;
	llm_fasttext_pred *pred;
	llm_zhseg *seg;
	llm_buf norm, bounds;
};

static int is_token_char(uint32_t cp, unsigned cls)
{
	return !(cls & (LLM_UC_CJK | LLM_UC_PUNCT | LLM_UC_SYMBOL | LLM_UC_SPACE | LLM_UC_CONTROL |
	                LLM_UC_FORMAT | LLM_UC_ZEROWIDTH)) &&
	       cp != LLM_UTF8_REPLACEMENT;
}

/* The characters of the model's view (see tox.h). */
static void normalize_chars(const char *text, size_t len, llm_buf *out)
{
	size_t start = out->len;
	int in_word = 0; /* the last thing written was part of a multi-character token */
	for (size_t i = 0; i < len;) {
		unsigned char b = (unsigned char)text[i];
		if (b < 0x80) {
			/* ASCII, most of the bytes of most text, without decoding or table lookups:
			 * the same classes as below (letters and digits, controls and space, the rest
			 * punctuation or symbols). */
			i++;
			unsigned char lc = (unsigned char)(b | 0x20);
			if ((lc >= 'a' && lc <= 'z') || (b >= '0' && b <= '9')) {
				if (!in_word && out->len > start)
					llm_buf_addc(out, ' ');
				llm_buf_addc(out, (char)(lc >= 'a' && lc <= 'z' ? lc : b));
				in_word = 1;
			} else if (b <= ' ' || b == 0x7f) {
				in_word = 0;
			} else {
				if (out->len > start)
					llm_buf_addc(out, ' ');
				llm_buf_addc(out, (char)b);
				in_word = 0;
			}
			continue;
		}
		uint32_t cp;
		i += llm_utf8_decode(text + i, len - i, &cp);
		cp = llm_uc_fold_width(cp);
		unsigned cls = llm_uc_class(cp);
		if (is_token_char(cp, cls)) {
			if (!in_word && out->len > start)
				llm_buf_addc(out, ' ');
			char u[4];
			llm_buf_add(out, u, llm_utf8_encode(llm_uc_tolower(cp), u));
			in_word = 1;
			continue;
		}
		in_word = 0;
		if (cls & (LLM_UC_SPACE | LLM_UC_CONTROL | LLM_UC_FORMAT | LLM_UC_ZEROWIDTH) ||
		    cp == LLM_UTF8_REPLACEMENT)
			continue;
		/* CJK, punctuation, symbol: a token of one character. */
		if (out->len > start)
			llm_buf_addc(out, ' ');
		char u[4];
		llm_buf_add(out, u, llm_utf8_encode(llm_uc_tolower(cp), u));
	}
}

/* Whether text has a character of U+4E00..U+9FFF (lead bytes E4..E9), the Han range the
 * segmenter makes words of. */
static int has_han(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char b = (unsigned char)text[i];
		if (b >= 0xE4 && b <= 0xE9)
			return 1;
	}
	return 0;
}

/* A word of the model's view: a segmenter word of two or more characters, Han among them. */
static int is_zh_word(const char *w, size_t n)
{
	size_t chars = 0;
	int han = 0;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		i += llm_utf8_decode(w + i, n - i, &cp);
		chars++;
		han |= cp >= 0x4E00 && cp <= 0x9FFF;
	}
	return chars >= 2 && han;
}

/* One pass of the segmenter over text: word starts into bounds (len + 1 bits, cleared
 * here), and " word" for each word of the view appended to words. Either may be NULL. */
static void segment(llm_zhseg *seg, const char *text, size_t len, llm_buf *bounds, llm_buf *words)
{
	uint8_t *b = NULL;
	if (bounds) {
		llm_buf_reset(bounds);
		llm_buf_grow(bounds, len / 8 + 1);
		b = (uint8_t *)bounds->p;
		memset(b, 0, len / 8 + 1);
		b[len / 8] |= (uint8_t)(1u << (len % 8));
	}
	llm_zhseg_span tok;
	llm_zhseg_start(seg, text, len);
	while (llm_zhseg_next(seg, &tok)) {
		if (b)
			b[tok.off / 8] |= (uint8_t)(1u << (tok.off % 8));
		if (words && tok.kind == LLM_ZHSEG_WORD && is_zh_word(text + tok.off, tok.len)) {
			llm_buf_addc(words, ' ');
			llm_buf_add(words, text + tok.off, tok.len);
		}
	}
}

/* The words part of the view: " __zhseg__ w1 w2 ...", nothing when there is no word. */
static void add_words(llm_zhseg *seg, const char *text, size_t len, llm_buf *bounds, llm_buf *out,
                      size_t start)
{
	size_t mark = out->len;
	if (out->len > start)
		llm_buf_addc(out, ' ');
	llm_buf_adds(out, LLM_TOX_ZHSEG_TOKEN);
	size_t after = out->len;
	segment(seg, text, len, bounds, out);
	if (out->len == after)
		llm_buf_truncate(out, mark);
}

void llm_tox_normalize(const char *text, size_t len, llm_zhseg *seg, llm_buf *out)
{
	size_t start = out->len;
	normalize_chars(text, len, out);
	if (seg && has_han(text, len))
		add_words(seg, text, len, NULL, out, start);
}

llm_tox *llm_tox_new(void)
{
	llm_tox *t = llm_calloc(1, sizeof *t);
	t->label = -1;
	t->cjk_min = 1;
	t->zh_bounds = 1;
	return t;
}

void llm_tox_free(llm_tox *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nfiles; i++) {
		free(t->files[i].lang);
		free(t->files[i].path);
	}
	free(t->files);
	for (size_t i = 0; i < t->nlists; i++) {
		free(t->lists[i].lang);
		llm_wordlist_free(t->lists[i].w);
	}
	free(t->lists);
	llm_fasttext_free(t->model);
	if (t->ext.free)
		t->ext.free(t->ext.ctx);
	free(t);
}

void llm_tox_set_cjk_min(llm_tox *t, size_t n) { t->cjk_min = n; }
void llm_tox_set_zh_bounds(llm_tox *t, int on) { t->zh_bounds = on; }

int llm_tox_add_words(llm_tox *t, const char *lang, const char *path)
{
	/* Load once now so that a bad file is reported where it is named. */
	llm_wordlist *w = llm_wordlist_new();
	llm_wordlist_set_cjk_min(w, t->cjk_min);
	int rc = llm_wordlist_load(w, path);
	size_t n = llm_wordlist_size(w);
	llm_wordlist_free(w);
	if (rc)
		return rc;
	if (n == 0)
		return llm_fail(LLM_EINVAL, "%s: word list has no entry", path);
	t->files = llm_realloc(t->files, (t->nfiles + 1) * sizeof *t->files);
	t->files[t->nfiles].lang = lang && *lang ? llm_strdup(lang) : NULL;
	t->files[t->nfiles].path = llm_strdup(path);
	t->nfiles++;
	return LLM_OK;
}

int llm_tox_set_model(llm_tox *t, const char *path, const char *label)
{
	llm_fasttext *m;
	int rc = llm_fasttext_load(&m, path);
	if (rc)
		return rc;
	int id = llm_fasttext_label_id(m, label);
	if (id < 0) {
		llm_fasttext_free(m);
		return llm_fail(LLM_ENOTFOUND, "%s: the model has no label '%s'", path, label);
	}
	llm_fasttext_free(t->model);
	if (t->ext.free)
		t->ext.free(t->ext.ctx);
	memset(&t->ext, 0, sizeof t->ext);
	t->model = m;
	t->label = id;
	t->model_words = llm_fasttext_word_id(m, LLM_TOX_ZHSEG_TOKEN, strlen(LLM_TOX_ZHSEG_TOKEN)) >= 0;
	return LLM_OK;
}

static int same_lang(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The list of lang's files plus the language-free ones; lang NULL: every file, or with
 * only_free, the language-free files alone. */
static int build_list(llm_tox *t, const char *lang, int only_free)
{
	llm_wordlist *w = llm_wordlist_new();
	llm_wordlist_set_cjk_min(w, t->cjk_min);
	for (size_t i = 0; i < t->nfiles; i++) {
		const char *fl = t->files[i].lang;
		if (fl && ((lang && strcmp(fl, lang) != 0) || only_free))
			continue;
		int rc = llm_wordlist_load(w, t->files[i].path);
		if (rc) {
			llm_wordlist_free(w);
			return rc;
		}
	}
	int rc = llm_wordlist_compile(w);
	if (rc) {
		llm_wordlist_free(w);
		return rc;
	}
	t->lists = llm_realloc(t->lists, (t->nlists + 1) * sizeof *t->lists);
	t->lists[t->nlists].lang = lang ? llm_strdup(lang) : NULL;
	t->lists[t->nlists].w = w;
	t->nlists++;
	return LLM_OK;
}

static int build_lists(llm_tox *t)
{
	if (t->nfiles == 0 || t->nlists > 0)
		return LLM_OK;
	for (size_t i = 0; i < t->nfiles; i++) {
		const char *l = t->files[i].lang;
		if (!l)
			continue;
		int seen = 0;
		for (size_t j = 0; j < t->nlists; j++)
			seen |= same_lang(t->lists[j].lang, l);
		if (!seen) {
			int rc = build_list(t, l, 0);
			if (rc)
				return rc;
		}
	}
	/* With one language, its list already holds every file: documents of unknown language
	 * share it (a list of millions of rules is not compiled twice). */
	int rc;
	if (t->nlists == 1) {
		t->all = 0;
	} else {
		if ((rc = build_list(t, NULL, 0)))
			return rc;
		t->all = (long)t->nlists - 1;
	}
	t->free = -1;
	size_t nfree = 0;
	for (size_t i = 0; i < t->nfiles; i++)
		nfree += t->files[i].lang == NULL;
	if (nfree == t->nfiles) {
		t->free = t->all;
	} else if (nfree > 0) {
		if ((rc = build_list(t, NULL, 1)))
			return rc;
		t->free = (long)t->nlists - 1;
	}
	return LLM_OK;
}

int llm_tox_ready(llm_tox *t)
{
	int rc = build_lists(t);
	if (rc)
		return rc;
	int cjk = 0;
	for (size_t i = 0; i < t->nlists; i++)
		cjk |= llm_wordlist_has_cjk(t->lists[i].w);
	if (!t->dict && ((t->zh_bounds && cjk) || t->model_words) &&
	    llm_zhseg_dict_default(&t->dict) != LLM_OK)
		return llm_fail(LLM_ENOTFOUND, "%s: %s",
		                t->model_words ? "the model reads Chinese words" : "Chinese word boundaries",
		                llm_last_error());
	return LLM_OK;
}

int llm_tox_has_words(const llm_tox *t) { return t->nlists > 0; }
int llm_tox_has_model(const llm_tox *t) { return t->model != NULL || t->ext.score != NULL; }

void llm_tox_set_external(llm_tox *t, const llm_tox_model *m)
{
	llm_fasttext_free(t->model);
	t->model = NULL;
	t->model_words = 0;
	if (t->ext.free)
		t->ext.free(t->ext.ctx);
	t->ext = *m;
}

llm_tox_scratch *llm_tox_scratch_new(const llm_tox *t)
{
	llm_tox_scratch *s = llm_calloc(1, sizeof *s);
	s->t = t;
	s->ws = llm_calloc(t->nlists + 1, sizeof *s->ws);
	if (t->ext.score && !(s->ext = t->ext.scratch_new(t->ext.ctx))) {
		llm_tox_scratch_free(s);
		return NULL;
	}
	for (size_t i = 0; i < t->nlists; i++)
		if (!(s->ws[i] = llm_wordlist_scratch_new(t->lists[i].w))) {
			llm_tox_scratch_free(s);
			return NULL;
		}
	if (t->model) {
		s->fs = llm_fasttext_scratch_new(t->model);
		s->pred = llm_calloc((size_t)llm_fasttext_nlabels(t->model) + 1, sizeof *s->pred);
	}
	if (t->dict)
		s->seg = llm_zhseg_new(t->dict);
	llm_buf_init(&s->norm);
	llm_buf_init(&s->bounds);
	return s;
}

void llm_tox_scratch_free(llm_tox_scratch *s)
{
	if (!s)
		return;
	if (s->ext)
		s->t->ext.scratch_free(s->ext);
	for (size_t i = 0; s->ws[i]; i++)
		llm_wordlist_scratch_free(s->ws[i]);
	free(s->ws);
	llm_fasttext_scratch_free(s->fs);
	free(s->pred);
	llm_zhseg_free(s->seg);
	llm_buf_release(&s->norm);
	llm_buf_release(&s->bounds);
	free(s);
}

/* The list for a document: its primary language subtag's list; for a language no list
 * names, the language-free lists (-1: none); without a language, every list. */
static long pick_list(const llm_tox *t, const char *lang, size_t lang_len)
{
	if (!lang || lang_len == 0)
		return t->all;
	char key[LLM_TOXLANG_TAG];
	llm_toxlang_key(lang, lang_len, key);
	for (size_t i = 0; i < t->nlists; i++) {
		const char *l = t->lists[i].lang;
		if (l && strcasecmp(l, key) == 0)
			return (long)i;
	}
	return t->free;
}

void llm_tox_score(const llm_tox *t, llm_tox_scratch *s, const char *text, size_t len,
                   const char *lang, size_t lang_len, const llm_tox_policy *p, llm_tox_result *r)
{
	const llm_fasttext *model = !p || p->model ? t->model : NULL;
	r->words = t->nlists > 0 && (!p || p->words);
	r->hits = 0;
	r->chars = llm_utf8_count(text, len);
	r->score = -1;
	long li = r->words ? pick_list(t, lang, lang_len) : -1;
	char key[LLM_TOXLANG_TAG];
	int zh = !lang || lang_len == 0 || strcmp(llm_toxlang_key(lang, lang_len, key), "zh") == 0;
	int bounds = li >= 0 && s->seg && t->zh_bounds && zh && llm_wordlist_has_cjk(t->lists[li].w);
	int words = model && t->model_words && has_han(text, len);
	if (model) {
		llm_buf_reset(&s->norm);
		normalize_chars(text, len, &s->norm);
	}
	if (words)
		add_words(s->seg, text, len, bounds ? &s->bounds : NULL, &s->norm, 0);
	else if (bounds)
		segment(s->seg, text, len, &s->bounds, NULL);
	if (li >= 0)
		r->hits = llm_wordlist_scan(t->lists[li].w, s->ws[li], text, len,
		                            bounds ? (const uint8_t *)s->bounds.p : NULL, NULL, 0);
	r->per_1k = r->chars ? (double)r->hits * 1000.0 / (double)r->chars : 0.0;
	/* the second stage: on what the rules pass */
	if (t->ext.score && (!p || p->model) && !(p && llm_tox_words_fire(r, p))) {
		double x = t->ext.score(t->ext.ctx, s->ext, text, len);
		r->score = x < 0 ? 0 : x > 1 ? 1 : x;
	}
	if (model) {
		int n = llm_fasttext_predict(model, s->fs, s->norm.p, s->norm.len, 0, 0.0f, s->pred);
		r->score = 0.0;
		for (int i = 0; i < n; i++)
			if (s->pred[i].label == t->label)
				r->score = s->pred[i].prob > 1.0f ? 1.0 : (double)s->pred[i].prob;
	}
}
