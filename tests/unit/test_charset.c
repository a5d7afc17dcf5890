/* test_charset.c — labels, the <meta> prescan, and the decisions that overrule a label. */
#include "text/charset.h"

#include "core/utf8.h"
#include "unit.h"

/* Every label of the WHATWG Encoding Standard's encodings.json, with the name it must map to
 * (the standard's, except where charset.h says: GBK family -> gb18030, the replacement
 * encodings decoded by name). A table that is out of order fails here. */
static void test_labels(void)
{
	static const char *const cases[][2] = {
		{ "unicode-1-1-utf-8", "utf-8" }, { "unicode11utf8", "utf-8" }, { "unicode20utf8", "utf-8" },
		{ "utf-8", "utf-8" }, { "utf8", "utf-8" }, { "x-unicode20utf8", "utf-8" },
		{ "866", "ibm866" }, { "cp866", "ibm866" }, { "csibm866", "ibm866" }, { "ibm866", "ibm866" },
		{ "csisolatin2", "iso-8859-2" }, { "iso-ir-101", "iso-8859-2" }, { "iso8859-2", "iso-8859-2" },
		{ "iso88592", "iso-8859-2" }, { "iso_8859-2", "iso-8859-2" }, { "iso_8859-2:1987", "iso-8859-2" },
		{ "l2", "iso-8859-2" }, { "latin2", "iso-8859-2" }, { "csisolatin3", "iso-8859-3" },
		{ "iso-ir-109", "iso-8859-3" }, { "l3", "iso-8859-3" }, { "latin3", "iso-8859-3" },
		{ "csisolatin4", "iso-8859-4" }, { "iso-ir-110", "iso-8859-4" }, { "l4", "iso-8859-4" },
		{ "csisolatincyrillic", "iso-8859-5" }, { "cyrillic", "iso-8859-5" }, { "iso-ir-144", "iso-8859-5" },
		{ "arabic", "iso-8859-6" }, { "asmo-708", "iso-8859-6" }, { "csiso88596e", "iso-8859-6" },
		{ "csiso88596i", "iso-8859-6" }, { "ecma-114", "iso-8859-6" }, { "iso-8859-6-e", "iso-8859-6" },
		{ "iso-8859-6-i", "iso-8859-6" }, { "csisolatingreek", "iso-8859-7" }, { "ecma-118", "iso-8859-7" },
		{ "elot_928", "iso-8859-7" }, { "greek", "iso-8859-7" }, { "greek8", "iso-8859-7" },
		{ "sun_eu_greek", "iso-8859-7" }, { "csiso88598e", "iso-8859-8" }, { "csisolatinhebrew", "iso-8859-8" },
		{ "hebrew", "iso-8859-8" }, { "iso-8859-8-e", "iso-8859-8" }, { "visual", "iso-8859-8" },
		{ "csiso88598i", "iso-8859-8-i" }, { "iso-8859-8-i", "iso-8859-8-i" }, { "logical", "iso-8859-8-i" },
		{ "csisolatin6", "iso-8859-10" }, { "iso-ir-157", "iso-8859-10" }, { "l6", "iso-8859-10" },
		{ "latin6", "iso-8859-10" }, { "iso-8859-13", "iso-8859-13" }, { "iso885913", "iso-8859-13" },
		{ "iso-8859-14", "iso-8859-14" }, { "iso885914", "iso-8859-14" }, { "csisolatin9", "iso-8859-15" },
		{ "iso_8859-15", "iso-8859-15" }, { "l9", "iso-8859-15" }, { "iso-8859-16", "iso-8859-16" },
		{ "cskoi8r", "koi8-r" }, { "koi", "koi8-r" }, { "koi8", "koi8-r" }, { "koi8_r", "koi8-r" },
		{ "koi8-ru", "koi8-u" }, { "koi8-u", "koi8-u" }, { "csmacintosh", "macintosh" }, { "mac", "macintosh" },
		{ "x-mac-roman", "macintosh" }, { "dos-874", "windows-874" }, { "iso-8859-11", "windows-874" },
		{ "iso885911", "windows-874" }, { "tis-620", "windows-874" }, { "cp1250", "windows-1250" },
		{ "x-cp1250", "windows-1250" }, { "cp1251", "windows-1251" }, { "ansi_x3.4-1968", "windows-1252" },
		{ "ascii", "windows-1252" }, { "cp819", "windows-1252" }, { "csisolatin1", "windows-1252" },
		{ "ibm819", "windows-1252" }, { "iso-8859-1", "windows-1252" }, { "iso-ir-100", "windows-1252" },
		{ "iso_8859-1:1987", "windows-1252" }, { "l1", "windows-1252" }, { "latin1", "windows-1252" },
		{ "us-ascii", "windows-1252" }, { "x-cp1252", "windows-1252" }, { "cp1253", "windows-1253" },
		{ "csisolatin5", "windows-1254" }, { "iso-8859-9", "windows-1254" }, { "iso-ir-148", "windows-1254" },
		{ "iso_8859-9:1989", "windows-1254" }, { "l5", "windows-1254" }, { "latin5", "windows-1254" },
		{ "cp1255", "windows-1255" }, { "cp1256", "windows-1256" }, { "cp1257", "windows-1257" },
		{ "cp1258", "windows-1258" }, { "x-cp1258", "windows-1258" }, { "x-mac-cyrillic", "x-mac-cyrillic" },
		{ "x-mac-ukrainian", "x-mac-cyrillic" }, { "chinese", "gb18030" }, { "csgb2312", "gb18030" },
		{ "csiso58gb231280", "gb18030" }, { "gb2312", "gb18030" }, { "gb_2312", "gb18030" },
		{ "gb_2312-80", "gb18030" }, { "gbk", "gb18030" }, { "iso-ir-58", "gb18030" }, { "x-gbk", "gb18030" },
		{ "gb18030", "gb18030" }, { "big5", "big5" }, { "big5-hkscs", "big5" }, { "cn-big5", "big5" },
		{ "csbig5", "big5" }, { "x-x-big5", "big5" }, { "cseucpkdfmtjapanese", "euc-jp" },
		{ "euc-jp", "euc-jp" }, { "x-euc-jp", "euc-jp" }, { "csiso2022jp", "iso-2022-jp" },
		{ "iso-2022-jp", "iso-2022-jp" }, { "csshiftjis", "shift_jis" }, { "ms932", "shift_jis" },
		{ "ms_kanji", "shift_jis" }, { "shift-jis", "shift_jis" }, { "shift_jis", "shift_jis" },
		{ "sjis", "shift_jis" }, { "windows-31j", "shift_jis" }, { "x-sjis", "shift_jis" },
		{ "cseuckr", "euc-kr" }, { "csksc56011987", "euc-kr" }, { "euc-kr", "euc-kr" },
		{ "iso-ir-149", "euc-kr" }, { "korean", "euc-kr" }, { "ks_c_5601-1987", "euc-kr" },
		{ "ks_c_5601-1989", "euc-kr" }, { "ksc5601", "euc-kr" }, { "ksc_5601", "euc-kr" },
		{ "windows-949", "euc-kr" }, { "csiso2022kr", "iso-2022-kr" }, { "hz-gb-2312", "hz-gb-2312" },
		{ "iso-2022-cn", "iso-2022-cn" }, { "iso-2022-cn-ext", "iso-2022-cn" },
		{ "unicodefffe", "utf-16be" }, { "utf-16be", "utf-16be" }, { "csunicode", "utf-16le" },
		{ "iso-10646-ucs-2", "utf-16le" }, { "ucs-2", "utf-16le" }, { "unicode", "utf-16le" },
		{ "unicodefeff", "utf-16le" }, { "utf-16", "utf-16le" }, { "utf-16le", "utf-16le" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *c = llm_charset_canonical(cases[i][0], strlen(cases[i][0]));
		CHECK(c && strcmp(c, cases[i][1]) == 0);
		if (!c || strcmp(c, cases[i][1]) != 0)
			fprintf(stderr, "# label %s: %s\n", cases[i][0], c ? c : "(none)");
	}
	CHECK_STR(llm_charset_canonical(" GBK\t", 5), "gb18030"); /* trimmed, case folded */
	CHECK(llm_charset_canonical("x-user-defined", 14) == NULL);
	CHECK(llm_charset_canonical("", 0) == NULL);
	CHECK(llm_charset_known("IBM852") && llm_charset_known("Latin1") && !llm_charset_known("nope-42"));
}

static const char *meta(const char *html)
{
	static char buf[64];
	size_t n;
	const char *m = llm_charset_meta(html, strlen(html), &n);
	if (!m)
		return "";
	snprintf(buf, sizeof buf, "%.*s", (int)n, m);
	return buf;
}

/* Cases from the WHATWG prescan: attribute forms, comments, the end of the head. */
static void test_meta(void)
{
	CHECK_STR(meta("<meta charset=gbk>"), "gbk");
	CHECK_STR(meta("<html><head><META CHARSET='Big5'/>"), "Big5");
	CHECK_STR(meta("<meta http-equiv=\"Content-Type\" content=\"text/html; charset=euc-jp\">"), "euc-jp");
	CHECK_STR(meta("<meta content='text/html;charset=\"koi8-r\"' http-equiv='content-type'>"), "koi8-r");
	CHECK_STR(meta("<meta content=\"text/html; charset=x\">"), "");  /* no http-equiv */
	CHECK_STR(meta("<!-- <meta charset=a> --><meta charset=b>"), "b");
	CHECK_STR(meta("<script>var s = '<meta charset=a>';</script><meta charset=b>"), "a"); /* as the prescan */
	CHECK_STR(meta("<link title='>' rel=x><meta charset=c>"), "c");  /* '>' inside a quoted value */
	CHECK_STR(meta("<head></head><meta charset=d>"), "");
	CHECK_STR(meta("<body><meta charset=e>"), "");
	CHECK_STR(meta("<metal charset=f>"), "");
	CHECK_STR(meta("<meta charset"), "");
	CHECK_STR(meta("<meta name=x charset=\"\" content=y><meta charset=g>"), "g");
}

static llm_charset *cs;

static const char *dec(const char *s, size_t n, const char *forced, const char *http, bool html,
                       llm_charset_result *r)
{
	static llm_buf out;
	llm_buf_reset(&out);
	llm_charset_decode(cs, s, n, forced, http, http ? strlen(http) : 0, html, &out, r);
	CHECK(llm_utf8_valid(out.p ? out.p : "", out.len));
	return out.p ? out.p : "";
}

static void test_decisions(void)
{
	llm_charset_result r;
	/* HTTP over meta, meta over detection, the BOM over both */
	CHECK_STR(dec("<meta charset=koi8-r>\xC1", 22, NULL, "windows-1251", true, &r),
	          "<meta charset=koi8-r>\xD0\x91");
	CHECK_STR(r.encoding, "windows-1251");
	CHECK_EQ_INT(r.source, LLM_CHARSET_HTTP);
	CHECK_STR(dec("<meta charset=koi8-r>\xC1", 22, NULL, NULL, true, &r), "<meta charset=koi8-r>\xD0\xB0");
	CHECK_EQ_INT(r.source, LLM_CHARSET_META);
	CHECK_STR(dec("\xEF\xBB\xBFx\xC3\xA9", 6, NULL, "gbk", true, &r), "x\xC3\xA9");
	CHECK_EQ_INT(r.source, LLM_CHARSET_BOM);
	/* a meta that names UTF-16 means UTF-8 (the bytes could not hold the tag otherwise) */
	dec("<meta charset=utf-16>\xC3\xA9", 23, NULL, NULL, true, &r);
	CHECK_STR(r.encoding, "utf-8");
	/* an unknown label is no label */
	dec("caf\xE9 cr\xE8me", 10, NULL, "x-klingon", false, &r);
	CHECK(r.source != LLM_CHARSET_HTTP);
	/* legacy label on UTF-8 bytes: UTF-8; UTF-8 label on legacy bytes: detection */
	dec("caf\xC3\xA9", 5, NULL, "iso-8859-1", false, &r);
	CHECK_STR(r.encoding, "utf-8");
	CHECK_EQ_INT(r.source, LLM_CHARSET_DETECTED);
	dec("\xC4\xE3\xBA\xC3\xA3\xAC\xCA\xC0\xBD\xE7\xA1\xA3\xD5\xE2\xCA\xC7\xD6\xD0\xCE\xC4", 20, NULL,
	    "utf-8", false, &r);
	CHECK(strcmp(r.encoding, "utf-8") != 0);
	/* C1 bytes under an ISO-8859 label: the Windows code page (0x9A is s-caron in 1250) */
	CHECK_STR(dec("\x9A\xE1", 2, NULL, "iso-8859-2", false, &r), "\xC5\xA1\xC3\xA1");
	CHECK_STR(r.encoding, "windows-1250");
	/* forced wins and is never refined; undecodable bytes become U+FFFD and are counted */
	CHECK_STR(dec("\x9A", 1, "iso-8859-2", NULL, false, &r), "\xC2\x9A");
	CHECK_STR(dec("a\x80" "b", 3, "shift_jis", NULL, false, &r), "a\xEF\xBF\xBD" "b");
	CHECK_STR(dec("a\xFF\xFF" "b", 4, "euc-jp", NULL, false, &r), "a\xEF\xBF\xBD\xEF\xBF\xBD" "b");
	CHECK_EQ_INT(r.replaced, 2);
	/* a truncated multi-byte sequence at the end */
	CHECK_STR(dec("ab\x81", 3, "gb18030", NULL, false, &r), "ab\xEF\xBF\xBD");
	/* nothing to decide on: windows-1252 */
	dec("\x81\x8D\x8F\x90\x9D", 5, NULL, NULL, false, &r);
	CHECK_EQ_INT(r.source == LLM_CHARSET_DEFAULT || r.source == LLM_CHARSET_DETECTED, 1);
	CHECK_STR(dec("", 0, NULL, NULL, true, &r), "");
	CHECK_STR(r.encoding, "utf-8");
}

int main(void)
{
	cs = llm_charset_new();
	RUN(test_labels);
	RUN(test_meta);
	RUN(test_decisions);
	llm_charset_free(cs);
	return unit_done();
}
