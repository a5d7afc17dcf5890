/*
 * runlog.h — a training run directory read back, for the page and the diagnosis of
 * llm-report: the curves of metrics.jsonl (or, in a run that has none, of its TensorBoard
 * event files), the events, the checkpoints, train.json and config.json, the latest values
 * of metrics.prom and llm-eval's results.
 *
 * Curves are columns: one row per logged step, ascending, and per key (loss, lr, ...) one
 * double per row: NaN where the row lacks the key, an infinity where it holds a value that is
 * not finite (null, as llm-train writes them; a NaN or an infinity of an event file), so that
 * isnan() means "not logged" and isinf() "logged, not finite". A step logged again replaces
 * the rows from it on (after a rollback
 * llm-train redoes the steps since the checkpoint and logs them again), so the curves are the
 * run as it finally went; the rollback event says which steps were thrown away.
 *
 * A live run is read as it grows: llm_runlog_refresh reads what metrics.jsonl gained since the
 * last call (all of it again when the file was replaced, as a resume's cut replaces it), and a
 * last line without its newline is a line being written, left for the next call. A malformed
 * line is warned about (FILE:LINE), counted and skipped; no file of the run is required
 * except that the directory holds some log of a run.
 *
 * TensorBoard (a run without metrics.jsonl, e.g. a PyTorch SummaryWriter's): scalars as
 * simple_value or as a one-element float or double tensor; tags map to keys by dropping a
 * "train/" prefix and by the aliases of other trainers (llm_runlog_tag_key), others keep their
 * tag with '/' as '_'. Files are read in name order (their names start with the time).
 *
 * Memory: 8 bytes per row and key, the events and the small files. Errors: LLM_EIO naming the
 * file; LLM_ENOTFOUND when the directory holds no log of a run. Not thread safe.
 */
#ifndef LLM_RUNLOG_H
#define LLM_RUNLOG_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

typedef struct llm_runlog llm_runlog;

/* An event line of metrics.jsonl: {"step": N, "event": NAME, ...}. */
typedef struct {
	int64_t step;
	char *name;          /* "nonfinite_skipped", "spike", "rollback", "plateau", ... */
	double loss;         /* its "loss", NaN when none */
	int64_t to_step;     /* a rollback's "to_step", else -1 */
	uint64_t *batches;   /* its "batches" (the step's batch ids) */
	size_t nbatches;
	char *json;          /* the whole line */
} llm_runlog_event;

/* A checkpoint under RUN/ckpt. */
typedef struct {
	char *name;          /* "step-0000600" or "model-0000600" */
	int64_t step;
	int full;            /* step-*: resumable; model-*: weights only */
	int latest;          /* ckpt/latest points to it */
	uint64_t bytes;      /* its files together */
	int64_t tokens;      /* trained on, from its state.json; -1 when unreadable */
} llm_runlog_ckpt;

/* A file of llm-eval --json results. */
typedef struct {
	char *path;
	char *json;          /* the file's object */
	size_t len;
} llm_runlog_eval;

/* A value of metrics.prom. */
typedef struct {
	char *name;
	double value;
} llm_runlog_gauge;

/* Read the run in dir. LLM_ENOTFOUND when dir holds none of metrics.jsonl, an event file,
 * train.json. */
int llm_runlog_open(llm_runlog **rl, const char *dir);
/* Read again what changed: metrics.jsonl's new lines, every small file, the checkpoints. */
int llm_runlog_refresh(llm_runlog *rl);
/* Also show the llm-eval --json results in path (the run's own eval/ *.json are read always). */
int llm_runlog_add_eval(llm_runlog *rl, const char *path);
/* An empty log, for curves made in memory (the detectors' tests). */
llm_runlog *llm_runlog_new(void);
void llm_runlog_free(llm_runlog *rl);

/* A value of step's row (NaN is stored as not finite: an infinity); a step other than the
 * last row's starts a row (one below it first drops the rows from it on, as a step logged
 * again does). */
void llm_runlog_set(llm_runlog *rl, int64_t step, const char *key, double value);
/* One line of metrics.jsonl (a row or an event), as read from a file. LLM_EFORMAT (detail set)
 * for a line that is neither. */
int llm_runlog_add_line(llm_runlog *rl, const char *line, size_t len);
/* The key a TensorBoard tag stands for ("train/loss" and "Loss/train" -> "loss"), into out. */
void llm_runlog_tag_key(const char *tag, size_t len, llm_buf *out);

size_t llm_runlog_rows(const llm_runlog *rl);
const int64_t *llm_runlog_steps(const llm_runlog *rl);
/* The column of key, rows long, or NULL when no row has it. */
const double *llm_runlog_col(const llm_runlog *rl, const char *key);
size_t llm_runlog_ncols(const llm_runlog *rl);
const char *llm_runlog_colname(const llm_runlog *rl, size_t i); /* in order of appearance */

size_t llm_runlog_nevents(const llm_runlog *rl);
const llm_runlog_event *llm_runlog_event_at(const llm_runlog *rl, size_t i);
size_t llm_runlog_nckpts(const llm_runlog *rl);
const llm_runlog_ckpt *llm_runlog_ckpt_at(const llm_runlog *rl, size_t i); /* by step */
size_t llm_runlog_nevals(const llm_runlog *rl);
const llm_runlog_eval *llm_runlog_eval_at(const llm_runlog *rl, size_t i);
size_t llm_runlog_ngauges(const llm_runlog *rl);
const llm_runlog_gauge *llm_runlog_gauge_at(const llm_runlog *rl, size_t i);

const char *llm_runlog_dir(const llm_runlog *rl);
/* Where the curves came from: "metrics.jsonl", the event files, or "" (none, or in memory). */
const char *llm_runlog_source(const llm_runlog *rl);
/* Lines of metrics.jsonl skipped as malformed. */
uint64_t llm_runlog_bad_lines(const llm_runlog *rl);
/* train.json and config.json as read (NULL when absent or not a JSON object). */
const char *llm_runlog_train_json(const llm_runlog *rl);
const char *llm_runlog_config_json(const llm_runlog *rl);
/* A number of train.json ("clip", "accum", "steps", ...), or NaN. */
double llm_runlog_train_num(const llm_runlog *rl, const char *key);
/* Set one (for curves made in memory). */
void llm_runlog_set_train_num(llm_runlog *rl, const char *key, double value);
/*
 * The data manifest's hash as train.json records it (16 hex digits, "" when unknown), and
 * whether the copy in the run, data-manifest.json, still has it: 1 yes, 0 no, -1 not known.
 */
const char *llm_runlog_manifest_hash(const llm_runlog *rl, int *copy_matches);

/*
 * Whether a trainer holds dir now: the flock on dir/train.lock that llm-train keeps for its
 * life (train.h). holder (cap bytes, may be NULL) receives what the lock file says ("pid 123
 * on host"). The lock is looked up in /proc/locks, which disturbs nothing; where that cannot
 * tell (no procfs, or a lock held on another machine of a shared filesystem) a shared lock is
 * tried and released at once. 1 held, 0 not (or no lock file).
 */
int llm_runlog_live(const char *dir, char *holder, size_t cap);

#endif
