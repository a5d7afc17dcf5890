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

size_t llm_utf8_valid_prefix(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;
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
		size_t k = llm_utf8_decode(str + i, n - i, &cp);
		if (cp == LLM_UTF8_REPLACEMENT && !(k == 3 && s[i] == 0xEF && s[i + 1] == 0xBF && s[i + 2] == 0xBD))
			return i;
		i += k;
	}
	return n;
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
