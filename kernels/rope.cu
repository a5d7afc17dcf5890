/*
 * rope.cu — llm_rope_fwd / llm_rope_bwd on the GPU (gpu.h).
 *
 * The angle follows transformers (and ops.c) step by step: inv_freq = 1 / theta^(2i/D) in
 * double rounded to fp32, pos * inv_freq in fp32, then cosf/sinf; a different order (e.g.
 * exp(-log(theta) 2i/D)) moves long positions by many ulps. One thread per (row, head, i)
 * pair, so in place is safe: each pair is read and written by the same thread.
 */
#include "common.cuh"

template <typename T>
__global__ void rope_kernel(T *out, const T *inp, const int32_t *pos, int N, int H, int D,
                            float theta, float sign)
{
	int half = D / 2;
	size_t total = (size_t)N * H * half;
	for (size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x; idx < total;
	     idx += (size_t)gridDim.x * blockDim.x) {
		int i = (int)(idx % half);
		size_t nh = idx / half, n = nh / H;
		float inv = (float)(1.0 / pow((double)theta, (double)(2 * i) / D));
		float a = (float)pos[n] * inv, cs = cosf(a), sn = sinf(a) * sign;
		size_t base = nh * D;
		float x1 = ld(inp, base + i), x2 = ld(inp, base + i + half);
		st(out, base + i, x1 * cs - x2 * sn);
		st(out, base + i + half, x2 * cs + x1 * sn);
	}
}

/* The backward is the rotation by -a: the same kernel with sin negated. */
static int rope(llm_dtype t, void *out, const void *inp, const int32_t *pos, int N, int H, int D,
                float theta, float sign)
{
	size_t total = (size_t)N * H * (D / 2);
	if (!total)
		return LLM_OK;
	DISPATCH_DTYPE(t, (rope_kernel<T><<<blocks_for(total, 256), 256, 0, STREAM>>>(
		                  (T *)out, (const T *)inp, pos, N, H, D, theta, sign)));
	LAUNCH_CHECK("rope_kernel");
	return LLM_OK;
}

extern "C" int llm_cuda_rope_fwd(llm_dtype t, void *out, const void *inp, const int32_t *pos,
                                 int N, int H, int D, float theta)
{
	return rope(t, out, inp, pos, N, H, D, theta, 1.0f);
}

extern "C" int llm_cuda_rope_bwd(llm_dtype t, void *dinp, const void *dout, const int32_t *pos,
                                 int N, int H, int D, float theta)
{
	return rope(t, dinp, dout, pos, N, H, D, theta, -1.0f);
}
