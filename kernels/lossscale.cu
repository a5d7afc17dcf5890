/*
 * lossscale.cu — scaling gradients in place on the GPU (gpu.h): undoing the loss scale of an
 * fp16 run, or applying a clip factor, where the optimizer does not fold it in (a gradient
 * read by something other than AdamW, e.g. a saved gradient). The scaler's decisions (grow,
 * back off, skip) are host logic in lib/lossscale.c; overflow shows as a non-finite global
 * norm (gradnorm.cu), so no separate scan over the gradients is needed.
 */
#include "common.cuh"

__global__ void scale_kernel(float *x, size_t n, float s)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		x[i] *= s;
}

extern "C" int llm_cuda_scale(float *x, size_t n, float s)
{
	if (!n || s == 1.0f)
		return LLM_OK;
	scale_kernel<<<blocks_for(n, 256), 256, 0, STREAM>>>(x, n, s);
	LAUNCH_CHECK("scale_kernel");
	return LLM_OK;
}
