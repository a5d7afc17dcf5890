/*
 * xent.cu — llm_xent_fwd and llm_xent_bwd fused on the GPU (gpu.h).
 *
 * One block per row. The first pass keeps a running maximum and a sum rescaled to it per
 * thread (online softmax), then combines threads: the log-sum-exp without a separate max
 * pass. The second pass writes the gradient over the logits themselves when asked, so the
 * largest activation of the model ([N, V]) needs one buffer, as on the CPU.
 * Sums are fp32 in a tree (the CPU sums in double, sequentially); the tree keeps the error
 * near log2(V) ulps, well inside the 1e-5 check.
 */
#include "common.cuh"

enum { THREADS = 512 };

template <typename T>
__global__ void xent_kernel(float *losses, T *dlogits, const T *logits, const int32_t *targets,
                            const float *dloss, float dloss_all, int V)
{
	size_t row = (size_t)blockIdx.x * V;
	int t = targets[blockIdx.x];
	if (t < 0) {
		if (losses && threadIdx.x == 0)
			losses[blockIdx.x] = 0;
		if (dlogits)
			for (int j = threadIdx.x; j < V; j += blockDim.x)
				st(dlogits, row + j, 0.0f);
		return;
	}
	float m = -INFINITY, s = 0;
	for (int j = threadIdx.x; j < V; j += blockDim.x) {
		float x = ld(logits, row + j);
		if (x > m) {
			s = s * expf(m - x) + 1.0f;
			m = x;
		} else {
			s += expf(x - m);
		}
	}
	float xt = ld(logits, row + t); /* before any thread overwrites the row */
	float M = block_max(m);
	float S = block_sum(m == -INFINITY ? 0.0f : s * expf(m - M));
	float lse = M + logf(S);
	if (losses && threadIdx.x == 0)
		losses[blockIdx.x] = lse - xt;
	if (!dlogits)
		return;
	float g = dloss ? dloss[blockIdx.x] : dloss_all;
	for (int j = threadIdx.x; j < V; j += blockDim.x) {
		float p = expf(ld(logits, row + j) - lse) * g;
		st(dlogits, row + j, j == t ? p - g : p);
	}
}

extern "C" int llm_cuda_xent(llm_dtype t, float *losses, void *dlogits, const void *logits,
                             const int32_t *targets, const float *dloss, float dloss_all, int N,
                             int V)
{
	if (N <= 0)
		return LLM_OK;
	DISPATCH_DTYPE(t, (xent_kernel<T><<<N, THREADS, 0, STREAM>>>(
		                  losses, (T *)dlogits, (const T *)logits, targets, dloss, dloss_all, V)));
	LAUNCH_CHECK("xent_kernel");
	return LLM_OK;
}
