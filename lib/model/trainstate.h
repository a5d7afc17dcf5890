/*
 * trainstate.h — state.json, the part of a checkpoint that is neither tensors nor config: where
 * the run is (step, tokens, AdamW's step count, the data loader's position and generator), what
 * it decided on the way (skip list, smoothed loss, plateau rule, learning-rate factor, loss
 * scaler, counters), and what it must be resumed with (seed, batch shape, world size, mix).
 * The format is in llmkit-formats(5). This is its one writer and its one reader: the trainer
 * (train.h) writes and resumes from it, llm-eval and hf.h read the step, tokens, tokenizer and
 * the batch shape of the validation draws from it.
 *
 * Numbers that are not finite (a smoothed loss before the first step, the plateau's best before
 * the first evaluation) are written as null and read back as NaN; the generator is its 64 hex
 * digits (hash.h), so a save and a load reproduce the state bit for bit.
 *
 * Errors: LLM_EFORMAT naming the file and the field ("RUN/ckpt/step-0000100/state.json: missing
 * or bad 'data_rng'"), LLM_EUNSUPPORTED for a newer version, LLM_EIO / LLM_ENOTFOUND for the
 * file. Thread safe on distinct states.
 */
#ifndef LLM_TRAINSTATE_H
#define LLM_TRAINSTATE_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/hash.h"

enum { LLM_TRAINSTATE_VERSION = 1 };

typedef struct {
	int64_t step, tokens, adam_t;       /* optimizer steps done, tokens trained on, AdamW's t */
	uint64_t data_position;             /* global micro-batches drawn (loader.h) */
	llm_rng data_rng;                   /* the loader's generator */
	uint64_t *skip;                     /* batch ids never to train on (malloc'd) */
	size_t nskip;
	uint64_t seed;
	int batch, seq_len, accum, world_size, weighted;
	char *mix;                          /* --mix as given, "" for none (malloc'd) */
	double smoothed_loss;               /* NaN before the first applied step */
	int64_t smoothed_n;
	double lr_factor;                   /* --plateau's product of factors */
	double plateau_best;                /* NaN before the first evaluation */
	int64_t plateau_rises;
	int64_t nonfinite_steps, spikes, rollbacks, skipped_steps;
	double loss_scale;                  /* lossscale.h's scale and clean-step count */
	int64_t loss_scale_good_steps;
	uint64_t tokenizer_id;              /* of the shards trained on */
	char manifest_hash[17];             /* XXH3-64 of manifest.json, 16 hex digits */
	char *command;                      /* the command line (malloc'd) */
} llm_trainstate;

/* Zero counters, NaN smoothed loss and plateau best, factor and scale 1, empty strings. */
void llm_trainstate_init(llm_trainstate *s);
void llm_trainstate_release(llm_trainstate *s);
/* Append a batch id to the skip list unless it is on it. */
void llm_trainstate_skip(llm_trainstate *s, uint64_t id);
/* Whether id is on the skip list. */
int llm_trainstate_skipped(const llm_trainstate *s, uint64_t id);

/* state.json text, appended to out. */
void llm_trainstate_format(const llm_trainstate *s, llm_buf *out);
/* Parse state.json text; name (the file) is used in messages. s is released and refilled. */
int llm_trainstate_parse(llm_trainstate *s, const char *text, size_t n, const char *name);
/* Read DIR/state.json of a checkpoint directory. */
int llm_trainstate_load(llm_trainstate *s, const char *dir);

#endif
