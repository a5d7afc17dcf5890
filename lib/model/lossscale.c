/*
 * lossscale.c — dynamic loss scaling rules (lossscale.h).
 */
#include "lossscale.h"

void llm_lossscale_init(llm_lossscale *s, int enabled)
{
	*s = (llm_lossscale){ .enabled = enabled,
	                      .scale = enabled ? 65536.0 : 1.0,
	                      .interval = 2000,
	                      .growth = 2.0,
	                      .backoff = 0.5 };
}

int llm_lossscale_update(llm_lossscale *s, int overflow)
{
	if (overflow) {
		s->overflows++;
		s->good_steps = 0;
		if (s->enabled) {
			s->scale *= s->backoff;
			if (s->scale < LLM_LOSSSCALE_MIN)
				s->scale = LLM_LOSSSCALE_MIN;
		}
		return 0;
	}
	if (s->enabled && ++s->good_steps >= s->interval) {
		s->good_steps = 0;
		s->scale *= s->growth;
		if (s->scale > LLM_LOSSSCALE_MAX)
			s->scale = LLM_LOSSSCALE_MAX;
	}
	return 1;
}
