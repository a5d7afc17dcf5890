/*
 * cudamodel.h — the LLaMA model of model.h trained on a GPU: the same tensors in the same
 * flat layout, the same forward and backward (kernels/, cuBLASLt), mixed precision with loss
 * scaling, activation recomputation, and NCCL data parallelism with overlapped bucketed
 * all-reduce or ZeRO-1.
 *
 * How a trainer uses it (llm-train --device cuda), one process per GPU:
 *
 *   llm_cudamodel_new(&g, host_model, &opts);        device memory for the model
 *   [world > 1: rank 0 llm_cuda_nccl_id(id); broadcast the 128 bytes (MPI_Bcast);
 *    llm_cudamodel_dp(g, rank, world, id)]
 *   llm_cudamodel_set_params(g, llm_model_params(host))  (after init or a checkpoint load)
 *   [llm_cudamodel_set_optim(g, m, v) when resuming]
 *   per step:  llm_cudamodel_zero_grad(g);
 *              for each of A micro-batches:
 *                  llm_cudamodel_train_micro(g, x, y, B, T, 1/(B*T*A*W), a == A-1, &loss, &n);
 *              llm_cudamodel_step(g, &optim_config, lr, adam_t + 1, &info);
 *              if (info.applied) adam_t++;
 *   evaluation: llm_cudamodel_eval(g, x, y, B, T, &loss, &n)
 *   checkpoint: llm_cudamodel_get_params(g, llm_model_params(host)); _get_optim(g, m, v);
 *               save the loss scaler (llm_cudamodel_lossscale) in state.json.
 *
 * Precision (LLM_PREC_*): master weights, gradients and AdamW moments are fp32 in every mode;
 * the residual stream, norms' statistics and every reduction are fp32. The matrix products
 * and the activations between them run in bf16 (default), fp16, fp32, or "mixed": embedding
 * and LM head in bf16, decoder blocks in fp16. fp16 and mixed use dynamic loss scaling
 * (lossscale.h): the loss is multiplied by the scale, a step whose gradients overflow is
 * skipped (info.applied = 0) and the scale halves.
 *
 * Recomputation (LLM_RECOMPUTE_*): none keeps every activation (model.h's memory formula,
 * minus the T x T attention matrix, which the fused attention never stores); ffn recomputes
 * the MLP's three [N, I] activations from the kept norm output during the backward (about half
 * the activation memory, +2 products per layer); all keeps only each layer's input and reruns
 * the layer (memory of one layer, about a third more compute).
 *
 * Inference (options.inference, llm-eval --device cuda): the fp32 weights and their compute
 * copy, the activations of one layer, the residual stream per layer and the logits; the
 * training entry points refuse such a model (LLM_EINVAL).
 *
 * Activations are sized for the largest B x T seen so far; any B, T within it reuses them.
 *
 * Errors: LLM_EUNSUPPORTED when the build has no CUDA, no GPU is visible or the shape is beyond
 * the kernels (head width over 128); LLM_ENOMEM when the device is full; LLM_EINTERNAL for a
 * CUDA or NCCL failure; the detail names the call. After an error the model must be freed.
 * Thread safety: one model per process and per host thread.
 */
#ifndef LLM_CUDAMODEL_H
#define LLM_CUDAMODEL_H

#include <stddef.h>
#include <stdint.h>

#include "lossscale.h"
#include "model.h"
#include "optim.h"

typedef struct {
	int device;          /* CUDA device; -1: the local rank (launcher) modulo the device count */
	int precision;       /* LLM_PREC_* (gpu.h), default bf16 */
	int recompute;       /* LLM_RECOMPUTE_*, default none */
	int deterministic;   /* same bits run to run (tests); synchronises after every launch */
	int zero1;           /* shard the AdamW state over the ranks */
	size_t bucket_elems; /* gradient all-reduce bucket, in floats (default 8M = 32 MiB) */
	int inference;       /* forward only (evaluation): no gradients, optimizer state or
	                      * backward buffers, one layer's activations shared by all */
} llm_cuda_options;

void llm_cuda_options_init(llm_cuda_options *o);

typedef struct llm_cudamodel llm_cudamodel;

/* A GPU copy of host's configuration and tensor table (parameters not copied yet). */
int llm_cudamodel_new(llm_cudamodel **out, const llm_model *host, const llm_cuda_options *o);
void llm_cudamodel_free(llm_cudamodel *g);

/* NCCL bootstrap: rank 0 makes the 128-byte id, every rank passes it to llm_cudamodel_dp. */
enum { LLM_NCCL_ID_BYTES = 128 };
int llm_cuda_nccl_id(void *id);
int llm_cudamodel_dp(llm_cudamodel *g, int rank, int world, const void *id);

/* Host fp32 arrays of llm_model_nparams() floats, in the host model's layout. */
int llm_cudamodel_set_params(llm_cudamodel *g, const float *p);
int llm_cudamodel_get_params(llm_cudamodel *g, float *p);
int llm_cudamodel_set_optim(llm_cudamodel *g, const float *m, const float *v);
int llm_cudamodel_get_optim(llm_cudamodel *g, float *m, float *v);
/* Gradients as they stand (times the loss scale; before the all-reduce unless a step ran). */
int llm_cudamodel_get_grads(llm_cudamodel *g, float *grads);

int llm_cudamodel_zero_grad(llm_cudamodel *g);

/*
 * Forward and backward of one micro-batch, as llm_model_forward + llm_model_backward(scale):
 * gradients += d(scale * loss_scale * sum of token losses)/dparam. *loss is the mean loss over
 * the targets >= 0, *count their number (either may be NULL). last: the final micro-batch of
 * the step; with data parallelism its backward starts the gradient all-reduce bucket by bucket.
 */
int llm_cudamodel_train_micro(llm_cudamodel *g, const int32_t *inputs, const int32_t *targets,
                              int B, int T, float scale, int last, double *loss, int64_t *count);

/* Forward only, the mean loss over targets >= 0 (evaluation). */
int llm_cudamodel_eval(llm_cudamodel *g, const int32_t *inputs, const int32_t *targets, int B,
                       int T, double *loss, int64_t *count);
/* Forward only, every position's loss: losses[B*T] (host) receives -ln p(target) from the
 * fused cross-entropy (fp32 log-sum-exp of the logits in the head's type), 0 where the
 * target is < 0. The only entry point besides set_params that an inference model serves. */
int llm_cudamodel_token_losses(llm_cudamodel *g, const int32_t *inputs, const int32_t *targets,
                               int B, int T, float *losses);
/* The same with the model as a void *: an llm_token_loss_fn of eval.h. */
int llm_cudamodel_token_loss_fn(void *g, const int32_t *inputs, const int32_t *targets, int B,
                                int T, float *losses);

typedef struct {
	double grad_norm;   /* global norm of the (all-reduced, unscaled) gradient */
	double clip_factor; /* llm_clip_factor(grad_norm, clip) */
	double loss_scale;  /* the scale the gradients were computed with */
	int applied;        /* 0: non-finite gradients, parameters unchanged */
} llm_cuda_stepinfo;

/*
 * The optimizer step: finish the all-reduce (or reduce-scatter), global norm, overflow check and
 * loss-scale update, clipping, AdamW with t (1-based, counting applied steps) and lr, then the
 * all-gather of ZeRO-1. Weight decay applies to tensors with decay set, as in llm-train.
 */
int llm_cudamodel_step(llm_cudamodel *g, const llm_optim_config *c, double lr, int64_t t,
                       llm_cuda_stepinfo *info);

/*
 * llm_cudamodel_step in two halves, for a trainer that decides between the norm and the
 * update (spike handling, --on-spike skip): grad_norm finishes the gradient exchange, returns
 * the unscaled global norm and whether it is finite, and updates the loss scaler (an overflow
 * halves the scale); apply runs AdamW with gradients multiplied by clip_factor (and divided by
 * the loss scale they were computed with). Call apply at most once per step, only when finite.
 */
int llm_cudamodel_grad_norm(llm_cudamodel *g, double *norm, int *finite);
int llm_cudamodel_apply(llm_cudamodel *g, const llm_optim_config *c, double lr, int64_t t,
                        double clip_factor);
/* Squared norm of each tensor's unscaled gradient (llm_model_ntensors doubles), for per-layer
 * monitoring; after the exchange, like grad_norm. */
int llm_cudamodel_tensor_sumsq(llm_cudamodel *g, double *ss);
/* Global norm of the fp32 master weights. */
int llm_cudamodel_param_norm(llm_cudamodel *g, double *norm);

/* The loss scaler, to save in and restore from a checkpoint. */
llm_lossscale *llm_cudamodel_lossscale(llm_cudamodel *g);

/* The GPU's name ("NVIDIA H200"); *peak (may be NULL) receives its dense bf16 tensor-core
 * peak in FLOP/s for MFU, 0 when the part is not in llmkit's table. */
const char *llm_cudamodel_device(const llm_cudamodel *g, double *peak);

/* Device memory this model holds, in bytes (parameters, optimizer, activations). */
size_t llm_cudamodel_memory(const llm_cudamodel *g);

#endif
