/*
 * test_bpe_load.c — the tables a loader builds (lib/tok/bpe_load.c) do not depend on the
 * threads that built them: the rank files, GPT-2's tokenizer.json and vocab.json + merges.txt
 * and a character-level tokenizer.json, each loaded on 1, 2 and 3 threads, hash the same
 * (tokens, byte index, pair lists, backtracking tables), and different files differently.
 */
#include <string.h>

#include "core/err.h"
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

int main(void)
{
	RUN(test_same_tables_on_any_threads);
	return unit_done();
}
