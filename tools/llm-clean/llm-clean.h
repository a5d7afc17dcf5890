/*
 * llm-clean.h — what tools/llm-clean.c (options, loading, main) and tools/llm-clean/records.c
 * (one batch's records: cleaned on the pool's workers, then written in order) share.
 */
#ifndef LLM_CLEAN_TOOL_H
#define LLM_CLEAN_TOOL_H

#include <stddef.h>

#include "../batchloop.h"
#include "../tool.h"
#include "core/io.h"
#include "core/json.h"
#include "core/pool.h"
#include "text/clean.h"
#include "text/zhseg.h"

/* One record of a batch. */
typedef struct {
	tool_batch_line ln; /* first: the loop's (batchloop.h) */
	llm_json_rec rec;
	llm_buf out;
	llm_clean_result res;
	size_t words;     /* --segment: words written */
} item;

/* --segment's scratch: the kept record is parsed again and written with the words added. */
typedef struct {
	const char *field, *text_field;
	llm_zhseg *z;
	llm_json_rec rec;
	llm_json_edit ed;
	llm_buf text, words, out;
} wordfield;

/* A worker of the pool: its cleaner and --segment's scratch. */
typedef struct {
	llm_cleaner *cl;
	wordfield *seg; /* NULL without --segment */
} worker;

/* The run: what the batch loop's callbacks read. */
struct ctx {
	const struct tool_common *co;
	const llm_clean_cfg *cfg;
	llm_run *run;
	llm_clean_tally *tally;
	llm_writer *out;
	worker *workers;     /* one per worker of the pool */
	llm_pool *pool;
	size_t batch_bytes;
	size_t judged_max; /* --judged-text */
	tool_batchloop loop;
};

/* The batch loop's callbacks (batchloop.h): clean record i of a batch on worker w; account
 * and write a cleaned batch, in order; an item slot's set-up and release. */
void clean_item(void *ctx, tool_batch *b, size_t i, int w);
void clean_write_batch(void *ctx, tool_batch *b);
void clean_item_init(void *p);
void clean_item_release(void *p);

#endif
