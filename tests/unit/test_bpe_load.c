/*
 * test_bpe_load.c — the tables a loader builds (lib/tok/bpe_load.c) do not depend on the
 * threads that built them: the rank files, GPT-2's tokenizer.json and vocab.json + merges.txt
 * and a character-level tokenizer.json, each loaded on 1, 2 and 3 threads, hash the same
 * (tokens, byte index, pair lists, backtracking tables), and different files differently.
 * A rank file is decoded in chunks on the pool: a malformed line far into it is reported
 * with its line number, and the first error in the file is the one reported. The byte index
 * finds each token under its own bytes only, short tokens (their own keys) and long ones.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/io.h"
#include "tok/bpe.h"
#include "tok/bpe_internal.h"
#include "unit.h"

/* The hash of path's tables loaded on `threads` threads, 0 when it does not load. */
static uint64_t tables(const char *rel, const char *merges_rel, int threads, bool *bt)
{
	char path[4096], merges[4096];
	snprintf(path, sizeof path, "%s", unit_path(rel));
	if (merges_rel)
		snprintf(merges, sizeof merges, "%s", unit_path(merges_rel));
	llm_bpe_load_opts o = { merges_rel ? merges : NULL, NULL, NULL, NULL, threads };
	llm_bpe *b;
	if (llm_bpe_load_with(&b, path, &o) != LLM_OK) {
		printf("#   load %s on %d threads: %s\n", rel, threads, llm_last_error());
		unit_cur_failed = 1;
		return 0;
	}
	uint64_t h = bpe_tables_hash(b);
	*bt = b->bt != NULL;
	llm_bpe_free(b);
	return h;
}

static uint64_t same_on_any_threads(const char *rel, const char *merges_rel, bool want_bt)
{
	bool bt = false, bt_n = false;
	uint64_t one = tables(rel, merges_rel, 1, &bt);
	CHECK(bt == want_bt);
	for (int threads = 2; threads <= 3; threads++) {
		uint64_t h = tables(rel, merges_rel, threads, &bt_n);
		if (h != one)
			printf("#   %s: the tables built on %d threads differ from one thread's\n", rel, threads);
		CHECK_EQ_U64(h, one);
		CHECK(bt_n == bt);
	}
	return one;
}

static void test_same_tables_on_any_threads(void)
{
	static const struct {
		const char *file, *merges;
		bool bt;
	} f[] = {
		{ "tests/data/tokenize/r50k_base.tiktoken.zst", NULL, true },
		{ "tests/data/tokenize/cl100k_base.tiktoken.zst", NULL, true },
		{ "tests/data/tokenize/o200k_base.tiktoken.zst", NULL, true },
		{ "tests/data/tokenize/hf_gpt2/tokenizer.json.zst", NULL, true },
		{ "tests/data/tokenize/hf_gpt2/vocab.json.zst", "tests/data/tokenize/hf_gpt2/merges.txt.zst", true },
		{ "tests/data/tokenize/hf_features/spm-legacy.json.zst", NULL, false },
	};
	uint64_t h[sizeof f / sizeof *f];
	for (size_t i = 0; i < sizeof f / sizeof *f; i++)
		h[i] = same_on_any_threads(f[i].file, f[i].merges, f[i].bt);
	/* GPT-2's tokenizer.json and its vocab.json + merges.txt are one tokenizer (4th, 5th) */
	CHECK_EQ_U64(h[3], h[4]);
	for (size_t i = 0; i < sizeof f / sizeof *f; i++)
		for (size_t j = i + 1; j < sizeof f / sizeof *f; j++)
			if (!(i == 3 && j == 4))
				CHECK(h[i] != h[j]);
}

/* NLINES ranks, several of the loader's 64 KiB chunks: the 256 bytes, then 3-byte tokens. */
#define NLINES 30000

static char tmpdir[] = "/tmp/test_bpe_load.XXXXXX";

/* The base64 of the token of line i. */
static void token_b64(unsigned i, char out[5])
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	if (i <= 256)
		snprintf(out, 5, "%c%c==", a[(i - 1) >> 2], a[((i - 1) & 3) << 4]);
	else
		for (int k = 0; k < 4; k++)
			out[k] = a[(i >> (18 - 6 * k)) & 63];
	out[4] = 0;
}

/* The message of loading the rank file whose line i (from 1) is bad[i] where set, on
 * `threads` threads; "" when it loads. */
static void load_error(const char *const *bad, int threads, char *msg, size_t cap)
{
	char path[64];
	snprintf(path, sizeof path, "%s/ranks", tmpdir);
	llm_buf f = LLM_BUF_INIT;
	for (unsigned i = 1; i <= NLINES; i++) {
		char t[5];
		token_b64(i, t);
		if (bad[i])
			llm_buf_addf(&f, "%s\n", bad[i]);
		else
			llm_buf_addf(&f, "%s %u\n", t, i - 1);
	}
	CHECK_EQ_INT(llm_write_file(path, f.p, f.len), LLM_OK);
	llm_bpe_load_opts o = { NULL, NULL, ".", NULL, threads };
	llm_bpe *b;
	snprintf(msg, cap, "%s", llm_bpe_load_with(&b, path, &o) == LLM_OK ? "" : llm_last_error());
	llm_bpe_free(b);
	llm_buf_release(&f);
	unlink(path);
}

static void test_rank_errors_across_chunks(void)
{
	static const char *bad[NLINES + 1];
	static const struct {
		unsigned line[2];
		const char *text[2], *want;
	} c[] = {
		{ { 25000, 0 }, { "Y!== 7", NULL }, ":25000: bad base64 'Y!=='" },
		{ { 29999, 0 }, { "AAAB", NULL }, ":29999: expected 'base64 rank'" },
		{ { 20001, 0 }, { "AAAB 12x", NULL }, ":20001: bad rank" },
		/* a repeated rank before a malformed line, and one after */
		{ { 8000, 25000 }, { "YWJj 5", "Y!== 7" }, ":8000: rank 5 appears twice" },
		{ { 8000, 25000 }, { "Y!== 7", "YWJj 5" }, ":8000: bad base64" },
	};
	char one[512], many[512];
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		for (int k = 0; k < 2; k++)
			if (c[i].line[k])
				bad[c[i].line[k]] = c[i].text[k];
		load_error(bad, 1, one, sizeof one);
		load_error(bad, 3, many, sizeof many);
		if (!strstr(one, c[i].want))
			printf("#   case %zu: %s\n", i, one);
		CHECK(strstr(one, c[i].want) != NULL);
		CHECK_STR(many, one);
		for (int k = 0; k < 2; k++)
			bad[c[i].line[k]] = NULL;
	}
	load_error(bad, 3, many, sizeof many);
	CHECK_STR(many, "");
}

/* Base64 of s[0..n) appended to out. */
static void add_b64(llm_buf *out, const char *s, size_t n)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)u[i] << 16 | (i + 1 < n ? (unsigned)u[i + 1] << 8 : 0) |
		             (i + 2 < n ? u[i + 2] : 0);
		char q[4] = { a[v >> 18 & 63], a[v >> 12 & 63], i + 1 < n ? a[v >> 6 & 63] : '=',
		              i + 2 < n ? a[v & 63] : '=' };
		llm_buf_add(out, q, 4);
	}
}

/* The byte index holds a token of up to 15 bytes as its own key, its length beside the
 * zero-padded bytes: tokens that differ by trailing NUL bytes, and tokens on both sides of
 * the 15 bytes, are each found under their own bytes only. */
static void test_byte_index(void)
{
	static const struct {
		const char *s;
		size_t n;
	} t[] = {
		{ "a\0", 2 }, { "\0\0", 2 }, { "\0\0\0", 3 }, { "abcdefgh", 8 }, { "abcdefgh\0", 9 },
		{ "abcdefghijklmn", 14 }, { "abcdefghijklmno", 15 }, { "abcdefghijklmnop", 16 },
		{ "abcdefghijklmnopq", 17 }, { "xyz\0\0\0\0\0\0\0\0\0\0\0\0", 15 },
		{ "xyz\0\0\0\0\0\0\0\0\0\0\0\0\0", 16 },
	};
	static const struct {
		const char *s;
		size_t n;
	} absent[] = {
		{ "a\0\0", 3 }, { "\0\0\0\0", 4 }, { "abcdefgh\0\0", 10 }, { "abcdefghijklmno\0", 16 },
		{ "abcdefghijklmnoq", 16 }, { "xyz\0\0\0\0\0\0\0\0\0\0\0", 14 }, { "abcdefghijklm", 13 },
	};
	llm_buf f = LLM_BUF_INIT;
	for (unsigned c = 0; c < 256; c++) {
		char ch = (char)c, line[16];
		add_b64(&f, &ch, 1);
		snprintf(line, sizeof line, " %u\n", c);
		llm_buf_adds(&f, line);
	}
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		char line[16];
		add_b64(&f, t[i].s, t[i].n);
		snprintf(line, sizeof line, " %zu\n", 256 + i);
		llm_buf_adds(&f, line);
	}
	llm_bpe *b;
	CHECK_EQ_INT(llm_bpe_load_tiktoken(&b, f.p, f.len, "t", NULL, "\\p{L}+|.", NULL, 0, NULL),
	             LLM_OK);
	if (b) {
		for (unsigned c = 0; c < 256; c++) {
			char ch = (char)c;
			CHECK(bpe_bytes_id(b, &ch, 1) == c);
		}
		for (size_t i = 0; i < sizeof t / sizeof *t; i++)
			CHECK(bpe_bytes_id(b, t[i].s, t[i].n) == (int64_t)(256 + i));
		for (size_t i = 0; i < sizeof absent / sizeof *absent; i++)
			CHECK(bpe_bytes_id(b, absent[i].s, absent[i].n) == -1);
		llm_bpe_free(b);
	}
	llm_buf_release(&f);
}

int main(void)
{
	RUN(test_same_tables_on_any_threads);
	RUN(test_byte_index);
	if (!mkdtemp(tmpdir))
		return 1;
	RUN(test_rank_errors_across_chunks);
	rmdir(tmpdir);
	return unit_done();
}
