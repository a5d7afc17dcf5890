/*
 * test_cuda_model.c — the GPU model (cudamodel.h) against the CPU model (model.h) and
 * trainer arithmetic (optim.h): the same initial weights and the same 20 batches, step by
 * step. Stated tolerances (relative, per step's loss): fp32 1e-3, bf16 3e-2; the first step's
 * gradient in fp32 within 1e-4 in norm; recomputation bit-identical to keeping activations;
 * a deterministic run repeats bit for bit; fp16 and mixed (with loss scaling) train.
 * Evaluation (llm-eval --device cuda: an inference model under eval.h): the evaluator's loss
 * on the GPU equals the CPU's to 1e-5 relative in fp32 (every token's loss too), 2e-2 in bf16.
 *
 * Without a GPU every test reports "skip".
 *
 * With arguments it is the GPU throughput benchmark used by tests/gpu/run.sh:
 *   test_cuda_model --bench PRESET BATCH SEQ STEPS PRECISION [RECOMPUTE [VOCAB]]
 * prints one JSON line: median step time, tokens/s, MFU against the GPU's bf16 dense peak.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/err.h"
#include "core/hash.h"
#include "model/cudamodel.h"
#include "model/eval.h"
#include "model/gpu.h"
#include "model/model.h"
#include "model/ops.h"
#include "model/optim.h"
#include "unit.h"

#ifdef LLM_HAVE_CUDA

enum { STEPS = 20, B = 2, T = 64 };

static llm_model_config small_config(void)
{
	return (llm_model_config){ .vocab_size = 211,
	                           .hidden_size = 64,
	                           .intermediate_size = 176,
	                           .num_hidden_layers = 2,
	                           .num_attention_heads = 4,
	                           .num_key_value_heads = 2,
	                           .max_position_embeddings = 128,
	                           .tie_word_embeddings = 1,
	                           .rope_theta = 10000,
	                           .rms_norm_eps = 1e-5,
	                           .initializer_range = 0.02,
	                           .bos_token_id = -1,
	                           .eos_token_id = -1 };
}

/* Learnable batches: arithmetic sequences modulo V with a random start and stride per row, so
 * the loss falls well within 20 steps; a few ignored targets (-1) on the way. */
static void make_batches(int32_t *x, int32_t *y, int V, uint64_t seed)
{
	llm_rng r;
	llm_rng_seed(&r, seed);
	for (int s = 0; s < STEPS * B; s++) {
		int a = (int)llm_rng_below(&r, (uint64_t)V), d = 1 + (int)llm_rng_below(&r, 7);
		for (int i = 0; i < T; i++) {
			x[s * T + i] = (a + d * i) % V;
			y[s * T + i] = i % 29 == 5 ? -1 : (a + d * (i + 1)) % V;
		}
	}
}

static void optim_config(llm_optim_config *c)
{
	llm_optim_defaults(c);
	c->lr = 3e-3;
	c->min_lr = 3e-4;
	c->warmup = 3;
	c->total = STEPS;
}

/* The CPU run, as llm-train does one step (accum 1, one process). */
static void cpu_run(const llm_model_config *cfg, const int32_t *x, const int32_t *y,
                    double *losses, float *grad1)
{
	llm_model *m = llm_model_new(cfg);
	llm_model_init(m, 5);
	size_t n = llm_model_nparams(m);
	float *am = calloc(n, 4), *av = calloc(n, 4), *g = llm_model_grads(m);
	llm_optim_config c;
	optim_config(&c);
	for (int s = 0; s < STEPS; s++) {
		llm_model_zero_grad(m);
		int64_t cnt;
		CHECK(llm_model_forward(m, x + s * B * T, y + s * B * T, B, T, &losses[s], &cnt) == LLM_OK);
		llm_model_backward(m, 1.0f / (float)cnt);
		if (s == 0)
			memcpy(grad1, g, n * 4);
		double clipf = llm_clip_factor(sqrt(llm_sum_squares(g, n)), c.clip);
		float *p = llm_model_params(m);
		for (size_t i = 0; i < llm_model_ntensors(m); i++) {
			const llm_tensor *t = llm_model_tensor(m, i);
			llm_adamw_update(p + t->offset, g + t->offset, am + t->offset, av + t->offset,
			                 t->numel, clipf, llm_lr_at(&c, s), t->decay ? c.weight_decay : 0,
			                 &c, s + 1);
		}
	}
	free(am);
	free(av);
	llm_model_free(m);
}

/* The same on the GPU; returns the number of applied steps (skips are loss-scale overflows). */
static int gpu_run(const llm_model_config *cfg, int precision, int recompute, const int32_t *x,
                   const int32_t *y, double *losses, float *grad1)
{
	llm_model *m = llm_model_new(cfg);
	llm_model_init(m, 5);
	llm_cuda_options o;
	llm_cuda_options_init(&o);
	o.device = 0;
	o.precision = precision;
	o.recompute = recompute;
	o.deterministic = 1;
	llm_cudamodel *g;
	int rc = llm_cudamodel_new(&g, m, &o), applied = 0;
	if (rc || (rc = llm_cudamodel_set_params(g, llm_model_params(m)))) {
		printf("#   %s\n", llm_last_error());
		CHECK(rc == LLM_OK);
		llm_cudamodel_free(g);
		llm_model_free(m);
		return 0;
	}
	llm_optim_config c;
	optim_config(&c);
	int64_t t = 0;
	for (int s = 0; s < STEPS && !rc; s++) {
		int64_t cnt = 0;
		for (int i = 0; i < B * T; i++)
			cnt += y[s * B * T + i] >= 0;
		llm_cuda_stepinfo info;
		if ((rc = llm_cudamodel_zero_grad(g)) ||
		    (rc = llm_cudamodel_train_micro(g, x + s * B * T, y + s * B * T, B, T,
		                                    1.0f / (float)cnt, 1, &losses[s], NULL)))
			break;
		if (s == 0 && grad1 && (rc = llm_cudamodel_get_grads(g, grad1)))
			break;
		if ((rc = llm_cudamodel_step(g, &c, llm_lr_at(&c, s), t + 1, &info)))
			break;
		t += info.applied;
		applied += info.applied;
	}
	if (rc)
		printf("#   %s\n", llm_last_error());
	CHECK(rc == LLM_OK);
	llm_cudamodel_free(g);
	llm_model_free(m);
	return applied;
}

static int gpu_ready(void)
{
	static int ready = -1;
	if (ready < 0)
		ready = llm_cuda_available();
	if (!ready)
		unit_skip("no CUDA device");
	return ready;
}

static llm_model_config cfg;
static int32_t xs[STEPS * B * T], ys[STEPS * B * T];
static double cpu_loss[STEPS];
static float *cpu_grad1;
static size_t nparams;

static void setup(void)
{
	cfg = small_config();
	make_batches(xs, ys, cfg.vocab_size, 11);
	llm_model *m = llm_model_new(&cfg);
	nparams = llm_model_nparams(m);
	llm_model_free(m);
	cpu_grad1 = malloc(nparams * 4);
	cpu_run(&cfg, xs, ys, cpu_loss, cpu_grad1);
}

static void compare_losses(const char *what, const double *gpu, double tol)
{
	int bad = 0;
	for (int s = 0; s < STEPS; s++) {
		double e = fabs(gpu[s] - cpu_loss[s]) / fabs(cpu_loss[s]);
		if (!(e <= tol)) {
			if (!bad)
				printf("#   %s: step %d loss gpu %.7f cpu %.7f (tol %g)\n", what, s + 1,
				       gpu[s], cpu_loss[s], tol);
			bad++;
		}
	}
	printf("#   %s: loss %.4f -> %.4f (cpu %.4f -> %.4f)\n", what, gpu[0], gpu[STEPS - 1],
	       cpu_loss[0], cpu_loss[STEPS - 1]);
	CHECK_EQ_INT(bad, 0);
}

static void test_fp32_matches_cpu(void)
{
	if (!gpu_ready())
		return;
	double loss[STEPS];
	float *g1 = malloc(nparams * 4);
	CHECK_EQ_INT(gpu_run(&cfg, LLM_PREC_FP32, LLM_RECOMPUTE_NONE, xs, ys, loss, g1), STEPS);
	double d = 0, r = 0;
	for (size_t i = 0; i < nparams; i++) {
		d += ((double)g1[i] - cpu_grad1[i]) * ((double)g1[i] - cpu_grad1[i]);
		r += (double)cpu_grad1[i] * cpu_grad1[i];
	}
	printf("#   first-step gradient: relative difference %.3g in norm\n", sqrt(d / r));
	CHECK(sqrt(d / r) <= 1e-4);
	compare_losses("fp32", loss, 1e-3);
	CHECK(cpu_loss[STEPS - 1] < cpu_loss[0] - 0.5); /* the run learns: the check is not vacuous */
	free(g1);
}

static void test_bf16_matches_cpu(void)
{
	if (!gpu_ready())
		return;
	double loss[STEPS];
	CHECK_EQ_INT(gpu_run(&cfg, LLM_PREC_BF16, LLM_RECOMPUTE_NONE, xs, ys, loss, NULL), STEPS);
	compare_losses("bf16", loss, 3e-2);
}

static void test_recompute_is_exact(void)
{
	if (!gpu_ready())
		return;
	double a[STEPS], b[STEPS], c[STEPS];
	gpu_run(&cfg, LLM_PREC_FP32, LLM_RECOMPUTE_NONE, xs, ys, a, NULL);
	gpu_run(&cfg, LLM_PREC_FP32, LLM_RECOMPUTE_FFN, xs, ys, b, NULL);
	gpu_run(&cfg, LLM_PREC_FP32, LLM_RECOMPUTE_ALL, xs, ys, c, NULL);
	CHECK(memcmp(a, b, sizeof a) == 0);
	CHECK(memcmp(a, c, sizeof a) == 0);
}

static void test_deterministic(void)
{
	if (!gpu_ready())
		return;
	double a[STEPS], b[STEPS];
	gpu_run(&cfg, LLM_PREC_BF16, LLM_RECOMPUTE_NONE, xs, ys, a, NULL);
	gpu_run(&cfg, LLM_PREC_BF16, LLM_RECOMPUTE_NONE, xs, ys, b, NULL);
	CHECK(memcmp(a, b, sizeof a) == 0);
}

static void test_fp16_and_mixed_train(void)
{
	if (!gpu_ready())
		return;
	int precs[2] = { LLM_PREC_FP16, LLM_PREC_MIXED };
	for (int i = 0; i < 2; i++) {
		double loss[STEPS];
		int applied = gpu_run(&cfg, precs[i], LLM_RECOMPUTE_NONE, xs, ys, loss, NULL);
		int finite = 1;
		for (int s = 0; s < STEPS; s++)
			finite &= isfinite(loss[s]);
		printf("#   %s: %d of %d steps applied, loss %.4f -> %.4f\n",
		       llm_precision_name(precs[i]), applied, STEPS, loss[0], loss[STEPS - 1]);
		CHECK(finite);
		CHECK(applied >= STEPS - 4); /* at most a few overflow skips while the scale settles */
		CHECK(loss[STEPS - 1] < loss[0] - 0.5);
	}
}

/* The trainer's first batches as evaluation windows, on the CPU and on the GPU. */
static void test_eval_matches_cpu(void)
{
	if (!gpu_ready())
		return;
	llm_model *m = llm_model_new(&cfg);
	llm_model_init(m, 5);
	enum { NW = 6 }; /* windows: two batches of 3, the last one short */
	llm_eval_sums want;
	llm_evaluator *cpu = llm_evaluator_new(m, T, 3, NULL, -1);
	for (int w = 0; w < NW; w++)
		CHECK_EQ_INT(llm_eval_window(cpu, "x", xs + w * T, ys + w * T, w == NW - 1 ? T / 2 : T),
		             LLM_OK);
	CHECK_EQ_INT(llm_eval_flush(cpu), LLM_OK);
	llm_eval_total(cpu, &want);
	static const int precs[] = { LLM_PREC_FP32, LLM_PREC_BF16 };
	for (int k = 0; k < 2; k++) {
		double tol = precs[k] == LLM_PREC_FP32 ? 1e-5 : 2e-2;
		llm_cuda_options o;
		llm_cuda_options_init(&o);
		o.device = 0;
		o.precision = precs[k];
		o.inference = 1;
		llm_cudamodel *g;
		int rc = llm_cudamodel_new(&g, m, &o);
		if (rc || (rc = llm_cudamodel_set_params(g, llm_model_params(m)))) {
			printf("#   %s\n", llm_last_error());
			CHECK_EQ_INT(rc, LLM_OK);
			llm_cudamodel_free(g);
			break;
		}
		llm_evaluator *gpu = llm_evaluator_new(m, T, 3, NULL, -1);
		llm_evaluator_set_scorer(gpu, llm_cudamodel_token_loss_fn, g);
		for (int w = 0; w < NW; w++)
			CHECK_EQ_INT(llm_eval_window(gpu, "x", xs + w * T, ys + w * T,
			                             w == NW - 1 ? T / 2 : T), LLM_OK);
		CHECK_EQ_INT(llm_eval_flush(gpu), LLM_OK);
		llm_eval_sums got;
		llm_eval_total(gpu, &got);
		printf("#   %s: eval loss %.7f, cpu %.7f (tol %g)\n", llm_precision_name(precs[k]),
		       llm_eval_loss(&got), llm_eval_loss(&want), tol);
		CHECK_EQ_U64(got.tokens, want.tokens);
		CHECK_NEAR(llm_eval_loss(&got), llm_eval_loss(&want), tol * llm_eval_loss(&want));
		if (precs[k] == LLM_PREC_FP32) {
			/* Token by token, against the CPU forward's own cross-entropy. */
			float tl[B * T], cl[B * T], lse[B * T];
			CHECK_EQ_INT(llm_cudamodel_token_losses(g, xs, ys, B, T, tl), LLM_OK);
			CHECK_EQ_INT(llm_model_forward(m, xs, NULL, B, T, NULL, NULL), LLM_OK);
			llm_xent_fwd(cl, lse, llm_model_logits(m), ys, B * T, cfg.vocab_size);
			int bad = 0;
			for (int i = 0; i < B * T; i++)
				bad += !(fabs(tl[i] - cl[i]) <= 1e-5 * fabs(cl[i]) + 1e-6);
			CHECK_EQ_INT(bad, 0);
		}
		llm_evaluator_free(gpu);
		llm_cudamodel_free(g);
	}
	llm_evaluator_free(cpu);
	llm_model_free(m);
}

/* ---- benchmark ------------------------------------------------------------------------- */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int bench(int argc, char **argv)
{
	if (argc < 7) {
		fprintf(stderr, "usage: test_cuda_model --bench PRESET BATCH SEQ STEPS PRECISION "
		                "[RECOMPUTE [VOCAB]]\n");
		return 2;
	}
	llm_model_config c = { .vocab_size = argc > 8 ? atoi(argv[8]) : 32000 };
	int Bn = atoi(argv[3]), Tn = atoi(argv[4]), steps = atoi(argv[5]), prec, rec = 0;
	if (llm_model_preset(&c, argv[2]) || llm_precision_parse(argv[6], &prec) ||
	    (argc > 7 && llm_recompute_parse(argv[7], &rec)) || Bn <= 0 || Tn <= 0 || steps <= 0) {
		fprintf(stderr, "test_cuda_model: %s\n", llm_last_error());
		return 2;
	}
	if (Tn > c.max_position_embeddings)
		c.max_position_embeddings = Tn;
	if (!llm_cuda_available()) {
		printf("{\"skipped\": \"no CUDA device\"}\n");
		return 0;
	}
	llm_model *m = llm_model_new(&c);
	llm_model_init(m, 1);
	llm_cuda_options o;
	llm_cuda_options_init(&o);
	o.precision = prec;
	o.recompute = rec;
	llm_cudamodel *g;
	size_t N = (size_t)Bn * Tn;
	int32_t *x = malloc(N * 4), *y = malloc(N * 4);
	llm_rng r;
	llm_rng_seed(&r, 3);
	double *dt = malloc((size_t)(steps + 3) * sizeof *dt), loss = 0;
	llm_optim_config oc;
	llm_optim_defaults(&oc);
	int rc = llm_cudamodel_new(&g, m, &o);
	if (!rc)
		rc = llm_cudamodel_set_params(g, llm_model_params(m));
	for (int s = 0; s < steps + 3 && !rc; s++) {
		for (size_t i = 0; i < N; i++) {
			x[i] = (int32_t)llm_rng_below(&r, (uint64_t)c.vocab_size);
			y[i] = (int32_t)llm_rng_below(&r, (uint64_t)c.vocab_size);
		}
		double t0 = now();
		llm_cuda_stepinfo info;
		if ((rc = llm_cudamodel_zero_grad(g)) ||
		    (rc = llm_cudamodel_train_micro(g, x, y, Bn, Tn, 1.0f / (float)N, 1, &loss, NULL)) ||
		    (rc = llm_cudamodel_step(g, &oc, 3e-4, s + 1, &info)))
			break;
		dt[s] = now() - t0; /* the step ends with a device-to-host copy: work is done */
	}
	if (rc) {
		fprintf(stderr, "test_cuda_model: %s\n", llm_last_error());
		return 1;
	}
	qsort(dt + 3, (size_t)steps, sizeof *dt, cmp_double); /* 3 warm-up steps left out */
	double med = dt[3 + steps / 2], tps = (double)N / med, peak = 0;
	char name[128];
	int sms;
	llm_cuda_device_info(name, sizeof name, &sms, &peak);
	double fpt = llm_model_flops_per_token(&c, Tn);
	printf("{\"impl\": \"llmkit\", \"device\": \"%s\", \"preset\": \"%s\", \"params\": %lld, "
	       "\"batch\": %d, \"seq\": %d, \"precision\": \"%s\", \"recompute\": \"%s\", "
	       "\"step_s\": %.6f, \"tokens_per_s\": %.1f, \"mfu\": %.4f, \"peak_tflops\": %.0f, "
	       "\"loss\": %.4f, \"gpu_mem_mb\": %.0f}\n",
	       name, argv[2], (long long)llm_model_config_params(&c), Bn, Tn, llm_precision_name(prec),
	       llm_recompute_name(rec), med, tps, peak > 0 ? fpt * tps / peak : 0, peak / 1e12, loss,
	       llm_cudamodel_memory(g) / 1048576.0);
	llm_cudamodel_free(g);
	llm_model_free(m);
	free(x), free(y), free(dt);
	return 0;
}

int main(int argc, char **argv)
{
	llm_msg_init("test_cuda_model");
	if (argc > 1 && strcmp(argv[1], "--bench") == 0)
		return bench(argc, argv);
	if (llm_cuda_available())
		setup();
	RUN(test_fp32_matches_cpu);
	RUN(test_bf16_matches_cpu);
	RUN(test_recompute_is_exact);
	RUN(test_deterministic);
	RUN(test_fp16_and_mixed_train);
	RUN(test_eval_matches_cpu);
	free(cpu_grad1);
	return unit_done();
}

#else /* built without CUDA */

static void test_cuda_model(void)
{
	unit_skip("built without CUDA");
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--bench") == 0) {
		printf("{\"skipped\": \"built without CUDA\"}\n");
		return 0;
	}
	RUN(test_cuda_model);
	return unit_done();
}

#endif
