/* Unit tests for lib/core/err: the per-thread detail message. */
#include "core/err.h"
#include "unit.h"

/* A caller that adds context to a callee's detail formats the detail into itself: the usual
 * "return llm_fail(rc, "%s: %s", name, llm_last_error())". */
static void test_fail_wraps_its_own_detail(void)
{
	llm_fail(LLM_EFORMAT, "bad pre-tokenizer pattern: missing closing parenthesis");
	CHECK(llm_fail(LLM_EFORMAT, "%s: %s", "f.json", llm_last_error()) == LLM_EFORMAT);
	CHECK_STR(llm_last_error(), "f.json: bad pre-tokenizer pattern: missing closing parenthesis");
	/* the detail after the argument, and twice */
	llm_fail(LLM_EIO, "disk");
	llm_fail(LLM_EIO, "%s then %s (%s)", llm_last_error(), "more", llm_last_error());
	CHECK_STR(llm_last_error(), "disk then more (disk)");
}

static void test_fail_truncates_long_details(void)
{
	char big[3000];
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = 0;
	llm_fail(LLM_EINVAL, "%s", big);
	CHECK(strlen(llm_last_error()) > 500 && strlen(llm_last_error()) < sizeof big);
	llm_fail(LLM_EINVAL, "p: %s", llm_last_error());
	CHECK(strncmp(llm_last_error(), "p: xxx", 6) == 0);
}

static void test_status_without_detail(void)
{
	llm_fail(LLM_ENOMEM, "%s", "");
	CHECK_STR(llm_last_error(), "out of memory");
}

int main(void)
{
	RUN(test_fail_wraps_its_own_detail);
	RUN(test_fail_truncates_long_details);
	RUN(test_status_without_detail);
	return unit_done();
}
