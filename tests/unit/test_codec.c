/* Unit tests for lib/core/codec: round trips in every format, fed in pieces of every size,
 * concatenated streams, and the checks that must fail (truncated, damaged, trailing data). */
#include "core/buf.h"
#include "core/codec.h"
#include "core/err.h"
#include "core/hash.h"
#include "unit.h"

static const int kinds[] = { LLM_CODEC_ZSTD, LLM_CODEC_GZIP, LLM_CODEC_XZ, LLM_CODEC_BZIP2 };

static int to_buf(void *ctx, const void *p, size_t n)
{
	llm_buf_add(ctx, p, n);
	return LLM_OK;
}

static void compress(int kind, const void *p, size_t n, llm_buf *out)
{
	llm_codec *c = llm_codec_encoder_new(kind, "enc");
	CHECK(c != NULL);
	/* in two pushes, so that a stream continues across calls */
	CHECK(llm_codec_push(c, p, n / 3, 0, to_buf, out) == LLM_OK);
	CHECK(llm_codec_push(c, (const char *)p + n / 3, n - n / 3, 1, to_buf, out) == LLM_OK);
	llm_codec_free(c);
}

/* Decode in[0, n) handing the decoder `step` input bytes at a time and out into pieces of
 * `cap`; returns the final status (LLM_EOF when complete). */
static int decompress(int kind, const char *in, size_t n, size_t step, size_t cap, llm_buf *out)
{
	llm_codec *c = llm_codec_decoder_new(kind, "x.bin");
	char *o = malloc(cap);
	size_t avail = 0, pos = 0;
	int rc;
	for (;;) {
		if (pos == avail && avail < n)
			avail = avail + step < n ? avail + step : n;
		size_t got;
		rc = llm_codec_decode(c, in, avail, &pos, o, cap, &got, avail == n);
		llm_buf_add(out, o, got);
		if (rc != LLM_OK)
			break;
		if (!got && pos == avail && avail == n) {
			rc = LLM_EINTERNAL; /* the contract: never OK without output at the end */
			break;
		}
	}
	free(o);
	llm_codec_free(c);
	return rc;
}

static void random_text(llm_buf *b, size_t n, uint64_t seed)
{
	llm_rng g;
	llm_rng_seed(&g, seed);
	static const char words[][8] = { "the ", "data ", "模型 ", "训练 ", "\n", "of ", "token " };
	while (b->len < n)
		llm_buf_adds(b, words[llm_rng_next(&g) % 7]);
}

static void test_round_trips_in_pieces(void)
{
	llm_buf text = LLM_BUF_INIT;
	random_text(&text, 300000, 1);
	static const size_t steps[] = { 1, 7, 4096, 1 << 20 }, caps[] = { 1, 13, 65536 };
	for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
		llm_buf z = LLM_BUF_INIT;
		compress(kinds[k], text.p, text.len, &z);
		CHECK_EQ_INT(llm_codec_detect(z.p, z.len), kinds[k]);
		CHECK(z.len < text.len / 2);
		for (size_t s = 0; s < 4; s++)
			for (size_t c = 0; c < 3; c++) {
				if (steps[s] == 1 && caps[c] == 1 && kinds[k] == LLM_CODEC_XZ)
					continue; /* 10^11 calls: the 7-byte steps cover it */
				llm_buf d = LLM_BUF_INIT;
				CHECK_EQ_INT(decompress(kinds[k], z.p, z.len, steps[s], caps[c], &d), LLM_EOF);
				CHECK(d.len == text.len && memcmp(d.p, text.p, d.len) == 0);
				llm_buf_release(&d);
			}
		llm_buf_release(&z);
	}
	llm_buf_release(&text);
}

static void test_empty_input(void)
{
	for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
		llm_buf z = LLM_BUF_INIT, d = LLM_BUF_INIT;
		compress(kinds[k], "", 0, &z);
		CHECK(z.len > 0);
		CHECK_EQ_INT(decompress(kinds[k], z.p, z.len, 5, 100, &d), LLM_EOF);
		CHECK_EQ_INT(d.len, 0);
		llm_buf_release(&z);
		llm_buf_release(&d);
	}
}

static void test_concatenated_streams(void)
{
	for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
		llm_buf z = LLM_BUF_INIT, d = LLM_BUF_INIT;
		compress(kinds[k], "first\n", 6, &z);
		compress(kinds[k], "second\n", 7, &z);
		CHECK_EQ_INT(decompress(kinds[k], z.p, z.len, 3, 4, &d), LLM_EOF);
		CHECK_MEM(d.p, d.len, "first\nsecond\n", 13);
		llm_buf_release(&z);
		llm_buf_release(&d);
	}
}

static void test_truncated_everywhere(void)
{
	llm_buf text = LLM_BUF_INIT;
	random_text(&text, 20000, 2);
	for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
		llm_buf z = LLM_BUF_INIT;
		compress(kinds[k], text.p, text.len, &z);
		/* every cut of the stream is an error, never a silent short read */
		for (size_t cut = 1; cut < z.len; cut += cut < 64 ? 1 : 37) {
			llm_buf d = LLM_BUF_INIT;
			int rc = decompress(kinds[k], z.p, cut, 1 << 16, 1 << 16, &d);
			if (rc != LLM_EFORMAT)
				printf("#   %s cut at %zu of %zu: %d\n", llm_codec_name(kinds[k]), cut, z.len, rc);
			CHECK_EQ_INT(rc, LLM_EFORMAT);
			llm_buf_release(&d);
		}
		llm_buf_release(&z);
	}
	llm_buf_release(&text);
}

static void test_damage_is_detected(void)
{
	llm_buf text = LLM_BUF_INIT;
	random_text(&text, 50000, 3);
	for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
		llm_buf z = LLM_BUF_INIT;
		compress(kinds[k], text.p, text.len, &z);
		/* one flipped bit anywhere after the magic: an error, or (never) the same text */
		int missed = 0;
		for (size_t at = 6; at < z.len; at += 1 + z.len / 200) {
			z.p[at] ^= 0x10;
			llm_buf d = LLM_BUF_INIT;
			int rc = decompress(kinds[k], z.p, z.len, 1 << 16, 1 << 16, &d);
			if (rc != LLM_EFORMAT && !(rc == LLM_EOF && d.len == text.len &&
			                           memcmp(d.p, text.p, d.len) == 0))
				missed++;
			llm_buf_release(&d);
			z.p[at] ^= 0x10;
		}
		if (missed)
			printf("#   %s: %d damaged streams decoded to other text\n", llm_codec_name(kinds[k]), missed);
		CHECK_EQ_INT(missed, 0);
		llm_buf_release(&z);
	}
	llm_buf_release(&text);
}

static void test_trailing_data(void)
{
	llm_buf z = LLM_BUF_INIT, d = LLM_BUF_INIT;
	compress(LLM_CODEC_GZIP, "a\n", 2, &z);
	llm_buf_add(&z, "\0\0\0\0\0", 5);
	CHECK_EQ_INT(decompress(LLM_CODEC_GZIP, z.p, z.len, 3, 10, &d), LLM_EOF);
	CHECK_MEM(d.p, d.len, "a\n", 2);
	llm_buf_adds(&z, "x");
	llm_buf_reset(&d);
	CHECK_EQ_INT(decompress(LLM_CODEC_GZIP, z.p, z.len, 3, 10, &d), LLM_EFORMAT);
	CHECK(strstr(llm_last_error(), "x.bin: corrupt gzip stream: data after the last member") != NULL);
	for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
		llm_buf_reset(&z);
		llm_buf_reset(&d);
		compress(kinds[k], "b\n", 2, &z);
		llm_buf_adds(&z, "garbage!");
		CHECK_EQ_INT(decompress(kinds[k], z.p, z.len, 1 << 10, 10, &d), LLM_EFORMAT);
	}
	llm_buf_release(&z);
	llm_buf_release(&d);
}

static void test_detect_and_suffix(void)
{
	CHECK_EQ_INT(llm_codec_detect("\x50\x2a\x4d\x18", 4), LLM_CODEC_ZSTD); /* skippable frame */
	CHECK_EQ_INT(llm_codec_detect("\x5f\x2a\x4d\x18", 4), LLM_CODEC_ZSTD);
	CHECK_EQ_INT(llm_codec_detect("\x1f\x8b\x08", 3), LLM_CODEC_GZIP);
	CHECK_EQ_INT(llm_codec_detect("\x1f\x8b", 2), LLM_CODEC_NONE);
	CHECK_EQ_INT(llm_codec_detect("BZh9", 4), LLM_CODEC_BZIP2);
	CHECK_EQ_INT(llm_codec_detect("BZhx", 4), LLM_CODEC_NONE);
	CHECK_EQ_INT(llm_codec_detect("{\"text\"", 7), LLM_CODEC_NONE);
	CHECK_EQ_INT(llm_codec_from_suffix("a.jsonl.gz"), LLM_CODEC_GZIP);
	CHECK_EQ_INT(llm_codec_from_suffix("a.xz"), LLM_CODEC_XZ);
	CHECK_EQ_INT(llm_codec_from_suffix("a.bz2"), LLM_CODEC_BZIP2);
	CHECK_EQ_INT(llm_codec_from_suffix("a.zst"), LLM_CODEC_ZSTD);
	CHECK_EQ_INT(llm_codec_from_suffix(".gz"), LLM_CODEC_NONE);
	CHECK_EQ_INT(llm_codec_from_suffix("a.tgz"), LLM_CODEC_NONE);
}

int main(void)
{
	RUN(test_round_trips_in_pieces);
	RUN(test_empty_input);
	RUN(test_concatenated_streams);
	RUN(test_truncated_everywhere);
	RUN(test_damage_is_detected);
	RUN(test_trailing_data);
	RUN(test_detect_and_suffix);
	return unit_done();
}
