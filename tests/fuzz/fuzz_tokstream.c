/*
 * Fuzz target: the token stream reader. Every record it returns must be readable in full
 * (metadata, tokens, inputs), every token below the vocabulary size, and a stream that fails
 * must keep failing. The first byte picks what the remaining bytes are: a token stream, or
 * the JSON form of a length sketch (llm-shard --sketches reads those).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/sketch.h"
#include "tok/tokstream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void stream(const uint8_t *data, size_t size)
{
	llm_tokreader *r;
	if (llm_tokreader_open_mem(&r, data, size, "fuzz") != LLM_OK)
		return;
	const llm_tok_header *h = llm_tokreader_header(r);
	/* keep a corrupt count from costing the fuzzer gigabytes */
	llm_tokreader_set_max_tokens(r, (size_t)1 << 20);
	llm_tok_rec rec;
	int st;
	volatile uint64_t sink = 0;
	while ((st = llm_tokreader_next(r, &rec)) == LLM_OK) {
		for (size_t i = 0; i < rec.meta_len; i++)
			sink += (unsigned char)rec.meta[i];
		for (size_t i = 0; i < rec.n; i++) {
			if (rec.tokens[i] >= h->vocab_size || (rec.inputs && rec.inputs[i] >= h->vocab_size))
				abort();
			sink += rec.tokens[i] + (rec.inputs ? rec.inputs[i] : 0);
		}
	}
	if (st != LLM_EOF && llm_tokreader_next(r, &rec) != st)
		abort();
	llm_tokreader_free(r);
}

static void sketch(const uint8_t *data, size_t size)
{
	llm_sketch *s;
	if (llm_sketch_from_json(&s, (const char *)data, size) != LLM_OK)
		return;
	double prev = -1;
	for (int i = 0; i <= 20; i++) {
		double q = llm_sketch_quantile(s, i / 20.0);
		if (llm_sketch_count(s) && (!(q >= prev) || q > llm_sketch_max(s)))
			abort(); /* quantiles never decrease and stay within the extremes */
		prev = q;
	}
	llm_sketch *t = llm_sketch_new(llm_sketch_alpha(s));
	if (llm_sketch_merge(t, s) != LLM_OK || llm_sketch_count(t) != llm_sketch_count(s))
		abort();
	llm_sketch_free(t);
	llm_sketch_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] & 1)
		sketch(data + 1, size - 1);
	else
		stream(data + 1, size - 1);
	return 0;
}
