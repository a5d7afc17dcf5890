/* Unit tests for lib/tox/toxlang: spec parsing, precedence, lookup by primary subtag, errors,
 * and the canonical form. */
#include <string.h>

#include "core/err.h"
#include "tox/toxlang.h"
#include "unit.h"

static double get(const llm_toxlang *m, const char *lang)
{
	return llm_toxlang_get(m, lang, lang ? strlen(lang) : 0);
}

static void test_parse_and_get(void)
{
	llm_toxlang m;
	llm_toxlang_init(&m, 0.85);
	CHECK_EQ_INT(llm_toxlang_parse(&m, "zh=0.9,en=0.8", 0, 1), LLM_OK);
	CHECK_NEAR(get(&m, "zh"), 0.9, 0);
	CHECK_NEAR(get(&m, "zh-Hant"), 0.9, 0);
	CHECK_NEAR(get(&m, "ZH_cn"), 0.9, 0);
	CHECK_NEAR(get(&m, "en"), 0.8, 0);
	CHECK_NEAR(get(&m, "fr"), 0.85, 0);
	CHECK_NEAR(get(&m, NULL), 0.85, 0);
	CHECK_NEAR(get(&m, ""), 0.85, 0);
	CHECK(!m.dflt_set);
	CHECK(llm_toxlang_named(&m, "zh-Hant", 7));
	CHECK(!llm_toxlang_named(&m, "fr", 2));
	CHECK(!llm_toxlang_named(&m, NULL, 0));
	/* a bare value is the default wherever it stands; later items win; a second parse adds */
	CHECK_EQ_INT(llm_toxlang_parse(&m, "zh=0.95,0.7", 0, 1), LLM_OK);
	CHECK_NEAR(get(&m, "zh"), 0.95, 0);
	CHECK_NEAR(get(&m, "fr"), 0.7, 0);
	CHECK(m.dflt_set);
	CHECK_NEAR(get(&m, "en"), 0.8, 0);
	/* tags are keyed by their primary subtag, so these set one entry */
	CHECK_EQ_INT(llm_toxlang_parse(&m, "zh-Hant=0.5,ZH=0.6", 0, 1), LLM_OK);
	CHECK_EQ_INT(m.n, 2);
	CHECK_NEAR(get(&m, "zh"), 0.6, 0);
	llm_buf b = LLM_BUF_INIT;
	llm_toxlang_format(&m, &b);
	CHECK(strcmp(b.p, "0.7,en=0.8,zh=0.6") == 0);
	llm_buf_release(&b);
}

static void test_errors(void)
{
	static const char *const bad[] = { "", "zh=", "=0.5", "zh=0.5,", "1.5", "zh=-0.1", "zh=0.5x",
		                           "z h=0.5", "zh=nan", "0.5,,0.6", "zh:0.5", "1e999" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		llm_toxlang m;
		llm_toxlang_init(&m, 0.85);
		int rc = llm_toxlang_parse(&m, bad[i], 0, 1);
		if (rc != LLM_EINVAL)
			printf("#   accepted '%s'\n", bad[i]);
		CHECK_EQ_INT(rc, LLM_EINVAL);
	}
	llm_toxlang m;
	llm_toxlang_init(&m, 0.85);
	CHECK_EQ_INT(llm_toxlang_parse(&m, "xx=2", 0, 1), LLM_EINVAL);
	CHECK(strstr(llm_last_error(), "'2'"));
	/* the table is bounded */
	char tag[8];
	for (int i = 0; i < LLM_TOXLANG_MAX; i++) {
		snprintf(tag, sizeof tag, "l%c%c", 'a' + i / 26, 'a' + i % 26);
		CHECK_EQ_INT(llm_toxlang_set(&m, tag, 0.5), LLM_OK);
	}
	CHECK_EQ_INT(llm_toxlang_set(&m, "zz", 0.5), LLM_EINVAL);
	CHECK_EQ_INT(llm_toxlang_set(&m, "laa", 0.25), LLM_OK);
	CHECK_NEAR(get(&m, "laa"), 0.25, 0);
}

int main(void)
{
	RUN(test_parse_and_get);
	RUN(test_errors);
	return unit_done();
}
