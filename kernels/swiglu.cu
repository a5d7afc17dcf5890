/*
 * swiglu.cu — llm_swiglu_fwd / llm_swiglu_bwd on the GPU (gpu.h), any element type, fp32
 * arithmetic. The backward overwrites dgate and dup (the CPU op adds): the model writes each
 * once per layer, so adding would only cost a memset.
 *
 * expf, not __expf: the fast intrinsic's error (2 ulp + range reduction) would show in the
 * 1e-5 fp32 check against the CPU.
 */
#include "common.cuh"

template <typename T>
__global__ void swiglu_fwd_kernel(T *out, const T *gate, const T *up, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float g = ld(gate, i);
		st(out, i, g / (1.0f + expf(-g)) * ld(up, i));
	}
}

template <typename T>
__global__ void swiglu_bwd_kernel(T *dgate, T *dup, const T *dout, const T *gate, const T *up,
                                  size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float g = ld(gate, i), u = ld(up, i), d = ld(dout, i), s = 1.0f / (1.0f + expf(-g));
		st(dgate, i, d * u * s * (1.0f + g * (1.0f - s)));
		st(dup, i, d * g * s);
	}
}

extern "C" int llm_cuda_swiglu_fwd(llm_dtype t, void *out, const void *gate, const void *up,
                                   size_t n)
{
	if (!n)
		return LLM_OK;
	DISPATCH_DTYPE(t, (swiglu_fwd_kernel<T><<<blocks_for(n, 256), 256, 0, STREAM>>>(
		                  (T *)out, (const T *)gate, (const T *)up, n)));
	LAUNCH_CHECK("swiglu_fwd_kernel");
	return LLM_OK;
}

extern "C" int llm_cuda_swiglu_bwd(llm_dtype t, void *dgate, void *dup, const void *dout,
                                   const void *gate, const void *up, size_t n)
{
	if (!n)
		return LLM_OK;
	DISPATCH_DTYPE(t, (swiglu_bwd_kernel<T><<<blocks_for(n, 256), 256, 0, STREAM>>>(
		                  (T *)dgate, (T *)dup, (const T *)dout, (const T *)gate,
		                  (const T *)up, n)));
	LAUNCH_CHECK("swiglu_bwd_kernel");
	return LLM_OK;
}
