/*
 * diagnose.h — loss-curve fingerprints: the patterns a team learns to read in a run's curves,
 * each found by a small detector that names the steps and values it saw, the likely cause and
 * the check to run.
 *
 *   stair_steps     the loss drops sharply at a fixed period and stays down: the data loader
 *                   repeats batches (a sampler re-seeded at each epoch or resume)
 *   sawtooth        the loss oscillates with a short period, near the accumulation or batch
 *                   cycle: a clip threshold too small for the gradient
 *   late_climb      late in the run the loss climbs slowly from its low, and may collapse:
 *                   the learning rate decays too slowly
 *   divergence      the loss or gradient becomes inf or NaN, often after a plateau: bad tokens
 *                   in a batch (the batch ids are named) or an overflow
 *   rank_desync     one rank's loss runs apart from the others' (or every rank's is the same):
 *                   data-parallel desynchronisation (or every rank drawing the same data)
 *   memory_jump     a step whose memory or longest sequence jumps: a long sequence (named by
 *                   its step, batch and length)
 *   overfit         the training loss falls while the validation loss rises: overfitting, or
 *                   train/val leakage (the decontamination check between the splits)
 *
 * Every detector reads the curves of runlog.h (loss, smoothed_loss, lr, grad_norm,
 * clip_factor, mem_mb, longest_seq, batch_id, val_loss, loss_rank_R) and train.json's numbers
 * (accum, clip, steps, batch, seq_len, world_size, train_tokens), works in the rows' order
 * (a row per logged step), and is robust to noise: levels are medians and spreads median
 * absolute deviations, so that a healthy run, however noisy, raises nothing. A detector that
 * lacks its curves or enough rows (it says how many it needs in diagnose.c) finds nothing.
 * Each appends at most one finding and returns whether it did.
 *
 * Memory: a few doubles per row. Thread safety: none needed (no state outside the arguments).
 */
#ifndef LLM_DIAGNOSE_H
#define LLM_DIAGNOSE_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "runlog.h"

typedef struct {
	const char *name;     /* the detector's ("stair_steps") */
	int64_t first, last;  /* the steps the evidence spans */
	char *evidence;       /* what was seen, with steps and values */
	char *cause;          /* the likely cause */
	char *check;          /* the check to run */
} llm_finding;

typedef struct {
	llm_finding *v;
	size_t n, cap;
} llm_findings;

void llm_findings_init(llm_findings *f);
void llm_findings_release(llm_findings *f);

typedef int llm_detector_fn(const llm_runlog *rl, llm_findings *out);

int llm_diagnose_stair_steps(const llm_runlog *rl, llm_findings *out);
int llm_diagnose_sawtooth(const llm_runlog *rl, llm_findings *out);
int llm_diagnose_late_climb(const llm_runlog *rl, llm_findings *out);
int llm_diagnose_divergence(const llm_runlog *rl, llm_findings *out);
int llm_diagnose_rank_desync(const llm_runlog *rl, llm_findings *out);
int llm_diagnose_memory_jump(const llm_runlog *rl, llm_findings *out);
int llm_diagnose_overfit(const llm_runlog *rl, llm_findings *out);

/* The detectors, in the order above, ending with a NULL fn. */
typedef struct {
	const char *name;
	llm_detector_fn *fn;
	const char *pattern;  /* one line: what it looks for */
} llm_detector;
extern const llm_detector llm_detectors[];

/* Every detector; returns the findings added. */
size_t llm_diagnose(const llm_runlog *rl, llm_findings *out);

/* A finding as one line, without a newline:
 * "steps 50-150: stair_steps: EVIDENCE; likely: CAUSE; check: CHECK". */
void llm_finding_format(const llm_finding *f, llm_buf *out);

#endif
