/*
 * batchloop.h — the double-buffered batch loop of the filters that work records on the pool
 * (llm-clean, llm-score, llm-tox): the main thread copies input lines into one batch while
 * the pool (lib/core/pool.h) works the batch before it, and writes each batch, in input
 * order, once it is worked.
 *
 *	tool_batchloop l;
 *	tool_batchloop_init(&l, &(tool_batchloop_ops){ sizeof(item), work, write, ... }, pool,
 *	                    ctx, max_bytes, max_docs, &co);
 *	for each input: failed |= tool_batchloop_file(&l, path, run);
 *	tool_batchloop_release(&l);
 *
 * A tool's item struct begins with a tool_batch_line (the line's place in the batch's bytes,
 * its number and length); work(ctx, batch, i, worker) runs on the pool for item i with the
 * worker's scratch, write(ctx, batch) on the main thread for the whole batch in order. Every
 * batch of an input is written before the next input is opened, so l.name (the input's name
 * for messages) is valid in write. With one worker there is nothing to overlap: a batch is
 * written as soon as it is worked and one buffer is enough.
 *
 * Memory: two batches, each at most max_bytes of input plus one line, or max_docs lines; the
 * items of a batch are kept (and reused) across batches, up to the most any batch held.
 */
#ifndef LLM_TOOL_BATCHLOOP_H
#define LLM_TOOL_BATCHLOOP_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/pool.h"
#include "tool.h"

/* The head of every item: its line in the batch's bytes. */
typedef struct {
	size_t off, len;  /* the line in data (its first --max-line bytes when too long) */
	size_t full_len;  /* the line's bytes in the input */
	uint64_t lineno;
	int too_long;     /* over --max-line */
} tool_batch_line;

typedef struct {
	llm_buf data;     /* the lines' bytes */
	void *items;      /* n items of ops.item_size, cap allocated */
	size_t n, cap;
} tool_batch;

typedef struct {
	size_t item_size; /* sizeof the tool's item, which begins with a tool_batch_line */
	void (*work)(void *ctx, tool_batch *b, size_t i, int worker);
	void (*write)(void *ctx, tool_batch *b);
	void (*item_init)(void *item);    /* on a zeroed item when allocated, or NULL */
	void (*item_release)(void *item); /* at release, or NULL */
} tool_batchloop_ops;

typedef struct {
	tool_batchloop_ops ops;
	llm_pool *pool;
	void *ctx;
	size_t max_bytes, max_docs, max_line;
	const struct tool_common *co;
	tool_batch b[2];
	int cur;          /* b[cur] is read */
	int job;          /* b[job] is worked, when pending */
	int pending;
	const char *name; /* the input being read */
} tool_batchloop;

/* The i-th item of batch b of loop l. */
static inline void *tool_batch_item(const tool_batchloop *l, const tool_batch *b, size_t i)
{
	return (char *)b->items + i * l->ops.item_size;
}

/* The line of an item in its batch's bytes. */
static inline const char *tool_batch_text(const tool_batch *b, const tool_batch_line *ln)
{
	return b->data.p + ln->off;
}

void tool_batchloop_init(tool_batchloop *l, const tool_batchloop_ops *ops, llm_pool *pool,
                         void *ctx, size_t max_bytes, size_t max_docs,
                         const struct tool_common *co);
void tool_batchloop_release(tool_batchloop *l);

/* Every line of input path through the loop (run: the run to follow, or NULL); 1 when the
 * input failed (reported), 0 otherwise. */
int tool_batchloop_file(tool_batchloop *l, const char *path, llm_run *run);

#endif
