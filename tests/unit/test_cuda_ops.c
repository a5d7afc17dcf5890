/*
 * test_cuda_ops.c — every CUDA op (gpu.h) against its CPU reference (ops.h, optim.h, cast.h)
 * on fresh random inputs, in fp32 and in bf16 (fp16 where the op has a 16-bit path).
 *
 * Inputs are drawn in fp32, rounded to the tested type, and the rounded values go to both
 * sides, so only the op's own arithmetic differs. Element i passes when
 *     |gpu_i - cpu_i| <= tol * (|cpu_i| + rms(cpu))
 * (relative, with the vector's scale as the floor near zero), tol 1e-5 for fp32 and 1e-2 for
 * the 16-bit types; NaN or infinity never passes. Every output buffer is filled with NaN
 * before the op runs, so an element the kernel forgets to write fails. Integer-valued and
 * bit-defined results (casts, AdamW) must be identical.
 *
 * Without a GPU (or a build without CUDA) every test reports "skip", never "ok".
 */
#include <stdlib.h>
#include <time.h>

#include "core/hash.h"
#include "model/cast.h"
#include "model/gpu.h"
#include "model/gpuplan.h"
#include "model/ops.h"
#include "model/optim.h"
#include "unit.h"

#ifdef LLM_HAVE_CUDA

static llm_rng rng;
static void *allocs[256];
static int nallocs;

static float *randv(size_t n, float scale)
{
	float *x = malloc(n * sizeof *x);
	for (size_t i = 0; i < n; i++)
		x[i] = (float)(llm_rng_normal(&rng) * scale);
	return x;
}

static void round_to(float *x, size_t n, llm_dtype t)
{
	for (size_t i = 0; i < n; i++)
		x[i] = t == LLM_DT_BF16 ? llm_round_bf16(x[i]) : t == LLM_DT_F16 ? llm_round_f16(x[i]) : x[i];
}

/* A device copy of x in type t (x must already be representable: see round_to). */
static void *up(const float *x, size_t n, llm_dtype t)
{
	void *d;
	if (llm_cuda_malloc(&d, n * llm_dtype_size(t)) != LLM_OK) {
		printf("# %s\n", llm_cuda_detail());
		abort();
	}
	allocs[nallocs++] = d;
	if (t == LLM_DT_F32) {
		llm_cuda_to_device(d, x, n * 4);
		return d;
	}
	uint16_t *h = malloc(n * 2);
	if (t == LLM_DT_BF16)
		llm_f32_to_bf16_n(h, x, n);
	else
		llm_f32_to_f16_n(h, x, n);
	llm_cuda_to_device(d, h, n * 2);
	free(h);
	return d;
}

/* An output buffer of n elements, poisoned with NaN (all bits set is NaN in all three types). */
static void *out_buf(size_t n, llm_dtype t)
{
	void *d;
	if (llm_cuda_malloc(&d, n * llm_dtype_size(t)) != LLM_OK)
		abort();
	allocs[nallocs++] = d;
	llm_cuda_memset(d, 0xff, n * llm_dtype_size(t));
	return d;
}

static float *down(const void *d, size_t n, llm_dtype t)
{
	float *x = malloc(n * sizeof *x);
	if (t == LLM_DT_F32) {
		llm_cuda_to_host(x, d, n * 4);
		return x;
	}
	uint16_t *h = malloc(n * 2);
	llm_cuda_to_host(h, d, n * 2);
	if (t == LLM_DT_BF16)
		llm_bf16_to_f32_n(x, h, n);
	else
		llm_f16_to_f32_n(x, h, n);
	free(h);
	return x;
}

static void release(void)
{
	llm_cuda_sync();
	for (int i = 0; i < nallocs; i++)
		llm_cuda_free(allocs[i]);
	nallocs = 0;
}

static double tol_for(llm_dtype t)
{
	return t == LLM_DT_F32 ? 1e-5 : 1e-2;
}

/* The comparison described at the top; prints the worst element on failure. */
static int close_to(const char *what, llm_dtype t, const float *got, const float *want, size_t n)
{
	double tol = tol_for(t), ss = 0;
	for (size_t i = 0; i < n; i++)
		ss += (double)want[i] * want[i];
	double rms = n ? sqrt(ss / n) : 0, worst = 0;
	size_t wi = 0, bad = 0;
	for (size_t i = 0; i < n; i++) {
		double e = fabs((double)got[i] - want[i]), lim = tol * (fabs(want[i]) + rms);
		if (!isfinite(got[i]) || !(e <= lim)) {
			bad++;
			if (!isfinite(got[i]) || e / lim > worst) {
				worst = isfinite(got[i]) ? e / lim : INFINITY;
				wi = i;
			}
		}
	}
	if (bad)
		printf("#   %s (%s): %zu of %zu elements off; worst [%zu] gpu %.9g cpu %.9g (tol %g)\n",
		       what, llm_dtype_name(t), bad, n, wi, got[wi], want[wi], tol);
	return bad == 0;
}

#define CHECK_CLOSE(what, t, got, want, n) CHECK(close_to(what, t, got, want, n))
#define GPU(call)                                                          \
	do {                                                               \
		int rc_ = (call);                                          \
		if (rc_) {                                                 \
			printf("#   %s: %s\n", #call, llm_cuda_detail()); \
			CHECK(rc_ == 0);                                   \
		}                                                          \
	} while (0)

static const llm_dtype types[] = { LLM_DT_F32, LLM_DT_BF16, LLM_DT_F16 };

static void test_embedding(void)
{
	enum { N = 300, C = 96, V = 50 };
	int32_t tok[N];
	for (int n = 0; n < N; n++)
		tok[n] = (int32_t)llm_rng_below(&rng, V);
	float *wte = randv((size_t)V * C, 1), *dout = randv((size_t)N * C, 1);
	float *dw = randv((size_t)V * C, 1), *want = malloc((size_t)N * C * 4);
	llm_embedding_fwd(want, tok, wte, N, C);
	void *dt = up((const float *)tok, N, LLM_DT_F32), *o = out_buf((size_t)N * C, LLM_DT_F32);
	GPU(llm_cuda_embedding_fwd(o, dt, up(wte, (size_t)V * C, LLM_DT_F32), N, C));
	float *got = down(o, (size_t)N * C, LLM_DT_F32);
	CHECK_CLOSE("embedding_fwd", LLM_DT_F32, got, want, (size_t)N * C);
	free(got);
	/* Backward adds: start both from the same random table. */
	void *ddw = up(dw, (size_t)V * C, LLM_DT_F32);
	int32_t order[N], starts[N + 1], uniq[N];
	int U = llm_gpuplan_embed(tok, N, V, order, starts, uniq);
	GPU(llm_cuda_embedding_bwd(ddw, up(dout, (size_t)N * C, LLM_DT_F32),
	                           up((const float *)order, N, LLM_DT_F32),
	                           up((const float *)starts, (size_t)U + 1, LLM_DT_F32),
	                           up((const float *)uniq, (size_t)U, LLM_DT_F32), U, C));
	llm_embedding_bwd(dw, dout, tok, N, C);
	got = down(ddw, (size_t)V * C, LLM_DT_F32);
	CHECK_CLOSE("embedding_bwd", LLM_DT_F32, got, dw, (size_t)V * C);
	free(got);
	free(wte), free(dout), free(dw), free(want);
	release();
}

/* llm_gemm's full contract: both transposes, padded leading dimensions, alpha and beta, a
 * separate C and D, and a 16-bit product accumulated into fp32. */
static void test_gemm(void)
{
	enum { M = 37, N = 45, K = 29, PAD = 3 };
	for (int ti = 0; ti < 3; ti++)
		for (int ta = 0; ta < 2; ta++)
			for (int tb = 0; tb < 2; tb++) {
				llm_dtype t = types[ti];
				int lda = (ta ? M : K) + PAD, ldb = (tb ? K : N) + PAD, ldc = N + PAD;
				size_t na = (size_t)(ta ? K : M) * lda, nb = (size_t)(tb ? N : K) * ldb;
				size_t nc = (size_t)M * ldc;
				float *a = randv(na, 1), *b = randv(nb, 1), *c = randv(nc, 1);
				round_to(a, na, t), round_to(b, nb, t);
				float *want = malloc(nc * 4);
				memcpy(want, c, nc * 4);
				llm_gemm(ta, tb, M, N, K, 0.7f, a, lda, b, ldb, 0.3f, want, ldc);
				void *d = out_buf(nc, LLM_DT_F32);
				GPU(llm_cuda_gemm(ta, tb, M, N, K, 0.7f, t, up(a, na, t), lda, up(b, nb, t), ldb,
				                  0.3f, LLM_DT_F32, up(c, nc, LLM_DT_F32), ldc, d, ldc));
				float *got = down(d, nc, LLM_DT_F32);
				/* Only the M x N window is defined; the padding stays NaN. */
				float *gw = malloc((size_t)M * N * 4), *ww = malloc((size_t)M * N * 4);
				for (int i = 0; i < M; i++)
					for (int j = 0; j < N; j++) {
						gw[i * N + j] = got[(size_t)i * ldc + j];
						ww[i * N + j] = want[(size_t)i * ldc + j];
					}
				char what[64];
				snprintf(what, sizeof what, "gemm ta %d tb %d", ta, tb);
				CHECK_CLOSE(what, t, gw, ww, (size_t)M * N);
				free(a), free(b), free(c), free(want), free(got), free(gw), free(ww);
				release();
			}
}

static void test_matmul(void)
{
	enum { N = 70, K = 96, M = 80 };
	for (int ti = 0; ti < 3; ti++) {
		llm_dtype t = types[ti];
		float *inp = randv((size_t)N * K, 1), *w = randv((size_t)M * K, 0.1f);
		float *dout = randv((size_t)N * M, 1), *dw0 = randv((size_t)M * K, 1);
		round_to(inp, (size_t)N * K, t);
		round_to(w, (size_t)M * K, t);
		round_to(dout, (size_t)N * M, t);
		float *want = malloc((size_t)N * M * 4), *dinp = calloc((size_t)N * K, 4);
		float *dw = malloc((size_t)M * K * 4);
		memcpy(dw, dw0, (size_t)M * K * 4);
		llm_matmul_fwd(want, inp, w, N, K, M);
		llm_matmul_bwd(dinp, dw, dout, inp, w, N, K, M);
		void *din = up(inp, (size_t)N * K, t), *dwt = up(w, (size_t)M * K, t);
		void *o = out_buf((size_t)N * M, t), *o32 = out_buf((size_t)N * M, LLM_DT_F32);
		GPU(llm_cuda_matmul_fwd(t, t, o, 0, din, dwt, N, K, M));
		GPU(llm_cuda_matmul_fwd(t, LLM_DT_F32, o32, 0, din, dwt, N, K, M));
		float *got = down(o, (size_t)N * M, t), *got32 = down(o32, (size_t)N * M, LLM_DT_F32);
		CHECK_CLOSE("matmul_fwd", t, got, want, (size_t)N * M);
		CHECK_CLOSE("matmul_fwd to fp32", t, got32, want, (size_t)N * M);
		void *gdi = out_buf((size_t)N * K, t), *gdw = up(dw0, (size_t)M * K, LLM_DT_F32);
		GPU(llm_cuda_matmul_bwd(t, t, gdi, 0, gdw, up(dout, (size_t)N * M, t), din, dwt, N, K, M));
		float *gi = down(gdi, (size_t)N * K, t), *gw = down(gdw, (size_t)M * K, LLM_DT_F32);
		CHECK_CLOSE("matmul_bwd dinp", t, gi, dinp, (size_t)N * K);
		CHECK_CLOSE("matmul_bwd dw", t, gw, dw, (size_t)M * K);
		free(inp), free(w), free(dout), free(dw0), free(want), free(dinp), free(dw);
		free(got), free(got32), free(gi), free(gw);
		release();
	}
}

static void test_rmsnorm(void)
{
	enum { N = 33, C = 200 };
	float *x = randv((size_t)N * C, 2), *w = randv(C, 1), *dout = randv((size_t)N * C, 1);
	float *dx0 = randv((size_t)N * C, 1), *dw0 = randv(C, 1);
	float *want = malloc((size_t)N * C * 4), rstd[N];
	llm_rmsnorm_fwd(want, rstd, x, w, N, C, 1e-5f);
	void *dx = up(x, (size_t)N * C, LLM_DT_F32), *dwt = up(w, C, LLM_DT_F32);
	for (int ti = 0; ti < 3; ti++) {
		llm_dtype t = types[ti];
		void *o = out_buf((size_t)N * C, t), *r = out_buf(N, LLM_DT_F32);
		GPU(llm_cuda_rmsnorm_fwd(t, o, r, dx, dwt, N, C, 1e-5f));
		float *got = down(o, (size_t)N * C, t), *gr = down(r, N, LLM_DT_F32);
		CHECK_CLOSE("rmsnorm_fwd", t, got, want, (size_t)N * C);
		CHECK_CLOSE("rmsnorm_fwd rstd", LLM_DT_F32, gr, rstd, N);
		free(got), free(gr);
	}
	void *gdx = up(dx0, (size_t)N * C, LLM_DT_F32), *gdw = up(dw0, C, LLM_DT_F32);
	GPU(llm_cuda_rmsnorm_bwd(gdx, gdw, up(dout, (size_t)N * C, LLM_DT_F32), dx, dwt,
	                         up(rstd, N, LLM_DT_F32), N, C));
	llm_rmsnorm_bwd(dx0, dw0, dout, x, w, rstd, N, C);
	float *gx = down(gdx, (size_t)N * C, LLM_DT_F32), *gw = down(gdw, C, LLM_DT_F32);
	CHECK_CLOSE("rmsnorm_bwd dinp", LLM_DT_F32, gx, dx0, (size_t)N * C);
	CHECK_CLOSE("rmsnorm_bwd dweight", LLM_DT_F32, gw, dw0, C);
	free(x), free(w), free(dout), free(dx0), free(dw0), free(want), free(gx), free(gw);
	release();
}

static void test_rope(void)
{
	enum { N = 40, H = 3, D = 64 };
	int32_t pos[N];
	for (int n = 0; n < N; n++)
		pos[n] = (int32_t)llm_rng_below(&rng, 4096);
	void *dpos = up((const float *)pos, N, LLM_DT_F32);
	for (int ti = 0; ti < 3; ti++) {
		llm_dtype t = types[ti];
		size_t n = (size_t)N * H * D;
		float *x = randv(n, 1), *want = malloc(n * 4), *dwant = malloc(n * 4);
		round_to(x, n, t);
		llm_rope_fwd(want, x, pos, N, H, D, 10000);
		memcpy(dwant, x, n * 4);
		llm_rope_bwd(dwant, dwant, pos, N, H, D, 10000); /* in place: overwrite */
		void *dx = up(x, n, t), *o = out_buf(n, t), *o2 = out_buf(n, t);
		GPU(llm_cuda_rope_fwd(t, o, dx, dpos, N, H, D, 10000));
		GPU(llm_cuda_rope_bwd(t, o2, dx, dpos, N, H, D, 10000));
		float *got = down(o, n, t), *got2 = down(o2, n, t);
		CHECK_CLOSE("rope_fwd", t, got, want, n);
		CHECK_CLOSE("rope_bwd", t, got2, dwant, n);
		GPU(llm_cuda_rope_fwd(t, dx, dx, dpos, N, H, D, 10000)); /* in place */
		float *got3 = down(dx, n, t);
		CHECK_CLOSE("rope_fwd in place", t, got3, want, n);
		free(x), free(want), free(dwant), free(got), free(got2), free(got3);
	}
	release();
}

/* One attention shape in one type: forward output, then the three input gradients. */
static void attention_case(llm_dtype t, int B, int Tq, int Tk, int H, int KVH, int D)
{
	size_t nq = (size_t)B * Tq * H * D, nk = (size_t)B * Tk * KVH * D;
	float *q = randv(nq, 1), *k = randv(nk, 1), *v = randv(nk, 1), *dout = randv(nq, 1);
	round_to(q, nq, t), round_to(k, nk, t), round_to(v, nk, t), round_to(dout, nq, t);
	float *out = malloc(nq * 4), *att = malloc((size_t)B * H * Tq * Tk * 4);
	float *scratch = malloc((size_t)Tq * Tk * 4);
	float *dq = calloc(nq, 4), *dk = calloc(nk, 4), *dv = calloc(nk, 4);
	llm_attention_fwd(out, att, q, k, v, B, Tq, Tk, H, KVH, D);
	llm_attention_bwd(dq, dk, dv, scratch, dout, q, k, v, att, B, Tq, Tk, H, KVH, D);
	void *gq = up(q, nq, t), *gk = up(k, nk, t), *gv = up(v, nk, t);
	void *go = out_buf(nq, t), *lse = out_buf((size_t)B * H * Tq, LLM_DT_F32);
	GPU(llm_cuda_attention_fwd(t, go, lse, gq, gk, gv, B, Tq, Tk, H, KVH, D));
	float *got = down(go, nq, t);
	char what[96];
	snprintf(what, sizeof what, "attention_fwd B%d Tq%d Tk%d H%d KVH%d D%d", B, Tq, Tk, H, KVH, D);
	CHECK_CLOSE(what, t, got, out, nq);
	void *gdq = out_buf(nq, t), *gdk = out_buf(nk, t), *gdv = out_buf(nk, t);
	void *delta = out_buf((size_t)B * H * Tq, LLM_DT_F32);
	GPU(llm_cuda_attention_bwd(t, gdq, gdk, gdv, delta, up(dout, nq, t), go, gq, gk, gv, lse, B,
	                           Tq, Tk, H, KVH, D));
	float *a = down(gdq, nq, t), *b = down(gdk, nk, t), *c = down(gdv, nk, t);
	snprintf(what, sizeof what, "attention_bwd dq D%d Tq%d Tk%d", D, Tq, Tk);
	CHECK_CLOSE(what, t, a, dq, nq);
	snprintf(what, sizeof what, "attention_bwd dk D%d Tq%d Tk%d", D, Tq, Tk);
	CHECK_CLOSE(what, t, b, dk, nk);
	snprintf(what, sizeof what, "attention_bwd dv D%d Tq%d Tk%d", D, Tq, Tk);
	CHECK_CLOSE(what, t, c, dv, nk);
	free(q), free(k), free(v), free(dout), free(out), free(att), free(scratch);
	free(dq), free(dk), free(dv), free(got), free(a), free(b), free(c);
	release();
}

static void test_attention(void)
{
	/* Tile edges (67 is no multiple of 32 or 64), GQA groups of 1, 2 and 4, every head-width
	 * template (32 pads to 64, 48 as in the "small" preset, 128), and queries after cached
	 * keys (Tq < Tk). */
	for (int ti = 0; ti < 2; ti++) {
		llm_dtype t = types[ti];
		attention_case(t, 2, 67, 67, 4, 2, 32);
		attention_case(t, 1, 130, 130, 4, 4, 48);
		attention_case(t, 2, 70, 70, 4, 1, 64);
		attention_case(t, 1, 40, 40, 2, 2, 128);
		attention_case(t, 1, 20, 67, 4, 2, 64);
	}
	attention_case(LLM_DT_F16, 1, 67, 67, 4, 2, 64);
}

static void test_swiglu_residual(void)
{
	enum { N = 5000 };
	for (int ti = 0; ti < 3; ti++) {
		llm_dtype t = types[ti];
		float *g = randv(N, 2), *u = randv(N, 1), *d = randv(N, 1);
		round_to(g, N, t), round_to(u, N, t), round_to(d, N, t);
		float *want = malloc(N * 4), *dg = calloc(N, 4), *du = calloc(N, 4);
		llm_swiglu_fwd(want, g, u, N);
		llm_swiglu_bwd(dg, du, d, g, u, N);
		void *gg = up(g, N, t), *gu = up(u, N, t), *o = out_buf(N, t);
		void *odg = out_buf(N, t), *odu = out_buf(N, t);
		GPU(llm_cuda_swiglu_fwd(t, o, gg, gu, N));
		GPU(llm_cuda_swiglu_bwd(t, odg, odu, up(d, N, t), gg, gu, N));
		float *a = down(o, N, t), *b = down(odg, N, t), *c = down(odu, N, t);
		CHECK_CLOSE("swiglu_fwd", t, a, want, N);
		CHECK_CLOSE("swiglu_bwd dgate", t, b, dg, N);
		CHECK_CLOSE("swiglu_bwd dup", t, c, du, N);
		free(g), free(u), free(d), free(want), free(dg), free(du), free(a), free(b), free(c);
		release();
	}
	float *a = randv(N, 1), *b = randv(N, 1), *want = malloc(N * 4);
	llm_residual_fwd(want, a, b, N);
	void *o = out_buf(N, LLM_DT_F32);
	GPU(llm_cuda_residual_fwd(o, up(a, N, LLM_DT_F32), up(b, N, LLM_DT_F32), N));
	float *got = down(o, N, LLM_DT_F32);
	CHECK_CLOSE("residual_fwd", LLM_DT_F32, got, want, N);
	free(a), free(b), free(want), free(got);
	release();
}

static void test_xent(void)
{
	enum { N = 37, V = 5003 };
	int32_t tg[N];
	for (int n = 0; n < N; n++)
		tg[n] = n % 7 == 3 ? -1 : (int32_t)llm_rng_below(&rng, V);
	void *dtg = up((const float *)tg, N, LLM_DT_F32);
	for (int ti = 0; ti < 3; ti++) {
		llm_dtype t = types[ti];
		size_t n = (size_t)N * V;
		float *x = randv(n, 3), *dl = randv(N, 1), loss[N], *dx = malloc(n * 4);
		round_to(x, n, t);
		llm_xent_fwd(loss, NULL, x, tg, N, V);
		llm_xent_bwd(dx, x, NULL, tg, dl, N, V);
		void *gx = up(x, n, t), *gl = out_buf(N, LLM_DT_F32), *gd = out_buf(n, t);
		GPU(llm_cuda_xent(t, gl, gd, gx, dtg, up(dl, N, LLM_DT_F32), 0, N, V));
		float *a = down(gl, N, LLM_DT_F32), *b = down(gd, n, t);
		/* The loss is computed from the same rounded logits in fp32 on both sides. */
		CHECK_CLOSE("xent losses", LLM_DT_F32, a, loss, N);
		CHECK_CLOSE("xent dlogits", t, b, dx, n);
		/* In place, with a constant dloss, as the model calls it. */
		for (int i = 0; i < N; i++)
			dl[i] = 0.25f;
		llm_xent_bwd(dx, x, NULL, tg, dl, N, V);
		GPU(llm_cuda_xent(t, NULL, gx, gx, dtg, NULL, 0.25f, N, V));
		float *c = down(gx, n, t);
		CHECK_CLOSE("xent in place", t, c, dx, n);
		free(x), free(dl), free(dx), free(a), free(b), free(c);
		release();
	}
}

static void test_adamw_bit_exact(void)
{
	enum { N = 10007 };
	llm_optim_config c;
	llm_optim_defaults(&c);
	float *p = randv(N, 1), *g = randv(N, 0.1f), *m = randv(N, 0.01f), *v = malloc(N * 4);
	for (int i = 0; i < N; i++)
		v[i] = fabsf(m[i]) * 0.1f;
	void *gp = up(p, N, LLM_DT_F32), *gg = up(g, N, LLM_DT_F32), *gm = up(m, N, LLM_DT_F32);
	void *gv = up(v, N, LLM_DT_F32), *low = out_buf(N, LLM_DT_BF16);
	for (int64_t t = 1; t <= 3; t++) {
		llm_adamw_update(p, g, m, v, N, 0.5, 1e-3, 0.1, &c, t);
		GPU(llm_cuda_adamw(gp, LLM_DT_BF16, low, gg, gm, gv, N, 0.5f, 1e-3, 0.1, c.beta1, c.beta2,
		                   c.eps, t));
	}
	float *a = down(gp, N, LLM_DT_F32), *b = down(gm, N, LLM_DT_F32), *d = down(gv, N, LLM_DT_F32);
	float *l = down(low, N, LLM_DT_BF16);
	int bad = 0;
	for (int i = 0; i < N; i++)
		bad += memcmp(&a[i], &p[i], 4) || memcmp(&b[i], &m[i], 4) || memcmp(&d[i], &v[i], 4) ||
		       l[i] != llm_round_bf16(p[i]);
	if (bad)
		printf("#   adamw: %d elements differ from optim.c (p[0] gpu %.9g cpu %.9g)\n", bad, a[0],
		       p[0]);
	CHECK_EQ_INT(bad, 0);
	free(p), free(g), free(m), free(v), free(a), free(b), free(d), free(l);
	release();
}

static void test_sum_squares_scale_cast(void)
{
	enum { N = 1000003 };
	float *x = randv(N, 1);
	void *gx = up(x, N, LLM_DT_F32);
	double *dsum, got = 0;
	GPU(llm_cuda_malloc((void **)&dsum, sizeof *dsum));
	GPU(llm_cuda_memset(dsum, 0, sizeof *dsum));
	GPU(llm_cuda_sum_squares(dsum, gx, N));
	GPU(llm_cuda_sum_squares(dsum, gx, 10)); /* adds */
	GPU(llm_cuda_to_host(&got, dsum, sizeof got));
	double want = llm_sum_squares(x, N) + llm_sum_squares(x, 10);
	CHECK_NEAR(got, want, 1e-12 * want);
	llm_cuda_free(dsum);
	GPU(llm_cuda_scale(gx, N, 0.5f));
	float *s = down(gx, N, LLM_DT_F32);
	int bad = 0;
	for (int i = 0; i < N; i++)
		bad += s[i] != x[i] * 0.5f;
	CHECK_EQ_INT(bad, 0);
	/* Casts: the same bits as cast.c, both ways, for all three types. */
	for (int a = 0; a < 3; a++)
		for (int b = 0; b < 3; b++) {
			if (a == b)
				continue;
			float *src = randv(4096, 100);
			round_to(src, 4096, types[a]);
			void *o = out_buf(4096, types[b]);
			GPU(llm_cuda_cast(types[b], o, types[a], up(src, 4096, types[a]), 4096));
			float *got2 = down(o, 4096, types[b]);
			round_to(src, 4096, types[b]);
			int nb = 0;
			for (int i = 0; i < 4096; i++)
				nb += memcmp(&got2[i], &src[i], 4) != 0;
			if (nb)
				printf("#   cast %s -> %s: %d differ\n", llm_dtype_name(types[a]),
				       llm_dtype_name(types[b]), nb);
			CHECK_EQ_INT(nb, 0);
			free(src), free(got2);
		}
	free(x), free(s);
	release();
}

static int gpu_ready(void)
{
	static int ready = -1;
	if (ready < 0) {
		ready = llm_cuda_available() && llm_cuda_init(0) == LLM_OK;
		if (ready)
			llm_cuda_set_deterministic(1);
	}
	if (!ready)
		unit_skip("no CUDA device");
	return ready;
}

#define GPU_TEST(fn)                     \
	static void gpu_##fn(void)       \
	{                                \
		if (gpu_ready())         \
			fn();            \
	}
GPU_TEST(test_embedding)
GPU_TEST(test_gemm)
GPU_TEST(test_matmul)
GPU_TEST(test_rmsnorm)
GPU_TEST(test_rope)
GPU_TEST(test_attention)
GPU_TEST(test_swiglu_residual)
GPU_TEST(test_xent)
GPU_TEST(test_adamw_bit_exact)
GPU_TEST(test_sum_squares_scale_cast)

int main(void)
{
	const char *seed = getenv("LLM_TEST_SEED"); /* fresh inputs per run; the seed is printed */
	uint64_t s = seed ? strtoull(seed, NULL, 10) : (uint64_t)time(NULL);
	printf("# seed %llu (LLM_TEST_SEED to repeat)\n", (unsigned long long)s);
	llm_rng_seed(&rng, s);
	RUN(gpu_test_embedding);
	RUN(gpu_test_gemm);
	RUN(gpu_test_matmul);
	RUN(gpu_test_rmsnorm);
	RUN(gpu_test_rope);
	RUN(gpu_test_attention);
	RUN(gpu_test_swiglu_residual);
	RUN(gpu_test_xent);
	RUN(gpu_test_adamw_bit_exact);
	RUN(gpu_test_sum_squares_scale_cast);
	llm_cuda_shutdown();
	return unit_done();
}

#else /* built without CUDA */

static void test_cuda_ops(void)
{
	unit_skip("built without CUDA");
}

int main(void)
{
	RUN(test_cuda_ops);
	return unit_done();
}

#endif
