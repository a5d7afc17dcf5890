/*
 * pretok_fast.c — the named pre-tokenizer patterns as hand-written matchers.
 *
 * A matcher takes a start position p and returns the end of the pattern's match there (0:
 * none; a match is never empty, so a real end is never 0), trying the alternatives in order
 * as PCRE2 does. Where PCRE2 would backtrack, the first path that succeeds is computed
 * directly:
 *   - `X? Y+` with X and Y disjoint takes X when Y follows, else starts at Y;
 *   - `\s+(?!\S)` gives back the last white-space character unless the run ends the text (or
 *     is a single character, which `\s+` then takes whole);
 *   - `\s*[\r\n]+` ends after the last CR or LF of the white-space run;
 *   - o200k's `[UP]*[LO]+` (the classes overlap in Lm, Lo and marks) either continues into a
 *     run of LO after the longest run of UP, or ends after the last LO inside that run.
 * The case-insensitive contractions are those of PCRE2's caseless matching: 's' also matches
 * U+017F (long s), and no other letter of them has a non-ASCII case partner.
 */
#include "pretok_fast.h"

#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "pretok_classes.h"

const char *const pretok_fast_class_re[PRETOK_FAST_NCLASS] = {
	"\\p{L}", "\\p{N}", "\\s", "\\p{M}", "[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]",
	"[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]", "\\p{P}", "\\p{S}",
};

unsigned pretok_fast_class(unsigned cp)
{
	return cp > 0x10FFFF ? 0 : pt_stage2[pt_stage1[cp >> 8]][cp & 255];
}

typedef const unsigned char uchar;

/* The code point at s[i] (valid UTF-8) and its length. */
static inline uint32_t cp_at(uchar *s, size_t i, size_t *len)
{
	unsigned c = s[i];
	if (c < 0x80) {
		*len = 1;
		return c;
	}
	if (c < 0xe0) {
		*len = 2;
		return (c & 0x1fu) << 6 | (s[i + 1] & 0x3fu);
	}
	if (c < 0xf0) {
		*len = 3;
		return (c & 0x0fu) << 12 | (s[i + 1] & 0x3fu) << 6 | (s[i + 2] & 0x3fu);
	}
	*len = 4;
	return (c & 0x07u) << 18 | (s[i + 1] & 0x3fu) << 12 | (s[i + 2] & 0x3fu) << 6 | (s[i + 3] & 0x3fu);
}

/* The class bits of the character at s[i] and its length. */
static inline unsigned cls_at(uchar *s, size_t i, size_t *len)
{
	if (s[i] < 0x80) {
		*len = 1;
		return pt_stage2[0][s[i]];
	}
	uint32_t cp = cp_at(s, i, len);
	return pt_stage2[pt_stage1[cp >> 8]][cp & 255];
}

/* The classes of every character of U+4000-U+4DBF and U+4E00-U+9FFF, the CJK ideographs
 * of lead bytes E4-E9 (E4 B7 holds U+4DC0-U+4DFF, hexagram symbols): test_pretok checks the
 * table for it. */
#define HAN_CLASS (PT_L | PT_UP | PT_LO)

/* The end of the run from i of those characters: Chinese text, three bytes each, taken
 * without decoding or class lookups; with SSE2, five at a time (their lead bytes at 0, 3, 6,
 * 9 and 12 of a 16-byte block: a run of Chinese averages nine characters). */
static inline size_t han_run(uchar *s, size_t i, size_t end)
{
#ifdef __SSE2__
	const __m128i e4 = _mm_set1_epi8((char)0xe4), e5 = _mm_set1_epi8((char)0xe5),
	              b7 = _mm_set1_epi8((char)0xb7), four = _mm_set1_epi8(4);
	for (; i + 16 <= end; i += 15) {
		__m128i v = _mm_loadu_si128((const __m128i *)(s + i)), d = _mm_sub_epi8(v, e5);
		__m128i lead = _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(d, four), d), /* E5-E9 */
		                            _mm_andnot_si128(_mm_cmpeq_epi8(_mm_srli_si128(v, 1), b7),
		                                             _mm_cmpeq_epi8(v, e4)));
		unsigned out = ~(unsigned)_mm_movemask_epi8(lead) & 0x1249;
		if (out)
			return i + (unsigned)__builtin_ctz(out);
	}
#endif
	while (i + 3 <= end && ((unsigned)(s[i] - 0xe5) < 5u || (s[i] == 0xe4 && s[i + 1] != 0xb7)))
		i += 3;
	return i;
}

/* The end of the run from i of characters with a bit of mask (in), or with none (out). */
static inline size_t run_in(uchar *s, size_t i, size_t end, unsigned mask)
{
	size_t len;
	for (;;) {
		if (mask & HAN_CLASS)
			i = han_run(s, i, end);
		if (i >= end || !(cls_at(s, i, &len) & mask))
			return i;
		i += len;
	}
}

static inline size_t run_out(uchar *s, size_t i, size_t end, unsigned mask)
{
	size_t len;
	while (i < end && !(cls_at(s, i, &len) & mask))
		i += len;
	return i;
}

/*
 * The end of the run from i of bytes b with b | fold in [lo, hi] (hi < 0x80; fold 0x20 with
 * 'a', 'z': the ASCII letters), sixteen bytes at a time where there is SSE2. English words
 * are mostly such runs, of a few bytes: one vector compare takes a whole word.
 */
static inline size_t ascii_run(uchar *s, size_t i, size_t end, unsigned lo, unsigned hi,
                               unsigned fold)
{
#ifdef __SSE2__
	const __m128i f = _mm_set1_epi8((char)fold), l = _mm_set1_epi8((char)lo),
	              w = _mm_set1_epi8((char)(hi - lo));
	for (; i + 16 <= end; i += 16) {
		__m128i d = _mm_sub_epi8(_mm_or_si128(_mm_loadu_si128((const __m128i *)(s + i)), f), l);
		/* d <= hi - lo, unsigned, where min(d, hi - lo) == d */
		unsigned in = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(d, w), d));
		if (in != 0xffff)
			return i + (unsigned)__builtin_ctz(~in);
	}
#endif
	while (i < end && (unsigned)((s[i] | fold) - lo) <= hi - lo)
		i++;
	return i;
}

static inline bool is_crlf(unsigned c)
{
	return c == '\r' || c == '\n';
}

static inline unsigned ascii_lower(unsigned c)
{
	return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

static inline bool ascii_alpha(unsigned c)
{
	return (c | 32) >= 'a' && (c | 32) <= 'z';
}

/* The length of a contraction at s[i]: 's 't 'm 'd 'll 've 're (caseless: any case, and
 * U+017F for s), else 0. The seven alternatives share no prefix, so their order in the
 * pattern does not matter. */
static inline size_t contraction(uchar *s, size_t i, size_t end, bool caseless)
{
	if (i + 1 >= end || s[i] != '\'')
		return 0;
	unsigned a = s[i + 1], b = i + 2 < end ? s[i + 2] : 0;
	if (caseless) {
		if (a == 0xc5 && b == 0xbf) /* U+017F LATIN SMALL LETTER LONG S */
			return 3;
		a = ascii_lower(a);
		b = ascii_lower(b);
	}
	switch (a) {
	case 's': case 't': case 'm': case 'd':
		return 2;
	case 'l':
		return b == 'l' ? 3 : 0;
	case 'v': case 'r':
		return b == 'e' ? 3 : 0;
	}
	return 0;
}

/* At most max characters of \p{N} from i (the first one known to be one, of length len). */
static inline size_t digits(uchar *s, size_t i, size_t len, size_t end, unsigned max)
{
	size_t e = i + len;
	for (unsigned k = 1; k < max && e < end && (cls_at(s, e, &len) & PT_N); k++)
		e += len;
	return e;
}

/* `\s*[\r\n]+` (when crlf) | `\s+(?!\S)` | `\s+` at i, where s[i] is white space. */
static inline size_t white(uchar *s, size_t i, size_t end, bool crlf)
{
	size_t e = i, last = i, nl = 0, len;
	bool has_nl = false, one = true;
	while (e < end && (cls_at(s, e, &len) & PT_WS)) {
		if (is_crlf(s[e])) {
			nl = e;
			has_nl = true;
		}
		one = e == i;
		last = e;
		e += len;
	}
	if (crlf && has_nl)
		return nl + 1;
	return e == end || one ? e : last;
}

/* ` ?[^OTHER]+` followed by the run of CR, LF (and '/' when slash) after it, or 0. */
static inline size_t punct(uchar *s, size_t p, size_t end, unsigned other, bool slash)
{
	size_t q = p + (s[p] == ' '), len;
	if (q >= end || (cls_at(s, q, &len) & other))
		return 0;
	size_t e = run_out(s, q + len, end, other);
	while (e < end && (is_crlf(s[e]) || (slash && s[e] == '/')))
		e++;
	return e;
}

/* gpt2: '(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ */
static size_t m_gpt2(uchar *s, size_t p, size_t end)
{
	size_t k = contraction(s, p, end, false), len;
	if (k)
		return p + k;
	size_t q = p + (s[p] == ' ');
	if (q < end) {
		unsigned c = cls_at(s, q, &len);
		if (c & PT_L)
			return run_in(s, q + len, end, PT_L);
		if (c & PT_N)
			return run_in(s, q + len, end, PT_N);
		if (!(c & (PT_WS | PT_L | PT_N)))
			return run_out(s, q + len, end, PT_WS | PT_L | PT_N);
	}
	return white(s, p, end, false);
}

/*
 * cl100k and Llama 3 (letters \p{L}, ndig 3), Qwen (ndig 1), Qwen 3.5 (letters [\p{L}\p{M}]):
 * (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?LETTERS+|\p{N}{1,ndig}
 * | ?[^\s LETTERS \p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 * A prefix that is itself in LETTERS (a mark, for Qwen 3.5) gives the same match either way.
 */
static size_t m_cl100k(uchar *s, size_t p, size_t end, unsigned letters, unsigned ndig)
{
	size_t k = contraction(s, p, end, true), len, l2;
	if (k)
		return p + k;
	unsigned c = cls_at(s, p, &len);
	if (c & letters)
		return run_in(s, p + len, end, letters);
	if (!(c & PT_N) && !is_crlf(s[p]) && p + len < end && (cls_at(s, p + len, &l2) & letters))
		return run_in(s, p + len + l2, end, letters);
	if (c & PT_N)
		return digits(s, p, len, end, ndig);
	size_t e = punct(s, p, end, PT_WS | letters | PT_N, false);
	return e ? e : white(s, p, end, true);
}

/* o200k's `[UP]*[LO]+` from t, or 0. */
static size_t o200k_lower(uchar *s, size_t t, size_t end)
{
	size_t i = t, lo_end = 0, len;
	unsigned c = 0;
	for (;;) {
		size_t h = han_run(s, i, end); /* in UP and in LO */
		if (h != i)
			i = lo_end = h;
		if (i >= end || !((c = cls_at(s, i, &len)) & PT_UP))
			break;
		i += len;
		if (c & PT_LO)
			lo_end = i;
	}
	if (i < end && (c & PT_LO))
		return run_in(s, i + len, end, PT_LO);
	return lo_end;
}

/* o200k's `[UP]+[LO]*` from t, or 0. */
static size_t o200k_upper(uchar *s, size_t t, size_t end)
{
	size_t u = run_in(s, t, end, PT_UP);
	return u == t ? 0 : run_in(s, u, end, PT_LO);
}

/*
 * o200k's first two alternatives where the text at p starts with two ASCII characters (or one
 * that ends it), without class lookups. A word: an optional prefix (an ASCII character but a
 * letter, a digit, CR and LF), a run of ASCII upper case and a run of ASCII lower case
 * ([UP]*[LO]+ and [UP]+[LO]* agree on it), its end in *e. No word when neither character is a
 * letter: UP and LO hold no other ASCII character. Else (a non-ASCII character may continue a
 * run, or start one after the prefix) the general matcher decides. It spares the two tries of
 * o200k_lower that an ASCII word costs there, and the four that fail on punctuation and
 * white space; the simpler patterns gain nothing from it.
 */
enum { O200K_GENERAL, O200K_WORD, O200K_NO_WORD };

static inline int o200k_ascii(uchar *s, size_t p, size_t end, size_t *e)
{
	unsigned c = s[p], next = p + 1 < end ? s[p + 1] : 0;
	if ((c | next) >= 0x80)
		return O200K_GENERAL;
	size_t i = p;
	if (!ascii_alpha(c)) {
		if (!ascii_alpha(next))
			return O200K_NO_WORD;
		if ((c >= '0' && c <= '9') || is_crlf(c))
			return O200K_NO_WORD; /* no prefix: the word starts at p + 1, a match of its own */
		i = p + 1;
	}
	while (i < end && (unsigned)(s[i] - 'A') < 26u)
		i++;
	i = ascii_run(s, i, end, 'a', 'z', 0);
	if (i < end && s[i] >= 0x80)
		return O200K_GENERAL;
	*e = i;
	return O200K_WORD;
}

/*
 * o200k: [^\r\n\p{L}\p{N}]?[UP]*[LO]+C?|[^\r\n\p{L}\p{N}]?[UP]+[LO]*C?|\p{N}{1,3}
 * | ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+   with C the contractions
 */
static size_t m_o200k(uchar *s, size_t p, size_t end)
{
	size_t len, e = 0;
	int a = o200k_ascii(s, p, end, &e);
	if (a == O200K_WORD)
		return e + contraction(s, e, end, true);
	unsigned c = cls_at(s, p, &len);
	if (a == O200K_GENERAL) {
		bool pre = !(c & (PT_L | PT_N)) && !is_crlf(s[p]) && p + len < end;
		if (pre)
			e = o200k_lower(s, p + len, end);
		if (!e)
			e = o200k_lower(s, p, end);
		if (!e && pre)
			e = o200k_upper(s, p + len, end);
		if (!e)
			e = o200k_upper(s, p, end);
		if (e)
			return e + contraction(s, e, end, true);
	}
	if (c & PT_N)
		return digits(s, p, len, end, 3);
	e = punct(s, p, end, PT_WS | PT_L | PT_N, true);
	return e ? e : white(s, p, end, true);
}

/* The 32 ASCII punctuation characters and symbols of DeepSeek's first alternative. */
static inline bool ascii_punct(unsigned c)
{
	return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
	       (c >= '{' && c <= '~');
}

/*
 * DeepSeek: [ASCII punctuation][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
 * | ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+   — no match at a lone digit or control.
 */
static size_t m_deepseek(uchar *s, size_t p, size_t end)
{
	size_t len, l2;
	if (ascii_punct(s[p]) && p + 1 < end && ascii_alpha(s[p + 1])) {
		size_t e = p + 2;
		while (e < end && ascii_alpha(s[e]))
			e++;
		return e;
	}
	unsigned c = cls_at(s, p, &len);
	if (c & (PT_L | PT_M))
		return run_in(s, p + len, end, PT_L | PT_M);
	if (!(c & (PT_P | PT_S)) && !is_crlf(s[p]) && p + len < end &&
	    (cls_at(s, p + len, &l2) & (PT_L | PT_M)))
		return run_in(s, p + len + l2, end, PT_L | PT_M);
	size_t q = p + (s[p] == ' ');
	if (q < end && (cls_at(s, q, &l2) & (PT_P | PT_S))) {
		size_t e = run_in(s, q + l2, end, PT_P | PT_S);
		while (e < end && is_crlf(s[e]))
			e++;
		return e;
	}
	return c & PT_WS ? white(s, p, end, true) : 0;
}

static inline bool cjk(uint32_t cp)
{
	return (cp >= 0x4e00 && cp <= 0x9fa5) || (cp >= 0x3040 && cp <= 0x30ff);
}

/* [\x{4e00}-\x{9fa5}\x{3040}-\x{309f}\x{30a0}-\x{30ff}]+ */
static size_t m_cjk(uchar *s, size_t p, size_t end)
{
	size_t len, e = p;
	while (e < end && cjk(cp_at(s, e, &len)))
		e += len;
	return e == p ? 0 : e;
}

/* The matchers whose patterns differ only in parameters, with them bound: every kind has a
 * matcher of the same type, which find_n takes. */
static size_t m_cl100k3(uchar *s, size_t p, size_t end)
{
	return m_cl100k(s, p, end, PT_L, 3);
}

static size_t m_qwen(uchar *s, size_t p, size_t end)
{
	return m_cl100k(s, p, end, PT_L, 1);
}

static size_t m_qwen35(uchar *s, size_t p, size_t end)
{
	return m_cl100k(s, p, end, PT_L | PT_M, 1);
}

static size_t m_digits3(uchar *s, size_t p, size_t end)
{
	size_t len;
	return cls_at(s, p, &len) & PT_N ? digits(s, p, len, end, 3) : 0;
}

/*
 * The ASCII fast paths: the match at p where it is all ASCII and an ASCII byte (or the end
 * of the text) follows it, else 0 for the matcher to decide (where a non-ASCII character
 * could continue a run, a prefix could start a word of non-ASCII letters, and at contractions
 * and white space). English text is nearly all such words, numbers and punctuation, and inline
 * they cost a few instructions a byte where the matcher took a call and a class lookup per
 * character.
 */
static inline size_t ascii_end(uchar *s, size_t i, size_t end)
{
	return i < end && s[i] >= 0x80 ? 0 : i;
}

/* The end of the ASCII letters from i, the first letter before it, or 0 where a non-ASCII
 * character follows them. */
static inline size_t ascii_word_end(uchar *s, size_t i, size_t end)
{
	return ascii_end(s, ascii_run(s, i, end, 'a', 'z', 0x20), end);
}

/* gpt2's ` ?\p{L}+`. */
static inline __attribute__((always_inline)) size_t a_gpt2(uchar *s, size_t p, size_t end)
{
	size_t i = p + (s[p] == ' ');
	if (i >= end || !ascii_alpha(s[i]))
		return 0;
	return ascii_word_end(s, i + 1, end);
}

/* The cl100k family's `[^\r\n\p{L}\p{N}]?LETTERS+`, `\p{N}{1,ndig}` and
 * ` ?[^\s LETTERS \p{N}]+[\r\n]*`, in the pattern's order (ASCII has no marks, which
 * Qwen 3.5 adds to LETTERS). */
static inline __attribute__((always_inline)) size_t a_cl100k(uchar *s, size_t p, size_t end,
                                                             unsigned ndig)
{
	unsigned c = s[p];
	size_t i = p + (c == ' '); /* words first, with the prefix most of them have */
	if (i < end && ascii_alpha(s[i]))
		return ascii_word_end(s, i + 1, end);
	if (c >= 0x80 || c == '\'')
		return 0;
	if ((unsigned)(c - '0') < 10u) { /* ASCII's only \p{N} */
		unsigned n = 1;
		for (i = p + 1; n < ndig && i < end && (unsigned)(s[i] - '0') < 10u; n++)
			i++;
		return n < ndig ? ascii_end(s, i, end) : i;
	}
	if (i < end && s[i] >= 0x80)
		return 0; /* a non-ASCII letter may follow the prefix */
	if (c != ' ' && !is_crlf(c) && p + 1 < end && ascii_alpha(s[p + 1]))
		return ascii_word_end(s, p + 2, end);
	if (i >= end || (pt_stage2[0][s[i]] & (PT_WS | PT_L | PT_N)))
		return 0;
	while (++i < end && s[i] < 0x80 && !(pt_stage2[0][s[i]] & (PT_WS | PT_L | PT_N)))
		;
	if (!ascii_end(s, i, end))
		return 0;
	while (i < end && is_crlf(s[i]))
		i++;
	return i;
}

static inline __attribute__((always_inline)) size_t a_cl100k3(uchar *s, size_t p, size_t end)
{
	return a_cl100k(s, p, end, 3);
}

static inline __attribute__((always_inline)) size_t a_qwen(uchar *s, size_t p, size_t end)
{
	return a_cl100k(s, p, end, 1);
}

/*
 * Up to max successive matches of m from `from`, each search starting where the last match
 * ended, as find_iter does, asking the kind's ASCII fast path (or NULL) first. Inlined into
 * one loop per kind (pretok_fast_find_n), so that the matcher is a direct call, or none, and
 * the fast path inline: most pieces of text are a few bytes, and the dispatch and the call per
 * piece cost as much as matching them.
 */
static inline __attribute__((always_inline)) size_t
find_n(size_t (*m)(uchar *, size_t, size_t), size_t (*ascii)(uchar *, size_t, size_t), uchar *s,
       size_t end, size_t from, size_t *ms, size_t *me, size_t max)
{
	size_t k = 0, len;
	for (size_t p = from; p < end && k < max;) {
		size_t e = ascii ? ascii(s, p, end) : 0;
		if (!e)
			e = m(s, p, end);
		if (e) {
			ms[k] = p;
			me[k++] = e;
			p = e;
		} else {
			cp_at(s, p, &len);
			p += len;
		}
	}
	return k;
}

size_t pretok_fast_find_n(int kind, const char *str, size_t end, size_t from, size_t *ms,
                          size_t *me, size_t max)
{
	uchar *s = (uchar *)str;
	switch (kind) {
	case PRETOK_FAST_GPT2: return find_n(m_gpt2, a_gpt2, s, end, from, ms, me, max);
	case PRETOK_FAST_CL100K: return find_n(m_cl100k3, a_cl100k3, s, end, from, ms, me, max);
	case PRETOK_FAST_QWEN: return find_n(m_qwen, a_qwen, s, end, from, ms, me, max);
	case PRETOK_FAST_QWEN35: return find_n(m_qwen35, a_qwen, s, end, from, ms, me, max);
	case PRETOK_FAST_O200K: return find_n(m_o200k, NULL, s, end, from, ms, me, max);
	case PRETOK_FAST_DIGITS3: return find_n(m_digits3, NULL, s, end, from, ms, me, max);
	case PRETOK_FAST_CJK: return find_n(m_cjk, NULL, s, end, from, ms, me, max);
	case PRETOK_FAST_DEEPSEEK: return find_n(m_deepseek, NULL, s, end, from, ms, me, max);
	}
	return 0;
}
