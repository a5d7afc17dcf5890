/*
 * Fuzz target: the three tokenizer loaders of bpe.h. The first byte picks the format:
 * 't' a tiktoken rank file, 'h' a Hugging Face tokenizer.json, 'g' a GPT-2 vocab.json and
 * merges.txt separated by a NUL byte. A tokenizer that loads must also work: a few strings
 * (and the input itself) are encoded and decoded back, which must give the same bytes when
 * the tokenizer is lossless (llm_bpe_roundtrips), and the ids must be those of the
 * merge-by-rank encoder where backtracking BPE (bpe_bt.c) took its place.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "tok/bpe.h"
#include "tok/bpe_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void roundtrip(llm_bpe_enc *e, llm_bpe_enc *ref, const llm_bpe *b, const char *s, size_t n)
{
	llm_ids ids, want;
	llm_ids_init(&ids);
	llm_ids_init(&want);
	llm_buf back = LLM_BUF_INIT;
	int rc = llm_bpe_encode(e, s, n, LLM_BPE_SPECIAL_ALLOW, &ids);
	if (llm_bpe_encode(ref, s, n, LLM_BPE_SPECIAL_ALLOW, &want) != rc || ids.n != want.n ||
	    (ids.n && memcmp(ids.v, want.v, ids.n * sizeof *ids.v) != 0))
		abort();
	llm_ids_release(&want);
	if (rc == LLM_OK) {
		if (llm_bpe_decode(b, ids.v, ids.n, &back) != LLM_OK)
			abort();
		if (llm_bpe_roundtrips(b) && (back.len != n || (n && memcmp(back.p, s, n) != 0)))
			abort();
	}
	llm_ids_release(&ids);
	llm_buf_release(&back);
}

static void exercise(const llm_bpe *b, const uint8_t *data, size_t size)
{
	llm_bpe_enc *e = llm_bpe_enc_new(b), *ref = llm_bpe_enc_new(b);
	bpe_enc_reference(ref, true);
	static const char *const texts[] = { "", "hello world", "  \n\n x<|endoftext|>y",
		                             "\xe4\xb8\xad\xe6\x96\x87 123456 \xff\xfe", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" };
	for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
		roundtrip(e, ref, b, texts[i], strlen(texts[i]));
	roundtrip(e, ref, b, (const char *)data, size > 4096 ? 4096 : size);
	llm_bpe_enc_free(e);
	llm_bpe_enc_free(ref);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	llm_set_verbosity(0);
	const char *d = (const char *)data + 1;
	size_t n = size - 1;
	llm_bpe *b = NULL;
	switch (data[0]) {
	case 't':
		llm_bpe_load_tiktoken(&b, d, n, "fuzz", "gpt2", NULL, NULL, 0, NULL);
		break;
	case 'h':
		llm_bpe_load_hf(&b, d, n, "fuzz.json", NULL);
		break;
	case 'g': {
		const char *z = memchr(d, 0, n);
		if (!z)
			return 0;
		llm_bpe_load_gpt2(&b, d, (size_t)(z - d), z + 1, n - (size_t)(z - d) - 1, "fuzz", "fuzz-merges", NULL);
		break;
	}
	default:
		return 0;
	}
	if (b)
		exercise(b, data, size);
	llm_bpe_free(b);
	return 0;
}
