/*
 * test_optim.c — AdamW against a float64 transcription of torch.optim.AdamW's update, the
 * schedule at its landmarks, norms and clipping.
 */
#include <math.h>
#include <stdlib.h>

#include "core/hash.h"
#include "model/optim.h"
#include "unit.h"

static void test_schedule(void)
{
	llm_optim_config c;
	llm_optim_defaults(&c);
	c.lr = 1e-3;
	c.min_lr = 1e-4;
	c.warmup = 10;
	c.total = 110;
	CHECK_NEAR(llm_lr_at(&c, 0), 1e-4, 1e-15);
	CHECK_NEAR(llm_lr_at(&c, 4), 5e-4, 1e-15);
	CHECK_NEAR(llm_lr_at(&c, 9), 1e-3, 1e-15);
	CHECK_NEAR(llm_lr_at(&c, 10), 1e-3, 1e-15);
	CHECK_NEAR(llm_lr_at(&c, 60), 5.5e-4, 1e-15); /* half way down the cosine */
	CHECK_NEAR(llm_lr_at(&c, 110), 1e-4, 1e-15);
	CHECK_NEAR(llm_lr_at(&c, 5000), 1e-4, 1e-15);
	for (int64_t s = 10; s < 110; s++)
		CHECK(llm_lr_at(&c, s + 1) <= llm_lr_at(&c, s));
	c.warmup = 0;
	CHECK_NEAR(llm_lr_at(&c, 0), 1e-3, 1e-15);
}

static void test_norm_clip(void)
{
	float x[7] = { 3, 4, 0, 0, 0, 0, 12 };
	CHECK_NEAR(sqrt(llm_sum_squares(x, 7)), 13, 1e-12);
	CHECK_NEAR(llm_sum_squares(x, 0), 0, 0);
	CHECK_NEAR(llm_clip_factor(0.5, 1.0), 1, 0);
	CHECK_NEAR(llm_clip_factor(4.0, 1.0), 0.25, 1e-6);
	CHECK_NEAR(llm_clip_factor(4.0, 0), 1, 0);
	CHECK_NEAR(llm_clip_factor(NAN, 1.0), 1, 0); /* the trainer skips non-finite steps itself */
}

static void test_adamw_reference(void)
{
	enum { N = 37, STEPS = 6 };
	llm_optim_config c;
	llm_optim_defaults(&c);
	llm_rng r;
	llm_rng_seed(&r, 9);
	float p[N], m[N] = { 0 }, v[N] = { 0 };
	double pd[N], md[N] = { 0 }, vd[N] = { 0 };
	for (int i = 0; i < N; i++)
		pd[i] = p[i] = (float)llm_rng_normal(&r);
	double lr = 1e-2, wd = 0.1, worst = 0;
	for (int t = 1; t <= STEPS; t++) {
		float g[N];
		for (int i = 0; i < N; i++)
			g[i] = (float)llm_rng_normal(&r);
		double gscale = t == 3 ? 0.5 : 1.0, moved = 0;
		double got = llm_adamw_update(p, g, m, v, N, gscale, lr, wd, &c, t);
		for (int i = 0; i < N; i++) {
			double gi = g[i] * gscale, old = pd[i];
			pd[i] *= 1 - lr * wd;
			md[i] = c.beta1 * md[i] + (1 - c.beta1) * gi;
			vd[i] = c.beta2 * vd[i] + (1 - c.beta2) * gi * gi;
			double mh = md[i] / (1 - pow(c.beta1, t)), vh = vd[i] / (1 - pow(c.beta2, t));
			pd[i] -= lr * mh / (sqrt(vh) + c.eps);
			moved += (pd[i] - old) * (pd[i] - old);
			worst = fmax(worst, fabs(p[i] - pd[i]));
		}
		CHECK_NEAR(got, moved, 1e-4 * moved); /* differences of fp32 values near 1 */
	}
	CHECK(worst < 1e-6);
	/* First step without decay moves every parameter by lr against the sign of its gradient. */
	float q[2] = { 1, 1 }, g2[2] = { 3, -0.001f }, m2[2] = { 0 }, v2[2] = { 0 };
	llm_adamw_update(q, g2, m2, v2, 2, 1, 0.1, 0, &c, 1);
	CHECK_NEAR(q[0], 0.9, 1e-6);
	CHECK_NEAR(q[1], 1.1, 1e-5);
}

/* AdamW with a cosine schedule minimises a quadratic bowl. */
static void test_adamw_converges(void)
{
	llm_optim_config c;
	llm_optim_defaults(&c);
	c.lr = 0.1;
	c.min_lr = 0.001;
	c.warmup = 10;
	c.total = 500;
	c.weight_decay = 0;
	float p[3] = { 2, -3, 0.5f }, m[3] = { 0 }, v[3] = { 0 };
	const float target[3] = { 1, 1, -1 };
	for (int t = 0; t < 500; t++) {
		float g[3];
		for (int i = 0; i < 3; i++)
			g[i] = 2 * (p[i] - target[i]);
		llm_adamw_update(p, g, m, v, 3, 1, llm_lr_at(&c, t), 0, &c, t + 1);
	}
	for (int i = 0; i < 3; i++)
		CHECK_NEAR(p[i], target[i], 1e-2);
}

int main(void)
{
	RUN(test_schedule);
	RUN(test_norm_clip);
	RUN(test_adamw_reference);
	RUN(test_adamw_converges);
	return unit_done();
}
