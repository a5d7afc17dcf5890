/*
 * ops.c — CPU reference ops (see ops.h for shapes and conventions).
 *
 * The code favours being obviously the formula over being clever: the CUDA kernels are checked
 * against it, and tests/unit/test_ops.c checks it against float64 finite differences. Speed
 * comes from llm_gemm (OpenBLAS); attention also runs its two products per head through it.
 */
#include "ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/err.h"

#ifdef LLM_HAVE_BLAS
#include <cblas.h>
#endif

void llm_gemm(int trans_a, int trans_b, int M, int N, int K, float alpha, const float *A, int lda,
              const float *B, int ldb, float beta, float *C, int ldc)
{
	if (M <= 0 || N <= 0)
		return;
#ifdef LLM_HAVE_BLAS
	cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
	            trans_b ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
#else
	/* Row by row, k outer, j inner: the inner loop runs along contiguous rows of B and C when
	 * B is not transposed, which is the case the compiler vectorises. */
	for (int i = 0; i < M; i++) {
		float *c = C + (size_t)i * ldc;
		if (beta == 0)
			memset(c, 0, (size_t)N * sizeof *c);
		else if (beta != 1)
			for (int j = 0; j < N; j++)
				c[j] *= beta;
		if (!trans_b) {
			for (int k = 0; k < K; k++) {
				float a = alpha * (trans_a ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k]);
				const float *b = B + (size_t)k * ldb;
				for (int j = 0; j < N; j++)
					c[j] += a * b[j];
			}
		} else {
			for (int j = 0; j < N; j++) {
				const float *b = B + (size_t)j * ldb;
				float s = 0;
				for (int k = 0; k < K; k++)
					s += (trans_a ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k]) * b[k];
				c[j] += alpha * s;
			}
		}
	}
#endif
}

void llm_ops_set_threads(int n)
{
#ifdef LLM_HAVE_BLAS
	if (n > 0)
		openblas_set_num_threads(n);
#else
	(void)n;
#endif
}

const char *llm_ops_backend(void)
{
#ifdef LLM_HAVE_BLAS
	return "OpenBLAS";
#else
	return "portable loops";
#endif
}

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double llm_ops_peak_flops(void)
{
	/* Square products of the size the small presets use; the best of several runs, so that a
	 * noisy neighbour lowers the measurement less than it lowers a training step. */
	enum { S = 512 };
	float *a = llm_malloc(3 * (size_t)S * S * sizeof *a), *b = a + S * S, *c = b + S * S;
	for (size_t i = 0; i < 2 * (size_t)S * S; i++)
		a[i] = (float)((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
	double best = 0, start = now_seconds();
	do {
		double t0 = now_seconds();
		llm_gemm(0, 1, S, S, S, 1, a, S, b, S, 0, c, S);
		double dt = now_seconds() - t0;
		if (dt > 0 && 2.0 * S * S * S / dt > best)
			best = 2.0 * S * S * S / dt;
	} while (now_seconds() - start < 0.2);
	free(a);
	return best;
}

void llm_embedding_fwd(float *out, const int32_t *tokens, const float *wte, int N, int C)
{
	for (int n = 0; n < N; n++)
		memcpy(out + (size_t)n * C, wte + (size_t)tokens[n] * C, (size_t)C * sizeof *out);
}

void llm_embedding_bwd(float *dwte, const float *dout, const int32_t *tokens, int N, int C)
{
	for (int n = 0; n < N; n++) {
		float *d = dwte + (size_t)tokens[n] * C;
		const float *g = dout + (size_t)n * C;
		for (int c = 0; c < C; c++)
			d[c] += g[c];
	}
}

void llm_matmul_fwd(float *out, const float *inp, const float *w, int N, int K, int M)
{
	llm_gemm(0, 1, N, M, K, 1, inp, K, w, K, 0, out, M);
}

void llm_matmul_bwd(float *dinp, float *dw, const float *dout, const float *inp, const float *w,
                    int N, int K, int M)
{
	if (dinp)
		llm_gemm(0, 0, N, K, M, 1, dout, M, w, K, 1, dinp, K);
	if (dw)
		llm_gemm(1, 0, M, K, N, 1, dout, M, inp, K, 1, dw, K);
}

void llm_rmsnorm_fwd(float *out, float *rstd, const float *inp, const float *weight, int N, int C,
                     float eps)
{
	for (int n = 0; n < N; n++) {
		const float *x = inp + (size_t)n * C;
		float *y = out + (size_t)n * C;
		float ss = 0;
		for (int c = 0; c < C; c++)
			ss += x[c] * x[c];
		float r = 1.0f / sqrtf(ss / C + eps);
		for (int c = 0; c < C; c++)
			y[c] = weight[c] * (x[c] * r);
		if (rstd)
			rstd[n] = r;
	}
}

void llm_rmsnorm_bwd(float *dinp, float *dweight, const float *dout, const float *inp,
                     const float *weight, const float *rstd, int N, int C)
{
	/* y = w * x * r, r = (mean(x^2) + eps)^-1/2, so dx = r * (g - xhat * mean(g * xhat)) with
	 * g = dy * w and xhat = x * r. */
	for (int n = 0; n < N; n++) {
		const float *x = inp + (size_t)n * C, *dy = dout + (size_t)n * C;
		float *dx = dinp + (size_t)n * C;
		float r = rstd[n], dot = 0;
		for (int c = 0; c < C; c++)
			dot += dy[c] * weight[c] * x[c] * r;
		dot /= C;
		for (int c = 0; c < C; c++) {
			float xhat = x[c] * r;
			dx[c] += r * (dy[c] * weight[c] - xhat * dot);
			dweight[c] += dy[c] * xhat;
		}
	}
}

/* The angle table of one position: transformers computes inv_freq = 1 / theta^(2i/D) in fp32,
 * then pos * inv_freq in fp32, then cos/sin; doing the same keeps logits within fp32 rounding
 * of a Hugging Face model loading our checkpoints. */
static void rope_angles(float *cs, float *sn, int32_t pos, int D, float theta)
{
	for (int i = 0; i < D / 2; i++) {
		float inv = (float)(1.0 / pow((double)theta, (double)(2 * i) / D));
		float a = (float)pos * inv;
		cs[i] = cosf(a);
		sn[i] = sinf(a);
	}
}

enum { ROPE_MAX_HALF = 1024 };

void llm_rope_fwd(float *out, const float *inp, const int32_t *pos, int N, int H, int D,
                  float theta)
{
	float cs[ROPE_MAX_HALF], sn[ROPE_MAX_HALF];
	int half = D / 2;
	for (int n = 0; n < N; n++) {
		rope_angles(cs, sn, pos[n], D, theta);
		for (int h = 0; h < H; h++) {
			const float *x = inp + ((size_t)n * H + h) * D;
			float *y = out + ((size_t)n * H + h) * D;
			for (int i = 0; i < half; i++) {
				float x1 = x[i], x2 = x[i + half];
				y[i] = x1 * cs[i] - x2 * sn[i];
				y[i + half] = x2 * cs[i] + x1 * sn[i];
			}
		}
	}
}

void llm_rope_bwd(float *dinp, const float *dout, const int32_t *pos, int N, int H, int D,
                  float theta)
{
	float cs[ROPE_MAX_HALF], sn[ROPE_MAX_HALF];
	int half = D / 2, inplace = dinp == dout;
	for (int n = 0; n < N; n++) {
		rope_angles(cs, sn, pos[n], D, theta);
		for (int h = 0; h < H; h++) {
			const float *dy = dout + ((size_t)n * H + h) * D;
			float *dx = dinp + ((size_t)n * H + h) * D;
			for (int i = 0; i < half; i++) {
				float g1 = dy[i], g2 = dy[i + half];
				float d1 = g1 * cs[i] + g2 * sn[i], d2 = g2 * cs[i] - g1 * sn[i];
				if (inplace) {
					dx[i] = d1;
					dx[i + half] = d2;
				} else {
					dx[i] += d1;
					dx[i + half] += d2;
				}
			}
		}
	}
}

/* Queries are processed in blocks of this many rows: a block needs only the keys up to its
 * last row, so the products skip most of the masked upper triangle (10/16 of the full work
 * for T = 4 blocks) while each call stays large enough for BLAS to run at speed. */
enum { ATT_BLOCK = 64 };

void llm_attention_fwd(float *out, float *att, const float *q, const float *k, const float *v,
                       int B, int Tq, int Tk, int H, int KVH, int D)
{
	int rep = H / KVH, off = Tk - Tq;
	size_t qs = (size_t)H * D, ks = (size_t)KVH * D;
	float scale = 1.0f / sqrtf((float)D);
	for (int b = 0; b < B; b++)
		for (int h = 0; h < H; h++) {
			const float *qb = q + (size_t)b * Tq * qs + (size_t)h * D;
			const float *kb = k + (size_t)b * Tk * ks + (size_t)(h / rep) * D;
			const float *vb = v + (size_t)b * Tk * ks + (size_t)(h / rep) * D;
			float *ob = out + (size_t)b * Tq * qs + (size_t)h * D;
			float *p = att + ((size_t)b * H + h) * Tq * Tk;
			for (int i0 = 0; i0 < Tq; i0 += ATT_BLOCK) {
				int rows = Tq - i0 < ATT_BLOCK ? Tq - i0 : ATT_BLOCK, keys = off + i0 + rows;
				float *pb = p + (size_t)i0 * Tk;
				llm_gemm(0, 1, rows, keys, D, scale, qb + i0 * qs, (int)qs, kb, (int)ks, 0, pb,
				         Tk);
				for (int i = i0; i < i0 + rows; i++) {
					float *row = p + (size_t)i * Tk;
					int last = off + i;
					float mx = row[0];
					for (int j = 1; j <= last; j++)
						mx = row[j] > mx ? row[j] : mx;
					float sum = 0;
					for (int j = 0; j <= last; j++) {
						row[j] = expf(row[j] - mx);
						sum += row[j];
					}
					float inv = 1.0f / sum;
					for (int j = 0; j <= last; j++)
						row[j] *= inv;
					for (int j = last + 1; j < Tk; j++)
						row[j] = 0;
				}
				llm_gemm(0, 0, rows, D, keys, 1, pb, Tk, vb, (int)ks, 0, ob + i0 * qs, (int)qs);
			}
		}
}

void llm_attention_bwd(float *dq, float *dk, float *dv, float *scratch, const float *dout,
                       const float *q, const float *k, const float *v, const float *att, int B,
                       int Tq, int Tk, int H, int KVH, int D)
{
	int rep = H / KVH, off = Tk - Tq;
	size_t qs = (size_t)H * D, ks = (size_t)KVH * D;
	float scale = 1.0f / sqrtf((float)D);
	for (int b = 0; b < B; b++)
		for (int h = 0; h < H; h++) {
			size_t qo = (size_t)b * Tq * qs + (size_t)h * D;
			size_t ko = (size_t)b * Tk * ks + (size_t)(h / rep) * D;
			const float *p = att + ((size_t)b * H + h) * Tq * Tk;
			for (int i0 = 0; i0 < Tq; i0 += ATT_BLOCK) {
				int rows = Tq - i0 < ATT_BLOCK ? Tq - i0 : ATT_BLOCK, keys = off + i0 + rows;
				const float *pb = p + (size_t)i0 * Tk, *dob = dout + qo + i0 * qs;
				float *ds = scratch + (size_t)i0 * Tk;
				/* dP = dO V^T; dS = P * (dP - rowsum(P * dP)) (softmax backward). */
				llm_gemm(0, 1, rows, keys, D, 1, dob, (int)qs, v + ko, (int)ks, 0, ds, Tk);
				for (int i = i0; i < i0 + rows; i++) {
					const float *pr = p + (size_t)i * Tk;
					float *dr = scratch + (size_t)i * Tk;
					int last = off + i;
					float dot = 0;
					for (int j = 0; j <= last; j++)
						dot += pr[j] * dr[j];
					for (int j = 0; j <= last; j++)
						dr[j] = pr[j] * (dr[j] - dot);
					for (int j = last + 1; j < keys; j++)
						dr[j] = 0;
				}
				llm_gemm(0, 0, rows, D, keys, scale, ds, Tk, k + ko, (int)ks, 1,
				         dq + qo + i0 * qs, (int)qs);
				llm_gemm(1, 0, keys, D, rows, scale, ds, Tk, q + qo + i0 * qs, (int)qs, 1,
				         dk + ko, (int)ks);
				llm_gemm(1, 0, keys, D, rows, 1, pb, Tk, dob, (int)qs, 1, dv + ko, (int)ks);
			}
		}
}

void llm_swiglu_fwd(float *out, const float *gate, const float *up, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		float g = gate[i];
		out[i] = g / (1.0f + expf(-g)) * up[i];
	}
}

void llm_swiglu_bwd(float *dgate, float *dup, const float *dout, const float *gate,
                    const float *up, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		float g = gate[i], s = 1.0f / (1.0f + expf(-g));
		dgate[i] += dout[i] * up[i] * s * (1.0f + g * (1.0f - s));
		dup[i] += dout[i] * g * s;
	}
}

void llm_residual_fwd(float *out, const float *a, const float *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = a[i] + b[i];
}

/* Row maximum and log-sum-exp; the sum in double because V reaches 10^5 terms. */
static float row_logsumexp(const float *x, int V)
{
	float mx = x[0];
	for (int j = 1; j < V; j++)
		mx = x[j] > mx ? x[j] : mx;
	double s = 0;
	for (int j = 0; j < V; j++)
		s += expf(x[j] - mx);
	return mx + (float)log(s);
}

void llm_xent_fwd(float *losses, float *lse, const float *logits, const int32_t *targets, int N,
                  int V)
{
	for (int n = 0; n < N; n++) {
		const float *x = logits + (size_t)n * V;
		float l = row_logsumexp(x, V);
		if (lse)
			lse[n] = l;
		losses[n] = targets[n] < 0 ? 0 : l - x[targets[n]];
	}
}

void llm_xent_bwd(float *dlogits, const float *logits, const float *lse, const int32_t *targets,
                  const float *dloss, int N, int V)
{
	for (int n = 0; n < N; n++) {
		const float *x = logits + (size_t)n * V;
		float *d = dlogits + (size_t)n * V;
		if (targets[n] < 0) {
			memset(d, 0, (size_t)V * sizeof *d);
			continue;
		}
		float l = lse ? lse[n] : row_logsumexp(x, V), g = dloss[n];
		for (int j = 0; j < V; j++)
			d[j] = expf(x[j] - l) * g;
		d[targets[n]] -= g;
	}
}
