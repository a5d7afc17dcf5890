/* Unit tests for lib/toxeval: confusion counts per stage, language and threshold against
 * counts made by hand, and the JSON form. */
#include <string.h>

#include "tox/toxeval.h"
#include "unit.h"

static void test_counts(void)
{
	llm_toxeval *e = llm_toxeval_new();
	/* hits, chars, per_1k, score; label */
	static const struct {
		const char *lang;
		llm_tox_result r;
		int label;
	} docs[] = {
		{ "en", { 2, 100, 20, 0.9 }, 1 },  /* words fire, model fires */
		{ "en", { 0, 100, 0, 0.6 }, 1 },   /* model only at 0.5 */
		{ "en", { 1, 100, 10, 0.1 }, 0 },  /* words fire: a false positive */
		{ "en", { 0, 100, 0, 0.2 }, 0 },   /* nothing fires */
		{ "zh-Hant", { 0, 100, 0, 0.7 }, 0 }, /* model false positive at 0.5 */
		{ NULL, { 0, 100, 0, 0.4 }, 1 },   /* missed at 0.5, caught at 0.3 */
	};
	for (size_t i = 0; i < sizeof docs / sizeof *docs; i++)
		llm_toxeval_add(e, docs[i].lang, docs[i].lang ? strlen(docs[i].lang) : 0, &docs[i].r,
		                docs[i].label);
	llm_toxeval_skip(e);
	CHECK_EQ_U64(llm_toxeval_count(e), 6);
	double thr[] = { 0.3, 0.5 };
	llm_toxeval_opts o = { .words_per_1k = 5, .threshold = 0.5, .thresholds = thr,
		               .nthresholds = 2, .words = 1, .model = 1, .json = 0 };
	llm_buf out = LLM_BUF_INIT;
	llm_toxeval_report(e, &o, &out);
	/* all, words: tp 1 (doc 0), fp 1 (doc 2), tn 2, fn 2 */
	CHECK(strstr(out.p, "all   words           -       1      1      2      2  0.500  0.333  0.400  0.333"));
	/* all, model at 0.5: tp 2, fp 1 (zh), tn 2, fn 1 (und) */
	CHECK(strstr(out.p, "all   model         0.5*      2      1      2      1  0.667  0.667  0.667  0.333"));
	/* all, words|model at 0.3: tp 3, fp 2 (doc 2 words, zh model), tn 1, fn 0 */
	CHECK(strstr(out.p, "all   words|model   0.3       3      2      1      0  0.600  1.000  0.750  0.667"));
	/* languages by primary subtag, no lang as und */
	CHECK(strstr(out.p, "\nzh    model         0.5*      0      1      0      0"));
	CHECK(strstr(out.p, "\nund   model         0.3       1      0      0      0"));
	llm_buf_reset(&out);
	o.json = 1;
	llm_toxeval_report(e, &o, &out);
	CHECK(strstr(out.p, "{\"records\": 6, \"skipped\": 1, "));
	CHECK(strstr(out.p, "\"en\": {\"records\": 4, \"toxic\": 2, \"rows\": [{\"stage\": \"words\", "
	                    "\"tp\": 1, \"fp\": 1, \"tn\": 1, \"fn\": 1, "));
	llm_buf_release(&out);
	llm_toxeval_free(e);
}

int main(void)
{
	RUN(test_counts);
	return unit_done();
}
