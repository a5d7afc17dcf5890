/*
 * gpu.c — the part of the CUDA backend every build has (gpu.h): option parsing, device
 * resolution and the element-type table. A build without CUDA answers "no GPU" here.
 */
#include "gpu.h"

#include <string.h>

#include "core/err.h"

static int parse(const char *s, const char *what, const char *const *names, int n, int *out)
{
	for (int i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = i;
			return LLM_OK;
		}
	char list[128] = "";
	for (int i = 0; i < n; i++) {
		strcat(list, i ? (i + 1 < n ? ", " : " or ") : "");
		strcat(list, names[i]);
	}
	return llm_fail(LLM_EINVAL, "%s '%s' is not %s", what, s, list);
}

static const char *const devices[] = { "cpu", "cuda", "auto" };
static const char *const precisions[] = { "fp32", "bf16", "fp16", "mixed" };
static const char *const recomputes[] = { "none", "ffn", "all" };

int llm_device_parse(const char *s, int *device)
{
	return parse(s, "device", devices, 3, device);
}

int llm_precision_parse(const char *s, int *precision)
{
	return parse(s, "precision", precisions, 4, precision);
}

int llm_recompute_parse(const char *s, int *recompute)
{
	return parse(s, "recompute", recomputes, 3, recompute);
}

const char *llm_precision_name(int p)
{
	return p >= 0 && p < 4 ? precisions[p] : "?";
}

const char *llm_recompute_name(int r)
{
	return r >= 0 && r < 3 ? recomputes[r] : "?";
}

int llm_cuda_available(void)
{
#ifdef LLM_HAVE_CUDA
	return llm_cuda_device_count() > 0;
#else
	return 0;
#endif
}

int llm_device_resolve(int requested, int *device)
{
	switch (requested) {
	case LLM_DEVICE_CPU:
		*device = LLM_DEVICE_CPU;
		return LLM_OK;
	case LLM_DEVICE_AUTO:
		*device = llm_cuda_available() ? LLM_DEVICE_CUDA : LLM_DEVICE_CPU;
		return LLM_OK;
	case LLM_DEVICE_CUDA:
#ifdef LLM_HAVE_CUDA
		if (!llm_cuda_available())
			return llm_fail(LLM_EUNSUPPORTED, "--device cuda: no GPU found (no driver or "
			                "no device visible)");
		*device = LLM_DEVICE_CUDA;
		return LLM_OK;
#else
		return llm_fail(LLM_EUNSUPPORTED, "--device cuda: built without CUDA (nvcc was not "
		                "found; rebuild with CUDA=1)");
#endif
	}
	return llm_fail(LLM_EINVAL, "unknown device %d", requested);
}

size_t llm_dtype_size(llm_dtype t)
{
	return t == LLM_DT_F32 ? 4 : 2;
}

const char *llm_dtype_name(llm_dtype t)
{
	return t == LLM_DT_F32 ? "fp32" : t == LLM_DT_BF16 ? "bf16" : "fp16";
}

#ifdef LLM_HAVE_CUDA
int llm_cuda_fail(int status)
{
	return llm_fail(status, "%s", llm_cuda_detail());
}
#endif
