/*
 * Fuzz target: llm-score's parsers. The input is read as a score sketch file (then bucketed
 * and merged into itself), and as a --keep expression (then evaluated).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "text/scorekeep.h"
#include "text/scoresketch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	llm_scoresketch *ss;
	if (llm_scoresketch_load_mem(&ss, (const char *)data, size, "fuzz") == LLM_OK) {
		static const double v[] = { 0, 1e-9, 1e-5, 0.3, 0.5, 0.9999, 1.00001, 2, -1 };
		for (size_t i = 0; i < llm_scoresketch_count(ss); i++)
			for (size_t k = 0; k < sizeof v / sizeof *v; k++)
				llm_scoresketch_bucket(ss, i, v[k], 20);
		llm_scoresketch *copy = llm_scoresketch_new();
		llm_scoresketch_merge(copy, ss);
		llm_scoresketch_merge(copy, ss);
		llm_scoresketch_free(copy);
		llm_scoresketch_free(ss);
	}
	char *expr = malloc(size + 1);
	if (!expr)
		return 0;
	memcpy(expr, data, size);
	expr[size] = 0;
	llm_scorekeep *k;
	if (llm_scorekeep_parse(&k, expr) == LLM_OK) {
		double *vals = calloc(llm_scorekeep_nvars(k) + 1, sizeof *vals);
		if (vals)
			llm_scorekeep_eval(k, vals);
		free(vals);
		llm_scorekeep_free(k);
	}
	free(expr);
	return 0;
}
