/* test_timemask.c — English and Chinese dates and times become [TIME]; other numbers stay. */
#include "text/timemask.h"

#include "core/err.h"
#include "unit.h"

static llm_timemask *t;
static llm_timemask_scratch *s;

static const char *tm(const char *in)
{
	static llm_buf out;
	llm_buf_reset(&out);
	llm_timemask_apply(t, s, in, strlen(in), &out);
	return out.p ? out.p : "";
}

static void test_english(void)
{
	CHECK_STR(tm("As of December 2023, prices rose."), "As of [TIME], prices rose.");
	CHECK_STR(tm("on 2023-12-01 and 12/01/2023 at 14:30"), "on [TIME] and [TIME] at [TIME]");
	CHECK_STR(tm("Dec. 1, 2023 or 1 December 2023 or December 1st"), "[TIME] or [TIME] or [TIME]");
	CHECK_STR(tm("at 9 a.m. and 2:30 pm, stamp 2023-12-01T14:30:00Z."), "at [TIME] and [TIME], stamp [TIME].");
	CHECK_STR(tm("mid-December 2023"), "[TIME]");
	/* left alone: a bare month word, plain numbers, versions, ratios, a year alone */
	CHECK_STR(tm("You may go. Version 1.2.3, ratio 3:2:1x, 42 apples, in 2023."),
	          "You may go. Version 1.2.3, ratio 3:2:1x, 42 apples, in 2023.");
}

static void test_chinese(void)
{
	CHECK_STR(tm("\xE6\x88\xAA\xE8\x87\xB3" "2023\xE5\xB9\xB4" "12\xE6\x9C\x88" "31\xE6\x97\xA5\xEF\xBC\x8C"),
	          "\xE6\x88\xAA\xE8\x87\xB3[TIME]\xEF\xBC\x8C");
	CHECK_STR(tm("2023\xE5\xB9\xB4" "12\xE6\x9C\x88\xE5\x8F\x91\xE5\xB8\x83"), "[TIME]\xE5\x8F\x91\xE5\xB8\x83");
	CHECK_STR(tm("\xE4\xBA\x8E" "2023\xE5\xB9\xB4\xE6\x88\x90\xE7\xAB\x8B"), "\xE4\xBA\x8E[TIME]\xE6\x88\x90\xE7\xAB\x8B");
	CHECK_STR(tm("5\xE6\x9C\x88" "4\xE6\x97\xA5\xE4\xB8\x8B\xE5\x8D\x88" "3\xE7\x82\xB9"), "[TIME][TIME]");
	/* 二〇二三年十二月 */
	CHECK_STR(tm("\xE4\xBA\x8C\xE3\x80\x87\xE4\xBA\x8C\xE4\xB8\x89\xE5\xB9\xB4\xE5\x8D\x81\xE4\xBA\x8C\xE6\x9C\x88"), "[TIME]");
	/* 3个人 stays */
	CHECK_STR(tm("3\xE4\xB8\xAA\xE4\xBA\xBA"), "3\xE4\xB8\xAA\xE4\xBA\xBA");
}

static void test_options(void)
{
	llm_timemask *y = llm_timemask_new("<T>", LLM_TIME_YEARS);
	CHECK(y != NULL);
	llm_timemask_scratch *ys = llm_timemask_scratch_new(y);
	llm_buf out = LLM_BUF_INIT;
	CHECK_EQ_INT(llm_timemask_apply(y, ys, "in 2023 and 12345", 17, &out), 1);
	CHECK_STR(out.p, "in <T> and 12345");
	llm_buf_release(&out);
	llm_timemask_scratch_free(ys);
	llm_timemask_free(y);
	CHECK_STR(tm(""), "");
	CHECK_STR(tm("\xff\xfe 14:30"), "\xff\xfe [TIME]");
}

int main(void)
{
	t = llm_timemask_new(NULL, 0);
	s = llm_timemask_scratch_new(t);
	RUN(test_english);
	RUN(test_chinese);
	RUN(test_options);
	llm_timemask_scratch_free(s);
	llm_timemask_free(t);
	return unit_done();
}
