/* fuzz_recipe.c — recipe files on arbitrary bytes: parsing never crashes or reads past the
 * input, a parsed recipe resolves for any (domain, language) and explains itself, and the
 * quality rules run on the input as a document with the settings it resolves to. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text/filter.h"
#include "text/recipe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size ? size : 1);
	memcpy(s, data, size);
	llm_recipe *r = llm_recipe_new();
	if (llm_recipe_parse(r, "fuzz", s, size) == 0) {
		static const char *const domains[] = { "", "web", "code", "books" };
		static const char *const langs[] = { "", "en", "zh", "zh-Hant", "ja" };
		llm_recipe_settings st;
		for (int d = 0; d < 4; d++)
			for (int l = 0; l < 5; l++)
				llm_recipe_resolve(r, domains[d], langs[l], &st);
		llm_buf b = LLM_BUF_INIT, text = LLM_BUF_INIT, scratch = LLM_BUF_INIT;
		llm_recipe_explain(r, &b);
		/* the rules on the bytes as text (valid UTF-8 or not: the rules take any bytes) */
		static llm_quality *q;
		if (!q)
			q = llm_quality_new();
		llm_recipe_resolve(r, "", "zh", &st);
		llm_buf_add(&text, s, size);
		uint64_t counts[LLM_FILTER_NCOUNTERS] = { 0 };
		llm_verdict v;
		llm_filter_run((1u << LLM_FILTER_NSTEPS) - 1, q, &st.qp, NULL, &text, &scratch, counts, &v);
		llm_buf_release(&b);
		llm_buf_release(&text);
		llm_buf_release(&scratch);
	}
	llm_recipe_free(r);
	free(s);
	return 0;
}
