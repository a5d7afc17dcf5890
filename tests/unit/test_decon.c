/*
 * test_decon.c — benchmark n-grams: a document matches exactly when it shares an n-gram with
 * an item, in words or in Chinese characters, with the set in memory or on disk.
 */
#include <string.h>

#include "core/err.h"
#include "dedup/decon.h"
#include "unit.h"

static const char *item_en = "The quick brown fox jumps over the lazy dog while the old farmer "
                             "watches from the porch of his house";
static const char *item_zh = "床前明月光疑是地上霜举头望明月低头思故乡春眠不觉晓处处闻啼鸟";

static void check_with(size_t budget, int disk)
{
	llm_shingle_opts o = { LLM_NORM_FULL, LLM_UNITS_AUTO_CHAR, 13, 1 };
	llm_decon *dc = llm_decon_new(&o, budget, NULL);
	CHECK(llm_decon_add(dc, 0, item_en, strlen(item_en)) > 0);
	CHECK(llm_decon_add(dc, 1, item_zh, strlen(item_zh)) > 0);
	CHECK_EQ_INT(llm_decon_add(dc, 2, "too short to match", 18), 0);
	/* filler items, so that a small budget sends the set to disk (in letters: digits
	 * normalise to one) */
	char filler[64];
	for (uint32_t i = 3; i < 3000; i++) {
		snprintf(filler, sizeof filler, "w%c%c%c a b c d e f g h i j k l m n o p", 'a' + i % 26,
		         'a' + i / 26 % 26, 'a' + i / 676);
		llm_decon_add(dc, i, filler, strlen(filler));
	}
	CHECK_EQ_INT(llm_decon_ready(dc), LLM_OK);
	CHECK_EQ_INT(llm_decon_on_disk(dc), disk);
	const uint32_t *it;
	size_t n;
	int err = 0;
	/* 13 words of the item, other case and punctuation: a match */
	const char *d1 = "Before that: QUICK, brown fox jumps over the lazy dog while the old farmer "
	                 "watches. After.";
	CHECK_EQ_INT(llm_decon_match(dc, d1, strlen(d1), &it, &n, &err), 1);
	CHECK(n == 1 && it[0] == 0);
	/* 12 words: none */
	const char *d2 = "x brown fox jumps over the lazy dog while the old farmer watches y";
	CHECK_EQ_INT(llm_decon_match(dc, d2, strlen(d2), &it, &n, &err), 0);
	CHECK_EQ_INT(n, 0);
	/* 13 Chinese characters of a line: a match; 12: none */
	const char *z1 = "他说：疑是地上霜举头望明月低头思。";
	CHECK_EQ_INT(llm_decon_match(dc, z1, strlen(z1), &it, &n, &err), 1);
	CHECK(n == 1 && it[0] == 1);
	const char *z2 = "他说：是地上霜举头望明月低头思。";
	CHECK_EQ_INT(llm_decon_match(dc, z2, strlen(z2), &it, &n, &err), 0);
	/* both items, in the order they appear */
	char both[512];
	snprintf(both, sizeof both, "%s and %s", item_zh, item_en);
	CHECK(llm_decon_match(dc, both, strlen(both), &it, &n, &err) > 2);
	CHECK(n == 2 && it[0] == 1 && it[1] == 0);
	CHECK_EQ_INT(err, 0);
	llm_decon_free(dc);
}

static void test_memory_and_disk(void)
{
	check_with((size_t)1 << 30, 0);
	check_with(1 << 16, 1);
}

int main(void)
{
	RUN(test_memory_and_disk);
	return unit_done();
}
