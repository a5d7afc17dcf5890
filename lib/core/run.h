/*
 * run.h — accounting of one tool run: records in/out/rejected, the rejects file, --stats JSON,
 * the live progress line and the end-of-run summary.
 *
 * Invariant, checked by llm_run_finish: records in = records out + records rejected. Every
 * record a tool reads is counted in exactly once (llm_run_in) and then either out
 * (llm_run_out) or rejected (llm_run_reject) exactly once. Counts are kept overall, per
 * domain (the record's "domain" field, or "unknown") and per language (its "lang" field, or
 * one the tool detected: llm_run_lang; "und" when none).
 *
 * Rejects: each rejected record is written to the rejects file unchanged plus
 * "reject_reason" (and any extra fields the tool gives: "dup_of", a measured value...). A record
 * that is not valid JSON is wrapped as {"reject_reason": R, "source": FILE, "line": N,
 * "raw": "<the line, UTF-8 repaired>"} so nothing is lost. Lines over --max-line are recorded
 * with their first 1 KiB and their length, since holding them whole is what the cap prevents.
 *
 * Progress: when stderr is a terminal and verbosity >= 1, a line rewritten at most 4 times a
 * second: records/s (or units of work/s, llm_run_progress_work), MB/s, and % and ETA when the
 * input size is known.
 * Summary: one line on stderr at the end (verbosity >= 1):
 *   "llm-clean: 1000 in, 900 out, 100 rejected (short 60, gopher_quality 40); 12.3 MB in 0.50 s (24.6 MB/s)"
 * --stats FILE: the same as JSON (schema in llmkit-formats(5)), written atomically.
 *
 * Not thread safe: call from the thread that orders output (tools with --threads account on
 * their writer thread).
 */
#ifndef LLM_RUN_H
#define LLM_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"

typedef struct llm_run llm_run;

llm_run *llm_run_new(const char *tool);
/* Open the rejects file (any writer path: "-" is not allowed, ".zst" compresses). */
int llm_run_set_rejects(llm_run *run, const char *path);
void llm_run_set_stats(llm_run *run, const char *path);
/* Input about to be read, for progress % and ETA; size < 0 when unknown. */
void llm_run_begin_input(llm_run *run, const char *name, int64_t size);

/* One record read: bytes of its line, and its domain (NULL/empty = "unknown"). Returns a
 * handle (its domain, and language when one is set) to pass to llm_run_out/llm_run_reject
 * and llm_run_count_domain for this record. */
int llm_run_in(llm_run *run, size_t bytes, const char *domain, size_t domain_len);
/* The handle of a parsed record by its "domain" and "lang" fields (around llm_run_in). */
int llm_run_in_rec(llm_run *run, size_t bytes, const llm_json_rec *rec);
/* The record of handle h is in language lang[0..len) (a tool that detects languages says so
 * after llm_run_in); returns the handle to pass on. NULL or empty leaves h as it was. */
int llm_run_lang(llm_run *run, int h, const char *lang, size_t len);
void llm_run_out(llm_run *run, int dom, size_t bytes);
/*
 * Reject the record (line/len as read). rec is its parse when it is valid JSON, else NULL.
 * extra: raw JSON members to add besides reject_reason, e.g. "\"dup_of\": \"a1\"", or NULL.
 * file/lineno locate it for unparsable records. Returns LLM_OK or a write error.
 */
int llm_run_reject(llm_run *run, int dom, const char *reason, const char *line, size_t len,
                   const llm_json_rec *rec, const char *extra, const char *file, uint64_t lineno);
/* A free-form counter reported in the summary JSON ("truncated", "repaired_utf8", ...). */
void llm_run_count(llm_run *run, const char *name, uint64_t n);
/* A free-form counter per domain. */
void llm_run_count_domain(llm_run *run, int dom, const char *name, uint64_t n);
/* Attach a raw JSON member to the stats object (e.g. "\"minhash\": {\"bands\": 14}"). */
void llm_run_stats_extra(llm_run *run, const char *raw_member);

void llm_run_progress(llm_run *run, uint64_t raw_bytes);
/* Progress of a tool whose cost is not its records (llm-eval: tokens through a model): the
 * line counts done units of unit (a literal, e.g. "tokens") and their rate instead of records,
 * at most 4 times a second whatever the call rate. input_pos: the position in the current
 * input, in the units of llm_run_begin_input's size, for % and ETA; < 0 keeps the one the
 * reader last gave (llm_run_progress). */
void llm_run_progress_work(llm_run *run, const char *unit, uint64_t done, int64_t input_pos);
/* Erase the progress line (before results go to the same terminal); it comes back with the
 * next progress call. llm_run_finish does it too. */
void llm_run_progress_clear(llm_run *run);

uint64_t llm_run_records_in(const llm_run *run);
uint64_t llm_run_records_out(const llm_run *run);
uint64_t llm_run_records_rejected(const llm_run *run);

/* Print the summary, write --stats, close rejects, check the invariant. Returns LLM_OK or the
 * first error (the run is freed either way). */
int llm_run_finish(llm_run *run);

#endif
