/*
 * fuzz_safetensors.c — the safetensors reader on arbitrary bytes: parse, then read every
 * tensor as fp32 (the path a checkpoint load takes). Must never crash or read out of bounds.
 */
#include <stdint.h>
#include <stdlib.h>

#include "safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	llm_safetensors *st;
	if (llm_st_parse(&st, data, size, "fuzz") != 0)
		return 0;
	for (size_t i = 0; i < llm_st_count(st); i++) {
		const llm_st_tensor *t = llm_st_at(st, i);
		if (t->numel > (1u << 20))
			continue;
		float *out = malloc((t->numel ? t->numel : 1) * sizeof *out);
		llm_st_read_f32(st, t->name, out, t->ndim, t->shape);
		free(out);
	}
	llm_st_meta(st, "format");
	llm_st_free(st);
	return 0;
}
