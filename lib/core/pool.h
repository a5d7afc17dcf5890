/*
 * pool.h — the thread pool: run f(ctx, i, worker) for every i in [0, n) on k threads.
 *
 * A job is one loop over [0, n). The threads take indices one at a time from a shared counter:
 * documents differ in size by orders of magnitude (a whole book next to a news blurb), so a
 * fixed split of [0, n) into k ranges would leave the threads that drew the short ones idle.
 * f(i) writes its result into slot i of an array the caller owns, and the caller consumes the
 * results in index order once the job is done; so the output never depends on k, provided f(i)
 * depends only on i and on state that its worker resets.
 *
 * `worker` is in [0, llm_pool_workers()) and two calls with the same worker never run at once:
 * index per-thread scratch (a parser, a signer, a matcher) by it.
 *
 * llm_pool_start returns at once, so that the caller can read the next batch while this one
 * is worked on (double buffering); llm_pool_wait returns when every f(i) has returned and its
 * writes are visible to the caller. llm_pool_run is the two together. One job at a time: a
 * start while a job runs first waits for that job.
 *
 * A pool of one thread starts none: llm_pool_start runs the whole job on the caller, in index
 * order, with worker 0, and llm_pool_wait has nothing to wait for. A pool of k > 1 starts k
 * threads, and the caller only waits (it never runs f), so --threads k means k busy cores.
 * The threads block the asynchronous signals (SIGINT, SIGTERM, SIGHUP, SIGUSR1, ...), so that
 * those reach the thread that drives the pool.
 *
 * A stream is a job whose length is not known at its start: the caller makes items ready one
 * at a time (llm_pool_push) while earlier ones run, and takes them back in index order as they
 * finish (llm_pool_pop), so reading, working and writing overlap with no barrier between
 * batches: a thread that finishes an item takes the next one ready, never waiting for the
 * others to finish theirs. At most `window` items are in flight (pushed, not yet popped); the
 * caller owns `window` slots and fills slot i % window for item i. llm_pool_wait ends a
 * stream: every item pushed has run when it returns. On a pool of one thread, push runs the
 * item on the caller before it returns.
 *
 * Memory: the threads' stacks; a stream, `window` bytes. Thread safety: a pool is driven by
 * one thread at a time; f must be safe to call from k threads at once on distinct indices and
 * workers.
 */
#ifndef LLM_POOL_H
#define LLM_POOL_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

typedef struct llm_pool llm_pool;
typedef void llm_pool_fn(void *ctx, size_t i, int worker);

/* A pool of `threads` workers (values below 1 mean 1). LLM_EIO with the system's reason when
 * a thread cannot be started (then none is left running and *pool is NULL). */
int llm_pool_new(llm_pool **pool, int threads);
/* Waits for a started job, then stops and joins the threads. NULL is a no-op. */
void llm_pool_free(llm_pool *pool);

/* The number of distinct worker values f receives (>= 1). */
int llm_pool_workers(const llm_pool *pool);

void llm_pool_start(llm_pool *pool, size_t n, llm_pool_fn *f, void *ctx);
void llm_pool_wait(llm_pool *pool);
void llm_pool_run(llm_pool *pool, size_t n, llm_pool_fn *f, void *ctx);

/* Begin a stream of items run by f, at most `window` (>= 1) of them in flight. */
void llm_pool_stream(llm_pool *pool, size_t window, llm_pool_fn *f, void *ctx);
/* The next item, 0, 1, 2, ... in order, is ready to run; fewer than `window` are in flight. */
void llm_pool_push(llm_pool *pool);
/* Take back the oldest item in flight once f has returned on it: true then, false when none
 * is in flight or, unless `wait`, when it is still running. Its writes are then visible. */
bool llm_pool_pop(llm_pool *pool, bool wait);

#endif
