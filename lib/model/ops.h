/*
 * ops.h — the CPU reference of every op of the LLaMA-style model, forward and backward, fp32.
 *
 * These functions are the oracle for the CUDA kernels in kernels/ (same names, same math, same
 * shapes): each takes plain float arrays in row-major order and the sizes that describe them.
 * Shapes use N for rows (batch x time, B*T), C for the model width, V for the vocabulary,
 * H / KVH for query / key-value heads and D for the head width.
 *
 * Gradient convention: every *_bwd function ADDS its input gradients into the d* arrays it is
 * given (so residual branches and shared weights sum without extra buffers); the caller zeroes
 * them. The one exception is llm_xent_bwd, which starts the chain and overwrites dlogits.
 * Unless stated, outputs must not alias inputs.
 *
 * Matrix products go through llm_gemm: cblas_sgemm when built with LLM_HAVE_BLAS (OpenBLAS),
 * portable loops otherwise. With llm_ops_set_threads(n > 1) the products, attention and the
 * row-wise loops are split over n threads of one pool (core/pool.h) and OpenBLAS runs on one:
 * every output element is computed by the same operations in the same order as on one thread,
 * so results do not depend on the thread count.
 *
 * Thread safety: all functions are pure on their arguments and may run concurrently; the pool
 * serves one caller at a time, and a call that finds it busy runs on its own thread.
 */
#ifndef LLM_OPS_H
#define LLM_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "core/pool.h"

/*
 * C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C, row-major, with leading dimensions
 * (row strides) lda, ldb, ldc. op(X) is X, or X transposed when trans_x is nonzero
 * (then X is stored [K,M] / [N,K]). beta 0 ignores the old content of C (NaN included).
 */
void llm_gemm(int trans_a, int trans_b, int M, int N, int K, float alpha, const float *A, int lda,
              const float *B, int ldb, float beta, float *C, int ldc);

/* Threads for the ops from now on: n > 1 starts a pool of n (llm-train's --threads), 1 runs
 * everything on the caller, 0 means one per online core. Until it is called the ops run on
 * the caller, with OpenBLAS's own threads (one per core) in the products. Call it before the
 * ops run, from one thread. A pool that cannot start leaves the n threads to OpenBLAS. */
void llm_ops_set_threads(int n);
/* The threads the ops run on (1 without a pool). */
int llm_ops_threads(void);
/* f(ctx, i, worker) for every i in [0, n) on the ops' threads (core/pool.h's contract; worker
 * < llm_ops_threads()), or in order on the caller when there is no pool or it is busy. */
void llm_ops_parallel(size_t n, llm_pool_fn *f, void *ctx);
/* x[0 .. n-1] = 0 on the ops' threads (the gradients, the backward's buffers). */
void llm_ops_zero(float *x, size_t n);
/* Nonzero when expf runs four lanes at a time (x86-64 with AVX2 and FMA, and a libm whose
 * expf gives the same bits on a probe), zero when each element calls libm's expf. */
int llm_ops_fast_exp(void);
/* "OpenBLAS" or "portable loops": what llm_gemm runs on. */
const char *llm_ops_backend(void);
/* Measured fp32 matrix-product throughput of this machine in FLOP/s (runs ~0.2 s of products);
 * the peak against which model FLOP utilisation (MFU) is reported. */
double llm_ops_peak_flops(void);

/* Embedding lookup: out[N,C] = wte[tokens[n], :]. Tokens must be in [0, V). */
void llm_embedding_fwd(float *out, const int32_t *tokens, const float *wte, int N, int C);
/* dwte[tokens[n], :] += dout[n, :]. */
void llm_embedding_bwd(float *dwte, const float *dout, const int32_t *tokens, int N, int C);

/*
 * Linear layer without bias, nn.Linear layout: out[N,M] = inp[N,K] * w[M,K]^T.
 * Backward: dinp[N,K] += dout * w; dw[M,K] += dout^T * inp. dinp or dw may be NULL to skip.
 */
void llm_matmul_fwd(float *out, const float *inp, const float *w, int N, int K, int M);
void llm_matmul_bwd(float *dinp, float *dw, const float *dout, const float *inp, const float *w,
                    int N, int K, int M);

/*
 * RMSNorm (Hugging Face LlamaRMSNorm): out = weight * x / sqrt(mean(x^2) + eps) per row of
 * inp[N,C]. rstd[N] receives 1/sqrt(mean(x^2) + eps) for the backward pass (may be NULL when no
 * backward follows).
 */
void llm_rmsnorm_fwd(float *out, float *rstd, const float *inp, const float *weight, int N, int C,
                     float eps);
void llm_rmsnorm_bwd(float *dinp, float *dweight, const float *dout, const float *inp,
                     const float *weight, const float *rstd, int N, int C);

/*
 * Rotary position embedding, Hugging Face Llama convention ("rotate_half"): for each head of
 * width D and i < D/2, with a = pos * theta^(-2i/D) computed in fp32 as transformers does,
 *   out[i]       = x[i] cos a - x[i + D/2] sin a
 *   out[i + D/2] = x[i + D/2] cos a + x[i] sin a.
 * x is [N, H, D] (one row per token, e.g. the q_proj output), pos[N] the token positions.
 * In place allowed (out == inp). Backward applies the inverse rotation and adds into dinp
 * (dinp == dout allowed: then it overwrites instead of adding, which is what in-place means).
 */
void llm_rope_fwd(float *out, const float *inp, const int32_t *pos, int N, int H, int D,
                  float theta);
void llm_rope_bwd(float *dinp, const float *dout, const int32_t *pos, int N, int H, int D,
                  float theta);

/*
 * Causal grouped-query attention, softmax(q k^T / sqrt(D)) v per head.
 *   q[B, Tq, H, D], k and v [B, Tk, KVH, D], out[B, Tq, H, D]; H a multiple of KVH, query head
 *   h reads key-value head h / (H / KVH) (transformers' repeat_kv).
 *   Query i sits at position Tk - Tq + i and sees keys 0 .. Tk - Tq + i (Tq == Tk in training;
 *   Tq < Tk when earlier keys come from a cache).
 *   att[B, H, Tq, Tk] receives the probabilities (zero above the diagonal) for the backward.
 * Backward: dq, dk, dv accumulate; scratch holds Tq * Tk floats.
 */
void llm_attention_fwd(float *out, float *att, const float *q, const float *k, const float *v,
                       int B, int Tq, int Tk, int H, int KVH, int D);
void llm_attention_bwd(float *dq, float *dk, float *dv, float *scratch, const float *dout,
                       const float *q, const float *k, const float *v, const float *att, int B,
                       int Tq, int Tk, int H, int KVH, int D);

/* SwiGLU: out[n] = silu(gate[n]) * up[n] over n elements; silu(g) = g / (1 + e^-g). */
void llm_swiglu_fwd(float *out, const float *gate, const float *up, size_t n);
void llm_swiglu_bwd(float *dgate, float *dup, const float *dout, const float *gate,
                    const float *up, size_t n);

/* out[n] = a[n] + b[n] (the residual connection); out may alias a or b. */
void llm_residual_fwd(float *out, const float *a, const float *b, size_t n);

/*
 * Softmax cross-entropy over logits[N,V]: losses[n] = logsumexp(logits[n]) - logits[n][t],
 * t = targets[n]; a target < 0 is ignored (loss 0, no gradient). Targets must be < V.
 * lse[N] (may be NULL) receives logsumexp(logits[n]) so the backward need not recompute it.
 * Backward: dlogits[n] = (softmax(logits[n]) - onehot(t)) * dloss[n], OVERWRITTEN (not added),
 * with softmax = exp(logits - lse) from the forward's lse (NULL: recomputed); dlogits may
 * alias logits, so the largest activation of the model needs one buffer.
 */
void llm_xent_fwd(float *losses, float *lse, const float *logits, const int32_t *targets, int N,
                  int V);
void llm_xent_bwd(float *dlogits, const float *logits, const float *lse, const int32_t *targets,
                  const float *dloss, int N, int V);

#endif
