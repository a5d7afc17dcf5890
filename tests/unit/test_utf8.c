/* Unit tests for lib/utf8: maximal-subpart decoding, repair, classes, case mapping. */
#include <string.h>

#include "core/utf8.h"
#include "unit.h"

static size_t repairs(const char *s, size_t n, llm_buf *out)
{
	llm_buf_reset(out);
	return llm_utf8_repair(s, n, out);
}

static void test_decode(void)
{
	uint32_t cp;
	CHECK_EQ_INT(llm_utf8_decode("\xe4\xb8\xad", 3, &cp), 3);
	CHECK_EQ_INT(cp, 0x4E2D);
	CHECK_EQ_INT(llm_utf8_decode("\xf0\x9f\x98\x80", 4, &cp), 4);
	CHECK_EQ_INT(cp, 0x1F600);
	CHECK_EQ_INT(llm_utf8_decode("\xc0\xaf", 2, &cp), 1); /* overlong lead is one subpart */
	CHECK_EQ_INT(cp, LLM_UTF8_REPLACEMENT);
	CHECK_EQ_INT(llm_utf8_decode("\xed\xa0\x80", 3, &cp), 1); /* surrogate */
	CHECK_EQ_INT(llm_utf8_decode("\xe2\x82", 2, &cp), 2);     /* truncated: one subpart */
	CHECK_EQ_INT(llm_utf8_decode("\xf4\x90\x80\x80", 4, &cp), 1); /* > U+10FFFF */
}

static void test_repair_matches_python(void)
{
	/* Counts as Python's bytes.decode("utf-8", "replace") gives them. */
	llm_buf b = LLM_BUF_INIT;
	CHECK_EQ_INT(repairs("\xf0\x80\x80", 3, &b), 3);
	CHECK_EQ_INT(repairs("a\xe2\x82z", 4, &b), 1);
	CHECK_STR(b.p, "a\xef\xbf\xbdz");
	CHECK_EQ_INT(repairs("\xff\xfe", 2, &b), 2);
	CHECK_EQ_INT(repairs("\xf1\x80\x80\xe1\x80\xc2", 6, &b), 3);
	CHECK_EQ_INT(repairs("ok 中文 \xef\xbf\xbd", 14, &b), 0); /* a real U+FFFD is valid */
	CHECK(llm_utf8_valid("ok 中文 \xef\xbf\xbd", 14));
	CHECK(!llm_utf8_valid("abcdefghij\x80", 11));
	CHECK_EQ_INT(llm_utf8_valid_prefix("abcdefghij\x80", 11), 10);
	CHECK_EQ_INT(llm_utf8_count("a中\xff", 5), 3);
	llm_buf_release(&b);
}

static void test_encode_roundtrip(void)
{
	static const uint32_t cps[] = { 0, 0x7F, 0x80, 0x7FF, 0x800, 0xFFFF, 0x10000, 0x10FFFF };
	for (size_t i = 0; i < sizeof cps / sizeof *cps; i++) {
		char out[4];
		uint32_t back;
		size_t n = llm_utf8_encode(cps[i], out);
		CHECK_EQ_INT(llm_utf8_decode(out, n, &back), n);
		CHECK_EQ_INT(back, cps[i]);
	}
	char out[4];
	uint32_t back;
	llm_utf8_decode(out, llm_utf8_encode(0xD800, out), &back);
	CHECK_EQ_INT(back, LLM_UTF8_REPLACEMENT);
}

static void test_classes(void)
{
	CHECK(llm_uc_is(0x4E2D, LLM_UC_HAN) && llm_uc_is(0x4E2D, LLM_UC_LETTER));
	CHECK(llm_uc_is(0x20000, LLM_UC_HAN));
	CHECK(llm_uc_is('A', LLM_UC_UPPER) && llm_uc_is('a', LLM_UC_LOWER));
	CHECK(llm_uc_is(0x3002, LLM_UC_PUNCT));  /* 。 */
	CHECK(llm_uc_is(0xFF01, LLM_UC_PUNCT));  /* ！ */
	CHECK(llm_uc_is(0x3000, LLM_UC_SPACE));
	CHECK(llm_uc_is(0x00A0, LLM_UC_SPACE));
	CHECK(llm_uc_is(0x200B, LLM_UC_ZEROWIDTH));
	CHECK(llm_uc_is(0xFEFF, LLM_UC_ZEROWIDTH));
	CHECK(llm_uc_is(0xFF15, LLM_UC_DIGIT));  /* ５ */
	CHECK(llm_uc_is(0x3042, LLM_UC_KANA));   /* あ */
	CHECK(llm_uc_is(0xD55C, LLM_UC_HANGUL)); /* 한 */
	CHECK(llm_uc_is(0x0007, LLM_UC_CONTROL));
	CHECK(llm_uc_is(0x0301, LLM_UC_MARK));
	CHECK(llm_uc_is('$', LLM_UC_SYMBOL));
	CHECK(!llm_uc_is('a', LLM_UC_CJK | LLM_UC_PUNCT | LLM_UC_SPACE));
	CHECK_EQ_INT(llm_uc_class(0x110000), 0);
}

static void test_case_and_width(void)
{
	CHECK_EQ_INT(llm_uc_tolower('Q'), 'q');
	CHECK_EQ_INT(llm_uc_tolower(0xC4), 0xE4);   /* Ä */
	CHECK_EQ_INT(llm_uc_tolower(0x3A3), 0x3C3); /* Σ */
	CHECK_EQ_INT(llm_uc_tolower(0x410), 0x430); /* А */
	CHECK_EQ_INT(llm_uc_tolower(0x4E2D), 0x4E2D);
	CHECK_EQ_INT(llm_uc_fold_width(0xFF21), 'A');
	CHECK_EQ_INT(llm_uc_fold_width(0x3000), ' ');
	CHECK_EQ_INT(llm_uc_fold_width(0x3002), 0x3002);
}

/* The valid prefix by the decoder, a character at a time: what llm_utf8_valid_prefix means. */
static size_t prefix_by_decoder(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		uint32_t cp;
		size_t k = llm_utf8_decode(s + i, n - i, &cp);
		if (cp == LLM_UTF8_REPLACEMENT && !(k == 3 && memcmp(s + i, "\xef\xbf\xbd", 3) == 0))
			return i;
		i += k;
	}
	return n;
}

/* llm_utf8_valid_prefix checks sixteen bytes at a time where it can: valid text of every
 * length of form, with one byte changed anywhere (an error at every place in a block and on
 * either side of a block's edge), and the edge cases of each lead byte, against the decoder. */
static void test_valid_prefix_blocks(void)
{
	static const char *const forms[] = { "a", "\xc2\x80", "\xdf\xbf", "\xe0\xa0\x80",
		"\xe4\xb8\xad", "\xed\x9f\xbf", "\xef\xbf\xbd", "\xf0\x90\x80\x80",
		"\xf4\x8f\xbf\xbf", "\n" };
	static const unsigned char odd[] = { 0x80, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed,
		0xef, 0xf0, 0xf4, 0xf5, 0xff, 0x00, 0x41, 0x9f, 0xa0, 0x8f, 0x90 };
	uint64_t r = 0x9e3779b97f4a7c15ULL;
	char s[96];
	size_t bad = 0;
	for (int t = 0; t < 20000; t++) {
		size_t n = 0;
		while (n < sizeof s - 4) {
			r = r * 6364136223846793005ULL + 1442695040888963407ULL;
			const char *f = forms[(r >> 33) % (sizeof forms / sizeof *forms)];
			size_t k = strlen(f);
			memcpy(s + n, f, k);
			n += k;
		}
		r = r * 6364136223846793005ULL + 1442695040888963407ULL;
		n -= (r >> 40) % 40; /* lengths 52 to 92, some cutting a form */
		if (t % 4) { /* three in four with a byte changed */
			r = r * 6364136223846793005ULL + 1442695040888963407ULL;
			s[(r >> 33) % n] = (char)odd[(r >> 20) % sizeof odd];
		}
		bad += llm_utf8_valid_prefix(s, n) != prefix_by_decoder(s, n);
	}
	CHECK_EQ_INT(bad, 0);
	/* every two-byte pair at every offset of a block */
	for (unsigned a = 0x80; a < 0x100; a++)
		for (unsigned b = 0; b < 0x100; b += 3)
			for (size_t at = 12; at < 20; at++) {
				memset(s, 'x', 40);
				s[at] = (char)a;
				s[at + 1] = (char)b;
				bad += llm_utf8_valid_prefix(s, 40) != prefix_by_decoder(s, 40);
			}
	CHECK_EQ_INT(bad, 0);
}

int main(void)
{
	RUN(test_decode);
	RUN(test_repair_matches_python);
	RUN(test_encode_roundtrip);
	RUN(test_classes);
	RUN(test_case_and_width);
	RUN(test_valid_prefix_blocks);
	return unit_done();
}
