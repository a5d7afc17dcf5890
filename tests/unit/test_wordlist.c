/*
 * test_wordlist.c — lib/wordlist: matching rules, and the compiled prefix-tree pattern
 * against a brute-force leftmost-longest matcher on random text.
 */
#include "unit.h"

#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/hash.h"
#include "text/wordlist.h"

static llm_wordlist *make(const char *const *words, size_t n, size_t cjk_min)
{
	llm_wordlist *w = llm_wordlist_new();
	llm_wordlist_set_cjk_min(w, cjk_min);
	for (size_t i = 0; i < n; i++)
		llm_wordlist_add(w, words[i], strlen(words[i]));
	CHECK_EQ_INT(llm_wordlist_compile(w), LLM_OK);
	return w;
}

static size_t hits(const llm_wordlist *w, const char *text)
{
	llm_wordlist_scratch *s = llm_wordlist_scratch_new(w);
	size_t n = llm_wordlist_scan(w, s, text, strlen(text), NULL, 0);
	llm_wordlist_scratch_free(s);
	return n;
}

static void test_latin_whole_words(void)
{
	static const char *const words[] = { "ass", "Bitch", "2 girls 1 cup", "s&m", "g-spot" };
	llm_wordlist *w = make(words, 5, 1);
	CHECK_EQ_INT(llm_wordlist_size(w), 5);
	CHECK_EQ_INT(hits(w, "This class assistant passed."), 0);
	CHECK_EQ_INT(hits(w, "ass"), 1);
	CHECK_EQ_INT(hits(w, "What an ASS! bitch, BITCH."), 3);
	CHECK_EQ_INT(hits(w, "ass1 1ass ass_ ass-"), 2); /* '_' and '-' are not letters or digits */
	CHECK_EQ_INT(hits(w, "2 girls\t\n 1  cup"), 1);
	CHECK_EQ_INT(hits(w, "2girls 1 cup"), 0);
	CHECK_EQ_INT(hits(w, "s&m and S&M"), 2);
	CHECK_EQ_INT(hits(w, "the g-spot"), 1);
	CHECK_EQ_INT(hits(w, "\xc3\xa9" "ass"), 0); /* é is a letter: no boundary */
	/* CJK letters are boundaries: Chinese runs into Latin words without spaces (你ass吧). */
	CHECK_EQ_INT(hits(w, "\xe4\xbd\xa0" "ass\xe5\x90\xa7"), 1);
	llm_wordlist_free(w);
}

static void test_offsets_and_limits(void)
{
	static const char *const words[] = { "foo", "foobar", "bar" };
	llm_wordlist *w = make(words, 3, 1);
	llm_wordlist_scratch *s = llm_wordlist_scratch_new(w);
	const char *t = "foobar foo bar";
	llm_wordlist_hit h[2];
	size_t n = llm_wordlist_scan(w, s, t, strlen(t), h, 2);
	CHECK_EQ_INT(n, 3); /* counted past the storage */
	CHECK_EQ_INT(h[0].off, 0);
	CHECK_EQ_INT(h[0].len, 6); /* the longest entry wins at a position */
	CHECK_EQ_INT(h[1].off, 7);
	CHECK_EQ_INT(h[1].len, 3);
	llm_wordlist_scratch_free(s);
	llm_wordlist_free(w);
}

static void test_unicode_case_and_scripts(void)
{
	static const char *const words[] = { "\xd0\xb1\xd0\xbb\xd1\x8f\xd0\xb4\xd1\x8c", /* блядь */
	                                     "\xe5\x82\xbb\xe9\x80\xbc",                 /* 傻逼 */
	                                     "\xe6\x80\xa7",                             /* 性 */
	                                     "\xf0\x9f\x96\x95" };                       /* 🖕 */
	llm_wordlist *w = make(words, 4, 1);
	/* Cyrillic upper case folds; a CJK entry matches inside a run of CJK text. */
	CHECK_EQ_INT(hits(w, "\xd0\x91\xd0\x9b\xd0\xaf\xd0\x94\xd0\xac!"), 1);
	CHECK_EQ_INT(hits(w, "\xe4\xbd\xa0\xe4\xb8\xaa\xe5\x82\xbb\xe9\x80\xbc\xe5\x90\xa7"), 1);
	CHECK_EQ_INT(hits(w, "\xe5\x8f\xaf\xe8\x83\xbd\xe6\x80\xa7"), 1); /* 可能性 */
	CHECK_EQ_INT(hits(w, "a\xf0\x9f\x96\x95" "b"), 1);               /* symbols need no boundary */
	llm_wordlist_free(w);
	/* Word and substring matches merge left to right; CJK entries fold ASCII case. */
	static const char *const mixed[] = { "ass", "\xe5\x82\xbb\xe9\x80\xbc", "sb\xe9\x80\xbc" };
	w = make(mixed, 3, 1);
	{
		const char *t = "ASS\xe5\x82\xbb\xe9\x80\xbc" "SB\xe9\x80\xbc" "ass";
		llm_wordlist_scratch *s = llm_wordlist_scratch_new(w);
		llm_wordlist_hit h[4];
		CHECK_EQ_INT(llm_wordlist_scan(w, s, t, strlen(t), h, 4), 4);
		CHECK_EQ_INT(h[0].off, 0);
		CHECK_EQ_INT(h[1].off, 3);
		CHECK_EQ_INT(h[2].off, 9);
		CHECK_EQ_INT(h[2].len, 5);
		CHECK_EQ_INT(h[3].off, 14);
		llm_wordlist_scratch_free(s);
	}
	llm_wordlist_free(w);
	/* With cjk_min 2 the single character is not loaded. */
	w = make(words, 4, 2);
	CHECK_EQ_INT(llm_wordlist_size(w), 3);
	CHECK_EQ_INT(hits(w, "\xe5\x8f\xaf\xe8\x83\xbd\xe6\x80\xa7"), 0);
	llm_wordlist_free(w);
}

static void test_invalid_utf8_and_edges(void)
{
	static const char *const words[] = { "ass", "  Ass  ", "", "   ", "b\xffq" };
	llm_wordlist *w = make(words, 5, 1);
	CHECK_EQ_INT(llm_wordlist_size(w), 2); /* "ass" once, blank entries dropped */
	CHECK_EQ_INT(hits(w, "\xff" "ass\xfe"), 1);
	CHECK_EQ_INT(hits(w, "\xc3" "ass"), 1);
	CHECK_EQ_INT(hits(w, ""), 0);
	llm_wordlist_free(w);
	llm_wordlist *e = llm_wordlist_new();
	CHECK_EQ_INT(llm_wordlist_compile(e), LLM_EINVAL);
	llm_wordlist_free(e);
	llm_wordlist_free(NULL);
}

static void test_load_file(void)
{
	llm_wordlist *w = llm_wordlist_new();
	CHECK_EQ_INT(llm_wordlist_load(w, unit_path("samples/wordlists/en_c4_25e679f")), LLM_OK);
	CHECK(llm_wordlist_size(w) >= 370 && llm_wordlist_size(w) <= 377);
	CHECK_EQ_INT(llm_wordlist_compile(w), LLM_OK);
	CHECK_EQ_INT(hits(w, "a perfectly ordinary sentence about classes"), 0);
	llm_wordlist_free(w);
	w = llm_wordlist_new();
	CHECK_EQ_INT(llm_wordlist_load(w, "/nonexistent/list"), LLM_EIO);
	CHECK(strstr(llm_last_error(), "/nonexistent/list") != NULL);
	llm_wordlist_free(w);
}

/* Brute force: leftmost-longest, non-overlapping, ASCII case-insensitive, whole words
 * (entries here are all alphanumeric). */
static int is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static size_t brute(char words[][8], size_t nw, const char *t, size_t n)
{
	size_t count = 0, i = 0;
	while (i < n) {
		size_t best = 0;
		if (i == 0 || !is_alnum(t[i - 1]))
			for (size_t k = 0; k < nw; k++) {
				size_t l = strlen(words[k]);
				if (l <= best || i + l > n || strncasecmp(t + i, words[k], l) != 0)
					continue;
				if (i + l < n && is_alnum(t[i + l]))
					continue;
				best = l;
			}
		if (best) {
			count++;
			i += best;
		} else {
			i++;
		}
	}
	return count;
}

static void test_random_against_brute_force(void)
{
	llm_rng r;
	llm_rng_seed(&r, 12345);
	static const char alpha[] = "abAB1 .";
	int bad = 0;
	for (int round = 0; round < 200; round++) {
		char words[12][8];
		const char *ptrs[12];
		size_t nw = 1 + llm_rng_below(&r, 12);
		for (size_t k = 0; k < nw; k++) {
			size_t l = 1 + llm_rng_below(&r, 4);
			for (size_t j = 0; j < l; j++)
				words[k][j] = "abAB1"[llm_rng_below(&r, 5)];
			words[k][l] = 0;
			ptrs[k] = words[k];
		}
		llm_wordlist *w = make(ptrs, nw, 1);
		llm_wordlist_scratch *s = llm_wordlist_scratch_new(w);
		for (int t = 0; t < 20; t++) {
			char text[64];
			size_t n = llm_rng_below(&r, sizeof text);
			for (size_t j = 0; j < n; j++)
				text[j] = alpha[llm_rng_below(&r, sizeof alpha - 1)];
			size_t got = llm_wordlist_scan(w, s, text, n, NULL, 0);
			size_t want = brute(words, nw, text, n);
			if (got != want && bad++ < 5)
				printf("#   /%s/ on \"%.*s\": %zu, want %zu\n", llm_wordlist_pattern(w), (int)n,
				       text, got, want);
		}
		llm_wordlist_scratch_free(s);
		llm_wordlist_free(w);
	}
	CHECK_EQ_INT(bad, 0);
}

int main(void)
{
	RUN(test_latin_whole_words);
	RUN(test_offsets_and_limits);
	RUN(test_unicode_case_and_scripts);
	RUN(test_invalid_utf8_and_edges);
	RUN(test_load_file);
	RUN(test_random_against_brute_force);
	return unit_done();
}
