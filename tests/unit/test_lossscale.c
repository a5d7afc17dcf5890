/*
 * test_lossscale.c — the dynamic loss scaler's rules against GradScaler's, step by step.
 */
#include "model/lossscale.h"
#include "unit.h"

static void test_defaults_and_growth(void)
{
	llm_lossscale s;
	llm_lossscale_init(&s, 1);
	CHECK(s.scale == 65536.0);
	s.interval = 3;
	CHECK_EQ_INT(llm_lossscale_update(&s, 0), 1);
	CHECK_EQ_INT(llm_lossscale_update(&s, 0), 1);
	CHECK(s.scale == 65536.0);
	CHECK_EQ_INT(llm_lossscale_update(&s, 0), 1); /* third clean step: doubles */
	CHECK(s.scale == 131072.0);
	CHECK_EQ_INT(s.good_steps, 0);
}

static void test_overflow_skips_and_halves(void)
{
	llm_lossscale s;
	llm_lossscale_init(&s, 1);
	s.interval = 2;
	CHECK_EQ_INT(llm_lossscale_update(&s, 0), 1);
	CHECK_EQ_INT(llm_lossscale_update(&s, 1), 0); /* skipped, and the clean run restarts */
	CHECK(s.scale == 32768.0);
	CHECK_EQ_INT(s.overflows, 1);
	CHECK_EQ_INT(llm_lossscale_update(&s, 0), 1);
	CHECK(s.scale == 32768.0); /* one clean step since the overflow, not two */
	CHECK_EQ_INT(llm_lossscale_update(&s, 0), 1);
	CHECK(s.scale == 65536.0);
}

static void test_bounds(void)
{
	llm_lossscale s;
	llm_lossscale_init(&s, 1);
	for (int i = 0; i < 200; i++)
		llm_lossscale_update(&s, 1);
	CHECK(s.scale == LLM_LOSSSCALE_MIN && s.scale > 0);
	s.interval = 1;
	for (int i = 0; i < 200; i++)
		llm_lossscale_update(&s, 0);
	CHECK(s.scale == LLM_LOSSSCALE_MAX);
}

static void test_disabled_keeps_one(void)
{
	llm_lossscale s;
	llm_lossscale_init(&s, 0);
	s.interval = 1;
	CHECK_EQ_INT(llm_lossscale_update(&s, 0), 1);
	CHECK_EQ_INT(llm_lossscale_update(&s, 1), 0); /* still reports the overflow */
	CHECK(s.scale == 1.0);
	CHECK_EQ_INT(s.overflows, 1);
}

int main(void)
{
	RUN(test_defaults_and_growth);
	RUN(test_overflow_skips_and_halves);
	RUN(test_bounds);
	RUN(test_disabled_keeps_one);
	return unit_done();
}
