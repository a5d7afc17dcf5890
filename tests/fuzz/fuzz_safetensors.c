/*
 * fuzz_safetensors.c — the safetensors reader on arbitrary bytes: parse, then read every
 * tensor as fp32 (the path a checkpoint load takes). Must never crash or read out of bounds.
 */
#include <stdint.h>
#include <stdlib.h>

#include "model/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	llm_safetensors *st;
	if (llm_safetensors_parse(&st, data, size, "fuzz") != 0)
		return 0;
	for (size_t i = 0; i < llm_safetensors_count(st); i++) {
		const llm_safetensors_tensor *t = llm_safetensors_at(st, i);
		if (t->numel > (1u << 20))
			continue;
		float *out = malloc((t->numel ? t->numel : 1) * sizeof *out);
		llm_safetensors_read_f32(st, t->name, out, t->ndim, t->shape);
		free(out);
	}
	llm_safetensors_meta(st, "format");
	llm_safetensors_free(st);
	return 0;
}
