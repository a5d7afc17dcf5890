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
 * Memory: the threads' stacks; nothing per job. Thread safety: a pool is driven by one thread
 * at a time; f must be safe to call from k threads at once on distinct indices and workers.
 */
#ifndef LLM_POOL_H
#define LLM_POOL_H

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

#endif
