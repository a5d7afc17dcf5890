/*
 * train.h — a training run as library code: what llm-train does between its options and its
 * progress line.
 *
 * A trainer holds everything a run is: the model and its backend (backend.h, CPU or CUDA,
 * chosen at open), the data loaders and the fixed validation batches, the AdamW moments, and
 * the state that state.json saves (trainstate.h): the schedule's position, the loss smoother,
 * the spike and plateau rules, the skip list of batches never to train on again, the loss
 * scaler and the counters. It writes the run directory: config.json, train.json (the resolved
 * options), data-manifest.json, val_batches.jsonl, tokenizer.json (with o.tokenizer, which
 * must be the shards' own: LLM_EINVAL otherwise), the logs of trainlog.h and the checkpoints
 * of ckpt.h. Every checkpoint is a whole Hugging Face model directory (hf.h): beside the
 * weights, generation_config.json, and with a Hugging Face o.tokenizer its tokenizer.json and
 * tokenizer_config.json (which the run directory gets too). Resuming from a checkpoint
 * continues the run bit for bit.
 *
 *   llm_train_options o;
 *   llm_train_options_init(&o);
 *   o.data = "shards"; o.steps = 1000; ...
 *   llm_trainer *t;
 *   if (llm_trainer_open(&t, &o)) ...;
 *   llm_train_step s;
 *   while (llm_trainer_steps_done(t) < o.steps)
 *       if (llm_trainer_step(t, &s)) ...;
 *   llm_trainer_close(t);
 *
 * Each llm_trainer_step is one optimizer step of the schedule and what is due after it:
 *   1. the step's micro-batches drawn (skipping the skip list), forward and backward;
 *   2. the gradients all-reduced and their norm; a non-finite loss or norm skips the step;
 *   3. a loss above spike_k x the smoothed loss (after spike_warmup steps) is a spike: logged
 *      and applied, skipped, or rolled back to the newest full checkpoint, its batches joining
 *      the skip list (the step counter then goes back, and the step is not logged);
 *   4. AdamW with warmup and cosine decay times the plateau factor, clipped;
 *   5. the metrics of the step; every eval_every steps and at the last one the validation loss
 *      and the plateau rule; the line in metrics.jsonl, TensorBoard and metrics.prom;
 *   6. a full checkpoint every ckpt_every steps and at the last one, a light one every
 *      light_every steps, the older ones pruned to keep.
 * max_skips steps skipped in a row (non-finite or spikes skipped) stop the run: a run that
 * cannot take a step will not take the next one either.
 *
 * The run directory (rank 0): made if needed and locked for the trainer's life (an flock on
 * run_dir/train.lock, which names the holder: a second trainer gets LLM_EIO saying who); one
 * that holds another run (train.json, metrics.jsonl or ckpt/) is refused, LLM_EINVAL, unless
 * the run is resumed or o.force replaces it (its files removed first, never through a link).
 * A resume cuts the logs back to the checkpoint's step (trainlog.h), so each step is logged
 * once. A checkpoint holding a non-finite weight or moment is refused at load, LLM_EFORMAT.
 *
 * Data parallelism: every rank opens a trainer with its rank and the world size in
 * o.backend; every call is collective (all ranks make it in the same order). Rank 0 writes the
 * run directory and the checkpoints, and speaks.
 *
 * Errors: LLM_EINVAL when the options contradict each other, the model or the checkpoint being
 * resumed (the caller's usage error: "--seq-len 4096 exceeds the model's
 * max_position_embeddings 2048"); LLM_EFORMAT when a run stops on max_skips; otherwise the
 * error of the module that failed (files, shards, checkpoints, backend), its detail naming the
 * file. After an error only llm_trainer_close is left.
 * Messages: llm_info and llm_warn (err.h) on rank 0. Not thread safe: one thread per trainer.
 */
#ifndef LLM_TRAIN_H
#define LLM_TRAIN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "core/buf.h"
#include "model.h"
#include "optim.h"

enum { LLM_SPIKE_LOG, LLM_SPIKE_SKIP, LLM_SPIKE_ROLLBACK };
/* Injected faults, for tests of the recovery paths: the step's gradient norm becomes NaN, or
 * its loss 100 times what it was. */
enum { LLM_FAULT_NONE, LLM_FAULT_NAN, LLM_FAULT_SPIKE };

typedef struct {
	/* model and data */
	const char *data;         /* manifest.json, or the directory holding it */
	const char *model;        /* a preset (model.h) when there is no config; default "tiny" */
	const char *config;       /* a LlamaConfig file; NULL for the preset */
	const char *tokenizer;    /* the shards' tokenizer.json, copied to run_dir; NULL: none */
	const char *mix;          /* domain proportions (loader.h), NULL for none */
	int weighted;             /* documents drawn by their weights too */
	const uint64_t *skip;     /* batch ids never trained on */
	size_t nskip;
	uint64_t seed;            /* data order and initial weights (default 1) */
	/* schedule */
	int64_t steps;            /* default 1000 */
	int batch, seq, accum;    /* per micro-batch and process (default 8, 256, 1) */
	llm_optim_config opt;     /* optim.h's defaults */
	/* monitoring and recovery */
	const char *run_dir;      /* default "run" */
	int eval_every;           /* 0: never (default 100) */
	int eval_batches;         /* default 8 */
	int plateau_n;            /* 0: off; else N, delta, factor */
	double plateau_delta, plateau_factor;
	int on_spike;             /* LLM_SPIKE_*, default log */
	double spike_k;           /* default 2 */
	int spike_warmup;         /* default 50 */
	int max_skips;            /* steps skipped in a row that stop the run, 0 = never (20) */
	int layer_norms;          /* log each layer's gradient norm */
	int fault;                /* LLM_FAULT_*, at step fault_step */
	int64_t fault_step;
	/* checkpoints */
	int ckpt_every;           /* full checkpoints, 0 = only at the end (default 100) */
	int light_every;          /* model-only checkpoints, 0 = none */
	int keep;                 /* of each kind, 0 = all (default 3) */
	int resume;               /* continue from run_dir/ckpt/latest */
	int force;                /* replace the run in run_dir (else refused, LLM_EINVAL) */
	llm_backend_options backend;
	const char *command;      /* recorded in train.json and state.json; default "" */
} llm_train_options;

void llm_train_options_init(llm_train_options *o);

/*
 * What the options leave to be worked out once a command line has set them: opt.min_lr < 0
 * becomes lr / 10 and opt.total 0 becomes steps (the decay always ends past the warmup); the
 * device is resolved (auto: cuda when a GPU is visible) and the CPU runs fp32. LLM_EINVAL
 * when model names no preset (and there is no config); gpu.h's error when the device cannot
 * be had.
 */
int llm_train_options_resolve(llm_train_options *o);
/* "N,DELTA,FACTOR" (5,0.05,0.5) into the plateau rule of o; LLM_EINVAL saying what is wrong. */
int llm_train_plateau_parse(llm_train_options *o, const char *s);

typedef struct llm_trainer llm_trainer;

/* Open the data, make or load the model, write the run directory's files. The strings of o
 * must outlive the trainer. */
int llm_trainer_open(llm_trainer **t, const llm_train_options *o);
/* Flush and close the logs (LLM_EIO if a write failed), free everything. NULL is a no-op. */
int llm_trainer_close(llm_trainer *t);

typedef struct {
	int64_t step;        /* steps done after the call */
	double loss;         /* the step's mean loss over the ranks (NaN when not finite) */
	double val_loss;     /* NaN unless the step evaluated */
	int rolled_back;     /* a spike sent the run back to its newest full checkpoint */
	int saved;           /* 0, or 1 for a full and 2 for a light checkpoint written */
} llm_train_step;

/* One step of the schedule and what is due after it (above). */
int llm_trainer_step(llm_trainer *t, llm_train_step *s);
/* The mean loss over the fixed validation batches (NaN without a val split). */
int llm_trainer_eval(llm_trainer *t, double *val_loss);
/* A checkpoint of the current step: full (with the optimizer state; resumable) or light. *path
 * (may be NULL) receives its directory on rank 0 (free() it). Prunes to o.keep. */
int llm_trainer_save(llm_trainer *t, int full, char **path);
/* Load a full checkpoint: full restores everything (resume); otherwise a rollback, which keeps
 * the skip list and counters of what happened since. */
int llm_trainer_restore(llm_trainer *t, const char *dir, int full);

typedef struct {
	int64_t step, tokens;          /* steps done, tokens trained on (all ranks) */
	double loss, smoothed_loss;    /* of the last step */
	double lr;                     /* of the last step, at the current plateau factor */
	int64_t nonfinite_steps, spikes, rollbacks, skipped_steps;
	uint64_t train_tokens;         /* in the train split */
	double val_loss;               /* of the last evaluation, NaN before */
} llm_train_status;

int64_t llm_trainer_steps_done(const llm_trainer *t);
void llm_trainer_status(const llm_trainer *t, llm_train_status *s);
const llm_model *llm_trainer_model(const llm_trainer *t);

/* The seed of the validation batches' loader for a run seeded with seed: their own stream,
 * so that they are the same at every evaluation, in every resumed or data-parallel run, and in
 * llm-eval --sampled. */
uint64_t llm_train_val_seed(uint64_t seed);

/* Called after each step of llm_train_run (for a progress line). */
typedef void llm_train_progress_fn(void *ctx, const llm_trainer *t, const llm_train_step *s);
/*
 * Steps until o.steps, or until *stop (a signal handler's flag; NULL: never) is set on any
 * rank: then the step under way finishes, a full checkpoint of it is written (unless that step
 * wrote one) and *stopped is set. The ranks agree on the step they stop after (one all-reduce
 * per step). fn may be NULL.
 */
int llm_train_run(llm_trainer *t, llm_train_progress_fn *fn, void *ctx,
                  const volatile sig_atomic_t *stop, int *stopped);

/*
 * --smoke: the whole loop on tiny synthetic shards in seconds, as a check of an installation.
 * In o.run_dir: smoke-data/ (a repeating, learnable pattern in two domains), smoke-config.json
 * (a two-layer model) and a run of 6 steps with evaluation and checkpoints every 3; then the
 * run resumed from step 3 redoes steps 4 to 6. *same: whether those losses equal the first
 * run's bit for bit. report receives the tensors, the losses and the verdict as text (rank 0).
 * Only o.run_dir, o.backend and o.command of o are used.
 */
int llm_train_smoke(const llm_train_options *o, llm_train_progress_fn *fn, void *ctx,
                    llm_buf *report, int *same);

#endif
