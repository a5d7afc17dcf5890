/*
 * common.cuh — what every kernel file shares: error reporting, element types, reductions.
 *
 * Kernels never depend on lib/ code at link time (libllmcuda.a is linked after libllm.a), only
 * on its headers: errors travel back as LLM_E* codes with a detail string (runtime.cu).
 */
#ifndef LLM_KERNELS_COMMON_CUH
#define LLM_KERNELS_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "core/err.h"
#include "model/gpu.h"

/* Record "what failed where" for llm_cuda_detail() and return the matching LLM_E* status. */
extern "C" int llm_cuda_report(int status, const char *what, const char *err, const char *file,
                               int line);
int llm_cuda_check(cudaError_t e, const char *what, const char *file, int line);

#define CUDA_TRY(call)                                                        \
	do {                                                                  \
		cudaError_t e_ = (call);                                      \
		if (e_ != cudaSuccess)                                        \
			return llm_cuda_check(e_, #call, __FILE__, __LINE__); \
	} while (0)

/* After every launch: a bad configuration is reported here, a fault at the next sync. In
 * deterministic mode (tests) the stream is also synchronised, so that a kernel fault names
 * the kernel that caused it. */
#define LAUNCH_CHECK(name)                                                                  \
	do {                                                                                \
		cudaError_t e_ = cudaGetLastError();                                        \
		if (e_ == cudaSuccess && llm_cuda_deterministic())                          \
			e_ = cudaStreamSynchronize((cudaStream_t)llm_cuda_stream());        \
		if (e_ != cudaSuccess)                                                      \
			return llm_cuda_check(e_, name, __FILE__, __LINE__);                \
	} while (0)

#define STREAM ((cudaStream_t)llm_cuda_stream())

static inline unsigned blocks_for(size_t n, unsigned threads)
{
	size_t b = (n + threads - 1) / threads;
	return (unsigned)(b > 65535u * 16 ? 65535u * 16 : b); /* grid-stride loops cover the rest */
}

/* Element load/store with fp32 arithmetic in between. */
__device__ __forceinline__ float ld(const float *p, size_t i) { return p[i]; }
__device__ __forceinline__ float ld(const __nv_bfloat16 *p, size_t i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ float ld(const __half *p, size_t i) { return __half2float(p[i]); }
__device__ __forceinline__ void st(float *p, size_t i, float x) { p[i] = x; }
__device__ __forceinline__ void st(__nv_bfloat16 *p, size_t i, float x) { p[i] = __float2bfloat16_rn(x); }
__device__ __forceinline__ void st(__half *p, size_t i, float x) { p[i] = __float2half_rn(x); }

/* Run BODY with T typedef'd to the C++ type of dtype t; an unknown dtype returns LLM_EINVAL
 * from the calling function. */
#define DISPATCH_DTYPE(t, BODY)                                            \
	switch (t) {                                                       \
	case LLM_DT_F32: { typedef float T; BODY; break; }                 \
	case LLM_DT_BF16: { typedef __nv_bfloat16 T; BODY; break; }        \
	case LLM_DT_F16: { typedef __half T; BODY; break; }                \
	default: return llm_cuda_report(LLM_EINVAL, "dtype", "unknown element type", __FILE__, __LINE__); \
	}

__device__ __forceinline__ float warp_sum(float x)
{
	for (int o = 16; o > 0; o >>= 1)
		x += __shfl_xor_sync(0xffffffffu, x, o);
	return x;
}

__device__ __forceinline__ float warp_max(float x)
{
	for (int o = 16; o > 0; o >>= 1)
		x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
	return x;
}

/* Sum over the block (blockDim.x a multiple of 32, at most 1024); every thread gets it. The
 * order of additions depends only on blockDim, so results are reproducible. */
__device__ __forceinline__ float block_sum(float x)
{
	__shared__ float part[32];
	int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
	x = warp_sum(x);
	__syncthreads(); /* part[] may still be read by a previous call */
	if (lane == 0)
		part[w] = x;
	__syncthreads();
	x = lane < nw ? part[lane] : 0.0f;
	return warp_sum(x);
}

__device__ __forceinline__ float block_max(float x)
{
	__shared__ float part[32];
	int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
	x = warp_max(x);
	__syncthreads();
	if (lane == 0)
		part[w] = x;
	__syncthreads();
	x = lane < nw ? part[lane] : -INFINITY;
	return warp_max(x);
}

#endif
