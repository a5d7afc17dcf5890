/*
 * batchloop.c — read a batch while the pool works the previous one (see batchloop.h).
 */
#include "batchloop.h"

#include <stdlib.h>
#include <string.h>

void tool_batchloop_init(tool_batchloop *l, const tool_batchloop_ops *ops, llm_pool *pool,
                         void *ctx, size_t max_bytes, size_t max_docs,
                         const struct tool_common *co)
{
	memset(l, 0, sizeof *l);
	l->ops = *ops;
	l->pool = pool;
	l->ctx = ctx;
	l->max_bytes = max_bytes ? max_bytes : 1;
	l->max_docs = max_docs ? max_docs : 1;
	l->max_line = co->max_line;
	l->co = co;
}

void tool_batchloop_release(tool_batchloop *l)
{
	for (int k = 0; k < 2; k++) {
		tool_batch *b = &l->b[k];
		for (size_t i = 0; l->ops.item_release && i < b->cap; i++)
			l->ops.item_release(tool_batch_item(l, b, i));
		free(b->items);
		llm_buf_release(&b->data);
	}
	memset(l->b, 0, sizeof l->b);
}

static void work_item(void *ctx, size_t i, int worker)
{
	tool_batchloop *l = ctx;
	l->ops.work(l->ctx, &l->b[l->job], i, worker);
}

static void write_batch(tool_batchloop *l, tool_batch *b)
{
	l->ops.write(l->ctx, b);
	b->n = 0;
	llm_buf_reset(&b->data);
}

/* The batch being worked, when there is one: wait for it and write it. */
static void drain(tool_batchloop *l)
{
	if (!l->pending)
		return;
	llm_pool_wait(l->pool);
	write_batch(l, &l->b[l->job]);
	l->pending = 0;
}

/* Start working the batch just read and write the previous one meanwhile; the next batch
 * is read into the other buffer. */
static void submit(tool_batchloop *l)
{
	if (l->pending)
		llm_pool_wait(l->pool);
	tool_batch *prev = l->pending ? &l->b[l->job] : NULL;
	l->job = l->cur;
	llm_pool_start(l->pool, l->b[l->job].n, work_item, l);
	if (prev)
		write_batch(l, prev);
	l->pending = 1;
	if (llm_pool_workers(l->pool) == 1)
		drain(l);
	else
		l->cur ^= 1;
}

/* A line of the input, added to the batch being read. Items point into data by offset, so
 * growing data never invalidates them. */
static void add_line(tool_batchloop *l, const tool_lines *in)
{
	tool_batch *b = &l->b[l->cur];
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 1024;
		b->items = llm_realloc(b->items, cap * l->ops.item_size);
		memset(tool_batch_item(l, b, b->cap), 0, (cap - b->cap) * l->ops.item_size);
		for (size_t i = b->cap; l->ops.item_init && i < cap; i++)
			l->ops.item_init(tool_batch_item(l, b, i));
		b->cap = cap;
	}
	tool_batch_line *it = tool_batch_item(l, b, b->n++);
	it->too_long = in->too_long;
	it->full_len = in->full_len;
	/* an over-long line's reject keeps no more than --max-line of its head */
	it->len = it->too_long && l->max_line < in->len ? l->max_line : in->len;
	it->off = b->data.len;
	it->lineno = in->lineno;
	llm_buf_add(&b->data, in->line, it->len);
}

int tool_batchloop_file(tool_batchloop *l, const char *path, llm_run *run)
{
	tool_lines in;
	if (tool_lines_open(&in, path, l->co, run) != LLM_OK) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	l->name = in.name;
	while (tool_lines_next(&in)) {
		add_line(l, &in);
		tool_batch *b = &l->b[l->cur];
		if (b->data.len >= l->max_bytes || b->n >= l->max_docs)
			submit(l);
	}
	/* every batch of an input is written before the next input begins (its name and
	 * accounting) */
	if (l->b[l->cur].n)
		submit(l);
	drain(l);
	l->name = NULL;
	if (tool_lines_close(&in) != LLM_OK) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	return 0;
}
