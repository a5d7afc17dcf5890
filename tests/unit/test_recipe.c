/*
 * test_recipe.c — the filter table (names, parameters, the closest name) and recipes:
 * parsing, precedence, overrides, errors with their lines, and the shipped recipe.
 */
#include "text/recipe.h"

#include <stdlib.h>

#include "core/err.h"
#include "text/filter.h"
#include "text/normalize.h"
#include "unit.h"

static void test_table(void)
{
	/* every step has a name, reasons and a function; names are unique */
	for (int i = 0; i < LLM_FILTER_NSTEPS; i++) {
		CHECK(llm_filter_steps[i].name && llm_filter_steps[i].reasons[0]);
		CHECK(!llm_filter_steps[i].judge != !llm_filter_steps[i].judge_edit);
		for (int k = 0; k < i; k++)
			CHECK(strcmp(llm_filter_steps[i].name, llm_filter_steps[k].name) != 0);
	}
	for (size_t i = 0; i < llm_filter_nparams; i++) {
		CHECK(llm_filter_params[i].step >= 0 && llm_filter_params[i].step < LLM_FILTER_NSTEPS);
		CHECK(llm_filter_param_find(llm_filter_params[i].name, strlen(llm_filter_params[i].name)) ==
		      &llm_filter_params[i]);
	}
	unsigned bits;
	CHECK_EQ_INT(llm_filter_parse("length,c4 cwt", &bits), LLM_OK);
	CHECK_EQ_INT(bits, (1u << LLM_FILTER_LENGTH) | (1u << LLM_FILTER_C4) | (1u << LLM_FILTER_CWT));
	CHECK_EQ_INT(llm_filter_parse("default", &bits), LLM_OK);
	CHECK_EQ_INT(bits, LLM_FILTER_DEFAULT);
	llm_buf b = LLM_BUF_INIT;
	llm_filter_format(bits, &b);
	CHECK_STR(b.p, "length gopher-rep gopher-quality c4 fineweb");
	llm_buf_reset(&b);
	llm_filter_format(0, &b);
	CHECK_STR(b.p, "none");
	CHECK_EQ_INT(llm_filter_parse("length,fineweeb", &bits), LLM_EINVAL);
	CHECK(strstr(llm_last_error(), "did you mean 'fineweb'?") != NULL);
	CHECK_EQ_INT(llm_filter_parse("xyzzy", &bits), LLM_EINVAL);
	CHECK(strstr(llm_last_error(), "filters: length encoding") != NULL);
	/* parameters: set and get */
	llm_quality_params p;
	llm_quality_defaults(&p, "en");
	const llm_filter_param *dl = llm_filter_param_find("dup_line_frac", 13);
	CHECK_EQ_INT(llm_filter_param_set(&p, dl, "0.25"), LLM_OK);
	CHECK(p.dup_line_frac == 0.25);
	CHECK_EQ_INT(llm_filter_param_set(&p, dl, "off"), LLM_OK);
	CHECK(p.dup_line_frac == 0);
	CHECK_EQ_INT(llm_filter_param_set(&p, dl, "x"), LLM_EINVAL);
	const llm_filter_param *cb = llm_filter_param_find("c4_curly_bracket", 16);
	CHECK_EQ_INT(llm_filter_param_set(&p, cb, "no"), LLM_OK);
	CHECK(!p.c4_curly_bracket);
	llm_buf_reset(&b);
	llm_filter_param_get(&p, cb, &b);
	CHECK_STR(b.p, "false");
	const llm_filter_param *mc = llm_filter_param_find("min_chars", 9);
	CHECK_EQ_INT(llm_filter_param_set(&p, mc, "2.5"), LLM_EINVAL);
	CHECK_EQ_INT(llm_filter_param_set(&p, mc, "7"), LLM_OK);
	CHECK_EQ_INT(p.min_chars, 7);
	CHECK_EQ_INT(llm_filter_param_unknown("min_char", 8), LLM_EINVAL);
	CHECK(strstr(llm_last_error(), "did you mean 'min_chars'?") != NULL);
	/* --list-filters: every step, and the values of FineWeb-2's languages that differ */
	llm_buf_reset(&b);
	llm_filter_list(&b);
	CHECK(strstr(b.p, "length  document length (default)\n  reasons: too_short too_long too_few_words\n"));
	CHECK(strstr(b.p, "  dup_line_frac = 0.3 (ar 0.304, zh 0.287, de 0.263, "));
	CHECK(strstr(b.p, "  dup_para_frac = 0.3 (FineWeb-2 languages: 0)\n"));
	CHECK(strstr(b.p, "  counts lines: c4_lines_policy\n"));
	CHECK(strstr(b.p, "  code_max_line_length = 1000\n"));
	llm_buf_release(&b);
}

static llm_recipe *parse(const char *text)
{
	llm_recipe *r = llm_recipe_new();
	CHECK_EQ_INT(llm_recipe_parse(r, "r", text, strlen(text)), LLM_OK);
	return r;
}

static void test_precedence(void)
{
	llm_recipe *r = parse("[domain web lang zh]\nmin_chars = 5\n"
	                      "[default]\nmin_chars = 1\nmax_chars = 100\n"
	                      "[lang zh-Hant]\nmin_chars = 3\n"
	                      "[lang zh]\nmin_chars = 2\nfilters = length cwt\n"
	                      "[domain web, news]\nmin_chars = 4\ntox = no\n"
	                      "[domain news]\nfilters -= cwt\nfilters += code\n");
	llm_recipe_settings s;
	llm_recipe_resolve(r, "web", "zh", &s);
	CHECK_EQ_INT(s.qp.min_chars, 5);
	CHECK_EQ_INT(s.qp.max_chars, 100);
	CHECK(!s.tox);
	CHECK_EQ_INT(s.filters, (1u << LLM_FILTER_LENGTH) | (1u << LLM_FILTER_CWT));
	/* zh-Hant: the zh sections apply, the longer tag after them */
	llm_recipe_resolve(r, NULL, "zh-Hant", &s);
	CHECK_EQ_INT(s.qp.min_chars, 3);
	llm_recipe_resolve(r, "", "ZH-hant", &s);
	CHECK_EQ_INT(s.qp.min_chars, 3);
	/* a language that only starts like zh does not match */
	llm_recipe_resolve(r, "", "zhx", &s);
	CHECK_EQ_INT(s.qp.min_chars, 1);
	llm_recipe_resolve(r, "web", "en", &s);
	CHECK_EQ_INT(s.qp.min_chars, 4);
	CHECK_EQ_INT(s.filters, LLM_FILTER_DEFAULT);
	/* the domain beats the language; += and -= change the inherited set */
	llm_recipe_resolve(r, "news", "zh", &s);
	CHECK_EQ_INT(s.qp.min_chars, 4);
	CHECK_EQ_INT(s.filters, (1u << LLM_FILTER_LENGTH) | (1u << LLM_FILTER_CODE));
	/* built-in language defaults under the sections */
	llm_recipe_resolve(r, "", "zh", &s);
	CHECK(s.qp.dup_line_frac == 0.287 && s.qp.cjk);
	llm_recipe_resolve(r, "", "", &s);
	CHECK(s.qp.dup_line_frac == 0.3 && !s.qp.cjk && s.tox && s.tox_threshold < 0);
	CHECK_EQ_INT(s.normalize, LLM_NORM_DEFAULT);
	/* overrides win over every section */
	CHECK_EQ_INT(llm_recipe_set(r, "min_chars", "=", "9"), LLM_OK);
	CHECK_EQ_INT(llm_recipe_set(r, "filters", "+=", "encoding"), LLM_OK);
	llm_recipe_resolve(r, "web", "zh", &s);
	CHECK_EQ_INT(s.qp.min_chars, 9);
	CHECK(s.filters & (1u << LLM_FILTER_ENCODING));
	CHECK_EQ_INT(llm_recipe_set(r, "min_charz", "=", "9"), LLM_EINVAL);
	CHECK(strstr(llm_last_error(), "did you mean 'min_chars'?") != NULL);
	llm_recipe_free(r);
	llm_recipe_free(NULL);
}

static void test_errors(void)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "min_chars = 1\n", "r:1: 'min_chars' before the first [section]" },
		{ "[default]\n\n# c\nmin_char = 1\n", "r:4: unknown key 'min_char' (did you mean 'min_chars'?)" },
		{ "[default]\nfilters = c5\n", "r:2: unknown filter 'c5' (did you mean 'c4'?)" },
		{ "[default]\nnormalize = trimm\n", "r:2: unknown normalisation step 'trimm'" },
		{ "[default x]\n", "r:1: [default] takes nothing after it" },
		{ "[domain]\n", "r:1: section '[domain]'" },
		{ "[lang zh\n", "r:1: a section header ends with ']'" },
		{ "[lang zh]\nmin_chars += 3\n", "r:2: 'min_chars' takes '=', not '+='" },
		{ "[lang zh]\nmin_chars\n", "r:2: expected 'key = value'" },
		{ "[lang zh]\nmin_chars =\n", "r:2: 'min_chars' has no value" },
		{ "[lang zh]\ntox = maybe\n", "r:2: tox: expected yes or no" },
		{ "[lang zh]\ntox_threshold = 1.5\n", "r:2: tox_threshold: expected a number in [0, 1]" },
		{ "[lang zh]\nmin_stop_words = 1.5\n", "r:2: min_stop_words: expected a whole number" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		llm_recipe *r = llm_recipe_new();
		CHECK_EQ_INT(llm_recipe_parse(r, "r", bad[i].text, strlen(bad[i].text)), LLM_EFORMAT);
		if (!strstr(llm_last_error(), bad[i].msg))
			printf("#   got '%s', want '%s'\n", llm_last_error(), bad[i].msg);
		CHECK(strstr(llm_last_error(), bad[i].msg) != NULL);
		llm_recipe_free(r);
	}
	llm_recipe *r = llm_recipe_new();
	CHECK_EQ_INT(llm_recipe_load(r, "/nonexistent/recipe"), LLM_EIO);
	/* comments after values, CRLF, tabs */
	const char *ok = "[lang zh]\t# Chinese\r\n\tmin_chars\t=\t7   # seven\r\nfilters = length, cwt\r\n";
	CHECK_EQ_INT(llm_recipe_parse(r, "r", ok, strlen(ok)), LLM_OK);
	llm_recipe_settings s;
	llm_recipe_resolve(r, "", "zh", &s);
	CHECK_EQ_INT(s.qp.min_chars, 7);
	CHECK_EQ_INT(s.filters, (1u << LLM_FILTER_LENGTH) | (1u << LLM_FILTER_CWT));
	llm_recipe_free(r);
}

/* The shipped recipe: each section as documented. */
static void test_default_recipe(void)
{
	llm_recipe *r = llm_recipe_new();
	CHECK_EQ_INT(llm_recipe_load(r, unit_path("recipes/default")), LLM_OK);
	llm_recipe_settings s;
	llm_recipe_resolve(r, "web", "en", &s);
	CHECK_EQ_INT(s.filters, LLM_FILTER_DEFAULT);
	CHECK(s.tox && s.tox_threshold == 0.85);
	CHECK_EQ_INT(s.normalize, LLM_NORM_DEFAULT);
	llm_recipe_resolve(r, "web", "zh", &s);
	CHECK(!(s.filters & (1u << LLM_FILTER_C4)) && (s.filters & (1u << LLM_FILTER_CWT)));
	CHECK(s.qp.dup_line_frac == 0.287 && s.qp.top_ngram_frac[0] == 0.256 && s.qp.fw_short_line_thr == 0);
	CHECK(s.qp.cwt_min_avg_line_len == 10 && s.qp.cwt_min_han_ratio == 0.3 && s.qp.cwt_ngram == 13);
	llm_recipe_resolve(r, "code", "en", &s);
	CHECK_EQ_INT(s.filters, (1u << LLM_FILTER_LENGTH) | (1u << LLM_FILTER_ENCODING) | (1u << LLM_FILTER_CODE));
	CHECK(!s.tox && !(s.normalize & (LLM_NORM_SPACES | LLM_NORM_TRIM | LLM_NORM_BLANKS)));
	CHECK_EQ_INT(s.qp.code_max_line_len, 1000);
	static const char *const curated[] = { "books", "legal", "wiki", "qa", "news" };
	for (int i = 0; i < 5; i++)
		for (int z = 0; z < 2; z++) {
			llm_recipe_resolve(r, curated[i], z ? "zh" : "en", &s);
			CHECK_EQ_INT(s.filters, (1u << LLM_FILTER_LENGTH) | (1u << LLM_FILTER_GOPHER_REP) |
			                                (1u << LLM_FILTER_ENCODING));
			CHECK(s.qp.dup_para_frac == 0.3 && s.qp.dup_line_frac == 0.3);
			CHECK(s.qp.top_ngram_frac[0] == 0 && s.qp.dup_ngram_frac[5] == 0);
		}
	llm_recipe_resolve(r, "books", "zh-Hant", &s);
	CHECK_EQ_INT(s.qp.min_chars, 10);
	CHECK(!s.tox);
	llm_recipe_resolve(r, "news", "fr", &s);
	CHECK_EQ_INT(s.qp.min_chars, 20);
	llm_buf b = LLM_BUF_INIT;
	llm_recipe_explain(r, &b);
	CHECK(strstr(b.p, "domain books, lang zh: [default] [lang zh] [domain books legal wiki qa news] [domain books]\n"));
	/* The Mandarin value comes from its column of the parameter table, not the recipe. */
	CHECK(strstr(b.p, "  dup_line_frac = 0.287  # built-in\n"));
	llm_buf_release(&b);
	llm_recipe_free(r);
}

int main(void)
{
	RUN(test_table);
	RUN(test_precedence);
	RUN(test_errors);
	RUN(test_default_recipe);
	return unit_done();
}
