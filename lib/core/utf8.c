/*
 * utf8.c — UTF-8 decoding with maximal-subpart replacement, and class lookups.
 *
 * The decoder checks the second byte against the lead byte's exact range (Unicode Table 3-7),
 * which rejects overlongs, surrogates and values above U+10FFFF at the earliest byte, and gives
 * the maximal-subpart length for free: the subpart ends at the first byte that does not fit.
 */
#include "utf8.h"

#include <string.h>

#include "unicode_tables.h"

/* Valid range of the second byte for each lead byte 0xC2..0xF4. */
static inline int second_ok(unsigned char lead, unsigned char b)
{
	switch (lead) {
	case 0xE0: return b >= 0xA0 && b <= 0xBF;
	case 0xED: return b >= 0x80 && b <= 0x9F;
	case 0xF0: return b >= 0x90 && b <= 0xBF;
	case 0xF4: return b >= 0x80 && b <= 0x8F;
	default: return b >= 0x80 && b <= 0xBF;
	}
}

size_t llm_utf8_decode(const char *str, size_t n, uint32_t *cp)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned char c = s[0];
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	size_t need;
	uint32_t v;
	if (c >= 0xC2 && c <= 0xDF) {
		need = 2;
		v = c & 0x1F;
	} else if (c >= 0xE0 && c <= 0xEF) {
		need = 3;
		v = c & 0x0F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		need = 4;
		v = c & 0x07;
	} else {
		*cp = LLM_UTF8_REPLACEMENT;
		return 1;
	}
	for (size_t i = 1; i < need; i++) {
		if (i >= n || (i == 1 ? !second_ok(c, s[1]) : (s[i] & 0xC0) != 0x80)) {
			*cp = LLM_UTF8_REPLACEMENT;
			return i;
		}
		v = v << 6 | (s[i] & 0x3F);
	}
	*cp = v;
	return need;
}

/* The valid prefix of s[0..n) from i, a character boundary, a character at a time. */
static size_t valid_from(const unsigned char *s, size_t i, size_t n)
{
	while (i < n) {
		/* ASCII fast path: 8 bytes at a time. */
		while (i + 8 <= n) {
			uint64_t w;
			memcpy(&w, s + i, 8);
			if (w & 0x8080808080808080ULL)
				break;
			i += 8;
		}
		if (i >= n)
			break;
		unsigned char c = s[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		/* The common 3-byte (CJK) and 2-byte forms inline; the rest via the decoder. */
		if (((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) && n - i >= 3 &&
		    (s[i + 1] & 0xC0) == 0x80 && (s[i + 2] & 0xC0) == 0x80) {
			i += 3;
			continue;
		}
		if (c >= 0xC2 && c <= 0xDF && n - i >= 2 && (s[i + 1] & 0xC0) == 0x80) {
			i += 2;
			continue;
		}
		uint32_t cp;
		size_t k = llm_utf8_decode((const char *)s + i, n - i, &cp);
		if (cp == LLM_UTF8_REPLACEMENT && !(k == 3 && s[i] == 0xEF && s[i + 1] == 0xBF && s[i + 2] == 0xBD))
			return i;
		i += k;
	}
	return n;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <tmmintrin.h>

#define TOO_SHORT (1 << 0)   /* a lead byte or ASCII, then a continuation byte too few */
#define TOO_LONG (1 << 1)    /* ASCII, then a continuation byte */
#define OVERLONG_3 (1 << 2)  /* E0 80..9F */
#define TOO_LARGE (1 << 3)   /* F4 90..BF, F5..FF */
#define SURROGATE (1 << 4)   /* ED A0..BF */
#define OVERLONG_2 (1 << 5)  /* C0, C1 */
#define TOO_LARGE_1000 (1 << 6)
#define OVERLONG_4 (1 << 6)  /* F0 80..8F */
#define TWO_CONTS (-0x80)    /* bit 7, negative as _mm_setr_epi8 takes it (char): two
                              * continuation bytes, right only inside a 3- or 4-byte form */
#define CARRY (TOO_SHORT | TOO_LONG | TWO_CONTS)

/*
 * Where the SSSE3 block check stops: a character boundary b with s[0..b) valid UTF-8, at or
 * before the first error, no more than a block and three bytes before it (or the end), for
 * valid_from to finish. The check is Keiser and Lemire's ("Validating UTF-8 in less than one
 * instruction per byte", 2021): three table lookups by nibble classify every byte together
 * with the one before it, and the bytes two and three before tell where a continuation byte
 * must follow a continuation byte. Chinese text is three bytes a character with no ASCII to
 * skip, where the loop above takes twenty instructions a character.
 */
__attribute__((target("ssse3"))) static size_t valid_blocks(const unsigned char *s, size_t n)
{
	const __m128i high1 = _mm_setr_epi8(
		TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG,
		TWO_CONTS, TWO_CONTS, TWO_CONTS, TWO_CONTS, TOO_SHORT | OVERLONG_2, TOO_SHORT,
		TOO_SHORT | OVERLONG_3 | SURROGATE, TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4);
	const __m128i low1 = _mm_setr_epi8(
		CARRY | OVERLONG_3 | OVERLONG_2 | OVERLONG_4, CARRY | OVERLONG_2, CARRY, CARRY,
		CARRY | TOO_LARGE, CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000,
		CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000,
		CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000,
		CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000,
		CARRY | TOO_LARGE | TOO_LARGE_1000 | SURROGATE, CARRY | TOO_LARGE | TOO_LARGE_1000,
		CARRY | TOO_LARGE | TOO_LARGE_1000);
	const __m128i high2 = _mm_setr_epi8(
		TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT,
		TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE_1000 | OVERLONG_4,
		TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE,
		TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,
		TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE, TOO_SHORT, TOO_SHORT,
		TOO_SHORT, TOO_SHORT);
	/* the last bytes of a block that begin a form it does not finish */
	const __m128i last = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
	                                   (char)0xef, (char)0xdf, (char)0xbf);
	const __m128i nib = _mm_set1_epi8(0x0f), zero = _mm_setzero_si128();
	__m128i prev = zero;
	size_t b = 0;
	for (; b + 16 <= n; b += 16) {
		__m128i in = _mm_loadu_si128((const __m128i *)(s + b)), err;
		if (!_mm_movemask_epi8(in)) {
			err = _mm_subs_epu8(prev, last); /* ASCII: only an unfinished form before it */
		} else {
			__m128i p1 = _mm_alignr_epi8(in, prev, 15);
			__m128i sc = _mm_and_si128(
				_mm_and_si128(_mm_shuffle_epi8(high1, _mm_and_si128(_mm_srli_epi16(p1, 4), nib)),
				              _mm_shuffle_epi8(low1, _mm_and_si128(p1, nib))),
				_mm_shuffle_epi8(high2, _mm_and_si128(_mm_srli_epi16(in, 4), nib)));
			__m128i third = _mm_subs_epu8(_mm_alignr_epi8(in, prev, 14), _mm_set1_epi8(0xe0 - 0x80));
			__m128i fourth = _mm_subs_epu8(_mm_alignr_epi8(in, prev, 13), _mm_set1_epi8(0xf0 - 0x80));
			__m128i must = _mm_and_si128(_mm_or_si128(third, fourth), _mm_set1_epi8((char)0x80));
			err = _mm_xor_si128(must, sc);
		}
		if (_mm_movemask_epi8(_mm_cmpeq_epi8(err, zero)) != 0xffff)
			break;
		prev = in;
	}
	/* Back to the first byte of the last character that starts before b: over at most three
	 * continuation bytes, to the lead byte (or ASCII) they follow. */
	size_t j = b;
	while (j > 0 && b - j < 3 && (s[j - 1] & 0xC0) == 0x80)
		j--;
	return j > 0 ? j - 1 : 0;
}
#endif

size_t llm_utf8_valid_prefix(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	if (n >= 16 && __builtin_cpu_supports("ssse3"))
		return valid_from(s, valid_blocks(s, n), n);
#endif
	return valid_from(s, 0, n);
}

size_t llm_utf8_encode(uint32_t cp, char out[4])
{
	unsigned char *o = (unsigned char *)out;
	if (cp < 0x80) {
		o[0] = cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = 0xC0 | cp >> 6;
		o[1] = 0x80 | (cp & 0x3F);
		return 2;
	}
	if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		cp = LLM_UTF8_REPLACEMENT;
	if (cp < 0x10000) {
		o[0] = 0xE0 | cp >> 12;
		o[1] = 0x80 | ((cp >> 6) & 0x3F);
		o[2] = 0x80 | (cp & 0x3F);
		return 3;
	}
	o[0] = 0xF0 | cp >> 18;
	o[1] = 0x80 | ((cp >> 12) & 0x3F);
	o[2] = 0x80 | ((cp >> 6) & 0x3F);
	o[3] = 0x80 | (cp & 0x3F);
	return 4;
}

size_t llm_utf8_repair(const char *s, size_t n, llm_buf *out)
{
	size_t replaced = 0;
	llm_buf_grow(out, n);
	while (n) {
		size_t ok = llm_utf8_valid_prefix(s, n);
		llm_buf_add(out, s, ok);
		s += ok;
		n -= ok;
		if (!n)
			break;
		uint32_t cp;
		size_t k = llm_utf8_decode(s, n, &cp);
		llm_buf_add(out, "\xEF\xBF\xBD", 3);
		replaced++;
		s += k;
		n -= k;
	}
	return replaced;
}

size_t llm_utf8_count(const char *s, size_t n)
{
	size_t count = 0;
	for (size_t i = 0; i < n;) {
		/* eight ASCII bytes at a time: most text is mostly ASCII */
		uint64_t x;
		if (n - i >= 8 && (memcpy(&x, s + i, 8), !(x & 0x8080808080808080ULL))) {
			i += 8;
			count += 8;
			continue;
		}
		if ((unsigned char)s[i] < 0x80) {
			i++;
		} else {
			uint32_t cp;
			i += llm_utf8_decode(s + i, n - i, &cp);
		}
		count++;
	}
	return count;
}

unsigned llm_uc_class(uint32_t cp)
{
	if (cp > 0x10FFFF)
		return 0;
	return uc_stage2[uc_stage1[cp >> 8]][cp & 0xFF];
}

uint32_t llm_uc_tolower(uint32_t cp)
{
	if (cp < 0x80)
		return cp >= 'A' && cp <= 'Z' ? cp + 32 : cp;
	size_t lo = 0, hi = sizeof uc_lower / sizeof uc_lower[0];
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (uc_lower[mid][0] < cp)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < sizeof uc_lower / sizeof uc_lower[0] && uc_lower[lo][0] == cp)
		return uc_lower[lo][1];
	return cp;
}

uint32_t llm_uc_fold_width(uint32_t cp)
{
	if (cp >= 0xFF01 && cp <= 0xFF5E)
		return cp - 0xFF01 + 0x21;
	if (cp == 0x3000)
		return 0x20;
	return cp;
}
