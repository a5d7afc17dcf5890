/*
 * quality.c — Gopher, C4 and FineWeb heuristics (see quality.h for the references).
 *
 * One pass splits the document into words and records per word its byte span, its length in
 * code points, whether it has a letter, whether it is only punctuation, and a polynomial hash
 * modulo the Mersenne prime 2^61-1 with the matching power of the base. n-grams are then hashed
 * by folding word hashes, which is exactly the hash of the concatenated string (with or without
 * the separating space), so "ab"+"c" and "a"+"bc" collide as they do for datatrove's "".join.
 * A modular hash (not mod 2^64) because power-of-two polynomial hashes have well-known
 * colliding families (Thue–Morse strings).
 */
#include "quality.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/hash.h"
#include "core/io.h"
#include "core/utf8.h"

#include "en_exceptions.h"

/* ------------------------------------------------------------------------------------------ */
/* Character sets */

/* datatrove utils/text.py PUNCTUATION + TERMINAL_PUNCTUATION (commit a649de79), sorted. */
static const uint32_t punct_set[] = {
	0x0, 0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x7, 0x8, 0xB, 0xC, 0xD, 0xE, 0xF, 0x10, 0x11, 0x12,
	0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x1B, 0x1C, 0x1D, 0x1E, 0x1F, 0x21, 0x22,
	0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2A, 0x2B, 0x2C, 0x2D, 0x2E, 0x2F, 0x3A, 0x3B,
	0x3C, 0x3D, 0x3E, 0x3F, 0x40, 0x5B, 0x5C, 0x5D, 0x5E, 0x5F, 0x60, 0x7B, 0x7C, 0x7D, 0x7E,
	0x7F, 0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8A, 0x8B, 0x8C, 0x8D,
	0x8E, 0x8F, 0x90, 0x91, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9A, 0x9B, 0x9C,
	0x9D, 0x9E, 0x9F, 0xAB, 0xB4, 0xBB, 0x589, 0x61D, 0x61E, 0x61F, 0x6D4, 0x700, 0x701, 0x702,
	0x7F9, 0x837, 0x839, 0x83D, 0x83E, 0x964, 0x965, 0x104A, 0x104B, 0x1362, 0x1367, 0x1368,
	0x166E, 0x1735, 0x1736, 0x17D4, 0x17D5, 0x17D6, 0x17D9, 0x17DA, 0x1803, 0x1809, 0x1944,
	0x1945, 0x1AA8, 0x1AA9, 0x1AAA, 0x1AAB, 0x1B5A, 0x1B5B, 0x1B5E, 0x1B5F, 0x1B7D, 0x1B7E,
	0x1C3B, 0x1C3C, 0x1C7E, 0x1C7F, 0x2013, 0x2014, 0x2019, 0x201C, 0x201D, 0x201E, 0x2026,
	0x203C, 0x203D, 0x2047, 0x2048, 0x2049, 0x2236, 0x2501, 0x25BA, 0x2E2E, 0x2E3C, 0x2E53,
	0x2E54, 0x3001, 0x3002, 0x3008, 0x3009, 0x300A, 0x300B, 0x300C, 0x300D, 0x3010, 0x3011,
	0xA4FF, 0xA60E, 0xA60F, 0xA6F3, 0xA6F7, 0xA876, 0xA877, 0xA8CE, 0xA8CF, 0xA92F, 0xA9C8,
	0xA9C9, 0xAA5D, 0xAA5E, 0xAA5F, 0xAAF0, 0xAAF1, 0xABEB, 0xFE52, 0xFE56, 0xFE57, 0xFF01,
	0xFF05, 0xFF08, 0xFF09, 0xFF0C, 0xFF0E, 0xFF11, 0xFF1A, 0xFF1B, 0xFF1F, 0xFF5E, 0xFF61,
	0x10A56, 0x10A57, 0x10F55, 0x10F56, 0x10F57, 0x10F58, 0x10F59, 0x10F86, 0x10F87, 0x10F88,
	0x10F89, 0x11047, 0x11048, 0x110BE, 0x110BF, 0x110C0, 0x110C1, 0x11141, 0x11142, 0x11143,
	0x111C5, 0x111C6, 0x111CD, 0x111DE, 0x111DF, 0x11238, 0x11239, 0x1123B, 0x1123C, 0x112A9,
	0x1144B, 0x1144C, 0x115C2, 0x115C3, 0x115C9, 0x115CA, 0x115CB, 0x115CC, 0x115CD, 0x115CE,
	0x115CF, 0x115D0, 0x115D1, 0x115D2, 0x115D3, 0x115D4, 0x115D5, 0x115D6, 0x115D7, 0x11641,
	0x11642, 0x1173C, 0x1173D, 0x1173E, 0x11944, 0x11946, 0x11A42, 0x11A43, 0x11A9B, 0x11A9C,
	0x11C41, 0x11C42, 0x11EF7, 0x11EF8, 0x11F43, 0x11F44, 0x16A6E, 0x16A6F, 0x16AF5, 0x16B37,
	0x16B38, 0x16B44, 0x16E98, 0x1BC9F, 0x1DA88
};

/* datatrove TERMINAL_PUNCTUATION, sorted; spaCy's sentencizer uses the same marks. */
static const uint32_t terminal_set[] = {
	0x21, 0x2E, 0x3F, 0x589, 0x61D, 0x61E, 0x61F, 0x6D4, 0x700, 0x701, 0x702, 0x7F9, 0x837,
	0x839, 0x83D, 0x83E, 0x964, 0x965, 0x104A, 0x104B, 0x1362, 0x1367, 0x1368, 0x166E, 0x1735,
	0x1736, 0x17D4, 0x17D5, 0x17D6, 0x17D9, 0x17DA, 0x1803, 0x1809, 0x1944, 0x1945, 0x1AA8,
	0x1AA9, 0x1AAA, 0x1AAB, 0x1B5A, 0x1B5B, 0x1B5E, 0x1B5F, 0x1B7D, 0x1B7E, 0x1C3B, 0x1C3C,
	0x1C7E, 0x1C7F, 0x203C, 0x203D, 0x2047, 0x2048, 0x2049, 0x2E2E, 0x2E3C, 0x2E53, 0x2E54,
	0x3002, 0xA4FF, 0xA60E, 0xA60F, 0xA6F3, 0xA6F7, 0xA876, 0xA877, 0xA8CE, 0xA8CF, 0xA92F,
	0xA9C8, 0xA9C9, 0xAA5D, 0xAA5E, 0xAA5F, 0xAAF0, 0xAAF1, 0xABEB, 0xFE52, 0xFE56, 0xFE57,
	0xFF01, 0xFF0E, 0xFF1F, 0xFF61, 0x10A56, 0x10A57, 0x10F55, 0x10F56, 0x10F57, 0x10F58,
	0x10F59, 0x10F86, 0x10F87, 0x10F88, 0x10F89, 0x11047, 0x11048, 0x110BE, 0x110BF, 0x110C0,
	0x110C1, 0x11141, 0x11142, 0x11143, 0x111C5, 0x111C6, 0x111CD, 0x111DE, 0x111DF, 0x11238,
	0x11239, 0x1123B, 0x1123C, 0x112A9, 0x1144B, 0x1144C, 0x115C2, 0x115C3, 0x115C9, 0x115CA,
	0x115CB, 0x115CC, 0x115CD, 0x115CE, 0x115CF, 0x115D0, 0x115D1, 0x115D2, 0x115D3, 0x115D4,
	0x115D5, 0x115D6, 0x115D7, 0x11641, 0x11642, 0x1173C, 0x1173D, 0x1173E, 0x11944, 0x11946,
	0x11A42, 0x11A43, 0x11A9B, 0x11A9C, 0x11C41, 0x11C42, 0x11EF7, 0x11EF8, 0x11F43, 0x11F44,
	0x16A6E, 0x16A6F, 0x16AF5, 0x16B37, 0x16B38, 0x16B44, 0x16E98, 0x1BC9F, 0x1DA88
};

static bool in_sorted(const uint32_t *a, size_t n, uint32_t cp)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (a[mid] < cp)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && a[lo] == cp;
}

bool llm_quality_is_punct(uint32_t cp)
{
	if (cp < 0x80) {
		/* ASCII: controls except \t \n (space is not), and the punctuation marks. */
		if (cp < 0x20)
			return cp != 9 && cp != 10;
		return cp == 0x7F || (cp >= 0x21 && cp <= 0x2F) || (cp >= 0x3A && cp <= 0x40) ||
		       (cp >= 0x5B && cp <= 0x60) || (cp >= 0x7B && cp <= 0x7E);
	}
	return in_sorted(punct_set, sizeof punct_set / sizeof *punct_set, cp);
}

bool llm_quality_is_terminal(uint32_t cp)
{
	if (cp < 0x80)
		return cp == '.' || cp == '!' || cp == '?';
	return in_sorted(terminal_set, sizeof terminal_set / sizeof *terminal_set, cp);
}

/* Python's str.isspace: Unicode White_Space plus the information separators 0x1C..0x1F. */
static inline bool py_space(uint32_t cp)
{
	if (cp < 0x80)
		return cp == ' ' || (cp >= 9 && cp <= 13) || (cp >= 0x1C && cp <= 0x1F);
	return llm_uc_is(cp, LLM_UC_SPACE);
}

static inline bool is_letter(uint32_t cp)
{
	if (cp < 0x80)
		return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z';
	return llm_uc_is(cp, LLM_UC_LETTER);
}

static inline bool is_digit(uint32_t cp)
{
	if (cp < 0x80)
		return cp >= '0' && cp <= '9';
	return llm_uc_is(cp, LLM_UC_DIGIT);
}

static inline bool is_lower(uint32_t cp)
{
	if (cp < 0x80)
		return cp >= 'a' && cp <= 'z';
	return llm_uc_is(cp, LLM_UC_LOWER);
}

static inline bool is_upper(uint32_t cp)
{
	if (cp < 0x80)
		return cp >= 'A' && cp <= 'Z';
	return llm_uc_is(cp, LLM_UC_UPPER);
}

/* Letters that spaCy's ALPHA class covers: not the CJK ideographs and kana, which we split. */
static inline bool is_alpha_sp(uint32_t cp)
{
	return is_letter(cp) && !(cp >= 0x2E80 && llm_uc_is(cp, LLM_UC_HAN | LLM_UC_KANA));
}

static inline bool is_cjk_char(uint32_t cp)
{
	return cp >= 0x2E80 && llm_uc_is(cp, LLM_UC_HAN | LLM_UC_KANA);
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
		return !is_digit(next);
	return cp == 0xA7 || cp == '%' || cp == '=' || cp == 0x2014 || cp == 0x2013 ||
	       is_list_punct(cp) || is_quote(cp) || is_currency(cp) || is_icon(cp);
}

/* ------------------------------------------------------------------------------------------ */
/* Hashing modulo 2^61-1 */

#define MP61 ((1ULL << 61) - 1)
#define HBASE 1000003ULL

static inline uint64_t mulmod(uint64_t a, uint64_t b)
{
	unsigned __int128 p = (unsigned __int128)a * b;
	uint64_t lo = (uint64_t)p & MP61, hi = (uint64_t)(p >> 61);
	uint64_t r = lo + hi;
	return r >= MP61 ? r - MP61 : r;
}

static inline uint64_t addmod(uint64_t a, uint64_t b)
{
	uint64_t r = a + b;
	return r >= MP61 ? r - MP61 : r;
}

/* ------------------------------------------------------------------------------------------ */
/* Word set */

struct llm_wordset {
	uint64_t *keys; /* hash | 1, 0 = empty */
	int *idx;
	size_t cap, n;
	llm_buf words;  /* NUL-separated */
	size_t *ofs;
};

llm_wordset *llm_wordset_new(void)
{
	llm_wordset *ws = llm_calloc(1, sizeof *ws);
	ws->cap = 64;
	ws->keys = llm_calloc(ws->cap, sizeof *ws->keys);
	ws->idx = llm_calloc(ws->cap, sizeof *ws->idx);
	return ws;
}

void llm_wordset_free(llm_wordset *ws)
{
	if (!ws)
		return;
	free(ws->keys);
	free(ws->idx);
	free(ws->ofs);
	llm_buf_release(&ws->words);
	free(ws);
}

static int wordset_lookup(const llm_wordset *ws, const char *w, size_t n, uint64_t h)
{
	for (size_t i = h & (ws->cap - 1);; i = (i + 1) & (ws->cap - 1)) {
		if (!ws->keys[i])
			return -1;
		if (ws->keys[i] == h) {
			const char *s = ws->words.p + ws->ofs[ws->idx[i]];
			if (strlen(s) == n && memcmp(s, w, n) == 0)
				return ws->idx[i];
		}
	}
}

int llm_wordset_find(const llm_wordset *ws, const char *w, size_t n)
{
	return wordset_lookup(ws, w, n, llm_hash64(w, n, 0) | 1);
}

size_t llm_wordset_size(const llm_wordset *ws)
{
	return ws->n;
}

void llm_wordset_add(llm_wordset *ws, const char *w, size_t n)
{
	uint64_t h = llm_hash64(w, n, 0) | 1;
	if (wordset_lookup(ws, w, n, h) >= 0)
		return;
	if (2 * (ws->n + 1) > ws->cap) {
		size_t ncap = ws->cap * 2;
		uint64_t *k = llm_calloc(ncap, sizeof *k);
		int *ix = llm_calloc(ncap, sizeof *ix);
		for (size_t i = 0; i < ws->cap; i++) {
			if (!ws->keys[i])
				continue;
			size_t j = ws->keys[i] & (ncap - 1);
			while (k[j])
				j = (j + 1) & (ncap - 1);
			k[j] = ws->keys[i];
			ix[j] = ws->idx[i];
		}
		free(ws->keys);
		free(ws->idx);
		ws->keys = k;
		ws->idx = ix;
		ws->cap = ncap;
	}
	ws->ofs = llm_realloc(ws->ofs, (ws->n + 1) * sizeof *ws->ofs);
	ws->ofs[ws->n] = ws->words.len;
	llm_buf_add(&ws->words, w, n);
	llm_buf_addc(&ws->words, 0);
	size_t j = h & (ws->cap - 1);
	while (ws->keys[j])
		j = (j + 1) & (ws->cap - 1);
	ws->keys[j] = h;
	ws->idx[j] = (int)ws->n++;
}

int llm_wordset_load(llm_wordset *ws, const char *path)
{
	char *data;
	size_t len;
	int rc = llm_read_file(path, &data, &len);
	if (rc != LLM_OK)
		return rc;
	size_t lineno = 0;
	for (size_t i = 0; i < len;) {
		size_t e = i;
		while (e < len && data[e] != '\n')
			e++;
		lineno++;
		size_t a = i, b = e;
		while (a < b && (data[a] == ' ' || data[a] == '\t'))
			a++;
		while (b > a && (data[b - 1] == ' ' || data[b - 1] == '\t' || data[b - 1] == '\r'))
			b--;
		if (!llm_utf8_valid(data + a, b - a)) {
			free(data);
			return llm_fail(LLM_EFORMAT, "%s:%zu: invalid UTF-8", path, lineno);
		}
		if (b > a && data[a] != '#')
			llm_wordset_add(ws, data + a, b - a);
		i = e + 1;
	}
	free(data);
	return LLM_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Per-thread state */

enum { W_ALPHA = 1, W_SYMBOL = 2, W_TERMINAL = 4, W_PUNCT = 8 };

typedef struct {
	uint32_t off, len;   /* bytes */
	uint32_t nchars;
	uint32_t flags;
	uint64_t h, pw;      /* hash of the bytes and HBASE^len, mod 2^61-1 */
} qword;

typedef struct {
	qword *w;
	size_t n, cap;
} qwords;

/* Open-addressing map from a 61-bit hash to a count and first position; key, count and
 * position share one 16-byte slot so that a probe touches one cache line. */
typedef struct {
	uint64_t key; /* hash + 1, 0 = empty */
	uint32_t count, first;
} hslot;

typedef struct {
	hslot *slot;
	size_t cap, n;
} hmap;

struct llm_quality {
	const char *s;
	size_t n;
	size_t nchars;      /* code points of the text */
	qwords words;
	qwords scratch;     /* words of one C4 line */
	uint32_t *cps;      /* code points of one chunk and their offsets */
	uint32_t *cofs;
	size_t ccap;
	hmap map;
	llm_buf line;
	/* n-gram hashing by prefix: hash of the words' bytes concatenated (ph) and joined by
	 * spaces (phs), their byte lengths, and powers of the base */
	uint64_t *ph, *phs, *pow;
	size_t *plen;
	size_t ncap, powcap;
};

static void qwords_push(qwords *ws, const qword *w)
{
	if (ws->n == ws->cap) {
		ws->cap = ws->cap ? 2 * ws->cap : 256;
		ws->w = llm_realloc(ws->w, ws->cap * sizeof *ws->w);
	}
	ws->w[ws->n++] = *w;
}

static void hmap_reset(hmap *m, size_t want)
{
	size_t cap = 64;
	while (cap < 2 * want)
		cap *= 2;
	if (cap > m->cap) {
		free(m->slot);
		m->slot = llm_malloc(cap * sizeof *m->slot);
		m->cap = cap;
	}
	/* Use only the power of two the document needs, so small documents clear little. */
	m->n = cap;
	memset(m->slot, 0, cap * sizeof *m->slot);
}

/* Slot of key (inserted with count 0 and first = pos when new). */
static inline hslot *hmap_slot(hmap *m, uint64_t h, uint32_t pos)
{
	uint64_t k = h + 1;
	size_t mask = m->n - 1;
	size_t i = (size_t)(k * 0x9E3779B97F4A7C15ULL >> 20) & mask;
	for (;; i = (i + 1) & mask) {
		hslot *e = &m->slot[i];
		if (e->key == k)
			return e;
		if (!e->key) {
			e->key = k;
			e->count = 0;
			e->first = pos;
			return e;
		}
	}
}

llm_quality *llm_quality_new(void)
{
	return llm_calloc(1, sizeof(llm_quality));
}

void llm_quality_free(llm_quality *q)
{
	if (!q)
		return;
	free(q->words.w);
	free(q->scratch.w);
	free(q->cps);
	free(q->cofs);
	free(q->map.slot);
	free(q->ph);
	free(q->phs);
	free(q->pow);
	free(q->plen);
	llm_buf_release(&q->line);
	free(q);
}

/* ------------------------------------------------------------------------------------------ */
/* Word splitting */

typedef struct {
	llm_quality *q;
	qwords *out;
	const char *s;   /* the text the offsets refer to */
	size_t base;     /* offset of the chunk's text in s */
} splitter;

/* The word s[off..off+len): code points, flags and hash. */
static qword make_word(const char *s, size_t off, size_t len)
{
	qword w = { 0 };
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
		if (is_letter(cp))
			w.flags |= W_ALPHA;
		if (!llm_quality_is_punct(cp))
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
		h = addmod(mulmod(h, HBASE), p[i] + 1u);
		pw = mulmod(pw, HBASE);
	}
	if (symbol)
		w.flags |= W_SYMBOL;
	if (punct)
		w.flags |= W_PUNCT;
	if (w.nchars == 1 && llm_quality_is_terminal(cp))
		w.flags |= W_TERMINAL;
	w.h = h;
	w.pw = pw;
	return w;
}

/* Emit code points [a, b) of the current chunk as one word (Han/Kana split per character). */
static void emit(splitter *sp, size_t a, size_t b)
{
	llm_quality *q = sp->q;
	while (a < b) {
		size_t e = a + 1;
		if (!is_cjk_char(q->cps[a]))
			while (e < b && !is_cjk_char(q->cps[e]))
				e++;
		qword w = make_word(sp->s, sp->base + q->cofs[a], q->cofs[e] - q->cofs[a]);
		qwords_push(sp->out, &w);
		a = e;
	}
}

static bool ascii_ieq(const llm_quality *q, size_t a, size_t b, const char *lit)
{
	size_t n = strlen(lit);
	if (b - a != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		uint32_t c = q->cps[a + i];
		if (c >= 0x80 || (char)((c >= 'A' && c <= 'Z') ? c + 32 : c) != lit[i])
			return false;
	}
	return true;
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

static int exception(const llm_quality *q, const char *chunk, size_t a, size_t b)
{
	size_t len = q->cofs[b] - q->cofs[a];
	if (len > 24)
		return -1;
	bool letters = true;
	for (size_t i = a; i < b && letters; i++)
		letters = q->cps[i] < 0x80 && ((q->cps[i] | 0x20) >= 'a' && (q->cps[i] | 0x20) <= 'z');
	if (letters) {
		pthread_once(&exc_alpha_once, exc_alpha_init);
		if (!(exc_alpha[len] >> ((q->cps[a] | 0x20) - 'a') & 1))
			return -1;
	}
	return exception_bytes(chunk + q->cofs[a], len);
}

static bool looks_like_url(const llm_quality *q, size_t a, size_t b)
{
	/* Scheme URLs, www. hosts, e-mail addresses, and host names with a TLD and a path. */
	size_t at = 0, dots = 0, slash = 0;
	for (size_t i = a; i < b; i++) {
		uint32_t c = q->cps[i];
		if (c == ':' && i + 2 < b && q->cps[i + 1] == '/' && q->cps[i + 2] == '/' && i > a)
			return true;
		if (c == '@')
			at++;
		else if (c == '.')
			dots++;
		else if (c == '/')
			slash++;
	}
	if (b - a > 4 && ascii_ieq(q, a, a + 4, "www."))
		return true;
	if (at == 1 && dots >= 1 && q->cps[a] != '@' && is_letter(q->cps[b - 1])) {
		for (size_t i = a; i < b; i++)
			if (q->cps[i] == '@')
				return i + 1 < b && is_letter(q->cps[i + 1]);
	}
	if (dots >= 1 && q->cps[b - 1] != '.') {
		/* host.tld or host.tld/path: letters, digits, '-' and '.', a 2+ letter TLD. */
		size_t i = a, last_dot = 0;
		while (i < b && q->cps[i] != '/') {
			uint32_t c = q->cps[i];
			if (c == '.') {
				if (i == a || q->cps[i - 1] == '.')
					return false; /* empty label */
				last_dot = i;
			} else if (!(c < 0x80 && (is_letter(c) || is_digit(c) || c == '-' || c == '_'))) {
				return false;
			}
			i++;
		}
		if (!last_dot || last_dot == a || i - last_dot < 3)
			return false;
		for (size_t k = last_dot + 1; k < i; k++)
			if (!(q->cps[k] < 0x80 && is_lower(q->cps[k])))
				return false;
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
static size_t prefix_len(const llm_quality *q, size_t a, size_t b)
{
	if (q->cps[a] == '.' && a + 1 < b && q->cps[a + 1] == '.') {
		size_t e = a + 2;
		while (e < b && q->cps[e] == '.')
			e++;
		return e - a;
	}
	return is_prefix_char(q->cps[a], a + 1 < b ? q->cps[a + 1] : 0) ? 1 : 0;
}

/* Length of the suffix at the end of [a, b) (in code points), or 0. */
static size_t suffix_len(const llm_quality *q, const char *sp_chunk, size_t a, size_t b)
{
	uint32_t c = q->cps[b - 1];
	uint32_t p = q->cps[b - 2];
	if (c == '.' || c == 0x2026) {
		size_t i = b - 1;
		while (i > a && q->cps[i - 1] == '.')
			i--;
		if (c == 0x2026)
			return 1;
		if (b - i >= 2)
			return b - i; /* an ellipsis run */
		/* '.' after a digit, lower-case letter, %²-+, punctuation or quote, or two capitals */
		if (is_digit(p) || is_lower(p) || p == '%' || p == 0xB2 || p == '-' || p == '+' ||
		    is_list_punct(p) || is_quote(p) ||
		    (b - a >= 3 && is_upper(p) && is_upper(q->cps[b - 3])) ||
		    (b - a >= 3 && q->cps[b - 3] == 0xB0 && p < 0x80 && strchr("FfCcKk", (int)p)))
			return 1;
		return 0;
	}
	if ((c == 's' || c == 'S') && (p == '\'' || p == 0x2019) && b - a > 2)
		return 2;
	if (is_list_punct(c) || is_quote(c) || is_icon(c) || c == 0x2014 || c == 0x2013)
		return 1;
	if (c == '+' && is_digit(p))
		return 1;
	if ((c == '%' || is_currency(c)) && is_digit(p))
		return 1;
	if (is_letter(c) && c < 0x80) {
		/* a unit after a number: "3.5kg" -> "3.5" "kg" */
		size_t i = b;
		while (i > a && q->cps[i - 1] < 0x80 && is_letter(q->cps[i - 1]))
			i--;
		if (i > a && is_digit(q->cps[i - 1]))
			for (int k = 0; units[k]; k++)
				if (strlen(units[k]) == q->cofs[b] - q->cofs[i] &&
				    memcmp(units[k], sp_chunk + q->cofs[i], strlen(units[k])) == 0)
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
	const llm_quality *q = sp->q;
	size_t start = a;
	for (size_t i = a + 1; i < b; i++) {
		uint32_t c = q->cps[i], p = q->cps[i - 1];
		uint32_t nx = i + 1 < b ? q->cps[i + 1] : 0;
		size_t len = 0;
		if (c == '.' && nx == '.') {
			len = 2;
			while (i + len < b && q->cps[i + len] == '.')
				len++;
		} else if (c == 0x2026 || is_icon(c)) {
			len = 1;
		} else if (is_digit(p) && (c == '+' || c == '-' || c == '*' || c == '^') &&
		           (is_digit(nx) || nx == '-')) {
			len = 1;
		} else if (c == '.' && (is_lower(p) || is_quote(p)) && (is_upper(nx) || is_quote(nx))) {
			len = 1;
		} else if (c == ',' && is_alpha_sp(p) && is_alpha_sp(nx)) {
			len = 1;
		} else if (is_hyphen(c) && (is_alpha_sp(p) || is_digit(p))) {
			size_t k = i;
			while (k < b && is_hyphen(q->cps[k]) && k - i < 3)
				k++;
			if (k < b && is_alpha_sp(q->cps[k]))
				len = k - i;
		} else if ((c == ':' || c == '<' || c == '>' || c == '=' || c == '/') &&
		           (is_alpha_sp(p) || is_digit(p)) && is_alpha_sp(nx)) {
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
	qwords *ws = sp->out;
	for (size_t i = first; i + 1 < ws->n; i++) {
		for (size_t k = ws->n - i < 4 ? ws->n - i : 4; k >= 2; k--) {
			size_t off = ws->w[i].off, len = ws->w[i + k - 1].off + ws->w[i + k - 1].len - off;
			if (len > 24)
				continue;
			int x = exception_bytes(sp->s + off, len);
			if (x < 0)
				continue;
			/* replace tokens i..i+k-1 by the pieces of the special case */
			qword pieces[4];
			size_t np = 0, o = off;
			for (int j = 0; j < 4 && en_exceptions[x].split[j]; j++) {
				pieces[np++] = make_word(sp->s, o, en_exceptions[x].split[j]);
				o += en_exceptions[x].split[j];
			}
			if (np > k) {
				for (size_t j = k; j < np; j++)
					qwords_push(ws, &pieces[0]); /* room for the extra pieces */
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
	llm_quality *q = sp->q;
	size_t sufs[64], send[64], nsuf = 0;
	size_t first = sp->out->n;
	const char *chunk = sp->s + sp->base;
	int special = exception(q, chunk, a, b);
	size_t last = (size_t)-1;
	while (a < b && special < 0 && b - a != last) {
		last = b - a;
		size_t pre = b - a > 1 ? prefix_len(q, a, b) : 0;
		if (pre && a + pre < b && (special = exception(q, chunk, a + pre, b)) >= 0) {
			emit(sp, a, a + pre);
			a += pre;
			break;
		}
		size_t suf = b - (a + pre) > 1 ? suffix_len(q, chunk, a + pre, b) : 0;
		if (suf && b - suf > a && (special = exception(q, chunk, a, b - suf)) >= 0) {
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
			special = exception(q, chunk, a, b);
	}
	if (a < b) {
		if (special >= 0) {
			size_t i = a;
			for (int k = 0; k < 4 && en_exceptions[special].split[k]; k++) {
				size_t e = i, want = q->cofs[i] + en_exceptions[special].split[k];
				while (e < b && q->cofs[e] < want)
					e++;
				emit(sp, i, e);
				i = e;
			}
		} else if (looks_like_url(q, a, b)) {
			emit(sp, a, b);
		} else {
			emit_infixes(sp, a, b);
		}
	}
	while (nsuf > 0) {
		nsuf--;
		emit(sp, sufs[nsuf], send[nsuf]);
	}
	if (sp->out->n - first >= 2)
		merge_specials(sp, first);
}

static bool space_at(const char *t, size_t j, size_t end)
{
	uint32_t cp;
	llm_utf8_decode(t + j, end - j, &cp);
	return py_space(cp);
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
static qword make_word_letters(const char *s, size_t off, size_t len)
{
	qword w = { 0 };
	w.off = (uint32_t)off;
	w.len = (uint32_t)len;
	w.nchars = (uint32_t)len;
	w.flags = W_ALPHA;
	uint64_t h = 0, pw = 1;
	const unsigned char *p = (const unsigned char *)s + off;
	for (size_t i = 0; i < len; i++) {
		h = addmod(mulmod(h, HBASE), p[i] + 1u);
		pw = mulmod(pw, HBASE);
	}
	w.h = h;
	w.pw = pw;
	return w;
}

/* Split s[0..n) into words appended to out; offsets relative to base text t. */
static void split_words(llm_quality *q, qwords *out, const char *t, size_t start, size_t end)
{
	splitter sp = { q, out, t, 0 };
	size_t i = start;
	while (i < end) {
		/* skip white space */
		uint32_t cp;
		size_t k;
		while (i < end) {
			unsigned char c = (unsigned char)t[i];
			if (c < 0x80) {
				if (!py_space(c))
					break;
				i++;
				continue;
			}
			k = llm_utf8_decode(t + i, end - i, &cp);
			if (!py_space(cp))
				break;
			i += k;
		}
		if (i >= end)
			break;
		/* Fast path: a chunk of ASCII letters only (most words) splits into itself unless
		 * it is a special case such as "cannot". */
		size_t j = i;
		while (j < end && (((unsigned char)t[j] | 0x20) >= 'a' && ((unsigned char)t[j] | 0x20) <= 'z'))
			j++;
		if (j > i && (j == end || py_space((unsigned char)t[j]) ||
		              ((unsigned char)t[j] >= 0x80 && space_at(t, j, end))) &&
		    !alpha_special(t + i, j - i)) {
			qword w = make_word_letters(t, i, j - i);
			qwords_push(out, &w);
			i = j;
			continue;
		}
		/* Letters and one trailing mark (",", ".", ...) before white space: spaCy's suffix
		 * rule splits the mark off, unless the whole is a special case ("etc." is not,
		 * "Mr." is) or the word is one ("cannot,"); '.' only after a lower-case letter. */
		if (j > i && j + 1 <= end && strchr(",;:!?).", t[j]) && t[j] &&
		    (j + 1 == end || py_space((unsigned char)t[j + 1]) ||
		     ((unsigned char)t[j + 1] >= 0x80 && space_at(t, j + 1, end))) &&
		    (t[j] != '.' || (t[j - 1] >= 'a' && t[j - 1] <= 'z')) &&
		    exception_bytes(t + i, j + 1 - i) < 0 && !alpha_special(t + i, j - i)) {
			qword w = make_word_letters(t, i, j - i);
			qwords_push(out, &w);
			w = make_word(t, j, 1);
			qwords_push(out, &w);
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
			if (py_space(cp))
				break;
			if (n + 2 > q->ccap) {
				q->ccap = q->ccap ? 2 * q->ccap : 256;
				q->cps = llm_realloc(q->cps, q->ccap * sizeof *q->cps);
				q->cofs = llm_realloc(q->cofs, q->ccap * sizeof *q->cofs);
			}
			q->cps[n] = cp;
			q->cofs[n] = (uint32_t)(j - i);
			n++;
			j += k;
		}
		q->cofs[n] = (uint32_t)(j - i);
		q->cps[n] = 0;
		sp.base = i;
		split_chunk(&sp, 0, n);
		i = j;
	}
}

void llm_quality_set_text(llm_quality *q, const char *s, size_t n)
{
	q->s = s;
	q->n = n;
	q->nchars = llm_utf8_count(s, n);
	q->words.n = 0;
	split_words(q, &q->words, s, 0, n);
}

size_t llm_quality_nwords(const llm_quality *q)
{
	return q->words.n;
}

const char *llm_quality_word(const llm_quality *q, size_t i, size_t *len)
{
	*len = q->words.w[i].len;
	return q->s + q->words.w[i].off;
}

/* ------------------------------------------------------------------------------------------ */
/* Parameters */

static const char *const gopher_stop[] = { "the", "be", "to", "of", "and", "that", "have", "with",
	                                   NULL };
/* FineWeb-2 configs/cmn_Hani.yml and jpn_Jpan.yml "stopwords" */
static const char *const zh_stop[] = {
	"\u7684", "\u5E74", "\u5728", "\u6708", "\u662F", "\u548C", "\u65E5", "\u4E86",
	"\u65BC", "\u00B7", "\u70BA", "\u6709", "\u88AB", "\u4EBA", "\u4E2D", "\u4E3A",
	"\u4ED6", "\u8207", "\u5F8C", "\u4E5F", "\u800C", "\u7531", NULL
};
static const char *const ja_stop[] = {
	"\u306E", "\u306B", "\u3092", "\u306F", "\u305F", "\u3066", "\u304C", "\u3068",
	"\u3067", "\u5E74", "\u3057", "\u30FB", "\u6708", "\u308C", "\u3055", NULL
};

void llm_quality_defaults(llm_quality_params *p, const char *lang)
{
	static const double top_en[3] = { 0.20, 0.18, 0.16 };
	static const double dup_en[6] = { 0.15, 0.14, 0.13, 0.12, 0.11, 0.10 };
	memset(p, 0, sizeof *p);
	p->min_doc_words = 50;
	p->max_doc_words = 100000;
	p->min_avg_word_len = 3;
	p->max_avg_word_len = 10;
	p->max_symbol_word_ratio = 0.1;
	p->max_bullet_lines_ratio = 0.9;
	p->max_ellipsis_lines_ratio = 0.3;
	p->min_alpha_words_ratio = 0.8;
	p->min_stop_words = 2;
	p->dup_para_frac = 0.3;
	p->dup_para_char_frac = 0.2;
	p->dup_line_frac = 0.3;
	p->dup_line_char_frac = 0.2;
	memcpy(p->top_ngram_frac, top_en, sizeof top_en);
	memcpy(p->dup_ngram_frac, dup_en, sizeof dup_en);
	p->c4_remove_citations = true;
	p->c4_terminal_punct = true;
	p->c4_min_words_per_line = 3;
	p->c4_max_word_len = 1000;
	p->c4_min_sentences = 5;
	p->c4_lorem_ipsum = p->c4_javascript = p->c4_curly_bracket = p->c4_policy = true;
	p->fw_line_punct_thr = 0.12;
	p->fw_short_line_thr = 0.67;
	p->fw_short_line_len = 30;
	p->fw_char_dup_ratio = 0.01;
	p->fw_new_line_ratio = 0.3;
	p->builtin_stop = gopher_stop;
	if (!lang)
		return;
	if (strncmp(lang, "zh", 2) == 0 || strcmp(lang, "cmn") == 0) {
		/* FineWeb-2 configs/cmn_Hani.yml */
		static const double top[3] = { 0.256, 0.201, 0.171 };
		static const double dup[6] = { 0.198, 0.182, 0.167, 0.154, 0.14, 0.127 };
		memcpy(p->top_ngram_frac, top, sizeof top);
		memcpy(p->dup_ngram_frac, dup, sizeof dup);
		p->dup_line_frac = 0.287;
		p->fw_line_punct_thr = 0.106;
		p->min_avg_word_len = 1;
		p->max_avg_word_len = 5;
		p->min_alpha_words_ratio = 0.735;
		p->fw_new_line_ratio = 0.178;
		p->fw_char_dup_ratio = 0.1;
		p->builtin_stop = zh_stop;
		p->cjk = true;
	} else if (strncmp(lang, "ja", 2) == 0) {
		/* FineWeb-2 configs/jpn_Jpan.yml */
		static const double top[3] = { 0.239, 0.196, 0.172 };
		static const double dup[6] = { 0.243, 0.225, 0.207, 0.19, 0.175, 0.159 };
		memcpy(p->top_ngram_frac, top, sizeof top);
		memcpy(p->dup_ngram_frac, dup, sizeof dup);
		p->dup_line_frac = 0.328;
		p->fw_line_punct_thr = 0.096;
		p->min_avg_word_len = 1;
		p->max_avg_word_len = 6;
		p->min_alpha_words_ratio = 0.759;
		p->fw_new_line_ratio = 0.13;
		p->fw_char_dup_ratio = 0.1;
		p->builtin_stop = ja_stop;
		p->cjk = true;
	}
}

static inline bool on(double x)
{
	return x > 0;
}

static bool fail(llm_verdict *v, const char *reason, double value, double threshold)
{
	v->reason = reason;
	v->value = value;
	v->threshold = threshold;
	return false;
}

/* ------------------------------------------------------------------------------------------ */
/* Line helpers */

/* Python str.splitlines() boundaries: returns the end of the line starting at i and sets *next
 * to the start of the following one. */
static size_t splitline(const char *s, size_t n, size_t i, size_t *next)
{
	for (size_t j = i; j < n; j++) {
		unsigned char c = (unsigned char)s[j];
		if (c == '\n' || c == '\v' || c == '\f' || (c >= 0x1C && c <= 0x1E)) {
			*next = j + 1;
			return j;
		}
		if (c == '\r') {
			*next = (j + 1 < n && s[j + 1] == '\n') ? j + 2 : j + 1;
			return j;
		}
		if (c == 0xC2 && j + 1 < n && (unsigned char)s[j + 1] == 0x85) {
			*next = j + 2;
			return j;
		}
		if (c == 0xE2 && j + 2 < n && (unsigned char)s[j + 1] == 0x80 &&
		    ((unsigned char)s[j + 2] == 0xA8 || (unsigned char)s[j + 2] == 0xA9)) {
			*next = j + 3;
			return j;
		}
	}
	*next = n;
	return n;
}

/* Python str.strip() on a byte span. */
static void py_strip(const char *s, size_t *a, size_t *b)
{
	while (*a < *b) {
		uint32_t cp;
		size_t k = llm_utf8_decode(s + *a, *b - *a, &cp);
		if (!py_space(cp))
			break;
		*a += k;
	}
	while (*b > *a) {
		size_t k = 1;
		while (k < 4 && k < *b - *a && ((unsigned char)s[*b - k] & 0xC0) == 0x80)
			k++;
		uint32_t cp;
		if (llm_utf8_decode(s + *b - k, k, &cp) != k || !py_space(cp))
			break;
		*b -= k;
	}
}

static uint32_t last_cp(const char *s, size_t a, size_t b)
{
	if (b == a)
		return 0;
	size_t k = 1;
	while (k < 4 && k < b - a && ((unsigned char)s[b - k] & 0xC0) == 0x80)
		k++;
	uint32_t cp;
	if (llm_utf8_decode(s + b - k, k, &cp) != k)
		return LLM_UTF8_REPLACEMENT;
	return cp;
}

static bool ends_with(const char *s, size_t a, size_t b, const char *lit)
{
	size_t n = strlen(lit);
	return b - a >= n && memcmp(s + b - n, lit, n) == 0;
}

static size_t count_sub(const char *s, size_t n, const char *lit)
{
	size_t m = strlen(lit), c = 0;
	const char *p = s, *end = s + n;
	while ((p = memmem(p, (size_t)(end - p), lit, m)) != NULL) {
		c++;
		p += m;
	}
	return c;
}

static uint64_t span_hash(const char *s, size_t a, size_t b)
{
	return llm_hash64(s + a, b - a, 0x5eed) & MP61;
}

/* ------------------------------------------------------------------------------------------ */
/* Gopher quality */

bool llm_gopher_quality(llm_quality *q, const llm_quality_params *p, llm_verdict *v)
{
	const qword *w = q->words.w;
	size_t nw = q->words.n, nsym = 0, nalpha = 0;
	double sumlen = 0;
	for (size_t i = 0; i < nw; i++) {
		if (w[i].flags & W_SYMBOL)
			continue;
		nsym++;
		sumlen += w[i].nchars;
	}
	if (on(p->min_doc_words) && (double)nsym < p->min_doc_words)
		return fail(v, "gopher_short_doc", (double)nsym, p->min_doc_words);
	if (on(p->max_doc_words) && (double)nsym > p->max_doc_words)
		return fail(v, "gopher_long_doc", (double)nsym, p->max_doc_words);
	double avg = nsym ? sumlen / (double)nsym : NAN;
	if (nsym && on(p->min_avg_word_len) && avg < p->min_avg_word_len)
		return fail(v, "gopher_short_words", avg, p->min_avg_word_len);
	if (nsym && on(p->max_avg_word_len) && avg > p->max_avg_word_len)
		return fail(v, "gopher_long_words", avg, p->max_avg_word_len);
	if (nw == 0)
		return fail(v, "gopher_short_doc", 0, p->min_doc_words);
	if (on(p->max_symbol_word_ratio)) {
		double r = (double)count_sub(q->s, q->n, "#") / (double)nw;
		if (r > p->max_symbol_word_ratio)
			return fail(v, "gopher_too_many_hashes", r, p->max_symbol_word_ratio);
		r = (double)(count_sub(q->s, q->n, "...") + count_sub(q->s, q->n, "\xE2\x80\xA6")) /
		    (double)nw;
		if (r > p->max_symbol_word_ratio)
			return fail(v, "gopher_too_many_ellipsis", r, p->max_symbol_word_ratio);
	}
	if (on(p->max_bullet_lines_ratio) || on(p->max_ellipsis_lines_ratio)) {
		size_t lines = 0, bullets = 0, ellipses = 0;
		for (size_t i = 0, next; i < q->n; i = next) {
			size_t e = splitline(q->s, q->n, i, &next), a = i, b = e;
			lines++;
			py_strip(q->s, &a, &b);
			if (b > a && (q->s[a] == '-' || (b - a >= 3 && memcmp(q->s + a, "\xE2\x80\xA2", 3) == 0)))
				bullets++;
			if (ends_with(q->s, a, b, "...") || ends_with(q->s, a, b, "\xE2\x80\xA6"))
				ellipses++;
		}
		if (lines) {
			double r = (double)bullets / (double)lines;
			if (on(p->max_bullet_lines_ratio) && r > p->max_bullet_lines_ratio)
				return fail(v, "gopher_too_many_bullets", r, p->max_bullet_lines_ratio);
			r = (double)ellipses / (double)lines;
			if (on(p->max_ellipsis_lines_ratio) && r > p->max_ellipsis_lines_ratio)
				return fail(v, "gopher_too_many_end_ellipsis", r, p->max_ellipsis_lines_ratio);
		}
	}
	if (on(p->min_alpha_words_ratio)) {
		for (size_t i = 0; i < nw; i++)
			nalpha += (w[i].flags & W_ALPHA) != 0;
		double r = (double)nalpha / (double)nw;
		if (r < p->min_alpha_words_ratio)
			return fail(v, "gopher_few_alpha_words", r, p->min_alpha_words_ratio);
	}
	if (p->min_stop_words > 0) {
		/* distinct stop words present */
		const char *const *builtin = p->builtin_stop ? p->builtin_stop : gopher_stop;
		size_t nstop = 0;
		if (p->stop_words)
			nstop = llm_wordset_size(p->stop_words);
		else
			while (builtin[nstop])
				nstop++;
		unsigned char seen_small[64] = { 0 };
		unsigned char *seen = nstop <= 64 ? seen_small : llm_calloc(nstop, 1);
		int found = 0;
		for (size_t i = 0; i < nw && found < p->min_stop_words; i++) {
			const char *t = q->s + w[i].off;
			int k = -1;
			if (p->stop_words) {
				k = llm_wordset_find(p->stop_words, t, w[i].len);
			} else if (w[i].len <= 4) {
				for (size_t j = 0; j < nstop; j++)
					if (strlen(builtin[j]) == w[i].len &&
					    memcmp(builtin[j], t, w[i].len) == 0)
						k = (int)j;
			}
			if (k >= 0 && !seen[k]) {
				seen[k] = 1;
				found++;
			}
		}
		if (seen != seen_small)
			free(seen);
		if (found < p->min_stop_words)
			return fail(v, "gopher_few_stop_words", found, p->min_stop_words);
	}
	return true;
}

/* ------------------------------------------------------------------------------------------ */
/* Gopher repetition */

/* Duplicates among spans: elements seen before (count) and their code points. */
static void find_duplicates(llm_quality *q, const size_t *ab, size_t nspans, size_t *dups,
                            size_t *dupchars)
{
	hmap_reset(&q->map, nspans);
	*dups = *dupchars = 0;
	for (size_t i = 0; i < nspans; i++) {
		size_t a = ab[2 * i], b = ab[2 * i + 1];
		hslot *e = hmap_slot(&q->map, span_hash(q->s, a, b), (uint32_t)i);
		if (e->count++) {
			(*dups)++;
			*dupchars += llm_utf8_count(q->s + a, b - a);
		}
	}
}

static size_t *spans_buf(llm_quality *q, size_t need)
{
	llm_buf_reset(&q->line);
	llm_buf_grow(&q->line, need * 2 * sizeof(size_t));
	return (size_t *)(void *)q->line.p;
}

static size_t *grow_spans(llm_quality *q, size_t *ab, size_t n)
{
	size_t need = (n + 1) * 2 * sizeof(size_t);
	if (need + 1 > q->line.cap) {
		q->line.len = n * 2 * sizeof(size_t);
		llm_buf_grow(&q->line, need);
		ab = (size_t *)(void *)q->line.p;
	}
	return ab;
}

/* Prefix hashes of the current words (see struct llm_quality); powers up to the longest
 * 10-gram. */
static void prefix_hashes(llm_quality *q, size_t maxn)
{
	const qword *w = q->words.w;
	size_t nw = q->words.n;
	if (nw + 1 > q->ncap) {
		q->ncap = 2 * (nw + 1);
		q->ph = llm_realloc(q->ph, q->ncap * sizeof *q->ph);
		q->phs = llm_realloc(q->phs, q->ncap * sizeof *q->phs);
		q->plen = llm_realloc(q->plen, q->ncap * sizeof *q->plen);
	}
	q->ph[0] = q->phs[0] = 0;
	q->plen[0] = 0;
	size_t longest = 0;
	for (size_t k = 0; k < nw; k++) {
		q->ph[k + 1] = addmod(mulmod(q->ph[k], w[k].pw), w[k].h);
		q->phs[k + 1] = k ? addmod(mulmod(addmod(mulmod(q->phs[k], HBASE), ' ' + 1), w[k].pw), w[k].h)
		                  : w[k].h;
		q->plen[k + 1] = q->plen[k] + w[k].len;
		size_t from = k + 1 >= maxn ? k + 1 - maxn : 0;
		size_t l = q->plen[k + 1] - q->plen[from] + maxn;
		if (l > longest)
			longest = l;
	}
	if (longest + 1 > q->powcap) {
		size_t old = q->powcap;
		q->powcap = 2 * (longest + 1);
		q->pow = llm_realloc(q->pow, q->powcap * sizeof *q->pow);
		if (!old)
			q->pow[0] = 1;
		for (size_t x = old ? old : 1; x < q->powcap; x++)
			q->pow[x] = mulmod(q->pow[x - 1], HBASE);
	}
}

static inline uint64_t submod(uint64_t a, uint64_t b)
{
	return a >= b ? a - b : a + MP61 - b;
}

/* Hash of words [i, i+n) concatenated ("".join) or joined by spaces (" ".join): the same value
 * make_word would give the joined string. */
static inline uint64_t ngram_hash(const llm_quality *q, size_t i, size_t n, bool space)
{
	size_t j = i + n, L = q->plen[j] - q->plen[i];
	if (!space)
		return submod(q->ph[j], mulmod(q->ph[i], q->pow[L]));
	L += n - 1;
	if (i == 0)
		return q->phs[j];
	uint64_t h = submod(q->phs[j], mulmod(q->phs[i], q->pow[L + 1]));
	return submod(h, mulmod(' ' + 1, q->pow[L]));
}

bool llm_gopher_repetition(llm_quality *q, const llm_quality_params *p, llm_verdict *v)
{
	const char *s = q->s;
	size_t n = q->n;
	if (n == 0)
		return fail(v, "empty", 0, 0);
	double len = (double)q->nchars;
	size_t *ab = spans_buf(q, 64), ns = 0, dups, dupc;

	/* paragraphs: text.strip() split on \n{2,} */
	size_t a = 0, b = n;
	py_strip(s, &a, &b);
	for (size_t i = a; i <= b;) {
		size_t j = i;
		while (j < b && !(s[j] == '\n' && j + 1 < b && s[j + 1] == '\n'))
			j++;
		ab = grow_spans(q, ab, ns);
		ab[2 * ns] = i;
		ab[2 * ns + 1] = j;
		ns++;
		if (j >= b)
			break;
		while (j < b && s[j] == '\n')
			j++;
		i = j;
	}
	find_duplicates(q, ab, ns, &dups, &dupc);
	double r = (double)dups / (double)ns;
	if (on(p->dup_para_frac) && r > p->dup_para_frac)
		return fail(v, "gopher_rep_dup_para_frac", r, p->dup_para_frac);
	r = (double)dupc / len;
	if (on(p->dup_para_char_frac) && r > p->dup_para_char_frac)
		return fail(v, "gopher_rep_dup_para_char_frac", r, p->dup_para_char_frac);

	/* lines: the whole text split on \n+ (empty first/last elements included) */
	ns = 0;
	for (size_t i = 0; i <= n;) {
		size_t j = i;
		while (j < n && s[j] != '\n')
			j++;
		ab = grow_spans(q, ab, ns);
		ab[2 * ns] = i;
		ab[2 * ns + 1] = j;
		ns++;
		if (j >= n)
			break;
		while (j < n && s[j] == '\n')
			j++;
		i = j;
	}
	find_duplicates(q, ab, ns, &dups, &dupc);
	r = (double)dups / (double)ns;
	if (on(p->dup_line_frac) && r > p->dup_line_frac)
		return fail(v, "gopher_rep_dup_line_frac", r, p->dup_line_frac);
	r = (double)dupc / len;
	if (on(p->dup_line_char_frac) && r > p->dup_line_char_frac)
		return fail(v, "gopher_rep_dup_line_char_frac", r, p->dup_line_char_frac);

	static const char *const top_names[3] = { "gopher_rep_top_2_gram", "gopher_rep_top_3_gram",
	                                           "gopher_rep_top_4_gram" };
	static const char *const dup_names[6] = {
		"gopher_rep_dup_5_gram", "gopher_rep_dup_6_gram", "gopher_rep_dup_7_gram",
		"gopher_rep_dup_8_gram", "gopher_rep_dup_9_gram", "gopher_rep_dup_10_gram"
	};
	const qword *w = q->words.w;
	size_t nw = q->words.n;
	/* Chinese and Japanese words are single characters here, while FineWeb-2's thresholds
	 * count words of a segmenter (about two characters on average): an n-gram of words is
	 * taken as a run of 2n characters, joined without spaces. */
	size_t scale = p->cjk ? 2 : 1;
	prefix_hashes(q, 10 * scale);
	/* An n-gram seen c times covers c * (its words' code points + the spaces) <=
	 * n * max over words of (count * code points) + (n - 1) * (highest word count): when that
	 * bound cannot pass a top-n-gram threshold, the n-gram count is not needed. One pass over
	 * the words usually rules out all three. */
	size_t maxcov = 0, maxcount = 0;
	if (on(p->top_ngram_frac[0]) || on(p->top_ngram_frac[1]) || on(p->top_ngram_frac[2])) {
		hmap_reset(&q->map, nw);
		for (size_t i = 0; i < nw; i++) {
			hslot *e = hmap_slot(&q->map, w[i].h, (uint32_t)i);
			size_t c = ++e->count;
			if (c * w[i].nchars > maxcov)
				maxcov = c * w[i].nchars;
			if (c > maxcount)
				maxcount = c;
		}
	}
	for (size_t g = 0; g < 3; g++) {
		size_t gn = (g + 2) * scale;
		if (!on(p->top_ngram_frac[g]) || nw < gn)
			continue;
		size_t bound = gn * maxcov + (p->cjk ? 0 : (gn - 1) * maxcount);
		if ((double)bound / len <= p->top_ngram_frac[g])
			continue;
		/* Counter.most_common(1): the highest count, the first inserted among ties. */
		hmap_reset(&q->map, nw);
		uint32_t best = 0, best_first = 0;
		for (size_t i = 0; i + gn <= nw; i++) {
			hslot *e = hmap_slot(&q->map, ngram_hash(q, i, gn, !p->cjk), (uint32_t)i);
			uint32_t c = ++e->count;
			uint32_t first = e->first;
			if (c > best || (c == best && first < best_first)) {
				best = c;
				best_first = first;
			}
		}
		/* CJK n-grams are joined without spaces: they are runs of characters */
		size_t chars = p->cjk ? 0 : gn - 1;
		for (size_t k = 0; k < gn; k++)
			chars += w[best_first + k].nchars;
		r = (double)chars * best / len;
		if (r > p->top_ngram_frac[g])
			return fail(v, top_names[g], r, p->top_ngram_frac[g]);
	}
	/* Every counted repeat of an n-gram (n >= 5) lies inside repeated 5-gram occurrences, so
	 * when those cover too little text for the strictest enabled threshold, no dup_n rule can
	 * fail and the six exact passes are skipped. */
	double strictest = INFINITY;
	for (size_t g = 0; g < 6; g++)
		if (on(p->dup_ngram_frac[g]) && p->dup_ngram_frac[g] < strictest)
			strictest = p->dup_ngram_frac[g];
	size_t n5 = 5 * scale;
	if (strictest < INFINITY && nw >= n5) {
		hmap_reset(&q->map, nw);
		size_t covered = 0, upto = 0;
		for (size_t i = 0; i + n5 <= nw; i++) {
			hslot *e = hmap_slot(&q->map, ngram_hash(q, i, n5, false), (uint32_t)i);
			if (e->count++ == 0)
				continue;
			for (size_t k = i > upto ? i : upto; k < i + n5; k++)
				covered += w[k].nchars;
			upto = i + n5;
		}
		if ((double)covered / len <= strictest)
			return true;
	}
	for (size_t g = 0; g < 6; g++) {
		size_t gn = (g + 5) * scale;
		if (!on(p->dup_ngram_frac[g]))
			continue;
		hmap_reset(&q->map, nw);
		size_t rep = 0;
		for (size_t i = 0; i + gn <= nw;) {
			hslot *e = hmap_slot(&q->map, ngram_hash(q, i, gn, false), (uint32_t)i);
			if (e->count) {
				for (size_t k = 0; k < gn; k++)
					rep += w[i + k].nchars;
				i += gn;
			} else {
				e->count = 1;
				i++;
			}
		}
		r = (double)rep / len;
		if (r > p->dup_ngram_frac[g])
			return fail(v, dup_names[g], r, p->dup_ngram_frac[g]);
	}
	return true;
}

/* ------------------------------------------------------------------------------------------ */
/* FineWeb */

bool llm_fineweb_quality(llm_quality *q, const llm_quality_params *p, llm_verdict *v)
{
	const char *s = q->s;
	size_t n = q->n, *ab = spans_buf(q, 64), ns = 0;
	size_t punct = 0, shortl = 0, newlines = 0;
	for (size_t i = 0; i <= n;) {
		size_t j = i;
		while (j < n && s[j] != '\n')
			j++;
		if (j < n)
			newlines++;
		size_t a = i, b = j;
		py_strip(s, &a, &b);
		if (b > a) {
			ab = grow_spans(q, ab, ns);
			ab[2 * ns] = i;
			ab[2 * ns + 1] = j;
			ns++;
			if (llm_quality_is_terminal(last_cp(s, i, j)))
				punct++;
			if (llm_utf8_count(s + i, j - i) <= (size_t)p->fw_short_line_len)
				shortl++;
		}
		if (j >= n)
			break;
		i = j + 1;
	}
	if (ns == 0)
		return fail(v, "empty", 0, 0);
	double r = (double)punct / (double)ns;
	if (r < p->fw_line_punct_thr)
		return fail(v, "fineweb_line_punct_ratio", r, p->fw_line_punct_thr);
	r = (double)shortl / (double)ns;
	if (on(p->fw_short_line_thr) && r > p->fw_short_line_thr)
		return fail(v, "fineweb_short_line_ratio", r, p->fw_short_line_thr);
	size_t dups, dupc;
	find_duplicates(q, ab, ns, &dups, &dupc);
	r = (double)dupc / (double)(q->nchars - newlines);
	if (on(p->fw_char_dup_ratio) && r > p->fw_char_dup_ratio)
		return fail(v, "fineweb_char_dup_ratio", r, p->fw_char_dup_ratio);
	if (on(p->fw_new_line_ratio)) {
		r = q->words.n ? (double)newlines / (double)q->words.n : INFINITY;
		if (r > p->fw_new_line_ratio)
			return fail(v, "fineweb_list_ratio", r, p->fw_new_line_ratio);
	}
	return true;
}

/* ------------------------------------------------------------------------------------------ */
/* C4 */

const char *const llm_c4_line_rules[5] = { "too_long_word", "no_terminal_punct", "too_few_words",
	                                   "javascript", "policy" };

static const char *const policy_phrases[] = { "terms of use", "privacy policy", "cookie policy",
	                                      "uses cookies", "use of cookies", "use cookies" };

/* Remove "[digits]", "[edit]" and "[citation needed]" from s[a..b) into out. */
static void remove_citations(const char *s, size_t a, size_t b, llm_buf *out)
{
	llm_buf_reset(out);
	size_t i = a;
	while (i < b) {
		if (s[i] == '[') {
			size_t j = i + 1;
			while (j < b && s[j] >= '0' && s[j] <= '9')
				j++;
			size_t m = 0;
			if (j < b && s[j] == ']')
				m = j + 1 - i;
			else if (b - i >= 6 && memcmp(s + i, "[edit]", 6) == 0)
				m = 6;
			else if (b - i >= 18 && memcmp(s + i, "[citation needed]", 18) == 0)
				m = 18;
			if (m) {
				i += m;
				continue;
			}
		}
		llm_buf_addc(out, s[i++]);
	}
}

/* Sentences in a line as spaCy's sentencizer counts them over our words. */
static size_t count_sentences(llm_quality *q, const char *s, size_t a, size_t b)
{
	q->scratch.n = 0;
	split_words(q, &q->scratch, s, a, b);
	size_t sent = q->scratch.n ? 1 : 0;
	bool seen = false;
	for (size_t i = 0; i < q->scratch.n; i++) {
		uint32_t f = q->scratch.w[i].flags;
		if (seen && !(f & W_PUNCT) && !(f & W_TERMINAL)) {
			sent++;
			seen = false;
		} else if (f & W_TERMINAL) {
			seen = true;
		}
	}
	return sent;
}

static bool c4_terminal(const char *s, size_t n, bool cjk)
{
	if (n == 0)
		return false;
	if (ends_with(s, 0, n, "..."))
		return false;
	char c = s[n - 1];
	if (c == '.' || c == '?' || c == '!' || c == '"' || c == '\'')
		return true;
	if (!cjk)
		return false;
	uint32_t cp = last_cp(s, 0, n);
	/* 。！？；… and their full-width / closing-quote companions */
	return cp == 0x3002 || cp == 0xFF01 || cp == 0xFF1F || cp == 0xFF1B || cp == 0x2026 ||
	       cp == 0x201D || cp == 0x300D || cp == 0x300F || cp == 0xFF0E || cp == 0xFF61;
}

bool llm_c4_filter(llm_quality *q, const llm_quality_params *p, llm_buf *out, uint64_t stats[5],
                   llm_verdict *v)
{
	const char *s = q->s;
	size_t n = q->n, sentences = 0;
	llm_buf cit = LLM_BUF_INIT, low = LLM_BUF_INIT;
	llm_buf_reset(out);
	bool keep = true;
	for (size_t i = 0, next; i < n; i = next) {
		size_t e = splitline(s, n, i, &next), a = i, b = e;
		py_strip(s, &a, &b);
		/* white-space words of the stripped line */
		size_t nwords = 0, longest = 0;
		for (size_t k = a; k < b;) {
			uint32_t cp;
			size_t kk = llm_utf8_decode(s + k, b - k, &cp);
			if (py_space(cp)) {
				k += kk;
				continue;
			}
			size_t wl = 0;
			while (k < b) {
				kk = llm_utf8_decode(s + k, b - k, &cp);
				if (py_space(cp))
					break;
				wl++;
				k += kk;
			}
			nwords++;
			if (wl > longest)
				longest = wl;
		}
		if (p->c4_max_word_len > 0 && longest > (size_t)p->c4_max_word_len) {
			if (stats)
				stats[0]++;
			continue;
		}
		const char *l = s + a;
		size_t ln = b - a;
		if (p->c4_remove_citations && memchr(l, '[', ln)) {
			remove_citations(s, a, b, &cit);
			l = cit.p;
			ln = cit.len;
		}
		if (p->c4_terminal_punct && !c4_terminal(l, ln, p->cjk)) {
			if (stats)
				stats[1]++;
			continue;
		}
		/* CJK lines have no spaces: their words are characters */
		size_t words = nwords;
		if (p->cjk && (int)words < p->c4_min_words_per_line)
			words = llm_utf8_count(l, ln);
		if (p->c4_min_words_per_line > 0 && (int)words < p->c4_min_words_per_line) {
			if (stats)
				stats[2]++;
			continue;
		}
		/* ASCII lower-case copy for the phrase rules (the phrases are ASCII; Python's
		 * lower() maps no other character to an ASCII letter except U+0130 and the Kelvin
		 * and Angstrom signs, which no phrase contains in a way that matters) */
		llm_buf_reset(&low);
		llm_buf_grow(&low, ln);
		for (size_t k = 0; k < ln; k++)
			low.p[k] = (char)((l[k] >= 'A' && l[k] <= 'Z') ? l[k] + 32 : l[k]);
		low.len = ln;
		if (p->c4_lorem_ipsum && memmem(low.p, ln, "lorem ipsum", 11)) {
			keep = fail(v, "c4_lorem_ipsum", 1, 0);
			break;
		}
		if (p->c4_javascript && memmem(low.p, ln, "javascript", 10)) {
			if (stats)
				stats[3]++;
			continue;
		}
		if (p->c4_curly_bracket && memchr(l, '{', ln)) {
			keep = fail(v, "c4_curly_bracket", 1, 0);
			break;
		}
		if (p->c4_policy) {
			bool pol = false;
			for (size_t k = 0; k < sizeof policy_phrases / sizeof *policy_phrases && !pol; k++)
				pol = memmem(low.p, ln, policy_phrases[k], strlen(policy_phrases[k])) != NULL;
			if (pol) {
				if (stats)
					stats[4]++;
				continue;
			}
		}
		if (p->c4_min_sentences > 0 && sentences < (size_t)p->c4_min_sentences)
			sentences += count_sentences(q, l, 0, ln);
		if (out->len)
			llm_buf_addc(out, '\n');
		llm_buf_add(out, l, ln);
	}
	llm_buf_release(&cit);
	llm_buf_release(&low);
	if (keep && p->c4_min_sentences > 0 && sentences < (size_t)p->c4_min_sentences)
		keep = fail(v, "c4_too_few_sentences", (double)sentences, p->c4_min_sentences);
	if (keep) {
		size_t a = 0, b = out->len;
		py_strip(out->p ? out->p : "", &a, &b);
		if (a > 0)
			memmove(out->p, out->p + a, b - a);
		if (out->p)
			llm_buf_truncate(out, b - a);
	}
	return keep;
}
