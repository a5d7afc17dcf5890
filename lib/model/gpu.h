/*
 * gpu.h — the CUDA backend: device selection, and the C interface of the kernels in kernels/.
 * (Not "cuda.h": with -Ilib that name would shadow the toolkit's own header.)
 *
 * Two layers:
 *
 * 1. Always available (lib/gpu.c, plain C): parsing of --device, --precision and --recompute,
 *    and llm_cuda_available(), which says whether this build has CUDA and a usable GPU. A build
 *    without nvcc answers "no GPU" and every GPU entry point (cudamodel.h) fails with
 *    LLM_EUNSUPPORTED, so tools compile and run the same on every machine.
 *
 * 2. With LLM_HAVE_CUDA only: one launcher per CPU op of ops.h / optim.h, implemented in
 *    kernels/NAME.cu. Pointers are device pointers. Each launcher enqueues its work on the
 *    backend's stream (llm_cuda_stream), checks the launch (cudaGetLastError) and returns
 *    LLM_OK or a negative LLM_E* status, with the detail (the CUDA or cuBLAS error, the call
 *    and its source line) in llm_cuda_detail(); llm_cuda_fail() turns that into llm_fail().
 *    The shapes and the math are those of the CPU function of the same name, with these
 *    differences, all stated below: activations may be bf16 or fp16 (dtype arguments; every
 *    sum and every transcendental is computed in fp32), and some backward launchers overwrite
 *    their outputs instead of adding (the model never needs the sum there, and overwriting
 *    saves a memset per use).
 *
 * Determinism: no kernel here uses atomics or a launch-dependent reduction order, so the same
 * inputs on the same GPU give the same bits. In deterministic mode (llm_cuda_set_deterministic)
 * cuBLASLt is also kept from split-K reductions, and every launch is followed by a stream
 * synchronisation so that a faulting kernel is named by its own launcher.
 *
 * Threads: one host thread drives the backend (the stream, the cuBLASLt handle, the scratch
 * buffer are per process).
 */
#ifndef LLM_GPU_H
#define LLM_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* --device cpu|cuda|auto. */
enum { LLM_DEVICE_CPU, LLM_DEVICE_CUDA, LLM_DEVICE_AUTO };
/* --precision fp32|bf16|fp16|mixed (mixed: embeddings and LM head bf16, blocks fp16). */
enum { LLM_PREC_FP32, LLM_PREC_BF16, LLM_PREC_FP16, LLM_PREC_MIXED };
/* --recompute none|ffn|all: activations recomputed in the backward instead of kept. */
enum { LLM_RECOMPUTE_NONE, LLM_RECOMPUTE_FFN, LLM_RECOMPUTE_ALL };

/* Parse an option value; LLM_EINVAL naming the accepted values otherwise. */
int llm_device_parse(const char *s, int *device);
int llm_precision_parse(const char *s, int *precision);
int llm_recompute_parse(const char *s, int *recompute);
const char *llm_precision_name(int precision);
const char *llm_recompute_name(int recompute);

/* 1 when built with CUDA and at least one GPU answers; 0 otherwise (no driver, no device). */
int llm_cuda_available(void);
/* LLM_DEVICE_AUTO becomes CUDA when available, CPU otherwise; CUDA without a GPU (or a build
 * without CUDA) is LLM_EUNSUPPORTED with the reason. */
int llm_device_resolve(int requested, int *device);

/* Element types of activations and compute copies of weights. */
typedef enum { LLM_DT_F32, LLM_DT_BF16, LLM_DT_F16 } llm_dtype;
size_t llm_dtype_size(llm_dtype t);
const char *llm_dtype_name(llm_dtype t);

#ifdef LLM_HAVE_CUDA

/* ---- runtime (kernels/runtime.cu) ------------------------------------------------------ */

/* Select a device, create the stream and the cuBLASLt handle. Idempotent for one device. */
int llm_cuda_init(int device);
/* Release the stream, handle and scratch (before the process exits or changes device). */
void llm_cuda_shutdown(void);
/* Number of devices (0 when no driver or no GPU; never fails). */
int llm_cuda_device_count(void);
/* "NVIDIA H200", its SM count and its bf16 dense tensor-core peak in FLOP/s (0 when unknown),
 * for MFU. */
int llm_cuda_device_info(char *name, size_t cap, int *sms, double *peak_bf16);
/* The stream every launcher uses (a cudaStream_t). */
void *llm_cuda_stream(void);
void llm_cuda_set_deterministic(int on);
int llm_cuda_deterministic(void);
/* Detail of the last failing launcher on this thread. */
const char *llm_cuda_detail(void);
/* llm_fail(status, detail): for "if ((rc = llm_cuda_x(...))) return llm_cuda_fail(rc)". */
int llm_cuda_fail(int status);
int llm_cuda_sync(void);
int llm_cuda_malloc(void **p, size_t bytes);
void llm_cuda_free(void *p);
int llm_cuda_memset(void *p, int byte, size_t bytes);
int llm_cuda_to_device(void *dst, const void *src, size_t bytes);   /* synchronous */
int llm_cuda_to_host(void *dst, const void *src, size_t bytes);     /* synchronous */
/* A device buffer of at least `bytes` shared by launchers that need temporary space (grows;
 * valid until the next call). */
int llm_cuda_scratch(void **p, size_t bytes);

/* ---- matrix products (kernels/matmul.cu, cuBLASLt) ------------------------------------- */

/*
 * D[M,N] = alpha * op(A) op(B) + beta * C, row-major as llm_gemm, through cuBLASLt with fp32
 * accumulation. A and B have type ab; C and D type cd (ab or F32: a bf16 product may add into
 * an fp32 residual or gradient). C may equal D; C may be NULL when beta is 0. fp32 runs true
 * fp32 (no TF32), so it matches the CPU to fp32 rounding.
 */
int llm_cuda_gemm(int trans_a, int trans_b, int M, int N, int K, float alpha, llm_dtype ab,
                  const void *A, int lda, const void *B, int ldb, float beta, llm_dtype cd,
                  const void *C, int ldc, void *D, int ldd);
/* llm_matmul_fwd: out[N,M] (type ot) = inp[N,K] w[M,K]^T (both type t) + beta * out. */
int llm_cuda_matmul_fwd(llm_dtype t, llm_dtype ot, void *out, float beta, const void *inp,
                        const void *w, int N, int K, int M);
/* llm_matmul_bwd: dinp[N,K] (type dt_in) = dout w + beta_in * dinp; dw[M,K] (fp32) +=
 * dout^T inp. Either output may be NULL. */
int llm_cuda_matmul_bwd(llm_dtype t, llm_dtype dt_in, void *dinp, float beta_in, float *dw,
                        const void *dout, const void *inp, const void *w, int N, int K, int M);

/* ---- ops (one kernels/NAME.cu each) ---------------------------------------------------- */

/* llm_embedding_fwd, fp32 table and output (the residual stream is fp32). */
int llm_cuda_embedding_fwd(float *out, const int32_t *tokens, const float *wte, int N, int C);
/* llm_embedding_bwd (adds), deterministic: rows grouped by token on the host first
 * (llm_gpuplan_embed in gpuplan.h); order[N], starts[U+1] and uniq[U] are that plan on the
 * device. */
int llm_cuda_embedding_bwd(float *dwte, const float *dout, const int32_t *order,
                           const int32_t *starts, const int32_t *uniq, int U, int C);

/* llm_rmsnorm_fwd with an fp32 input and weight and an output of type ot. */
int llm_cuda_rmsnorm_fwd(llm_dtype ot, void *out, float *rstd, const float *inp,
                         const float *weight, int N, int C, float eps);
/* llm_rmsnorm_bwd, all fp32, adds into dinp and dweight. */
int llm_cuda_rmsnorm_bwd(float *dinp, float *dweight, const float *dout, const float *inp,
                         const float *weight, const float *rstd, int N, int C);

/* llm_rope_fwd / llm_rope_bwd; pos on the device; in place allowed; bwd overwrites dinp. */
int llm_cuda_rope_fwd(llm_dtype t, void *out, const void *inp, const int32_t *pos, int N, int H,
                      int D, float theta);
int llm_cuda_rope_bwd(llm_dtype t, void *dinp, const void *dout, const int32_t *pos, int N,
                      int H, int D, float theta);

/*
 * llm_attention_fwd, fused (flash-attention tiling: no Tq x Tk matrix in memory). Instead of
 * the probabilities it keeps lse[B, H, Tq], each query row's log-sum-exp of the scaled scores,
 * from which the backward recomputes them. D <= 128 (LLM_EUNSUPPORTED otherwise).
 */
int llm_cuda_attention_fwd(llm_dtype t, void *out, float *lse, const void *q, const void *k,
                           const void *v, int B, int Tq, int Tk, int H, int KVH, int D);
/* llm_attention_bwd from out and lse; dq, dk, dv overwritten; delta is B*H*Tq floats of
 * scratch. */
int llm_cuda_attention_bwd(llm_dtype t, void *dq, void *dk, void *dv, float *delta,
                           const void *dout, const void *out, const void *q, const void *k,
                           const void *v, const float *lse, int B, int Tq, int Tk, int H,
                           int KVH, int D);

/* llm_swiglu_fwd; llm_swiglu_bwd overwriting dgate and dup. */
int llm_cuda_swiglu_fwd(llm_dtype t, void *out, const void *gate, const void *up, size_t n);
int llm_cuda_swiglu_bwd(llm_dtype t, void *dgate, void *dup, const void *dout, const void *gate,
                        const void *up, size_t n);

/* llm_residual_fwd (fp32). */
int llm_cuda_residual_fwd(float *out, const float *a, const float *b, size_t n);

/*
 * Softmax cross-entropy over logits[N,V] of type t, fused: losses (fp32, may be NULL) as
 * llm_xent_fwd, and when dlogits is not NULL the gradient as llm_xent_bwd (overwritten; may
 * alias logits), with dloss[n] from the array dloss or, when dloss is NULL, the constant
 * dloss_all. One pass reads the row for the log-sum-exp, a second writes the gradient.
 */
int llm_cuda_xent(llm_dtype t, float *losses, void *dlogits, const void *logits,
                  const int32_t *targets, const float *dloss, float dloss_all, int N, int V);

/* ---- optimizer, norms, loss scaling, casts --------------------------------------------- */

/*
 * llm_adamw_update over n elements (same float operations). When plow is not NULL the new
 * parameters are also written there in type lt (the compute copy of a bf16/fp16 run).
 */
int llm_cuda_adamw(float *p, llm_dtype lt, void *plow, const float *g, float *m, float *v,
                   size_t n, float gscale, double lr, double weight_decay, double beta1,
                   double beta2, double eps, int64_t t);
/* *out (a device double) += sum of x[i]^2, in double, deterministic order. */
int llm_cuda_sum_squares(double *out, const float *x, size_t n);
/* x[i] *= s (unscaling or clipping gradients in place). */
int llm_cuda_scale(float *x, size_t n, float s);
/* dst[i] = (dt) src[i]; round to nearest even; dst and src of different types. */
int llm_cuda_cast(llm_dtype dt, void *dst, llm_dtype st, const void *src, size_t n);

#endif /* LLM_HAVE_CUDA */

#ifdef __cplusplus
}
#endif

#endif
