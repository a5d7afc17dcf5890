/*
 * pretok.c — PCRE2-JIT pre-tokenizer with the exact patterns of tiktoken's encodings.
 *
 * The reference engines differ from PCRE2 in a few places that change token ids, so the
 * pattern is rewritten before compiling (see pretok.h): \s becomes the explicit White_Space
 * set, letter/number/mark properties gain the code points newer than this PCRE2's Unicode
 * tables, and $ becomes \z.
 *
 * The named patterns (and the other spellings of them that tokenizer files use) skip PCRE2:
 * hand-compiled matchers (pretok_fast.c) find the same matches several times faster.
 */
#include "pretok.h"

#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/utf8.h"
#include "pretok_fast.h"
#include "pretok_unicode.h"

/*
 * tiktoken's patterns. r50k/p50k/cl100k use the forms from tiktoken_ext/openai_public.py before
 * its possessive/`$` rewrite (the two are equivalent; these avoid `$`, whose PCRE2 meaning
 * differs). The contractions of cl100k, o200k, llama3 and qwen are case-insensitive, which also
 * folds U+017F (long s) and U+212A (Kelvin) as Rust's regex does.
 */
static const struct {
	const char *name;
	const char *pattern;
	int fast; /* its hand-compiled matcher (pretok_fast.h) */
} named[] = {
	{ "gpt2", "'(?:[sdmt]|ll|ve|re)| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+", PRETOK_FAST_GPT2 },
	{ "r50k", "'(?:[sdmt]|ll|ve|re)| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+", PRETOK_FAST_GPT2 },
	{ "p50k", "'(?:[sdmt]|ll|ve|re)| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+", PRETOK_FAST_GPT2 },
	{ "cl100k", "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"
	            "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", PRETOK_FAST_CL100K },
	{ "o200k", "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
	           "(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
	           "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*"
	           "(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
	           "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", PRETOK_FAST_O200K },
	{ "llama3", "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"
	            "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", PRETOK_FAST_CL100K },
	{ "qwen", "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
	          "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", PRETOK_FAST_QWEN },
	/* Qwen3.5 and 3.6: marks join the letters they follow */
	{ "qwen3.5", "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}"
	             "| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", PRETOK_FAST_QWEN35 },
};

/* DeepSeek-V3's pre-tokenizer: digits in threes, then runs of CJK ideographs and kana, then
 * its main pattern, each splitting what the ones before left (tokenizer.json Splits). */
static const char *const deepseek_seq[] = {
	"\\p{N}{1,3}",
	"[\\x{4e00}-\\x{9fa5}\\x{3040}-\\x{309f}\\x{30a0}-\\x{30ff}]+",
	"[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
	"| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};

/* The other patterns with a matcher of their own: DeepSeek's, and GPT-2's as tokenizer.json's
 * ByteLevel applies it (its contractions spelt out, the same seven alternatives). */
static const struct {
	const char *pattern;
	int fast;
} fast_other[] = {
	{ "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+", PRETOK_FAST_GPT2 },
	{ NULL, PRETOK_FAST_DIGITS3 }, /* deepseek_seq[i] for i = 0, 1, 2 */
	{ NULL, PRETOK_FAST_CJK },
	{ NULL, PRETOK_FAST_DEEPSEEK },
};

/* The matcher of pattern re, or PRETOK_FAST_NONE. */
static int fast_kind(const char *re)
{
	for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
		if (strcmp(named[i].pattern, re) == 0)
			return named[i].fast;
	for (size_t i = 0; i < sizeof fast_other / sizeof fast_other[0]; i++) {
		const char *p = fast_other[i].pattern ? fast_other[i].pattern : deepseek_seq[i - 1];
		if (strcmp(p, re) == 0)
			return fast_other[i].fast;
	}
	return PRETOK_FAST_NONE;
}

const char *const *llm_pretok_named_seq(const char *name, size_t *n)
{
	if (strcmp(name, "deepseek") == 0) {
		*n = sizeof deepseek_seq / sizeof *deepseek_seq;
		return deepseek_seq;
	}
	const char *p = llm_pretok_named(name);
	if (!p)
		return NULL;
	for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
		if (named[i].pattern == p) {
			*n = 1;
			return &named[i].pattern;
		}
	return NULL;
}

const char *llm_pretok_named(const char *name)
{
	size_t n = strlen(name);
	/* "cl100k_base" names the same pattern as "cl100k". */
	if (n > 5 && strcmp(name + n - 5, "_base") == 0)
		n -= 5;
	for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
		if (strlen(named[i].name) == n && memcmp(named[i].name, name, n) == 0)
			return named[i].pattern;
	return NULL;
}

/* Unicode White_Space, the meaning of \s in Rust's regex and in Oniguruma. */
#define WS_SET "\\t-\\r \\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}"

struct llm_pretok {
	char *pattern;
	pcre2_code *code; /* NULL with a hand-compiled matcher */
	int fast;         /* that matcher (pretok_fast.h), or PRETOK_FAST_NONE */
	bool jit;
	bool keep_gaps;
};

struct llm_pretok_state {
	const llm_pretok *pt;
	pcre2_match_data *md;
	pcre2_match_context *mctx;
	pcre2_jit_stack *stack;
	const char *s;
	size_t n, pos, search, valid_end;
	bool pending;
	size_t pend_start, pend_end;
	bool matched; /* the last piece was a match of the pattern */
};

/* The extra ranges for property name p (the text between the braces), or NULL. */
static const char *prop_extra(const char *p, size_t len)
{
	for (size_t i = 0; i < sizeof llm_pretok_uni_extra / sizeof llm_pretok_uni_extra[0]; i++) {
		const char *name = llm_pretok_uni_extra[i].prop;
		if (strlen(name) == len && memcmp(name, p, len) == 0)
			return llm_pretok_uni_extra[i].ranges;
	}
	return NULL;
}

/* Rewrite re into out (see the top of this file). Character classes are tracked so that a
 * set is spliced into an enclosing class or wrapped in one of its own. */
static void rewrite(const char *re, llm_buf *out)
{
	bool in_class = false;
	for (const char *p = re; *p; p++) {
		if (*p == '\\' && p[1]) {
			char c = p[1];
			if (c == 's') {
				llm_buf_adds(out, in_class ? WS_SET : "[" WS_SET "]");
				p++;
				continue;
			}
			if (c == 'S' && !in_class) {
				llm_buf_adds(out, "[^" WS_SET "]");
				p++;
				continue;
			}
			if (c == 'p' && p[2] == '{') {
				const char *close = strchr(p + 3, '}');
				const char *extra = close ? prop_extra(p + 3, (size_t)(close - (p + 3))) : NULL;
				if (extra) {
					if (!in_class)
						llm_buf_addc(out, '[');
					llm_buf_add(out, p, (size_t)(close + 1 - p));
					llm_buf_adds(out, extra);
					if (!in_class)
						llm_buf_addc(out, ']');
					p = close;
					continue;
				}
			}
			llm_buf_add(out, p, 2);
			p++;
			continue;
		}
		if (in_class) {
			if (*p == '[' && p[1] == ':') { /* POSIX class [:name:] */
				const char *e = strstr(p + 2, ":]");
				if (e) {
					llm_buf_add(out, p, (size_t)(e + 2 - p));
					p = e + 1;
					continue;
				}
			}
			if (*p == ']')
				in_class = false;
			llm_buf_addc(out, *p);
			continue;
		}
		if (*p == '[') {
			in_class = true;
			llm_buf_addc(out, '[');
			/* A ']' right after '[' or '[^' is a literal member. */
			if (p[1] == '^') {
				llm_buf_addc(out, '^');
				p++;
			}
			if (p[1] == ']') {
				llm_buf_addc(out, ']');
				p++;
			}
			continue;
		}
		if (*p == '$') {
			llm_buf_adds(out, "\\z");
			continue;
		}
		llm_buf_addc(out, *p);
	}
}

static int pretok_new(llm_pretok **ptp, const char *regex, bool keep_gaps, bool fast)
{
	*ptp = NULL;
	int kind = fast ? fast_kind(regex) : PRETOK_FAST_NONE;
	pcre2_code *code = NULL;
	if (kind == PRETOK_FAST_NONE) {
		llm_buf re = LLM_BUF_INIT;
		rewrite(regex, &re);
		int err;
		PCRE2_SIZE off;
		code = pcre2_compile((PCRE2_SPTR)re.p, re.len, PCRE2_UTF | PCRE2_UCP, &err, &off, NULL);
		llm_buf_release(&re);
		if (!code) {
			PCRE2_UCHAR msg[256];
			pcre2_get_error_message(err, msg, sizeof msg);
			return llm_fail(LLM_EINVAL, "bad pre-tokenizer pattern: %s", (const char *)msg);
		}
	}
	llm_pretok *pt = llm_calloc(1, sizeof *pt);
	pt->pattern = llm_strdup(regex);
	pt->code = code;
	pt->fast = kind;
	pt->keep_gaps = keep_gaps;
	pt->jit = code && pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
	*ptp = pt;
	return LLM_OK;
}

int llm_pretok_new(llm_pretok **ptp, const char *regex, bool keep_gaps)
{
	return pretok_new(ptp, regex, keep_gaps, true);
}

int llm_pretok_new_pcre2(llm_pretok **ptp, const char *regex, bool keep_gaps)
{
	return pretok_new(ptp, regex, keep_gaps, false);
}

bool llm_pretok_is_fast(const llm_pretok *pt)
{
	return pt->fast != PRETOK_FAST_NONE;
}

void llm_pretok_free(llm_pretok *pt)
{
	if (!pt)
		return;
	pcre2_code_free(pt->code);
	free(pt->pattern);
	free(pt);
}

const char *llm_pretok_pattern(const llm_pretok *pt)
{
	return pt->pattern;
}

llm_pretok_state *llm_pretok_state_new(const llm_pretok *pt)
{
	llm_pretok_state *st = llm_calloc(1, sizeof *st);
	st->pt = pt;
	if (!pt->code)
		return st;
	st->md = pcre2_match_data_create_from_pattern(pt->code, NULL);
	st->mctx = pcre2_match_context_create(NULL);
	if (!st->md || !st->mctx)
		llm_malloc((size_t)-1); /* routes to the out-of-memory handler */
	if (pt->jit) {
		/* Long whitespace runs make \s+(?!\S) backtrack deeply; the stack grows on demand. */
		st->stack = pcre2_jit_stack_create(32 * 1024, 64 * 1024 * 1024, NULL);
		if (!st->stack)
			llm_malloc((size_t)-1);
		pcre2_jit_stack_assign(st->mctx, NULL, st->stack);
	}
	return st;
}

void llm_pretok_state_free(llm_pretok_state *st)
{
	if (!st)
		return;
	pcre2_match_data_free(st->md);
	pcre2_match_context_free(st->mctx);
	pcre2_jit_stack_free(st->stack);
	free(st);
}

void llm_pretok_begin(llm_pretok_state *st, const char *s, size_t n)
{
	st->s = s;
	st->n = n;
	st->pos = st->search = st->valid_end = 0;
	st->pending = false;
}

void llm_pretok_begin_valid(llm_pretok_state *st, const char *s, size_t n)
{
	llm_pretok_begin(st, s, n);
	st->valid_end = n; /* one valid run: the search starts at 0 */
}

int llm_pretok_next(llm_pretok_state *st, size_t *start, size_t *end)
{
	st->matched = false;
	if (st->pending) {
		st->pending = false;
		st->matched = true;
		*start = st->pend_start;
		*end = st->pos = st->search = st->pend_end;
		return LLM_OK;
	}
	for (;;) {
		if (st->pos >= st->n)
			return LLM_EOF;
		if (st->search >= st->valid_end) {
			if (st->pos < st->valid_end) { /* unmatched tail of a valid run */
				size_t p = st->pos;
				st->pos = st->valid_end;
				if (st->pt->keep_gaps) {
					*start = p;
					*end = st->valid_end;
					return LLM_OK;
				}
				continue;
			}
			size_t v = llm_utf8_valid_prefix(st->s + st->pos, st->n - st->pos);
			if (v == 0) { /* one maximal ill-formed subsequence */
				uint32_t cp;
				size_t k = llm_utf8_decode(st->s + st->pos, st->n - st->pos, &cp);
				*start = st->pos;
				*end = st->pos = st->search = st->valid_end = st->pos + k;
				return LLM_OK;
			}
			st->valid_end = st->pos + v;
			st->search = st->pos;
		}
		size_t ms, me;
		if (st->pt->fast) {
			if (!pretok_fast_find_n(st->pt->fast, st->s, st->valid_end, st->search, &ms, &me, 1)) {
				st->search = st->valid_end;
				continue;
			}
		} else {
			int rc;
			if (st->pt->jit)
				rc = pcre2_jit_match(st->pt->code, (PCRE2_SPTR)st->s, st->valid_end, st->search, 0,
				                     st->md, st->mctx);
			else
				rc = pcre2_match(st->pt->code, (PCRE2_SPTR)st->s, st->valid_end, st->search,
				                 PCRE2_NO_UTF_CHECK, st->md, st->mctx);
			if (rc == PCRE2_ERROR_NOMATCH) {
				st->search = st->valid_end;
				continue;
			}
			if (rc < 0) {
				PCRE2_UCHAR msg[256];
				pcre2_get_error_message(rc, msg, sizeof msg);
				/* A limit of the match (the backtracking a pattern needs on this text) is a
				 * property of the document, and the caller rejects it; any other error is
				 * a fault of this code. */
				bool limit = rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
				             rc == PCRE2_ERROR_HEAPLIMIT || rc == PCRE2_ERROR_JIT_STACKLIMIT;
				return llm_fail(limit ? LLM_ETOOLONG : LLM_EINTERNAL,
				                "pre-tokenizer: %s at byte %zu", (const char *)msg, st->search);
			}
			PCRE2_SIZE *ov = pcre2_get_ovector_pointer(st->md);
			ms = ov[0];
			me = ov[1];
			if (me == ms) { /* an empty match consumes nothing: search again one character on */
				uint32_t cp;
				st->search = ms + (ms < st->valid_end ?
				                   llm_utf8_decode(st->s + ms, st->valid_end - ms, &cp) : 1);
				continue;
			}
		}
		if (ms > st->pos && st->pt->keep_gaps) {
			*start = st->pos;
			*end = ms;
			st->pos = ms;
			st->pending = true;
			st->pend_start = ms;
			st->pend_end = me;
			return LLM_OK;
		}
		*start = ms;
		*end = st->pos = st->search = me;
		st->matched = true;
		return LLM_OK;
	}
}

/*
 * The matches of a hand-compiled matcher from st->search to the end of the valid run, at most
 * max: one call for a batch of pieces where llm_pretok_next makes one each. Without gaps to
 * return between them, these are the pieces; the text after the last match of the run is
 * skipped as llm_pretok_next skips it.
 */
static size_t fast_run(llm_pretok_state *st, size_t *start, size_t *end, size_t max)
{
	size_t k = pretok_fast_find_n(st->pt->fast, st->s, st->valid_end, st->search, start, end, max);
	if (k) {
		st->pos = end[k - 1];
		st->matched = true;
	}
	st->search = k == max ? st->pos : st->valid_end;
	return k;
}

int llm_pretok_next_n(llm_pretok_state *st, size_t *start, size_t *end, size_t max, size_t *n)
{
	size_t k = 0;
	int rc = LLM_OK;
	bool batch = st->pt->fast && !st->pt->keep_gaps;
	while (k < max) {
		if (batch && st->search < st->valid_end) {
			k += fast_run(st, start + k, end + k, max - k);
			if (k == max)
				break;
		}
		/* the end of the valid run: an ill-formed sequence, the next run, or the end */
		if ((rc = llm_pretok_next(st, &start[k], &end[k])))
			break;
		k++;
	}
	*n = k;
	return rc == LLM_EOF && k ? LLM_OK : rc;
}

bool llm_pretok_matched(const llm_pretok_state *st)
{
	return st->matched;
}
