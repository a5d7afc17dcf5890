/*
 * embedding.cu — llm_embedding_fwd / llm_embedding_bwd on the GPU (gpu.h).
 *
 * The backward adds rows of dout into the rows of the table named by the tokens; tokens
 * repeat, so a thread per row would need atomics and give a different sum order on every run.
 * Instead the host groups the rows by token (llm_gpuplan_embed, it has the tokens anyway) and one
 * block per distinct token sums its rows in order: deterministic, and no two blocks write the
 * same row.
 */
#include "common.cuh"

__global__ void embedding_fwd_kernel(float *out, const int32_t *tokens, const float *wte, int C)
{
	const float *src = wte + (size_t)tokens[blockIdx.x] * C;
	float *dst = out + (size_t)blockIdx.x * C;
	for (int c = threadIdx.x; c < C; c += blockDim.x)
		dst[c] = src[c];
}

__global__ void embedding_bwd_kernel(float *dwte, const float *dout, const int32_t *order,
                                     const int32_t *starts, const int32_t *uniq, int C)
{
	int u = blockIdx.x, a = starts[u], b = starts[u + 1];
	float *dst = dwte + (size_t)uniq[u] * C;
	for (int c = threadIdx.x; c < C; c += blockDim.x) {
		float s = dst[c];
		for (int i = a; i < b; i++)
			s += dout[(size_t)order[i] * C + c];
		dst[c] = s;
	}
}

extern "C" int llm_cuda_embedding_fwd(float *out, const int32_t *tokens, const float *wte, int N,
                                      int C)
{
	if (N <= 0)
		return LLM_OK;
	embedding_fwd_kernel<<<N, 256, 0, STREAM>>>(out, tokens, wte, C);
	LAUNCH_CHECK("embedding_fwd_kernel");
	return LLM_OK;
}

extern "C" int llm_cuda_embedding_bwd(float *dwte, const float *dout, const int32_t *order,
                                      const int32_t *starts, const int32_t *uniq, int U, int C)
{
	if (U <= 0)
		return LLM_OK;
	embedding_bwd_kernel<<<U, 256, 0, STREAM>>>(dwte, dout, order, starts, uniq, C);
	LAUNCH_CHECK("embedding_bwd_kernel");
	return LLM_OK;
}
