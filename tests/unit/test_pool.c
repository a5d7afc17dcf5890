/*
 * Unit tests for lib/core/pool: every index once, workers never shared, indices taken one at a
 * time (not a fixed split), start returning before the job ends, signals left to the caller;
 * streams: every item once, popped in order, later items running while an early one holds its
 * thread, a full window, one thread running items on the caller.
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

/* A stream's items write slot i % window; the caller checks each as it pops it. */
typedef struct {
	size_t window;
	uint64_t *slot;
	atomic_int *hits;
	atomic_int busy[MAXW];
	atomic_int overlap;
} stream_job;

static void stream_one(void *ctx, size_t i, int w)
{
	stream_job *j = ctx;
	if (atomic_exchange(&j->busy[w], 1))
		atomic_fetch_add(&j->overlap, 1);
	atomic_fetch_add(&j->hits[i], 1);
	for (volatile int k = 0; k < (int)(i % 5) * 200; k++)
		;
	j->slot[i % j->window] = (uint64_t)i * 3 + 1;
	atomic_store(&j->busy[w], 0);
}

static void test_stream_every_item_in_order(void)
{
	static const int threads[] = { 1, 2, 3, 8 };
	static const size_t windows[] = { 1, 2, 7, 64 };
	static const size_t sizes[] = { 0, 1, 5, 500 };
	for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
		llm_pool *p;
		CHECK(llm_pool_new(&p, threads[t]) == LLM_OK);
		for (size_t wi = 0; wi < sizeof windows / sizeof *windows; wi++)
			for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
				size_t n = sizes[s], win = windows[wi], popped = 0, wrong = 0;
				stream_job j = { .window = win };
				j.slot = llm_calloc(win, sizeof *j.slot);
				j.hits = llm_calloc(n + 1, sizeof *j.hits);
				llm_pool_stream(p, win, stream_one, &j);
				for (size_t i = 0; i < n; i++) {
					if (i - popped == win) { /* the window is full: the oldest first */
						CHECK(llm_pool_pop(p, true));
						wrong += j.slot[popped % win] != popped * 3 + 1;
						popped++;
					}
					j.slot[i % win] = 0;
					llm_pool_push(p);
					while (llm_pool_pop(p, false)) { /* whatever is done, in order */
						wrong += j.slot[popped % win] != popped * 3 + 1;
						popped++;
					}
				}
				while (llm_pool_pop(p, true)) {
					wrong += j.slot[popped % win] != popped * 3 + 1;
					popped++;
				}
				CHECK_EQ_U64(popped, n);
				CHECK(!llm_pool_pop(p, true)); /* none in flight */
				llm_pool_wait(p);
				for (size_t i = 0; i < n; i++)
					wrong += atomic_load(&j.hits[i]) != 1;
				CHECK_EQ_U64(wrong, 0);
				CHECK_EQ_INT(atomic_load(&j.overlap), 0);
				free(j.slot);
				free(j.hits);
				/* an index job after a stream on the same pool */
				count_job c = { .workers = llm_pool_workers(p) };
				c.hits = llm_calloc(10, sizeof *c.hits);
				llm_pool_run(p, 10, count_one, &c);
				int missed = 0;
				for (size_t i = 0; i < 10; i++)
					missed += atomic_load(&c.hits[i]) != 1;
				CHECK_EQ_INT(missed, 0);
				free(c.hits);
			}
		llm_pool_free(p);
	}
}

/* Item 0 holds its thread until items 1..n-1 are done: no barrier stops the other thread, and
 * the oldest item is not popped while it runs, even when the later ones are finished. */
static void test_stream_no_barrier(void)
{
	llm_pool *p;
	CHECK(llm_pool_new(&p, 2) == LLM_OK);
	slow_first j = { .n = 32, .others_done = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 } };
	llm_pool_stream(p, j.n, hold_first, &j);
	for (size_t i = 0; i < j.n; i++)
		llm_pool_push(p);
	gate_wait(&j.others_done);
	CHECK_EQ_U64(atomic_load(&j.done), j.n - 1);
	/* item 0 may have been released just now; when it has not, it cannot be popped */
	size_t popped = 0;
	while (llm_pool_pop(p, true))
		popped++;
	CHECK_EQ_U64(popped, j.n);
	CHECK(!j.timed_out);
	int with_first = 0;
	for (size_t i = 1; i < j.n; i++)
		with_first += j.worker_of[i] == j.worker_of[0];
	CHECK_EQ_INT(with_first, 0);
	llm_pool_free(p);
}

/* An item that waits for the caller is not popped without waiting, nor the ones behind it. */
static void test_stream_pop_without_wait(void)
{
	llm_pool *p;
	CHECK(llm_pool_new(&p, 2) == LLM_OK);
	async_job j = { .go = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 } };
	llm_pool_stream(p, 4, wait_for_caller, &j);
	llm_pool_push(p);
	llm_pool_push(p);
	CHECK(!llm_pool_pop(p, false));
	gate_open(&j.go);
	CHECK(llm_pool_pop(p, true));
	CHECK(llm_pool_pop(p, true));
	CHECK(!llm_pool_pop(p, false));
	/* llm_pool_wait ends a stream with items not popped: they have all run */
	async_job k = { .go = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 1 } };
	llm_pool_stream(p, 8, wait_for_caller, &k);
	for (int i = 0; i < 8; i++)
		llm_pool_push(p);
	llm_pool_wait(p);
	CHECK_EQ_INT(atomic_load(&k.ran), 8);
	for (int i = 0; i < 8; i++)
		CHECK(llm_pool_pop(p, false));
	/* and freeing a pool ends an open stream */
	async_job m = { .go = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 1 } };
	llm_pool_stream(p, 3, wait_for_caller, &m);
	for (int i = 0; i < 3; i++)
		llm_pool_push(p);
	llm_pool_free(p);
	CHECK_EQ_INT(atomic_load(&m.ran), 3);
}

/* One thread: push runs the item on the caller before it returns. */
static void test_stream_one_thread_inline(void)
{
	llm_pool *p;
	CHECK(llm_pool_new(&p, 1) == LLM_OK);
	caller = pthread_self();
	norder = 0;
	off_caller = 0;
	llm_pool_stream(p, 2, record_order, NULL);
	for (size_t i = 0; i < 6; i++) {
		llm_pool_push(p);
		CHECK_EQ_U64(norder, i + 1);
		CHECK(llm_pool_pop(p, false));
	}
	for (size_t i = 0; i < 6; i++)
		CHECK_EQ_U64(order[i], i);
	CHECK(!off_caller);
	llm_pool_wait(p);
	llm_pool_free(p);
}

int main(void)
{
	RUN(test_every_index_once);
	RUN(test_one_thread_runs_inline);
	RUN(test_indices_taken_one_at_a_time);
	RUN(test_start_returns_before_the_job_ends);
	RUN(test_signals_go_to_the_caller);
	RUN(test_results_independent_of_threads);
	RUN(test_stream_every_item_in_order);
	RUN(test_stream_no_barrier);
	RUN(test_stream_pop_without_wait);
	RUN(test_stream_one_thread_inline);
	return unit_done();
}
