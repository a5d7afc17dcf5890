/*
 * Unit tests for lib/model/train and lib/model/trainstate: state.json round trip and its
 * errors, a step, save and restore (bit for bit), spike rollback, the plateau rule,
 * non-finite steps, and the smoke run, all on the CPU backend and the smoke shards; the
 * options' resolution.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/gpu.h"
#include "model/train.h"
#include "model/trainstate.h"
#include "unit.h"

static char root[64];
static char data[128], cfg[128];

/* Options for a small run in root/NAME on the smoke shards. */
static llm_train_options opts(const char *name)
{
	static char dirs[16][160];
	static int ndirs;
	char *dir = dirs[ndirs++ % 16];
	snprintf(dir, 160, "%s/%s", root, name);
	llm_train_options o;
	llm_train_options_init(&o);
	o.data = data;
	o.config = cfg;
	o.run_dir = dir;
	o.batch = 2;
	o.seq = 16;
	o.steps = 8;
	o.eval_every = 0;
	o.opt.lr = 1e-2;
	o.opt.min_lr = 1e-3;
	o.opt.warmup = 2;
	o.opt.total = 8;
	return o;
}

/* Train from open to o.steps; losses[step - 1] of every step that was not rolled back, and
 * the final parameters (malloc'd) when params is not NULL. */
static int run(const llm_train_options *o, double *losses, float **params, size_t *n)
{
	llm_trainer *t;
	int rc = llm_trainer_open(&t, o);
	if (rc) {
		printf("#   open: %s\n", llm_last_error());
		return rc;
	}
	while (!rc && llm_trainer_steps_done(t) < o->steps) {
		llm_train_step s;
		rc = llm_trainer_step(t, &s);
		if (!rc && !s.rolled_back && losses)
			losses[s.step - 1] = s.loss;
	}
	if (rc)
		printf("#   step: %s\n", llm_last_error());
	if (params) {
		const llm_model *m = llm_trainer_model(t);
		*n = llm_model_nparams(m);
		*params = malloc(*n * sizeof **params);
		memcpy(*params, llm_model_params((llm_model *)m), *n * sizeof **params);
	}
	int rc2 = llm_trainer_close(t);
	return rc ? rc : rc2;
}

static void test_state_round_trip(void)
{
	llm_trainstate a, b;
	llm_trainstate_init(&a);
	llm_trainstate_init(&b);
	a.step = 123;
	a.tokens = 456789;
	a.adam_t = 120;
	a.data_position = 1ULL << 40;
	llm_rng_seed(&a.data_rng, 99);
	llm_trainstate_skip(&a, 7);
	llm_trainstate_skip(&a, 3);
	llm_trainstate_skip(&a, 7);
	a.seed = 42;
	a.batch = 8;
	a.seq_len = 256;
	a.accum = 2;
	a.world_size = 4;
	a.weighted = 1;
	free(a.mix);
	a.mix = strdup("web=0.7,\"code\"=0.3");
	a.smoothed_loss = 2.718281828459045;
	a.smoothed_n = 100;
	a.lr_factor = 0.25;
	a.plateau_best = NAN;
	a.loss_scale = 32768;
	a.loss_scale_good_steps = 17;
	a.tokenizer_id = 0xfedcba9876543210ULL;
	memcpy(a.manifest_hash, "0123456789abcdef", 17);
	free(a.command);
	a.command = strdup("llm-train --data '语料' --steps 5");
	llm_buf x = LLM_BUF_INIT, y = LLM_BUF_INIT;
	llm_trainstate_format(&a, &x);
	CHECK_EQ_INT(llm_trainstate_parse(&b, x.p, x.len, "s.json"), LLM_OK);
	llm_trainstate_format(&b, &y);
	CHECK_MEM(x.p, x.len, y.p, y.len);
	CHECK_EQ_INT(b.nskip, 2);
	CHECK(llm_trainstate_skipped(&b, 3) && llm_trainstate_skipped(&b, 7) &&
	      !llm_trainstate_skipped(&b, 4));
	CHECK(isnan(b.plateau_best) && b.smoothed_loss == a.smoothed_loss);
	CHECK(memcmp(&a.data_rng, &b.data_rng, sizeof a.data_rng) == 0);
	CHECK_EQ_U64(b.tokenizer_id, a.tokenizer_id);
	CHECK_STR(b.mix, a.mix);
	CHECK_STR(b.command, a.command);
	CHECK(strstr(x.p, "\"plateau_best\": null"));
	/* Each broken or missing member is named. */
	static const char *const members[] = { "\"step\"", "\"data_rng\"", "\"skip_batches\"",
		                               "\"weighted\"", "\"tokenizer_id\"", "\"command\"" };
	for (size_t i = 0; i < sizeof members / sizeof *members; i++) {
		llm_buf_reset(&y);
		const char *at = strstr(x.p, members[i]);
		llm_buf_add(&y, x.p, (size_t)(at - x.p));
		llm_buf_adds(&y, "\"x_");
		llm_buf_adds(&y, at + 1);
		CHECK_EQ_INT(llm_trainstate_parse(&b, y.p, y.len, "s.json"), LLM_EFORMAT);
		char want[64];
		snprintf(want, sizeof want, "s.json: missing or bad '%.*s'", (int)strlen(members[i]) - 2,
		         members[i] + 1);
		CHECK_STR(llm_last_error(), want);
	}
	llm_buf_reset(&y);
	llm_buf_adds(&y, "{\"format\": \"llmkit-train-state\", \"version\": 2}");
	CHECK_EQ_INT(llm_trainstate_parse(&b, y.p, y.len, "s.json"), LLM_EUNSUPPORTED);
	CHECK_EQ_INT(llm_trainstate_parse(&b, "{\"step\": 1}", 11, "s.json"), LLM_EFORMAT);
	CHECK_EQ_INT(llm_trainstate_parse(&b, "{", 1, "s.json"), LLM_EFORMAT);
	CHECK_EQ_INT(llm_trainstate_load(&b, root), LLM_ENOTFOUND);
	CHECK_EQ_U64(llm_train_val_seed(1), 1 ^ 0x76616cULL);
	llm_buf_release(&x);
	llm_buf_release(&y);
	llm_trainstate_release(&a);
	llm_trainstate_release(&b);
}

static void test_smoke(void)
{
	llm_train_options o;
	llm_train_options_init(&o);
	char dir[128];
	snprintf(dir, sizeof dir, "%s/smoke", root);
	o.run_dir = dir;
	llm_buf report = LLM_BUF_INIT;
	int same = 0;
	CHECK_EQ_INT(llm_train_smoke(&o, NULL, NULL, &report, &same), LLM_OK);
	CHECK(same);
	CHECK(report.p && strstr(report.p, "compare: identical\n"));
	CHECK(report.p && strstr(report.p, "model.layers.1.mlp.down_proj.weight"));
	llm_buf_release(&report);
}

static void test_steps_lower_the_loss(void)
{
	llm_train_options o = opts("plain");
	o.steps = 12;
	o.opt.total = 12;
	o.eval_every = 6;
	o.eval_batches = 2;
	llm_trainer *t;
	CHECK_EQ_INT(llm_trainer_open(&t, &o), LLM_OK);
	double first = NAN, last = NAN;
	int evals = 0, saved = 0;
	while (llm_trainer_steps_done(t) < o.steps) {
		llm_train_step s;
		CHECK_EQ_INT(llm_trainer_step(t, &s), LLM_OK);
		if (s.step == 1)
			first = s.loss;
		last = s.loss;
		evals += isfinite(s.val_loss);
		saved += s.saved == 1;
	}
	llm_train_status st;
	llm_trainer_status(t, &st);
	CHECK_EQ_INT(st.step, 12);
	CHECK_EQ_INT(st.tokens, 12 * 2 * 16);
	CHECK(last < first);
	CHECK_EQ_INT(evals, 2);
	CHECK_EQ_INT(saved, 1); /* the last step only: ckpt_every 100 */
	CHECK(isfinite(st.val_loss) && st.val_loss < 10);
	CHECK_EQ_INT(llm_trainer_close(t), LLM_OK);
	char p[256];
	snprintf(p, sizeof p, "%s/ckpt/step-0000012/state.json", o.run_dir);
	CHECK(access(p, R_OK) == 0);
	snprintf(p, sizeof p, "%s/train.json", o.run_dir);
	CHECK(access(p, R_OK) == 0);
}

/* 8 straight steps = 4 steps, a checkpoint, and the run resumed for 4 more, bit for bit. */
static void test_save_restore_round_trip(void)
{
	llm_train_options o = opts("straight");
	o.ckpt_every = 4;
	double a[8], b[8];
	size_t na = 0, nb = 1;
	float *pa = NULL, *pb = NULL;
	CHECK_EQ_INT(run(&o, a, &pa, &na), LLM_OK);
	llm_train_options h = opts("halves");
	h.ckpt_every = 4;
	h.steps = 4;
	CHECK_EQ_INT(run(&h, b, NULL, NULL), LLM_OK);
	h.steps = 8;
	h.resume = 1;
	memset(b + 4, 0, 4 * sizeof *b);
	CHECK_EQ_INT(run(&h, b, &pb, &nb), LLM_OK);
	CHECK(memcmp(a, b, sizeof a) == 0);
	CHECK(na == nb && pa && pb && memcmp(pa, pb, na * sizeof *pa) == 0);
	/* restore on an open trainer (resumed at step 8): back to step 4, the same steps again */
	llm_trainer *t;
	o.resume = 1;
	CHECK_EQ_INT(llm_trainer_open(&t, &o), LLM_OK);
	if (!t)
		return;
	CHECK_EQ_INT(llm_trainer_steps_done(t), 8);
	char dir[256];
	snprintf(dir, sizeof dir, "%s/ckpt/step-0000004", o.run_dir);
	CHECK_EQ_INT(llm_trainer_restore(t, dir, 1), LLM_OK);
	CHECK_EQ_INT(llm_trainer_steps_done(t), 4);
	for (int i = 4; i < 8; i++) {
		llm_train_step s;
		CHECK_EQ_INT(llm_trainer_step(t, &s), LLM_OK);
		CHECK(s.loss == a[i]);
	}
	llm_trainer_close(t);
	/* a resume with another batch shape is the caller's usage error */
	llm_train_options wrong = o;
	wrong.batch = 3;
	llm_trainer *t2 = NULL;
	CHECK_EQ_INT(llm_trainer_open(&t2, &wrong), LLM_EINVAL);
	CHECK(strstr(llm_last_error(), "same --batch"));
	CHECK(t2 == NULL);
	free(pa);
	free(pb);
}

/* A spike at step 5 rolls back to step 4 and skips batch 4: the run equals one told to skip
 * batch 4 from the start. */
static void test_rollback(void)
{
	llm_train_options o = opts("rollback");
	o.ckpt_every = 2;
	o.spike_warmup = 1;
	o.on_spike = LLM_SPIKE_ROLLBACK;
	o.fault = LLM_FAULT_SPIKE;
	o.fault_step = 5;
	llm_trainer *t;
	CHECK_EQ_INT(llm_trainer_open(&t, &o), LLM_OK);
	double a[8];
	int rolled = 0;
	while (llm_trainer_steps_done(t) < o.steps) {
		llm_train_step s;
		CHECK_EQ_INT(llm_trainer_step(t, &s), LLM_OK);
		if (s.rolled_back) {
			rolled++;
			CHECK_EQ_INT(s.step, 4);
		} else {
			a[s.step - 1] = s.loss;
		}
	}
	llm_train_status st;
	llm_trainer_status(t, &st);
	CHECK_EQ_INT(rolled, 1);
	CHECK_EQ_INT(st.rollbacks, 1);
	CHECK_EQ_INT(st.spikes, 1);
	llm_trainer_close(t);
	llm_train_options r = opts("skip4");
	static const uint64_t four[] = { 4 };
	r.skip = four;
	r.nskip = 1;
	double b[8];
	CHECK_EQ_INT(run(&r, b, NULL, NULL), LLM_OK);
	CHECK(memcmp(a, b, sizeof a) == 0);
}

/* Two evaluations in a row above the best halve the learning rate. */
static void test_plateau(void)
{
	llm_train_options o = opts("plateau");
	o.steps = 6;
	o.opt.total = 6;
	o.opt.lr = 0.3;
	o.opt.min_lr = 0.03;
	o.eval_every = 1;
	o.eval_batches = 2;
	o.plateau_n = 2;
	o.plateau_delta = 0;
	o.plateau_factor = 0.5;
	llm_trainer *t;
	CHECK_EQ_INT(llm_trainer_open(&t, &o), LLM_OK);
	double best = INFINITY, factor = 1;
	int rises = 0, halvings = 0;
	while (llm_trainer_steps_done(t) < o.steps) {
		llm_train_step s;
		CHECK_EQ_INT(llm_trainer_step(t, &s), LLM_OK);
		/* the rule, computed here from the validation losses */
		if (s.val_loss < best) {
			best = s.val_loss;
			rises = 0;
		} else if (s.val_loss > best && ++rises >= 2) {
			factor *= 0.5;
			rises = 0;
			halvings++;
		}
		llm_train_status st;
		llm_trainer_status(t, &st);
		CHECK_NEAR(st.lr, llm_lr_at(&o.opt, s.step - 1) * factor, 1e-15);
	}
	CHECK(halvings >= 1); /* lr 0.3 overshoots: the rule fires, the check is not vacuous */
	llm_trainer_close(t);
}

static void test_nonfinite_step_is_skipped(void)
{
	llm_train_options o = opts("nonfinite");
	o.steps = 5;
	o.fault = LLM_FAULT_NAN;
	o.fault_step = 3;
	llm_trainer *t;
	CHECK_EQ_INT(llm_trainer_open(&t, &o), LLM_OK);
	for (int i = 0; i < 5; i++) {
		llm_train_step s;
		CHECK_EQ_INT(llm_trainer_step(t, &s), LLM_OK);
	}
	llm_train_status st;
	llm_trainer_status(t, &st);
	CHECK_EQ_INT(st.nonfinite_steps, 1);
	CHECK_EQ_INT(st.step, 5);
	llm_trainer_close(t);
	llm_trainstate s;
	llm_trainstate_init(&s);
	char dir[256];
	snprintf(dir, sizeof dir, "%s/ckpt/step-0000005", o.run_dir);
	CHECK_EQ_INT(llm_trainstate_load(&s, dir), LLM_OK);
	CHECK_EQ_INT(s.adam_t, 4);
	CHECK_EQ_INT(s.nonfinite_steps, 1);
	llm_trainstate_release(&s);
}

/* Every step a spike that is skipped: the third in a row stops the run. */
static void test_max_skips_stop_the_run(void)
{
	llm_train_options o = opts("skips");
	o.on_spike = LLM_SPIKE_SKIP;
	o.spike_k = 1e-9;
	o.spike_warmup = 1;
	o.max_skips = 3;
	llm_trainer *t;
	CHECK_EQ_INT(llm_trainer_open(&t, &o), LLM_OK);
	int rc = LLM_OK, steps = 0;
	while (!rc && llm_trainer_steps_done(t) < o.steps) {
		llm_train_step s;
		rc = llm_trainer_step(t, &s);
		steps++;
	}
	CHECK_EQ_INT(rc, LLM_EFORMAT);
	CHECK_EQ_INT(steps, 4); /* one applied, then three skipped */
	CHECK(strstr(llm_last_error(), "step 4: 3 steps in a row skipped"));
	llm_trainer_close(t);
}

/* A run directory in use or holding another run; a checkpoint with a NaN. */
static void test_run_dir_and_checkpoint_refused(void)
{
	llm_train_options o = opts("claimed");
	o.steps = 2;
	llm_trainer *t, *t2 = NULL;
	CHECK_EQ_INT(llm_trainer_open(&t, &o), LLM_OK);
	o.resume = 1;
	CHECK_EQ_INT(llm_trainer_open(&t2, &o), LLM_EIO); /* the lock */
	CHECK(strstr(llm_last_error(), "another llm-train is training in it (pid "));
	o.resume = 0;
	for (int i = 0; i < 2; i++) {
		llm_train_step s;
		CHECK_EQ_INT(llm_trainer_step(t, &s), LLM_OK);
	}
	CHECK_EQ_INT(llm_trainer_close(t), LLM_OK);
	CHECK_EQ_INT(llm_trainer_open(&t2, &o), LLM_EINVAL); /* another run in it */
	CHECK(strstr(llm_last_error(), "holds another run (train.json)"));
	/* the checkpoint's first weight made NaN: restore refuses it */
	char p[256];
	snprintf(p, sizeof p, "%s/ckpt/step-0000002/model.safetensors", o.run_dir);
	FILE *f = fopen(p, "r+b");
	unsigned char h[8];
	CHECK(f && fread(h, 1, 8, f) == 8);
	long hl = 0;
	for (int i = 7; i >= 0; i--)
		hl = hl << 8 | h[i];
	float nan = NAN;
	CHECK(f && fseek(f, 8 + hl, SEEK_SET) == 0 && fwrite(&nan, 4, 1, f) == 1 && fclose(f) == 0);
	o.resume = 1;
	o.steps = 4;
	CHECK_EQ_INT(llm_trainer_open(&t2, &o), LLM_EFORMAT);
	CHECK(strstr(llm_last_error(), "model.safetensors: 'model.embed_tokens.weight' holds a "
	                               "non-finite value at element 0"));
	o.resume = 0;
	o.force = 1; /* a fresh run replaces it */
	CHECK_EQ_INT(llm_trainer_open(&t2, &o), LLM_OK);
	CHECK_EQ_INT(llm_trainer_steps_done(t2), 0);
	llm_trainer_close(t2);
}

/* The defaults left to be worked out, the device, and the plateau rule's text. */
static void test_options_resolve(void)
{
	llm_train_options o;
	llm_train_options_init(&o);
	o.opt.lr = 1e-3;
	o.opt.min_lr = -1;
	o.opt.total = 0;
	o.steps = 500;
	o.backend.device = LLM_DEVICE_AUTO;
	o.backend.precision = LLM_PREC_BF16;
	CHECK_EQ_INT(llm_train_options_resolve(&o), LLM_OK);
	CHECK_NEAR(o.opt.min_lr, 1e-4, 1e-12);
	CHECK_EQ_INT(o.opt.total, 500);
	if (o.backend.device == LLM_DEVICE_CPU)
		CHECK_EQ_INT(o.backend.precision, LLM_PREC_FP32);
	else
		CHECK_EQ_INT(o.backend.device, LLM_DEVICE_CUDA);
	/* given values stay; a decay that would end in the warmup ends just past it */
	llm_train_options_init(&o);
	o.opt.min_lr = 0;
	o.opt.warmup = 50;
	o.opt.total = 20;
	CHECK_EQ_INT(llm_train_options_resolve(&o), LLM_OK);
	CHECK_NEAR(o.opt.min_lr, 0, 0);
	CHECK_EQ_INT(o.opt.total, 51);
	o.model = "huge";
	CHECK_EQ_INT(llm_train_options_resolve(&o), LLM_EINVAL);
	CHECK(strstr(llm_last_error(), "huge"));
	CHECK_EQ_INT(llm_train_plateau_parse(&o, "5,0.05,0.5"), LLM_OK);
	CHECK_EQ_INT(o.plateau_n, 5);
	CHECK_NEAR(o.plateau_delta, 0.05, 1e-12);
	CHECK_NEAR(o.plateau_factor, 0.5, 1e-12);
	const char *bad[] = { "5,0.05", "0,0.1,0.5", "5,-1,0.5", "5,0.1,0", "5,0.1,1.5", "5,0.1,0.5x" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		CHECK_EQ_INT(llm_train_plateau_parse(&o, bad[i]), LLM_EINVAL);
		CHECK(strstr(llm_last_error(), "expected N,DELTA,FACTOR"));
	}
}

int main(void)
{
	llm_set_verbosity(0);
	snprintf(root, sizeof root, "/tmp/test_train.XXXXXX");
	if (!mkdtemp(root))
		return 1;
	snprintf(data, sizeof data, "%s/smoke/smoke-data", root);
	snprintf(cfg, sizeof cfg, "%s/smoke/smoke-config.json", root);
	RUN(test_options_resolve);
	RUN(test_state_round_trip);
	RUN(test_smoke); /* its shards and config serve the tests after it */
	RUN(test_steps_lower_the_loss);
	RUN(test_save_restore_round_trip);
	RUN(test_rollback);
	RUN(test_plateau);
	RUN(test_nonfinite_step_is_skipped);
	RUN(test_max_skips_stop_the_run);
	RUN(test_run_dir_and_checkpoint_refused);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	if (system(cmd) != 0)
		return 1;
	return unit_done();
}
