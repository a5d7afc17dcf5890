/*
 * trainlog.h — the logs of a training run, in its run directory:
 *   metrics.jsonl                 one JSON object per step ({"step": N, "loss": ..., ...}) and
 *                                 per event ({"step": N, "event": "rollback", ...}), appended
 *   events.out.tfevents.T.HOST.PID  TensorBoard event file (one per open): tfevents
 *                                 record framing with masked CRC32C, a scalar summary per value
 *   metrics.prom                  Prometheus text exposition of the latest values, replaced
 *                                 atomically at each step (for node_exporter's textfile collector)
 *
 * Usage per step: llm_trainlog_set() each value, then llm_trainlog_commit(). Values keep the
 * order in which they were first set. Non-finite values are written as null (JSON), NaN
 * (TensorBoard, Prometheus).
 * Errors: LLM_EIO with the file and system reason. Not thread safe.
 */
#ifndef LLM_TRAINLOG_H
#define LLM_TRAINLOG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* CRC-32C (Castagnoli) of data, continuing from crc (0 to start); and TensorFlow's mask. */
uint32_t llm_crc32c(uint32_t crc, const void *data, size_t n);
uint32_t llm_crc32c_mask(uint32_t crc);

typedef struct llm_trainlog llm_trainlog;

/* Open the logs in dir (which must exist); metrics.jsonl is appended to. */
int llm_trainlog_open(llm_trainlog **lg, const char *dir);
/* Value of this step. key: [A-Za-z0-9_]. */
void llm_trainlog_set(llm_trainlog *lg, const char *key, double value);
/* Write the step's values to all three outputs and forget them. wall_time: Unix seconds. */
int llm_trainlog_commit(llm_trainlog *lg, int64_t step, double wall_time);
/* An event line in metrics.jsonl: {"step": N, "event": NAME, MEMBERS} where members is raw
 * JSON ("\"batch\": 12") or NULL. */
int llm_trainlog_event(llm_trainlog *lg, int64_t step, const char *name, const char *members);
/* Flush and close (LLM_EIO if anything failed to write). NULL is a no-op. */
int llm_trainlog_close(llm_trainlog *lg);

/*
 * Cut the logs in dir back to `step`, for a run resumed from its checkpoint of that step, which
 * logs the steps after it again: metrics.jsonl keeps its complete lines of steps <= step, and
 * each TensorBoard event file its records of steps <= step, up to a torn or corrupt record
 * (a killed writer's last one). Each file is replaced atomically (io.h's writer). Then every
 * step is in the logs once, and TensorBoard shows each once.
 */
int llm_trainlog_cut(const char *dir, int64_t step);

/* A scalar of an event file: its step and wall time, its tag (tag_len bytes, not
 * NUL-terminated) and its value. */
typedef void llm_trainlog_scalar_fn(void *ctx, int64_t step, double wall_time, const char *tag,
                                    size_t tag_len, double value);
/*
 * Read a TensorBoard event file back (what this module writes, and what TensorFlow, PyTorch's
 * SummaryWriter and tensorboardX write): fn for each scalar, a Summary.Value's simple_value or
 * a tensor of one float or double (TensorFlow 2's scalars), in file order. Other events
 * (file_version, graphs, histograms, images) are passed over. A torn or corrupt record (a
 * killed writer's last one) ends the file, as it ends it for TensorBoard. Returns the scalars
 * read, or LLM_EIO when f cannot be read.
 */
long long llm_trainlog_scan(FILE *f, llm_trainlog_scalar_fn *fn, void *ctx);

/* The event file's name (for messages and tests). */
const char *llm_trainlog_tfevents_path(const llm_trainlog *lg);

#endif
