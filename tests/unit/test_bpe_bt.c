/*
 * test_bpe_bt.c — backtracking BPE (lib/tok/bpe_bt.c) against the merge-by-rank encoder it
 * replaces, token for token: the rank files r50k, cl100k, o200k and the three GPT-2 files
 * (and llama3, qwen when the restricted files are present), on the test strings, the sample
 * corpus, random text made of vocabulary tokens glued together (long pieces that stress the
 * backtracking), runs of one character, and random bytes. A vocabulary whose tokens do not
 * all form after their parts (Llama 3's, a small one made so) gets the tables too: the
 * pieces that need those tokens must fall back on merging by rank.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/hash.h"
#include "core/io.h"
#include "core/json.h"
#include "tok/bpe.h"
#include "tok/bpe_internal.h"
#include "unit.h"

typedef struct {
	const llm_bpe *b;
	llm_bpe_enc *fast, *ref;
	llm_ids got, want;
	size_t docs, bad;
} pair;

static void pair_open(pair *p, const llm_bpe *b)
{
	memset(p, 0, sizeof *p);
	p->b = b;
	p->fast = llm_bpe_enc_new(b);
	p->ref = llm_bpe_enc_new(b);
	bpe_enc_reference(p->ref, true);
	llm_ids_init(&p->got);
	llm_ids_init(&p->want);
}

static void pair_close(pair *p)
{
	llm_bpe_enc_free(p->fast);
	llm_bpe_enc_free(p->ref);
	llm_ids_release(&p->got);
	llm_ids_release(&p->want);
}

static void compare(pair *p, const char *s, size_t n)
{
	p->got.n = p->want.n = 0;
	int a = llm_bpe_encode(p->fast, s, n, LLM_BPE_SPECIAL_IGNORE, &p->got);
	int r = llm_bpe_encode(p->ref, s, n, LLM_BPE_SPECIAL_IGNORE, &p->want);
	p->docs++;
	if (a != r || p->got.n != p->want.n ||
	    (p->got.n && memcmp(p->got.v, p->want.v, p->got.n * sizeof *p->got.v) != 0)) {
		if (p->bad++ < 3) {
			printf("#   %zu vs %zu ids on \"", p->got.n, p->want.n);
			for (size_t i = 0; i < n && i < 80; i++)
				printf((unsigned char)s[i] >= 0x20 && s[i] != '"' && s[i] != '\\' ? "%c" : "\\x%02x",
				       (unsigned char)s[i]);
			printf("\"\n");
		}
	}
}

static void on_test_strings(pair *p)
{
	char *d;
	size_t n;
	CHECK_EQ_INT(llm_read_file(unit_path("tests/data/tokenize/test_strings.json"), &d, &n), LLM_OK);
	llm_json_val arr, v, k;
	CHECK_EQ_INT(llm_json_parse_value(d, n, &arr, NULL, NULL), LLM_OK);
	size_t it = 0;
	while (llm_json_next(&arr, &it, &k, &v) == LLM_OK) {
		llm_json_val t = llm_json_member(&v, "text");
		size_t len;
		char *text = llm_json_dup_str(&t, &len);
		if (text)
			compare(p, text, len);
		free(text);
	}
	free(d);
}

/* At most max bytes of text from each file of the sample corpus. */
static void on_corpus(pair *p, size_t max)
{
	static const char *const files[] = { "books", "code", "legal", "news", "qa", "web", "wiki" };
	for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
		char rel[256];
		snprintf(rel, sizeof rel, "samples/corpus/%s.jsonl", files[f]);
		char *d;
		size_t n;
		CHECK_EQ_INT(llm_read_file(unit_path(rel), &d, &n), LLM_OK);
		llm_json_rec rec;
		llm_json_rec_init(&rec);
		llm_buf text = LLM_BUF_INIT;
		size_t used = 0;
		for (char *line = d, *nl; line < d + n && used < max; line = nl + 1) {
			nl = memchr(line, '\n', (size_t)(d + n - line));
			if (!nl)
				nl = d + n;
			llm_buf_reset(&text);
			if (llm_json_parse(&rec, line, (size_t)(nl - line)) != LLM_OK ||
			    llm_json_get_str(&rec, "text", &text) != LLM_OK)
				continue;
			used += text.len;
			compare(p, text.p, text.len);
		}
		llm_buf_release(&text);
		llm_json_rec_release(&rec);
		free(d);
	}
}

/* Random tokens of the vocabulary glued together, runs of one token, random bytes, random
 * three-byte characters (bpe_bt's table of them), short ASCII words. */
static void on_random(pair *p, uint64_t seed)
{
	llm_rng rng;
	llm_rng_seed(&rng, seed);
	uint32_t nt = llm_bpe_vocab_size(p->b);
	char s[4096];
	for (int round = 0; round < 3000; round++) {
		int kind = (int)llm_rng_below(&rng, 6);
		size_t n = 0, want = kind == 5 ? 2 + llm_rng_below(&rng, 31)
		                     : 1 + llm_rng_below(&rng, round % 10 == 0 ? 3000 : 200);
		size_t tl = 0;
		const char *tok = NULL;
		while (n < want) {
			if (kind == 3) { /* random bytes */
				s[n++] = (char)llm_rng_below(&rng, 256);
				continue;
			}
			if (kind == 4) { /* three-byte characters, any of them, one in 16 cut short */
				s[n++] = (char)(0xe0 | llm_rng_below(&rng, 16));
				for (int c = 0; c < 2 && n < sizeof s && llm_rng_below(&rng, 32); c++)
					s[n++] = (char)(0x80 | llm_rng_below(&rng, 64));
				continue;
			}
			if (!tok || kind != 2) {
				uint32_t id;
				do {
					id = (uint32_t)llm_rng_below(&rng, nt);
					tok = llm_bpe_token(p->b, id, &tl);
				} while (!tok || llm_bpe_is_special(p->b, id));
			}
			if (n + tl > sizeof s)
				break;
			/* kind 1: letters (ASCII or not) only, so that the whole text is one piece;
			 * kind 5: one ASCII word of at most 32 bytes, which merges by rank
			 * (merge_ranked in bpe.c; over 15 bytes, its pairs are found by hash) */
			bool letters = true;
			for (size_t i = 0; letters && i < tl && (kind == 1 || kind == 5); i++)
				letters = ((tok[i] | 32) >= 'a' && (tok[i] | 32) <= 'z') ||
				          ((unsigned char)tok[i] >= 0x80 && kind == 1);
			if (kind == 5 && letters && n + tl > 32)
				break;
			if (!letters) {
				want -= kind == 1;
				continue;
			}
			memcpy(s + n, tok, tl);
			n += tl;
		}
		compare(p, s, n);
	}
}

static void check_tokenizer(const char *rel, const char *merges_rel, const char *enc, bool want_bt)
{
	char path[4096], merges[4096];
	snprintf(path, sizeof path, "%s", unit_path(rel));
	if (merges_rel)
		snprintf(merges, sizeof merges, "%s", unit_path(merges_rel));
	llm_bpe *b;
	if (llm_bpe_load(&b, path, merges_rel ? merges : NULL, enc, NULL) != LLM_OK) {
		printf("#   load %s: %s\n", rel, llm_last_error());
		unit_cur_failed = 1;
		return;
	}
	CHECK((b->bt != NULL) == want_bt);
	pair p;
	pair_open(&p, b);
	on_test_strings(&p);
	on_corpus(&p, 300000);
	on_random(&p, llm_hash64(rel, strlen(rel), 0));
	printf("#   %s: %zu of %zu texts differ\n", rel, p.bad, p.docs);
	CHECK_EQ_INT(p.bad, 0);
	pair_close(&p);
	llm_bpe_free(b);
}

static void test_r50k(void) { check_tokenizer("tests/data/tokenize/r50k_base.tiktoken.zst", NULL, NULL, true); }
static void test_cl100k(void) { check_tokenizer("tests/data/tokenize/cl100k_base.tiktoken.zst", NULL, NULL, true); }
static void test_o200k(void) { check_tokenizer("tests/data/tokenize/o200k_base.tiktoken.zst", NULL, NULL, true); }
static void test_hf_gpt2(void) { check_tokenizer("tests/data/tokenize/hf_gpt2/tokenizer.json.zst", NULL, NULL, true); }

static void test_hf_gpt2_resaved(void)
{
	check_tokenizer("tests/data/tokenize/hf_gpt2/tokenizer.resaved-tokenizers-0.23.2.json.zst", NULL, NULL, true);
}

static void test_gpt2_vocab_merges(void)
{
	check_tokenizer("tests/data/tokenize/hf_gpt2/vocab.json.zst", "tests/data/tokenize/hf_gpt2/merges.txt.zst", NULL, true);
}

static void test_restricted(void)
{
	static const char *const rel[] = { "../shared/data/tokenizers/restricted/llama3_tokenizer.model",
		                           "../shared/data/tokenizers/restricted/qwen.tiktoken" };
	static const char *const enc[] = { "llama3", "qwen" };
	/* Llama 3's 28k tokens beyond cl100k include 81 that form before one of their parts
	 * (" nghi\xe1\xbb\x87", rank 100999, from " nghi", rank 116653): the pieces that
	 * need them merge by rank, the others backtrack. */
	for (size_t i = 0; i < 2; i++) {
		if (access(unit_path(rel[i]), R_OK)) {
			unit_skip("restricted tokenizers not present");
			return;
		}
		check_tokenizer(rel[i], NULL, enc[i], true);
	}
}

/* "abc" forms by ("ab", "c") at rank 256, before "ab" itself (257): merges out of order, for
 * which backtracking is not exact. A piece whose encoding tests "abc" against a neighbour
 * is left to the merge-by-rank encoder; the others backtrack. */
static void test_out_of_order_merges(void)
{
	llm_buf f = LLM_BUF_INIT;
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	for (unsigned c = 0; c < 256; c++) {
		char line[16];
		unsigned v = c << 16;
		snprintf(line, sizeof line, "%c%c== %u\n", b64[v >> 18 & 63], b64[v >> 12 & 63], c);
		llm_buf_add(&f, line, strlen(line));
	}
	llm_buf_add(&f, "YWJj 256\nYWI= 257\n", 18); /* "abc", "ab" */
	llm_bpe *b;
	CHECK_EQ_INT(llm_bpe_load_tiktoken(&b, f.p, f.len, "t", NULL, "\\p{L}+|.", NULL, 0, NULL), LLM_OK);
	if (b) {
		CHECK(b->bt != NULL);
		llm_bpe_enc *e = llm_bpe_enc_new(b);
		llm_ids ids;
		llm_ids_init(&ids);
		CHECK_EQ_INT(llm_bpe_encode(e, "abcab", 5, LLM_BPE_SPECIAL_IGNORE, &ids), LLM_OK);
		CHECK_EQ_INT(ids.n, 2);
		CHECK(ids.n == 2 && ids.v[0] == 256 && ids.v[1] == 257);
		bpe_pcache *pc = calloc((size_t)1 << BPE_PCACHE_BITS, sizeof *pc);
		bpe_bt_cache *cc = bpe_bt_cache_new();
		uint32_t out[8];
		uint64_t dead[1];
		CHECK(bpe_bt_encode(b, pc, cc, (const unsigned char *)"abcab", 5, out, dead) == SIZE_MAX);
		CHECK(bpe_bt_encode(b, pc, cc, (const unsigned char *)"abab", 4, out, dead) == 2 &&
		      out[0] == 257 && out[1] == 257);
		CHECK(bpe_bt_encode(b, pc, cc, (const unsigned char *)"abc", 3, out, dead) == 1 && out[0] == 256);
		free(pc);
		bpe_bt_cache_free(cc);
		pair p;
		pair_open(&p, b);
		static const char alphabet[] = "abcx";
		llm_rng rng;
		llm_rng_seed(&rng, 11);
		char s[40];
		for (int round = 0; round < 20000; round++) {
			size_t n = 1 + llm_rng_below(&rng, sizeof s);
			for (size_t i = 0; i < n; i++)
				s[i] = alphabet[llm_rng_below(&rng, 4)];
			compare(&p, s, n);
		}
		printf("#   %zu of %zu texts differ\n", p.bad, p.docs);
		CHECK_EQ_INT(p.bad, 0);
		pair_close(&p);
		llm_ids_release(&ids);
		llm_bpe_enc_free(e);
		llm_bpe_free(b);
	}
	llm_buf_release(&f);
}

/* The trie is built from the tokens in byte order, found by a radix sort of their first 8
 * bytes, zero-padded, and then a comparison sort where those are equal. "c\0\0" (258) and
 * "c\0" (259) have equal keys and ids out of byte order: without the second sort "c\0\0"
 * gets "c" as its longest shorter token, and backtracking over "c\0\0a" (BPE: "c\0",
 * "\0a") finds no encoding: the encoder then falls back on merging by rank, so the ids stay
 * right and only bpe_bt_encode itself shows the fault. Tokens longer than 8 bytes that share
 * 8 are ordered the same way. */
static void test_trie_byte_order(void)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	static const struct {
		const char *s;
		size_t n;
	} tok[] = {
		{ "\0a", 2 }, { "\0\0", 2 }, { "c\0\0", 3 }, { "c\0", 2 }, { "ab", 2 }, { "abc", 3 },
		{ "abcd", 4 }, { "abcde", 5 }, { "abcdef", 6 }, { "abcdefg", 7 }, { "abcdefgh", 8 },
		{ "abcdefgh2", 9 }, { "abcdefgh1", 9 }, { "abcdefgh12", 10 }, { "abcdefgh\0", 9 },
	};
	llm_buf f = LLM_BUF_INIT;
	for (size_t t = 0; t < 256 + sizeof tok / sizeof *tok; t++) {
		unsigned char raw[16];
		size_t n = 1;
		if (t < 256)
			raw[0] = (unsigned char)t;
		else
			memcpy(raw, tok[t - 256].s, n = tok[t - 256].n);
		char line[64];
		size_t k = 0;
		for (size_t i = 0; i < n; i += 3) { /* base64 */
			unsigned v = (unsigned)raw[i] << 16 | (i + 1 < n ? raw[i + 1] : 0) << 8 | (i + 2 < n ? raw[i + 2] : 0);
			line[k++] = b64[v >> 18 & 63];
			line[k++] = b64[v >> 12 & 63];
			line[k++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
			line[k++] = i + 2 < n ? b64[v & 63] : '=';
		}
		k += (size_t)snprintf(line + k, sizeof line - k, " %zu\n", t);
		llm_buf_add(&f, line, k);
	}
	llm_bpe *b;
	CHECK_EQ_INT(llm_bpe_load_tiktoken(&b, f.p, f.len, "t", NULL, "(?s).+", NULL, 0, NULL), LLM_OK);
	if (b) {
		CHECK(b->bt != NULL);
		pair p;
		pair_open(&p, b);
		static const char alphabet[] = { '\0', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', '1', '2' };
		compare(&p, "c\0\0a", 4);
		bpe_pcache *pc = calloc((size_t)1 << BPE_PCACHE_BITS, sizeof *pc);
		bpe_bt_cache *cc = bpe_bt_cache_new();
		uint32_t out[48];
		uint64_t dead[2];
		size_t fell_back = bpe_bt_encode(b, pc, cc, (const unsigned char *)"c\0\0a", 4, out, dead) == SIZE_MAX;
		llm_rng rng;
		llm_rng_seed(&rng, 7);
		char s[48];
		for (int round = 0; round < 20000; round++) {
			size_t n = 1 + llm_rng_below(&rng, sizeof s);
			for (size_t i = 0; i < n; i++) /* mostly the runs the tokens are made of */
				s[i] = llm_rng_below(&rng, 3) ? "abcdefgh12"[i % 10] : alphabet[llm_rng_below(&rng, sizeof alphabet)];
			if (round & 1)
				for (size_t i = 1; i < n; i++)
					s[i] = llm_rng_below(&rng, 2) ? '\0' : s[i];
			compare(&p, s, n);
			size_t k = bpe_bt_encode(b, pc, cc, (const unsigned char *)s, n, out, dead);
			fell_back += k == SIZE_MAX;
		}
		printf("#   %zu of %zu texts differ, %zu not encoded by backtracking\n", p.bad, p.docs, fell_back);
		CHECK_EQ_INT(p.bad, 0);
		CHECK_EQ_INT(fell_back, 0);
		free(pc);
		bpe_bt_cache_free(cc);
		pair_close(&p);
		llm_bpe_free(b);
	}
	llm_buf_release(&f);
}

int main(void)
{
	llm_set_verbosity(0);
	RUN(test_r50k);
	RUN(test_cl100k);
	RUN(test_o200k);
	RUN(test_hf_gpt2);
	RUN(test_hf_gpt2_resaved);
	RUN(test_gpt2_vocab_merges);
	RUN(test_restricted);
	RUN(test_out_of_order_merges);
	RUN(test_trie_byte_order);
	return unit_done();
}
