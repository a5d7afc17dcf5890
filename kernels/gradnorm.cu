/*
 * gradnorm.cu — llm_sum_squares on the GPU (gpu.h): the global gradient norm and its pieces
 * (per layer, per ZeRO shard).
 *
 * Squares are summed in double, as optim.c does: a 10^8-element fp32 sum would otherwise lose
 * digits the clipping threshold can see. A fixed grid writes one partial per block, a single
 * block adds them in index order: the result does not depend on timing.
 */
#include "common.cuh"

enum { THREADS = 256, GRID = 512 };

__global__ void sumsq_partial(double *part, const float *x, size_t n)
{
	double s = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		s += (double)x[i] * x[i];
	__shared__ double sh[THREADS];
	sh[threadIdx.x] = s;
	__syncthreads();
	for (int o = THREADS / 2; o > 0; o >>= 1) {
		if (threadIdx.x < o)
			sh[threadIdx.x] += sh[threadIdx.x + o];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		part[blockIdx.x] = sh[0];
}

__global__ void sumsq_final(double *out, const double *part, int nparts)
{
	__shared__ double sh[THREADS];
	double s = 0;
	for (int i = threadIdx.x; i < nparts; i += THREADS)
		s += part[i];
	sh[threadIdx.x] = s;
	__syncthreads();
	for (int o = THREADS / 2; o > 0; o >>= 1) {
		if (threadIdx.x < o)
			sh[threadIdx.x] += sh[threadIdx.x + o];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		*out += sh[0];
}

extern "C" int llm_cuda_sum_squares(double *out, const float *x, size_t n)
{
	if (!n)
		return LLM_OK;
	void *part;
	int rc = llm_cuda_scratch(&part, GRID * sizeof(double));
	if (rc)
		return rc;
	unsigned grid = blocks_for(n, THREADS);
	grid = grid > GRID ? GRID : grid;
	sumsq_partial<<<grid, THREADS, 0, STREAM>>>((double *)part, x, n);
	LAUNCH_CHECK("sumsq_partial");
	sumsq_final<<<1, THREADS, 0, STREAM>>>(out, (const double *)part, (int)grid);
	LAUNCH_CHECK("sumsq_final");
	return LLM_OK;
}
