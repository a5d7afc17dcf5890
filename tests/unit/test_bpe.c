/*
 * test_bpe.c — byte-level BPE against the reference ids of tiktoken and Hugging Face: the 61
 * tricky strings for r50k, cl100k, o200k (and llama3, qwen when the restricted files are
 * present), the U+180E strings where a plain PCRE2 \s goes wrong, the three GPT-2 loaders,
 * the heap merge against a naive tiktoken merge, and decode(encode(x)) == x for random bytes.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/hash.h"
#include "core/io.h"
#include "core/json.h"
#include "tok/bpe.h"
#include "unit.h"

static llm_bpe *load(const char *rel, const char *merges_rel, const char *enc)
{
	char path[4096], merges[4096];
	snprintf(path, sizeof path, "%s", unit_path(rel));
	if (merges_rel)
		snprintf(merges, sizeof merges, "%s", unit_path(merges_rel));
	llm_bpe *b;
	int rc = llm_bpe_load(&b, path, merges_rel ? merges : NULL, enc, NULL);
	if (rc) {
		printf("#   load %s: %s\n", rel, llm_last_error());
		return NULL;
	}
	return b;
}

/* Read a JSON array of integers. */
static void json_ids(const llm_json_val *arr, llm_ids *out)
{
	size_t it = 0;
	llm_json_val k, v;
	out->n = 0;
	while (llm_json_next(arr, &it, &k, &v) == LLM_OK) {
		int64_t x = -1;
		llm_json_i64(&v, &x);
		llm_ids_push(out, (uint32_t)x);
	}
}

static int same_ids(const llm_ids *a, const llm_ids *b)
{
	return a->n == b->n && (a->n == 0 || memcmp(a->v, b->v, a->n * sizeof *a->v) == 0);
}

static void print_ids(const char *what, const llm_ids *x)
{
	printf("#     %s:", what);
	for (size_t i = 0; i < x->n; i++)
		printf(" %u", x->v[i]);
	printf("\n");
}

/* Every vector of a vectors_*.jsonl file; with_ordinary also checks ids_ordinary. Returns
 * the number of vectors checked. */
static int check_vectors(llm_bpe *b, const char *path, int with_ordinary)
{
	llm_reader *r;
	if (llm_reader_open(&r, path)) {
		printf("#   %s\n", llm_last_error());
		unit_cur_failed = 1;
		return 0;
	}
	llm_bpe_enc *e = llm_bpe_enc_new(b);
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	llm_buf text = LLM_BUF_INIT, back = LLM_BUF_INIT;
	/* never NULL, so that comparing empty texts passes memcmp valid pointers */
	llm_buf_grow(&text, 1);
	llm_buf_grow(&back, 1);
	llm_ids want, got;
	llm_ids_init(&want);
	llm_ids_init(&got);
	char *line;
	size_t len;
	int n = 0;
	while (llm_reader_line(r, &line, &len) == LLM_OK) {
		CHECK_EQ_INT(llm_json_parse(&rec, line, len), LLM_OK);
		llm_buf_reset(&text);
		CHECK_EQ_INT(llm_json_get_str(&rec, "text", &text), LLM_OK);
		/* each text twice: checked again by the pre-tokenizer, and known to be valid UTF-8
		 * (a JSON string's) */
		for (int k = 0; k < 2 * (with_ordinary + 1); k++) {
			int ord = k >> 1;
			llm_bpe_enc_valid_utf8(e, k & 1);
			json_ids(llm_json_get(&rec, ord ? "ids_ordinary" : "ids"), &want);
			got.n = 0;
			CHECK_EQ_INT(llm_bpe_encode(e, text.p, text.len,
			                            ord ? LLM_BPE_SPECIAL_IGNORE : LLM_BPE_SPECIAL_ALLOW, &got),
			             LLM_OK);
			if (!same_ids(&want, &got)) {
				llm_buf name = LLM_BUF_INIT;
				llm_json_get_str(&rec, "name", &name);
				printf("#   %s: %s%s differs\n", path, name.p, ord ? " (ordinary)" : "");
				print_ids("want", &want);
				print_ids("got ", &got);
				llm_buf_release(&name);
				unit_cur_failed = 1;
			}
			llm_buf_reset(&back);
			CHECK_EQ_INT(llm_bpe_decode(b, got.v, got.n, &back), LLM_OK);
			CHECK_MEM(back.p, back.len, text.p, text.len);
		}
		n++;
	}
	llm_reader_free(r);
	llm_json_rec_release(&rec);
	llm_buf_release(&text);
	llm_buf_release(&back);
	llm_ids_release(&want);
	llm_ids_release(&got);
	llm_bpe_enc_free(e);
	return n;
}

static void vectors_for(const char *tok, const char *merges, const char *enc, const char *vec,
                        int with_ordinary)
{
	llm_bpe *b = load(tok, merges, enc);
	CHECK(b != NULL);
	if (!b)
		return;
	CHECK_EQ_INT(check_vectors(b, unit_path(vec), with_ordinary), 61);
	llm_bpe_free(b);
}

static void test_r50k(void)
{
	vectors_for("tests/data/tokenize/r50k_base.tiktoken.zst", NULL, NULL,
	            "tests/data/tokenize/vectors_r50k_base.jsonl", 1);
}

static void test_cl100k(void)
{
	vectors_for("tests/data/tokenize/cl100k_base.tiktoken.zst", NULL, NULL,
	            "tests/data/tokenize/vectors_cl100k_base.jsonl", 1);
}

static void test_o200k(void)
{
	vectors_for("tests/data/tokenize/o200k_base.tiktoken.zst", NULL, NULL,
	            "tests/data/tokenize/vectors_o200k_base.jsonl", 1);
}

/* Hugging Face always splits off added tokens, so only "ids" (allowed specials) applies; for
 * GPT-2 they equal tiktoken's r50k. */
static void test_hf_tokenizer_json(void)
{
	vectors_for("tests/data/tokenize/hf_gpt2/tokenizer.json.zst", NULL, NULL,
	            "tests/data/tokenize/vectors_r50k_base.jsonl", 0);
}

static void test_hf_resaved_pair_merges(void)
{
	vectors_for("tests/data/tokenize/hf_gpt2/tokenizer.resaved-tokenizers-0.23.2.json.zst", NULL,
	            NULL, "tests/data/tokenize/vectors_r50k_base.jsonl", 0);
}

static void test_gpt2_vocab_merges(void)
{
	vectors_for("tests/data/tokenize/hf_gpt2/vocab.json.zst", "tests/data/tokenize/hf_gpt2/merges.txt.zst",
	            NULL, "tests/data/tokenize/vectors_r50k_base.jsonl", 0);
}

/* The restricted tokenizers are not part of the project: checked only where they exist. */
static void restricted(const char *file, const char *enc, const char *vec)
{
	char tok[512], v[512];
	snprintf(tok, sizeof tok, "../shared/data/tokenizers/restricted/%s", file);
	snprintf(v, sizeof v, "../shared/data/tokenizers/%s", vec);
	if (access(unit_path(tok), R_OK) || access(unit_path(v), R_OK)) {
		unit_skip("restricted tokenizer not present");
		return;
	}
	vectors_for(tok, NULL, enc, v, 1);
}

static void test_llama3(void)
{
	restricted("llama3_tokenizer.model", "llama3", "vectors_llama3.jsonl");
}

static void test_qwen(void)
{
	restricted("qwen.tiktoken", "qwen", "vectors_qwen.jsonl");
}

static void test_crlf_rank_file(void)
{
	const char *rel = "../shared/data/tokenizers/restricted/qwen_crlf_first1000.tiktoken";
	if (access(unit_path(rel), R_OK)) {
		unit_skip("restricted tokenizer not present");
		return;
	}
	char *d;
	size_t n;
	CHECK_EQ_INT(llm_read_file(unit_path(rel), &d, &n), LLM_OK);
	CHECK(memchr(d, '\r', n) != NULL);
	llm_bpe *b;
	/* 1000 ranks: no specials of qwen fit, so name the pattern only. */
	CHECK_EQ_INT(llm_bpe_load_tiktoken(&b, d, n, "crlf", NULL, "\\p{L}+|\\s+|.", NULL, 0, NULL), LLM_OK);
	CHECK_EQ_INT(llm_bpe_vocab_size(b), 1000);
	size_t tl;
	const char *t = llm_bpe_token(b, 999, &tl);
	CHECK(t && memchr(t, '\r', tl) == NULL);
	llm_bpe_free(b);
	free(d);
}

/* Strings where PCRE2's UCP \s (matching U+180E) would give other ids than tiktoken: the
 * file holds [text, ids with PCRE2's \s, tiktoken's ids]. */
static void test_u180e(void)
{
	char *d;
	size_t n;
	CHECK_EQ_INT(llm_read_file(unit_path("tests/data/tokenize/pcre2_u180e_divergence.json"), &d, &n), LLM_OK);
	llm_json_val root, k, enc, item;
	size_t ep;
	const char *em;
	CHECK_EQ_INT(llm_json_parse_value(d, n, &root, &ep, &em), LLM_OK);
	size_t it = 0;
	int checked = 0;
	llm_buf text = LLM_BUF_INIT;
	llm_ids want, got;
	llm_ids_init(&want);
	llm_ids_init(&got);
	while (llm_json_next(&root, &it, &k, &enc) == LLM_OK) {
		llm_buf name = LLM_BUF_INIT;
		llm_json_str(&k, &name);
		char rel[256];
		snprintf(rel, sizeof rel, "tests/data/tokenize/%s.tiktoken.zst", name.p);
		llm_bpe *b = load(rel, NULL, NULL);
		CHECK(b != NULL);
		llm_buf_release(&name);
		if (!b)
			continue;
		llm_bpe_enc *e = llm_bpe_enc_new(b);
		size_t it2 = 0;
		while (llm_json_next(&enc, &it2, &k, &item) == LLM_OK) {
			size_t it3 = 0;
			llm_json_val t, pcre, ref;
			llm_json_next(&item, &it3, &k, &t);
			llm_json_next(&item, &it3, &k, &pcre);
			llm_json_next(&item, &it3, &k, &ref);
			llm_buf_reset(&text);
			llm_json_str(&t, &text);
			json_ids(&ref, &want);
			got.n = 0;
			llm_bpe_encode(e, text.p, text.len, LLM_BPE_SPECIAL_ALLOW, &got);
			CHECK(same_ids(&want, &got));
			checked++;
		}
		llm_bpe_enc_free(e);
		llm_bpe_free(b);
	}
	CHECK(checked >= 30);
	llm_buf_release(&text);
	llm_ids_release(&want);
	llm_ids_release(&got);
	free(d);
}

/* tiktoken's merge, written as plainly as possible: repeatedly merge the adjacent pair whose
 * concatenated bytes have the lowest rank, leftmost on ties. */
static void naive_merge(const llm_bpe *b, const unsigned char *s, size_t n, llm_ids *out)
{
	/* bytes -> rank through a linear search over a sorted copy would be slow; a small open
	 * hash of the vocabulary keeps this independent of bpe.c's tables. */
	static uint32_t *tab;
	static size_t mask;
	static const llm_bpe *for_b;
	if (for_b != b) {
		free(tab);
		mask = 1;
		while (mask < 4 * (size_t)llm_bpe_vocab_size(b))
			mask <<= 1;
		tab = calloc(mask, sizeof *tab);
		mask--;
		for (uint32_t id = 0; id < llm_bpe_vocab_size(b); id++) {
			size_t l;
			const char *t = llm_bpe_token(b, id, &l);
			if (!t || llm_bpe_is_special(b, id))
				continue;
			size_t i = llm_hash64(t, l, 7) & mask;
			while (tab[i])
				i = (i + 1) & mask;
			tab[i] = id + 1;
		}
		for_b = b;
	}
	size_t *start = malloc((n + 1) * sizeof *start), parts = n + 1;
	for (size_t i = 0; i <= n; i++)
		start[i] = i;
	for (;;) {
		uint32_t best = UINT32_MAX;
		size_t bi = 0;
		for (size_t i = 0; i + 2 < parts; i++) {
			const unsigned char *p = s + start[i];
			size_t l = start[i + 2] - start[i];
			for (size_t h = llm_hash64(p, l, 7) & mask; tab[h]; h = (h + 1) & mask) {
				size_t tl;
				const char *t = llm_bpe_token(b, tab[h] - 1, &tl);
				if (tl == l && memcmp(t, p, l) == 0) {
					if (tab[h] - 1 < best) {
						best = tab[h] - 1;
						bi = i;
					}
					break;
				}
			}
		}
		if (best == UINT32_MAX)
			break;
		memmove(start + bi + 1, start + bi + 2, (parts - bi - 2) * sizeof *start);
		parts--;
	}
	for (size_t i = 0; i + 1 < parts; i++) {
		const unsigned char *p = s + start[i];
		size_t l = start[i + 1] - start[i];
		for (size_t h = llm_hash64(p, l, 7) & mask; tab[h]; h = (h + 1) & mask) {
			size_t tl;
			const char *t = llm_bpe_token(b, tab[h] - 1, &tl);
			if (tl == l && memcmp(t, p, l) == 0) {
				llm_ids_push(out, tab[h] - 1);
				break;
			}
		}
	}
	free(start);
}

/* Single long pieces (one \p{L}+ run, beyond the linear-scan limit) from a small alphabet, so
 * that many merges compete: the heap path must agree with the naive merge. */
static void test_long_pieces_match_naive(void)
{
	llm_bpe *b = load("tests/data/tokenize/cl100k_base.tiktoken.zst", NULL, NULL);
	CHECK(b != NULL);
	if (!b)
		return;
	llm_bpe_enc *e = llm_bpe_enc_new(b);
	llm_rng rng;
	llm_rng_seed(&rng, 42);
	llm_ids want, got;
	llm_ids_init(&want);
	llm_ids_init(&got);
	static const char alpha[] = "aeinrstlo";
	char s[1200];
	for (int round = 0; round < 40; round++) {
		size_t n = 20 + llm_rng_below(&rng, 1100);
		for (size_t i = 0; i < n; i++)
			s[i] = alpha[llm_rng_below(&rng, sizeof alpha - 1)];
		want.n = got.n = 0;
		naive_merge(b, (const unsigned char *)s, n, &want);
		CHECK_EQ_INT(llm_bpe_encode(e, s, n, LLM_BPE_SPECIAL_ALLOW, &got), LLM_OK);
		if (!same_ids(&want, &got)) {
			printf("#   piece of %zu bytes differs\n", n);
			unit_cur_failed = 1;
		}
	}
	llm_ids_release(&want);
	llm_ids_release(&got);
	llm_bpe_enc_free(e);
	llm_bpe_free(b);
}

/* Any bytes, invalid UTF-8 included, come back unchanged. */
static void test_roundtrip_random_bytes(void)
{
	llm_bpe *b = load("tests/data/tokenize/o200k_base.tiktoken.zst", NULL, NULL);
	CHECK(b != NULL);
	if (!b)
		return;
	llm_bpe_enc *e = llm_bpe_enc_new(b);
	llm_rng rng;
	llm_rng_seed(&rng, 7);
	llm_ids ids;
	llm_ids_init(&ids);
	llm_buf back = LLM_BUF_INIT;
	llm_buf_grow(&back, 1);
	char s[600];
	static const char *frag[] = { " ", "\n", "é", "\xe1\xa0\x8e", "<|endoftext|>", "中文", "\xff",
		                      "\xc3", "'s", "123", "\r\n", "\xf0\x9f\x91" };
	for (int round = 0; round < 300; round++) {
		size_t n = 0, want = llm_rng_below(&rng, 500);
		while (n < want) {
			if (llm_rng_below(&rng, 2)) {
				s[n++] = (char)llm_rng_below(&rng, 256);
			} else {
				const char *f = frag[llm_rng_below(&rng, sizeof frag / sizeof *frag)];
				size_t fl = strlen(f);
				memcpy(s + n, f, fl);
				n += fl;
			}
		}
		for (int mode = 0; mode < 2; mode++) {
			ids.n = 0;
			llm_buf_reset(&back);
			CHECK_EQ_INT(llm_bpe_encode(e, s, n, mode ? LLM_BPE_SPECIAL_IGNORE : LLM_BPE_SPECIAL_ALLOW,
			                            &ids), LLM_OK);
			CHECK_EQ_INT(llm_bpe_decode(b, ids.v, ids.n, &back), LLM_OK);
			CHECK_MEM(back.p, back.len, s, n);
		}
	}
	llm_ids_release(&ids);
	llm_buf_release(&back);
	llm_bpe_enc_free(e);
	llm_bpe_free(b);
}

static void test_special_modes(void)
{
	llm_bpe *b = load("tests/data/tokenize/cl100k_base.tiktoken.zst", NULL, NULL);
	CHECK(b != NULL);
	if (!b)
		return;
	CHECK_EQ_INT(llm_bpe_eos(b), 100257);
	CHECK_EQ_INT(llm_bpe_special_id(b, "<|endofprompt|>"), 100276);
	CHECK_EQ_INT(llm_bpe_vocab_size(b), 100277);
	llm_bpe_enc *e = llm_bpe_enc_new(b);
	llm_ids ids;
	llm_ids_init(&ids);
	const char *s = "a<|endoftext|>b";
	CHECK_EQ_INT(llm_bpe_encode(e, s, strlen(s), LLM_BPE_SPECIAL_ALLOW, &ids), LLM_OK);
	CHECK_EQ_INT(ids.n, 3);
	CHECK_EQ_INT(ids.v[1], 100257);
	ids.n = 0;
	CHECK_EQ_INT(llm_bpe_encode(e, s, strlen(s), LLM_BPE_SPECIAL_ERROR, &ids), LLM_EFORMAT);
	CHECK(strstr(llm_last_error(), "<|endoftext|>") != NULL);
	CHECK_EQ_INT(ids.n, 0);
	CHECK_EQ_INT(llm_bpe_encode(e, s, strlen(s), LLM_BPE_SPECIAL_IGNORE, &ids), LLM_OK);
	CHECK(ids.n > 3);
	uint32_t hole = 100270;
	llm_buf out = LLM_BUF_INIT;
	CHECK_EQ_INT(llm_bpe_decode(b, &hole, 1, &out), LLM_EINVAL);
	llm_buf_release(&out);
	llm_ids_release(&ids);
	llm_bpe_enc_free(e);
	llm_bpe_free(b);
}

/* Specials are found wherever they are, whether they all start with one byte (a memchr
 * search) or not (a table of first bytes): at the start, after a long text, at the end. */
static void test_special_search(void)
{
	static const char *const sets[] = {
		"{\"<|a|>\": 100300, \"<|bb|>\": 100301}",
		"{\"<|a|>\": 100300, \"[bb]\": 100301}",
	};
	llm_buf text = LLM_BUF_INIT;
	for (size_t k = 0; k < 2; k++)
		llm_buf_add(&text, "the quick brown fox jumps over the lazy dog, ", 45);
	for (size_t i = 0; i < 2; i++) {
		llm_bpe *b;
		char *data;
		size_t len;
		CHECK_EQ_INT(llm_read_file(unit_path("tests/data/tokenize/cl100k_base.tiktoken.zst"), &data,
		                           &len), LLM_OK);
		CHECK_EQ_INT(llm_bpe_load_tiktoken(&b, data, len, "cl100k_base.tiktoken", "cl100k", NULL,
		                                   sets[i], strlen(sets[i]), "specials"), LLM_OK);
		free(data);
		llm_bpe_enc *e = llm_bpe_enc_new(b);
		const char *second = i ? "[bb]" : "<|bb|>";
		llm_buf s = LLM_BUF_INIT;
		llm_buf_add(&s, "<|a|>", 5);
		llm_buf_add(&s, text.p, text.len);
		llm_buf_add(&s, second, strlen(second));
		llm_buf_add(&s, "<|", 2); /* a start that is no special */
		llm_buf_add(&s, text.p, text.len);
		llm_buf_add(&s, second, strlen(second));
		llm_ids ids, plain;
		llm_ids_init(&ids);
		llm_ids_init(&plain);
		CHECK_EQ_INT(llm_bpe_encode(e, s.p, s.len, LLM_BPE_SPECIAL_ALLOW, &ids), LLM_OK);
		CHECK_EQ_INT(llm_bpe_encode(e, text.p, text.len, LLM_BPE_SPECIAL_ALLOW, &plain), LLM_OK);
		CHECK(ids.n > 2 * plain.n + 3);
		CHECK_EQ_INT(ids.v[0], 100300);
		CHECK_EQ_INT(ids.v[1 + plain.n], 100301);
		CHECK_EQ_INT(ids.v[ids.n - 1], 100301);
		CHECK(memcmp(ids.v + 1, plain.v, plain.n * sizeof *plain.v) == 0);
		llm_ids_release(&ids);
		llm_ids_release(&plain);
		llm_buf_release(&s);
		llm_bpe_enc_free(e);
		llm_bpe_free(b);
	}
	llm_buf_release(&text);
}

/* Malformed rank files and tokenizer.json are refused with a message, never half-loaded. */
static void test_bad_files(void)
{
	static const struct {
		const char *data, *want;
	} tk[] = {
		{ "YQ== 0\nYg== x\n", "bad rank" },
		{ "YQ== 0\nYQ== 1\n", "same token" },
		{ "YQ== 0\nYg== 0\n", "appears twice" },
		{ "Y!== 0\n", "bad base64" },
		{ "YQ==\n", "expected" },
		{ "YQ== 99999999999\n", "bad rank" },
		{ "YQ== 0\n", "has no token" },
	};
	for (size_t i = 0; i < sizeof tk / sizeof *tk; i++) {
		llm_bpe *b = (llm_bpe *)1;
		CHECK_EQ_INT(llm_bpe_load_tiktoken(&b, tk[i].data, strlen(tk[i].data), "t", NULL, ".", NULL, 0, NULL), LLM_EFORMAT);
		CHECK(b == NULL);
		if (!strstr(llm_last_error(), tk[i].want))
			printf("#   case %zu: %s\n", i, llm_last_error());
		CHECK(strstr(llm_last_error(), tk[i].want) != NULL);
	}
	static const char *hf[] = {
		"{\"model\": {\"type\": \"WordPiece\", \"vocab\": {}}}",
		"{\"model\": {\"vocab\": {\"a\": 0}}, \"normalizer\": {\"type\": \"BertNormalizer\"}}",
		"{\"model\": {\"vocab\": {\"a\": 0}}, \"normalizer\": {\"type\": \"Sequence\", \"normalizers\": "
		"[{\"type\": \"NFC\"}, {\"type\": \"Precompiled\"}]}}",
		"{\"model\": {\"vocab\": {\"a\": 0}}, \"pre_tokenizer\": {\"type\": \"CharDelimiterSplit\"}}",
		"{\"model\": {\"vocab\": {\"a\": 0}}, \"decoder\": {\"type\": \"WordPiece\"}}",
		"{\"model\": {\"vocab\": {\"a\": 0}, \"continuing_subword_prefix\": \"##\"}}",
		"{\"model\": {\"vocab\": {\"a\": 0}}, \"pre_tokenizer\": {\"type\": \"Split\", "
		"\"pattern\": {\"Regex\": \"a\"}, \"behavior\": \"Sideways\"}}",
		"{\"model\": {\"vocab\": {\"a\": 0, \"b\": 0}}}",
		"{\"model\": {\"vocab\": []}}",
		"{\"model\": {\"vocab\": {\"a\": 0}, \"merges\": [\"a b\"]}}",
		"[1, 2]",
		"{\"model\": ",
	};
	for (size_t i = 0; i < sizeof hf / sizeof *hf; i++) {
		llm_bpe *b = (llm_bpe *)1;
		int rc = llm_bpe_load_hf(&b, hf[i], strlen(hf[i]), "t.json", NULL);
		CHECK(rc == LLM_EFORMAT || rc == LLM_EUNSUPPORTED);
		CHECK(b == NULL);
		/* what is not implemented is named */
		if (rc == LLM_EUNSUPPORTED)
			CHECK(strstr(llm_last_error(), "BertNormalizer") || strstr(llm_last_error(), "Precompiled") ||
			      strstr(llm_last_error(), "CharDelimiterSplit") || strstr(llm_last_error(), "WordPiece") ||
			      strstr(llm_last_error(), "continuing_subword_prefix"));
	}
}

int main(void)
{
	RUN(test_r50k);
	RUN(test_cl100k);
	RUN(test_o200k);
	RUN(test_hf_tokenizer_json);
	RUN(test_hf_resaved_pair_merges);
	RUN(test_gpt2_vocab_merges);
	RUN(test_llama3);
	RUN(test_qwen);
	RUN(test_crlf_rank_file);
	RUN(test_u180e);
	RUN(test_long_pieces_match_naive);
	RUN(test_roundtrip_random_bytes);
	RUN(test_special_modes);
	RUN(test_special_search);
	RUN(test_bad_files);
	return unit_done();
}
