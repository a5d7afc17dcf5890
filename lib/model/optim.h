/*
 * optim.h — AdamW, the learning-rate schedule and gradient clipping for llm-train.
 *
 * AdamW is torch.optim.AdamW's (decoupled weight decay, bias-corrected moments):
 *   p -= lr * wd * p;  m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2
 *   p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
 * with g the (clipped) gradient and t the 1-based step. The moments are fp32 arrays the caller
 * owns (they are part of a checkpoint); the update is elementwise, so a flat parameter vector
 * can be updated tensor by tensor with each tensor's own weight decay.
 *
 * Schedule: linear warmup from lr/warmup to lr over `warmup` steps, then cosine decay to
 * min_lr at step `total`, min_lr after it (nanoGPT's get_lr).
 *
 * All functions are pure on their arguments; thread safe.
 */
#ifndef LLM_OPTIM_H
#define LLM_OPTIM_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
	double lr, min_lr;
	int64_t warmup, total;
	double beta1, beta2, eps, weight_decay;
	double clip; /* global-norm clipping threshold; <= 0 disables */
} llm_optim_config;

/* lr 3e-4, min_lr 3e-5, warmup 100, total 1000, betas 0.9/0.95, eps 1e-8, wd 0.1, clip 1.0. */
void llm_optim_defaults(llm_optim_config *c);

/* Learning rate for the 0-based optimizer step `step`. */
double llm_lr_at(const llm_optim_config *c, int64_t step);

/* Sum of squares of x[0..n) in double (the global norm is the sqrt of the sum over pieces). */
double llm_sum_squares(const float *x, size_t n);

/* Factor that brings a gradient of global norm `norm` under `clip` (1 when it already is, or
 * when clipping is off). */
double llm_clip_factor(double norm, double clip);

/*
 * One AdamW step over n elements: g is multiplied by gscale (the clip factor) first; t is the
 * 1-based step count after this update. Returns the sum of squares of the change applied to
 * p (for the update/parameter ratio of the gradient monitor).
 */
double llm_adamw_update(float *p, const float *g, float *m, float *v, size_t n, double gscale,
                        double lr, double weight_decay, const llm_optim_config *c, int64_t t);

#endif
