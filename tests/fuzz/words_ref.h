/*
 * words_ref.h — the word splitter of lib/text/words.c as it was before its table-driven
 * scanner (commit 6d4f3f9), one code point and one class function at a time: the reference
 * that fuzz_words.c compares the library's splitter with, word for word and byte for byte.
 * Test code only; included by fuzz_words.c alone. Its character classes come from the
 * per-code-point functions of text/charclass.h, not from the generated table.
 */
#ifndef LLM_WORDS_REF_H
#define LLM_WORDS_REF_H

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/hash.h"
#include "core/utf8.h"
#include "text/charclass.h"
#include "text/en_exceptions.h"
#include "text/words.h"

static void ref_words_split(llm_words *wd, const char *t, size_t start, size_t end, const llm_segmenter *seg);
static llm_word ref_words_make(const char *s, size_t off, size_t len);

static void words_push(llm_words *ws, const llm_word *w)
{
	if (ws->n == ws->cap) {
		ws->cap = ws->cap ? 2 * ws->cap : 256;
		ws->w = llm_realloc(ws->w, ws->cap * sizeof *ws->w);
	}
	ws->w[ws->n++] = *w;
}

/* ------------------------------------------------------------------------------------------ */
/* Character classes of spaCy's English tokenizer */

/* Letters that spaCy's ALPHA class covers: not the CJK ideographs and kana, which we split. */
static inline bool is_alpha_sp(uint32_t cp)
{
	return llm_charclass_letter(cp) && !llm_charclass_cjk(cp);
}

/* spaCy LIST_QUOTES. */
static bool is_quote(uint32_t cp)
{
	switch (cp) {
	case '\'': case '"': case 0x201D: case 0x201C: case '`': case 0x2018: case 0xB4:
	case 0x2019: case 0x201A: case ',': case 0x201E: case 0xBB: case 0xAB: case 0x300C:
	case 0x300D: case 0x300E: case 0x300F: case 0xFF08: case 0xFF09: case 0x3014: case 0x3015:
	case 0x3010: case 0x3011: case 0x300A: case 0x300B: case 0x3008: case 0x3009: case 0x2329:
	case 0x232A: case 0x27E6: case 0x27E7:
		return true;
	}
	return false;
}

/* spaCy LIST_PUNCT (single characters). */
static bool is_list_punct(uint32_t cp)
{
	switch (cp) {
	case 0x2026: case ',': case ':': case ';': case '!': case '?': case 0xBF: case 0x61F:
	case 0xA1: case '(': case ')': case '[': case ']': case '{': case '}': case '<': case '>':
	case '_': case '#': case '*': case '&': case 0x3002: case 0xFF1F: case 0xFF01: case 0xFF0C:
	case 0x3001: case 0xFF1B: case 0xFF1A: case 0xFF5E: case 0xB7: case 0x964: case 0x60C:
	case 0x6D4: case 0x61B: case 0x66A:
		return true;
	}
	return false;
}

static bool is_currency(uint32_t cp)
{
	return cp == '$' || cp == 0xA3 || cp == 0x20AC || cp == 0xA5 || cp == 0xE3F ||
	       (cp >= 0x20A0 && cp <= 0x20BF);
}

/* spaCy LIST_ICONS: other symbols (So), e.g. emoji. */
static inline bool is_icon(uint32_t cp)
{
	/* Sm, Sk and Sc are not icons; utf8.h has one symbol class, so the common math, arrow
	 * and modifier ranges are excluded by block. */
	return cp >= 0xA6 && llm_uc_is(cp, LLM_UC_SYMBOL) && !is_currency(cp) &&
	       !(cp >= 0x2000 && cp < 0x2070) && !(cp >= 0x2190 && cp < 0x2300) &&
	       !(cp >= 0x27C0 && cp < 0x2800) && !(cp >= 0x2900 && cp < 0x2B00) && cp != 0xAC &&
	       cp != 0xB1 && cp != 0xD7 && cp != 0xF7 && cp != 0xA8 && cp != 0xAF && cp != 0xB4 &&
	       cp != 0xB8 && !(cp >= 0x2C2 && cp < 0x300);
}

static bool is_prefix_char(uint32_t cp, uint32_t next)
{
	if (cp == '+')
		return !llm_charclass_digit(next);
	return cp == 0xA7 || cp == '%' || cp == '=' || cp == 0x2014 || cp == 0x2013 ||
	       is_list_punct(cp) || is_quote(cp) || is_currency(cp) || is_icon(cp);
}

/* ------------------------------------------------------------------------------------------ */
/* Words */

typedef struct {
	llm_words *wd;
	const char *s;   /* the text the offsets refer to */
	size_t base;     /* offset of the chunk's text in s */
} splitter;

/* The word s[off..off+len): code points, flags and hash. */
static llm_word ref_words_make(const char *s, size_t off, size_t len)
{
	llm_word w = { 0 };
	w.off = (uint32_t)off;
	w.len = (uint32_t)len;
	bool symbol = true, punct = true;
	uint64_t h = 0, pw = 1;
	uint32_t cp = 0;
	for (size_t i = off; i < off + len;) {
		size_t k = (unsigned char)s[i] < 0x80 ? (cp = (unsigned char)s[i], 1)
		                                      : llm_utf8_decode(s + i, off + len - i, &cp);
		i += k;
		w.nchars++;
		if (llm_charclass_letter(cp))
			w.flags |= LLM_WORD_ALPHA;
		if (!llm_charclass_punct(cp))
			symbol = false;
		/* spaCy's is_punct: every character in a Unicode P* category */
		if (cp < 0x80 ? !((cp >= 0x21 && cp <= 0x2F && cp != '$' && cp != '+') ||
		                  (cp >= 0x3A && cp <= 0x40 && cp != '<' && cp != '=' && cp != '>') ||
		                  (cp >= 0x5B && cp <= 0x60 && cp != '^' && cp != '`') ||
		                  cp == '{' || cp == '}')
		              : !llm_uc_is(cp, LLM_UC_PUNCT))
			punct = false;
	}
	const unsigned char *p = (const unsigned char *)s + off;
	for (size_t i = 0; i < len; i++) {
		h = llm_words_addmod(llm_words_mulmod(h, LLM_WORDS_BASE), p[i] + 1u);
		pw = llm_words_mulmod(pw, LLM_WORDS_BASE);
	}
	if (symbol)
		w.flags |= LLM_WORD_SYMBOL;
	if (punct)
		w.flags |= LLM_WORD_PUNCT;
	if (w.nchars == 1 && llm_charclass_terminal(cp))
		w.flags |= LLM_WORD_TERMINAL;
	w.h = h;
	w.pw = pw;
	return w;
}

/* Emit code points [a, b) of the current chunk as one word (Han/Kana split per character). */
static void emit(splitter *sp, size_t a, size_t b)
{
	llm_words *wd = sp->wd;
	while (a < b) {
		size_t e = a + 1;
		if (!llm_charclass_cjk(wd->cps[a]))
			while (e < b && !llm_charclass_cjk(wd->cps[e]))
				e++;
		llm_word w = ref_words_make(sp->s, sp->base + wd->cofs[a], wd->cofs[e] - wd->cofs[a]);
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
static pthread_once_t exc_once = PTHREAD_ONCE_INIT;

static void exc_init(void)
{
	memset(exc_table, 0xff, sizeof exc_table);
	for (int i = 0; i < LLM_EN_EXC_COUNT; i++) {
		const char *k = en_exceptions[i].key;
		exc_len[i] = (uint8_t)strlen(k);
		unsigned char f = (unsigned char)k[0], l = (unsigned char)k[exc_len[i] - 1];
		if (exc_len[i] < 25) {
			exc_first[exc_len[i]][f >> 5] |= 1u << (f & 31);
			exc_last[exc_len[i]][l >> 5] |= 1u << (l & 31);
		}
		size_t j = llm_hash64(k, strlen(k), 0) & (EXC_SLOTS - 1);
		while (exc_table[j] >= 0)
			j = (j + 1) & (EXC_SLOTS - 1);
		exc_table[j] = (int16_t)i;
	}
}

/* The special case that k[0..len) is, or -1. */
static int exception_bytes(const char *k, size_t len)
{
	if (len > 24 || len == 0)
		return -1;
	pthread_once(&exc_once, exc_init);
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

/* Special cases made only of ASCII letters ("cannot", "gonna"), by length and first letter;
 * other chunks of only letters need no lookup. */
static uint32_t exc_alpha[25];

static void exc_alpha_init(void)
{
	for (int i = 0; i < LLM_EN_EXC_COUNT; i++) {
		const char *k = en_exceptions[i].key;
		size_t n = strlen(k), j = 0;
		while (j < n && ((k[j] | 0x20) >= 'a' && (k[j] | 0x20) <= 'z'))
			j++;
		if (j == n && n < 25)
			exc_alpha[n] |= 1u << ((k[0] | 0x20) - 'a');
	}
}

static pthread_once_t exc_alpha_once = PTHREAD_ONCE_INIT;

static int exception(const llm_words *wd, const char *chunk, size_t a, size_t b)
{
	size_t len = wd->cofs[b] - wd->cofs[a];
	if (len > 24)
		return -1;
	bool letters = true;
	for (size_t i = a; i < b && letters; i++)
		letters = wd->cps[i] < 0x80 && ((wd->cps[i] | 0x20) >= 'a' && (wd->cps[i] | 0x20) <= 'z');
	if (letters) {
		pthread_once(&exc_alpha_once, exc_alpha_init);
		if (!(exc_alpha[len] >> ((wd->cps[a] | 0x20) - 'a') & 1))
			return -1;
	}
	return exception_bytes(chunk + wd->cofs[a], len);
}

/*
 * spaCy's URL_MATCH (spacy/lang/tokenizer_exceptions.py, URL_PATTERN), which keeps a token
 * whole: an optional scheme "[\w+-.]{2,}://", an optional "user[:password]@", a host (dotted
 * labels and a lower-case TLD, or a public IPv4 address), an optional port ":NN" of 2 to 5
 * digits and an optional path after '/', '?' or '#'. "http://localhost:631/admin" has no TLD:
 * spaCy splits it at its infixes, and so do we. ALPHA_LOWER is read as Ll.
 */
static bool url_label_char(uint32_t c)
{
	return (c < 0x80 && (llm_charclass_letter(c) || llm_charclass_digit(c))) || (c >= 0xA1 && c <= 0xFFFF);
}

static bool url_word_char(uint32_t c)
{
	return llm_charclass_letter(c) || llm_charclass_digit(c) || c == '_';
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
	for (size_t i = a, k = 0; k < 2; i++) {
		if (c[i] == '.')
			k++;
		else
			o[k] = 10 * o[k] + (c[i] - '0');
	}
	return !(o[0] == 10 || o[0] == 127 || (o[0] == 169 && o[1] == 254) || (o[0] == 192 && o[1] == 168) ||
	         (o[0] == 172 && o[1] >= 16 && o[1] <= 31));
}

/* Host names c[a..b): one or more labels, each followed by '.', then a TLD of 2 to 63
 * lower-case letters. A label is 1 to 64 label characters, '_' and '-' allowed inside. */
static bool url_domain(const uint32_t *c, size_t a, size_t b)
{
	size_t last = b;
	while (last > a && c[last - 1] != '.')
		last--;
	if (last == a || b - last < 2 || b - last > 63)
		return false;
	for (size_t i = last; i < b; i++)
		if (!llm_charclass_lower(c[i]))
			return false;
	for (size_t s = a; s < last;) {
		size_t e = s;
		while (c[e] != '.')
			e++;
		if (e == s || e - s > 64 || !url_label_char(c[s]) || !url_label_char(c[e - 1]))
			return false;
		for (size_t i = s + 1; i + 1 < e; i++)
			if (!url_label_char(c[i]) && c[i] != '_' && c[i] != '-')
				return false;
		s = e + 1;
	}
	return true;
}

/* c[h..n) is a host, an optional port and an optional path, to the end. */
static bool url_host_to_end(const uint32_t *c, size_t h, size_t n)
{
	size_t e = h;
	while (e < n && (url_label_char(c[e]) || c[e] == '.' || c[e] == '_' || c[e] == '-'))
		e++;
	if (e == h || !(url_ipv4(c, h, e) || url_domain(c, h, e)))
		return false;
	if (e < n && c[e] == ':') {
		size_t d = e + 1;
		while (d < n && llm_charclass_digit(c[d]))
			d++;
		if (d - e - 1 < 2 || d - e - 1 > 5)
			return false;
		e = d;
	}
	return e == n || c[e] == '/' || c[e] == '?' || c[e] == '#';
}

static bool url_match(const uint32_t *c, size_t n)
{
	size_t i = 0;
	while (i < n && (url_word_char(c[i]) || c[i] == '+' || c[i] == '-' || c[i] == '.'))
		i++;
	size_t starts[2] = { 0, 0 }, ns = 0;
	if (i >= 2 && i + 2 < n && c[i] == ':' && c[i + 1] == '/' && c[i + 2] == '/')
		starts[ns++] = i + 3;
	starts[ns++] = 0; /* the scheme is optional: the pattern backtracks to none */
	for (size_t k = 0; k < ns; k++) {
		size_t p = starts[k];
		if (url_host_to_end(c, p, n))
			return true;
		if (p < n && (url_word_char(c[p]) || c[p] == '-'))
			for (size_t j = p + 1; j < n; j++)
				if (c[j] == '@' && url_host_to_end(c, j + 1, n))
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
	return is_prefix_char(wd->cps[a], a + 1 < b ? wd->cps[a + 1] : 0) ? 1 : 0;
}

/* Length of the suffix at the end of [a, b) (in code points), or 0. */
static size_t suffix_len(const llm_words *wd, const char *sp_chunk, size_t a, size_t b)
{
	uint32_t c = wd->cps[b - 1];
	uint32_t p = wd->cps[b - 2];
	if (c == '.' || c == 0x2026) {
		size_t i = b - 1;
		while (i > a && wd->cps[i - 1] == '.')
			i--;
		if (c == 0x2026)
			return 1;
		if (b - i >= 2)
			return b - i; /* an ellipsis run */
		/* '.' after a digit, lower-case letter, %²-+, punctuation or quote, or two capitals */
		if (llm_charclass_digit(p) || llm_charclass_lower(p) || p == '%' || p == 0xB2 || p == '-' || p == '+' ||
		    is_list_punct(p) || is_quote(p) ||
		    (b - a >= 3 && llm_charclass_upper(p) && llm_charclass_upper(wd->cps[b - 3])) ||
		    (b - a >= 3 && wd->cps[b - 3] == 0xB0 && p < 0x80 && strchr("FfCcKk", (int)p)))
			return 1;
		return 0;
	}
	if ((c == 's' || c == 'S') && (p == '\'' || p == 0x2019) && b - a > 2)
		return 2;
	if (is_list_punct(c) || is_quote(c) || is_icon(c) || c == 0x2014 || c == 0x2013)
		return 1;
	if (c == '+' && llm_charclass_digit(p))
		return 1;
	if ((c == '%' || is_currency(c)) && llm_charclass_digit(p))
		return 1;
	if (llm_charclass_letter(c) && c < 0x80) {
		/* a unit after a number: "3.5kg" -> "3.5" "kg" */
		size_t i = b;
		while (i > a && wd->cps[i - 1] < 0x80 && llm_charclass_letter(wd->cps[i - 1]))
			i--;
		if (i > a && llm_charclass_digit(wd->cps[i - 1]))
			for (int k = 0; units[k]; k++)
				if (strlen(units[k]) == wd->cofs[b] - wd->cofs[i] &&
				    memcmp(units[k], sp_chunk + wd->cofs[i], strlen(units[k])) == 0)
					return b - i;
	}
	return 0;
}

static bool is_hyphen(uint32_t c)
{
	return c == '-' || c == 0x2013 || c == 0x2014 || c == '~';
}

/* Split [a, b) at spaCy's English infixes and emit the pieces. */
static void emit_infixes(splitter *sp, size_t a, size_t b)
{
	const llm_words *wd = sp->wd;
	size_t start = a;
	for (size_t i = a + 1; i < b; i++) {
		uint32_t c = wd->cps[i], p = wd->cps[i - 1];
		uint32_t nx = i + 1 < b ? wd->cps[i + 1] : 0;
		size_t len = 0;
		if (c == '.' && nx == '.') {
			len = 2;
			while (i + len < b && wd->cps[i + len] == '.')
				len++;
		} else if (c == 0x2026 || is_icon(c)) {
			len = 1;
		} else if (llm_charclass_digit(p) && (c == '+' || c == '-' || c == '*' || c == '^') &&
		           (llm_charclass_digit(nx) || nx == '-')) {
			len = 1;
		} else if (c == '.' && (llm_charclass_lower(p) || is_quote(p)) && (llm_charclass_upper(nx) || is_quote(nx))) {
			len = 1;
		} else if (c == ',' && is_alpha_sp(p) && is_alpha_sp(nx)) {
			len = 1;
		} else if (is_hyphen(c) && (is_alpha_sp(p) || llm_charclass_digit(p))) {
			size_t k = i;
			while (k < b && is_hyphen(wd->cps[k]) && k - i < 3)
				k++;
			if (k < b && is_alpha_sp(wd->cps[k]))
				len = k - i;
		} else if ((c == ':' || c == '<' || c == '>' || c == '=' || c == '/') &&
		           (is_alpha_sp(p) || llm_charclass_digit(p)) && is_alpha_sp(nx)) {
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
			if (len > 24)
				continue;
			int x = exception_bytes(sp->s + off, len);
			if (x < 0)
				continue;
			/* replace tokens i..i+k-1 by the pieces of the special case */
			llm_word pieces[4];
			size_t np = 0, o = off;
			for (int j = 0; j < 4 && en_exceptions[x].split[j]; j++) {
				pieces[np++] = ref_words_make(sp->s, o, en_exceptions[x].split[j]);
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
		} else if (url_match(wd->cps + a, b - a)) {
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

static bool space_at(const char *t, size_t j, size_t end)
{
	uint32_t cp;
	llm_utf8_decode(t + j, end - j, &cp);
	return llm_charclass_space(cp);
}

/* Whether letters k[0..len) could be a special case (see exception()). */
static bool alpha_special(const char *k, size_t len)
{
	if (len > 24)
		return false;
	pthread_once(&exc_alpha_once, exc_alpha_init);
	if (!(exc_alpha[len] >> ((k[0] | 0x20) - 'a') & 1))
		return false;
	return exception_bytes(k, len) >= 0;
}

/* make_word for a word of ASCII letters. */
static llm_word make_word_letters(const char *s, size_t off, size_t len)
{
	llm_word w = { 0 };
	w.off = (uint32_t)off;
	w.len = (uint32_t)len;
	w.nchars = (uint32_t)len;
	w.flags = LLM_WORD_ALPHA;
	uint64_t h = 0, pw = 1;
	const unsigned char *p = (const unsigned char *)s + off;
	for (size_t i = 0; i < len; i++) {
		h = llm_words_addmod(llm_words_mulmod(h, LLM_WORDS_BASE), p[i] + 1u);
		pw = llm_words_mulmod(pw, LLM_WORDS_BASE);
	}
	w.h = h;
	w.pw = pw;
	return w;
}

/* A segmenter's words for the run of t starting at i and ending at the next white space (or
 * end); returns the end of the run. */
static size_t segment_run(llm_words *wd, const llm_segmenter *seg, const char *t, size_t i, size_t end)
{
	size_t j = i;
	while (j < end) {
		uint32_t cp;
		size_t k = (unsigned char)t[j] < 0x80 ? (cp = (unsigned char)t[j], 1)
		                                      : llm_utf8_decode(t + j, end - j, &cp);
		if (llm_charclass_space(cp))
			break;
		j += k;
	}
	if (j - i > wd->lcap) {
		wd->lcap = 2 * (j - i);
		wd->lens = llm_realloc(wd->lens, wd->lcap * sizeof *wd->lens);
	}
	size_t nw = seg->cut(seg->self, t + i, j - i, wd->lens), off = i;
	for (size_t k = 0; k < nw; k++) {
		llm_word w = ref_words_make(t, off, wd->lens[k]);
		words_push(wd, &w);
		off += wd->lens[k];
	}
	return j;
}

static void ref_words_split(llm_words *wd, const char *t, size_t start, size_t end, const llm_segmenter *seg)
{
	splitter sp = { wd, t, 0 };
	llm_words *out = wd;
	size_t i = start;
	while (i < end) {
		/* skip white space */
		uint32_t cp;
		size_t k;
		while (i < end) {
			unsigned char c = (unsigned char)t[i];
			if (c < 0x80) {
				if (!llm_charclass_space(c))
					break;
				i++;
				continue;
			}
			k = llm_utf8_decode(t + i, end - i, &cp);
			if (!llm_charclass_space(cp))
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
		size_t j = i;
		while (j < end && (((unsigned char)t[j] | 0x20) >= 'a' && ((unsigned char)t[j] | 0x20) <= 'z'))
			j++;
		if (j > i && (j == end || llm_charclass_space((unsigned char)t[j]) ||
		              ((unsigned char)t[j] >= 0x80 && space_at(t, j, end))) &&
		    !alpha_special(t + i, j - i)) {
			llm_word w = make_word_letters(t, i, j - i);
			words_push(out, &w);
			i = j;
			continue;
		}
		/* Letters and one trailing mark (",", ".", ...) before white space: spaCy's suffix
		 * rule splits the mark off, unless the whole is a special case ("etc." is not,
		 * "Mr." is) or the word is one ("cannot,"); '.' only after a lower-case letter. */
		if (j > i && j + 1 <= end && strchr(",;:!?).", t[j]) && t[j] &&
		    (j + 1 == end || llm_charclass_space((unsigned char)t[j + 1]) ||
		     ((unsigned char)t[j + 1] >= 0x80 && space_at(t, j + 1, end))) &&
		    (t[j] != '.' || (t[j - 1] >= 'a' && t[j - 1] <= 'z')) &&
		    exception_bytes(t + i, j + 1 - i) < 0 && !alpha_special(t + i, j - i)) {
			llm_word w = make_word_letters(t, i, j - i);
			words_push(out, &w);
			w = ref_words_make(t, j, 1);
			words_push(out, &w);
			i = j + 1;
			continue;
		}
		/* a chunk up to the next white space, decoded */
		size_t n = 0;
		j = i;
		while (j < end) {
			unsigned char c = (unsigned char)t[j];
			if (c < 0x80) {
				cp = c;
				k = 1;
			} else {
				k = llm_utf8_decode(t + j, end - j, &cp);
			}
			if (llm_charclass_space(cp))
				break;
			if (n + 2 > wd->ccap) {
				wd->ccap = wd->ccap ? 2 * wd->ccap : 256;
				wd->cps = llm_realloc(wd->cps, wd->ccap * sizeof *wd->cps);
				wd->cofs = llm_realloc(wd->cofs, wd->ccap * sizeof *wd->cofs);
			}
			wd->cps[n] = cp;
			wd->cofs[n] = (uint32_t)(j - i);
			n++;
			j += k;
		}
		wd->cofs[n] = (uint32_t)(j - i);
		wd->cps[n] = 0;
		sp.base = i;
		split_chunk(&sp, 0, n);
		i = j;
	}
}

#endif
