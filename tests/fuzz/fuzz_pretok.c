/*
 * Fuzz target: every hand-compiled pre-tokenizer (pretok_fast.h) against PCRE2 with the same
 * pattern, on arbitrary bytes, with and without gaps kept: the pieces (start, end, match or
 * gap) must be the same, and they must cover the input in order.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "tok/pretok.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXP 16

static llm_pretok *fast[MAXP][2], *ref[MAXP][2];
static llm_pretok_state *fs[MAXP][2], *rs[MAXP][2];
static size_t np;

static void add(const char *re)
{
	for (int g = 0; g < 2; g++) {
		if (llm_pretok_new(&fast[np][g], re, g) || llm_pretok_new_pcre2(&ref[np][g], re, g) ||
		    !llm_pretok_is_fast(fast[np][g]))
			abort();
		fs[np][g] = llm_pretok_state_new(fast[np][g]);
		rs[np][g] = llm_pretok_state_new(ref[np][g]);
	}
	np++;
}

static void init(void)
{
	static const char *const names[] = { "gpt2", "cl100k", "o200k", "llama3", "qwen", "qwen3.5" };
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		add(llm_pretok_named(names[i]));
	size_t n;
	const char *const *seq = llm_pretok_named_seq("deepseek", &n);
	for (size_t i = 0; i < n; i++)
		add(seq[i]);
	add("'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+");
}

/* llm_pretok_next_n must give PCRE2's pieces too, in batches of a size the input picks. */
static void same_batches(size_t i, int g, const char *s, size_t size)
{
	size_t max = size ? 1 + (unsigned char)s[0] % 8 : 1, a[8], z[8], got, ra, rz;
	llm_pretok_begin(fs[i][g], s, size);
	llm_pretok_begin(rs[i][g], s, size);
	int fr, rr;
	while ((fr = llm_pretok_next_n(fs[i][g], a, z, max, &got)) == LLM_OK) {
		if (got == 0 || got > max)
			abort();
		for (size_t j = 0; j < got; j++) {
			if ((rr = llm_pretok_next(rs[i][g], &ra, &rz)) == LLM_EINTERNAL)
				return;
			if (rr != LLM_OK || ra != a[j] || rz != z[j])
				abort();
		}
	}
	if (fr != LLM_EOF || got != 0)
		abort();
	if ((rr = llm_pretok_next(rs[i][g], &ra, &rz)) != LLM_EOF && rr != LLM_EINTERNAL)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!np) {
		llm_set_verbosity(0);
		init();
	}
	const char *s = (const char *)data;
	for (size_t i = 0; i < np; i++)
		for (int g = 0; g < 2; g++) {
			llm_pretok_begin(fs[i][g], s, size);
			llm_pretok_begin(rs[i][g], s, size);
			size_t last = 0;
			for (;;) {
				size_t fa = 0, fz = 0, ra = 0, rz = 0;
				int fr = llm_pretok_next(fs[i][g], &fa, &fz);
				int rr = llm_pretok_next(rs[i][g], &ra, &rz);
				if (rr == LLM_EINTERNAL) /* PCRE2 out of JIT stack: nothing to compare */
					break;
				if (fr != rr)
					abort();
				if (fr != LLM_OK)
					break;
				if (fa != ra || fz != rz || fa < last || fz <= fa || fz > size ||
				    llm_pretok_matched(fs[i][g]) != llm_pretok_matched(rs[i][g]))
					abort();
				if (g && fa != last) /* with gaps kept the pieces tile the input */
					abort();
				last = fz;
			}
			same_batches(i, g, s, size);
		}
	return 0;
}
