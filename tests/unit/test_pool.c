/*
 * Unit tests for lib/core/pool: every index once, workers never shared, indices taken one at a
 * time (not a fixed split), start returning before the job ends, signals left to the caller.
 *
 * The tests that would hang on a wrong pool (a fixed split, a start that runs the job) wait
 * with a watchdog of a minute instead of forever: a correct pool never comes near it.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>

#include "core/pool.h"
#include "unit.h"

enum { MAXW = 16 };

typedef struct {
	atomic_int *hits;
	atomic_int busy[MAXW];
	atomic_int overlap, bad_worker;
	int workers;
} count_job;

static void count_one(void *ctx, size_t i, int w)
{
	count_job *j = ctx;
	if (w < 0 || w >= j->workers) {
		atomic_fetch_add(&j->bad_worker, 1);
		return;
	}
	if (atomic_exchange(&j->busy[w], 1))
		atomic_fetch_add(&j->overlap, 1);
	atomic_fetch_add(&j->hits[i], 1);
	for (volatile int k = 0; k < (int)(i % 7) * 50; k++) /* uneven work */
		;
	atomic_store(&j->busy[w], 0);
}

static void test_every_index_once(void)
{
	static const int threads[] = { 0, 1, 2, 3, 8 };
	static const size_t sizes[] = { 0, 1, 2, 7, 1000 };
	for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
		llm_pool *p;
		CHECK(llm_pool_new(&p, threads[t]) == LLM_OK);
		CHECK_EQ_INT(llm_pool_workers(p), threads[t] > 1 ? threads[t] : 1);
		for (int rep = 0; rep < 50; rep++) /* many jobs on one pool: generations never mix */
			for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
				size_t n = sizes[s];
				count_job j = { .workers = llm_pool_workers(p) };
				j.hits = llm_calloc(n + 1, sizeof *j.hits);
				llm_pool_run(p, n, count_one, &j);
				int wrong = 0;
				for (size_t i = 0; i < n; i++)
					wrong += atomic_load(&j.hits[i]) != 1;
				CHECK_EQ_INT(wrong, 0);
				CHECK_EQ_INT(atomic_load(&j.overlap), 0);
				CHECK_EQ_INT(atomic_load(&j.bad_worker), 0);
				free(j.hits);
			}
		llm_pool_free(p);
	}
	llm_pool_free(NULL);
}

/* One thread: the job runs on the caller, in index order, before start returns. */
static pthread_t caller;
static size_t order[16], norder;
static int off_caller;

static void record_order(void *ctx, size_t i, int w)
{
	(void)ctx;
	order[norder++] = i;
	off_caller |= !pthread_equal(pthread_self(), caller) || w != 0;
}

static void test_one_thread_runs_inline(void)
{
	llm_pool *p;
	CHECK(llm_pool_new(&p, 1) == LLM_OK);
	caller = pthread_self();
	norder = 0;
	llm_pool_start(p, 16, record_order, NULL);
	CHECK_EQ_INT(norder, 16);
	for (size_t i = 0; i < 16; i++)
		CHECK_EQ_U64(order[i], i);
	CHECK(!off_caller);
	llm_pool_wait(p);
	llm_pool_free(p);
}

/* A gate that a test opens once; waiters give up after the watchdog. */
typedef struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int open;
} gate;

static int gate_wait(gate *g)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 60;
	int rc = 0;
	pthread_mutex_lock(&g->mu);
	while (!g->open && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&g->cv, &g->mu, &until);
	int ok = g->open;
	pthread_mutex_unlock(&g->mu);
	return ok;
}

static void gate_open(gate *g)
{
	pthread_mutex_lock(&g->mu);
	g->open = 1;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
}

/* Index 0 holds its thread until every other index is done. With indices taken one at a time
 * the other thread does them all; with a fixed split, index 0's thread would own half of them. */
typedef struct {
	size_t n;
	atomic_size_t done;
	gate others_done;
	int timed_out;
	int worker_of[64];
} slow_first;

static void hold_first(void *ctx, size_t i, int w)
{
	slow_first *j = ctx;
	j->worker_of[i] = w;
	if (i == 0) {
		j->timed_out = !gate_wait(&j->others_done);
		return;
	}
	if (atomic_fetch_add(&j->done, 1) + 1 == j->n - 1)
		gate_open(&j->others_done);
}

static void test_indices_taken_one_at_a_time(void)
{
	llm_pool *p;
	CHECK(llm_pool_new(&p, 2) == LLM_OK);
	slow_first j = { .n = 64, .others_done = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 } };
	llm_pool_run(p, j.n, hold_first, &j);
	CHECK(!j.timed_out);
	CHECK_EQ_U64(atomic_load(&j.done), j.n - 1);
	int with_first = 0;
	for (size_t i = 1; i < j.n; i++)
		with_first += j.worker_of[i] == j.worker_of[0];
	CHECK_EQ_INT(with_first, 0);
	llm_pool_free(p);
}

/* llm_pool_start returns while the job runs: the job waits for the caller to say so. */
typedef struct {
	gate go;
	atomic_int ran, timed_out;
} async_job;

static void wait_for_caller(void *ctx, size_t i, int w)
{
	async_job *j = ctx;
	if (!gate_wait(&j->go))
		atomic_store(&j->timed_out, 1);
	atomic_fetch_add(&j->ran, 1);
}

static void test_start_returns_before_the_job_ends(void)
{
	llm_pool *p;
	CHECK(llm_pool_new(&p, 3) == LLM_OK);
	async_job j = { .go = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 } };
	llm_pool_start(p, 10, wait_for_caller, &j);
	CHECK_EQ_INT(atomic_load(&j.ran), 0);
	gate_open(&j.go);
	llm_pool_wait(p);
	CHECK_EQ_INT(atomic_load(&j.ran), 10);
	CHECK(!atomic_load(&j.timed_out));
	/* freeing a pool with a job started waits for it */
	async_job k = { .go = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 1 } };
	llm_pool_start(p, 5, wait_for_caller, &k);
	llm_pool_free(p);
	CHECK_EQ_INT(atomic_load(&k.ran), 5);
}

static atomic_int unblocked;

static void check_mask(void *ctx, size_t i, int w)
{
	sigset_t cur;
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	if (!sigismember(&cur, SIGINT) || !sigismember(&cur, SIGTERM) || !sigismember(&cur, SIGUSR1))
		atomic_fetch_add(&unblocked, 1);
}

static void test_signals_go_to_the_caller(void)
{
	llm_pool *p;
	CHECK(llm_pool_new(&p, 4) == LLM_OK);
	llm_pool_run(p, 100, check_mask, NULL);
	CHECK_EQ_INT(atomic_load(&unblocked), 0);
	llm_pool_free(p);
	sigset_t cur;
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	CHECK(!sigismember(&cur, SIGINT)); /* the caller's own mask is as it was */
}

/* Results in slot i, consumed in order: the same output for any number of threads. */
static void square(void *ctx, size_t i, int w)
{
	((uint64_t *)ctx)[i] = (uint64_t)i * i;
}

static void test_results_independent_of_threads(void)
{
	uint64_t ref[500], got[500];
	llm_pool *p;
	CHECK(llm_pool_new(&p, 1) == LLM_OK);
	llm_pool_run(p, 500, square, ref);
	llm_pool_free(p);
	for (int t = 2; t <= 6; t += 2) {
		CHECK(llm_pool_new(&p, t) == LLM_OK);
		memset(got, 0, sizeof got);
		llm_pool_run(p, 500, square, got);
		CHECK(memcmp(ref, got, sizeof ref) == 0);
		llm_pool_free(p);
	}
}

int main(void)
{
	RUN(test_every_index_once);
	RUN(test_one_thread_runs_inline);
	RUN(test_indices_taken_one_at_a_time);
	RUN(test_start_returns_before_the_job_ends);
	RUN(test_signals_go_to_the_caller);
	RUN(test_results_independent_of_threads);
	return unit_done();
}
