/*
 * train.c — the training run of train.h.
 *
 * The step is cut into the decisions it makes, in order: draw and differentiate (accumulate),
 * reduce, judge (non-finite, spike, rollback), update, measure. Everything saved in a
 * checkpoint lives in t->st (trainstate.h) so that save and restore are one struct each way;
 * what is not saved (the loaders' open files, the logs, the validation batches) is rebuilt by
 * open from the options and the checkpoint.
 */
#include "train.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ckpt.h"
#include "core/err.h"
#include "core/hash.h"
#include "core/io.h"
#include "core/json.h"
#include "data/loader.h"
#include "data/shard.h"
#include "gpu.h"
#include "hf.h"
#include "mpirt.h"
#include "tok/bpe.h"
#include "trainlog.h"
#include "trainstate.h"

struct llm_trainer {
	llm_train_options o;
	llm_model_config cfg;
	llm_model *m;
	llm_backend *be;
	llm_loader *train, *val;
	float *am, *av;
	int32_t *x, *y, *vx, *vy;
	int nval;
	llm_trainlog *log;       /* rank 0 */
	int lock_fd;             /* rank 0: the flock on run_dir/train.lock */
	char *ckpt_root, *manifest_path;
	char *tokenizer;         /* o.tokenizer's bytes, for run_dir/tokenizer.json */
	size_t tokenizer_len;
	llm_bpe *bpe;            /* o.tokenizer, until its tokenizer_config.json is made */
	llm_buf tok_config;      /* checkpoints' tokenizer_config.json; empty: none */
	double flops_tok;
	llm_trainstate st;       /* what a checkpoint saves */
	int fault_done;
	int64_t skips_in_a_row;
	double last_loss, last_val;
};

void llm_train_options_init(llm_train_options *o)
{
	*o = (llm_train_options){ .model = "tiny", .run_dir = "run", .seed = 1, .steps = 1000,
		                  .batch = 8, .seq = 256, .accum = 1, .eval_every = 100,
		                  .eval_batches = 8, .spike_k = 2.0, .spike_warmup = 50,
		                  .max_skips = 20, .ckpt_every = 100, .keep = 3, .command = "" };
	llm_optim_defaults(&o->opt);
	llm_backend_options_init(&o->backend);
}

int llm_train_options_resolve(llm_train_options *o)
{
	llm_model_config c = { .vocab_size = 1 };
	if (!o->config && llm_model_preset(&c, o->model) != LLM_OK)
		return LLM_EINVAL;
	llm_backend_options *b = &o->backend;
	int rc = llm_device_resolve(b->device, &b->device);
	if (rc != LLM_OK)
		return rc;
	if (b->device == LLM_DEVICE_CPU)
		b->precision = LLM_PREC_FP32;
	if (o->opt.min_lr < 0)
		o->opt.min_lr = o->opt.lr / 10;
	if (o->opt.total == 0)
		o->opt.total = o->steps;
	if (o->opt.total <= o->opt.warmup)
		o->opt.total = o->opt.warmup + 1;
	return LLM_OK;
}

int llm_train_plateau_parse(llm_train_options *o, const char *s)
{
	int used = 0;
	if (sscanf(s, "%d,%lf,%lf%n", &o->plateau_n, &o->plateau_delta, &o->plateau_factor,
	           &used) != 3 || s[used] || o->plateau_n < 1 || !(o->plateau_delta >= 0) ||
	    !(o->plateau_factor > 0 && o->plateau_factor <= 1))
		return llm_fail(LLM_EINVAL, "expected N,DELTA,FACTOR (e.g. 5,0.05,0.5), not '%s'", s);
	return LLM_OK;
}

uint64_t llm_train_val_seed(uint64_t seed)
{
	return seed ^ 0x76616cULL; /* "val" */
}

static int rank0(const llm_trainer *t)
{
	return t->o.backend.rank == 0;
}

static int world(const llm_trainer *t)
{
	return t->o.backend.world;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double wall(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double rss_mb(void)
{
	long pages = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &res) != 2)
			res = 0;
		fclose(f);
	}
	return res * (double)sysconf(_SC_PAGESIZE) / (1 << 20);
}

/* ---- checkpoints ----------------------------------------------------------------------- */

/* Every parameter and moment finite: a checkpoint holding a NaN would skip every step. */
static int check_finite(const llm_trainer *t, const char *dir)
{
	const float *arrays[3] = { llm_model_params(t->m), t->am, t->av };
	static const char *const file[3] = { "model", "optimizer", "optimizer" };
	static const char *const what[3] = { "", "exp_avg of ", "exp_avg_sq of " };
	char path[4096];
	int rc = LLM_OK;
	for (int k = 0; k < 3 && !rc; k++) {
		snprintf(path, sizeof path, "%s/%s.safetensors", dir, file[k]);
		rc = llm_model_check_finite(t->m, arrays[k], path, what[k]);
	}
	return rc;
}

/* The options a checkpoint must be resumed with. */
static int check_same(const llm_trainer *t, const llm_trainstate *s, const char *dir)
{
	const llm_train_options *o = &t->o;
	struct { const char *opt; int64_t was, now; } same[] = {
		{ "--batch", s->batch, o->batch },   { "--seq-len", s->seq_len, o->seq },
		{ "--accum", s->accum, o->accum },   { "processes", s->world_size, world(t) },
		{ "--seed", (int64_t)s->seed, (int64_t)o->seed },
	};
	for (size_t i = 0; i < sizeof same / sizeof *same; i++)
		if (same[i].was != same[i].now)
			return llm_fail(LLM_EINVAL, "%s: resuming needs the same %s as the checkpoint (%lld, "
			                "not %lld)", dir, same[i].opt, (long long)same[i].was,
			                (long long)same[i].now);
	if (strcmp(s->mix, o->mix ? o->mix : "") != 0 || s->weighted != !!o->weighted)
		return llm_fail(LLM_EINVAL, "%s: resuming needs the same --mix and --weighted as the "
		                "checkpoint", dir);
	return LLM_OK;
}

int llm_trainer_restore(llm_trainer *t, const char *dir, int full)
{
	llm_trainstate s;
	llm_trainstate_init(&s);
	int rc = llm_trainstate_load(&s, dir);
	if (!rc)
		rc = llm_ckpt_load_model(dir, t->m);
	if (!rc)
		rc = llm_ckpt_load_optim(dir, t->m, t->am, t->av);
	if (!rc)
		rc = check_finite(t, dir);
	if (!rc && full)
		rc = check_same(t, &s, dir);
	if (rc) {
		llm_trainstate_release(&s);
		return rc;
	}
	llm_trainstate *st = &t->st;
	if (full) {
		/* The skip list and the counters of what happened after the checkpoint stay on a
		 * rollback; on a resume they are the checkpoint's. */
		uint64_t *sk = st->skip;
		st->skip = s.skip;
		st->nskip = s.nskip;
		s.skip = sk;
		st->nonfinite_steps = s.nonfinite_steps;
		st->spikes = s.spikes;
		st->rollbacks = s.rollbacks;
		st->skipped_steps = s.skipped_steps;
	}
	st->step = s.step;
	st->tokens = s.tokens;
	st->adam_t = s.adam_t;
	st->smoothed_loss = s.smoothed_loss;
	st->smoothed_n = s.smoothed_n;
	st->lr_factor = s.lr_factor;
	st->plateau_best = s.plateau_best;
	st->plateau_rises = s.plateau_rises;
	llm_loader_state ls = { .position = s.data_position, .rng = s.data_rng };
	llm_loader_set_state(t->train, &ls);
	llm_lossscale *sc = llm_backend_lossscale(t->be);
	if (sc->enabled) {
		sc->scale = s.loss_scale;
		sc->good_steps = s.loss_scale_good_steps;
	}
	llm_trainstate_release(&s);
	return llm_backend_upload(t->be);
}

int llm_trainer_save(llm_trainer *t, int full, char **path)
{
	if (path)
		*path = NULL;
	int rc = llm_backend_download(t->be, full);
	if (rc)
		return rc;
	if (rank0(t)) {
		llm_trainstate *st = &t->st;
		llm_loader_state ls;
		llm_loader_get_state(t->train, &ls);
		st->data_position = ls.position;
		st->data_rng = ls.rng;
		const llm_lossscale *sc = llm_backend_lossscale(t->be);
		st->loss_scale = sc->scale;
		st->loss_scale_good_steps = sc->good_steps;
		llm_buf b = LLM_BUF_INIT;
		llm_trainstate_format(st, &b);
		char *dir = NULL;
		/* Beside the weights, what makes it a whole Hugging Face model directory (hf.h). */
		llm_buf gen = LLM_BUF_INIT;
		llm_hf_generation_config(&t->cfg, &gen);
		llm_ckpt_file extra[3] = { { "generation_config.json", gen.p, gen.len },
			                   { "tokenizer.json", t->tokenizer, t->tokenizer_len },
			                   { "tokenizer_config.json", t->tok_config.p, t->tok_config.len } };
		rc = llm_ckpt_save(t->ckpt_root, st->step, t->m, full ? t->am : NULL, full ? t->av : NULL,
		                   b.p, b.len, extra, t->tok_config.len ? 3 : 1, &dir);
		llm_buf_release(&gen);
		llm_buf_release(&b);
		if (!rc)
			rc = llm_ckpt_prune(t->ckpt_root, full, t->o.keep);
		if (!rc)
			llm_debug("checkpoint %s", dir);
		if (path && !rc)
			*path = dir;
		else
			free(dir);
	}
	/* A rollback on any rank may read it next; and a failure stops every rank. */
	int rc2 = llm_mpirt_barrier();
	return rc ? rc : rc2;
}

/* ---- the step -------------------------------------------------------------------------- */

/* The next global micro-batch not on the skip list; copied out only when it is ours. */
static uint64_t draw(llm_trainer *t, int mine)
{
	llm_loader_state ls;
	for (;;) {
		llm_loader_get_state(t->train, &ls);
		if (!llm_trainstate_skipped(&t->st, ls.position))
			break;
		llm_loader_next(t->train, t->o.batch, t->o.seq, NULL, NULL);
	}
	return llm_loader_next(t->train, t->o.batch, t->o.seq, mine ? t->x : NULL, mine ? t->y : NULL);
}

/* Longest run of tokens between end-of-text ids in the labels of one micro-batch. */
static int longest_doc(const int32_t *y, int B, int T, uint32_t eos)
{
	int best = 0;
	for (int b = 0; b < B; b++) {
		int run = 0;
		for (int i = 0; i < T; i++) {
			run = (uint32_t)y[(size_t)b * T + i] == eos ? 0 : run + 1;
			best = run > best ? run : best;
		}
	}
	return best;
}

/* What one step measured, for its log line. */
typedef struct {
	uint64_t *ids;           /* the global micro-batches, A x W */
	double *rank_loss;       /* each rank's mean loss, W */
	double loss, gnorm, scale, clipf, lr, moved, seconds;
	int longest, applied;
} step_facts;

/* 1: the micro-batches of every rank, forward and backward, the mean loss over the ranks. */
static int accumulate(llm_trainer *t, step_facts *f)
{
	const llm_train_options *o = &t->o;
	int A = o->accum, W = world(t), B = o->batch, T = o->seq;
	float scale = 1.0f / ((float)B * T * A * W);
	double loss_sum = 0;
	for (int a = 0; a < A; a++) {
		for (int w = 0; w < W; w++)
			f->ids[a * W + w] = draw(t, w == o->backend.rank);
		int lg = longest_doc(t->y, B, T, llm_loader_eos(t->train));
		f->longest = lg > f->longest ? lg : f->longest;
		double loss;
		int rc = llm_backend_micro(t->be, t->x, t->y, B, T, scale, a == 0, a == A - 1, &loss);
		if (rc)
			return rc;
		loss_sum += loss;
	}
	/* Each rank's sum in its own slot, summed over the ranks: all of them know every rank's
	 * loss, which the log keeps (a rank whose weights drifted shows there). */
	memset(f->rank_loss, 0, (size_t)W * sizeof *f->rank_loss);
	f->rank_loss[o->backend.rank] = loss_sum;
	int rc = llm_mpirt_sum_f64(f->rank_loss, (size_t)W);
	loss_sum = 0;
	for (int w = 0; w < W; w++) {
		loss_sum += f->rank_loss[w];
		f->rank_loss[w] /= A;
	}
	f->loss = loss_sum / (A * W);
	return rc;
}

static void event(llm_trainer *t, int64_t step, const char *name, const llm_buf *members)
{
	if (t->log)
		llm_trainlog_event(t->log, step, name, members->p); /* a failure shows at close */
}

/* 3: a spike sent back to the newest full checkpoint, its batches on the skip list.
 * Returns 1 when it rolled back, 0 when there is no checkpoint to go back to. */
static int rollback(llm_trainer *t, const step_facts *f, llm_buf *ev, int *rc)
{
	char *dir = NULL;
	*rc = LLM_OK;
	if (llm_ckpt_resolve(t->ckpt_root, &dir) != LLM_OK)
		return 0;
	int64_t step1 = t->st.step + 1;
	for (int i = 0; i < t->o.accum * world(t); i++)
		llm_trainstate_skip(&t->st, f->ids[i]);
	t->st.rollbacks++;
	if ((*rc = llm_trainer_restore(t, dir, 0))) {
		free(dir);
		return 1;
	}
	llm_buf_addf(ev, ", \"to_step\": %lld", (long long)t->st.step);
	event(t, step1, "rollback", ev);
	if (rank0(t))
		llm_warn("step %lld: loss spike %.4g (smoothed %.4g): rolled back to step %lld, "
		         "skipping its batches", (long long)step1, f->loss, t->st.smoothed_loss,
		         (long long)t->st.step);
	free(dir);
	return 1;
}

/* 3: whether the step is applied; *rolled when a rollback replaced it. */
static int judge(llm_trainer *t, step_facts *f, int *spike, int *rolled, int *rc)
{
	const llm_train_options *o = &t->o;
	llm_trainstate *st = &t->st;
	int64_t step1 = st->step + 1;
	llm_buf ev = LLM_BUF_INIT;
	llm_buf_adds(&ev, "\"batches\": [");
	for (int i = 0; i < o->accum * world(t); i++)
		llm_buf_addf(&ev, "%s%llu", i ? ", " : "", (unsigned long long)f->ids[i]);
	llm_buf_adds(&ev, "], \"loss\": ");
	llm_json_put_f64(&ev, f->loss);
	int apply = 1;
	*spike = isfinite(f->loss) && st->step >= o->spike_warmup && st->smoothed_n > 0 &&
	         f->loss > o->spike_k * st->smoothed_loss;
	if (!isfinite(f->loss) || !isfinite(f->gnorm)) {
		st->nonfinite_steps++;
		apply = 0;
		event(t, step1, "nonfinite_skipped", &ev);
		if (rank0(t))
			llm_warn("step %lld: non-finite loss or gradient, step skipped", (long long)step1);
	} else if (*spike) {
		st->spikes++;
		llm_buf_adds(&ev, ", \"smoothed_loss\": ");
		llm_json_put_f64(&ev, st->smoothed_loss);
		event(t, step1, "spike", &ev);
		if (o->on_spike == LLM_SPIKE_ROLLBACK && (*rolled = rollback(t, f, &ev, rc))) {
			llm_buf_release(&ev);
			return 0;
		}
		if (o->on_spike == LLM_SPIKE_ROLLBACK && rank0(t))
			llm_warn("step %lld: loss spike but no checkpoint to roll back to; step skipped",
			         (long long)step1);
		apply = o->on_spike == LLM_SPIKE_LOG;
		if (!apply)
			st->skipped_steps++;
	}
	llm_buf_release(&ev);
	return apply;
}

/* 5: the step's line in the logs (rank 0), from what every rank measured. */
static int measure(llm_trainer *t, const step_facts *f)
{
	const llm_train_options *o = &t->o;
	const llm_trainstate *st = &t->st;
	int A = o->accum, W = world(t);
	double pnorm;
	int rc = llm_backend_param_norm(t->be, &pnorm);
	size_t nt = llm_model_ntensors(t->m);
	double *tss = o->layer_norms ? llm_malloc(nt * sizeof *tss) : NULL;
	if (!rc && tss)
		rc = llm_backend_tensor_sumsq(t->be, tss);
	if (rc || !t->log) {
		free(tss);
		return rc;
	}
	double tps = (double)o->batch * o->seq * A * W / f->seconds;
	llm_trainlog *lg = t->log;
	llm_trainlog_set(lg, "loss", f->loss);
	llm_trainlog_set(lg, "smoothed_loss", st->smoothed_loss);
	llm_trainlog_set(lg, "lr", f->lr);
	llm_trainlog_set(lg, "grad_norm", f->gnorm);
	llm_trainlog_set(lg, "clip_factor", f->clipf);
	llm_trainlog_set(lg, "param_norm", pnorm);
	if (!isnan(f->moved)) /* where the backend measures the update; 0 when skipped */
		llm_trainlog_set(lg, "update_ratio", f->applied && pnorm > 0 ? sqrt(f->moved) / pnorm : 0);
	llm_trainlog_set(lg, "loss_scale", f->scale);
	llm_trainlog_set(lg, "tokens", (double)st->tokens);
	llm_trainlog_set(lg, "tokens_per_s", tps);
	llm_trainlog_set(lg, "mfu", t->flops_tok * tps / (llm_backend_peak_flops(t->be) * W));
	llm_trainlog_set(lg, "longest_seq", f->longest);
	llm_trainlog_set(lg, "batch_id", (double)(st->step - 1) * A * W);
	llm_trainlog_set(lg, "mem_mb", rss_mb());
	llm_trainlog_set(lg, "step_s", f->seconds);
	llm_trainlog_set(lg, "nonfinite_steps", (double)st->nonfinite_steps);
	llm_trainlog_set(lg, "spikes", (double)st->spikes);
	llm_trainlog_set(lg, "rollbacks", (double)st->rollbacks);
	for (int w = 0; W > 1 && w < W; w++) {
		char key[32];
		snprintf(key, sizeof key, "loss_rank_%d", w);
		llm_trainlog_set(lg, key, f->rank_loss[w]);
	}
	if (tss) {
		const llm_model_config *c = llm_model_get_config(t->m);
		for (int l = 0; l < c->num_hidden_layers; l++) {
			double s = 0;
			for (size_t i = 0; i < nt; i++)
				if (llm_model_tensor(t->m, i)->layer == l)
					s += tss[i];
			char key[40];
			snprintf(key, sizeof key, "grad_norm_layer_%d", l);
			llm_trainlog_set(lg, key, sqrt(s));
		}
		free(tss);
	}
	return LLM_OK;
}

/* --plateau: count evaluations in a row above the best by more than delta. */
static void plateau(llm_trainer *t, double vl)
{
	const llm_train_options *o = &t->o;
	llm_trainstate *st = &t->st;
	if (!o->plateau_n || !isfinite(vl))
		return;
	if (!isfinite(st->plateau_best) || vl < st->plateau_best) {
		st->plateau_best = vl;
		st->plateau_rises = 0;
		return;
	}
	if (vl > st->plateau_best + o->plateau_delta && ++st->plateau_rises >= o->plateau_n) {
		st->lr_factor *= o->plateau_factor;
		st->plateau_rises = 0;
		llm_buf m = LLM_BUF_INIT;
		llm_buf_adds(&m, "\"lr_factor\": ");
		llm_json_put_f64(&m, st->lr_factor);
		event(t, st->step, "plateau", &m);
		llm_buf_release(&m);
	}
}

/* 1-5 of train.h: the optimizer step. *rolled when a rollback replaced it. */
static int optimizer_step(llm_trainer *t, int *rolled)
{
	const llm_train_options *o = &t->o;
	llm_trainstate *st = &t->st;
	int A = o->accum, W = world(t);
	step_facts f = { .ids = llm_malloc((size_t)A * W * sizeof *f.ids),
	                 .rank_loss = llm_malloc((size_t)W * sizeof *f.rank_loss) };
	double t_start = now();
	int rc = accumulate(t, &f);
	if (!rc)
		rc = llm_backend_grad_norm(t->be, &f.gnorm, &f.scale);
	if (rc) {
		free(f.ids);
		free(f.rank_loss);
		return rc;
	}
	int64_t step1 = st->step + 1;
	if (o->fault && o->fault_step == step1 && !t->fault_done) {
		t->fault_done = 1;
		if (o->fault == LLM_FAULT_NAN)
			f.gnorm = NAN;
		else
			f.loss *= 100;
	}
	int spike;
	f.applied = judge(t, &f, &spike, rolled, &rc);
	if (*rolled || rc) {
		free(f.ids);
		free(f.rank_loss);
		return rc;
	}
	f.lr = llm_lr_at(&o->opt, st->step) * st->lr_factor;
	f.clipf = llm_clip_factor(f.gnorm, o->opt.clip);
	f.moved = 0;
	if (f.applied) {
		st->adam_t++;
		if ((rc = llm_backend_apply(t->be, &o->opt, f.lr, st->adam_t, f.clipf, &f.moved))) {
			free(f.ids);
			free(f.rank_loss);
			return rc;
		}
		/* Spikes stay out of the average they are measured against. */
		if (!spike) {
			st->smoothed_loss = st->smoothed_n ? 0.9 * st->smoothed_loss + 0.1 * f.loss : f.loss;
			st->smoothed_n++;
		}
	}
	t->skips_in_a_row = f.applied ? 0 : t->skips_in_a_row + 1;
	f.seconds = now() - t_start;
	st->step = step1;
	st->tokens += (int64_t)o->batch * o->seq * A * W;
	t->last_loss = f.loss;
	rc = measure(t, &f);
	free(f.ids);
	free(f.rank_loss);
	return rc;
}

int llm_trainer_step(llm_trainer *t, llm_train_step *s)
{
	const llm_train_options *o = &t->o;
	const llm_trainstate *st = &t->st;
	*s = (llm_train_step){ .loss = NAN, .val_loss = NAN };
	int rc = optimizer_step(t, &s->rolled_back);
	s->step = st->step;
	if (rc || s->rolled_back)
		return rc;
	s->loss = t->last_loss;
	if (o->max_skips && t->skips_in_a_row >= o->max_skips)
		return llm_fail(LLM_EFORMAT, "step %lld: %lld steps in a row skipped (non-finite loss or "
		                "gradient, or spikes): stopping; the newest checkpoint is in %s",
		                (long long)st->step, (long long)t->skips_in_a_row, t->ckpt_root);
	if (t->nval && (st->step % o->eval_every == 0 || st->step == o->steps)) {
		if ((rc = llm_trainer_eval(t, &s->val_loss)))
			return rc;
		plateau(t, s->val_loss);
		if (t->log) {
			llm_trainlog_set(t->log, "val_loss", s->val_loss);
			llm_trainlog_set(t->log, "val_ppl", exp(s->val_loss));
		}
	}
	if (t->log && (rc = llm_trainlog_commit(t->log, st->step, wall())))
		return rc;
	if ((o->ckpt_every && st->step % o->ckpt_every == 0) || st->step == o->steps)
		s->saved = 1;
	else if (o->light_every && st->step % o->light_every == 0)
		s->saved = 2;
	return s->saved ? llm_trainer_save(t, s->saved == 1, NULL) : LLM_OK;
}

int llm_trainer_eval(llm_trainer *t, double *val)
{
	double s[2] = { 0, 0 };
	int B = t->o.batch, T = t->o.seq;
	for (int i = t->o.backend.rank; i < t->nval; i += world(t)) {
		double loss;
		int64_t n;
		size_t off = (size_t)i * B * T;
		int rc = llm_backend_eval(t->be, t->vx + off, t->vy + off, B, T, &loss, &n);
		if (rc)
			return rc;
		s[0] += loss * (double)n;
		s[1] += (double)n;
	}
	int rc = llm_mpirt_sum_f64(s, 2);
	*val = s[1] > 0 ? s[0] / s[1] : NAN;
	t->last_val = *val;
	return rc;
}

/* ---- the run directory ----------------------------------------------------------------- */

static int write_config(const llm_trainer *t)
{
	llm_buf b = LLM_BUF_INIT, p = LLM_BUF_INIT;
	llm_model_config_json(&t->cfg, &b);
	llm_buf_addf(&p, "%s/config.json", t->o.run_dir);
	int rc = llm_write_file(p.p, b.p, b.len);
	llm_buf_release(&b);
	llm_buf_release(&p);
	return rc;
}

/* One "  \"key\": number,\n" line of train.json. */
static void put_num(llm_buf *b, const char *key, double v)
{
	llm_buf_addf(b, "  \"%s\": ", key);
	llm_json_put_f64(b, v);
	llm_buf_adds(b, ",\n");
}

/* train.json: the resolved options, what the run trains on and with. */
static int write_train_json(const llm_trainer *t)
{
	const llm_train_options *o = &t->o;
	llm_buf b = LLM_BUF_INIT, p = LLM_BUF_INIT;
	llm_buf_adds(&b, "{\n  \"data\": ");
	llm_json_put_str(&b, o->data, strlen(o->data));
	llm_buf_addf(&b, ",\n  \"manifest_hash\": \"%s\",\n  \"mix\": ", t->st.manifest_hash);
	llm_json_put_str(&b, llm_loader_mix(t->train), strlen(llm_loader_mix(t->train)));
	llm_buf_addf(&b, ",\n  \"weighted\": %s,\n  \"train_tokens\": %llu,\n  \"train_documents\": "
	                 "%llu,\n  \"parameters\": %lld,\n",
	             o->weighted ? "true" : "false", (unsigned long long)llm_loader_tokens(t->train),
	             (unsigned long long)llm_loader_docs(t->train),
	             (long long)llm_model_config_params(&t->cfg));
	llm_buf_addf(&b, "  \"steps\": %lld,\n  \"batch\": %d,\n  \"seq_len\": %d,\n  \"accum\": %d,\n"
	                 "  \"world_size\": %d,\n  \"seed\": %llu,\n",
	             (long long)o->steps, o->batch, o->seq, o->accum, world(t),
	             (unsigned long long)o->seed);
	const llm_optim_config *c = &o->opt;
	/* The rates as the shortest decimal that reads back (0.0003, not 0.00029999999999999997):
	 * what was asked for, and still the exact double. */
	put_num(&b, "lr", c->lr);
	put_num(&b, "min_lr", c->min_lr);
	llm_buf_addf(&b, "  \"warmup\": %lld,\n  \"decay_steps\": %lld,\n", (long long)c->warmup,
	             (long long)c->total);
	put_num(&b, "beta1", c->beta1);
	put_num(&b, "beta2", c->beta2);
	put_num(&b, "eps", c->eps);
	put_num(&b, "weight_decay", c->weight_decay);
	put_num(&b, "clip", c->clip);
	llm_buf_addf(&b, "  \"backend\": \"%s\",\n  \"peak_flops\": %.6g,\n  \"command\": ",
	             llm_backend_name(t->be), llm_backend_peak_flops(t->be));
	llm_json_put_str(&b, o->command, strlen(o->command));
	llm_buf_adds(&b, "\n}\n");
	llm_buf_addf(&p, "%s/train.json", o->run_dir);
	int rc = llm_write_file(p.p, b.p, b.len);
	llm_buf_release(&b);
	llm_buf_release(&p);
	return rc;
}

/* The manifest itself: the shards' names, sizes and checksums this run trained on. */
static int copy_manifest(const llm_trainer *t)
{
	char *man;
	size_t len;
	int rc = llm_read_file(t->manifest_path, &man, &len);
	if (rc)
		return rc;
	llm_buf p = LLM_BUF_INIT;
	llm_buf_addf(&p, "%s/data-manifest.json", t->o.run_dir);
	rc = llm_write_file(p.p, man, len);
	llm_buf_release(&p);
	free(man);
	return rc;
}

/* The fixed validation batches, so that others (a Hugging Face model, llm-eval) can score
 * exactly what val_loss measured: one {"inputs": [...], "labels": [...]} per sequence. */
static int write_val_batches(const llm_trainer *t)
{
	if (!t->nval)
		return LLM_OK;
	llm_buf b = LLM_BUF_INIT, p = LLM_BUF_INIT;
	size_t T = (size_t)t->o.seq, n = (size_t)t->nval * t->o.batch;
	for (size_t i = 0; i < n; i++) {
		for (int k = 0; k < 2; k++) {
			const int32_t *v = (k ? t->vy : t->vx) + i * T;
			llm_buf_adds(&b, k ? "], \"labels\": [" : "{\"inputs\": [");
			for (size_t j = 0; j < T; j++)
				llm_buf_addf(&b, "%s%d", j ? ", " : "", (int)v[j]);
		}
		llm_buf_adds(&b, "]}\n");
	}
	llm_buf_addf(&p, "%s/val_batches.jsonl", t->o.run_dir);
	int rc = llm_write_file(p.p, b.p, b.len);
	llm_buf_release(&b);
	llm_buf_release(&p);
	return rc;
}

static int write_run_files(llm_trainer *t)
{
	int rc = write_config(t);
	if (!rc)
		rc = write_train_json(t);
	if (!rc)
		rc = copy_manifest(t);
	if (!rc)
		rc = write_val_batches(t);
	if (!rc && t->tokenizer) {
		llm_buf p = LLM_BUF_INIT;
		llm_buf_addf(&p, "%s/tokenizer.json", t->o.run_dir);
		rc = llm_write_file(p.p, t->tokenizer, t->tokenizer_len);
		llm_buf_reset(&p);
		llm_buf_addf(&p, "%s/tokenizer_config.json", t->o.run_dir);
		if (!rc && t->tok_config.len)
			rc = llm_write_file(p.p, t->tok_config.p, t->tok_config.len);
		llm_buf_release(&p);
	}
	if (!rc)
		rc = llm_trainlog_open(&t->log, t->o.run_dir);
	return rc;
}

/* ---- claiming the run directory --------------------------------------------------------- */

/* The files of a run that llm-train writes at the top of its run directory. */
static const char *const run_files[] = { "config.json", "train.json", "data-manifest.json",
	                                 "val_batches.jsonl", "tokenizer.json",
	                                 "tokenizer_config.json", "metrics.jsonl", "metrics.prom" };

static int is_run_file(const char *name)
{
	for (size_t i = 0; i < sizeof run_files / sizeof *run_files; i++)
		if (strcmp(name, run_files[i]) == 0)
			return 1;
	return strncmp(name, "events.out.tfevents.", 20) == 0 ||
	       strncmp(name, ".metrics.prom.tmp.", 18) == 0;
}

/* --force: the old run's files go (links themselves, never what they point to); what
 * llm-train did not write stays. */
static int clear_run(const char *dir, const char *ckpt_root)
{
	DIR *d = opendir(dir);
	if (!d)
		return llm_fail(LLM_EIO, "%s: %s", dir, strerror(errno));
	int rc = LLM_OK;
	struct dirent *e;
	while ((e = readdir(d)))
		if (is_run_file(e->d_name) && unlinkat(dirfd(d), e->d_name, 0) != 0 && errno != ENOENT &&
		    !rc)
			rc = llm_fail(LLM_EIO, "%s/%s: %s", dir, e->d_name, strerror(errno));
	closedir(d);
	return rc ? rc : llm_ckpt_clear(ckpt_root);
}

/* One process per run directory: the second one is told who holds it. */
static int lock_run(llm_trainer *t)
{
	const char *dir = t->o.run_dir;
	char path[4200], holder[256] = "";
	snprintf(path, sizeof path, "%s/train.lock", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return llm_fail(LLM_EIO, "%s: %s", path, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;
		ssize_t k = pread(fd, holder, sizeof holder - 1, 0);
		holder[k > 0 ? k : 0] = 0;
		holder[strcspn(holder, "\n")] = 0;
		close(fd);
		if (e == EWOULDBLOCK)
			return llm_fail(LLM_EIO, "%s: another llm-train is training in it (%s); wait for it, "
			                "or use another --run-dir", dir, *holder ? holder : "holder unknown");
		return llm_fail(LLM_EIO, "%s: %s", path, strerror(e));
	}
	char host[128] = "localhost";
	gethostname(host, sizeof host - 1);
	int n = snprintf(holder, sizeof holder, "pid %ld on %s\n", (long)getpid(), host);
	if (ftruncate(fd, 0) != 0 || pwrite(fd, holder, (size_t)n, 0) != n) {
		int rc = llm_fail(LLM_EIO, "%s: %s", path, strerror(errno));
		close(fd);
		return rc;
	}
	t->lock_fd = fd;
	return LLM_OK;
}

/* The run directory, made and locked; holding another run it is refused unless that run is
 * resumed or replaced (--force). */
static int claim_run_dir(llm_trainer *t)
{
	const llm_train_options *o = &t->o;
	if (mkdir(o->run_dir, 0755) != 0 && errno != EEXIST)
		return llm_fail(LLM_EIO, "%s: %s", o->run_dir, strerror(errno));
	int rc = lock_run(t);
	if (rc || o->resume)
		return rc;
	static const char *const marks[] = { "train.json", "metrics.jsonl", "ckpt" };
	for (size_t i = 0; i < sizeof marks / sizeof *marks; i++) {
		char p[4200];
		struct stat sb;
		snprintf(p, sizeof p, "%s/%s", o->run_dir, marks[i]);
		if (lstat(p, &sb) != 0)
			continue;
		if (o->force)
			return clear_run(o->run_dir, t->ckpt_root);
		return llm_fail(LLM_EINVAL, "%s holds another run (%s): --resume continues it, --force "
		                "replaces it, or use another --run-dir", o->run_dir, marks[i]);
	}
	return LLM_OK;
}

/* ---- open and close -------------------------------------------------------------------- */

/* --tokenizer: the shards' own (their tokenizer id is the XXH3-64 of its file), kept to be
 * copied into the run directory. */
static int check_tokenizer(llm_trainer *t)
{
	const char *path = t->o.tokenizer;
	llm_bpe *bpe;
	int rc = llm_bpe_load(&bpe, path, NULL, NULL, NULL);
	if (rc)
		return rc;
	uint64_t id = llm_bpe_file_id(bpe), want = t->st.tokenizer_id;
	if (want && id != want) {
		llm_bpe_free(bpe);
		return llm_fail(LLM_EINVAL, "--tokenizer %s: tokenizer id %016llx, but the shards were "
		                "made with %016llx", path, (unsigned long long)id, (unsigned long long)want);
	}
	t->bpe = bpe;
	return llm_read_file(path, &t->tokenizer, &t->tokenizer_len);
}

/* A Hugging Face tokenizer.json (a JSON object; tiktoken and GPT-2 files are not) goes into
 * every checkpoint with its tokenizer_config.json, so that a checkpoint is a model directory
 * transformers loads whole; called once the model's length is known. */
static void make_tok_config(llm_trainer *t)
{
	size_t i = 0;
	while (i < t->tokenizer_len && strchr(" \t\r\n", t->tokenizer[i]))
		i++;
	if (t->bpe && i < t->tokenizer_len && t->tokenizer[i] == '{')
		llm_hf_tokenizer_config(t->bpe, t->cfg.max_position_embeddings, &t->tok_config);
	llm_bpe_free(t->bpe);
	t->bpe = NULL;
}

static int open_data(llm_trainer *t)
{
	const llm_train_options *o = &t->o;
	int rc = llm_loader_open(&t->train, o->data, LLM_SPLIT_TRAIN, o->mix, o->weighted, o->seed);
	if (rc == LLM_EINVAL && !(o->mix && *o->mix)) /* no --mix to blame: the data has nothing */
		return llm_fail(LLM_EFORMAT, "%s: %s", o->data, llm_last_error());
	if (rc)
		return rc;
	char mpath[4096];
	struct stat sb;
	snprintf(mpath, sizeof mpath, "%s%s", o->data,
	         stat(o->data, &sb) == 0 && S_ISDIR(sb.st_mode) ? "/manifest.json" : "");
	uint64_t mh;
	if ((rc = llm_hash_file(mpath, &mh)))
		return rc;
	t->manifest_path = llm_strdup(mpath);
	snprintf(t->st.manifest_hash, sizeof t->st.manifest_hash, "%016llx", (unsigned long long)mh);
	t->st.tokenizer_id = llm_loader_tokenizer_id(t->train);
	return o->tokenizer ? check_tokenizer(t) : LLM_OK;
}

/* The model's configuration: the checkpoint's on a resume, else the file's, else a preset on
 * the shards' vocabulary. */
static int model_config(llm_trainer *t, const char *resume_dir)
{
	const llm_train_options *o = &t->o;
	int vocab = (int)llm_loader_vocab(t->train), rc;
	if (resume_dir) {
		if ((rc = llm_ckpt_read_config(resume_dir, &t->cfg)))
			return rc;
	} else if (o->config) {
		char *text;
		size_t len;
		if ((rc = llm_read_file(o->config, &text, &len)))
			return rc;
		rc = llm_model_config_parse(&t->cfg, text, len);
		free(text);
		if (rc)
			return llm_fail(rc == LLM_EINVAL ? LLM_EFORMAT : rc, "%s: %s", o->config,
			                llm_last_error());
	} else {
		t->cfg.vocab_size = vocab;
		if ((rc = llm_model_preset(&t->cfg, o->model)))
			return llm_fail(LLM_EINVAL, "--model: %s", llm_last_error());
	}
	if (t->cfg.vocab_size < vocab)
		return llm_fail(LLM_EFORMAT, "the model's vocabulary of %d is smaller than the shards' %d",
		                t->cfg.vocab_size, vocab);
	if (o->seq > t->cfg.max_position_embeddings)
		return llm_fail(LLM_EINVAL, "--seq-len %d exceeds the model's max_position_embeddings %d",
		                o->seq, t->cfg.max_position_embeddings);
	if (llm_loader_eos(t->train) != LLM_SHARD_NO_EOS && t->cfg.eos_token_id < 0)
		t->cfg.eos_token_id = (int)llm_loader_eos(t->train);
	return LLM_OK;
}

/* Fixed validation batches from their own stream: the same at every evaluation and in every
 * resumed or data-parallel run. */
static int open_val(llm_trainer *t)
{
	const llm_train_options *o = &t->o;
	if (o->eval_every <= 0)
		return LLM_OK;
	int rc = llm_loader_open(&t->val, o->data, LLM_SPLIT_VAL, NULL, 0, llm_train_val_seed(o->seed));
	if (rc == LLM_ENOTFOUND) {
		if (rank0(t))
			llm_warn("no val split in %s: evaluation is off", o->data);
		return LLM_OK;
	}
	if (rc)
		return rc;
	size_t bt = (size_t)o->batch * o->seq;
	t->nval = o->eval_batches;
	t->vx = llm_malloc(2 * (size_t)t->nval * bt * sizeof *t->vx);
	t->vy = t->vx + (size_t)t->nval * bt;
	for (int i = 0; i < t->nval; i++)
		llm_loader_next(t->val, o->batch, o->seq, t->vx + i * bt, t->vy + i * bt);
	return LLM_OK;
}

static int open_model(llm_trainer *t, const char *resume_dir)
{
	const llm_train_options *o = &t->o;
	int rc = model_config(t, resume_dir);
	if (rc)
		return rc;
	t->m = llm_model_new(&t->cfg);
	size_t n = llm_model_nparams(t->m), bt = (size_t)o->batch * o->seq;
	t->am = llm_calloc(n, sizeof *t->am);
	t->av = llm_calloc(n, sizeof *t->av);
	t->x = llm_malloc(2 * bt * sizeof *t->x);
	t->y = t->x + bt;
	llm_model_init(t->m, o->seed);
	llm_backend_options bo = o->backend;
	bo.accum = o->accum;
	if ((rc = llm_backend_open(&t->be, t->m, t->am, t->av, &bo)) || (rc = llm_backend_upload(t->be)))
		return rc;
	t->flops_tok = llm_model_flops_per_token(&t->cfg, o->seq);
	return LLM_OK;
}

static void say_model(const llm_trainer *t)
{
	const llm_train_options *o = &t->o;
	const llm_model_config *c = &t->cfg;
	double params = (double)llm_model_config_params(c);
	/* the vocabulary's parameters: the embedding, and the output layer unless tied; the
	 * output layer's product is 6 V C of a token's 6 N + attention FLOPs */
	double vocab = (double)c->vocab_size * c->hidden_size * (c->tie_word_embeddings ? 1 : 2);
	double head = 6.0 * c->vocab_size * c->hidden_size;
	llm_info("%s: %d layers, width %d, %d/%d heads, vocab %d: %.2fM parameters, %.0f%% of them "
	         "the vocabulary's; %llu train tokens (mix %s); %d process%s, %s, peak %.1f GFLOP/s",
	         o->config ? o->config : o->model, c->num_hidden_layers, c->hidden_size,
	         c->num_attention_heads, c->num_key_value_heads, c->vocab_size, params / 1e6,
	         100 * vocab / params, (unsigned long long)llm_loader_tokens(t->train),
	         llm_loader_mix(t->train), world(t), world(t) > 1 ? "es" : "", llm_backend_name(t->be),
	         llm_backend_peak_flops(t->be) / 1e9);
	if (2 * vocab > params)
		llm_info("the output layer over %d tokens is %.0f%% of each step's products: a smaller "
		         "vocabulary trains this width faster (llm-train(1), Sizing)", c->vocab_size,
		         100 * head / t->flops_tok);
}

int llm_trainer_open(llm_trainer **out, const llm_train_options *o)
{
	*out = NULL;
	llm_trainer *t = llm_calloc(1, sizeof *t);
	t->o = *o;
	t->last_loss = t->last_val = NAN;
	llm_trainstate *st = &t->st;
	llm_trainstate_init(st);
	st->seed = o->seed;
	st->batch = o->batch;
	st->seq_len = o->seq;
	st->accum = o->accum;
	st->world_size = o->backend.world;
	st->weighted = !!o->weighted;
	free(st->mix);
	st->mix = llm_strdup(o->mix ? o->mix : "");
	free(st->command);
	st->command = llm_strdup(o->command);
	llm_buf ckpt = LLM_BUF_INIT;
	llm_buf_addf(&ckpt, "%s/ckpt", o->run_dir);
	t->ckpt_root = llm_buf_detach(&ckpt, NULL);
	char *resume_dir = NULL;
	t->lock_fd = -1;
	int rc = rank0(t) ? claim_run_dir(t) : LLM_OK;
	if (!rc)
		rc = open_data(t);
	if (!rc && o->resume && llm_ckpt_resolve(t->ckpt_root, &resume_dir) != LLM_OK)
		rc = llm_fail(LLM_ENOTFOUND, "--resume: %s", llm_last_error());
	if (!rc)
		rc = open_model(t, resume_dir);
	for (size_t i = 0; !rc && i < o->nskip; i++)
		llm_trainstate_skip(st, o->skip[i]);
	if (!rc && resume_dir) {
		rc = llm_trainer_restore(t, resume_dir, 1);
		for (size_t i = 0; !rc && i < o->nskip; i++)
			llm_trainstate_skip(st, o->skip[i]);
		/* What the run logged after the checkpoint is logged again. */
		if (!rc && rank0(t))
			rc = llm_trainlog_cut(o->run_dir, st->step);
		if (!rc && rank0(t))
			llm_info("resuming %s at step %lld", resume_dir, (long long)st->step);
	}
	free(resume_dir);
	if (!rc)
		make_tok_config(t);
	if (!rc)
		rc = open_val(t);
	if (!rc && rank0(t))
		rc = write_run_files(t);
	if (!rc && rank0(t))
		say_model(t);
	if (rc) {
		llm_trainer_close(t);
		return rc;
	}
	*out = t;
	return LLM_OK;
}

int llm_trainer_close(llm_trainer *t)
{
	if (!t)
		return LLM_OK;
	int rc = llm_trainlog_close(t->log);
	llm_loader_free(t->train);
	llm_loader_free(t->val);
	llm_backend_free(t->be);
	llm_model_free(t->m);
	free(t->am);
	free(t->av);
	free(t->x);
	free(t->vx);
	free(t->ckpt_root);
	free(t->manifest_path);
	free(t->tokenizer);
	llm_bpe_free(t->bpe);
	llm_buf_release(&t->tok_config);
	llm_trainstate_release(&t->st);
	if (t->lock_fd >= 0)
		close(t->lock_fd);
	free(t);
	return rc;
}

int64_t llm_trainer_steps_done(const llm_trainer *t)
{
	return t->st.step;
}

void llm_trainer_status(const llm_trainer *t, llm_train_status *s)
{
	const llm_trainstate *st = &t->st;
	*s = (llm_train_status){
		.step = st->step, .tokens = st->tokens, .loss = t->last_loss,
		.smoothed_loss = st->smoothed_loss,
		.lr = llm_lr_at(&t->o.opt, st->step - 1) * st->lr_factor,
		.nonfinite_steps = st->nonfinite_steps, .spikes = st->spikes,
		.rollbacks = st->rollbacks, .skipped_steps = st->skipped_steps,
		.train_tokens = llm_loader_tokens(t->train), .val_loss = t->last_val,
	};
}

const llm_model *llm_trainer_model(const llm_trainer *t)
{
	return t->m;
}

/* Whether any rank was asked to stop. */
static int stop_asked(const llm_trainer *t, const volatile sig_atomic_t *stop, int *rc)
{
	double any = *stop ? 1 : 0;
	if (world(t) > 1)
		*rc = llm_mpirt_sum_f64(&any, 1);
	return any > 0;
}

int llm_train_run(llm_trainer *t, llm_train_progress_fn *fn, void *ctx,
                  const volatile sig_atomic_t *stop, int *stopped)
{
	if (stopped)
		*stopped = 0;
	while (t->st.step < t->o.steps) {
		llm_train_step s;
		int rc = llm_trainer_step(t, &s);
		if (rc)
			return rc;
		if (fn && !s.rolled_back)
			fn(ctx, t, &s);
		if (stop && stop_asked(t, stop, &rc)) {
			if (stopped)
				*stopped = 1;
			return rc || s.saved == 1 ? rc : llm_trainer_save(t, 1, NULL);
		}
		if (rc)
			return rc;
	}
	return LLM_OK;
}

/* ---- --smoke --------------------------------------------------------------------------- */

static const llm_model_config smoke_config = {
	.vocab_size = 61, .hidden_size = 32, .intermediate_size = 64, .num_hidden_layers = 2,
	.num_attention_heads = 4, .num_key_value_heads = 2, .max_position_embeddings = 64,
	.tie_word_embeddings = 0, .rope_theta = 10000, .rms_norm_eps = 1e-5,
	.initializer_range = 0.02, .bos_token_id = -1, .eos_token_id = 0
};

/* Tiny synthetic shards: documents of a repeating pattern (learnable) in two domains. */
static int smoke_data(const char *dir)
{
	mkdir(dir, 0755);
	llm_manifest man;
	llm_manifest_init(&man);
	man.vocab_size = 61;
	man.width = 2;
	man.eos_id = 0;
	man.tokenizer_id = 0x736d6f6b65ULL; /* "smoke" */
	llm_rng r;
	llm_rng_seed(&r, 42);
	int rc = LLM_OK;
	for (int split = 0; split < 2 && !rc; split++) {
		char file[64], path[4300];
		snprintf(file, sizeof file, "%s-00000.bin", llm_split_name(split));
		snprintf(path, sizeof path, "%s/%s", dir, file);
		llm_shard_params sp = { 2, 61, 0, man.tokenizer_id, 0 };
		llm_shard_writer *w;
		if ((rc = llm_shard_writer_open(&w, path, &sp)))
			break;
		for (int d = 0; d < (split ? 8 : 48) && !rc; d++) {
			uint32_t tok[80];
			size_t n = 20 + llm_rng_below(&r, 50);
			uint32_t a = 1 + (uint32_t)llm_rng_below(&r, 60), step = 1 + (uint32_t)(d % 3);
			for (size_t i = 0; i < n; i++)
				tok[i] = 1 + (a + step * (uint32_t)i) % 60;
			llm_shard_doc_in in = { .tokens = tok, .n = n, .domain = d % 2 ? "code" : "web",
				                .weight = 1.0f, .meta = "{}", .meta_len = 2 };
			rc = llm_shard_writer_add(w, &in);
		}
		llm_shard_info info;
		int rc2 = llm_shard_writer_close(w, &info);
		rc = rc ? rc : rc2;
		struct stat sb;
		if (!rc && stat(path, &sb) != 0)
			rc = llm_fail(LLM_EIO, "%s: %s", path, strerror(errno));
		if (!rc)
			llm_manifest_add_shard(&man, file, split, &info, (uint64_t)sb.st_size);
	}
	char mpath[4300];
	snprintf(mpath, sizeof mpath, "%s/manifest.json", dir);
	if (!rc)
		rc = llm_manifest_write(&man, mpath);
	llm_manifest_release(&man);
	return rc;
}

/* The inputs of the smoke run, written by rank 0 for every rank. */
static int smoke_inputs(const llm_train_options *o, const char *data, const char *cfgp)
{
	struct stat sb;
	if (stat(o->run_dir, &sb) != 0 && mkdir(o->run_dir, 0755) != 0)
		return llm_fail(LLM_EIO, "%s: %s", o->run_dir, strerror(errno));
	int rc = smoke_data(data);
	llm_buf b = LLM_BUF_INIT;
	llm_model_config_json(&smoke_config, &b);
	if (!rc)
		rc = llm_write_file(cfgp, b.p, b.len);
	llm_buf_release(&b);
	return rc;
}

static void smoke_model(llm_buf *r, const llm_trainer *t, const llm_train_options *o)
{
	const llm_model *m = t->m;
	llm_buf_addf(r, "load: %s, %llu train tokens; model %s\n", o->data,
	             (unsigned long long)llm_loader_tokens(t->train), o->config);
	for (size_t i = 0; i < llm_model_ntensors(m); i++) {
		const llm_tensor *ten = llm_model_tensor(m, i);
		if (ten->ndim == 2)
			llm_buf_addf(r, "  %-48s F32 [%lld, %lld]\n", ten->name, (long long)ten->shape[0],
			             (long long)ten->shape[1]);
		else
			llm_buf_addf(r, "  %-48s F32 [%lld]\n", ten->name, (long long)ten->shape[0]);
	}
	llm_buf_addf(r, "  activations: inputs/labels I32 [%d, %d], logits F32 [%d, %d]\n", o->batch,
	             o->seq, o->batch * o->seq, smoke_config.vocab_size);
	llm_buf_addf(r, "all-reduce: %d process%s%s\n", world(t), world(t) > 1 ? "es" : "",
	             llm_mpirt_active() ? " (MPI)" : "");
}

typedef struct {
	llm_train_progress_fn *fn;
	void *ctx;
	double loss[6];
	int n;
} smoke_log;

static void smoke_step(void *ctx, const llm_trainer *t, const llm_train_step *s)
{
	smoke_log *l = ctx;
	if (l->n < 6)
		l->loss[l->n++] = s->loss;
	if (l->fn)
		l->fn(l->ctx, t, s);
}

/* One life of the smoke run: open, train to step 6, optionally evaluate, close. */
static int smoke_life(const llm_train_options *o, smoke_log *l, llm_buf *report, double *val)
{
	llm_trainer *t;
	int rc = llm_trainer_open(&t, o);
	if (rc)
		return rc;
	if (report && rank0(t))
		smoke_model(report, t, o);
	rc = llm_train_run(t, smoke_step, l, NULL, NULL);
	if (!rc && val)
		rc = llm_trainer_eval(t, val);
	int rc2 = llm_trainer_close(t);
	return rc ? rc : rc2;
}

int llm_train_smoke(const llm_train_options *base, llm_train_progress_fn *fn, void *ctx,
                    llm_buf *report, int *same)
{
	*same = 0;
	char data[4200], cfgp[4200], link[4300];
	snprintf(data, sizeof data, "%s/smoke-data", base->run_dir);
	snprintf(cfgp, sizeof cfgp, "%s/smoke-config.json", base->run_dir);
	snprintf(link, sizeof link, "%s/ckpt/latest", base->run_dir);
	int r0 = base->backend.rank == 0, rc = r0 ? smoke_inputs(base, data, cfgp) : LLM_OK;
	int rc2 = llm_mpirt_barrier();
	if (rc || rc2)
		return rc ? rc : rc2;
	llm_train_options o;
	llm_train_options_init(&o);
	o.run_dir = base->run_dir;
	o.backend = base->backend;
	o.command = base->command;
	o.data = data;
	o.config = cfgp;
	o.batch = 2;
	o.seq = 16;
	o.steps = 6;
	o.ckpt_every = 3;
	o.eval_every = 3;
	o.eval_batches = 2;
	o.opt.warmup = 2;
	o.opt.total = 6;
	o.opt.lr = 1e-2;
	o.opt.min_lr = 1e-3;
	smoke_log first = { fn, ctx, { 0 }, 0 }, second = { fn, ctx, { 0 }, 0 };
	double val = NAN;
	o.force = 1; /* an earlier smoke run in the directory is replaced */
	if ((rc = smoke_life(&o, &first, report, &val)))
		return rc;
	/* Second life: resume from the checkpoint at step 3 and redo steps 4..6. */
	if (r0) {
		unlink(link);
		if (symlink("step-0000003", link) != 0)
			return llm_fail(LLM_EIO, "%s: %s", link, strerror(errno));
	}
	if ((rc = llm_mpirt_barrier()))
		return rc;
	o.resume = 1;
	o.force = 0;
	if ((rc = smoke_life(&o, &second, NULL, NULL)))
		return rc;
	*same = second.n == 3 && first.n == 6 &&
	        memcmp(second.loss, first.loss + 3, 3 * sizeof(double)) == 0;
	if (!r0)
		return LLM_OK;
	llm_buf_adds(report, "forward/backward/optimizer: losses");
	for (int i = 0; i < first.n; i++)
		llm_buf_addf(report, " %.6f", first.loss[i]);
	llm_buf_addf(report, "\neval: val loss %.6f\ncheckpoint: %s/ckpt\nresume from step 3: losses",
	             val, o.run_dir);
	for (int i = 0; i < second.n; i++)
		llm_buf_addf(report, " %.6f", second.loss[i]);
	llm_buf_addf(report, "\ncompare: %s\n", *same ? "identical" : "DIFFERENT");
	return LLM_OK;
}
