/*
 * test_cuda_host.c — the GPU trainer's orchestration (lib/model/cudamodel.c) checked without a GPU.
 *
 * This program defines every launcher of gpu.h itself, on host memory, with the CPU ops of
 * ops.h / optim.h and the roundings of cast.h: a "device" whose kernels are the reference. The
 * linker then takes these instead of kernels/ (libllmcuda.a is never searched for a symbol
 * already defined), so cudamodel.c runs unchanged on the CPU. What that checks is everything
 * above the kernels: buffer sizes and lifetimes (fresh "device" memory is filled with NaN, and
 * ASan watches the bounds under SAN=1), the order of ops and which buffer feeds which, the
 * overwrite/add conventions, the recomputation modes, the tied head, the embedding plan, the
 * precision plumbing (bf16/fp16 values really are rounded), loss scaling and the optimizer
 * step. The kernels themselves are checked against the same CPU ops by test_cuda_ops on a GPU.
 *
 * Stated tolerances: fp32 losses equal the CPU model's to 1e-5 relative per step over 20
 * steps, the first gradient to 1e-5 in norm; recomputation bit-identical; bf16 within 3e-2;
 * fp16 and mixed train (finite, falling loss) with loss scaling.
 *
 * The trainer (train.h, llm-train --device cuda) on this device: the smoke run's losses equal
 * the CPU trainer's to 1e-5 relative in fp32, and its resume from a checkpoint is bit for bit.
 *
 * Evaluation (eval.h on an inference model, llm-eval --device cuda): per-token losses equal
 * the CPU's to 1e-5 relative in fp32 for any batch shape; loss, bits per byte and choice
 * log-likelihoods of the evaluator to 1e-5 relative in fp32 (token and byte counts exact),
 * 2e-2 in bf16.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "core/hash.h"
#include "model/cast.h"
#include "model/cudamodel.h"
#include "model/eval.h"
#include "model/gpu.h"
#include "model/model.h"
#include "model/ops.h"
#include "model/optim.h"
#include "model/train.h"
#include "tok/bpe.h"
#include "unit.h"

#ifdef LLM_HAVE_CUDA

/* ---- the host "device" ----------------------------------------------------------------- */

static int det;

int llm_cuda_init(int device) { return device == 0 ? LLM_OK : LLM_EUNSUPPORTED; }
void llm_cuda_shutdown(void) {}
int llm_cuda_device_count(void) { return 1; }
int llm_cuda_device_info(char *name, size_t cap, int *sms, double *peak)
{
	snprintf(name, cap, "host emulation");
	*sms = 1;
	*peak = 0;
	return LLM_OK;
}
void *llm_cuda_stream(void) { return NULL; }
void llm_cuda_set_deterministic(int on) { det = on; }
int llm_cuda_deterministic(void) { return det; }
const char *llm_cuda_detail(void) { return "host emulation"; }
int llm_cuda_sync(void) { return LLM_OK; }

int llm_cuda_malloc(void **p, size_t bytes)
{
	*p = malloc(bytes ? bytes : 1);
	memset(*p, 0xff, bytes); /* NaN in all three types: reading unwritten memory shows */
	return LLM_OK;
}
void llm_cuda_free(void *p) { free(p); }
int llm_cuda_memset(void *p, int byte, size_t bytes)
{
	memset(p, byte, bytes);
	return LLM_OK;
}
int llm_cuda_to_device(void *dst, const void *src, size_t bytes)
{
	memcpy(dst, src, bytes);
	return LLM_OK;
}
int llm_cuda_to_host(void *dst, const void *src, size_t bytes)
{
	memcpy(dst, src, bytes);
	return LLM_OK;
}
int llm_cuda_scratch(void **p, size_t bytes)
{
	static void *s;
	static size_t n;
	if (bytes > n) {
		free(s);
		s = malloc(bytes);
		n = bytes;
	}
	*p = s;
	return LLM_OK;
}

/* n elements of type t as fresh fp32, and back with the type's rounding. */
static float *tof(llm_dtype t, const void *p, size_t n)
{
	float *x = malloc((n ? n : 1) * sizeof *x);
	if (t == LLM_DT_F32)
		memcpy(x, p, n * 4);
	else if (t == LLM_DT_BF16)
		llm_bf16_to_f32_n(x, p, n);
	else
		llm_f16_to_f32_n(x, p, n);
	return x;
}

static void fromf(llm_dtype t, void *p, const float *x, size_t n)
{
	if (t == LLM_DT_F32)
		memmove(p, x, n * 4);
	else if (t == LLM_DT_BF16)
		llm_f32_to_bf16_n(p, x, n);
	else
		llm_f32_to_f16_n(p, x, n);
}

/* Elements spanned by a rows x cols matrix with leading dimension ld. */
static size_t span(int rows, int cols, int ld)
{
	return rows > 0 ? (size_t)(rows - 1) * ld + cols : 0;
}

int llm_cuda_gemm(int ta, int tb, int M, int N, int K, float alpha, llm_dtype ab, const void *A,
                  int lda, const void *B, int ldb, float beta, llm_dtype cd, const void *C,
                  int ldc, void *D, int ldd)
{
	if (M <= 0 || N <= 0)
		return LLM_OK;
	float *a = tof(ab, A, span(ta ? K : M, ta ? M : K, lda));
	float *b = tof(ab, B, span(tb ? N : K, tb ? K : N, ldb));
	float *d = calloc(span(M, N, ldd), 4);
	if (C && beta != 0)
		for (int i = 0; i < M; i++) {
			float *c = tof(cd, (const char *)C + (size_t)i * ldc * llm_dtype_size(cd), (size_t)N);
			memcpy(d + (size_t)i * ldd, c, (size_t)N * 4);
			free(c);
		}
	llm_gemm(ta, tb, M, N, K, alpha, a, lda, b, ldb, C && beta != 0 ? beta : 0, d, ldd);
	for (int i = 0; i < M; i++)
		fromf(cd, (char *)D + (size_t)i * ldd * llm_dtype_size(cd), d + (size_t)i * ldd, (size_t)N);
	free(a), free(b), free(d);
	return LLM_OK;
}

int llm_cuda_matmul_fwd(llm_dtype t, llm_dtype ot, void *out, float beta, const void *inp,
                        const void *w, int N, int K, int M)
{
	return llm_cuda_gemm(0, 1, N, M, K, 1, t, inp, K, w, K, beta, ot, out, M, out, M);
}

int llm_cuda_matmul_bwd(llm_dtype t, llm_dtype dt_in, void *dinp, float beta_in, float *dw,
                        const void *dout, const void *inp, const void *w, int N, int K, int M)
{
	if (dinp)
		llm_cuda_gemm(0, 0, N, K, M, 1, t, dout, M, w, K, beta_in, dt_in, dinp, K, dinp, K);
	if (dw)
		llm_cuda_gemm(1, 0, M, K, N, 1, t, dout, M, inp, K, 1, LLM_DT_F32, dw, K, dw, K);
	return LLM_OK;
}

int llm_cuda_embedding_fwd(float *out, const int32_t *tokens, const float *wte, int N, int C)
{
	llm_embedding_fwd(out, tokens, wte, N, C);
	return LLM_OK;
}

int llm_cuda_embedding_bwd(float *dwte, const float *dout, const int32_t *order,
                           const int32_t *starts, const int32_t *uniq, int U, int C)
{
	for (int u = 0; u < U; u++)
		for (int i = starts[u]; i < starts[u + 1]; i++)
			for (int c = 0; c < C; c++)
				dwte[(size_t)uniq[u] * C + c] += dout[(size_t)order[i] * C + c];
	return LLM_OK;
}

int llm_cuda_rmsnorm_fwd(llm_dtype ot, void *out, float *rstd, const float *inp,
                         const float *weight, int N, int C, float eps)
{
	float *y = malloc((size_t)N * C * 4);
	llm_rmsnorm_fwd(y, rstd, inp, weight, N, C, eps);
	fromf(ot, out, y, (size_t)N * C);
	free(y);
	return LLM_OK;
}

int llm_cuda_rmsnorm_bwd(float *dinp, float *dweight, const float *dout, const float *inp,
                         const float *weight, const float *rstd, int N, int C)
{
	llm_rmsnorm_bwd(dinp, dweight, dout, inp, weight, rstd, N, C);
	return LLM_OK;
}

static int rope(llm_dtype t, void *out, const void *inp, const int32_t *pos, int N, int H, int D,
                float theta, int bwd)
{
	size_t n = (size_t)N * H * D;
	float *x = tof(t, inp, n);
	if (bwd)
		llm_rope_bwd(x, x, pos, N, H, D, theta);
	else
		llm_rope_fwd(x, x, pos, N, H, D, theta);
	fromf(t, out, x, n);
	free(x);
	return LLM_OK;
}

int llm_cuda_rope_fwd(llm_dtype t, void *out, const void *inp, const int32_t *pos, int N, int H,
                      int D, float theta)
{
	return rope(t, out, inp, pos, N, H, D, theta, 0);
}

int llm_cuda_rope_bwd(llm_dtype t, void *dinp, const void *dout, const int32_t *pos, int N,
                      int H, int D, float theta)
{
	return rope(t, dinp, dout, pos, N, H, D, theta, 1);
}

int llm_cuda_attention_fwd(llm_dtype t, void *out, float *lse, const void *q, const void *k,
                           const void *v, int B, int Tq, int Tk, int H, int KVH, int D)
{
	size_t nq = (size_t)B * Tq * H * D, nk = (size_t)B * Tk * KVH * D;
	float *fq = tof(t, q, nq), *fk = tof(t, k, nk), *fv = tof(t, v, nk), *o = malloc(nq * 4);
	float *att = malloc((size_t)B * H * Tq * Tk * 4);
	llm_attention_fwd(o, att, fq, fk, fv, B, Tq, Tk, H, KVH, D);
	fromf(t, out, o, nq);
	memset(lse, 0, (size_t)B * H * Tq * 4); /* the emulated backward recomputes att */
	free(fq), free(fk), free(fv), free(o), free(att);
	return LLM_OK;
}

int llm_cuda_attention_bwd(llm_dtype t, void *dq, void *dk, void *dv, float *delta,
                           const void *dout, const void *out, const void *q, const void *k,
                           const void *v, const float *lse, int B, int Tq, int Tk, int H,
                           int KVH, int D)
{
	size_t nq = (size_t)B * Tq * H * D, nk = (size_t)B * Tk * KVH * D;
	float *fq = tof(t, q, nq), *fk = tof(t, k, nk), *fv = tof(t, v, nk), *o = malloc(nq * 4);
	float *att = malloc((size_t)B * H * Tq * Tk * 4), *s = malloc((size_t)Tq * Tk * 4);
	float *g = tof(t, dout, nq), *gq = calloc(nq, 4), *gk = calloc(nk, 4), *gv = calloc(nk, 4);
	llm_attention_fwd(o, att, fq, fk, fv, B, Tq, Tk, H, KVH, D);
	llm_attention_bwd(gq, gk, gv, s, g, fq, fk, fv, att, B, Tq, Tk, H, KVH, D);
	fromf(t, dq, gq, nq), fromf(t, dk, gk, nk), fromf(t, dv, gv, nk);
	free(fq), free(fk), free(fv), free(o), free(att), free(s), free(g), free(gq), free(gk), free(gv);
	return LLM_OK;
}

int llm_cuda_swiglu_fwd(llm_dtype t, void *out, const void *gate, const void *up, size_t n)
{
	float *g = tof(t, gate, n), *u = tof(t, up, n), *o = malloc(n * 4);
	llm_swiglu_fwd(o, g, u, n);
	fromf(t, out, o, n);
	free(g), free(u), free(o);
	return LLM_OK;
}

int llm_cuda_swiglu_bwd(llm_dtype t, void *dgate, void *dup, const void *dout, const void *gate,
                        const void *up, size_t n)
{
	float *g = tof(t, gate, n), *u = tof(t, up, n), *d = tof(t, dout, n);
	float *dg = calloc(n, 4), *du = calloc(n, 4);
	llm_swiglu_bwd(dg, du, d, g, u, n);
	fromf(t, dgate, dg, n), fromf(t, dup, du, n);
	free(g), free(u), free(d), free(dg), free(du);
	return LLM_OK;
}

int llm_cuda_residual_fwd(float *out, const float *a, const float *b, size_t n)
{
	llm_residual_fwd(out, a, b, n);
	return LLM_OK;
}

int llm_cuda_xent(llm_dtype t, float *losses, void *dlogits, const void *logits,
                  const int32_t *targets, const float *dloss, float dloss_all, int N, int V)
{
	size_t n = (size_t)N * V;
	float *x = tof(t, logits, n), *l = malloc((size_t)N * 4), *lse = malloc((size_t)N * 4);
	llm_xent_fwd(l, lse, x, targets, N, V);
	if (losses)
		memcpy(losses, l, (size_t)N * 4);
	if (dlogits) {
		float *dl = malloc((size_t)N * 4);
		for (int i = 0; i < N; i++)
			dl[i] = dloss ? dloss[i] : dloss_all;
		llm_xent_bwd(x, x, lse, targets, dl, N, V);
		fromf(t, dlogits, x, n);
		free(dl);
	}
	free(x), free(l), free(lse);
	return LLM_OK;
}

int llm_cuda_adamw(float *p, llm_dtype lt, void *plow, const float *g, float *m, float *v,
                   size_t n, float gscale, double lr, double weight_decay, double beta1,
                   double beta2, double eps, int64_t t)
{
	llm_optim_config c;
	llm_optim_defaults(&c);
	c.beta1 = beta1, c.beta2 = beta2, c.eps = eps;
	llm_adamw_update(p, g, m, v, n, gscale, lr, weight_decay, &c, t);
	if (plow)
		fromf(lt, plow, p, n);
	return LLM_OK;
}

int llm_cuda_sum_squares(double *out, const float *x, size_t n)
{
	*out += llm_sum_squares(x, n);
	return LLM_OK;
}

int llm_cuda_scale(float *x, size_t n, float s)
{
	for (size_t i = 0; i < n; i++)
		x[i] *= s;
	return LLM_OK;
}

int llm_cuda_cast(llm_dtype dt, void *dst, llm_dtype st, const void *src, size_t n)
{
	float *x = tof(st, src, n);
	fromf(dt, dst, x, n);
	free(x);
	return LLM_OK;
}

/* ---- the checks ------------------------------------------------------------------------ */

enum { STEPS = 20, B = 2, T = 24 };

static llm_model_config config(int tied)
{
	return (llm_model_config){ .vocab_size = 97,
	                           .hidden_size = 32,
	                           .intermediate_size = 80,
	                           .num_hidden_layers = 2,
	                           .num_attention_heads = 4,
	                           .num_key_value_heads = 2,
	                           .max_position_embeddings = 64,
	                           .tie_word_embeddings = tied,
	                           .rope_theta = 10000,
	                           .rms_norm_eps = 1e-5,
	                           .initializer_range = 0.05,
	                           .bos_token_id = -1,
	                           .eos_token_id = -1 };
}

static int32_t xs[STEPS * B * T], ys[STEPS * B * T];

static void make_batches(int V)
{
	llm_rng r;
	llm_rng_seed(&r, 11);
	for (int s = 0; s < STEPS * B; s++) {
		int a = (int)llm_rng_below(&r, (uint64_t)V), d = 1 + (int)llm_rng_below(&r, 5);
		for (int i = 0; i < T; i++) {
			xs[s * T + i] = (a + d * i) % V;
			ys[s * T + i] = i % 11 == 4 ? -1 : (a + d * (i + 1)) % V;
		}
	}
}

static void optim_config(llm_optim_config *c)
{
	llm_optim_defaults(c);
	c->lr = 1e-2;
	c->min_lr = 1e-3;
	c->warmup = 2;
	c->total = STEPS;
}

static int64_t count_targets(int s)
{
	int64_t n = 0;
	for (int i = 0; i < B * T; i++)
		n += ys[s * B * T + i] >= 0;
	return n;
}

static void cpu_run(const llm_model_config *cfg, double *loss, float *grad1)
{
	llm_model *m = llm_model_new(cfg);
	llm_model_init(m, 5);
	size_t n = llm_model_nparams(m);
	float *am = calloc(n, 4), *av = calloc(n, 4), *g = llm_model_grads(m);
	llm_optim_config c;
	optim_config(&c);
	for (int s = 0; s < STEPS; s++) {
		llm_model_zero_grad(m);
		CHECK(llm_model_forward(m, xs + s * B * T, ys + s * B * T, B, T, &loss[s], NULL) == 0);
		llm_model_backward(m, 1.0f / (float)count_targets(s));
		if (s == 0)
			memcpy(grad1, g, n * 4);
		double clipf = llm_clip_factor(sqrt(llm_sum_squares(g, n)), c.clip);
		float *p = llm_model_params(m);
		for (size_t i = 0; i < llm_model_ntensors(m); i++) {
			const llm_tensor *t = llm_model_tensor(m, i);
			llm_adamw_update(p + t->offset, g + t->offset, am + t->offset, av + t->offset,
			                 t->numel, clipf, llm_lr_at(&c, s), t->decay ? c.weight_decay : 0,
			                 &c, s + 1);
		}
	}
	free(am), free(av);
	llm_model_free(m);
}

/* Returns the number of applied steps; the final parameters go to params when not NULL. */
static int gpu_run(const llm_model_config *cfg, int precision, int recompute, double *loss,
                   float *grad1, float *params)
{
	llm_model *m = llm_model_new(cfg);
	llm_model_init(m, 5);
	llm_cuda_options o;
	llm_cuda_options_init(&o);
	o.precision = precision;
	o.recompute = recompute;
	o.deterministic = 1;
	llm_cudamodel *g = NULL;
	int rc = llm_cudamodel_new(&g, m, &o), applied = 0;
	if (!rc)
		rc = llm_cudamodel_set_params(g, llm_model_params(m));
	llm_optim_config c;
	optim_config(&c);
	int64_t t = 0;
	for (int s = 0; s < STEPS && !rc; s++) {
		llm_cuda_stepinfo info;
		if ((rc = llm_cudamodel_zero_grad(g)) ||
		    (rc = llm_cudamodel_train_micro(g, xs + s * B * T, ys + s * B * T, B, T,
		                                    1.0f / (float)count_targets(s), 1, &loss[s], NULL)) ||
		    (s == 0 && grad1 && (rc = llm_cudamodel_get_grads(g, grad1))) ||
		    (rc = llm_cudamodel_step(g, &c, llm_lr_at(&c, s), t + 1, &info)))
			break;
		t += info.applied;
		applied += info.applied;
	}
	if (!rc && params)
		rc = llm_cudamodel_get_params(g, params);
	if (rc)
		printf("#   %s\n", llm_last_error());
	CHECK_EQ_INT(rc, LLM_OK);
	llm_cudamodel_free(g);
	llm_model_free(m);
	return applied;
}

static void check_losses(const char *what, const double *got, const double *want, double tol)
{
	int bad = 0;
	for (int s = 0; s < STEPS; s++)
		if (!(fabs(got[s] - want[s]) <= tol * fabs(want[s]))) {
			if (!bad)
				printf("#   %s: step %d loss %.8f, cpu %.8f (tol %g)\n", what, s + 1, got[s],
				       want[s], tol);
			bad++;
		}
	CHECK_EQ_INT(bad, 0);
}

static void fp32_case(int tied)
{
	llm_model_config cfg = config(tied);
	llm_model *m = llm_model_new(&cfg);
	size_t n = llm_model_nparams(m);
	llm_model_free(m);
	double want[STEPS], got[STEPS];
	float *g0 = malloc(n * 4), *g1 = malloc(n * 4);
	cpu_run(&cfg, want, g0);
	CHECK_EQ_INT(gpu_run(&cfg, LLM_PREC_FP32, LLM_RECOMPUTE_NONE, got, g1, NULL), STEPS);
	double d = 0, r = 0;
	for (size_t i = 0; i < n; i++) {
		d += ((double)g1[i] - g0[i]) * ((double)g1[i] - g0[i]);
		r += (double)g0[i] * g0[i];
	}
	if (!(sqrt(d / r) <= 1e-5))
		printf("#   first gradient differs by %.3g in norm\n", sqrt(d / r));
	CHECK(sqrt(d / r) <= 1e-5);
	check_losses(tied ? "fp32 tied" : "fp32 untied", got, want, 1e-5);
	CHECK(want[STEPS - 1] < want[0] - 0.5); /* it learns: the comparison is not vacuous */
	free(g0), free(g1);
}

static void test_fp32_tied_matches_cpu_model(void) { fp32_case(1); }
static void test_fp32_untied_matches_cpu_model(void) { fp32_case(0); }

static void test_recompute_is_exact(void)
{
	llm_model_config cfg = config(0);
	double a[STEPS], b[STEPS], c[STEPS];
	gpu_run(&cfg, LLM_PREC_BF16, LLM_RECOMPUTE_NONE, a, NULL, NULL);
	gpu_run(&cfg, LLM_PREC_BF16, LLM_RECOMPUTE_FFN, b, NULL, NULL);
	gpu_run(&cfg, LLM_PREC_BF16, LLM_RECOMPUTE_ALL, c, NULL, NULL);
	CHECK(memcmp(a, b, sizeof a) == 0);
	CHECK(memcmp(a, c, sizeof a) == 0);
}

static void test_low_precision_trains(void)
{
	llm_model_config cfg = config(1);
	double want[STEPS], got[STEPS];
	float *g0 = malloc(llm_model_config_params(&cfg) * 4);
	cpu_run(&cfg, want, g0);
	free(g0);
	CHECK_EQ_INT(gpu_run(&cfg, LLM_PREC_BF16, LLM_RECOMPUTE_NONE, got, NULL, NULL), STEPS);
	check_losses("bf16", got, want, 3e-2);
	static const int precs[] = { LLM_PREC_FP16, LLM_PREC_MIXED };
	for (int i = 0; i < 2; i++) {
		int applied = gpu_run(&cfg, precs[i], LLM_RECOMPUTE_NONE, got, NULL, NULL);
		int finite = 1;
		for (int s = 0; s < STEPS; s++)
			finite &= isfinite(got[s]);
		printf("#   %s: %d of %d steps applied, loss %.4f -> %.4f (cpu %.4f -> %.4f)\n",
		       llm_precision_name(precs[i]), applied, STEPS, got[0], got[STEPS - 1], want[0],
		       want[STEPS - 1]);
		CHECK(finite && applied >= STEPS - 4);
		CHECK(got[STEPS - 1] < got[0] - 0.5);
	}
}

/* An fp16 step whose gradients overflow is skipped: parameters and moments unchanged, the
 * scale halves; the next clean step applies. */
static void test_fp16_overflow_skips_the_step(void)
{
	llm_model_config cfg = config(1);
	llm_model *m = llm_model_new(&cfg);
	llm_model_init(m, 5);
	size_t n = llm_model_nparams(m);
	llm_cuda_options o;
	llm_cuda_options_init(&o);
	o.precision = LLM_PREC_FP16;
	llm_cudamodel *g;
	CHECK_EQ_INT(llm_cudamodel_new(&g, m, &o), LLM_OK);
	CHECK_EQ_INT(llm_cudamodel_set_params(g, llm_model_params(m)), LLM_OK);
	llm_lossscale *ls = llm_cudamodel_lossscale(g);
	CHECK(ls->enabled && ls->scale == 65536.0);
	ls->scale = 1e12; /* far past fp16's 65504: the backward's values overflow */
	llm_optim_config c;
	optim_config(&c);
	llm_cuda_stepinfo info;
	double loss;
	float *before = malloc(n * 4), *after = malloc(n * 4);
	CHECK_EQ_INT(llm_cudamodel_get_params(g, before), LLM_OK);
	CHECK_EQ_INT(llm_cudamodel_zero_grad(g), LLM_OK);
	CHECK_EQ_INT(llm_cudamodel_train_micro(g, xs, ys, B, T, 1.0f / (float)count_targets(0), 1,
	                                       &loss, NULL), LLM_OK);
	CHECK_EQ_INT(llm_cudamodel_step(g, &c, 1e-2, 1, &info), LLM_OK);
	CHECK_EQ_INT(info.applied, 0);
	CHECK(info.loss_scale == 1e12 && ls->scale == 5e11 && ls->overflows == 1);
	CHECK_EQ_INT(llm_cudamodel_get_params(g, after), LLM_OK);
	CHECK(memcmp(before, after, n * 4) == 0);
	ls->scale = 1024;
	CHECK_EQ_INT(llm_cudamodel_zero_grad(g), LLM_OK);
	CHECK_EQ_INT(llm_cudamodel_train_micro(g, xs, ys, B, T, 1.0f / (float)count_targets(0), 1,
	                                       &loss, NULL), LLM_OK);
	CHECK_EQ_INT(llm_cudamodel_step(g, &c, 1e-2, 1, &info), LLM_OK);
	CHECK_EQ_INT(info.applied, 1);
	CHECK(isfinite(info.grad_norm) && info.grad_norm > 0);
	CHECK_EQ_INT(llm_cudamodel_get_params(g, after), LLM_OK);
	CHECK(memcmp(before, after, n * 4) != 0);
	free(before), free(after);
	llm_cudamodel_free(g);
	llm_model_free(m);
}

/* The monitoring helpers against the CPU: per-tensor gradient norms (their sum is the global
 * norm's square, and they are unscaled under fp16 loss scaling), and the parameter norm. */
static void test_norms(void)
{
	llm_model_config cfg = config(0);
	llm_model *m = llm_model_new(&cfg);
	llm_model_init(m, 5);
	size_t n = llm_model_nparams(m), nt = llm_model_ntensors(m);
	llm_model_zero_grad(m);
	CHECK_EQ_INT(llm_model_forward(m, xs, ys, B, T, NULL, NULL), LLM_OK);
	llm_model_backward(m, 1.0f / (float)count_targets(0));
	static const int precs[] = { LLM_PREC_FP32, LLM_PREC_FP16 };
	for (int k = 0; k < 2; k++) {
		llm_cuda_options o;
		llm_cuda_options_init(&o);
		o.precision = precs[k];
		llm_cudamodel *g;
		CHECK_EQ_INT(llm_cudamodel_new(&g, m, &o), LLM_OK);
		CHECK_EQ_INT(llm_cudamodel_set_params(g, llm_model_params(m)), LLM_OK);
		double pn, gn, *ss = malloc(nt * sizeof *ss), sum = 0;
		int finite;
		CHECK_EQ_INT(llm_cudamodel_param_norm(g, &pn), LLM_OK);
		CHECK_NEAR(pn, sqrt(llm_sum_squares(llm_model_params(m), n)), 1e-9 * pn);
		CHECK_EQ_INT(llm_cudamodel_zero_grad(g), LLM_OK);
		CHECK_EQ_INT(llm_cudamodel_train_micro(g, xs, ys, B, T, 1.0f / (float)count_targets(0), 1,
		                                       NULL, NULL), LLM_OK);
		CHECK_EQ_INT(llm_cudamodel_tensor_sumsq(g, ss), LLM_OK);
		CHECK_EQ_INT(llm_cudamodel_grad_norm(g, &gn, &finite), LLM_OK);
		CHECK(finite);
		double tol = precs[k] == LLM_PREC_FP32 ? 1e-5 : 3e-2;
		for (size_t i = 0; i < nt; i++) {
			const llm_tensor *t = llm_model_tensor(m, i);
			double want = llm_sum_squares(llm_model_grads(m) + t->offset, t->numel);
			CHECK_NEAR(ss[i], want, 2 * tol * want);
			sum += ss[i];
		}
		CHECK_NEAR(gn * gn, sum, 1e-9 * sum);
		CHECK_NEAR(gn, sqrt(llm_sum_squares(llm_model_grads(m), n)), tol * gn);
		free(ss);
		llm_cudamodel_free(g);
	}
	llm_model_free(m);
}

static void test_eval_and_state_round_trip(void)
{
	llm_model_config cfg = config(0);
	llm_model *m = llm_model_new(&cfg);
	llm_model_init(m, 5);
	size_t n = llm_model_nparams(m);
	llm_cuda_options o;
	llm_cuda_options_init(&o);
	o.precision = LLM_PREC_FP32;
	llm_cudamodel *g;
	CHECK_EQ_INT(llm_cudamodel_new(&g, m, &o), LLM_OK);
	CHECK_EQ_INT(llm_cudamodel_set_params(g, llm_model_params(m)), LLM_OK);
	double lc, lg, peak = -1;
	CHECK_STR(llm_cudamodel_device(g, &peak), "host emulation");
	CHECK(peak == 0);
	int64_t nc, ng;
	CHECK_EQ_INT(llm_model_forward(m, xs, ys, B, T, &lc, &nc), LLM_OK);
	CHECK_EQ_INT(llm_cudamodel_eval(g, xs, ys, B, T, &lg, &ng), LLM_OK);
	CHECK_EQ_INT(ng, nc);
	CHECK_NEAR(lg, lc, 1e-5 * lc);
	float *a = malloc(n * 4), *b = malloc(n * 4), *c = malloc(n * 4), *d = malloc(n * 4);
	for (size_t i = 0; i < n; i++)
		a[i] = (float)i, b[i] = (float)(n - i);
	CHECK_EQ_INT(llm_cudamodel_set_optim(g, a, b), LLM_OK);
	CHECK_EQ_INT(llm_cudamodel_get_optim(g, c, d), LLM_OK);
	CHECK(memcmp(a, c, n * 4) == 0 && memcmp(b, d, n * 4) == 0);
	CHECK_EQ_INT(llm_cudamodel_get_params(g, c), LLM_OK);
	CHECK(memcmp(c, llm_model_params(m), n * 4) == 0);
	/* Bad tokens are refused with the position, as the CPU model does. */
	int32_t bad[B * T];
	memcpy(bad, xs, sizeof bad);
	bad[7] = cfg.vocab_size;
	CHECK_EQ_INT(llm_cudamodel_eval(g, bad, ys, B, T, &lg, &ng), LLM_EINVAL);
	CHECK(strstr(llm_last_error(), "position 7") != NULL);
	free(a), free(b), free(c), free(d);
	llm_cudamodel_free(g);
	llm_model_free(m);
}

/* ---- evaluation on the GPU path ---------------------------------------------------------- */

static llm_cudamodel *inference_model(llm_model *m, int precision)
{
	llm_cuda_options o;
	llm_cuda_options_init(&o);
	o.precision = precision;
	o.inference = 1;
	llm_cudamodel *g = NULL;
	CHECK_EQ_INT(llm_cudamodel_new(&g, m, &o), LLM_OK);
	if (g)
		CHECK_EQ_INT(llm_cudamodel_set_params(g, llm_model_params(m)), LLM_OK);
	return g;
}

/* -ln p(target) per position from the CPU forward's logits, in double. */
static void cpu_token_losses(llm_model *m, const int32_t *x, const int32_t *y, int b, int t,
                             double *out)
{
	int V = llm_model_get_config(m)->vocab_size;
	CHECK_EQ_INT(llm_model_forward(m, x, NULL, b, t, NULL, NULL), LLM_OK);
	const float *lg = llm_model_logits(m);
	for (int r = 0; r < b * t; r++) {
		const float *row = lg + (size_t)r * V;
		double mx = row[0], z = 0;
		for (int v = 1; v < V; v++)
			mx = row[v] > mx ? row[v] : mx;
		for (int v = 0; v < V; v++)
			z += exp(row[v] - mx);
		out[r] = y[r] < 0 ? 0 : mx + log(z) - row[y[r]];
	}
}

/* An inference model: per-token losses for batches of several shapes within and beyond the
 * first one's size (the positions follow each shape's T), no training memory, and the
 * training entry points refused. */
static void test_inference_token_losses(void)
{
	llm_model_config cfg = config(0);
	llm_model *m = llm_model_new(&cfg);
	llm_model_init(m, 5);
	llm_cudamodel *g = inference_model(m, LLM_PREC_FP32);
	if (!g) {
		llm_model_free(m);
		return;
	}
	static const int shapes[][2] = { { 2, 24 }, { 3, 16 }, { 1, 7 }, { 2, 24 }, { 4, 24 }, { 5, 3 } };
	float got[4 * 24];
	double want[4 * 24];
	for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
		int b = shapes[k][0], t = shapes[k][1], bad = 0;
		memset(got, 0xff, sizeof got);
		CHECK_EQ_INT(llm_cudamodel_token_losses(g, xs, ys, b, t, got), LLM_OK);
		cpu_token_losses(m, xs, ys, b, t, want);
		for (int r = 0; r < b * t; r++)
			if (!(fabs(got[r] - want[r]) <= 1e-5 * fabs(want[r]) + 1e-6)) {
				if (!bad)
					printf("#   B=%d T=%d: position %d loss %.7f, cpu %.7f\n", b, t, r,
					       (double)got[r], want[r]);
				bad++;
			}
		CHECK_EQ_INT(bad, 0);
	}
	/* Training a model opened for inference is refused, not a crash. */
	CHECK_EQ_INT(llm_cudamodel_zero_grad(g), LLM_EINVAL);
	CHECK(strstr(llm_last_error(), "inference") != NULL);
	CHECK_EQ_INT(llm_cudamodel_train_micro(g, xs, ys, B, T, 1, 1, NULL, NULL), LLM_EINVAL);
	llm_optim_config c;
	optim_config(&c);
	llm_cuda_stepinfo info;
	CHECK_EQ_INT(llm_cudamodel_step(g, &c, 1e-3, 1, &info), LLM_EINVAL);
	/* The same batch needs less memory than a training model's. */
	llm_cuda_options o;
	llm_cuda_options_init(&o);
	o.precision = LLM_PREC_FP32;
	llm_cudamodel *tr;
	CHECK_EQ_INT(llm_cudamodel_new(&tr, m, &o), LLM_OK);
	CHECK_EQ_INT(llm_cudamodel_set_params(tr, llm_model_params(m)), LLM_OK);
	double l1, l2;
	CHECK_EQ_INT(llm_cudamodel_eval(tr, xs, ys, 4, 24, &l1, NULL), LLM_OK);
	CHECK_EQ_INT(llm_cudamodel_eval(g, xs, ys, 4, 24, &l2, NULL), LLM_OK);
	CHECK(l1 == l2);
	printf("#   memory for 4 x 24 tokens: training %zu bytes, inference %zu\n",
	       llm_cudamodel_memory(tr), llm_cudamodel_memory(g));
	CHECK(llm_cudamodel_memory(g) < llm_cudamodel_memory(tr) / 2);
	llm_cudamodel_free(tr);
	llm_cudamodel_free(g);
	llm_model_free(m);
}

static llm_bpe *gpt2(void)
{
	llm_bpe *bpe = NULL;
	if (llm_bpe_load(&bpe, unit_path("tests/data/tokenize/hf_gpt2/tokenizer.json.zst"), NULL,
	                 NULL, NULL) != LLM_OK)
		printf("# %s\n", llm_last_error());
	return bpe;
}

static const char *const eval_texts[][2] = {
	{ "web", "The evaluator cuts each domain's stream into windows of T + 1 tokens." },
	{ "code", "int main(void) { return 0; }\n" },
	{ "web", "Bits per byte: the same text, any tokenizer. Ünïcödé counts bytes." },
	{ "wiki", "A short one." },
	{ "code", "for (size_t i = 0; i < n; i++) s += x[i] * x[i];" },
};

/* The same documents and windows through two evaluators, on the CPU and on the GPU path. */
static void fill_evaluator(llm_evaluator *ev, llm_bpe *bpe)
{
	llm_bpe_enc *enc = llm_bpe_enc_new(bpe);
	llm_ids ids;
	llm_ids_init(&ids);
	for (size_t i = 0; i < sizeof eval_texts / sizeof *eval_texts; i++) {
		ids.n = 0;
		const char *t = eval_texts[i][1];
		CHECK_EQ_INT(llm_bpe_encode(enc, t, strlen(t), LLM_BPE_SPECIAL_IGNORE, &ids), LLM_OK);
		llm_ids_push(&ids, (uint32_t)llm_bpe_eos(bpe));
		CHECK_EQ_INT(llm_eval_doc(ev, eval_texts[i][0], ids.v, ids.n), LLM_OK);
	}
	/* A full and a short window given directly, as llm-eval --sampled does. */
	int32_t x[16], y[16];
	for (int i = 0; i < 16; i++) {
		x[i] = (int32_t)ids.v[i % ids.n];
		y[i] = i == 3 ? -1 : (int32_t)ids.v[(i + 1) % ids.n];
	}
	CHECK_EQ_INT(llm_eval_window(ev, "sampled", x, y, 16), LLM_OK);
	CHECK_EQ_INT(llm_eval_window(ev, "sampled", x, y, 9), LLM_OK);
	CHECK_EQ_INT(llm_eval_flush(ev), LLM_OK);
	llm_ids_release(&ids);
	llm_bpe_enc_free(enc);
}

static void test_evaluator_on_the_gpu_path(void)
{
	llm_bpe *bpe = gpt2();
	CHECK(bpe);
	if (!bpe)
		return;
	llm_model_config cfg = config(0);
	cfg.vocab_size = (int)llm_bpe_vocab_size(bpe);
	cfg.initializer_range = 0.5; /* far from uniform predictions, so that errors show */
	llm_model *m = llm_model_new(&cfg);
	llm_model_init(m, 7);
	llm_evaluator *cpu = llm_evaluator_new(m, 16, 3, bpe, llm_bpe_eos(bpe));
	fill_evaluator(cpu, bpe);
	static const int precs[] = { LLM_PREC_FP32, LLM_PREC_BF16 };
	for (int k = 0; k < 2; k++) {
		double tol = precs[k] == LLM_PREC_FP32 ? 1e-5 : 2e-2;
		llm_cudamodel *g = inference_model(m, precs[k]);
		if (!g)
			break;
		llm_evaluator *gpu = llm_evaluator_new(m, 16, 3, bpe, llm_bpe_eos(bpe));
		llm_evaluator_set_scorer(gpu, llm_cudamodel_token_loss_fn, g);
		fill_evaluator(gpu, bpe);
		CHECK_EQ_INT(llm_eval_ndomains(gpu), llm_eval_ndomains(cpu));
		for (size_t d = 0; d < llm_eval_ndomains(cpu) && d < llm_eval_ndomains(gpu); d++) {
			const llm_eval_sums *a = llm_eval_domain_sums(cpu, d), *b = llm_eval_domain_sums(gpu, d);
			CHECK_STR(llm_eval_domain_name(gpu, d), llm_eval_domain_name(cpu, d));
			CHECK_EQ_U64(b->docs, a->docs);
			CHECK_EQ_U64(b->tokens, a->tokens);
			CHECK_EQ_U64(b->text_tokens, a->text_tokens);
			CHECK_EQ_U64(b->bytes, a->bytes);
			CHECK_NEAR(b->nats, a->nats, tol * a->nats);
			CHECK_NEAR(b->text_nats, a->text_nats, tol * a->text_nats);
		}
		llm_eval_sums ta, tb;
		llm_eval_total(cpu, &ta);
		llm_eval_total(gpu, &tb);
		CHECK(ta.bytes > 0 && ta.tokens > 40);
		CHECK_NEAR(llm_eval_loss(&tb), llm_eval_loss(&ta), tol * llm_eval_loss(&ta));
		CHECK_NEAR(llm_eval_bits_per_byte(&tb), llm_eval_bits_per_byte(&ta),
		           tol * llm_eval_bits_per_byte(&ta));
		printf("#   %s: loss %.6f (cpu %.6f), bits/byte %.6f (cpu %.6f)\n",
		       llm_precision_name(precs[k]), llm_eval_loss(&tb), llm_eval_loss(&ta),
		       llm_eval_bits_per_byte(&tb), llm_eval_bits_per_byte(&ta));
		llm_evaluator_free(gpu);
		llm_cudamodel_free(g);
	}
	/* Multiple choice: the same log-likelihoods and picks. */
	const char *line = "{\"context\": \"The capital of France is \", \"choices\": "
	                   "[\"Paris\", \"a large potato\", \"Rome, of course\"], \"gold\": 0}";
	llm_choice_item it;
	CHECK_EQ_INT(llm_choice_parse(&it, line, strlen(line)), LLM_OK);
	llm_chooser *cc = llm_chooser_new(m, bpe, llm_bpe_eos(bpe), " ");
	llm_chooser *gc = llm_chooser_new(m, bpe, llm_bpe_eos(bpe), " ");
	llm_cudamodel *g = inference_model(m, LLM_PREC_FP32);
	if (g) {
		llm_chooser_set_scorer(gc, llm_cudamodel_token_loss_fn, g);
		double lc[3], lg[3];
		size_t pc, pcn, pg, pgn;
		CHECK_EQ_INT(llm_chooser_score(cc, &it, lc, &pc, &pcn), LLM_OK);
		CHECK_EQ_INT(llm_chooser_score(gc, &it, lg, &pg, &pgn), LLM_OK);
		for (int i = 0; i < 3; i++)
			CHECK_NEAR(lg[i], lc[i], 1e-5 * fabs(lc[i]));
		CHECK(pg == pc && pgn == pcn);
		llm_cudamodel_free(g);
	}
	llm_chooser_free(cc);
	llm_chooser_free(gc);
	llm_choice_item_release(&it);
	llm_evaluator_free(cpu);
	llm_model_free(m);
	llm_bpe_free(bpe);
}

/* ---- the trainer on the "device" ------------------------------------------------------ */

typedef struct {
	double loss[12];
	int n;
} step_losses;

static void keep_loss(void *ctx, const llm_trainer *t, const llm_train_step *s)
{
	step_losses *l = ctx;
	if (l->n < 12)
		l->loss[l->n++] = s->loss;
}

static int smoke_on(int device, int precision, const char *dir, step_losses *l)
{
	llm_train_options o;
	llm_train_options_init(&o);
	o.run_dir = dir;
	o.backend.device = device;
	o.backend.precision = precision;
	llm_buf report = LLM_BUF_INIT;
	int same = 0, rc = llm_train_smoke(&o, keep_loss, l, &report, &same);
	if (rc)
		printf("#   %s\n", llm_last_error());
	CHECK_EQ_INT(rc, LLM_OK);
	llm_buf_release(&report);
	return same;
}

/* The whole training loop of llm-train --device cuda: steps, evaluation, checkpoints (the
 * device copy downloaded), resume (uploaded), against the CPU trainer. */
static void test_trainer_on_the_gpu_path(void)
{
	char root[] = "/tmp/test_cuda_host.XXXXXX", dir[64];
	if (!mkdtemp(root)) {
		CHECK(0);
		return;
	}
	int verbosity = llm_verbosity();
	llm_set_verbosity(0);
	step_losses cpu = { { 0 }, 0 }, gpu = { { 0 }, 0 }, bf16 = { { 0 }, 0 };
	snprintf(dir, sizeof dir, "%s/cpu", root);
	CHECK(smoke_on(LLM_DEVICE_CPU, LLM_PREC_FP32, dir, &cpu));
	snprintf(dir, sizeof dir, "%s/gpu", root);
	CHECK(smoke_on(LLM_DEVICE_CUDA, LLM_PREC_FP32, dir, &gpu)); /* resumed bit for bit */
	snprintf(dir, sizeof dir, "%s/bf16", root);
	CHECK(smoke_on(LLM_DEVICE_CUDA, LLM_PREC_BF16, dir, &bf16));
	CHECK_EQ_INT(cpu.n, 9);
	CHECK_EQ_INT(gpu.n, 9);
	for (int i = 0; i < gpu.n && i < cpu.n; i++) {
		CHECK_NEAR(gpu.loss[i], cpu.loss[i], 1e-5 * cpu.loss[i]);
		CHECK_NEAR(bf16.loss[i], cpu.loss[i], 3e-2 * cpu.loss[i]);
	}
	CHECK(cpu.loss[5] < cpu.loss[0]); /* it learns: the comparison is not vacuous */
	llm_set_verbosity(verbosity);
	char cmd[96];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	CHECK_EQ_INT(system(cmd), 0);
}

int main(void)
{
	make_batches(config(0).vocab_size);
	RUN(test_fp32_tied_matches_cpu_model);
	RUN(test_fp32_untied_matches_cpu_model);
	RUN(test_recompute_is_exact);
	RUN(test_low_precision_trains);
	RUN(test_fp16_overflow_skips_the_step);
	RUN(test_norms);
	RUN(test_eval_and_state_round_trip);
	RUN(test_inference_token_losses);
	RUN(test_evaluator_on_the_gpu_path);
	RUN(test_trainer_on_the_gpu_path);
	return unit_done();
}

#else /* built without CUDA: cudamodel.c is its "no CUDA" branch, nothing to emulate */

static void test_cuda_host(void)
{
	llm_cuda_options o;
	llm_cuda_options_init(&o);
	llm_model_config c = { .vocab_size = 16 };
	llm_model_preset(&c, "tiny");
	llm_model *m = llm_model_new(&c);
	llm_cudamodel *g;
	CHECK_EQ_INT(llm_cudamodel_new(&g, m, &o), LLM_EUNSUPPORTED);
	CHECK(g == NULL && strstr(llm_last_error(), "without CUDA"));
	llm_model_free(m);
}

int main(void)
{
	RUN(test_cuda_host);
	return unit_done();
}

#endif
