/*
 * test_ops.c — every CPU op against an independent float64 implementation of its formula
 * (forward) and against central finite differences of that float64 formula (backward).
 *
 * Each op is checked through a scalar loss L = sum(R * out) with fixed random R: the fp32
 * backward called with dout = R must equal dL/dx computed in float64 by finite differences.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "model/ops.h"
#include "unit.h"

static llm_rng rng;

static void fill(double *x, size_t n, double scale)
{
	for (size_t i = 0; i < n; i++)
		x[i] = (llm_rng_uniform(&rng) * 2 - 1) * scale;
}

static float *to_f32(const double *x, size_t n)
{
	float *f = malloc(n * sizeof *f);
	for (size_t i = 0; i < n; i++)
		f[i] = (float)x[i];
	return f;
}

/* An op under test: its inputs packed in one float64 vector x, the loss in float64, and the
 * fp32 gradient of the loss with respect to x (from the op's backward). */
typedef struct {
	size_t n;
	double (*loss)(const double *x, const void *ctx);
	void (*grad)(float *g, const double *x, const void *ctx);
	const void *ctx;
} op_case;

/* max |analytic - numeric| / max(1e-2, max |numeric|); fp32 rounding puts it near 1e-6. */
static double check_grad(const op_case *c, double *x)
{
	float *g = calloc(c->n, sizeof *g);
	c->grad(g, x, c->ctx);
	double worst = 0, scale = 1e-2;
	double *num = malloc(c->n * sizeof *num);
	for (size_t i = 0; i < c->n; i++) {
		double keep = x[i], h = 1e-5 * fmax(1.0, fabs(keep));
		x[i] = keep + h;
		double lp = c->loss(x, c->ctx);
		x[i] = keep - h;
		double lm = c->loss(x, c->ctx);
		x[i] = keep;
		num[i] = (lp - lm) / (2 * h);
		scale = fmax(scale, fabs(num[i]));
	}
	for (size_t i = 0; i < c->n; i++) {
		double e = fabs(g[i] - num[i]);
		if (!(e <= worst))
			worst = isnan(e) ? INFINITY : e;
	}
	free(num);
	free(g);
	return worst / scale;
}

/* ---- gemm ---------------------------------------------------------------------------- */

static void test_gemm(void)
{
	enum { M = 7, N = 5, K = 6 };
	double a[M * K], b[K * N], c0[M * N];
	fill(a, M * K, 1);
	fill(b, K * N, 1);
	fill(c0, M * N, 1);
	for (int ta = 0; ta < 2; ta++)
		for (int tb = 0; tb < 2; tb++) {
			/* Store A and B so that op(A) is a and op(B) is b, with padded strides. */
			int lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 2, ldc = N + 1;
			float A[(M + 3) * (K + 3)], Bm[(K + 2) * (N + 2)], C[M * (N + 1)];
			for (int i = 0; i < M; i++)
				for (int k = 0; k < K; k++)
					A[ta ? k * lda + i : i * lda + k] = (float)a[i * K + k];
			for (int k = 0; k < K; k++)
				for (int j = 0; j < N; j++)
					Bm[tb ? j * ldb + k : k * ldb + j] = (float)b[k * N + j];
			for (int i = 0; i < M; i++)
				for (int j = 0; j < N; j++)
					C[i * ldc + j] = (float)c0[i * N + j];
			llm_gemm(ta, tb, M, N, K, 0.5f, A, lda, Bm, ldb, 2.0f, C, ldc);
			for (int i = 0; i < M; i++)
				for (int j = 0; j < N; j++) {
					double s = 0;
					for (int k = 0; k < K; k++)
						s += a[i * K + k] * b[k * N + j];
					CHECK_NEAR(C[i * ldc + j], 0.5 * s + 2 * c0[i * N + j], 1e-5);
				}
		}
	/* beta 0 must ignore NaN already in C. */
	float A1[1] = { 2 }, B1[1] = { 3 }, C1[1] = { NAN };
	llm_gemm(0, 0, 1, 1, 1, 1, A1, 1, B1, 1, 0, C1, 1);
	CHECK_NEAR(C1[0], 6, 0);
	CHECK(llm_ops_peak_flops() > 0);
}

/* ---- matmul -------------------------------------------------------------------------- */

enum { MM_N = 4, MM_K = 5, MM_M = 3 };
static double mm_r[MM_N * MM_M];

static double mm_loss(const double *x, const void *ctx)
{
	const double *inp = x, *w = x + MM_N * MM_K;
	double L = 0;
	for (int n = 0; n < MM_N; n++)
		for (int m = 0; m < MM_M; m++) {
			double s = 0;
			for (int k = 0; k < MM_K; k++)
				s += inp[n * MM_K + k] * w[m * MM_K + k];
			L += mm_r[n * MM_M + m] * s;
		}
	return L;
}

static void mm_grad(float *g, const double *x, const void *ctx)
{
	float *f = to_f32(x, MM_N * MM_K + MM_M * MM_K), *r = to_f32(mm_r, MM_N * MM_M);
	llm_matmul_bwd(g, g + MM_N * MM_K, r, f, f + MM_N * MM_K, MM_N, MM_K, MM_M);
	free(f);
	free(r);
}

static void test_matmul(void)
{
	double x[MM_N * MM_K + MM_M * MM_K];
	fill(x, sizeof x / sizeof *x, 1);
	fill(mm_r, MM_N * MM_M, 1);
	float *f = to_f32(x, sizeof x / sizeof *x), out[MM_N * MM_M];
	llm_matmul_fwd(out, f, f + MM_N * MM_K, MM_N, MM_K, MM_M);
	for (int n = 0; n < MM_N; n++)
		for (int m = 0; m < MM_M; m++) {
			double s = 0;
			for (int k = 0; k < MM_K; k++)
				s += x[n * MM_K + k] * x[MM_N * MM_K + m * MM_K + k];
			CHECK_NEAR(out[n * MM_M + m], s, 1e-5);
		}
	free(f);
	op_case c = { sizeof x / sizeof *x, mm_loss, mm_grad, NULL };
	CHECK(check_grad(&c, x) < 1e-4);
}

/* ---- embedding ----------------------------------------------------------------------- */

enum { EM_V = 6, EM_C = 4, EM_N = 7 };
static const int32_t em_tok[EM_N] = { 1, 3, 1, 0, 5, 3, 1 };
static double em_r[EM_N * EM_C];

static double em_loss(const double *wte, const void *ctx)
{
	double L = 0;
	for (int n = 0; n < EM_N; n++)
		for (int c = 0; c < EM_C; c++)
			L += em_r[n * EM_C + c] * wte[em_tok[n] * EM_C + c];
	return L;
}

static void em_grad(float *g, const double *x, const void *ctx)
{
	float *r = to_f32(em_r, EM_N * EM_C);
	llm_embedding_bwd(g, r, em_tok, EM_N, EM_C);
	free(r);
}

static void test_embedding(void)
{
	double wte[EM_V * EM_C];
	fill(wte, EM_V * EM_C, 1);
	fill(em_r, EM_N * EM_C, 1);
	float *f = to_f32(wte, EM_V * EM_C), out[EM_N * EM_C];
	llm_embedding_fwd(out, em_tok, f, EM_N, EM_C);
	for (int n = 0; n < EM_N; n++)
		for (int c = 0; c < EM_C; c++)
			CHECK(out[n * EM_C + c] == f[em_tok[n] * EM_C + c]);
	free(f);
	op_case c = { EM_V * EM_C, em_loss, em_grad, NULL };
	CHECK(check_grad(&c, wte) < 1e-5);
}

/* ---- rmsnorm ------------------------------------------------------------------------- */

enum { RN_N = 3, RN_C = 8 };
static const double rn_eps = 1e-5;
static double rn_r[RN_N * RN_C];

static void rn_ref(double *out, const double *x, const double *w)
{
	for (int n = 0; n < RN_N; n++) {
		double ss = 0;
		for (int c = 0; c < RN_C; c++)
			ss += x[n * RN_C + c] * x[n * RN_C + c];
		double r = 1 / sqrt(ss / RN_C + rn_eps);
		for (int c = 0; c < RN_C; c++)
			out[n * RN_C + c] = w[c] * x[n * RN_C + c] * r;
	}
}

static double rn_loss(const double *x, const void *ctx)
{
	double out[RN_N * RN_C], L = 0;
	rn_ref(out, x, x + RN_N * RN_C);
	for (int i = 0; i < RN_N * RN_C; i++)
		L += rn_r[i] * out[i];
	return L;
}

static void rn_grad(float *g, const double *x, const void *ctx)
{
	float *f = to_f32(x, RN_N * RN_C + RN_C), *r = to_f32(rn_r, RN_N * RN_C);
	float out[RN_N * RN_C], rstd[RN_N];
	llm_rmsnorm_fwd(out, rstd, f, f + RN_N * RN_C, RN_N, RN_C, (float)rn_eps);
	llm_rmsnorm_bwd(g, g + RN_N * RN_C, r, f, f + RN_N * RN_C, rstd, RN_N, RN_C);
	free(f);
	free(r);
}

static void test_rmsnorm(void)
{
	double x[RN_N * RN_C + RN_C], ref[RN_N * RN_C];
	fill(x, RN_N * RN_C, 2);
	fill(x + RN_N * RN_C, RN_C, 1);
	fill(rn_r, RN_N * RN_C, 1);
	float *f = to_f32(x, RN_N * RN_C + RN_C), out[RN_N * RN_C];
	llm_rmsnorm_fwd(out, NULL, f, f + RN_N * RN_C, RN_N, RN_C, (float)rn_eps);
	rn_ref(ref, x, x + RN_N * RN_C);
	for (int i = 0; i < RN_N * RN_C; i++)
		CHECK_NEAR(out[i], ref[i], 1e-5);
	free(f);
	op_case c = { RN_N * RN_C + RN_C, rn_loss, rn_grad, NULL };
	CHECK(check_grad(&c, x) < 1e-4);
}

/* ---- rope ---------------------------------------------------------------------------- */

enum { RP_N = 5, RP_H = 2, RP_D = 8 };
static const int32_t rp_pos[RP_N] = { 0, 1, 2, 7, 30 };
static const float rp_theta = 10000;
static double rp_r[RP_N * RP_H * RP_D];

/* rotate_half written as transformers writes it: q * cos + cat(-q2, q1) * sin, where cos and
 * sin repeat the D/2 frequencies twice. */
static void rp_ref(double *out, const double *x)
{
	int half = RP_D / 2;
	for (int n = 0; n < RP_N; n++)
		for (int h = 0; h < RP_H; h++) {
			const double *q = x + (n * RP_H + h) * RP_D;
			double *y = out + (n * RP_H + h) * RP_D;
			for (int d = 0; d < RP_D; d++) {
				double a = rp_pos[n] * pow(rp_theta, -(double)(2 * (d % half)) / RP_D);
				double rot = d < half ? -q[d + half] : q[d - half];
				y[d] = q[d] * cos(a) + rot * sin(a);
			}
		}
}

static double rp_loss(const double *x, const void *ctx)
{
	double out[RP_N * RP_H * RP_D], L = 0;
	rp_ref(out, x);
	for (int i = 0; i < RP_N * RP_H * RP_D; i++)
		L += rp_r[i] * out[i];
	return L;
}

static void rp_grad(float *g, const double *x, const void *ctx)
{
	float *r = to_f32(rp_r, RP_N * RP_H * RP_D);
	llm_rope_bwd(g, r, rp_pos, RP_N, RP_H, RP_D, rp_theta);
	free(r);
}

static void test_rope(void)
{
	enum { n = RP_N * RP_H * RP_D };
	double x[n], ref[n];
	fill(x, n, 1);
	fill(rp_r, n, 1);
	float *f = to_f32(x, n), out[n];
	llm_rope_fwd(out, f, rp_pos, RP_N, RP_H, RP_D, rp_theta);
	rp_ref(ref, x);
	for (int i = 0; i < n; i++)
		CHECK_NEAR(out[i], ref[i], 2e-5);
	/* In place gives the same bits. */
	llm_rope_fwd(f, f, rp_pos, RP_N, RP_H, RP_D, rp_theta);
	CHECK(memcmp(f, out, sizeof out) == 0);
	/* Backward in place equals backward into zeros. */
	float *r = to_f32(rp_r, n), g[n];
	memset(g, 0, sizeof g);
	llm_rope_bwd(g, r, rp_pos, RP_N, RP_H, RP_D, rp_theta);
	llm_rope_bwd(r, r, rp_pos, RP_N, RP_H, RP_D, rp_theta);
	CHECK(memcmp(g, r, sizeof g) == 0);
	free(r);
	free(f);
	op_case c = { n, rp_loss, rp_grad, NULL };
	CHECK(check_grad(&c, x) < 1e-4);
}

/* ---- attention ----------------------------------------------------------------------- */

typedef struct {
	int B, Tq, Tk, H, KVH, D;
	double *r;
} at_ctx;

static size_t at_nq(const at_ctx *a) { return (size_t)a->B * a->Tq * a->H * a->D; }
static size_t at_nk(const at_ctx *a) { return (size_t)a->B * a->Tk * a->KVH * a->D; }

static void at_ref(double *out, const double *x, const at_ctx *a)
{
	const double *q = x, *k = x + at_nq(a), *v = k + at_nk(a);
	int rep = a->H / a->KVH, D = a->D, off = a->Tk - a->Tq;
	for (int b = 0; b < a->B; b++)
		for (int h = 0; h < a->H; h++)
			for (int i = 0; i < a->Tq; i++) {
				double *s = malloc((size_t)a->Tk * sizeof *s), mx = -INFINITY, sum = 0;
				const double *qi = q + (((size_t)b * a->Tq + i) * a->H + h) * D;
				for (int j = 0; j <= off + i; j++) {
					const double *kj = k + (((size_t)b * a->Tk + j) * a->KVH + h / rep) * D;
					s[j] = 0;
					for (int d = 0; d < D; d++)
						s[j] += qi[d] * kj[d];
					s[j] /= sqrt(D);
					mx = fmax(mx, s[j]);
				}
				for (int j = 0; j <= off + i; j++)
					sum += s[j] = exp(s[j] - mx);
				double *o = out + (((size_t)b * a->Tq + i) * a->H + h) * D;
				for (int d = 0; d < D; d++) {
					o[d] = 0;
					for (int j = 0; j <= off + i; j++)
						o[d] += s[j] / sum *
						        v[(((size_t)b * a->Tk + j) * a->KVH + h / rep) * D + d];
				}
				free(s);
			}
}

static double at_loss(const double *x, const void *ctx)
{
	const at_ctx *a = ctx;
	size_t n = at_nq(a);
	double *out = malloc(n * sizeof *out), L = 0;
	at_ref(out, x, a);
	for (size_t i = 0; i < n; i++)
		L += a->r[i] * out[i];
	free(out);
	return L;
}

static void at_grad(float *g, const double *x, const void *ctx)
{
	const at_ctx *a = ctx;
	size_t nq = at_nq(a), nk = at_nk(a);
	float *f = to_f32(x, nq + 2 * nk), *r = to_f32(a->r, nq);
	float *out = malloc(nq * sizeof *out);
	float *att = malloc((size_t)a->B * a->H * a->Tq * a->Tk * sizeof *att);
	float *scratch = malloc((size_t)a->Tq * a->Tk * sizeof *scratch);
	llm_attention_fwd(out, att, f, f + nq, f + nq + nk, a->B, a->Tq, a->Tk, a->H, a->KVH, a->D);
	llm_attention_bwd(g, g + nq, g + nq + nk, scratch, r, f, f + nq, f + nq + nk, att, a->B,
	                  a->Tq, a->Tk, a->H, a->KVH, a->D);
	free(f);
	free(r);
	free(out);
	free(att);
	free(scratch);
}

static void attention_case(int B, int Tq, int Tk, int H, int KVH, int D)
{
	at_ctx a = { B, Tq, Tk, H, KVH, D, NULL };
	size_t nq = at_nq(&a), nk = at_nk(&a), n = nq + 2 * nk;
	double *x = malloc(n * sizeof *x), *ref = malloc(nq * sizeof *ref);
	a.r = malloc(nq * sizeof *a.r);
	fill(x, n, 1.5);
	fill(a.r, nq, 1);
	float *f = to_f32(x, n), *out = malloc(nq * sizeof *out);
	float *att = malloc((size_t)B * H * Tq * Tk * sizeof *att);
	llm_attention_fwd(out, att, f, f + nq, f + nq + nk, B, Tq, Tk, H, KVH, D);
	at_ref(ref, x, &a);
	double worst = 0;
	for (size_t i = 0; i < nq; i++)
		worst = fmax(worst, fabs(out[i] - ref[i]));
	CHECK(worst < 1e-5);
	/* Probabilities: rows sum to 1, nothing above the diagonal. */
	for (int i = 0; i < Tq; i++) {
		double s = 0;
		for (int j = 0; j < Tk; j++)
			s += att[(size_t)i * Tk + j];
		CHECK_NEAR(s, 1, 1e-5);
		for (int j = Tk - Tq + i + 1; j < Tk; j++)
			CHECK(att[(size_t)i * Tk + j] == 0);
	}
	op_case c = { n, at_loss, at_grad, &a };
	double e = check_grad(&c, x);
	if (!(e < 1e-4))
		printf("#   attention B=%d Tq=%d Tk=%d H=%d KVH=%d D=%d: gradient error %g\n", B, Tq,
		       Tk, H, KVH, D, e);
	CHECK(e < 1e-4);
	free(x);
	free(ref);
	free(a.r);
	free(f);
	free(out);
	free(att);
}

static void test_attention(void)
{
	attention_case(2, 5, 5, 4, 2, 4); /* grouped-query: two query heads per key-value head */
	attention_case(1, 4, 4, 2, 2, 8); /* multi-head */
	attention_case(1, 3, 7, 4, 1, 4); /* queries after four cached positions, one kv head */
	attention_case(1, 70, 70, 2, 1, 2); /* two query blocks: the second needs every key */
	attention_case(1, 66, 131, 2, 2, 2); /* two blocks after 65 cached positions */
}

/* ---- swiglu -------------------------------------------------------------------------- */

enum { SW_N = 16 };
static double sw_r[SW_N];

static double sw_loss(const double *x, const void *ctx)
{
	double L = 0;
	for (int i = 0; i < SW_N; i++)
		L += sw_r[i] * x[i] / (1 + exp(-x[i])) * x[SW_N + i];
	return L;
}

static void sw_grad(float *g, const double *x, const void *ctx)
{
	float *f = to_f32(x, 2 * SW_N), *r = to_f32(sw_r, SW_N);
	llm_swiglu_bwd(g, g + SW_N, r, f, f + SW_N, SW_N);
	free(f);
	free(r);
}

static void test_swiglu(void)
{
	double x[2 * SW_N];
	fill(x, 2 * SW_N, 4);
	fill(sw_r, SW_N, 1);
	float *f = to_f32(x, 2 * SW_N), out[SW_N];
	llm_swiglu_fwd(out, f, f + SW_N, SW_N);
	for (int i = 0; i < SW_N; i++)
		CHECK_NEAR(out[i], x[i] / (1 + exp(-x[i])) * x[SW_N + i], 1e-5);
	free(f);
	op_case c = { 2 * SW_N, sw_loss, sw_grad, NULL };
	CHECK(check_grad(&c, x) < 1e-4);
}

/* ---- cross-entropy ------------------------------------------------------------------- */

enum { XE_N = 4, XE_V = 9 };
static const int32_t xe_t[XE_N] = { 3, -100, 0, 8 };
static double xe_r[XE_N];

static double xe_ref(const double *x, int n)
{
	if (xe_t[n] < 0)
		return 0;
	double mx = -INFINITY, s = 0;
	for (int j = 0; j < XE_V; j++)
		mx = fmax(mx, x[n * XE_V + j]);
	for (int j = 0; j < XE_V; j++)
		s += exp(x[n * XE_V + j] - mx);
	return mx + log(s) - x[n * XE_V + xe_t[n]];
}

static double xe_loss(const double *x, const void *ctx)
{
	double L = 0;
	for (int n = 0; n < XE_N; n++)
		L += xe_r[n] * xe_ref(x, n);
	return L;
}

static void xe_grad(float *g, const double *x, const void *ctx)
{
	/* In place, as the model uses it: the logits buffer becomes the gradient. */
	float *f = to_f32(x, XE_N * XE_V), *r = to_f32(xe_r, XE_N);
	llm_xent_bwd(f, f, NULL, xe_t, r, XE_N, XE_V);
	memcpy(g, f, XE_N * XE_V * sizeof *g);
	free(f);
	free(r);
}

static void test_xent(void)
{
	double x[XE_N * XE_V];
	fill(x, XE_N * XE_V, 5);
	x[2 * XE_V] = 80; /* large logits must not overflow */
	fill(xe_r, XE_N, 1);
	float *f = to_f32(x, XE_N * XE_V), loss[XE_N], lse[XE_N];
	llm_xent_fwd(loss, lse, f, xe_t, XE_N, XE_V);
	for (int n = 0; n < XE_N; n++)
		CHECK_NEAR(loss[n], xe_ref(x, n), 1e-5);
	CHECK(loss[1] == 0);
	/* The backward from the forward's lse equals the one that recomputes it. */
	float *r = to_f32(xe_r, XE_N), *g1 = to_f32(x, XE_N * XE_V), *g2 = to_f32(x, XE_N * XE_V);
	llm_xent_bwd(g1, g1, lse, xe_t, r, XE_N, XE_V);
	llm_xent_bwd(g2, g2, NULL, xe_t, r, XE_N, XE_V);
	CHECK(memcmp(g1, g2, XE_N * XE_V * sizeof *g1) == 0);
	free(r);
	free(g1);
	free(g2);
	free(f);
	op_case c = { XE_N * XE_V, xe_loss, xe_grad, NULL };
	CHECK(check_grad(&c, x) < 1e-4);
}

/* Threads: every op at three threads gives the bits of one thread (ops.h). The shapes pass
 * the size below which an op stays on its caller, and cut products at rows that are not a
 * multiple of the pieces' alignment. */
enum { TH_B = 2, TH_T = 150, TH_N = TH_B * TH_T, TH_C = 96, TH_I = 200, TH_H = 4, TH_KVH = 2,
       TH_D = TH_C / TH_H, TH_V = 300 };

typedef struct {
	float *mm, *dinp, *dw, *ln, *rstd, *dln, *dnw, *q, *k, *dq, *att, *atty, *dqa, *dka, *dva, *sw,
		*dg, *du, *res, *loss, *lse, *dlog;
} th_out;

static float *th_rand(size_t n)
{
	float *x = malloc(n * sizeof *x);
	for (size_t i = 0; i < n; i++)
		x[i] = (float)(llm_rng_normal(&rng) * 0.5);
	return x;
}

static float *th_zero(size_t n) { return calloc(n, sizeof(float)); }

static const float *th_x, *th_w, *th_g, *th_up, *th_qi, *th_ki, *th_vi, *th_logits;
static int32_t th_pos[TH_N], th_tgt[TH_N];

static void th_run(th_out *o)
{
	size_t NC = (size_t)TH_N * TH_C, NI = (size_t)TH_N * TH_I, kv = (size_t)TH_KVH * TH_D;
	o->mm = th_zero(NI);
	llm_matmul_fwd(o->mm, th_x, th_w, TH_N, TH_C, TH_I);
	o->dinp = th_zero(NC);
	o->dw = th_zero((size_t)TH_I * TH_C);
	llm_matmul_bwd(o->dinp, o->dw, th_g, th_x, th_w, TH_N, TH_C, TH_I);
	o->ln = th_zero(NC);
	o->rstd = th_zero(TH_N);
	llm_rmsnorm_fwd(o->ln, o->rstd, th_x, th_w, TH_N, TH_C, 1e-5f);
	o->dln = th_zero(NC);
	o->dnw = th_zero(TH_C);
	llm_rmsnorm_bwd(o->dln, o->dnw, th_g, th_x, th_w, o->rstd, TH_N, TH_C);
	o->q = th_zero(NC);
	llm_rope_fwd(o->q, th_qi, th_pos, TH_N, TH_H, TH_D, 10000);
	o->k = th_zero((size_t)TH_N * kv);
	memcpy(o->k, th_ki, (size_t)TH_N * kv * sizeof(float));
	llm_rope_fwd(o->k, o->k, th_pos, TH_N, TH_KVH, TH_D, 10000);
	o->dq = th_zero(NC);
	llm_rope_bwd(o->dq, th_g, th_pos, TH_N, TH_H, TH_D, 10000);
	o->att = th_zero((size_t)TH_B * TH_H * TH_T * TH_T);
	o->atty = th_zero(NC);
	llm_attention_fwd(o->atty, o->att, o->q, o->k, th_vi, TH_B, TH_T, TH_T, TH_H, TH_KVH, TH_D);
	o->dqa = th_zero(NC);
	o->dka = th_zero((size_t)TH_N * kv);
	o->dva = th_zero((size_t)TH_N * kv);
	float *scratch = th_zero((size_t)TH_T * TH_T);
	llm_attention_bwd(o->dqa, o->dka, o->dva, scratch, th_g, o->q, o->k, th_vi, o->att, TH_B, TH_T,
	                  TH_T, TH_H, TH_KVH, TH_D);
	free(scratch);
	o->sw = th_zero(NI);
	llm_swiglu_fwd(o->sw, th_g, th_up, NI);
	o->dg = th_zero(NI);
	o->du = th_zero(NI);
	llm_swiglu_bwd(o->dg, o->du, th_up, th_g, th_up, NI);
	o->res = th_zero(NI);
	llm_residual_fwd(o->res, o->sw, th_up, NI);
	o->loss = th_zero(TH_N);
	o->lse = th_zero(TH_N);
	llm_xent_fwd(o->loss, o->lse, th_logits, th_tgt, TH_N, TH_V);
	o->dlog = th_zero((size_t)TH_N * TH_V);
	memcpy(o->dlog, th_logits, (size_t)TH_N * TH_V * sizeof(float));
	llm_xent_bwd(o->dlog, o->dlog, o->lse, th_tgt, o->res, TH_N, TH_V);
}

static void test_threads(void)
{
	size_t NC = (size_t)TH_N * TH_C, NI = (size_t)TH_N * TH_I, kv = (size_t)TH_KVH * TH_D;
	float *x = th_rand(NC), *w = th_rand((size_t)TH_I * TH_C), *g = th_rand(NI), *up = th_rand(NI);
	float *qi = th_rand(NC), *ki = th_rand((size_t)TH_N * kv), *vi = th_rand((size_t)TH_N * kv);
	float *logits = th_rand((size_t)TH_N * TH_V);
	th_x = x, th_w = w, th_g = g, th_up = up, th_qi = qi, th_ki = ki, th_vi = vi, th_logits = logits;
	for (int n = 0; n < TH_N; n++) {
		th_pos[n] = n % TH_T;
		th_tgt[n] = n % 7 == 3 ? -1 : (int32_t)(llm_rng_next(&rng) % TH_V);
	}
	th_out one, three;
	llm_ops_set_threads(1);
	th_run(&one);
	llm_ops_set_threads(3);
	CHECK_EQ_INT(llm_ops_threads(), 3);
	th_run(&three);
	llm_ops_set_threads(1);
	size_t sizes[] = { NI, NC, (size_t)TH_I * TH_C, NC, TH_N, NC, TH_C, NC, (size_t)TH_N * kv, NC,
		           (size_t)TH_B * TH_H * TH_T * TH_T, NC, NC, (size_t)TH_N * kv,
		           (size_t)TH_N * kv, NI, NI, NI, NI, TH_N, TH_N, (size_t)TH_N * TH_V };
	float **a = (float **)&one, **b = (float **)&three;
	CHECK_EQ_INT(sizeof one / sizeof *a, sizeof sizes / sizeof *sizes);
	for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
		CHECK_MEM(a[i], sizes[i] * sizeof(float), b[i], sizes[i] * sizeof(float));
		free(a[i]);
		free(b[i]);
	}
	free(x), free(w), free(g), free(up), free(qi), free(ki), free(vi), free(logits);
}

/* The exponentials run four at a time where the CPU allows (llm_ops_fast_exp): each value must
 * be libm's expf to the bit, the special cases (below -88, above 88, infinities) included. */
static void test_exp_bits(void)
{
	enum { N = 3, V = 1000, S = 4099 };
	float *x = malloc((size_t)N * V * sizeof *x), *d = malloc((size_t)N * V * sizeof *d);
	float lse[N], loss[N], dloss[N] = { 1, 0.5f, -2 };
	int32_t tgt[N] = { 3, 999, 0 };
	for (int i = 0; i < N * V; i++)
		x[i] = (float)(llm_rng_normal(&rng) * (i % 5 == 0 ? 60 : 4));
	x[7] = INFINITY;
	x[V + 8] = -INFINITY;
	x[2 * V + 9] = -200;
	llm_xent_fwd(loss, lse, x, tgt, N, V);
	llm_xent_bwd(d, x, lse, tgt, dloss, N, V);
	int bad = 0;
	for (int n = 0; n < N; n++)
		for (int j = 0; j < V; j++) {
			float want = expf(x[n * V + j] - lse[n]) * dloss[n] - (j == tgt[n] ? dloss[n] : 0);
			bad += memcmp(&want, &d[n * V + j], sizeof want) != 0;
		}
	CHECK_EQ_INT(bad, 0);
	float *g = malloc(S * sizeof *g), *u = malloc(S * sizeof *u), *o = malloc(S * sizeof *o);
	for (int i = 0; i < S; i++) {
		g[i] = (float)(llm_rng_normal(&rng) * (i % 3 ? 3 : 40));
		u[i] = (float)llm_rng_normal(&rng);
	}
	llm_swiglu_fwd(o, g, u, S);
	bad = 0;
	for (int i = 0; i < S; i++) {
		float want = g[i] / (1.0f + expf(-g[i])) * u[i];
		bad += memcmp(&want, &o[i], sizeof want) != 0;
	}
	CHECK_EQ_INT(bad, 0);
	free(x), free(d), free(g), free(u), free(o);
}

int main(void)
{
	llm_rng_seed(&rng, 12345);
	RUN(test_gemm);
	RUN(test_matmul);
	RUN(test_embedding);
	RUN(test_rmsnorm);
	RUN(test_rope);
	RUN(test_attention);
	RUN(test_swiglu);
	RUN(test_xent);
	RUN(test_threads);
	RUN(test_exp_bits);
	return unit_done();
}
