/*
 * test_diagnose.c — the loss-curve detectors (lib/model/diagnose.h): each on a synthetic curve
 * that has its pattern (it must find it, with the steps of the evidence) and on curves that do
 * not: a noisy synthetic healthy run and the logs of real healthy llm-train runs
 * (tests/data/report), on which no detector may raise an alarm.
 */
#include <stdint.h>
#include <unistd.h>

#include "core/io.h"
#include "model/diagnose.h"
#include "model/runlog.h"
#include "unit.h"

/* A deterministic Gaussian (xorshift64* and Box-Muller), for the noise of a curve. */
static uint64_t rng = 88172645463325252ull;

static double uniform(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (double)((rng * 2685821657736338717ull) >> 11) / 9007199254740992.0 + 1e-300;
}

static double gauss(void)
{
	return sqrt(-2 * log(uniform())) * cos(6.283185307179586 * uniform());
}

/* A healthy run of n steps: the loss falls from 8 towards 3 with noise, the smoothed loss
 * follows it, the learning rate warms up and decays on a cosine, validation every 50 steps
 * falls with the training loss; memory and the longest sequence stay flat. shape, when not
 * NULL, then changes step s (a row is set while it is the last one: setting an earlier step
 * would drop the rows after it, as a step logged again does). */
static double healthy_loss(int64_t s, double noise)
{
	return 3 + 5 * exp(-(double)s / 150) + noise * gauss();
}

typedef void shape_fn(llm_runlog *rl, int64_t s);

static llm_runlog *shaped(int64_t n, double noise, shape_fn *shape)
{
	llm_runlog *rl = llm_runlog_new();
	double sm = 0;
	for (int64_t s = 1; s <= n; s++) {
		double x = healthy_loss(s, noise);
		sm = s == 1 ? x : 0.99 * sm + 0.01 * x;
		llm_runlog_set(rl, s, "loss", x);
		llm_runlog_set(rl, s, "smoothed_loss", sm);
		llm_runlog_set(rl, s, "lr", s < 20 ? 1e-3 * (double)s / 20 :
		               1e-4 + 0.45e-3 * (1 + cos(3.14159 * (double)s / (double)n)));
		llm_runlog_set(rl, s, "grad_norm", 0.8 + 0.1 * gauss());
		llm_runlog_set(rl, s, "clip_factor", 1);
		llm_runlog_set(rl, s, "mem_mb", 900 + 0.5 * gauss());
		llm_runlog_set(rl, s, "longest_seq", 100 + (double)(s % 28));
		llm_runlog_set(rl, s, "batch_id", (double)(s - 1));
		if (s % 50 == 0)
			llm_runlog_set(rl, s, "val_loss", 3.1 + 5 * exp(-(double)s / 150) +
			               0.01 * gauss());
		if (shape)
			shape(rl, s);
	}
	llm_runlog_set_train_num(rl, "accum", 1);
	llm_runlog_set_train_num(rl, "clip", 1);
	llm_runlog_set_train_num(rl, "seq_len", 128);
	llm_runlog_set_train_num(rl, "batch", 8);
	llm_runlog_set_train_num(rl, "world_size", 1);
	return rl;
}

static llm_runlog *healthy(int64_t n, double noise)
{
	return shaped(n, noise, NULL);
}

/* The findings of one detector on rl; the first one's line into line (when any). */
static size_t run_one(llm_detector_fn *fn, const llm_runlog *rl, llm_finding *first,
                      llm_buf *line)
{
	llm_findings f;
	llm_findings_init(&f);
	fn(rl, &f);
	size_t n = f.n;
	llm_buf_reset(line);
	if (n) {
		*first = f.v[0];
		llm_finding_format(&f.v[0], line);
		first->evidence = first->cause = first->check = NULL;
		printf("# %s\n", line->p);
	}
	llm_findings_release(&f);
	return n;
}

/* Whether line holds s. */
static int has(const llm_buf *line, const char *s)
{
	return line->p && strstr(line->p, s) != NULL;
}

static void test_healthy_synthetic(void)
{
	for (int64_t n = 100; n <= 4000; n *= 2) {
		llm_runlog *rl = healthy(n, 0.05);
		llm_findings f;
		llm_findings_init(&f);
		CHECK_EQ_INT(llm_diagnose(rl, &f), 0);
		for (size_t i = 0; i < f.n; i++) {
			llm_buf b = LLM_BUF_INIT;
			llm_finding_format(&f.v[i], &b);
			printf("#   false alarm at %lld steps: %s\n", (long long)n, b.p);
			llm_buf_release(&b);
		}
		llm_findings_release(&f);
		llm_runlog_free(rl);
	}
}

/* Too few rows, or none: every detector finds nothing and does not fail. */
static void test_short_and_empty(void)
{
	llm_runlog *rl = llm_runlog_new();
	llm_findings f;
	llm_findings_init(&f);
	CHECK_EQ_INT(llm_diagnose(rl, &f), 0);
	llm_runlog_set(rl, 1, "loss", 5);
	llm_runlog_set(rl, 2, "loss", 4);
	CHECK_EQ_INT(llm_diagnose(rl, &f), 0);
	llm_findings_release(&f);
	llm_runlog_free(rl);
}

/* A loss that drops by 0.3 every 200 steps and creeps back up between (each epoch's batches
 * seen again). */
static void stairs(llm_runlog *rl, int64_t s)
{
	llm_runlog_set(rl, s, "loss", 4 - 0.3 * (double)(s / 200) + 0.0002 * (double)(s % 200) +
	               0.02 * gauss());
}

static void test_stair_steps(void)
{
	llm_runlog *rl = shaped(1000, 0.02, stairs);
	llm_finding f;
	llm_buf line = LLM_BUF_INIT;
	CHECK_EQ_INT(run_one(llm_diagnose_stair_steps, rl, &f, &line), 1);
	CHECK(has(&line, "stair_steps: the loss drops by 0.3"));
	CHECK(f.first >= 195 && f.first <= 205 && f.last >= 795 && f.last <= 805);
	int period = 0;
	CHECK(line.p && sscanf(strstr(line.p, "every ") ? strstr(line.p, "every ") : "",
	                       "every %d steps", &period) == 1);
	CHECK(period >= 198 && period <= 202);
	CHECK(has(&line, "sampler"));
	llm_runlog_free(rl);
	rl = healthy(1000, 0.05);
	CHECK_EQ_INT(run_one(llm_diagnose_stair_steps, rl, &f, &line), 0);
	llm_runlog_free(rl);
	llm_buf_release(&line);
}

/* A smooth descent logged with 6 digits (as llm-train's JSON or a CSV export may round it):
 * more than half the level shifts are exactly the local trend, so the median absolute
 * deviation is 0 and, measured by it, every rounding was a drop of "inf times its noise" on a
 * comb of them. No detector may raise an alarm. */
static void test_rounded_descent(void)
{
	for (int64_t n = 4000; n <= 64000; n *= 4) {
		llm_runlog *rl = llm_runlog_new();
		for (int64_t s = 1; s <= n; s++)
			llm_runlog_set(rl, s, "loss",
			               round(1e6 * (3 + 5 * exp(-(double)s / ((double)n / 10)))) / 1e6);
		llm_findings f;
		llm_findings_init(&f);
		CHECK_EQ_INT(llm_diagnose(rl, &f), 0);
		for (size_t i = 0; i < f.n; i++) {
			llm_buf b = LLM_BUF_INIT;
			llm_finding_format(&f.v[i], &b);
			printf("#   false alarm at %lld steps: %s\n", (long long)n, b.p);
			llm_buf_release(&b);
		}
		llm_findings_release(&f);
		llm_runlog_free(rl);
	}
}

/* A saw-tooth of period 8 over the descent (4 micro-batches of accumulation, clipped hard):
 * the loss ramps up by 0.2 over a period and falls back. */
static void saw(llm_runlog *rl, int64_t s)
{
	llm_runlog_set(rl, s, "loss", healthy_loss(s, 0.02) + 0.2 * ((double)(s % 8) / 8 - 0.5));
	llm_runlog_set(rl, s, "clip_factor", 0.2);
}

static void test_sawtooth(void)
{
	llm_runlog *rl = shaped(1000, 0.02, saw);
	llm_runlog_set_train_num(rl, "accum", 4);
	llm_runlog_set_train_num(rl, "clip", 0.1);
	llm_finding f;
	llm_buf line = LLM_BUF_INIT;
	CHECK_EQ_INT(run_one(llm_diagnose_sawtooth, rl, &f, &line), 1);
	CHECK(has(&line, "period of 8 steps"));
	CHECK(has(&line, "a multiple or divisor of the accumulation of 4"));
	CHECK(has(&line, "clipped on 100% of these steps (clip 0.1)"));
	CHECK(has(&line, "--clip"));
	llm_runlog_free(rl);
	rl = healthy(1000, 0.05);
	CHECK_EQ_INT(run_one(llm_diagnose_sawtooth, rl, &f, &line), 0);
	llm_runlog_free(rl);
	llm_buf_release(&line);
}

/* The loss reaches its low at step 600 and climbs 10% by the end, the learning rate still at
 * its peak. */
static void climb(llm_runlog *rl, int64_t s)
{
	if (s > 600)
		llm_runlog_set(rl, s, "loss", healthy_loss(s, 0.02) + 0.3 * (double)(s - 600) / 400);
	llm_runlog_set(rl, s, "lr", 1e-3);
}

static void test_late_climb(void)
{
	llm_runlog *rl = shaped(1000, 0.02, climb);
	llm_runlog_set(rl, 1001, "loss", INFINITY); /* then collapses */
	llm_finding f;
	llm_buf line = LLM_BUF_INIT;
	CHECK_EQ_INT(run_one(llm_diagnose_late_climb, rl, &f, &line), 1);
	CHECK(has(&line, "late_climb: the loss climbs from its low"));
	CHECK(has(&line, "collapses at step 1001"));
	CHECK(has(&line, "100% of its peak"));
	CHECK(has(&line, "--min-lr"));
	CHECK(f.first >= 550 && f.first <= 650 && f.last == 1001);
	llm_runlog_free(rl);
	rl = healthy(1000, 0.05);
	CHECK_EQ_INT(run_one(llm_diagnose_late_climb, rl, &f, &line), 0);
	llm_runlog_free(rl);
	llm_buf_release(&line);
}

/* A plateau at 3.5 from step 200. */
static void plateau(llm_runlog *rl, int64_t s)
{
	if (s >= 200)
		llm_runlog_set(rl, s, "loss", 3.5 + 0.01 * gauss());
}

static void test_divergence(void)
{
	/* The plateau, then a step skipped as non-finite (its batches named by the event), then
	 * the loss is not finite to the end. */
	llm_runlog *rl = shaped(300, 0.02, plateau);
	static const char ev[] = "{\"step\": 301, \"event\": \"nonfinite_skipped\", "
	                         "\"batches\": [600, 601], \"loss\": null}";
	CHECK_EQ_INT(llm_runlog_add_line(rl, ev, sizeof ev - 1), LLM_OK);
	for (int64_t s = 302; s <= 310; s++)
		llm_runlog_set(rl, s, "loss", INFINITY);
	llm_finding f;
	llm_buf line = LLM_BUF_INIT;
	CHECK_EQ_INT(run_one(llm_diagnose_divergence, rl, &f, &line), 1);
	CHECK(has(&line, "steps 301-310: divergence: 10 steps"));
	CHECK(has(&line, "after a plateau at 3.5"));
	CHECK(has(&line, "batches 600,601"));
	CHECK(has(&line, "--skip-batches 600,601"));
	llm_runlog_free(rl);
	/* Without the event, the batch ids of the row (batch_id, accum x world_size of them). */
	rl = healthy(300, 0.02);
	llm_runlog_set_train_num(rl, "accum", 2);
	llm_runlog_set(rl, 301, "loss", INFINITY);
	llm_runlog_set(rl, 301, "batch_id", 600);
	CHECK_EQ_INT(run_one(llm_diagnose_divergence, rl, &f, &line), 1);
	CHECK(has(&line, "step 301: divergence: 1 step"));
	CHECK(has(&line, "the loss stayed so to the last step logged; batches 600,601"));
	llm_runlog_free(rl);
	rl = healthy(300, 0.05);
	CHECK_EQ_INT(run_one(llm_diagnose_divergence, rl, &f, &line), 0);
	llm_runlog_free(rl);
	llm_buf_release(&line);
}

/* Per-rank losses: the healthy loss plus each rank's own noise, rank `off` shifted by `by`;
 * with `same`, every rank logs the same value. */
static int ranks_n, ranks_off, ranks_same;
static double ranks_by;

static void per_rank(llm_runlog *rl, int64_t s)
{
	double base = healthy_loss(s, 0);
	for (int r = 0; r < ranks_n; r++) {
		char key[32];
		snprintf(key, sizeof key, "loss_rank_%d", r);
		llm_runlog_set(rl, s, key, base + (ranks_same ? 0 : 0.05 * gauss()) +
		               (r == ranks_off ? ranks_by : 0));
	}
}

static llm_runlog *ranks(int R, int off, double by, int same)
{
	ranks_n = R, ranks_off = off, ranks_by = by, ranks_same = same;
	return shaped(500, 0.05, per_rank);
}

static void test_rank_desync(void)
{
	llm_finding f;
	llm_buf line = LLM_BUF_INIT;
	llm_runlog *rl = ranks(4, 2, 0.3, 0);
	CHECK_EQ_INT(run_one(llm_diagnose_rank_desync, rl, &f, &line), 1);
	CHECK(has(&line, "rank 2's loss is above the other ranks' by 0."));
	CHECK(has(&line, "desynchronisation"));
	llm_runlog_free(rl);
	rl = ranks(2, 1, -0.3, 0);
	CHECK_EQ_INT(run_one(llm_diagnose_rank_desync, rl, &f, &line), 1);
	CHECK(has(&line, "rank 0's loss is above rank 1's by 0."));
	llm_runlog_free(rl);
	rl = ranks(2, -1, 0, 1);
	CHECK_EQ_INT(run_one(llm_diagnose_rank_desync, rl, &f, &line), 1);
	CHECK(has(&line, "the same loss, bit for bit, on 500 of 500 steps"));
	llm_runlog_free(rl);
	rl = ranks(4, -1, 0, 0);
	CHECK_EQ_INT(run_one(llm_diagnose_rank_desync, rl, &f, &line), 0);
	llm_runlog_free(rl);
	llm_buf_release(&line);
}

/* Step 321's memory jumps; step 400's sequence is the longest by far; the first two steps'
 * memory grows (allocations settling). */
static void mem_jump(llm_runlog *rl, int64_t s)
{
	if (s == 321) {
		llm_runlog_set(rl, s, "mem_mb", 1500);
		llm_runlog_set(rl, s, "longest_seq", 128);
	}
}

static void long_seq(llm_runlog *rl, int64_t s)
{
	if (s == 400)
		llm_runlog_set(rl, s, "longest_seq", 4096);
}

static void mem_warmup(llm_runlog *rl, int64_t s)
{
	if (s <= 2)
		llm_runlog_set(rl, s, "mem_mb", (double)s * 300);
}

static void test_memory_jump(void)
{
	llm_finding f;
	llm_buf line = LLM_BUF_INIT;
	llm_runlog *rl = shaped(500, 0.05, mem_jump);
	CHECK_EQ_INT(run_one(llm_diagnose_memory_jump, rl, &f, &line), 1);
	CHECK(has(&line, "step 321: memory_jump: memory jumps to 1500 MiB"));
	CHECK(has(&line, "the longest sequence is 128 tokens"));
	CHECK(has(&line, "in batch 320"));
	CHECK(has(&line, "--skip-batches"));
	llm_runlog_free(rl);
	/* Unpacked sequences (no seq_len): the longest sequence alone names it. */
	rl = shaped(500, 0.05, long_seq);
	llm_runlog_set_train_num(rl, "seq_len", NAN);
	CHECK_EQ_INT(run_one(llm_diagnose_memory_jump, rl, &f, &line), 1);
	CHECK(has(&line, "step 400: memory_jump: the longest sequence is 4096 tokens"));
	llm_runlog_free(rl);
	/* Packed into windows of seq_len: a longest sequence within it is no jump. */
	rl = shaped(500, 0.05, long_seq);
	llm_runlog_set_train_num(rl, "seq_len", 8192);
	CHECK_EQ_INT(run_one(llm_diagnose_memory_jump, rl, &f, &line), 0);
	llm_runlog_free(rl);
	rl = shaped(500, 0.05, mem_warmup);
	CHECK_EQ_INT(run_one(llm_diagnose_memory_jump, rl, &f, &line), 0);
	llm_runlog_free(rl);
	llm_buf_release(&line);
}

/* Validation falls to step 400 and climbs after, while the training loss goes on down; 10
 * passes over the train split by the end. */
static void overfits(llm_runlog *rl, int64_t s)
{
	if (s > 400 && s % 50 == 0)
		llm_runlog_set(rl, s, "val_loss", 3.1 + 5 * exp(-400.0 / 150) + 0.001 * (double)(s - 400));
	llm_runlog_set(rl, s, "tokens", 1000 * (double)s);
}

/* Both losses rise together: not overfitting. */
static void both_rise(llm_runlog *rl, int64_t s)
{
	llm_runlog_set(rl, s, "smoothed_loss", 3 + 0.001 * (double)s);
	if (s % 50 == 0)
		llm_runlog_set(rl, s, "val_loss", 3.1 + 0.001 * (double)s);
}

static void test_overfit(void)
{
	llm_runlog *rl = shaped(1000, 0.05, overfits);
	llm_runlog_set_train_num(rl, "train_tokens", 1e5);
	llm_finding f;
	llm_buf line = LLM_BUF_INIT;
	CHECK_EQ_INT(run_one(llm_diagnose_overfit, rl, &f, &line), 1);
	CHECK(has(&line, "-1000: overfit: the validation loss rises"));
	CHECK(f.first >= 400 && f.first <= 450); /* the low, of 3-evaluation medians */
	CHECK(has(&line, "10 passes over the train split"));
	CHECK(has(&line, "--decontaminate"));
	llm_runlog_free(rl);
	rl = shaped(1000, 0.05, both_rise);
	CHECK_EQ_INT(run_one(llm_diagnose_overfit, rl, &f, &line), 0);
	llm_runlog_free(rl);
	rl = healthy(1000, 0.05);
	CHECK_EQ_INT(run_one(llm_diagnose_overfit, rl, &f, &line), 0);
	llm_runlog_free(rl);
	llm_buf_release(&line);
}

/* A run directory of tests/data/report: NAME.metrics.jsonl.zst and NAME.train.json copied into
 * a fresh directory, opened as llm-report opens one. */
static llm_runlog *real_run(const char *name, char *dir)
{
	strcpy(dir, "/tmp/test_diagnose.XXXXXX");
	if (!mkdtemp(dir))
		return NULL;
	char src[512], dst[600];
	const char *parts[][2] = { { "metrics.jsonl.zst", "metrics.jsonl" },
	                           { "train.json", "train.json" } };
	for (int i = 0; i < 2; i++) {
		snprintf(src, sizeof src, "tests/data/report/%s.%s", name, parts[i][0]);
		snprintf(dst, sizeof dst, "%s/%s", dir, parts[i][1]);
		llm_reader *r;
		if (llm_reader_open(&r, unit_path(src)) != LLM_OK)
			return NULL;
		llm_buf all = LLM_BUF_INIT;
		char *line;
		size_t len;
		while (llm_reader_line(r, &line, &len) == LLM_OK) {
			llm_buf_add(&all, line, len);
			llm_buf_addc(&all, '\n');
		}
		llm_reader_free(r);
		int rc = llm_write_file(dst, all.p, all.len);
		llm_buf_release(&all);
		if (rc != LLM_OK)
			return NULL;
	}
	llm_runlog *rl;
	return llm_runlog_open(&rl, dir) == LLM_OK ? rl : NULL;
}

static void remove_run(const char *dir)
{
	char p[600];
	snprintf(p, sizeof p, "%s/metrics.jsonl", dir);
	unlink(p);
	snprintf(p, sizeof p, "%s/train.json", dir);
	unlink(p);
	rmdir(dir);
}

static void test_real_healthy_runs(void)
{
	static const char *const runs[] = { "demo", "smoke-seed7", "tiny-accum2", "tiny-clip",
		                            "tiny-few" };
	for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
		char dir[64];
		llm_runlog *rl = real_run(runs[i], dir);
		CHECK(rl != NULL);
		if (!rl)
			continue;
		CHECK(llm_runlog_rows(rl) >= 500);
		llm_findings f;
		llm_findings_init(&f);
		size_t n = llm_diagnose(rl, &f);
		CHECK_EQ_INT(n, 0);
		for (size_t k = 0; k < f.n; k++) {
			llm_buf b = LLM_BUF_INIT;
			llm_finding_format(&f.v[k], &b);
			printf("#   false alarm on %s: %s\n", runs[i], b.p);
			llm_buf_release(&b);
		}
		llm_findings_release(&f);
		llm_runlog_free(rl);
		remove_run(dir);
	}
}

/* A real run that overfits: the overfit detector, and only it, names it. */
static void test_real_overfit(void)
{
	char dir[64];
	llm_runlog *rl = real_run("overfit-accum4", dir);
	CHECK(rl != NULL);
	if (!rl)
		return;
	llm_findings f;
	llm_findings_init(&f);
	CHECK_EQ_INT(llm_diagnose(rl, &f), 1);
	if (f.n) {
		CHECK_STR(f.v[0].name, "overfit");
		CHECK_EQ_INT(f.v[0].first, 325);
	}
	llm_findings_release(&f);
	llm_runlog_free(rl);
	remove_run(dir);
}

int main(void)
{
	RUN(test_healthy_synthetic);
	RUN(test_short_and_empty);
	RUN(test_stair_steps);
	RUN(test_rounded_descent);
	RUN(test_sawtooth);
	RUN(test_late_climb);
	RUN(test_divergence);
	RUN(test_rank_desync);
	RUN(test_memory_jump);
	RUN(test_overfit);
	RUN(test_real_healthy_runs);
	RUN(test_real_overfit);
	return unit_done();
}
