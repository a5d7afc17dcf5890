/*
 * charset.c — decoding web pages and text files to UTF-8 (see charset.h).
 *
 * Labels are the WHATWG Encoding Standard's (https://encoding.spec.whatwg.org/#names-and-labels),
 * mapped to the encoding a browser decodes with and to its glibc iconv name. Three families
 * the standard maps to its "replacement" decoder for security reasons in browsers
 * (ISO-2022-KR, ISO-2022-CN, HZ-GB-2312) are decoded here when iconv can: training data
 * wants the text, and no script runs on it.
 */
#include "charset.h"

#include <ctype.h>
#include <errno.h>
#include <iconv.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <uchardet/uchardet.h>

#include "core/err.h"
#include "core/utf8.h"

/* The encodings: canonical (recorded) name and iconv name. */
enum {
	E_UTF8, E_IBM866, E_ISO2, E_ISO3, E_ISO4, E_ISO5, E_ISO6, E_ISO7, E_ISO8, E_ISO8I, E_ISO10,
	E_ISO13, E_ISO14, E_ISO15, E_ISO16, E_KOI8R, E_KOI8U, E_MAC, E_WIN874, E_WIN1250, E_WIN1251,
	E_WIN1252, E_WIN1253, E_WIN1254, E_WIN1255, E_WIN1256, E_WIN1257, E_WIN1258, E_MACCYR,
	E_GB18030, E_BIG5, E_EUCJP, E_ISO2022JP, E_SJIS, E_EUCKR, E_UTF16BE, E_UTF16LE, E_ISO2022KR,
	E_ISO2022CN, E_HZ, E_COUNT
};

static const struct {
	const char *name, *iconv;
} enc[E_COUNT] = {
	[E_UTF8] = { "utf-8", "UTF-8" },
	[E_IBM866] = { "ibm866", "IBM866" },
	[E_ISO2] = { "iso-8859-2", "ISO-8859-2" },
	[E_ISO3] = { "iso-8859-3", "ISO-8859-3" },
	[E_ISO4] = { "iso-8859-4", "ISO-8859-4" },
	[E_ISO5] = { "iso-8859-5", "ISO-8859-5" },
	[E_ISO6] = { "iso-8859-6", "ISO-8859-6" },
	[E_ISO7] = { "iso-8859-7", "ISO-8859-7" },
	[E_ISO8] = { "iso-8859-8", "ISO-8859-8" },
	[E_ISO8I] = { "iso-8859-8-i", "ISO-8859-8" },
	[E_ISO10] = { "iso-8859-10", "ISO-8859-10" },
	[E_ISO13] = { "iso-8859-13", "ISO-8859-13" },
	[E_ISO14] = { "iso-8859-14", "ISO-8859-14" },
	[E_ISO15] = { "iso-8859-15", "ISO-8859-15" },
	[E_ISO16] = { "iso-8859-16", "ISO-8859-16" },
	[E_KOI8R] = { "koi8-r", "KOI8-R" },
	[E_KOI8U] = { "koi8-u", "KOI8-U" },
	[E_MAC] = { "macintosh", "MACINTOSH" },
	[E_WIN874] = { "windows-874", "WINDOWS-874" },
	[E_WIN1250] = { "windows-1250", "WINDOWS-1250" },
	[E_WIN1251] = { "windows-1251", "WINDOWS-1251" },
	[E_WIN1252] = { "windows-1252", "WINDOWS-1252" },
	[E_WIN1253] = { "windows-1253", "WINDOWS-1253" },
	[E_WIN1254] = { "windows-1254", "WINDOWS-1254" },
	[E_WIN1255] = { "windows-1255", "WINDOWS-1255" },
	[E_WIN1256] = { "windows-1256", "WINDOWS-1256" },
	[E_WIN1257] = { "windows-1257", "WINDOWS-1257" },
	[E_WIN1258] = { "windows-1258", "WINDOWS-1258" },
	[E_MACCYR] = { "x-mac-cyrillic", "MAC-CYRILLIC" },
	[E_GB18030] = { "gb18030", "GB18030" },
	[E_BIG5] = { "big5", "BIG5-HKSCS" },
	[E_EUCJP] = { "euc-jp", "EUC-JP" },
	[E_ISO2022JP] = { "iso-2022-jp", "ISO-2022-JP" },
	[E_SJIS] = { "shift_jis", "WINDOWS-31J" },
	[E_EUCKR] = { "euc-kr", "CP949" },
	[E_UTF16BE] = { "utf-16be", "UTF-16BE" },
	[E_UTF16LE] = { "utf-16le", "UTF-16LE" },
	[E_ISO2022KR] = { "iso-2022-kr", "ISO-2022-KR" },
	[E_ISO2022CN] = { "iso-2022-cn", "ISO-2022-CN-EXT" },
	[E_HZ] = { "hz-gb-2312", "HZ" },
};

/* Every WHATWG label, sorted (strcmp order) for binary search. */
static const struct {
	const char *label;
	unsigned char e;
} labels[] = {
	{ "866", E_IBM866 }, { "ansi_x3.4-1968", E_WIN1252 }, { "arabic", E_ISO6 },
	{ "ascii", E_WIN1252 }, { "asmo-708", E_ISO6 }, { "big5", E_BIG5 }, { "big5-hkscs", E_BIG5 },
	{ "chinese", E_GB18030 }, { "cn-big5", E_BIG5 }, { "cp1250", E_WIN1250 },
	{ "cp1251", E_WIN1251 }, { "cp1252", E_WIN1252 }, { "cp1253", E_WIN1253 },
	{ "cp1254", E_WIN1254 }, { "cp1255", E_WIN1255 }, { "cp1256", E_WIN1256 },
	{ "cp1257", E_WIN1257 }, { "cp1258", E_WIN1258 }, { "cp819", E_WIN1252 },
	{ "cp866", E_IBM866 }, { "csbig5", E_BIG5 }, { "cseuckr", E_EUCKR },
	{ "cseucpkdfmtjapanese", E_EUCJP }, { "csgb2312", E_GB18030 }, { "csibm866", E_IBM866 },
	{ "csiso2022jp", E_ISO2022JP }, { "csiso2022kr", E_ISO2022KR }, { "csiso58gb231280", E_GB18030 },
	{ "csiso88596e", E_ISO6 }, { "csiso88596i", E_ISO6 }, { "csiso88598e", E_ISO8 },
	{ "csiso88598i", E_ISO8I }, { "csisolatin1", E_WIN1252 }, { "csisolatin2", E_ISO2 },
	{ "csisolatin3", E_ISO3 }, { "csisolatin4", E_ISO4 }, { "csisolatin5", E_WIN1254 },
	{ "csisolatin6", E_ISO10 }, { "csisolatin9", E_ISO15 }, { "csisolatinarabic", E_ISO6 },
	{ "csisolatincyrillic", E_ISO5 }, { "csisolatingreek", E_ISO7 }, { "csisolatinhebrew", E_ISO8 },
	{ "cskoi8r", E_KOI8R }, { "csksc56011987", E_EUCKR }, { "csmacintosh", E_MAC },
	{ "csshiftjis", E_SJIS }, { "csunicode", E_UTF16LE }, { "cyrillic", E_ISO5 },
	{ "dos-874", E_WIN874 }, { "ecma-114", E_ISO6 }, { "ecma-118", E_ISO7 },
	{ "elot_928", E_ISO7 }, { "euc-jp", E_EUCJP }, { "euc-kr", E_EUCKR }, { "gb18030", E_GB18030 },
	{ "gb2312", E_GB18030 }, { "gb_2312", E_GB18030 }, { "gb_2312-80", E_GB18030 },
	{ "gbk", E_GB18030 }, { "greek", E_ISO7 }, { "greek8", E_ISO7 }, { "hebrew", E_ISO8 },
	{ "hz-gb-2312", E_HZ }, { "ibm819", E_WIN1252 }, { "ibm866", E_IBM866 },
	{ "iso-10646-ucs-2", E_UTF16LE }, { "iso-2022-cn", E_ISO2022CN }, { "iso-2022-cn-ext", E_ISO2022CN },
	{ "iso-2022-jp", E_ISO2022JP }, { "iso-2022-kr", E_ISO2022KR }, { "iso-8859-1", E_WIN1252 },
	{ "iso-8859-10", E_ISO10 }, { "iso-8859-11", E_WIN874 }, { "iso-8859-13", E_ISO13 },
	{ "iso-8859-14", E_ISO14 }, { "iso-8859-15", E_ISO15 }, { "iso-8859-16", E_ISO16 },
	{ "iso-8859-2", E_ISO2 }, { "iso-8859-3", E_ISO3 }, { "iso-8859-4", E_ISO4 },
	{ "iso-8859-5", E_ISO5 }, { "iso-8859-6", E_ISO6 }, { "iso-8859-6-e", E_ISO6 },
	{ "iso-8859-6-i", E_ISO6 }, { "iso-8859-7", E_ISO7 }, { "iso-8859-8", E_ISO8 },
	{ "iso-8859-8-e", E_ISO8 }, { "iso-8859-8-i", E_ISO8I }, { "iso-8859-9", E_WIN1254 },
	{ "iso-ir-100", E_WIN1252 }, { "iso-ir-101", E_ISO2 }, { "iso-ir-109", E_ISO3 },
	{ "iso-ir-110", E_ISO4 }, { "iso-ir-126", E_ISO7 }, { "iso-ir-127", E_ISO6 },
	{ "iso-ir-138", E_ISO8 }, { "iso-ir-144", E_ISO5 }, { "iso-ir-148", E_WIN1254 },
	{ "iso-ir-149", E_EUCKR }, { "iso-ir-157", E_ISO10 }, { "iso-ir-58", E_GB18030 },
	{ "iso8859-1", E_WIN1252 }, { "iso8859-10", E_ISO10 }, { "iso8859-11", E_WIN874 },
	{ "iso8859-13", E_ISO13 }, { "iso8859-14", E_ISO14 }, { "iso8859-15", E_ISO15 },
	{ "iso8859-2", E_ISO2 }, { "iso8859-3", E_ISO3 }, { "iso8859-4", E_ISO4 },
	{ "iso8859-5", E_ISO5 }, { "iso8859-6", E_ISO6 }, { "iso8859-7", E_ISO7 },
	{ "iso8859-8", E_ISO8 }, { "iso8859-9", E_WIN1254 }, { "iso88591", E_WIN1252 },
	{ "iso885910", E_ISO10 }, { "iso885911", E_WIN874 }, { "iso885913", E_ISO13 },
	{ "iso885914", E_ISO14 }, { "iso885915", E_ISO15 }, { "iso88592", E_ISO2 },
	{ "iso88593", E_ISO3 }, { "iso88594", E_ISO4 }, { "iso88595", E_ISO5 }, { "iso88596", E_ISO6 },
	{ "iso88597", E_ISO7 }, { "iso88598", E_ISO8 }, { "iso88599", E_WIN1254 },
	{ "iso_8859-1", E_WIN1252 }, { "iso_8859-15", E_ISO15 }, { "iso_8859-1:1987", E_WIN1252 },
	{ "iso_8859-2", E_ISO2 }, { "iso_8859-2:1987", E_ISO2 }, { "iso_8859-3", E_ISO3 },
	{ "iso_8859-3:1988", E_ISO3 }, { "iso_8859-4", E_ISO4 }, { "iso_8859-4:1988", E_ISO4 },
	{ "iso_8859-5", E_ISO5 }, { "iso_8859-5:1988", E_ISO5 }, { "iso_8859-6", E_ISO6 },
	{ "iso_8859-6:1987", E_ISO6 }, { "iso_8859-7", E_ISO7 }, { "iso_8859-7:1987", E_ISO7 },
	{ "iso_8859-8", E_ISO8 }, { "iso_8859-8:1988", E_ISO8 }, { "iso_8859-9", E_WIN1254 },
	{ "iso_8859-9:1989", E_WIN1254 }, { "koi", E_KOI8R }, { "koi8", E_KOI8R },
	{ "koi8-r", E_KOI8R }, { "koi8-ru", E_KOI8U }, { "koi8-u", E_KOI8U }, { "koi8_r", E_KOI8R },
	{ "korean", E_EUCKR }, { "ks_c_5601-1987", E_EUCKR }, { "ks_c_5601-1989", E_EUCKR },
	{ "ksc5601", E_EUCKR }, { "ksc_5601", E_EUCKR }, { "l1", E_WIN1252 }, { "l2", E_ISO2 },
	{ "l3", E_ISO3 }, { "l4", E_ISO4 }, { "l5", E_WIN1254 }, { "l6", E_ISO10 }, { "l9", E_ISO15 },
	{ "latin1", E_WIN1252 }, { "latin2", E_ISO2 }, { "latin3", E_ISO3 }, { "latin4", E_ISO4 },
	{ "latin5", E_WIN1254 }, { "latin6", E_ISO10 }, { "logical", E_ISO8I }, { "mac", E_MAC },
	{ "macintosh", E_MAC }, { "ms932", E_SJIS }, { "ms_kanji", E_SJIS }, { "shift-jis", E_SJIS },
	{ "shift_jis", E_SJIS }, { "sjis", E_SJIS }, { "sun_eu_greek", E_ISO7 },
	{ "tis-620", E_WIN874 }, { "ucs-2", E_UTF16LE }, { "unicode", E_UTF16LE },
	{ "unicode-1-1-utf-8", E_UTF8 }, { "unicode11utf8", E_UTF8 }, { "unicode20utf8", E_UTF8 },
	{ "unicodefeff", E_UTF16LE }, { "unicodefffe", E_UTF16BE }, { "us-ascii", E_WIN1252 },
	{ "utf-16", E_UTF16LE }, { "utf-16be", E_UTF16BE }, { "utf-16le", E_UTF16LE },
	{ "utf-8", E_UTF8 }, { "utf8", E_UTF8 }, { "visual", E_ISO8 }, { "windows-1250", E_WIN1250 },
	{ "windows-1251", E_WIN1251 }, { "windows-1252", E_WIN1252 }, { "windows-1253", E_WIN1253 },
	{ "windows-1254", E_WIN1254 }, { "windows-1255", E_WIN1255 }, { "windows-1256", E_WIN1256 },
	{ "windows-1257", E_WIN1257 }, { "windows-1258", E_WIN1258 }, { "windows-31j", E_SJIS },
	{ "windows-874", E_WIN874 }, { "windows-949", E_EUCKR }, { "x-cp1250", E_WIN1250 },
	{ "x-cp1251", E_WIN1251 }, { "x-cp1252", E_WIN1252 }, { "x-cp1253", E_WIN1253 },
	{ "x-cp1254", E_WIN1254 }, { "x-cp1255", E_WIN1255 }, { "x-cp1256", E_WIN1256 },
	{ "x-cp1257", E_WIN1257 }, { "x-cp1258", E_WIN1258 }, { "x-euc-jp", E_EUCJP },
	{ "x-gbk", E_GB18030 }, { "x-mac-cyrillic", E_MACCYR }, { "x-mac-roman", E_MAC },
	{ "x-mac-ukrainian", E_MACCYR }, { "x-sjis", E_SJIS }, { "x-unicode20utf8", E_UTF8 },
	{ "x-x-big5", E_BIG5 },
};

#define NLABELS (sizeof labels / sizeof labels[0])

/* Encoding of a label (ASCII white space trimmed, case folded), or -1. */
static int label_enc(const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	char key[32];
	if (n == 0 || n >= sizeof key)
		return -1;
	for (size_t i = 0; i < n; i++)
		key[i] = (char)tolower((unsigned char)s[i]);
	key[n] = 0;
	size_t lo = 0, hi = NLABELS;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(labels[mid].label, key);
		if (c == 0)
			return labels[mid].e;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

const char *llm_charset_canonical(const char *label, size_t n)
{
	int e = label_enc(label, n);
	return e < 0 ? NULL : enc[e].name;
}

static const char *const source_names[] = { "forced", "bom", "http", "meta", "detected", "default" };

const char *llm_charset_source_name(int source)
{
	return source >= 0 && source <= LLM_CHARSET_DEFAULT ? source_names[source] : "?";
}

struct llm_charset {
	uchardet_t ud;
	iconv_t cd;            /* open converter, (iconv_t)-1 if none */
	char cd_name[40];      /* its iconv name */
	char other[40];        /* canonical name of an encoding outside the table */
};

llm_charset *llm_charset_new(void)
{
	llm_charset *c = llm_calloc(1, sizeof *c);
	c->cd = (iconv_t)-1;
	return c;
}

void llm_charset_free(llm_charset *c)
{
	if (!c)
		return;
	if (c->ud)
		uchardet_delete(c->ud);
	if (c->cd != (iconv_t)-1)
		iconv_close(c->cd);
	free(c);
}

/* A converter from iconv name to UTF-8, reused while the name stays the same. */
static bool open_iconv(llm_charset *c, const char *name)
{
	if (c->cd != (iconv_t)-1 && strcmp(c->cd_name, name) == 0) {
		iconv(c->cd, NULL, NULL, NULL, NULL);
		return true;
	}
	if (c->cd != (iconv_t)-1)
		iconv_close(c->cd);
	c->cd = iconv_open("UTF-8", name);
	if (c->cd == (iconv_t)-1)
		return false;
	snprintf(c->cd_name, sizeof c->cd_name, "%s", name);
	return true;
}

/* Convert with the open converter; each undecodable sequence becomes U+FFFD. Returns the
 * number of replacements. */
static size_t convert(llm_charset *c, const char *s, size_t n, llm_buf *out)
{
	size_t replaced = 0;
	char *in = (char *)s;
	size_t left = n;
	while (left) {
		llm_buf_grow(out, left * 2 + 16);
		char *o = out->p + out->len;
		size_t room = out->cap - out->len - 1;
		size_t room0 = room;
		size_t k = iconv(c->cd, &in, &left, &o, &room);
		out->len += room0 - room;
		out->p[out->len] = 0;
		if (k != (size_t)-1)
			break;
		if (errno == E2BIG)
			continue;
		/* EILSEQ or EINVAL (an incomplete sequence at the end): one byte becomes U+FFFD */
		llm_buf_add(out, "\xEF\xBF\xBD", 3);
		replaced++;
		in++;
		left--;
		iconv(c->cd, NULL, NULL, NULL, NULL);
	}
	/* flush a stateful encoding's pending output */
	llm_buf_grow(out, 16);
	char *o = out->p + out->len;
	size_t room = out->cap - out->len - 1, room0 = room;
	iconv(c->cd, NULL, NULL, &o, &room);
	out->len += room0 - room;
	out->p[out->len] = 0;
	return replaced;
}

/*
 * How the bytes read as UTF-8: multibyte sequences that are valid, and ill-formed ones.
 * Legacy double-byte text forms some valid pairs by accident (a GBK lead byte in C2..DF
 * followed by a trail byte in 80..BF), but far fewer than the ill-formed ones it also forms,
 * while UTF-8 with a few bad bytes (a pasted Latin-1 quote) has far more valid ones.
 */
static void utf8_census(const char *s, size_t n, size_t *valid, size_t *bad)
{
	*valid = *bad = 0;
	size_t i = llm_utf8_valid_prefix(s, n);
	if (i == n) {
		/* the common case, in one fast pass: is there anything beyond ASCII at all */
		for (size_t k = 0; k < n; k++)
			if ((unsigned char)s[k] >= 0x80) {
				*valid = 1;
				break;
			}
		return;
	}
	for (size_t k = 0; k < i; k++)
		*valid += (unsigned char)s[k] >= 0xC0; /* lead bytes of the valid prefix */
	while (i < n) {
		if ((unsigned char)s[i] < 0x80) {
			i++;
			continue;
		}
		uint32_t cp;
		size_t k = llm_utf8_decode(s + i, n - i, &cp);
		if (cp == LLM_UTF8_REPLACEMENT && !(k == 3 && memcmp(s + i, "\xEF\xBF\xBD", 3) == 0))
			++*bad;
		else
			++*valid;
		i += k;
	}
}

static bool mostly_utf8(size_t valid, size_t bad)
{
	return bad == 0 || (valid >= 8 && valid >= 4 * bad);
}

/* ISO-2022-JP/KR/CN are 7-bit: they read as ASCII, and only their escapes tell. */
static bool has_iso2022_escape(const char *s, size_t n)
{
	for (const char *p = s, *e = s + n; (p = memchr(p, 0x1B, e - p)) && e - p >= 3; p++)
		if (p[1] == '$' || (p[1] == '(' && (p[2] == 'J' || p[2] == 'I')))
			return true;
	return false;
}

/*
 * Corrections where the bytes prove a finer answer than a label or the detector gave.
 * C1 controls (0x80..0x9F) never occur in text, so an ISO-8859 encoding that would decode
 * some is the Windows code page built on it: the WHATWG standard already treats iso-8859-1
 * as windows-1252 for this reason, and the same holds for the others. KOI8-U differs from
 * KOI8-R only in eight box-drawing positions that hold the Ukrainian letters; uchardet knows
 * KOI8-R only, and running text never holds box-drawing characters.
 */
static int refine(int e, const char *s, size_t n)
{
	static const struct {
		unsigned char iso, win;
	} c1[] = { { E_ISO2, E_WIN1250 }, { E_ISO4, E_WIN1257 }, { E_ISO5, E_WIN1251 },
		   { E_ISO6, E_WIN1256 }, { E_ISO7, E_WIN1253 }, { E_ISO8, E_WIN1255 },
		   { E_ISO8I, E_WIN1255 }, { E_ISO13, E_WIN1257 }, { E_ISO15, E_WIN1252 } };
	for (size_t i = 0; i < sizeof c1 / sizeof c1[0]; i++) {
		if (e != c1[i].iso)
			continue;
		for (size_t k = 0; k < n; k++)
			if ((unsigned char)s[k] >= 0x80 && (unsigned char)s[k] <= 0x9F)
				return c1[i].win;
		return e;
	}
	if (e == E_KOI8R) {
		static const char ukr[] = "\xA4\xA6\xA7\xAD\xB4\xB6\xB7\xBD";
		for (size_t k = 0; k < n; k++)
			if ((unsigned char)s[k] >= 0xA4 && memchr(ukr, s[k], 8))
				return E_KOI8U;
	}
	return e;
}

/* ------------------------------------------------------------------------------------------ */
/* <meta> in the head: the WHATWG prescan (HTML §13.2.3.2), run to the end of the head. */

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

/* One attribute at s[*i]: name and value (unquoted values end at space or '>'). */
static bool get_attr(const char *s, size_t n, size_t *i, const char **name, size_t *nl,
                     const char **val, size_t *vl)
{
	size_t k = *i;
	while (k < n && (is_space(s[k]) || s[k] == '/'))
		k++;
	if (k >= n || s[k] == '>') {
		*i = k;
		return false;
	}
	size_t a = k;
	while (k < n && !is_space(s[k]) && s[k] != '=' && s[k] != '>' && !(s[k] == '/' && k > a))
		k++;
	*name = s + a;
	*nl = k - a;
	while (k < n && is_space(s[k]))
		k++;
	*val = s + k;
	*vl = 0;
	if (k < n && s[k] == '=') {
		k++;
		while (k < n && is_space(s[k]))
			k++;
		if (k < n && (s[k] == '"' || s[k] == '\'')) {
			char q = s[k++];
			size_t v = k;
			while (k < n && s[k] != q)
				k++;
			*val = s + v;
			*vl = k - v;
			if (k < n)
				k++;
		} else {
			size_t v = k;
			while (k < n && !is_space(s[k]) && s[k] != '>')
				k++;
			*val = s + v;
			*vl = k - v;
		}
	}
	*i = k;
	return true;
}

static bool name_is(const char *s, size_t n, const char *want)
{
	return strlen(want) == n && strncasecmp(s, want, n) == 0;
}

/* The charset in a Content-Type-like value "text/html; charset=gbk" (WHATWG "extracting a
 * character encoding from a meta element"). */
static const char *content_charset(const char *v, size_t n, size_t *len)
{
	for (size_t i = 0; i + 7 <= n; i++) {
		if (strncasecmp(v + i, "charset", 7) != 0)
			continue;
		size_t k = i + 7;
		while (k < n && is_space(v[k]))
			k++;
		if (k >= n || v[k] != '=')
			continue;
		k++;
		while (k < n && is_space(v[k]))
			k++;
		char q = k < n && (v[k] == '"' || v[k] == '\'') ? v[k++] : 0;
		size_t a = k;
		while (k < n && (q ? v[k] != q : (!is_space(v[k]) && v[k] != ';')))
			k++;
		if (k > a) {
			*len = k - a;
			return v + a;
		}
	}
	return NULL;
}

const char *llm_charset_meta(const char *s, size_t n, size_t *len)
{
	size_t i = 0;
	while (i < n) {
		const char *lt = memchr(s + i, '<', n - i);
		if (!lt)
			break;
		i = (size_t)(lt - s);
		if (n - i >= 4 && memcmp(s + i, "<!--", 4) == 0) {
			const char *e = memmem(s + i + 4, n - i - 4, "-->", 3);
			if (!e)
				break;
			i = (size_t)(e - s) + 3;
			continue;
		}
		bool end = i + 1 < n && s[i + 1] == '/';
		size_t t = i + 1 + end;
		if (t < n && isalpha((unsigned char)s[t])) {
			size_t a = t;
			while (t < n && isalnum((unsigned char)s[t]))
				t++;
			const char *tag = s + a;
			size_t tl = t - a;
			/* the head is over: what follows is content, where a <meta> means nothing */
			if (name_is(tag, tl, "body") || (end && name_is(tag, tl, "head")))
				break;
			if (!end && name_is(tag, tl, "meta") && t < n && (is_space(s[t]) || s[t] == '/')) {
				const char *charset = NULL, *content = NULL;
				size_t cl = 0, ctl = 0;
				bool http_equiv = false;
				const char *an, *av;
				size_t anl, avl;
				while (get_attr(s, n, &t, &an, &anl, &av, &avl)) {
					if (name_is(an, anl, "charset") && !charset) {
						charset = av;
						cl = avl;
					} else if (name_is(an, anl, "http-equiv")) {
						http_equiv = name_is(av, avl, "content-type");
					} else if (name_is(an, anl, "content") && !content) {
						content = av;
						ctl = avl;
					}
				}
				if (charset && cl) {
					*len = cl;
					return charset;
				}
				if (http_equiv && content) {
					const char *c = content_charset(content, ctl, len);
					if (c)
						return c;
				}
				i = t;
				continue;
			}
			/* any other tag: skip its attributes (a '>' inside quotes does not end it) */
			const char *an, *av;
			size_t anl, avl;
			while (get_attr(s, n, &t, &an, &anl, &av, &avl))
				;
			i = t + 1;
			continue;
		}
		/* <!doctype>, <?xml?>, </ without a name: up to the next '>' */
		const char *gt = memchr(s + i + 1, '>', n - i - 1);
		if (!gt)
			break;
		i = (size_t)(gt - s) + 1;
	}
	return NULL;
}

/* ------------------------------------------------------------------------------------------ */

/* The encoding uchardet finds in the first 64 KiB: a table index, or -2 with c->other set to
 * a name iconv knows, or -1 when it has no answer. */
static int detect(llm_charset *c, const char *s, size_t n)
{
	if (!c->ud && !(c->ud = uchardet_new()))
		return -1;
	uchardet_reset(c->ud);
	if (uchardet_handle_data(c->ud, s, n < (1u << 16) ? n : (1u << 16)) != 0)
		return -1;
	uchardet_data_end(c->ud);
	const char *name = uchardet_get_charset(c->ud);
	if (!name || !*name)
		return -1;
	int e = label_enc(name, strlen(name));
	if (e >= 0)
		return e;
	if (strcasecmp(name, "UHC") == 0)
		return E_EUCKR; /* the WHATWG euc-kr decoder is UHC (windows-949) */
	/* names outside the WHATWG table (IBM852, VISCII, EUC-TW, MAC-CENTRALEUROPE, ...) */
	size_t k = 0;
	for (; name[k] && k + 1 < sizeof c->other; k++)
		c->other[k] = (char)tolower((unsigned char)name[k]);
	c->other[k] = 0;
	return -2;
}

/* The decision, as a table index (or -1 with *other set) and the BOM bytes to skip. */
static int choose(llm_charset *c, const char *s, size_t n, const char *forced, const char *http,
                  size_t http_len, bool html, llm_charset_result *r, const char **other_out,
                  size_t *skip)
{
	const char *s0 = s;
	r->replaced = 0;
	int e = -1;
	const char *other = NULL; /* an iconv name outside the table */
	/* 1. forced */
	if (forced) {
		r->source = LLM_CHARSET_FORCED;
		e = label_enc(forced, strlen(forced));
		if (e < 0) {
			size_t k = 0;
			for (; forced[k] && k + 1 < sizeof c->other; k++)
				c->other[k] = (char)tolower((unsigned char)forced[k]);
			c->other[k] = 0;
			other = c->other;
		}
		/* the BOM of the forced encoding is not text */
		if (e == E_UTF8 && n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
			s += 3, n -= 3;
		else if ((e == E_UTF16LE && n >= 2 && memcmp(s, "\xFF\xFE", 2) == 0) ||
		         (e == E_UTF16BE && n >= 2 && memcmp(s, "\xFE\xFF", 2) == 0))
			s += 2, n -= 2;
	}
	/* 2. byte order mark */
	if (!forced) {
		if (n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
			e = E_UTF8, s += 3, n -= 3;
		else if (n >= 2 && memcmp(s, "\xFF\xFE", 2) == 0)
			e = E_UTF16LE, s += 2, n -= 2;
		else if (n >= 2 && memcmp(s, "\xFE\xFF", 2) == 0)
			e = E_UTF16BE, s += 2, n -= 2;
		if (e >= 0)
			r->source = LLM_CHARSET_BOM;
	}
	size_t valid = 0, bad = 0;
	bool census = false;
	/* 3, 4. labels: HTTP, then <meta>; a meta naming UTF-16 means UTF-8 (WHATWG) */
	if (e < 0 && !other) {
		const char *label = NULL;
		size_t ll = 0;
		int src = LLM_CHARSET_HTTP;
		if (http && http_len && label_enc(http, http_len) >= 0) {
			label = http;
			ll = http_len;
		} else if (html && (label = llm_charset_meta(s, n, &ll)) && label_enc(label, ll) >= 0) {
			src = LLM_CHARSET_META;
		} else {
			label = NULL;
		}
		if (label) {
			int le = label_enc(label, ll);
			if (src == LLM_CHARSET_META && (le == E_UTF16LE || le == E_UTF16BE))
				le = E_UTF8;
			utf8_census(s, n, &valid, &bad);
			census = true;
			if (le == E_UTF8 || le == E_UTF16LE || le == E_UTF16BE) {
				/* a UTF-8 label is believed unless the bytes deny it */
				if (le != E_UTF8 || mostly_utf8(valid, bad))
					e = le, r->source = src;
			} else if (valid > 0 && bad == 0) {
				e = E_UTF8; /* legacy label, UTF-8 bytes: the label is stale */
				r->source = LLM_CHARSET_DETECTED;
			} else {
				e = le;
				r->source = src;
			}
		}
	}
	/* 5. detection */
	if (e < 0 && !other) {
		if (!census)
			utf8_census(s, n, &valid, &bad);
		r->source = LLM_CHARSET_DETECTED;
		if (mostly_utf8(valid, bad) && !(valid == 0 && has_iso2022_escape(s, n))) {
			e = E_UTF8;
		} else {
			e = detect(c, s, n);
			if (e == -2)
				other = c->other;
			else if (e == E_UTF8 || e == E_UTF16LE || e == E_UTF16BE || e < 0)
				e = -1; /* uchardet only guesses these from BOMs we have already seen */
			if (e < 0 && !other) {
				e = E_WIN1252;
				r->source = LLM_CHARSET_DEFAULT;
			}
		}
	}
	if (e >= 0 && r->source != LLM_CHARSET_FORCED)
		e = refine(e, s, n);
	*other_out = e >= 0 ? NULL : other;
	*skip = (size_t)(s - s0);
	r->encoding = e >= 0 ? enc[e].name : other;
	return e;
}

/* Convert s[0..n) as encoding e (or the iconv name other) into out. */
static void decode_as(llm_charset *c, int e, const char *other, const char *s, size_t n,
                      llm_buf *out, llm_charset_result *r)
{
	if (e != E_UTF8 && !open_iconv(c, e >= 0 ? enc[e].iconv : other)) {
		/* not in this C library: repair as UTF-8 rather than lose the record */
		e = E_UTF8;
		r->encoding = enc[E_UTF8].name;
		r->source = LLM_CHARSET_DEFAULT;
	}
	if (!out->p)
		llm_buf_grow(out, n);
	r->replaced = e == E_UTF8 ? llm_utf8_repair(s, n, out) : convert(c, s, n, out);
}

void llm_charset_decode(llm_charset *c, const char *s, size_t n, const char *forced,
                        const char *http, size_t http_len, bool html, llm_buf *out,
                        llm_charset_result *r)
{
	const char *other;
	size_t skip;
	int e = choose(c, s, n, forced, http, http_len, html, r, &other, &skip);
	decode_as(c, e, other, s + skip, n - skip, out, r);
}

void llm_charset_choose(llm_charset *c, const char *s, size_t n, const char *http,
                        size_t http_len, bool html, llm_charset_result *r)
{
	const char *other;
	size_t skip;
	choose(c, s, n, NULL, http, http_len, html, r, &other, &skip);
}

bool llm_charset_known(const char *name)
{
	if (label_enc(name, strlen(name)) >= 0)
		return true;
	iconv_t cd = iconv_open("UTF-8", name);
	if (cd == (iconv_t)-1)
		return false;
	iconv_close(cd);
	return true;
}
