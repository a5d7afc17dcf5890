/*
 * attention.cu — llm_attention_fwd / llm_attention_bwd on the GPU (gpu.h): causal
 * grouped-query attention, fused in the manner of FlashAttention (Dao et al., 2022), so memory
 * is O(T) per head instead of the CPU reference's T x T probabilities.
 *
 * Forward: a block owns BQ query rows of one (batch, head), one thread per row, and walks the
 * keys in tiles of BK staged in shared memory. Each thread keeps its query, its output
 * accumulator and a running (max, sum) of the softmax, rescaling the accumulator when the max
 * grows (the online softmax of Milakov & Gimelshein, 2018). Tiles past the block's last
 * visible key are never loaded: the causal half of the work is skipped, not masked.
 * It stores lse = max + log(sum) per row; the backward recomputes p = exp(s - lse).
 *
 * Backward, without atomics so that it is deterministic:
 *   delta_i = sum_d dO_i,d O_i,d                      (one thread per query row)
 *   dq kernel: one thread per query row walks the keys:  dq_i = scale sum_j p_ij (dP_ij - delta_i) k_j
 *   dkv kernel: one thread per key row walks the queries of every head of its group:
 *       dv_j = sum_i p_ij dO_i,  dk_j = scale sum_i p_ij (dP_ij - delta_i) q_i,  dP_ij = dO_i . v_j
 * so each output is written by exactly one thread (GQA's sum over the heads sharing a key-value
 * head happens inside that thread, in head order).
 *
 * Rows are padded with zeros to DM (64 or 128), the compile-time register width, so that the
 * loops over a row are fully unrolled with no bound checks; D up to 128 is supported. Loops
 * over keys and queries stay rolled: unrolling them multiplies compile time for little gain. The
 * arithmetic is fp32 scalar: correct for every type and shape, but without tensor cores (see
 * the note in tests/gpu/run.sh on what that means for MFU).
 */
#include "common.cuh"

enum { BQ = 64, BK = 32, BKV = 64, BQ2 = 32 };

template <int DM>
__device__ __forceinline__ float dot(const float *a, const float *b)
{
	float s = 0;
#pragma unroll
	for (int d = 0; d < DM; d++)
		s += a[d] * b[d];
	return s;
}

/* Stage rows [r0, r0 + R) of a [rows, heads, D] tensor (head hd) into sh[R][DM] as fp32,
 * zero past the end of the tensor and past D. */
template <typename T, int DM, int R>
__device__ __forceinline__ void stage(float (*sh)[DM], const T *x, size_t base, int r0, int rows,
                                      int heads, int hd, int D)
{
	for (int idx = threadIdx.x; idx < R * DM; idx += blockDim.x) {
		int rr = idx / DM, d = idx % DM, r = r0 + rr;
		sh[rr][d] = r < rows && d < D ? ld(x, ((base + r) * heads + hd) * D + d) : 0.0f;
	}
}

template <typename T, int DM>
__global__ void __launch_bounds__(BQ) attn_fwd_kernel(T *out, float *lse, const T *q, const T *k,
                                                      const T *v, int Tq, int Tk, int H, int KVH,
                                                      int D, float scale)
{
	__shared__ float ks[BK][DM], vs[BK][DM], ss[BK][BQ]; /* ss: this tile's scores, per thread */
	int b = blockIdx.z, h = blockIdx.y, i = blockIdx.x * BQ + threadIdx.x;
	int kvh = h / (H / KVH), off = Tk - Tq, qpos = off + i;
	float qr[DM], acc[DM];
#pragma unroll
	for (int d = 0; d < DM; d++) {
		qr[d] = i < Tq && d < D ? ld(q, (((size_t)b * Tq + i) * H + h) * D + d) : 0.0f;
		acc[d] = 0;
	}
	float m = -INFINITY, l = 0;
	int kmax = min(Tk - 1, off + min(Tq - 1, (int)blockIdx.x * BQ + BQ - 1));
	for (int j0 = 0; j0 <= kmax; j0 += BK) {
		stage<T, DM, BK>(ks, k, (size_t)b * Tk, j0, Tk, KVH, kvh, D);
		stage<T, DM, BK>(vs, v, (size_t)b * Tk, j0, Tk, KVH, kvh, D);
		__syncthreads();
		int limit = i < Tq ? min(BK, qpos - j0 + 1) : 0;
		if (limit > 0) {
			float mt = -INFINITY;
#pragma unroll 1
			for (int jj = 0; jj < limit; jj++) {
				float s = dot<DM>(qr, ks[jj]) * scale;
				ss[jj][threadIdx.x] = s;
				mt = fmaxf(mt, s);
			}
			float mn = fmaxf(m, mt), corr = expf(m - mn); /* exp(-inf) = 0 on the first tile */
			l *= corr;
#pragma unroll
			for (int d = 0; d < DM; d++)
				acc[d] *= corr;
#pragma unroll 1
			for (int jj = 0; jj < limit; jj++) {
				float p = expf(ss[jj][threadIdx.x] - mn);
				l += p;
#pragma unroll
				for (int d = 0; d < DM; d++)
					acc[d] += p * vs[jj][d];
			}
			m = mn;
		}
		__syncthreads();
	}
	if (i >= Tq)
		return;
	float inv = 1.0f / l;
	size_t o = (((size_t)b * Tq + i) * H + h) * D;
#pragma unroll
	for (int d = 0; d < DM; d++)
		if (d < D)
			st(out, o + d, acc[d] * inv);
	lse[((size_t)b * H + h) * Tq + i] = m + logf(l);
}

template <typename T>
__global__ void attn_delta_kernel(float *delta, const T *dout, const T *out, int B, int Tq, int H,
                                  int D)
{
	size_t r = blockIdx.x * (size_t)blockDim.x + threadIdx.x; /* (b, i, h) row */
	if (r >= (size_t)B * Tq * H)
		return;
	float s = 0;
	for (int d = 0; d < D; d++)
		s += ld(dout, r * D + d) * ld(out, r * D + d);
	size_t h = r % H, bi = r / H, i = bi % Tq, b = bi / Tq;
	delta[(b * H + h) * Tq + i] = s;
}

template <typename T, int DM>
__global__ void __launch_bounds__(BQ) attn_dq_kernel(T *dq, const T *dout, const T *q, const T *k,
                                                     const T *v, const float *lse,
                                                     const float *delta, int Tq, int Tk, int H,
                                                     int KVH, int D, float scale)
{
	__shared__ float ks[BK][DM], vs[BK][DM];
	int b = blockIdx.z, h = blockIdx.y, i = blockIdx.x * BQ + threadIdx.x;
	int kvh = h / (H / KVH), off = Tk - Tq, qpos = off + i;
	size_t row = (((size_t)b * Tq + i) * H + h) * D;
	float qr[DM], dor[DM], acc[DM];
#pragma unroll
	for (int d = 0; d < DM; d++) {
		qr[d] = i < Tq && d < D ? ld(q, row + d) : 0.0f;
		dor[d] = i < Tq && d < D ? ld(dout, row + d) : 0.0f;
		acc[d] = 0;
	}
	size_t lr = ((size_t)b * H + h) * Tq + i;
	float L = i < Tq ? lse[lr] : 0.0f, Dl = i < Tq ? delta[lr] : 0.0f;
	int kmax = min(Tk - 1, off + min(Tq - 1, (int)blockIdx.x * BQ + BQ - 1));
	for (int j0 = 0; j0 <= kmax; j0 += BK) {
		stage<T, DM, BK>(ks, k, (size_t)b * Tk, j0, Tk, KVH, kvh, D);
		stage<T, DM, BK>(vs, v, (size_t)b * Tk, j0, Tk, KVH, kvh, D);
		__syncthreads();
		int limit = i < Tq ? min(BK, qpos - j0 + 1) : 0;
#pragma unroll 1
		for (int jj = 0; jj < limit; jj++) {
			float p = expf(dot<DM>(qr, ks[jj]) * scale - L);
			float ds = p * (dot<DM>(dor, vs[jj]) - Dl);
#pragma unroll
			for (int d = 0; d < DM; d++)
				acc[d] += ds * ks[jj][d];
		}
		__syncthreads();
	}
	if (i >= Tq)
		return;
#pragma unroll
	for (int d = 0; d < DM; d++)
		if (d < D)
			st(dq, row + d, acc[d] * scale);
}

/* Dynamic shared memory of the dkv kernel: the block's own key and value rows (padded by one
 * float so that thread t reading row t, column d hits bank (t + d) mod 32), then a tile of
 * queries, output gradients, lse and delta. */
template <int DM>
static size_t dkv_smem(void)
{
	return (2 * (size_t)BKV * (DM + 1) + 2 * (size_t)BQ2 * DM + 2 * BQ2) * sizeof(float);
}

template <typename T, int DM>
__global__ void __launch_bounds__(BKV) attn_dkv_kernel(T *dk, T *dv, const T *dout, const T *q,
                                                       const T *k, const T *v, const float *lse,
                                                       const float *delta, int Tq, int Tk, int H,
                                                       int KVH, int D, float scale)
{
	extern __shared__ float sm[];
	float *kself = sm, *vself = kself + BKV * (DM + 1);
	float(*qs)[DM] = (float(*)[DM])(vself + BKV * (DM + 1));
	float(*dos)[DM] = qs + BQ2;
	float *Ls = (float *)(dos + BQ2), *Ds = Ls + BQ2;
	int b = blockIdx.z, kvh = blockIdx.y, rep = H / KVH, off = Tk - Tq;
	int j0 = blockIdx.x * BKV, j = j0 + threadIdx.x;
	float *kr = kself + threadIdx.x * (DM + 1), *vr = vself + threadIdx.x * (DM + 1);
	size_t krow = (((size_t)b * Tk + j) * KVH + kvh) * D;
	float dka[DM], dva[DM];
#pragma unroll
	for (int d = 0; d < DM; d++) {
		kr[d] = j < Tk && d < D ? ld(k, krow + d) : 0.0f;
		vr[d] = j < Tk && d < D ? ld(v, krow + d) : 0.0f;
		dka[d] = dva[d] = 0;
	}
	/* Queries before istart see none of this block's keys. */
	int istart = max(0, j0 - off) / BQ2 * BQ2;
	for (int r = 0; r < rep; r++) {
		int h = kvh * rep + r;
		for (int i0 = istart; i0 < Tq; i0 += BQ2) {
			__syncthreads(); /* the previous tile is no longer read */
			stage<T, DM, BQ2>(qs, q, (size_t)b * Tq, i0, Tq, H, h, D);
			stage<T, DM, BQ2>(dos, dout, (size_t)b * Tq, i0, Tq, H, h, D);
			for (int ii = threadIdx.x; ii < BQ2; ii += blockDim.x) {
				int i = i0 + ii;
				size_t lr = ((size_t)b * H + h) * Tq + i;
				Ls[ii] = i < Tq ? lse[lr] : 0.0f;
				Ds[ii] = i < Tq ? delta[lr] : 0.0f;
			}
			__syncthreads();
			if (j >= Tk)
				continue;
#pragma unroll 1
			for (int ii = 0; ii < BQ2; ii++) {
				int i = i0 + ii;
				if (i >= Tq || j > off + i)
					continue;
				float s = 0, dp = 0;
#pragma unroll
				for (int d = 0; d < DM; d++) {
					s += qs[ii][d] * kr[d];
					dp += dos[ii][d] * vr[d];
				}
				float p = expf(s * scale - Ls[ii]), ds = p * (dp - Ds[ii]);
#pragma unroll
				for (int d = 0; d < DM; d++) {
					dva[d] += p * dos[ii][d];
					dka[d] += ds * qs[ii][d];
				}
			}
		}
	}
	if (j >= Tk)
		return;
#pragma unroll
	for (int d = 0; d < DM; d++)
		if (d < D) {
			st(dk, krow + d, dka[d] * scale);
			st(dv, krow + d, dva[d]);
		}
}

static int check_shape(int B, int Tq, int Tk, int H, int KVH, int D)
{
	if (B <= 0 || Tq <= 0 || Tk < Tq || H <= 0 || KVH <= 0 || H % KVH || D <= 0 || D > 128 ||
	    B > 65535 || H > 65535)
		return llm_cuda_report(D > 128 ? LLM_EUNSUPPORTED : LLM_EINVAL, "attention",
		                       "shape outside B, H <= 65535, Tq <= Tk, KVH | H, D <= 128",
		                       __FILE__, __LINE__);
	return LLM_OK;
}

template <typename T, int DM>
static int fwd(T *out, float *lse, const T *q, const T *k, const T *v, int B, int Tq, int Tk,
               int H, int KVH, int D)
{
	dim3 grid((Tq + BQ - 1) / BQ, H, B);
	attn_fwd_kernel<T, DM><<<grid, BQ, 0, STREAM>>>(out, lse, q, k, v, Tq, Tk, H, KVH, D,
	                                                1.0f / sqrtf((float)D));
	LAUNCH_CHECK("attn_fwd_kernel");
	return LLM_OK;
}

template <typename T, int DM>
static int bwd(T *dq, T *dk, T *dv, float *delta, const T *dout, const T *out, const T *q,
               const T *k, const T *v, const float *lse, int B, int Tq, int Tk, int H, int KVH,
               int D)
{
	float scale = 1.0f / sqrtf((float)D);
	size_t rows = (size_t)B * Tq * H;
	attn_delta_kernel<T><<<(unsigned)((rows + 255) / 256), 256, 0, STREAM>>>(delta, dout, out, B,
	                                                                        Tq, H, D);
	LAUNCH_CHECK("attn_delta_kernel");
	dim3 gq((Tq + BQ - 1) / BQ, H, B);
	attn_dq_kernel<T, DM><<<gq, BQ, 0, STREAM>>>(dq, dout, q, k, v, lse, delta, Tq, Tk, H, KVH,
	                                             D, scale);
	LAUNCH_CHECK("attn_dq_kernel");
	size_t smem = dkv_smem<DM>();
	CUDA_TRY(cudaFuncSetAttribute(attn_dkv_kernel<T, DM>,
	                              cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
	dim3 gkv((Tk + BKV - 1) / BKV, KVH, B);
	attn_dkv_kernel<T, DM><<<gkv, BKV, smem, STREAM>>>(dk, dv, dout, q, k, v, lse, delta, Tq, Tk,
	                                                   H, KVH, D, scale);
	LAUNCH_CHECK("attn_dkv_kernel");
	return LLM_OK;
}

#define DISPATCH_DM(D, CALL)                                       \
	do {                                                       \
		if ((D) <= 64) { const int DM = 64; return CALL; }  \
		{ const int DM = 128; return CALL; }                \
	} while (0)

extern "C" int llm_cuda_attention_fwd(llm_dtype t, void *out, float *lse, const void *q,
                                      const void *k, const void *v, int B, int Tq, int Tk, int H,
                                      int KVH, int D)
{
	int rc = check_shape(B, Tq, Tk, H, KVH, D);
	if (rc)
		return rc;
	DISPATCH_DTYPE(t, DISPATCH_DM(D, (fwd<T, DM>((T *)out, lse, (const T *)q, (const T *)k,
	                                             (const T *)v, B, Tq, Tk, H, KVH, D))));
	return LLM_OK;
}

extern "C" int llm_cuda_attention_bwd(llm_dtype t, void *dq, void *dk, void *dv, float *delta,
                                      const void *dout, const void *out, const void *q,
                                      const void *k, const void *v, const float *lse, int B,
                                      int Tq, int Tk, int H, int KVH, int D)
{
	int rc = check_shape(B, Tq, Tk, H, KVH, D);
	if (rc)
		return rc;
	DISPATCH_DTYPE(t, DISPATCH_DM(D, (bwd<T, DM>((T *)dq, (T *)dk, (T *)dv, delta,
	                                             (const T *)dout, (const T *)out, (const T *)q,
	                                             (const T *)k, (const T *)v, lse, B, Tq, Tk, H,
	                                             KVH, D))));
	return LLM_OK;
}
