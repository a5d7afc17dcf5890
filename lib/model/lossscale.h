/*
 * lossscale.h — dynamic loss scaling for fp16 training (the host-side decisions; the GPU only
 * multiplies).
 *
 * fp16 gradients underflow below 6e-8; multiplying the loss by a large scale S lifts them into
 * range, and the optimizer divides by S again. When a step's gradients overflow (a non-finite
 * global norm), the step is skipped and S halves; after `interval` clean steps in a row S
 * doubles. These are torch.cuda.amp.GradScaler's rules and defaults (init 2^16, growth 2,
 * backoff 0.5, interval 2000), with S kept within [2^-24, 2^24] so that it never reaches zero
 * or infinity itself.
 *
 * A disabled scaler (fp32 and bf16 runs) keeps S = 1 and only reports overflow. The struct is
 * plain data: a checkpoint saves scale and good_steps and restores them.
 */
#ifndef LLM_LOSSSCALE_H
#define LLM_LOSSSCALE_H

#include <stdint.h>

typedef struct {
	int enabled;
	double scale;       /* multiply the loss (the backward's seed) by this */
	int64_t good_steps; /* clean steps since the last change */
	int64_t interval;   /* clean steps before growing */
	double growth, backoff;
	int64_t overflows;  /* steps skipped for overflow, in all */
} llm_lossscale;

#define LLM_LOSSSCALE_MIN (1.0 / 16777216.0)
#define LLM_LOSSSCALE_MAX 16777216.0

/* Defaults above; disabled: scale 1 forever. */
void llm_lossscale_init(llm_lossscale *s, int enabled);

/*
 * Account for one step whose gradients were computed at s->scale: overflow nonzero when they
 * were not finite. Returns 1 when the step must be applied, 0 when it must be skipped
 * (overflow). Updates the scale for the next step.
 */
int llm_lossscale_update(llm_lossscale *s, int overflow);

#endif
