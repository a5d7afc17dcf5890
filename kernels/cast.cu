/*
 * cast.cu — element type conversion on the GPU (gpu.h); the CPU mirror is lib/cast.c, and
 * both round to nearest even, so a bf16 copy made on either side has the same bits.
 */
#include "common.cuh"

template <typename D, typename S>
__global__ void cast_kernel(D *dst, const S *src, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		st(dst, i, ld(src, i));
}

template <typename D>
static int cast_from(D *dst, llm_dtype st_, const void *src, size_t n)
{
	DISPATCH_DTYPE(st_, (cast_kernel<D, T><<<blocks_for(n, 256), 256, 0, STREAM>>>(
		                    dst, (const T *)src, n)));
	LAUNCH_CHECK("cast_kernel");
	return LLM_OK;
}

extern "C" int llm_cuda_cast(llm_dtype dt, void *dst, llm_dtype st_, const void *src, size_t n)
{
	if (!n)
		return LLM_OK;
	switch (dt) {
	case LLM_DT_F32: return cast_from((float *)dst, st_, src, n);
	case LLM_DT_BF16: return cast_from((__nv_bfloat16 *)dst, st_, src, n);
	case LLM_DT_F16: return cast_from((__half *)dst, st_, src, n);
	}
	return llm_cuda_report(LLM_EINVAL, "cast", "unknown element type", __FILE__, __LINE__);
}
