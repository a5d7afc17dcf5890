/*
 * rmsnorm.cu — llm_rmsnorm_fwd / llm_rmsnorm_bwd on the GPU (gpu.h).
 *
 * One block per row for the row sums. The weight gradient is a sum over rows per column;
 * rather than atomics (a different order each run) it is two passes: blocks of ROWS rows
 * write per-chunk column sums to scratch, then one thread per column adds the chunks in order.
 */
#include "common.cuh"

enum { THREADS = 256, ROWS = 128 };

template <typename T>
__global__ void rmsnorm_fwd_kernel(T *out, float *rstd, const float *inp, const float *w, int C,
                                   float eps)
{
	const float *x = inp + (size_t)blockIdx.x * C;
	float ss = 0;
	for (int c = threadIdx.x; c < C; c += blockDim.x)
		ss += x[c] * x[c];
	ss = block_sum(ss);
	float r = 1.0f / sqrtf(ss / C + eps);
	for (int c = threadIdx.x; c < C; c += blockDim.x)
		st(out, (size_t)blockIdx.x * C + c, w[c] * (x[c] * r));
	if (rstd && threadIdx.x == 0)
		rstd[blockIdx.x] = r;
}

__global__ void rmsnorm_bwd_kernel(float *dinp, const float *dout, const float *inp,
                                   const float *w, const float *rstd, int C)
{
	size_t row = (size_t)blockIdx.x * C;
	const float *x = inp + row, *dy = dout + row;
	float r = rstd[blockIdx.x], dot = 0;
	for (int c = threadIdx.x; c < C; c += blockDim.x)
		dot += dy[c] * w[c] * x[c] * r;
	dot = block_sum(dot) / C;
	for (int c = threadIdx.x; c < C; c += blockDim.x)
		dinp[row + c] += r * (dy[c] * w[c] - x[c] * r * dot);
}

/* part[chunk, C] = sum over the chunk's rows of dy * xhat. */
__global__ void rmsnorm_dw_partial(float *part, const float *dout, const float *inp,
                                   const float *rstd, int N, int C)
{
	int c = blockIdx.x * blockDim.x + threadIdx.x;
	if (c >= C)
		return;
	int n0 = blockIdx.y * ROWS, n1 = min(N, n0 + ROWS);
	float s = 0;
	for (int n = n0; n < n1; n++)
		s += dout[(size_t)n * C + c] * inp[(size_t)n * C + c] * rstd[n];
	part[(size_t)blockIdx.y * C + c] = s;
}

__global__ void rmsnorm_dw_final(float *dw, const float *part, int chunks, int C)
{
	int c = blockIdx.x * blockDim.x + threadIdx.x;
	if (c >= C)
		return;
	float s = 0;
	for (int k = 0; k < chunks; k++)
		s += part[(size_t)k * C + c];
	dw[c] += s;
}

extern "C" int llm_cuda_rmsnorm_fwd(llm_dtype ot, void *out, float *rstd, const float *inp,
                                    const float *weight, int N, int C, float eps)
{
	if (N <= 0)
		return LLM_OK;
	DISPATCH_DTYPE(ot, (rmsnorm_fwd_kernel<T><<<N, THREADS, 0, STREAM>>>((T *)out, rstd, inp,
	                                                                     weight, C, eps)));
	LAUNCH_CHECK("rmsnorm_fwd_kernel");
	return LLM_OK;
}

extern "C" int llm_cuda_rmsnorm_bwd(float *dinp, float *dweight, const float *dout,
                                    const float *inp, const float *weight, const float *rstd,
                                    int N, int C)
{
	if (N <= 0)
		return LLM_OK;
	rmsnorm_bwd_kernel<<<N, THREADS, 0, STREAM>>>(dinp, dout, inp, weight, rstd, C);
	LAUNCH_CHECK("rmsnorm_bwd_kernel");
	int chunks = (N + ROWS - 1) / ROWS, rc;
	void *part;
	if ((rc = llm_cuda_scratch(&part, (size_t)chunks * C * sizeof(float))))
		return rc;
	dim3 grid((C + 127) / 128, chunks);
	rmsnorm_dw_partial<<<grid, 128, 0, STREAM>>>((float *)part, dout, inp, rstd, N, C);
	LAUNCH_CHECK("rmsnorm_dw_partial");
	rmsnorm_dw_final<<<(C + 127) / 128, 128, 0, STREAM>>>(dweight, (const float *)part, chunks, C);
	LAUNCH_CHECK("rmsnorm_dw_final");
	return LLM_OK;
}
