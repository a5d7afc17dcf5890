/* Unit tests for lib/text/aho: every occurrence of every pattern, checked against a direct
 * search of each pattern at each position, on random patterns over small alphabets (so that
 * patterns nest, overlap and share prefixes and suffixes), and the edge cases. */
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "text/aho.h"
#include "unit.h"

/* Occurrences as (end, len) pairs with the pattern's value, sorted by end then longest. */
typedef struct {
	size_t end;
	uint32_t len, value;
} occ;

static int cmp_occ(const void *x, const void *y)
{
	const occ *a = x, *b = y;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return a->len > b->len ? -1 : a->len < b->len;
}

static size_t scan(const llm_aho *a, const unsigned char *t, size_t n, occ *out)
{
	size_t k = 0;
	uint32_t s = LLM_AHO_START;
	for (size_t i = 0; i < n; i++) {
		uint32_t last = UINT32_MAX;
		for (uint32_t m = llm_aho_step(a, &s, t[i]); m != LLM_AHO_NONE; m = llm_aho_next(a, m)) {
			CHECK(llm_aho_len(a, m) < last); /* longest first */
			last = llm_aho_len(a, m);
			out[k++] = (occ){ i, llm_aho_len(a, m), llm_aho_value(a, m) };
		}
	}
	return k;
}

static void test_random(void)
{
	llm_rng rng;
	llm_rng_seed(&rng, 7);
	for (int round = 0; round < 200; round++) {
		int alpha = 2 + (int)llm_rng_below(&rng, round % 3 == 0 ? 254 : 3);
		size_t np = 1 + llm_rng_below(&rng, 60), n = llm_rng_below(&rng, 400);
		unsigned char pats[60][8], text[400];
		size_t plen[60];
		llm_aho *a = llm_aho_new();
		for (size_t i = 0; i < np; i++) {
			plen[i] = 1 + llm_rng_below(&rng, 7);
			for (size_t j = 0; j < plen[i]; j++)
				pats[i][j] = (unsigned char)(0x80 + llm_rng_below(&rng, (uint64_t)alpha));
			CHECK_EQ_INT(llm_aho_add(a, pats[i], plen[i], (uint32_t)i), 1);
		}
		for (size_t i = 0; i < n; i++)
			text[i] = (unsigned char)(0x80 + llm_rng_below(&rng, (uint64_t)alpha + 1));
		CHECK_EQ_INT(llm_aho_compile(a), LLM_OK);
		occ got[400 * 8], want[400 * 8];
		size_t ng = scan(a, text, n, got), nw = 0;
		/* direct search; a pattern added twice counts once, with its first value */
		for (size_t e = 0; e < n; e++)
			for (size_t i = 0; i < np; i++) {
				int dup = 0;
				for (size_t j = 0; j < i && !dup; j++)
					dup = plen[j] == plen[i] && memcmp(pats[j], pats[i], plen[i]) == 0;
				if (!dup && plen[i] <= e + 1 && memcmp(text + e + 1 - plen[i], pats[i], plen[i]) == 0)
					want[nw++] = (occ){ e, (uint32_t)plen[i], (uint32_t)i };
			}
		qsort(want, nw, sizeof *want, cmp_occ);
		CHECK_EQ_U64(ng, nw);
		for (size_t i = 0; i < ng && i < nw; i++) {
			CHECK_EQ_U64(got[i].end, want[i].end);
			CHECK_EQ_INT(got[i].len, want[i].len);
			CHECK_EQ_INT(got[i].value, want[i].value);
		}
		llm_aho_free(a);
	}
}

static void test_edges(void)
{
	llm_aho *a = llm_aho_new();
	CHECK_EQ_INT(llm_aho_add(a, "", 0, 1), 0);
	static char big[LLM_AHO_MAX_LEN + 1];
	CHECK_EQ_INT(llm_aho_add(a, big, sizeof big, 1), 0);
	CHECK_EQ_INT(llm_aho_add(a, "he", 2, 10), 1);
	CHECK_EQ_INT(llm_aho_add(a, "she", 3, 11), 1);
	CHECK_EQ_INT(llm_aho_add(a, "his", 3, 12), 1);
	CHECK_EQ_INT(llm_aho_add(a, "hers", 4, 13), 1);
	CHECK_EQ_INT(llm_aho_add(a, "he", 2, 99), 1); /* keeps 10 */
	CHECK_EQ_INT(llm_aho_add(a, "\0x", 2, 14), 1); /* NUL is a byte like any other */
	CHECK_EQ_INT(llm_aho_compile(a), LLM_OK);
	CHECK_EQ_INT(llm_aho_add(a, "late", 4, 1), 0);
	CHECK_EQ_U64(llm_aho_patterns(a), 5);
	CHECK_EQ_U64(llm_aho_max_len(a), 4);
	/* the classic example: "ushers" holds she, he and hers */
	occ got[16];
	size_t n = scan(a, (const unsigned char *)"ushers", 6, got);
	CHECK_EQ_U64(n, 3);
	CHECK(got[0].end == 3 && got[0].value == 11 && got[1].end == 3 && got[1].value == 10);
	CHECK(got[2].end == 5 && got[2].value == 13);
	n = scan(a, (const unsigned char *)"a\0x", 3, got);
	CHECK(n == 1 && got[0].value == 14);
	llm_aho_free(a);
	/* an empty automaton matches nothing */
	a = llm_aho_new();
	CHECK_EQ_INT(llm_aho_compile(a), LLM_OK);
	CHECK_EQ_U64(scan(a, (const unsigned char *)"abc", 3, got), 0);
	llm_aho_free(a);
	llm_aho_free(NULL);
}

int main(void)
{
	RUN(test_random);
	RUN(test_edges);
	return unit_done();
}
