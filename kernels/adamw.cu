/*
 * adamw.cu — llm_adamw_update on the GPU (gpu.h): fp32 master weights and moments, the same
 * float operations in the same order as optim.c, so a GPU step equals the CPU step to the
 * last bit wherever sqrtf and division round the same (they are IEEE-exact on both).
 * The bias corrections are computed once on the host in double, as optim.c does.
 * With a bf16/fp16 run the compute copy of the weights is written in the same pass, so the
 * next forward reads the updated weights without a separate cast.
 */
#include <math.h>

#include "common.cuh"

template <typename L>
__global__ void adamw_kernel(float *p, L *plow, const float *g, float *m, float *v, size_t n,
                             float gs, float step, float sbc2, float decay, float b1, float b2,
                             float eps)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		/* _rn intrinsics: nvcc would contract a * b + c into one fma, which rounds once
		 * where the CPU rounds twice. */
		float gi = __fmul_rn(g[i], gs);
		float mi = __fadd_rn(__fmul_rn(b1, m[i]), __fmul_rn(1 - b1, gi));
		float vi = __fadd_rn(__fmul_rn(b2, v[i]), __fmul_rn(__fmul_rn(1 - b2, gi), gi));
		m[i] = mi;
		v[i] = vi;
		float np = __fsub_rn(__fmul_rn(p[i], decay),
		                     __fdiv_rn(__fmul_rn(step, mi), __fadd_rn(__fdiv_rn(sqrtf(vi), sbc2), eps)));
		p[i] = np;
		if (plow)
			st(plow, i, np);
	}
}

extern "C" int llm_cuda_adamw(float *p, llm_dtype lt, void *plow, const float *g, float *m,
                              float *v, size_t n, float gscale, double lr, double weight_decay,
                              double beta1, double beta2, double eps, int64_t t)
{
	if (!n)
		return LLM_OK;
	/* As optim.c: corrections from the double betas; the float betas for the moments. */
	double bc1 = 1 - pow(beta1, (double)t), bc2 = 1 - pow(beta2, (double)t);
	float step = (float)(lr / bc1), sbc2 = (float)sqrt(bc2);
	float decay = (float)(1 - lr * weight_decay);
	if (!plow)
		lt = LLM_DT_F32;
	DISPATCH_DTYPE(lt, (adamw_kernel<T><<<blocks_for(n, 256), 256, 0, STREAM>>>(
		                   p, (T *)plow, g, m, v, n, gscale, step, sbc2, decay, (float)beta1,
		                   (float)beta2, (float)eps)));
	LAUNCH_CHECK("adamw_kernel");
	return LLM_OK;
}
