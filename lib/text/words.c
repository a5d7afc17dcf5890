/*
 * words.c — the word splitter of the quality rules (see words.h): spaCy's English
 * tokenizer rules, Han and kana one word per character, or a segmenter's words.
 *
 * Speed: the splitter reads every character once through one lookup of the generated class
 * table (charclass.h: all the classes a rule asks about, as bits), and decodes UTF-8 inline.
 * Most English chunks (a run between white space) are ASCII letters, perhaps with one
 * trailing mark: they are recognised by a byte-class table and become words without being
 * decoded. Other chunks are decoded once into code points with their class bits, which the
 * affix, infix and URL rules then read. Words are hashed three bytes per modular product.
 * tests/fuzz/fuzz_words.c compares all of this, word for word, with the splitter as it was
 * before (one class function per character and per rule).
 */
#include "words.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "charclass.h"
#include "core/err.h"
#include "core/hash.h"
#include "core/utf8.h"
#include "en_exceptions.h"

void llm_words_init(llm_words *ws)
{
	memset(ws, 0, sizeof *ws);
}

void llm_words_release(llm_words *ws)
{
	free(ws->w);
	free(ws->cps);
	free(ws->cofs);
	free(ws->cls);
	free(ws->lens);
	memset(ws, 0, sizeof *ws);
}

static inline void words_push(llm_words *ws, const llm_word *w)
{
	if (ws->n == ws->cap) {
		ws->cap = ws->cap ? 2 * ws->cap : 256;
		ws->w = llm_realloc(ws->w, ws->cap * sizeof *ws->w);
	}
	ws->w[ws->n++] = *w;
}

/* ------------------------------------------------------------------------------------------ */
/* Characters */

/* The class bits of the NUL character: what the rules see past either end of a chunk. */
#define NUL_CLS (llm_charclass_stage2[0])

/* One code point at s (n > 0 bytes), as llm_utf8_decode: ASCII and well-formed two- and
 * three-byte sequences inline, the rest (four bytes, ill-formed) by the library. */
static inline size_t next_cp(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned c = s[0];
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xC2 && c <= 0xDF && n >= 2 && (s[1] & 0xC0) == 0x80) {
		*cp = (c & 0x1Fu) << 6 | (s[1] & 0x3Fu);
		return 2;
	}
	if ((c & 0xF0) == 0xE0 && n >= 3 && (s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80) {
		uint32_t v = (c & 0x0Fu) << 12 | (s[1] & 0x3Fu) << 6 | (s[2] & 0x3Fu);
		if (v >= 0x800 && (v < 0xD800 || v > 0xDFFF)) { /* not overlong, not a surrogate */
			*cp = v;
			return 3;
		}
	}
	return llm_utf8_decode((const char *)s, n, cp);
}

/*
 * The classes of a byte for the scanner's fast paths, made once from the class table:
 * an ASCII letter, white space, a byte that starts or continues a multi-byte sequence, and
 * the marks that the second fast path splits off a word of letters. White space is the
 * byte read as a code point, so the stray bytes 0x85 and 0xA0 (ill-formed alone) count as
 * white space where a fast path asks what follows a word: the splitter has always read them
 * so, and the words stay the same (valid UTF-8 never has them).
 */
enum { BY_LETTER = 1, BY_SPACE = 2, BY_HIGH = 4, BY_MARK = 8 };
static uint8_t byte_cls[256];

/* ------------------------------------------------------------------------------------------ */
/* Words */

typedef struct {
	llm_words *wd;
	const char *s;   /* the text the offsets refer to */
	size_t base;     /* offset of the chunk's text in s */
} splitter;

/* LLM_WORDS_BASE^k for the lengths of most words. */
static uint64_t base_pow[64];

/* The polynomial hash of p[0..len) and BASE^len: three bytes per product, since
 * (b0+1)·B² + (b1+1)·B + (b2+1) < 2^49 needs no reduction. */
static inline void hash_bytes(const unsigned char *p, size_t len, uint64_t *hp, uint64_t *pwp)
{
	const uint64_t b = LLM_WORDS_BASE, b2 = b * b, b3 = b2 * b;
	uint64_t h = 0;
	size_t i = 0;
	for (; i + 3 <= len; i += 3) {
		uint64_t digit = ((p[i] + 1u) * b + (p[i + 1] + 1u)) * b + (p[i + 2] + 1u);
		h = llm_words_addmod(llm_words_mulmod(h, b3), digit);
	}
	if (len - i == 2)
		h = llm_words_addmod(llm_words_mulmod(h, b2), (p[i] + 1u) * b + (p[i + 1] + 1u));
	else if (len - i == 1)
		h = llm_words_addmod(llm_words_mulmod(h, b), p[i] + 1u);
	*hp = h;
	if (len < 64) {
		*pwp = base_pow[len];
		return;
	}
	uint64_t pw = base_pow[63];
	for (i = 63; i < len; i++)
		pw = llm_words_mulmod(pw, b);
	*pwp = pw;
}

/* The word s[off..off+len) of nchars code points whose class bits, or-ed and and-ed over
 * them, are any and all; last: the bits of its last code point. */
static inline llm_word word_of(const char *s, size_t off, size_t len, size_t nchars, unsigned any,
                               unsigned all, unsigned last)
{
	llm_word w;
	w.off = (uint32_t)off;
	w.len = (uint32_t)len;
	w.nchars = (uint32_t)nchars;
	w.flags = (any & LLM_CC_LETTER ? LLM_WORD_ALPHA : 0) | (all & LLM_CC_SYMBOL ? LLM_WORD_SYMBOL : 0) |
	          (all & LLM_CC_PUNCT ? LLM_WORD_PUNCT : 0) |
	          (nchars == 1 && (last & LLM_CC_TERMINAL) ? LLM_WORD_TERMINAL : 0);
	hash_bytes((const unsigned char *)s + off, len, &w.h, &w.pw);
	return w;
}

static pthread_once_t tables_once = PTHREAD_ONCE_INIT;
static void tables_init(void);

/* The word s[off..off+len): code points, flags and hash. */
llm_word llm_words_make(const char *s, size_t off, size_t len)
{
	pthread_once(&tables_once, tables_init);
	const unsigned char *u = (const unsigned char *)s;
	unsigned any = 0, all = ~0u, last = 0;
	size_t nchars = 0;
	for (size_t i = off; i < off + len; nchars++) {
		uint32_t cp;
		i += next_cp(u + i, off + len - i, &cp);
		last = llm_charclass_bits(cp);
		any |= last;
		all &= last;
	}
	return word_of(s, off, len, nchars, any, all, last);
}

/* The word of code points [a, b) of the current chunk. */
static inline llm_word chunk_word(const splitter *sp, size_t a, size_t b)
{
	const llm_words *wd = sp->wd;
	unsigned any = 0, all = ~0u;
	for (size_t i = a; i < b; i++) {
		any |= wd->cls[i];
		all &= wd->cls[i];
	}
	return word_of(sp->s, sp->base + wd->cofs[a], wd->cofs[b] - wd->cofs[a], b - a, any, all,
	               wd->cls[b - 1]);
}

/* Emit code points [a, b) of the current chunk as one word (Han/Kana split per character). */
static void emit(splitter *sp, size_t a, size_t b)
{
	const uint16_t *cls = sp->wd->cls;
	while (a < b) {
		size_t e = a + 1;
		if (!(cls[a] & LLM_CC_CJK))
			while (e < b && !(cls[e] & LLM_CC_CJK))
				e++;
		llm_word w = chunk_word(sp, a, e);
		words_push(sp->wd, &w);
		a = e;
	}
}

/* spaCy's English special cases, hashed once into an open-addressing table. */
#define EXC_SLOTS 4096
static int16_t exc_table[EXC_SLOTS];
static uint8_t exc_len[LLM_EN_EXC_COUNT];
/* first and last byte of the special cases, per length: most chunks fail this cheap test */
static uint32_t exc_first[25][8], exc_last[25][8];
/* special cases made only of ASCII letters ("cannot", "gonna"): by length, the masks of their
 * first and of their last letters; other chunks of only letters need no lookup */
static uint32_t exc_alpha[25][2];
/* the same for special cases of ASCII letters and one mark of the second fast path ("Mr."),
 * with the letter before the mark */
static uint32_t exc_alpha_mark[25][2];

static void tables_init(void)
{
	base_pow[0] = 1;
	for (size_t k = 1; k < 64; k++)
		base_pow[k] = llm_words_mulmod(base_pow[k - 1], LLM_WORDS_BASE);
	memset(exc_table, 0xff, sizeof exc_table);
	for (int i = 0; i < LLM_EN_EXC_COUNT; i++) {
		const char *k = en_exceptions[i].key;
		size_t n = strlen(k), j = 0;
		exc_len[i] = (uint8_t)n;
		unsigned char f = (unsigned char)k[0], l = (unsigned char)k[n - 1];
		if (n < 25) {
			exc_first[n][f >> 5] |= 1u << (f & 31);
			exc_last[n][l >> 5] |= 1u << (l & 31);
		}
		size_t s = llm_hash64(k, n, 0) & (EXC_SLOTS - 1);
		while (exc_table[s] >= 0)
			s = (s + 1) & (EXC_SLOTS - 1);
		exc_table[s] = (int16_t)i;
		while (j < n && ((k[j] | 0x20) >= 'a' && (k[j] | 0x20) <= 'z'))
			j++;
		if (j == n && n < 25) {
			exc_alpha[n][0] |= 1u << ((k[0] | 0x20) - 'a');
			exc_alpha[n][1] |= 1u << ((k[n - 1] | 0x20) - 'a');
		}
		if (j > 0 && j + 1 == n && n < 25 && strchr(",;:!?).", k[j])) {
			exc_alpha_mark[n][0] |= 1u << ((k[0] | 0x20) - 'a');
			exc_alpha_mark[n][1] |= 1u << ((k[n - 2] | 0x20) - 'a');
		}
	}
	for (unsigned c = 0; c < 256; c++) {
		unsigned k = llm_charclass_bits(c);
		byte_cls[c] = (uint8_t)((c >= 0x80 ? BY_HIGH : 0) | (k & LLM_CC_SPACE ? BY_SPACE : 0) |
		                        (c < 0x80 && (k & LLM_CC_LETTER) ? BY_LETTER : 0) |
		                        (c && strchr(",;:!?).", (int)c) ? BY_MARK : 0));
	}
}

/* The special case that k[0..len) is, or -1. */
static int exception_bytes(const char *k, size_t len)
{
	if (len > 24 || len == 0)
		return -1;
	unsigned char f = (unsigned char)k[0], l = (unsigned char)k[len - 1];
	if (!(exc_first[len][f >> 5] >> (f & 31) & 1) || !(exc_last[len][l >> 5] >> (l & 31) & 1))
		return -1;
	for (size_t j = llm_hash64(k, len, 0) & (EXC_SLOTS - 1); exc_table[j] >= 0;
	     j = (j + 1) & (EXC_SLOTS - 1)) {
		const char *e = en_exceptions[exc_table[j]].key;
		if (exc_len[exc_table[j]] == len && memcmp(e, k, len) == 0)
			return exc_table[j];
	}
	return -1;
}

/* Whether the ASCII letters k[0..len) may be a special case (by length, first and last letter). */
static inline bool alpha_maybe_special(const char *k, size_t len)
{
	return len <= 24 && (exc_alpha[len][0] >> ((k[0] | 0x20) - 'a') & 1) &&
	       (exc_alpha[len][1] >> ((k[len - 1] | 0x20) - 'a') & 1);
}

/* Whether the ASCII letters k[0..len) are a special case. */
static inline bool alpha_special(const char *k, size_t len)
{
	return alpha_maybe_special(k, len) && exception_bytes(k, len) >= 0;
}

/* Whether the ASCII letters and the mark k[0..len) are a special case. */
static inline bool alpha_mark_special(const char *k, size_t len)
{
	if (len > 24 || !(exc_alpha_mark[len][0] >> ((k[0] | 0x20) - 'a') & 1) ||
	    !(exc_alpha_mark[len][1] >> ((k[len - 2] | 0x20) - 'a') & 1))
		return false;
	return exception_bytes(k, len) >= 0;
}

static int exception(const llm_words *wd, const char *chunk, size_t a, size_t b)
{
	size_t len = wd->cofs[b] - wd->cofs[a];
	if (len > 24 || (wd->rules & LLM_WORDS_NO_ENGLISH))
		return -1;
	bool letters = true;
	for (size_t i = a; i < b && letters; i++)
		letters = wd->cps[i] < 0x80 && (wd->cls[i] & LLM_CC_LETTER);
	if (letters && !alpha_maybe_special(chunk + wd->cofs[a], len))
		return -1;
	return exception_bytes(chunk + wd->cofs[a], len);
}

/*
 * spaCy's URL_MATCH (spacy/lang/tokenizer_exceptions.py, URL_PATTERN), which keeps a token
 * whole: an optional scheme "[\w+-.]{2,}://", an optional "user[:password]@", a host (dotted
 * labels and a lower-case TLD, or a public IPv4 address), an optional port ":NN" of 2 to 5
 * digits and an optional path after '/', '?' or '#'. "http://localhost:631/admin" has no TLD:
 * spaCy splits it at its infixes, and so do we. ALPHA_LOWER is read as Ll. The functions
 * below read code points c[] and their class bits k[].
 */
static inline bool url_label_char(const uint32_t *c, const uint16_t *k, size_t i)
{
	return (c[i] < 0x80 && (k[i] & (LLM_CC_LETTER | LLM_CC_DIGIT))) || (c[i] >= 0xA1 && c[i] <= 0xFFFF);
}

static inline bool url_word_char(const uint32_t *c, const uint16_t *k, size_t i)
{
	return (k[i] & (LLM_CC_LETTER | LLM_CC_DIGIT)) || c[i] == '_';
}

/* The decimal number c[a..b) as an octet of URL_PATTERN: kind 0 the first (1-223), 1 a
 * middle one (0-255, "01" allowed), 2 the last (1-254). */
static bool url_octet(const uint32_t *c, size_t a, size_t b, int kind)
{
	size_t n = b - a;
	if (n < 1 || n > 3)
		return false;
	unsigned v = 0;
	for (size_t i = a; i < b; i++) {
		if (c[i] < '0' || c[i] > '9')
			return false;
		v = 10 * v + (c[i] - '0');
	}
	if (kind == 1)
		return n < 3 || c[a] == '1' || (c[a] == '2' && v <= 255);
	if (c[a] == '0' || (n == 3 && c[a] != '1' && c[a] != '2'))
		return false;
	return kind == 0 ? v <= 223 : v <= 254;
}

/* A public IPv4 address c[a..b): URL_PATTERN leaves out 10/8, 127/8, 169.254/16,
 * 192.168/16 and 172.16/12. */
static bool url_ipv4(const uint32_t *c, size_t a, size_t b)
{
	size_t dot[3], nd = 0;
	for (size_t i = a; i < b; i++)
		if (c[i] == '.') {
			if (nd == 3)
				return false;
			dot[nd++] = i;
		}
	if (nd != 3 || !url_octet(c, a, dot[0], 0) || !url_octet(c, dot[0] + 1, dot[1], 1) ||
	    !url_octet(c, dot[1] + 1, dot[2], 1) || !url_octet(c, dot[2] + 1, b, 2))
		return false;
	unsigned o[2] = { 0, 0 };
	for (size_t i = a, j = 0; j < 2; i++) {
		if (c[i] == '.')
			j++;
		else
			o[j] = 10 * o[j] + (c[i] - '0');
	}
	return !(o[0] == 10 || o[0] == 127 || (o[0] == 169 && o[1] == 254) || (o[0] == 192 && o[1] == 168) ||
	         (o[0] == 172 && o[1] >= 16 && o[1] <= 31));
}

/* Host names c[a..b): one or more labels, each followed by '.', then a TLD of 2 to 63
 * lower-case letters. A label is 1 to 64 label characters, '_' and '-' allowed inside. */
static bool url_domain(const uint32_t *c, const uint16_t *k, size_t a, size_t b)
{
	size_t last = b;
	while (last > a && c[last - 1] != '.')
		last--;
	if (last == a || b - last < 2 || b - last > 63)
		return false;
	for (size_t i = last; i < b; i++)
		if (!(k[i] & LLM_CC_LOWER))
			return false;
	for (size_t s = a; s < last;) {
		size_t e = s;
		while (c[e] != '.')
			e++;
		if (e == s || e - s > 64 || !url_label_char(c, k, s) || !url_label_char(c, k, e - 1))
			return false;
		for (size_t i = s + 1; i + 1 < e; i++)
			if (!url_label_char(c, k, i) && c[i] != '_' && c[i] != '-')
				return false;
		s = e + 1;
	}
	return true;
}

/* c[h..n) is a host, an optional port and an optional path, to the end. */
static bool url_host_to_end(const uint32_t *c, const uint16_t *k, size_t h, size_t n)
{
	size_t e = h;
	while (e < n && (url_label_char(c, k, e) || c[e] == '.' || c[e] == '_' || c[e] == '-'))
		e++;
	if (e == h || !(url_ipv4(c, h, e) || url_domain(c, k, h, e)))
		return false;
	if (e < n && c[e] == ':') {
		size_t d = e + 1;
		while (d < n && (k[d] & LLM_CC_DIGIT))
			d++;
		if (d - e - 1 < 2 || d - e - 1 > 5)
			return false;
		e = d;
	}
	return e == n || c[e] == '/' || c[e] == '?' || c[e] == '#';
}

static bool url_match(const uint32_t *c, const uint16_t *k, size_t n)
{
	/* a host holds a '.' (a domain before its TLD, an IPv4 address between its octets) */
	size_t i = 0;
	while (i < n && c[i] != '.')
		i++;
	if (i == n)
		return false;
	i = 0;
	while (i < n && (url_word_char(c, k, i) || c[i] == '+' || c[i] == '-' || c[i] == '.'))
		i++;
	size_t starts[2] = { 0, 0 }, ns = 0;
	if (i >= 2 && i + 2 < n && c[i] == ':' && c[i + 1] == '/' && c[i + 2] == '/')
		starts[ns++] = i + 3;
	starts[ns++] = 0; /* the scheme is optional: the pattern backtracks to none */
	for (size_t s = 0; s < ns; s++) {
		size_t p = starts[s];
		if (url_host_to_end(c, k, p, n))
			return true;
		if (p < n && (url_word_char(c, k, p) || c[p] == '-'))
			for (size_t j = p + 1; j < n; j++)
				if (c[j] == '@' && url_host_to_end(c, k, j + 1, n))
					return true;
	}
	return false;
}

/* spaCy's UNITS that follow a number ("3.5kg" -> "3.5" "kg"); case-sensitive. */
static const char *const units[] = {
	"km", "m", "dm", "cm", "mm", "ha", "\xC2\xB5m", "nm", "yd", "in", "ft", "kg", "g", "mg",
	"\xC2\xB5g", "t", "lb", "oz", "kmh", "mph", "hPa", "Pa", "mbar", "mb", "MB", "kb", "KB",
	"gb", "GB", "tb", "TB", "T", "G", "M", "K", NULL
};

/* spaCy's prefix characters: LIST_PUNCT, LIST_QUOTES, LIST_CURRENCY, LIST_ICONS and § % = — –,
 * and '+' before anything but a digit (next: the classes of the code point after). */
static inline bool is_prefix_char(uint32_t cp, unsigned cls, unsigned next)
{
	if (cp == '+')
		return !(next & LLM_CC_DIGIT);
	return (cls & (LLM_CC_LISTP | LLM_CC_QUOTE | LLM_CC_CURRENCY | LLM_CC_ICON)) || cp == 0xA7 ||
	       cp == '%' || cp == '=' || cp == 0x2014 || cp == 0x2013;
}

/* Length of the prefix at the start of [a, b) (code points), or 0: an ellipsis run or one
 * prefix character. */
static size_t prefix_len(const llm_words *wd, size_t a, size_t b)
{
	if (wd->cps[a] == '.' && a + 1 < b && wd->cps[a + 1] == '.') {
		size_t e = a + 2;
		while (e < b && wd->cps[e] == '.')
			e++;
		return e - a;
	}
	return is_prefix_char(wd->cps[a], wd->cls[a], a + 1 < b ? wd->cls[a + 1] : NUL_CLS) ? 1 : 0;
}

/* Length of the suffix at the end of [a, b) (in code points, b - a >= 2), or 0. */
static size_t suffix_len(const llm_words *wd, const char *sp_chunk, size_t a, size_t b)
{
	uint32_t c = wd->cps[b - 1], p = wd->cps[b - 2];
	unsigned ck = wd->cls[b - 1], pk = wd->cls[b - 2];
	if (c == '.' || c == 0x2026) {
		size_t i = b - 1;
		while (i > a && wd->cps[i - 1] == '.')
			i--;
		if (c == 0x2026)
			return 1;
		if (b - i >= 2)
			return b - i; /* an ellipsis run */
		/* '.' after a digit, lower-case letter, %²-+, punctuation or quote, or two capitals */
		if ((pk & (LLM_CC_DIGIT | LLM_CC_LOWER | LLM_CC_LISTP | LLM_CC_QUOTE)) || p == '%' ||
		    p == 0xB2 || p == '-' || p == '+' ||
		    (b - a >= 3 && (pk & LLM_CC_UPPER) && (wd->cls[b - 3] & LLM_CC_UPPER)) ||
		    (b - a >= 3 && wd->cps[b - 3] == 0xB0 && p < 0x80 && strchr("FfCcKk", (int)p)))
			return 1;
		return 0;
	}
	if ((c == 's' || c == 'S') && (p == '\'' || p == 0x2019) && b - a > 2)
		return 2;
	if ((ck & (LLM_CC_LISTP | LLM_CC_QUOTE | LLM_CC_ICON)) || c == 0x2014 || c == 0x2013)
		return 1;
	if ((c == '+' || c == '%' || (ck & LLM_CC_CURRENCY)) && (pk & LLM_CC_DIGIT))
		return 1;
	if (c < 0x80 && (ck & LLM_CC_LETTER)) {
		/* a unit after a number: "3.5kg" -> "3.5" "kg" */
		size_t i = b;
		while (i > a && wd->cps[i - 1] < 0x80 && (wd->cls[i - 1] & LLM_CC_LETTER))
			i--;
		if (i > a && (wd->cls[i - 1] & LLM_CC_DIGIT))
			for (int k = 0; units[k]; k++)
				if (strlen(units[k]) == wd->cofs[b] - wd->cofs[i] &&
				    memcmp(units[k], sp_chunk + wd->cofs[i], strlen(units[k])) == 0)
					return b - i;
	}
	return 0;
}

static inline bool is_hyphen(uint32_t c)
{
	return c == '-' || c == 0x2013 || c == 0x2014 || c == '~';
}

static inline bool is_alpha_sp(unsigned cls)
{
	return (cls & (LLM_CC_LETTER | LLM_CC_CJK)) == LLM_CC_LETTER;
}

/* Split [a, b) at spaCy's English infixes (and a language's, wd->rules) and emit the
 * pieces. */
static void emit_infixes(splitter *sp, size_t a, size_t b)
{
	const llm_words *wd = sp->wd;
	size_t start = a;
	for (size_t i = a + 1; i < b; i++) {
		/* an infix is an icon or punctuation, never a letter or a digit */
		if ((wd->cls[i] & (LLM_CC_LETTER | LLM_CC_DIGIT)) && !(wd->cls[i] & LLM_CC_ICON))
			continue;
		uint32_t c = wd->cps[i], nx = i + 1 < b ? wd->cps[i + 1] : 0;
		unsigned ck = wd->cls[i], pk = wd->cls[i - 1], nk = i + 1 < b ? wd->cls[i + 1] : NUL_CLS;
		size_t len = 0;
		if (c == '.' && nx == '.') {
			len = 2;
			while (i + len < b && wd->cps[i + len] == '.')
				len++;
		} else if (c == 0x2026 || (ck & LLM_CC_ICON)) {
			len = 1;
		} else if ((pk & LLM_CC_DIGIT) && (c == '+' || c == '-' || c == '*' || c == '^') &&
		           ((nk & LLM_CC_DIGIT) || nx == '-')) {
			len = 1;
		} else if (c == '.' && (pk & (LLM_CC_LOWER | LLM_CC_QUOTE)) &&
		           (nk & (LLM_CC_UPPER | LLM_CC_QUOTE))) {
			len = 1;
		} else if (c == ',' && is_alpha_sp(pk) && is_alpha_sp(nk)) {
			len = 1;
		} else if ((c == '\'' || c == 0x2019) && (wd->rules & LLM_WORDS_ELISION) &&
		           is_alpha_sp(pk) && is_alpha_sp(nk)) {
			/* elision: the apostrophe stays with the article ("l'" "homme") */
			emit(sp, start, i + 1);
			start = i + 1;
			continue;
		} else if (is_hyphen(c) && !(wd->rules & LLM_WORDS_NO_HYPHEN && is_alpha_sp(pk)) &&
		           (is_alpha_sp(pk) || (pk & LLM_CC_DIGIT))) {
			size_t k = i;
			while (k < b && is_hyphen(wd->cps[k]) && k - i < 3)
				k++;
			if (k < b && is_alpha_sp(wd->cls[k]))
				len = k - i;
		} else if ((c == ':' || c == '<' || c == '>' || c == '=' || c == '/') &&
		           (is_alpha_sp(pk) || (pk & LLM_CC_DIGIT)) && is_alpha_sp(nk)) {
			len = 1;
		}
		if (!len)
			continue;
		if (i > start)
			emit(sp, start, i);
		emit(sp, i, i + len);
		start = i + len;
		i += len - 1;
	}
	if (start < b)
		emit(sp, start, b);
}

/* After splitting, spaCy re-merges neighbouring tokens of one chunk whose text together is a
 * special case ("):" from ")" ":", "''" from "'" "'"). Tokens from index first on. */
static void merge_specials(splitter *sp, size_t first)
{
	llm_words *ws = sp->wd;
	for (size_t i = first; i + 1 < ws->n; i++) {
		for (size_t k = ws->n - i < 4 ? ws->n - i : 4; k >= 2; k--) {
			size_t off = ws->w[i].off, len = ws->w[i + k - 1].off + ws->w[i + k - 1].len - off;
			if (len > 24 || (ws->rules & LLM_WORDS_NO_ENGLISH))
				continue;
			int x = exception_bytes(sp->s + off, len);
			if (x < 0)
				continue;
			/* replace tokens i..i+k-1 by the pieces of the special case */
			llm_word pieces[4];
			size_t np = 0, o = off;
			for (int j = 0; j < 4 && en_exceptions[x].split[j]; j++) {
				pieces[np++] = llm_words_make(sp->s, o, en_exceptions[x].split[j]);
				o += en_exceptions[x].split[j];
			}
			if (np > k) {
				for (size_t j = k; j < np; j++)
					words_push(ws, &pieces[0]); /* room for the extra pieces */
				ws->n -= np - k;
			}
			if (np != k) {
				memmove(ws->w + i + np, ws->w + i + k, (ws->n - i - k) * sizeof *ws->w);
				ws->n = ws->n + np - k;
			}
			memcpy(ws->w + i, pieces, np * sizeof *pieces);
			i += np - 1;
			break;
		}
	}
}

/* Chunk [a, b) of code points, following spaCy's Tokenizer._split_affixes: each round strips
 * one prefix and one suffix, stopping as soon as what is left is a special case. */
static void split_chunk(splitter *sp, size_t a, size_t b)
{
	llm_words *wd = sp->wd;
	size_t sufs[64], send[64], nsuf = 0;
	size_t first = sp->wd->n;
	const char *chunk = sp->s + sp->base;
	int special = exception(wd, chunk, a, b);
	size_t last = (size_t)-1;
	while (a < b && special < 0 && b - a != last) {
		last = b - a;
		size_t pre = b - a > 1 ? prefix_len(wd, a, b) : 0;
		if (pre && a + pre < b && (special = exception(wd, chunk, a + pre, b)) >= 0) {
			emit(sp, a, a + pre);
			a += pre;
			break;
		}
		size_t suf = b - (a + pre) > 1 ? suffix_len(wd, chunk, a + pre, b) : 0;
		if (suf && b - suf > a && (special = exception(wd, chunk, a, b - suf)) >= 0) {
			if (nsuf < 64) {
				sufs[nsuf] = b - suf;
				send[nsuf++] = b;
			}
			b -= suf;
			break;
		}
		if (pre && suf && pre + suf <= b - a) {
			emit(sp, a, a + pre);
			a += pre;
			if (nsuf < 64) {
				sufs[nsuf] = b - suf;
				send[nsuf++] = b;
			}
			b -= suf;
		} else if (pre) {
			emit(sp, a, a + pre);
			a += pre;
		} else if (suf && nsuf < 64) {
			sufs[nsuf] = b - suf;
			send[nsuf++] = b;
			b -= suf;
		}
		if (a < b)
			special = exception(wd, chunk, a, b);
	}
	if (a < b) {
		if (special >= 0) {
			size_t i = a;
			for (int k = 0; k < 4 && en_exceptions[special].split[k]; k++) {
				size_t e = i, want = wd->cofs[i] + en_exceptions[special].split[k];
				while (e < b && wd->cofs[e] < want)
					e++;
				emit(sp, i, e);
				i = e;
			}
		} else if (url_match(wd->cps + a, wd->cls + a, b - a)) {
			emit(sp, a, b);
		} else {
			emit_infixes(sp, a, b);
		}
	}
	while (nsuf > 0) {
		nsuf--;
		emit(sp, sufs[nsuf], send[nsuf]);
	}
	if (sp->wd->n - first >= 2)
		merge_specials(sp, first);
}

/* Whether white space starts at t[j] (j < end). */
static inline bool space_at(const unsigned char *t, size_t j, size_t end)
{
	if (t[j] < 0x80)
		return byte_cls[t[j]] & BY_SPACE;
	uint32_t cp;
	next_cp(t + j, end - j, &cp);
	return llm_charclass_bits(cp) & LLM_CC_SPACE;
}

/* The end of the run of ASCII letters at u[j..end): eight bytes at a time where the byte
 * order allows, testing each byte (top bit clear, lower case in 'a'..'z') by carry-free sums. */
static inline size_t letter_run(const unsigned char *u, size_t j, size_t end)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint64_t ones = 0x0101010101010101ULL, top = 0x80 * ones;
	while (j + 8 <= end) {
		uint64_t x;
		memcpy(&x, u + j, 8);
		uint64_t l = (x | 0x20 * ones) & 0x7F * ones;
		uint64_t ge_a = l + 0x1F * ones, gt_z = l + 0x05 * ones; /* top bit: l >= 'a', l > 'z' */
		uint64_t other = ~(ge_a & ~gt_z & ~x) & top;
		if (other)
			return j + (size_t)__builtin_ctzll(other) / 8;
		j += 8;
	}
#endif
	while (j < end && (byte_cls[u[j]] & BY_LETTER))
		j++;
	return j;
}

/* The word of the ASCII letters s[off..off+len). */
static inline llm_word letters_word(const char *s, size_t off, size_t len)
{
	return word_of(s, off, len, len, LLM_CC_LETTER, LLM_CC_LETTER, LLM_CC_LETTER);
}

/* A segmenter's words for the run of t starting at i and ending at the next white space (or
 * end); returns the end of the run. */
static size_t segment_run(llm_words *wd, const llm_segmenter *seg, const char *t, size_t i, size_t end)
{
	const unsigned char *u = (const unsigned char *)t;
	size_t j = i;
	while (j < end) {
		uint32_t cp;
		size_t k = next_cp(u + j, end - j, &cp);
		if (llm_charclass_bits(cp) & LLM_CC_SPACE)
			break;
		j += k;
	}
	if (j - i > wd->lcap) {
		wd->lcap = 2 * (j - i);
		wd->lens = llm_realloc(wd->lens, wd->lcap * sizeof *wd->lens);
	}
	size_t nw = seg->cut(seg->self, t + i, j - i, wd->lens), off = i;
	for (size_t k = 0; k < nw; k++) {
		llm_word w = llm_words_make(t, off, wd->lens[k]);
		words_push(wd, &w);
		off += wd->lens[k];
	}
	return j;
}

/* Decode the chunk t[i..) up to the next white space into wd's code points, their offsets
 * from i and their class bits; returns the number of code points and sets *jp to the end. */
static size_t decode_chunk(llm_words *wd, const unsigned char *t, size_t i, size_t end, size_t *jp)
{
	size_t n = 0, j = i;
	while (j < end) {
		uint32_t cp;
		size_t k = next_cp(t + j, end - j, &cp);
		unsigned cls = llm_charclass_bits(cp);
		if (cls & LLM_CC_SPACE)
			break;
		if (n + 2 > wd->ccap) {
			wd->ccap = wd->ccap ? 2 * wd->ccap : 256;
			wd->cps = llm_realloc(wd->cps, wd->ccap * sizeof *wd->cps);
			wd->cofs = llm_realloc(wd->cofs, wd->ccap * sizeof *wd->cofs);
			wd->cls = llm_realloc(wd->cls, wd->ccap * sizeof *wd->cls);
		}
		wd->cps[n] = cp;
		wd->cofs[n] = (uint32_t)(j - i);
		wd->cls[n] = (uint16_t)cls;
		n++;
		j += k;
	}
	wd->cofs[n] = (uint32_t)(j - i);
	wd->cps[n] = 0;
	wd->cls[n] = NUL_CLS;
	*jp = j;
	return n;
}

void llm_words_split(llm_words *wd, const char *t, size_t start, size_t end, const llm_segmenter *seg)
{
	pthread_once(&tables_once, tables_init);
	const unsigned char *u = (const unsigned char *)t;
	splitter sp = { wd, t, 0 };
	size_t i = start;
	for (;;) {
		/* skip white space */
		while (i < end) {
			if (u[i] < 0x80) {
				if (!(byte_cls[u[i]] & BY_SPACE))
					break;
				i++;
				continue;
			}
			uint32_t cp;
			size_t k = next_cp(u + i, end - i, &cp);
			if (!(llm_charclass_bits(cp) & LLM_CC_SPACE))
				break;
			i += k;
		}
		if (i >= end)
			break;
		if (seg) {
			i = segment_run(wd, seg, t, i, end);
			continue;
		}
		/* Fast path: a chunk of ASCII letters only (most words) splits into itself unless
		 * it is a special case such as "cannot". */
		size_t j = letter_run(u, i, end);
		if (j > i) {
			unsigned next = j < end ? byte_cls[u[j]] : BY_SPACE;
			if ((next & BY_SPACE || (next & BY_HIGH && space_at(u, j, end))) &&
			    !alpha_special(t + i, j - i)) {
				llm_word w = letters_word(t, i, j - i);
				words_push(wd, &w);
				i = j;
				continue;
			}
			/* Letters and one trailing mark (",", ".", ...) before white space: spaCy's
			 * suffix rule splits the mark off, unless the whole is a special case ("etc."
			 * is not, "Mr." is) or the word is one ("cannot,"); '.' only after a
			 * lower-case letter. */
			if (next & BY_MARK) {
				unsigned after = j + 1 < end ? byte_cls[u[j + 1]] : BY_SPACE;
				if ((after & BY_SPACE || (after & BY_HIGH && space_at(u, j + 1, end))) &&
				    (u[j] != '.' || (u[j - 1] >= 'a' && u[j - 1] <= 'z')) &&
				    !alpha_mark_special(t + i, j + 1 - i) && !alpha_special(t + i, j - i)) {
					llm_word w = letters_word(t, i, j - i);
					words_push(wd, &w);
					unsigned k = llm_charclass_stage2[u[j]];
					w = word_of(t, j, 1, 1, k, k, k);
					words_push(wd, &w);
					i = j + 1;
					continue;
				}
			}
		}
		/* a chunk up to the next white space, decoded */
		size_t n = decode_chunk(wd, u, i, end, &j);
		sp.base = i;
		split_chunk(&sp, 0, n);
		i = j;
	}
}
