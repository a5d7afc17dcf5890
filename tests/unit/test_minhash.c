/*
 * test_minhash.c — normalisation, shingling, MinHash estimates and the LSH parameter choice.
 */
#include "unit.h"

#include "core/err.h"
#include "core/hash.h"
#include "dedup/minhash.h"
#include "dedup/shingle.h"

static void norm_is(const char *in, llm_norm_level lv, const char *want)
{
	llm_buf b = LLM_BUF_INIT;
	llm_norm_text(in, strlen(in), lv, &b);
	CHECK_STR(b.p ? b.p : "", want);
	llm_buf_release(&b);
}

static void test_normalise(void)
{
	norm_is("  Hello,\t World!\r\n", LLM_NORM_SPACE, "Hello, World!");
	norm_is("Hello, World! 12,345 and 7", LLM_NORM_FULL, "hello world 0 and 0");
	/* full-width letters, digits and punctuation; CJK punctuation; U+3000 space */
	norm_is("\xef\xbc\xa6\xef\xbd\x8f\xef\xbc\x91\xef\xbc\x8c\xe3\x80\x80\xe4\xbd\xa0\xe5\xa5\xbd\xe3\x80\x82",
	        LLM_NORM_FULL, "fo0 \xe4\xbd\xa0\xe5\xa5\xbd");
	/* zero-width space joins, invalid byte becomes U+FFFD */
	norm_is("ab\xe2\x80\x8b" "cd \xff", LLM_NORM_FULL, "abcd \xef\xbf\xbd");
	norm_is("\xc3\x89T\xc3\x89", LLM_NORM_FULL, "\xc3\xa9t\xc3\xa9");
	norm_is("a  b", LLM_NORM_NONE, "a  b");
	norm_is("", LLM_NORM_FULL, "");
	norm_is(" \t\n", LLM_NORM_SPACE, "");
}

static void test_shingles(void)
{
	llm_shingler sh;
	llm_shingler_init(&sh);
	llm_shingle_opts o = { LLM_NORM_FULL, LLM_UNITS_WORD, 3, 7 };
	const char *t = "One two, THREE four five";
	CHECK_EQ_INT(llm_shingle(&sh, &o, t, strlen(t)), 3);
	CHECK_EQ_U64(sh.h[0], llm_hash64("one two three", 13, 7));
	CHECK_EQ_U64(sh.h[2], llm_hash64("three four five", 15, 7));
	/* fewer units than the n-gram: the whole text is one shingle; none: no shingle */
	o.ngram = 9;
	CHECK_EQ_INT(llm_shingle(&sh, &o, t, strlen(t)), 1);
	CHECK_EQ_U64(sh.h[0], llm_hash64("one two three four five", 23, 7));
	CHECK_EQ_INT(llm_shingle(&sh, &o, " ,.! ", 5), 0);
	/* auto: Chinese in the segmenter's words ("你好" is one), Latin words stay words */
	o.ngram = 1;
	o.units = LLM_UNITS_AUTO;
	const char *mixed = "\xe4\xbd\xa0\xe5\xa5\xbd world";
	CHECK_EQ_INT(llm_shingle(&sh, &o, mixed, strlen(mixed)), 2);
	CHECK_EQ_U64(sh.h[0], llm_hash64("\xe4\xbd\xa0\xe5\xa5\xbd", 6, 7));
	CHECK_EQ_U64(sh.h[1], llm_hash64("world", 5, 7));
	/* "我们的数据" is 我们 / 的 / 数据 */
	const char *zh = "\xe6\x88\x91\xe4\xbb\xac\xe7\x9a\x84\xe6\x95\xb0\xe6\x8d\xae";
	CHECK_EQ_INT(llm_shingle(&sh, &o, zh, strlen(zh)), 3);
	CHECK_EQ_U64(sh.h[2], llm_hash64("\xe6\x95\xb0\xe6\x8d\xae", 6, 7));
	/* auto-char: Han and Kana characters alone (what --decontaminate uses) */
	o.units = LLM_UNITS_AUTO_CHAR;
	CHECK_EQ_INT(llm_shingle(&sh, &o, mixed, strlen(mixed)), 3);
	CHECK_EQ_U64(sh.h[1], llm_hash64("\xe5\xa5\xbd", 3, 7));
	CHECK_EQ_U64(sh.h[2], llm_hash64("world", 5, 7));
	/* char: every character, spaces included */
	o.units = LLM_UNITS_CHAR;
	o.ngram = 2;
	CHECK_EQ_INT(llm_shingle(&sh, &o, "ab c", 4), 3);
	CHECK_EQ_U64(sh.h[1], llm_hash64("b ", 2, 7));
	/* sets */
	o.units = LLM_UNITS_WORD;
	o.ngram = 1;
	CHECK_EQ_INT(llm_shingle(&sh, &o, "a b a b c", 9), 5);
	CHECK_EQ_INT(llm_shingle_set(&sh), 3);
	CHECK(sh.h[0] < sh.h[1] && sh.h[1] < sh.h[2]);
	llm_shingler_release(&sh);
}

static void test_jaccard(void)
{
	uint64_t a[] = { 1, 2, 3, 4 }, b[] = { 3, 4, 5 };
	CHECK_NEAR(llm_jaccard_sorted(a, 4, b, 3), 2.0 / 5.0, 1e-12);
	CHECK_NEAR(llm_jaccard_sorted(a, 4, a, 4), 1.0, 1e-12);
	CHECK_NEAR(llm_jaccard_sorted(a, 0, b, 0), 0.0, 1e-12);
	uint32_t c[] = { 1, 9 }, d[] = { 2, 9 };
	CHECK_NEAR(llm_jaccard_sorted32(c, 2, d, 2), 1.0 / 3.0, 1e-12);
}

/* The fraction of agreeing signature values estimates the Jaccard similarity; with 512
 * permutations its standard deviation is at most 0.022, so 0.09 is beyond 4 sigma. */
static void test_estimate(void)
{
	enum { NP = 512 };
	for (unsigned bits = 32; bits <= 64; bits += 32) {
		llm_minhash *mh;
		CHECK_EQ_INT(llm_minhash_new(&mh, NP, 1, 1, bits, 42), LLM_OK);
		static const int overlap[] = { 0, 250, 500, 800, 1000 };
		for (size_t t = 0; t < sizeof overlap / sizeof *overlap; t++) {
			uint64_t A[1000], B[1000], sa[NP], sb[NP];
			for (int i = 0; i < 1000; i++) {
				uint64_t ia = (uint64_t)i, ib = (uint64_t)(i + 1000 - overlap[t]);
				A[i] = llm_hash64(&ia, 8, 0);
				B[i] = llm_hash64(&ib, 8, 0);
			}
			double exact = overlap[t] / (2000.0 - overlap[t]);
			llm_minhash_sign(mh, A, 1000, sa);
			llm_minhash_sign(mh, B, 1000, sb);
			int eq = 0;
			for (int i = 0; i < NP; i++)
				eq += sa[i] == sb[i];
			CHECK_NEAR((double)eq / NP, exact, 0.09);
		}
		/* order and repeats do not matter */
		uint64_t x[] = { 5, 9, 7, 5 }, y[] = { 7, 9, 5 }, sx[NP], sy[NP];
		llm_minhash_sign(mh, x, 4, sx);
		llm_minhash_sign(mh, y, 3, sy);
		CHECK(memcmp(sx, sy, sizeof sx) == 0);
		llm_minhash_free(mh);
	}
}

static void test_band_keys(void)
{
	llm_minhash *mh;
	CHECK_EQ_INT(llm_minhash_new(&mh, 16, 4, 4, 32, 1), LLM_OK);
	uint64_t sig[16], sig2[16], k1[4], k2[4];
	for (int i = 0; i < 16; i++)
		sig[i] = sig2[i] = (uint64_t)(i * 977) << 32;
	sig2[5] += 1ull << 32; /* band 1 differs */
	llm_minhash_band_keys(mh, sig, k1);
	llm_minhash_band_keys(mh, sig2, k2);
	CHECK(k1[0] == k2[0] && k1[1] != k2[1] && k1[2] == k2[2] && k1[3] == k2[3]);
	/* the same values in another band give another key */
	for (int i = 0; i < 16; i++)
		sig[i] = 7ull << 32;
	llm_minhash_band_keys(mh, sig, k1);
	CHECK(k1[0] != k1[1]);
	llm_minhash_free(mh);
	CHECK_EQ_INT(llm_minhash_new(&mh, 16, 5, 4, 32, 1), LLM_EINVAL);
	CHECK(mh == NULL);
	CHECK_EQ_INT(llm_minhash_new(&mh, 16, 4, 4, 48, 1), LLM_EINVAL);
	CHECK_EQ_INT(llm_minhash_new(&mh, 0, 1, 1, 32, 1), LLM_EINVAL);
}

/* Reference values from datasketch 1.6 (datasketch.lsh._optimal_param with weights 0.5). */
static void test_optimal_params(void)
{
	static const struct { double t; unsigned np, b, r; } ref[] = {
		{ 0.7, 256, 25, 10 }, { 0.5, 128, 25, 5 }, { 0.8, 112, 9, 12 },
		{ 0.8, 128, 9, 13 },  { 0.9, 256, 9, 28 }, { 0.3, 64, 21, 3 },
	};
	for (size_t i = 0; i < sizeof ref / sizeof *ref; i++) {
		unsigned b, r;
		llm_lsh_optimal(ref[i].t, ref[i].np, 0.5, 0.5, &b, &r);
		CHECK_EQ_INT(b, ref[i].b);
		CHECK_EQ_INT(r, ref[i].r);
	}
	/* the S-curve: 1-(1-s^r)^b, checked at a point computed by hand */
	CHECK_NEAR(llm_lsh_prob(0.5, 2, 2), 1 - 0.75 * 0.75, 1e-15);
	CHECK_NEAR(llm_lsh_prob(1.0, 14, 8), 1.0, 1e-15);
	CHECK_NEAR(llm_lsh_prob(0.0, 14, 8), 0.0, 1e-15);
}

int main(void)
{
	RUN(test_normalise);
	RUN(test_shingles);
	RUN(test_jaccard);
	RUN(test_estimate);
	RUN(test_band_keys);
	RUN(test_optimal_params);
	return unit_done();
}
