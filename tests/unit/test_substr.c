/*
 * test_substr.c — exact substring dedup against a brute-force oracle: every window of
 * min_len bytes that occurs at an earlier position is found, and nothing else is removed,
 * whatever the shard size (one shard or many, so that the merge of suffix arrays is tested).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "dedup/substr.h"
#include "unit.h"

/* The removed bytes of every document by definition: a byte goes when it lies in a window of
 * its document whose bytes occur at an earlier window start of the corpus; then every
 * character with a removed byte goes whole. */
static void oracle(const char *t, const size_t *start, size_t ndocs, size_t k, char *gone)
{
	size_t n = start[ndocs];
	memset(gone, 0, n);
	for (size_t d = 0; d < ndocs; d++)
		for (size_t p = start[d]; p + k <= start[d + 1]; p++) {
			int dup = 0;
			for (size_t e = 0; e <= d && !dup; e++)
				for (size_t q = start[e]; q + k <= start[e + 1] && q < p && !dup; q++)
					dup = !memcmp(t + q, t + p, k);
			if (dup)
				memset(gone + p, 1, k);
		}
	for (size_t d = 0; d < ndocs; d++)
		for (size_t p = start[d]; p < start[d + 1];) {
			size_t len = 1;
			while (p + len < start[d + 1] && ((unsigned char)t[p + len] & 0xC0) == 0x80)
				len++;
			int any = 0;
			for (size_t i = 0; i < len; i++)
				any |= gone[p + i];
			memset(gone + p, any, len);
			p += len;
		}
}

static void run_case(uint64_t seed, int utf8, size_t k, size_t budget)
{
	static const char *const alpha[] = { "a", "b", "c", "\xc3\xa9", "\xe4\xb8\xad" };
	llm_rng r;
	llm_rng_seed(&r, seed);
	enum { DOCS = 40 };
	char *t = malloc(DOCS * 400);
	size_t start[DOCS + 1], n = 0;
	for (size_t d = 0; d < DOCS; d++) {
		start[d] = n;
		size_t len = llm_rng_below(&r, 60);
		for (size_t i = 0; i < len; i++) {
			/* copy a run of an earlier place now and then, so that long repeats exist */
			if (n > 20 && llm_rng_below(&r, 20) == 0) {
				size_t from = llm_rng_below(&r, n - 10), m = 5 + llm_rng_below(&r, 20);
				for (size_t j = 0; j < m && from + j < n; j++)
					t[n++] = t[from + j];
				continue;
			}
			const char *a = alpha[llm_rng_below(&r, utf8 ? 5 : 3)];
			size_t al = strlen(a);
			memcpy(t + n, a, al);
			n += al;
		}
	}
	start[DOCS] = n;
	char *gone = malloc(n + 1), *got = calloc(n + 1, 1);
	llm_substr *s = llm_substr_new(k, budget, NULL);
	for (size_t d = 0; d < DOCS; d++)
		CHECK_EQ_INT(llm_substr_add(s, t + start[d], start[d + 1] - start[d]), 0);
	CHECK_EQ_INT(llm_substr_finish(s), 0);
	for (size_t d = 0; d < DOCS; d++) {
		const uint64_t *sp;
		size_t ns;
		CHECK_EQ_INT(llm_substr_next(s, t + start[d], start[d + 1] - start[d], &sp, &ns), 0);
		for (size_t i = 0; i < ns; i++) {
			CHECK(sp[2 * i] < sp[2 * i + 1] && sp[2 * i + 1] <= start[d + 1] - start[d]);
			CHECK(i == 0 || sp[2 * i] > sp[2 * i - 1]);
			memset(got + start[d] + sp[2 * i], 1, sp[2 * i + 1] - sp[2 * i]);
		}
	}
	oracle(t, start, DOCS, k, gone);
	size_t differ = 0, removed = 0;
	for (size_t i = 0; i < n; i++) {
		differ += got[i] != gone[i];
		removed += gone[i];
	}
	CHECK_EQ_INT(differ, 0);
	CHECK(removed > 0 && removed < n); /* the case is not trivial */
	llm_substr_stats st;
	llm_substr_get_stats(s, &st);
	CHECK_EQ_INT(st.removed, removed);
	CHECK_EQ_INT(st.bytes, n);
	if (budget < 5 * n)
		CHECK(st.shards > 1);
	llm_substr_free(s);
	free(t);
	free(gone);
	free(got);
}

static void test_oracle(void)
{
	for (uint64_t seed = 1; seed <= 12; seed++) {
		run_case(seed, 0, 4 + seed % 5, (size_t)1 << 30);  /* one shard */
		run_case(seed, 0, 4 + seed % 5, 5 * 300);          /* shards of 300 bytes */
		run_case(seed, 1, 6 + seed % 5, 5 * 256);          /* UTF-8: whole characters */
	}
}

/* Windows longer than the 8 bytes of each window the merge keeps, so that it compares the
 * text past them; shard counts odd and even, so that the merge tree is uneven too. */
static void test_oracle_long(void)
{
	for (uint64_t seed = 13; seed <= 24; seed++) {
		run_case(seed, 0, 9 + seed % 4, 5 * (256 + 97 * (seed % 5)));
		run_case(seed, 1, 9 + seed % 4, 5 * 400);
	}
}

static void test_changed_input(void)
{
	llm_substr *s = llm_substr_new(4, 1 << 20, NULL);
	CHECK_EQ_INT(llm_substr_add(s, "abcdefgh", 8), 0);
	CHECK_EQ_INT(llm_substr_add(s, "xxabcdefyy", 10), 0);
	CHECK_EQ_INT(llm_substr_finish(s), 0);
	const uint64_t *sp;
	size_t ns;
	CHECK_EQ_INT(llm_substr_next(s, "abcdefgh", 8, &sp, &ns), 0);
	CHECK_EQ_INT(ns, 0);
	CHECK_EQ_INT(llm_substr_next(s, "xxabcdefyy", 10, &sp, &ns), 0);
	CHECK(ns == 1 && sp[0] == 2 && sp[1] == 8);
	CHECK(llm_substr_next(s, "more", 4, &sp, &ns) != 0);
	llm_substr_free(s);
}

static void test_cut(void)
{
	static const uint64_t spans[] = { 0, 2, 4, 6, 9, 10 };
	llm_buf out = LLM_BUF_INIT;
	llm_substr_cut("abcdefghij", 10, spans, 3, &out);
	CHECK_STR(out.p, "cdghi");
	llm_buf_reset(&out);
	llm_substr_cut("abc", 3, NULL, 0, &out);
	CHECK_STR(out.p, "abc");
	llm_buf_release(&out);
}

int main(void)
{
	RUN(test_oracle);
	RUN(test_oracle_long);
	RUN(test_changed_input);
	RUN(test_cut);
	return unit_done();
}
