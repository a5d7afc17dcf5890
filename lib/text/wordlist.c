/*
 * wordlist.c — word lists as PCRE2 JIT patterns built from prefix trees.
 *
 * Why trees: a flat alternation of 2,000 words makes PCRE2 try every alternative at every
 * position that passes its first-character filter; factoring common prefixes
 * ("ass(?:hole|wipe|)") lets one failed character rule out a whole subtree.
 *
 * Two patterns, merged at scan time:
 *  - whole-word entries: a tree over code points of the lower-cased entries (every branch
 *    point is a character boundary, so the pattern stays valid UTF-8), compiled in UTF mode
 *    with PCRE2_CASELESS folding the text at match time. Word boundaries are placed where
 *    they matter: one look-behind before the entries that start with a letter, mark or digit,
 *    a look-ahead after those that end with one, nothing around symbols ("🖕").
 *  - CJK substring entries: a tree over the bytes of the UTF-8, compiled in byte mode. A CJK
 *    root has a few hundred children that all begin with one of six lead bytes; over code
 *    points PCRE2 tried them one by one at every CJK character (3 MB/s on Chinese text),
 *    over bytes it branches at each byte (32 MB/s). UTF-8 is self-synchronizing, so a valid
 *    entry only matches at character boundaries. Case folding is ASCII only here.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "wordlist.h"

#include <pcre2.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/io.h"
#include "core/utf8.h"

#define WORDCHAR (LLM_UC_LETTER | LLM_UC_MARK | LLM_UC_NUMBER)
/* A word character is a letter, mark or digit that is not CJK: Chinese and Japanese text
 * runs into Latin words without spaces ("他是个bitch"). */
/* A word character is a letter, mark or digit that is not CJK: Chinese and Japanese text
 * runs into Latin words without spaces ("他是个bitch"). Defined once as group "w" and called
 * at every boundary, which keeps a 2,000-entry pattern within PCRE2's size limit. */
#define DEFINE_W "(?(DEFINE)(?<w>(?![\\p{Han}\\p{Hiragana}\\p{Katakana}\\p{Hangul}])[\\p{L}\\p{M}\\p{N}]))"
#define NOT_BEFORE "(?<!(?&w))"
#define NOT_AFTER "(?!(?&w))"

typedef struct node {
	uint32_t cp;
	int end;
	struct node **kids; /* sorted by cp */
	size_t nkids;
} node;

struct llm_wordlist {
	node *word_root, *sub_root; /* whole-word entries (code points), CJK entries (bytes) */
	size_t size, cjk_min;
	llm_buf pattern, sub_pattern;
	pcre2_code *code, *sub; /* NULL when there is no entry of that kind */
	int jit, sub_jit, compiled;
};

struct llm_wordlist_scratch {
	pcre2_match_data *md, *sub_md;
};

static node *node_new(uint32_t cp)
{
	node *n = llm_calloc(1, sizeof *n);
	n->cp = cp;
	return n;
}

static void node_free(node *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nkids; i++)
		node_free(n->kids[i]);
	free(n->kids);
	free(n);
}

static node *node_child(node *n, uint32_t cp)
{
	size_t lo = 0, hi = n->nkids;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (n->kids[mid]->cp < cp)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n->nkids && n->kids[lo]->cp == cp)
		return n->kids[lo];
	n->kids = llm_realloc(n->kids, (n->nkids + 1) * sizeof *n->kids);
	memmove(n->kids + lo + 1, n->kids + lo, (n->nkids - lo) * sizeof *n->kids);
	n->nkids++;
	return n->kids[lo] = node_new(cp);
}

llm_wordlist *llm_wordlist_new(void)
{
	llm_wordlist *w = llm_calloc(1, sizeof *w);
	w->word_root = node_new(0);
	w->sub_root = node_new(0);
	w->cjk_min = 1;
	llm_buf_init(&w->pattern);
	llm_buf_init(&w->sub_pattern);
	return w;
}

void llm_wordlist_free(llm_wordlist *w)
{
	if (!w)
		return;
	node_free(w->word_root);
	node_free(w->sub_root);
	llm_buf_release(&w->pattern);
	llm_buf_release(&w->sub_pattern);
	pcre2_code_free(w->code);
	pcre2_code_free(w->sub);
	free(w);
}

size_t llm_wordlist_size(const llm_wordlist *w) { return w->size; }
void llm_wordlist_set_cjk_min(llm_wordlist *w, size_t n) { w->cjk_min = n; }

void llm_wordlist_add(llm_wordlist *w, const char *word, size_t len)
{
	/* Decode, lower-case, collapse white space runs to one space, trim. */
	uint32_t stack[256], *cps = stack;
	size_t n = 0, cap = 256;
	int cjk = 0;
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		i += llm_utf8_decode(word + i, len - i, &cp);
		unsigned cls = llm_uc_class(cp);
		if (cls & LLM_UC_SPACE) {
			if (n > 0 && cps[n - 1] != ' ')
				cp = ' ';
			else
				continue;
		} else {
			cp = llm_uc_tolower(cp);
			cjk |= (cls & LLM_UC_CJK) != 0;
		}
		if (n == cap) {
			cap *= 2;
			if (cps == stack) {
				cps = llm_malloc(cap * sizeof *cps);
				memcpy(cps, stack, sizeof stack);
			} else {
				cps = llm_realloc(cps, cap * sizeof *cps);
			}
		}
		cps[n++] = cp;
	}
	while (n > 0 && cps[n - 1] == ' ')
		n--;
	if (n > 0 && !(cjk && n < w->cjk_min)) {
		node *at = cjk ? w->sub_root : w->word_root;
		for (size_t i = 0; i < n; i++) {
			if (!cjk) {
				at = node_child(at, cps[i]);
				continue;
			}
			char u[4];
			size_t ul = llm_utf8_encode(cps[i], u);
			for (size_t k = 0; k < ul; k++)
				at = node_child(at, (unsigned char)u[k]);
		}
		if (!at->end)
			w->size++;
		at->end = 1;
	}
	if (cps != stack)
		free(cps);
}

int llm_wordlist_load(llm_wordlist *w, const char *path)
{
	char *data;
	size_t len;
	int rc = llm_read_file(path, &data, &len);
	if (rc)
		return rc;
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(data + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - data) : len, b = i;
		i = e + 1;
		while (b < e && (data[b] == ' ' || data[b] == '\t'))
			b++;
		if (b == e || data[b] == '#')
			continue;
		llm_wordlist_add(w, data + b, e - b);
	}
	free(data);
	return LLM_OK;
}

static int is_word_cp(uint32_t cp)
{
	unsigned cls = llm_uc_class(cp);
	return (cls & WORDCHAR) && !(cls & LLM_UC_CJK);
}

/* One tree edge: a code point (words) or a byte (substrings, bytes set). */
static void emit_cp(llm_buf *p, uint32_t cp, int bytes)
{
	if (cp == ' ') {
		llm_buf_adds(p, "\\s+");
	} else if (bytes && cp >= 0x80) {
		llm_buf_addf(p, "\\x%02x", (unsigned)cp);
	} else if (cp < 0x80) {
		if (!((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9')))
			llm_buf_addc(p, '\\');
		llm_buf_addc(p, (char)cp);
	} else {
		char u[4];
		llm_buf_add(p, u, llm_utf8_encode(cp, u));
	}
}

/* The subtree below n: its children (longest first by greediness), then n's own end. */
static void emit_node(llm_buf *p, const node *n, int words)
{
	size_t alts = n->nkids + (n->end ? 1 : 0);
	int group = alts > 1;
	if (group)
		llm_buf_adds(p, "(?:");
	for (size_t i = 0; i < n->nkids; i++) {
		if (i)
			llm_buf_addc(p, '|');
		emit_cp(p, n->kids[i]->cp, !words);
		emit_node(p, n->kids[i], words);
	}
	if (n->end) {
		if (n->nkids)
			llm_buf_addc(p, '|');
		if (words && is_word_cp(n->cp))
			llm_buf_adds(p, NOT_AFTER);
	}
	if (group)
		llm_buf_addc(p, ')');
}

/*
 * The root's children. For whole-word entries those starting with a word character share one
 * look-behind, tested once per position (inside a word it fails at once, which is where most
 * positions are); the others follow without it. A position can only start entries of one
 * kind, so the split keeps leftmost-longest matching.
 */
static void emit_root(llm_buf *p, const node *root, int words)
{
	int first = 1;
	for (int pass = 0; pass < 2; pass++) {
		int any = 0;
		for (size_t i = 0; i < root->nkids; i++)
			any |= (words && is_word_cp(root->kids[i]->cp)) == (pass == 0);
		if (!any)
			continue;
		if (!first)
			llm_buf_addc(p, '|');
		first = 0;
		llm_buf_adds(p, pass == 0 ? NOT_BEFORE "(?:" : "(?:");
		int alt = 0;
		for (size_t i = 0; i < root->nkids; i++) {
			if ((words && is_word_cp(root->kids[i]->cp)) != (pass == 0))
				continue;
			if (alt++)
				llm_buf_addc(p, '|');
			emit_cp(p, root->kids[i]->cp, !words);
			emit_node(p, root->kids[i], words);
		}
		llm_buf_addc(p, ')');
	}
}

static int compile_one(llm_buf *pat, uint32_t opts, pcre2_code **code, int *jit)
{
	int err;
	PCRE2_SIZE at;
	*code = pcre2_compile((PCRE2_SPTR)pat->p, pat->len, opts, &err, &at, NULL);
	if (!*code) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(err, msg, sizeof msg);
		return llm_fail(LLM_EINVAL, "word list pattern: %s at offset %zu", (char *)msg,
		                (size_t)at);
	}
	/* JIT is an optimisation: where the platform lacks it, the interpreter gives the same
	 * matches. */
	*jit = pcre2_jit_compile(*code, PCRE2_JIT_COMPLETE) == 0;
	return LLM_OK;
}

int llm_wordlist_compile(llm_wordlist *w)
{
	if (w->compiled)
		return LLM_OK;
	if (w->size == 0)
		return llm_fail(LLM_EINVAL, "word list is empty");
	llm_buf_reset(&w->pattern);
	llm_buf_reset(&w->sub_pattern);
	int rc;
	if (w->word_root->nkids) {
		llm_buf_adds(&w->pattern, DEFINE_W);
		emit_root(&w->pattern, w->word_root, 1);
		rc = compile_one(&w->pattern,
		                 PCRE2_UTF | PCRE2_UCP | PCRE2_CASELESS | PCRE2_MATCH_INVALID_UTF,
		                 &w->code, &w->jit);
		if (rc)
			return rc;
	}
	if (w->sub_root->nkids) {
		emit_root(&w->sub_pattern, w->sub_root, 0);
		rc = compile_one(&w->sub_pattern, PCRE2_CASELESS, &w->sub, &w->sub_jit);
		if (rc)
			return rc;
	}
	w->compiled = 1;
	return LLM_OK;
}

const char *llm_wordlist_pattern(const llm_wordlist *w)
{
	return w->pattern.p ? w->pattern.p : "";
}

const char *llm_wordlist_sub_pattern(const llm_wordlist *w)
{
	return w->sub_pattern.p ? w->sub_pattern.p : "";
}

llm_wordlist_scratch *llm_wordlist_scratch_new(const llm_wordlist *w)
{
	llm_wordlist_scratch *s = llm_calloc(1, sizeof *s);
	if ((w->code && !(s->md = pcre2_match_data_create_from_pattern(w->code, NULL))) ||
	    (w->sub && !(s->sub_md = pcre2_match_data_create_from_pattern(w->sub, NULL)))) {
		llm_wordlist_scratch_free(s);
		return NULL;
	}
	return s;
}

void llm_wordlist_scratch_free(llm_wordlist_scratch *s)
{
	if (!s)
		return;
	pcre2_match_data_free(s->md);
	pcre2_match_data_free(s->sub_md);
	free(s);
}

/* The next match of one pattern at or after off: its span, or start = SIZE_MAX for none. */
typedef struct {
	size_t start, end;
} span;

static span next_match(const pcre2_code *code, int jit, pcre2_match_data *md, const char *text,
                       size_t len, size_t off)
{
	span sp = { SIZE_MAX, SIZE_MAX };
	if (!code || off >= len)
		return sp;
	int rc = jit ? pcre2_jit_match(code, (PCRE2_SPTR)text, len, off, 0, md, NULL)
	             : pcre2_match(code, (PCRE2_SPTR)text, len, off, 0, md, NULL);
	if (rc >= 0) {
		PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
		sp.start = ov[0];
		sp.end = ov[1] > ov[0] ? ov[1] : ov[0] + 1;
	}
	return sp;
}

size_t llm_wordlist_scan(const llm_wordlist *w, llm_wordlist_scratch *s, const char *text,
                         size_t len, llm_wordlist_hit *hits, size_t max_hits)
{
	/* Leftmost first, the longer one on a tie, then on from its end: the same rule each
	 * pattern applies inside itself. */
	size_t n = 0;
	span a = next_match(w->code, w->jit, s->md, text, len, 0);
	span b = next_match(w->sub, w->sub_jit, s->sub_md, text, len, 0);
	while (a.start != SIZE_MAX || b.start != SIZE_MAX) {
		span m = (a.start < b.start || (a.start == b.start && a.end >= b.end)) ? a : b;
		if (n < max_hits) {
			hits[n].off = m.start;
			hits[n].len = m.end - m.start;
		}
		n++;
		if (a.start < m.end)
			a = next_match(w->code, w->jit, s->md, text, len, m.end);
		if (b.start < m.end)
			b = next_match(w->sub, w->sub_jit, s->sub_md, text, len, m.end);
	}
	return n;
}
