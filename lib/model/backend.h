/*
 * backend.h — where a model trains: one interface over the CPU model (model.h on the ops of
 * ops.h) and the CUDA model (cudamodel.h), chosen once when the backend is opened, so that the
 * trainer (train.h) never asks which one it has.
 *
 * The host model and the AdamW moments the caller passes are the reference copy: what
 * checkpoints read and write. The CPU backend trains them in place. The CUDA backend trains
 * a device copy, which llm_backend_upload fills from them (after initialisation or a
 * checkpoint load) and llm_backend_download copies back (before a checkpoint is written).
 *
 * One optimizer step, the same calls in the same order on every rank of a data-parallel run:
 *
 *   for a in 0 .. A-1:  llm_backend_micro(b, x, y, B, T, 1/(B*T*A*W), a == 0, a == A-1, &loss)
 *   llm_backend_grad_norm(b, &norm, &scale)        the gradients summed over the ranks
 *   llm_backend_apply(b, &opt, lr, t, clip, &moved)   only when the step is taken
 *
 * The gradients are those of the step's mean loss over all ranks' tokens. The CPU sums the
 * micro-batches in a separate accumulator (when A > 1) with the same additions as the
 * all-reduce over ranks, so one process with --accum 2 equals two processes bit for bit; the
 * CUDA model accumulates on the device and overlaps the all-reduce with the last backward.
 *
 * Evaluation (options.inference, llm-eval): a forward-only backend of the host as it is (its
 * parameters are uploaded when it opens; no moments, adam_m and adam_v NULL), scored through
 * llm_backend_eval or the per-token losses of llm_backend_token_loss_fn. The device is the
 * caller's resolved choice (llm_device_resolve, once per process); nothing here looks again.
 *
 * Errors: the backend's (cudamodel.h: LLM_EUNSUPPORTED without a GPU, LLM_ENOMEM when the device
 * is full, LLM_EINTERNAL for a CUDA, NCCL or MPI failure), with the detail set. After an error
 * the backend must be freed. Thread safety: one thread drives a backend.
 */
#ifndef LLM_BACKEND_H
#define LLM_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "lossscale.h"
#include "model.h"
#include "optim.h"

typedef struct {
	int device;              /* LLM_DEVICE_CPU or LLM_DEVICE_CUDA (gpu.h), resolved */
	int precision;           /* LLM_PREC_* on a GPU (default bf16); the CPU runs fp32 */
	int recompute;           /* LLM_RECOMPUTE_* on a GPU */
	int zero1;               /* on GPUs: the AdamW state sharded over the ranks */
	int accum;               /* micro-batches per step (>= 1) */
	int rank, world;         /* this process and the process count (mpirt.h) */
	int inference;           /* forward only (evaluation): no gradients or optimizer state */
} llm_backend_options;

/* CPU, fp32, one micro-batch, rank 0 of 1. */
void llm_backend_options_init(llm_backend_options *o);

typedef struct llm_backend llm_backend;

/* A backend training host (whose parameters and moments adam_m/adam_v, llm_model_nparams()
 * floats each, stay the caller's). On a GPU with world > 1 this is collective: rank 0 makes
 * the NCCL id and MPI broadcasts it. */
int llm_backend_open(llm_backend **b, llm_model *host, float *adam_m, float *adam_v,
                     const llm_backend_options *o);
void llm_backend_free(llm_backend *b);

/* What the products run on ("OpenBLAS, 4 threads"; "NVIDIA H200, bf16, recompute ffn"). */
const char *llm_backend_name(const llm_backend *b);
/* Peak FLOP/s of one process, for MFU; NaN when unknown. */
double llm_backend_peak_flops(const llm_backend *b);
/* The loss scaler (lossscale.h); a disabled one (scale 1) where no loss is scaled. */
llm_lossscale *llm_backend_lossscale(llm_backend *b);

/* Host parameters and moments to the training copy, and back (optim: the moments too). */
int llm_backend_upload(llm_backend *b);
int llm_backend_download(llm_backend *b, int optim);

/* Forward and backward of one micro-batch (model.h's conventions for inputs and targets):
 * the gradients of scale x the sum of its token losses join the step's. first: the step's
 * first micro-batch (the gradients start from zero); last: its final one. *loss: the
 * micro-batch's mean loss. */
int llm_backend_micro(llm_backend *b, const int32_t *inputs, const int32_t *targets, int B, int T,
                      float scale, int first, int last, double *loss);
/* The step's gradients summed over the ranks, and their global norm: *norm is NaN when any is
 * not finite. *scale (may be NULL) receives the loss scale they were computed with; an overflow
 * halves the scaler for the next step. */
int llm_backend_grad_norm(llm_backend *b, double *norm, double *scale);
/* AdamW step t (1-based) at lr with the gradients times clip_factor. *moved: the sum of squares
 * of the change to the parameters, NaN where the backend does not measure it. */
int llm_backend_apply(llm_backend *b, const llm_optim_config *c, double lr, int64_t t,
                      double clip_factor, double *moved);
/* Squared norm of each tensor's gradient (llm_model_ntensors doubles), after grad_norm. */
int llm_backend_tensor_sumsq(llm_backend *b, double *ss);
/* Global norm of the parameters. */
int llm_backend_param_norm(llm_backend *b, double *norm);

/* Forward only: the mean loss over the targets >= 0 and their number (evaluation). */
int llm_backend_eval(llm_backend *b, const int32_t *inputs, const int32_t *targets, int B, int T,
                     double *loss, int64_t *count);

/* Forward only, without the language-model head: *hidden points to the final norm's output
 * [B*T, C] on the host (model.h's llm_model_hidden), valid until the next call. The CPU
 * backend only (LLM_EUNSUPPORTED on CUDA). */
int llm_backend_hidden(llm_backend *b, const int32_t *inputs, int B, int T,
                       const float **hidden);

/* Per-token losses, as eval.h's llm_token_loss_fn with the backend as its context: the
 * function an evaluator or chooser scores with (llm_evaluator_set_scorer(ev, fn, b)). NULL for
 * the CPU backend, where the evaluator's own forward of the host model (double log-sum-exp,
 * the reference) is the CPU's scorer; the CUDA backend's fused cross-entropy otherwise. */
typedef int (*llm_backend_loss_fn)(void *b, const int32_t *inputs, const int32_t *targets, int B,
                                   int T, float *losses);
llm_backend_loss_fn llm_backend_token_loss_fn(const llm_backend *b);

#endif
