/*
 * optim.c — AdamW, schedule, clipping (see optim.h).
 */
#include "optim.h"

#include <math.h>

void llm_optim_defaults(llm_optim_config *c)
{
	*c = (llm_optim_config){ .lr = 3e-4,
	                         .min_lr = 3e-5,
	                         .warmup = 100,
	                         .total = 1000,
	                         .beta1 = 0.9,
	                         .beta2 = 0.95,
	                         .eps = 1e-8,
	                         .weight_decay = 0.1,
	                         .clip = 1.0 };
}

double llm_lr_at(const llm_optim_config *c, int64_t step)
{
	if (step < c->warmup)
		return c->lr * (double)(step + 1) / (double)c->warmup;
	if (step >= c->total)
		return c->min_lr;
	double ratio = (double)(step - c->warmup) / (double)(c->total - c->warmup);
	return c->min_lr + 0.5 * (1.0 + cos(M_PI * ratio)) * (c->lr - c->min_lr);
}

double llm_sum_squares(const float *x, size_t n)
{
	/* Four partial sums: the compiler keeps them in registers and the loop vectorises without
	 * changing the result between runs (the order is fixed). */
	double s[4] = { 0, 0, 0, 0 };
	size_t i = 0;
	for (; i + 4 <= n; i += 4)
		for (int j = 0; j < 4; j++)
			s[j] += (double)x[i + j] * x[i + j];
	for (; i < n; i++)
		s[0] += (double)x[i] * x[i];
	return (s[0] + s[1]) + (s[2] + s[3]);
}

double llm_clip_factor(double norm, double clip)
{
	if (clip <= 0 || !(norm > clip))
		return 1.0;
	return clip / (norm + 1e-6); /* torch.nn.utils.clip_grad_norm_ */
}

double llm_adamw_update(float *p, const float *g, float *m, float *v, size_t n, double gscale,
                        double lr, double weight_decay, const llm_optim_config *c, int64_t t)
{
	float b1 = (float)c->beta1, b2 = (float)c->beta2, eps = (float)c->eps;
	double bc1 = 1 - pow(c->beta1, (double)t), bc2 = 1 - pow(c->beta2, (double)t);
	float step = (float)(lr / bc1), sbc2 = (float)sqrt(bc2), decay = (float)(1 - lr * weight_decay);
	float gs = (float)gscale;
	double moved = 0;
	for (size_t i = 0; i < n; i++) {
		float gi = g[i] * gs;
		m[i] = b1 * m[i] + (1 - b1) * gi;
		v[i] = b2 * v[i] + (1 - b2) * gi * gi;
		float old = p[i];
		float np = old * decay - step * m[i] / (sqrtf(v[i]) / sbc2 + eps);
		p[i] = np;
		moved += (double)(np - old) * (np - old);
	}
	return moved;
}
