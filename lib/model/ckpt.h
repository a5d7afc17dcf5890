/*
 * ckpt.h — checkpoint directories of a training run (DESIGN §7).
 *
 * Layout under a checkpoint root (RUN/ckpt):
 *   step-0000100/   a full checkpoint: config.json (LlamaConfig), model.safetensors (fp32
 *                   weights under Hugging Face names, metadata format=pt), optimizer.safetensors
 *                   (AdamW moments "exp_avg.NAME", "exp_avg_sq.NAME"), state.json (the trainer's
 *                   state, opaque here), and the files the caller adds (the trainer: a
 *                   Hugging Face model directory's tokenizer and generation files); resumable
 *   model-0000100/  a light checkpoint: the same without optimizer.safetensors; for evaluation
 *   latest          symlink to the newest full checkpoint
 *
 * Atomicity: a checkpoint is written into a hidden temporary directory, every file fsynced,
 * the directory fsynced, then renamed to its final name and the parent fsynced; `latest` is
 * replaced by renaming a new symlink over it. A process killed at any moment leaves either
 * the old or the new checkpoint complete and `latest` pointing at a complete one; leftover
 * temporary directories (".step-*.tmp.*") are removed by the next save.
 *
 * Removal (stale temporaries, pruning, llm_ckpt_clear) never follows a symbolic link: a link
 * under root, whatever its name and wherever it points, is unlinked itself, and nothing outside
 * root is touched.
 *
 * Errors: LLM_EIO / LLM_EFORMAT / LLM_ENOTFOUND with the path in the detail. Not thread safe.
 */
#ifndef LLM_CKPT_H
#define LLM_CKPT_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* A further file of a checkpoint: its name in the directory (no '/', none of the checkpoint's
 * own) and its bytes. */
typedef struct {
	const char *name;
	const void *data;
	size_t len;
} llm_ckpt_file;

/*
 * Write checkpoint `step` under root (created if needed). adam_m/adam_v: the optimizer moments
 * in the model's parameter layout, or NULL for a light checkpoint. state: state.json content.
 * extra[nextra] (may be NULL, 0): further files, written and renamed with the others.
 * On success *path (may be NULL) receives the final directory (free() it).
 */
int llm_ckpt_save(const char *root, int64_t step, llm_model *m, const float *adam_m,
                  const float *adam_v, const char *state, size_t state_len,
                  const llm_ckpt_file *extra, size_t nextra, char **path);

/* Keep the newest `keep` checkpoints of one kind (full: "step-", light: "model-") under root
 * and remove the others; never the one `latest` points to. keep <= 0 keeps all. */
int llm_ckpt_prune(const char *root, int full, int keep);

/* Remove every checkpoint under root (step-*, model-*, latest, temporaries), then root itself
 * unless something else is in it: a run started afresh over an old one. */
int llm_ckpt_clear(const char *root);

/*
 * Find a checkpoint directory from what a user gives: a checkpoint directory itself (holding
 * state.json), a root holding `latest`, or a run directory holding ckpt/latest. *dir is
 * malloc'd. LLM_ENOTFOUND when there is none.
 */
int llm_ckpt_resolve(const char *path, char **dir);

/* Read config.json of a checkpoint directory. */
int llm_ckpt_read_config(const char *dir, llm_model_config *c);
/* Load model.safetensors into m (every tensor of m must be present with its shape). */
int llm_ckpt_load_model(const char *dir, llm_model *m);
/* Load optimizer.safetensors into adam_m/adam_v (model layout). */
int llm_ckpt_load_optim(const char *dir, const llm_model *m, float *adam_m, float *adam_v);
/* state.json content, NUL-terminated, malloc'd. */
int llm_ckpt_read_state(const char *dir, char **state, size_t *len);

#endif
