/*
 * fuzz_hf.c — the Hugging Face model loader on arbitrary bytes: the input is config.json,
 * a NUL byte, then a safetensors image. Must never crash, read out of bounds, or allocate more
 * than the image bounds (hf.h).
 */
#include <stdint.h>
#include <string.h>

#include "model/hf.h"
#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	if (!nul)
		return 0;
	size_t n = (size_t)(nul - data);
	llm_model *m;
	if (llm_hf_from_mem(&m, (const char *)data, n, nul + 1, size - n - 1, "fuzz") == 0)
		llm_model_free(m);
	return 0;
}
