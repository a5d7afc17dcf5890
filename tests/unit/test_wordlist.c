/*
 * test_wordlist.c — lib/wordlist: matching rules, word boundaries given by the caller, "*",
 * and the automaton against a brute-force leftmost-longest matcher on random text.
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
	size_t n = llm_wordlist_scan(w, s, text, strlen(text), NULL, NULL, 0);
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
	size_t n = llm_wordlist_scan(w, s, t, strlen(t), NULL, h, 2);
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
		CHECK_EQ_INT(llm_wordlist_scan(w, s, t, strlen(t), NULL, h, 4), 4);
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
			size_t got = llm_wordlist_scan(w, s, text, n, NULL, NULL, 0);
			size_t want = brute(words, nw, text, n);
			if (got != want && bad++ < 5)
				printf("#   %zu words on \"%.*s\": %zu, want %zu\n", nw, (int)n, text, got,
				       want);
		}
		llm_wordlist_scratch_free(s);
		llm_wordlist_free(w);
	}
	CHECK_EQ_INT(bad, 0);
}

static int bit_at(const uint8_t *b, size_t i)
{
	return (b[i / 8] >> (i % 8)) & 1;
}

/* Bit i of the bounds: a word starts or ends at byte i. */
static void set_bounds(uint8_t *b, size_t len, const size_t *at, size_t n)
{
	memset(b, 0, len / 8 + 1);
	for (size_t i = 0; i < n; i++)
		b[at[i] / 8] |= (uint8_t)(1u << (at[i] % 8));
}

static void test_cjk_word_boundaries(void)
{
	static const char *const words[] = { "\xe6\x80\xa7",                 /* 性 */
	                                     "\xe5\x82\xbb\xe9\x80\xbc",     /* 傻逼 */
	                                     "*\xe6\xb7\xab*" };             /* *淫*: anywhere */
	llm_wordlist *w = make(words, 3, 1);
	CHECK(llm_wordlist_has_cjk(w));
	llm_wordlist_scratch *s = llm_wordlist_scratch_new(w);
	uint8_t b[8];
	/* 可能性 segmented as one word: 性 ends it but does not start a word there. */
	const char *t = "\xe5\x8f\xaf\xe8\x83\xbd\xe6\x80\xa7";
	size_t one[] = { 0, 9 };
	set_bounds(b, 9, one, 2);
	CHECK_EQ_INT(llm_wordlist_scan(w, s, t, 9, b, NULL, 0), 0);
	CHECK_EQ_INT(llm_wordlist_scan(w, s, t, 9, NULL, NULL, 0), 1); /* no bounds: a substring */
	size_t three[] = { 0, 3, 6, 9 };
	set_bounds(b, 9, three, 4);
	CHECK_EQ_INT(llm_wordlist_scan(w, s, t, 9, b, NULL, 0), 1);
	/* 你个傻逼吧 as 你 / 个 / 傻逼 / 吧; an entry may span several words (傻 / 逼) */
	t = "\xe4\xbd\xa0\xe4\xb8\xaa\xe5\x82\xbb\xe9\x80\xbc\xe5\x90\xa7";
	size_t segs[] = { 0, 3, 6, 12, 15 };
	set_bounds(b, 15, segs, 5);
	CHECK_EQ_INT(llm_wordlist_scan(w, s, t, 15, b, NULL, 0), 1);
	size_t split[] = { 0, 3, 6, 9, 12, 15 };
	set_bounds(b, 15, split, 6);
	CHECK_EQ_INT(llm_wordlist_scan(w, s, t, 15, b, NULL, 0), 1);
	size_t glued[] = { 0, 3, 15 }; /* 个傻逼吧 one word: no hit */
	set_bounds(b, 15, glued, 3);
	CHECK_EQ_INT(llm_wordlist_scan(w, s, t, 15, b, NULL, 0), 0);
	/* "*淫*" is a hit inside a word */
	t = "\xe8\x8d\x92\xe6\xb7\xab\xe6\x97\xa0\xe9\x81\x93"; /* 荒淫无道 */
	size_t whole[] = { 0, 12 };
	set_bounds(b, 12, whole, 2);
	CHECK_EQ_INT(llm_wordlist_scan(w, s, t, 12, b, NULL, 0), 1);
	llm_wordlist_scratch_free(s);
	llm_wordlist_free(w);
}

static void test_star(void)
{
	static const char *const words[] = { "fuck*", "*hole", "*mid*", "*", "plain", "plain*" };
	llm_wordlist *w = make(words, 6, 1);
	CHECK_EQ_INT(llm_wordlist_size(w), 4); /* "*" is empty; plain and plain* merge */
	CHECK_EQ_INT(hits(w, "fucking fuck"), 2);
	CHECK_EQ_INT(hits(w, "motherfucker"), 0);
	CHECK_EQ_INT(hits(w, "asshole holes"), 1);
	CHECK_EQ_INT(hits(w, "admidst mid amid"), 3);
	CHECK_EQ_INT(hits(w, "plainly"), 1); /* the more permissive copy stays */
	llm_wordlist_free(w);
}

/* A list far past what a PCRE2 alternation compiles: 200,000 entries, the cost per byte the
 * same as for one. */
static void test_large_list(void)
{
	llm_wordlist *w = llm_wordlist_new();
	char e[16];
	for (int i = 0; i < 200000; i++) {
		int n = snprintf(e, sizeof e, "w%dx", i * 7);
		llm_wordlist_add(w, e, (size_t)n);
	}
	CHECK_EQ_INT(llm_wordlist_compile(w), LLM_OK);
	CHECK_EQ_INT(llm_wordlist_size(w), 200000);
	CHECK_EQ_INT(hits(w, "w0x w7x w8x w1399993x w1399994x w14x"), 4);
	llm_wordlist_free(w);
}

/*
 * Mixed scripts against brute force: entries over a, b, 中, 文 with random "*" ends, texts
 * over the same and a space, random word boundaries at character boundaries. Rules: an entry
 * with 中 or 文 needs a boundary bit at each closed end; any other needs no a/b before or
 * after a closed end (中 and 文 are not word characters).
 */
static const char *const mix_ch[] = { "a", "b", "\xe4\xb8\xad", "\xe6\x96\x87", " " };

static size_t mix_brute(char ent[][16], const int *lo, const int *ro, size_t ne, const char *t,
                        size_t n, const uint8_t *b)
{
	size_t count = 0, i = 0;
	while (i < n) {
		size_t best = 0;
		for (size_t k = 0; k < ne; k++) {
			size_t l = strlen(ent[k]);
			if (l <= best || i + l > n || memcmp(t + i, ent[k], l) != 0)
				continue;
			int cjk = strchr(ent[k], '\xe4') || strchr(ent[k], '\xe6');
			int ok;
			if (cjk)
				ok = (lo[k] || bit_at(b, i)) && (ro[k] || bit_at(b, i + l));
			else
				ok = (lo[k] || i == 0 || (t[i - 1] != 'a' && t[i - 1] != 'b')) &&
				     (ro[k] || i + l == n || (t[i + l] != 'a' && t[i + l] != 'b'));
			if (ok)
				best = l;
		}
		if (best) {
			count++;
			i += best;
		} else {
			i += ((unsigned char)t[i] >= 0x80) ? 3 : 1;
		}
	}
	return count;
}

static void test_mixed_random_against_brute_force(void)
{
	llm_rng r;
	llm_rng_seed(&r, 99);
	int bad = 0;
	for (int round = 0; round < 300; round++) {
		char ent[8][16], line[24];
		int lo[8], ro[8];
		const char *ptrs[8];
		size_t ne = 1 + llm_rng_below(&r, 8);
		for (size_t k = 0; k < ne; k++) {
			ent[k][0] = 0;
			size_t l = 1 + llm_rng_below(&r, 3);
			for (size_t j = 0; j < l; j++)
				strcat(ent[k], mix_ch[llm_rng_below(&r, 4)]);
			lo[k] = llm_rng_below(&r, 4) == 0;
			ro[k] = llm_rng_below(&r, 4) == 0;
			strcpy(line, lo[k] ? "*" : "");
			strcat(line, ent[k]);
			strcat(line, ro[k] ? "*" : "");
			ptrs[k] = llm_strdup(line);
		}
		/* a string entered twice with different ends keeps the more permissive one */
		for (size_t k = 0; k < ne; k++)
			for (size_t j = 0; j < ne; j++)
				if (strcmp(ent[k], ent[j]) == 0) {
					lo[k] |= lo[j];
					ro[k] |= ro[j];
				}
		llm_wordlist *w = make(ptrs, ne, 1);
		llm_wordlist_scratch *s = llm_wordlist_scratch_new(w);
		for (int t = 0; t < 20; t++) {
			char text[128] = "";
			uint8_t b[17];
			memset(b, 0, sizeof b);
			size_t nc = llm_rng_below(&r, 30), n = 0;
			for (size_t j = 0; j < nc; j++) {
				if (llm_rng_below(&r, 2))
					b[n / 8] |= (uint8_t)(1u << (n % 8));
				strcat(text, mix_ch[llm_rng_below(&r, 5)]);
				n = strlen(text);
			}
			if (llm_rng_below(&r, 2))
				b[n / 8] |= (uint8_t)(1u << (n % 8));
			size_t got = llm_wordlist_scan(w, s, text, n, b, NULL, 0);
			size_t want = mix_brute(ent, lo, ro, ne, text, n, b);
			if (got != want && bad++ < 5)
				printf("#   %zu entries on \"%s\": %zu, want %zu\n", ne, text, got, want);
		}
		llm_wordlist_scratch_free(s);
		llm_wordlist_free(w);
		for (size_t k = 0; k < ne; k++)
			free((char *)ptrs[k]);
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
	RUN(test_mixed_random_against_brute_force);
	RUN(test_cjk_word_boundaries);
	RUN(test_star);
	RUN(test_large_list);
	return unit_done();
}
