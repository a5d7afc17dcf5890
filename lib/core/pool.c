/*
 * pool.c — the thread pool of pool.h.
 *
 * The threads sleep on `start` until the job generation changes, take indices from `next`
 * until it passes n, and the last one out signals `done`. llm_pool_wait waits for every thread
 * to leave the job, not only for every index to be taken: a thread that woke late must not
 * still be reading this job's fn and ctx when the next start replaces them.
 *
 * A stream takes items under the mutex instead of from `next`: an item is a batch of work
 * (thousands per second at most), so the lock is cheap beside it, and one lock guards both the
 * count pushed and the finished flags that llm_pool_pop waits on. The flags form a ring of
 * `window` entries: item i may only be pushed once item i - window was popped, so no two items
 * in flight share an entry.
 */
#include "pool.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

struct llm_pool {
	pthread_mutex_t mu;
	pthread_cond_t start, done;
	pthread_t *th;
	int nth;           /* threads started; 0 runs jobs on the caller */
	uint64_t gen;      /* job generation, bumped by each start */
	int busy;          /* threads not yet out of the current job */
	bool quit;
	llm_pool_fn *fn;
	void *ctx;
	size_t n;
	atomic_size_t next;
	/* the stream, when one is open */
	bool stream, ended;
	size_t window, pushed, taken, popped;
	unsigned char *finished; /* per ring entry: f returned on the item there */
	size_t cap;              /* entries allocated in finished */
};

typedef struct {
	llm_pool *p;
	int id;
} seat;

/* A thread's part of a stream: called and returning with the mutex held. */
static void run_stream(llm_pool *p, int id)
{
	for (;;) {
		while (p->taken == p->pushed && !p->ended)
			pthread_cond_wait(&p->start, &p->mu);
		if (p->taken == p->pushed)
			return;
		size_t i = p->taken++;
		pthread_mutex_unlock(&p->mu);
		p->fn(p->ctx, i, id);
		pthread_mutex_lock(&p->mu);
		p->finished[i % p->window] = 1;
		if (i == p->popped)
			pthread_cond_signal(&p->done);
	}
}

static void *worker(void *arg)
{
	seat *s = arg;
	llm_pool *p = s->p;
	int id = s->id;
	free(s);
	uint64_t seen = 0;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->quit && p->gen == seen)
			pthread_cond_wait(&p->start, &p->mu);
		if (p->quit)
			break;
		seen = p->gen;
		if (p->stream) {
			run_stream(p, id);
		} else {
			llm_pool_fn *fn = p->fn;
			void *ctx = p->ctx;
			size_t n = p->n;
			pthread_mutex_unlock(&p->mu);
			for (size_t i; (i = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed)) < n;)
				fn(ctx, i, id);
			pthread_mutex_lock(&p->mu);
		}
		if (--p->busy == 0)
			pthread_cond_signal(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static void stop(llm_pool *p, int started)
{
	pthread_mutex_lock(&p->mu);
	p->quit = true;
	pthread_cond_broadcast(&p->start);
	pthread_mutex_unlock(&p->mu);
	for (int t = 0; t < started; t++)
		pthread_join(p->th[t], NULL);
}

int llm_pool_new(llm_pool **out, int threads)
{
	*out = NULL;
	llm_pool *p = llm_calloc(1, sizeof *p);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->start, NULL);
	pthread_cond_init(&p->done, NULL);
	atomic_init(&p->next, 0);
	if (threads > 1) {
		p->th = llm_calloc((size_t)threads, sizeof *p->th);
		sigset_t block, old;
		sigemptyset(&block);
		static const int async[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
			                     SIGCHLD, SIGPIPE };
		for (size_t k = 0; k < sizeof async / sizeof *async; k++)
			sigaddset(&block, async[k]);
		pthread_sigmask(SIG_BLOCK, &block, &old);
		int err = 0;
		for (; p->nth < threads; p->nth++) {
			seat *s = llm_malloc(sizeof *s);
			*s = (seat){ p, p->nth };
			if ((err = pthread_create(&p->th[p->nth], NULL, worker, s)) != 0) {
				free(s);
				break;
			}
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (err) {
			stop(p, p->nth);
			p->nth = 0;
			llm_pool_free(p);
			return llm_fail(LLM_EIO, "cannot start %d threads: %s", threads, strerror(err));
		}
	}
	*out = p;
	return LLM_OK;
}

void llm_pool_free(llm_pool *p)
{
	if (!p)
		return;
	if (p->nth) {
		llm_pool_wait(p);
		stop(p, p->nth);
	}
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->start);
	pthread_cond_destroy(&p->done);
	free(p->th);
	free(p->finished);
	free(p);
}

int llm_pool_workers(const llm_pool *p)
{
	return p->nth ? p->nth : 1;
}

/* With the mutex held: end a stream that is open, wait for the threads to leave the job. */
static void finish_job(llm_pool *p)
{
	if (p->stream) {
		p->ended = true;
		pthread_cond_broadcast(&p->start);
	}
	while (p->busy)
		pthread_cond_wait(&p->done, &p->mu);
	p->stream = false;
}

void llm_pool_start(llm_pool *p, size_t n, llm_pool_fn *f, void *ctx)
{
	if (!p->nth) {
		p->stream = false;
		for (size_t i = 0; i < n; i++)
			f(ctx, i, 0);
		return;
	}
	pthread_mutex_lock(&p->mu);
	finish_job(p); /* a start without its wait: finish the previous job first */
	p->fn = f;
	p->ctx = ctx;
	p->n = n;
	atomic_store_explicit(&p->next, 0, memory_order_relaxed);
	p->busy = p->nth;
	p->gen++;
	pthread_cond_broadcast(&p->start);
	pthread_mutex_unlock(&p->mu);
}

void llm_pool_wait(llm_pool *p)
{
	if (!p->nth)
		return;
	pthread_mutex_lock(&p->mu);
	finish_job(p);
	pthread_mutex_unlock(&p->mu);
}

void llm_pool_run(llm_pool *p, size_t n, llm_pool_fn *f, void *ctx)
{
	llm_pool_start(p, n, f, ctx);
	llm_pool_wait(p);
}

void llm_pool_stream(llm_pool *p, size_t window, llm_pool_fn *f, void *ctx)
{
	if (window < 1)
		window = 1;
	pthread_mutex_lock(&p->mu);
	if (p->nth)
		finish_job(p);
	if (window > p->cap) {
		free(p->finished);
		p->finished = llm_malloc(window);
		p->cap = window;
	}
	memset(p->finished, 0, window);
	p->window = window;
	p->pushed = p->taken = p->popped = 0;
	p->fn = f;
	p->ctx = ctx;
	p->stream = true;
	p->ended = false;
	if (p->nth) {
		p->busy = p->nth;
		p->gen++;
		pthread_cond_broadcast(&p->start);
	}
	pthread_mutex_unlock(&p->mu);
}

void llm_pool_push(llm_pool *p)
{
	if (!p->nth) {
		size_t i = p->pushed++;
		p->fn(p->ctx, i, 0);
		p->finished[i % p->window] = 1;
		return;
	}
	pthread_mutex_lock(&p->mu);
	p->pushed++;
	pthread_cond_signal(&p->start);
	pthread_mutex_unlock(&p->mu);
}

bool llm_pool_pop(llm_pool *p, bool wait)
{
	pthread_mutex_lock(&p->mu);
	bool got = false;
	if (p->popped < p->pushed) {
		unsigned char *f = &p->finished[p->popped % p->window];
		while (!*f && wait)
			pthread_cond_wait(&p->done, &p->mu);
		if ((got = *f)) {
			*f = 0;
			p->popped++;
		}
	}
	pthread_mutex_unlock(&p->mu);
	return got;
}
