/* Unit tests for lib/toxeval: confusion counts per stage, language and threshold against
 * counts made by hand, the JSON form, and operating points worked out by hand. */
#include <string.h>

#include "tox/toxeval.h"
#include "unit.h"

typedef struct {
	const char *lang;
	llm_tox_result r;
	int label;
} doc;

static llm_toxeval *table(const doc *docs, size_t n, const llm_tox_policy *p)
{
	llm_toxeval *e = llm_toxeval_new();
	for (size_t i = 0; i < n; i++)
		llm_toxeval_add(e, docs[i].lang, docs[i].lang ? strlen(docs[i].lang) : 0, &docs[i].r, p,
		                docs[i].label);
	return e;
}

static void test_counts(void)
{
	/* hits, chars, per_1k, score, words applied; label */
	static const doc docs[] = {
		{ "en", { 2, 100, 20, 0.9, 1 }, 1 },  /* words fire, model fires */
		{ "en", { 0, 100, 0, 0.6, 1 }, 1 },   /* model only at 0.5 */
		{ "en", { 1, 100, 10, 0.1, 1 }, 0 },  /* words fire: a false positive */
		{ "en", { 0, 100, 0, 0.2, 1 }, 0 },   /* nothing fires */
		{ "zh-Hant", { 0, 100, 0, 0.7, 1 }, 0 }, /* model false positive at 0.5 */
		{ NULL, { 0, 100, 0, 0.4, 1 }, 1 },   /* missed at 0.5, caught at 0.3 */
	};
	llm_tox_policy p = { .threshold = 0.5, .words_per_1k = 5, .words = 1, .model = 1 };
	llm_toxeval *e = table(docs, sizeof docs / sizeof *docs, &p);
	llm_toxeval_skip(e);
	CHECK_EQ_U64(llm_toxeval_count(e), 6);
	double thr[] = { 0.3, 0.5 };
	llm_toxeval_opts o = { .words_per_1k = 5, .thresholds = thr, .nthresholds = 2,
		               .words = 1, .model = 1, .json = 0 };
	llm_buf out = LLM_BUF_INIT;
	llm_toxeval_report(e, &o, &out);
	/* all, words: tp 1 (doc 0), fp 1 (doc 2), tn 2, fn 2 */
	CHECK(strstr(out.p, "all   words            -       1      1      2      2  0.500  0.333  0.400  0.333"));
	/* all, model at 0.5: tp 2, fp 1 (zh), tn 2, fn 1 (und); the mark is on the stage in use */
	CHECK(strstr(out.p, "all   model          0.5       2      1      2      1  0.667  0.667  0.667  0.333"));
	CHECK(strstr(out.p, "all   words|model    0.5*      2      2      1      1"));
	/* all, words|model at 0.3: tp 3, fp 2 (doc 2 words, zh model), tn 1, fn 0 */
	CHECK(strstr(out.p, "all   words|model    0.3       3      2      1      0  0.600  1.000  0.750  0.667"));
	/* languages by primary subtag, no lang as und */
	CHECK(strstr(out.p, "\nzh    model          0.5       0      1      0      0"));
	CHECK(strstr(out.p, "\nund   model          0.3       1      0      0      0"));
	llm_buf_reset(&out);
	o.json = 1;
	llm_toxeval_report(e, &o, &out);
	CHECK(strstr(out.p, "{\"records\": 6, \"skipped\": 1, "));
	CHECK(strstr(out.p, "\"en\": {\"records\": 4, \"toxic\": 2, \"threshold\": 0.5, \"rows\": "
	                    "[{\"stage\": \"words\", \"tp\": 1, \"fp\": 1, \"tn\": 1, \"fn\": 1, "));
	CHECK(strstr(out.p, "{\"stage\": \"words|model\", \"threshold\": 0.5, \"in_effect\": true, "
	                    "\"tp\": 2, \"fp\": 2, "));
	llm_buf_release(&out);
	llm_toxeval_free(e);
}

/* Thresholds that differ by language: each language's row in effect is its own, inserted in
 * the sweep, and "all" gets a row at the mixed thresholds. */
static void test_thresholds_by_language(void)
{
	static const doc docs[] = {
		{ "en", { 0, 10, 0, 0.6, 1 }, 1 },
		{ "en", { 0, 10, 0, 0.2, 1 }, 0 },
		{ "zh", { 0, 10, 0, 0.6, 1 }, 1 },
		{ "zh", { 0, 10, 0, 0.45, 1 }, 0 },
	};
	llm_tox_policy en = { .threshold = 0.65, .model = 1 }, zh = { .threshold = 0.4, .model = 1 };
	llm_toxeval *e = llm_toxeval_new();
	for (size_t i = 0; i < 4; i++)
		llm_toxeval_add(e, docs[i].lang, 2, &docs[i].r, i < 2 ? &en : &zh, docs[i].label);
	double thr[] = { 0.5 };
	llm_toxeval_opts o = { .thresholds = thr, .nthresholds = 1, .model = 1 };
	llm_buf out = LLM_BUF_INIT;
	llm_toxeval_report(e, &o, &out);
	CHECK(strstr(out.p, "all   model          0.5       2      0      2      0"));
	/* en at 0.65 misses its toxic document; zh at 0.4 drops its clean one */
	CHECK(strstr(out.p, "all   model        mixed*      1      1      1      1"));
	CHECK(strstr(out.p, "en    model          0.5       1      0      1      0"));
	CHECK(strstr(out.p, "en    model         0.65*      0      0      1      1"));
	CHECK(strstr(out.p, "zh    model          0.4*      1      1      0      0  0.500  1.000  0.667  1.000\n"
	                    "zh    model          0.5 "));
	llm_buf_release(&out);
	llm_toxeval_free(e);
}

/*
 * Scores are binary fractions, so that the float a score is stored as is the decimal here.
 * en (model only): toxic 0.875 0.75 0.625 0.25, clean 0.8125 0.5 0.1875 0.125 0.0625.
 *   fpr <= 0.2: one false positive allowed, so above 0.5 and at most 0.625: 0.6 (recall 0.75);
 *   fpr <= 0: above 0.8125, at most 0.875: 0.82; recall >= 0.5: two toxic, so at most 0.75
 *   and above 0.625: 0.7 (fpr 0.2); recall >= 1: at most 0.25, above 0.1875: 0.2 (fpr 0.4).
 * zh: a clean document the words fire on (a false positive at any threshold), toxic 0.75 and
 *   0.25, clean 0.625. fpr <= 0.5: the words' false positive is the one allowed: above
 *   0.625, at most 0.75: 0.7; fpr <= 0.2: none allowed, not met.
 * und (the default of the spec): toxic 0.515625, clean 0.51171875: fpr <= 0 needs 0.512.
 */
static void test_targets(void)
{
	static const doc docs[] = {
		{ "en", { 0, 10, 0, 0.875, 1 }, 1 },  { "en", { 0, 10, 0, 0.75, 1 }, 1 },
		{ "en", { 0, 10, 0, 0.625, 1 }, 1 },  { "en", { 0, 10, 0, 0.25, 1 }, 1 },
		{ "en", { 0, 10, 0, 0.8125, 1 }, 0 }, { "en", { 0, 10, 0, 0.5, 1 }, 0 },
		{ "en", { 0, 10, 0, 0.1875, 1 }, 0 }, { "en", { 0, 10, 0, 0.125, 1 }, 0 },
		{ "en", { 0, 10, 0, 0.0625, 1 }, 0 },
		{ "zh", { 3, 10, 300, 0.125, 1 }, 0 }, { "zh", { 0, 10, 0, 0.75, 1 }, 1 },
		{ "zh", { 0, 10, 0, 0.25, 1 }, 1 },    { "zh", { 0, 10, 0, 0.625, 1 }, 0 },
		{ NULL, { 0, 10, 0, 0.515625, 1 }, 1 }, { NULL, { 0, 10, 0, 0.51171875, 1 }, 0 },
	};
	llm_tox_policy p = { .threshold = 0.85, .words_per_1k = 1, .words = 1, .model = 1 };
	llm_toxeval *e = table(docs, sizeof docs / sizeof *docs, &p);
	llm_toxeval_target tg[] = { { LLM_TOXEVAL_MAX_FPR, 0.2 }, { LLM_TOXEVAL_MAX_FPR, 0 },
		                    { LLM_TOXEVAL_MIN_RECALL, 0.5 }, { LLM_TOXEVAL_MIN_RECALL, 1 },
		                    { LLM_TOXEVAL_MAX_FPR, 0.5 } };
	llm_toxeval_opts o = { .targets = tg, .ntargets = 5, .default_threshold = 0.85,
		               .words_per_1k = 1, .words = 1, .model = 1 };
	llm_buf out = LLM_BUF_INIT;
	llm_toxeval_report(e, &o, &out);
	CHECK(strstr(out.p, "\nen    words|model fpr<=0.2     yes    0.6       3      1      4      1"));
	CHECK(strstr(out.p, "\nzh    words|model fpr<=0.2     no   never       0      1      1      2"));
	CHECK(strstr(out.p, "\nund   words|model fpr<=0.2     yes  0.512       1      0      1      0"));
	CHECK(strstr(out.p, "\n--threshold 0.512,en=0.6  (met where the table says yes)\n"));
	CHECK(strstr(out.p, "\nen    words|model fpr<=0       yes   0.82       1      0      5      3"));
	CHECK(strstr(out.p, "\nen    words|model recall>=0.5  yes    0.7       2      1      4      2"));
	CHECK(strstr(out.p, "\nen    words|model recall>=1    yes    0.2       4      2      3      0"));
	CHECK(strstr(out.p, "\nzh    words|model fpr<=0.5     yes    0.7       1      1      1      1"));
	/* all: each language at its own threshold */
	CHECK(strstr(out.p, "\nall   words|model fpr<=0.5     yes  mixed       6      3      5      1"));
	llm_buf_reset(&out);
	o.json = 1;
	o.ntargets = 1;
	llm_toxeval_report(e, &o, &out);
	CHECK(strstr(out.p, "\"targets\": [{\"max_fpr\": 0.2, \"met\": false, \"threshold_spec\": "
	                    "\"0.512,en=0.6\", \"languages\": {\"all\": "));
	CHECK(strstr(out.p, "\"zh\": {\"records\": 4, \"toxic\": 2, \"threshold\": null, \"met\": false, "
	                    "\"row\": {\"stage\": \"words|model\", \"threshold\": null, \"tp\": 0, \"fp\": 1"));
	llm_buf_release(&out);
	llm_toxeval_free(e);
}

int main(void)
{
	RUN(test_counts);
	RUN(test_thresholds_by_language);
	RUN(test_targets);
	return unit_done();
}
