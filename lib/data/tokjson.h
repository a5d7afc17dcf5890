/*
 * tokjson.h — token sequences and token stream records written as JSON, for the people and
 * programs that read them as text: llm-shard --dump --format jsonl, and the rejects files of
 * llm-shard and llm-noise (core/run.h), where a rejected record must keep its tokens.
 *
 * Ids are written as arrays "[1, 2, 3]" (", " between ids, as llm-shard --dump has always
 * written them). Functions append to out and never fail (memory is allocated or aborts).
 */
#ifndef LLM_TOKJSON_H
#define LLM_TOKJSON_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "tok/tokstream.h"

/* n ids as a JSON array. */
void llm_tokjson_ids(llm_buf *out, const uint32_t *t, size_t n);
/* The same for n tokens as a token stream stores them (width 2: little-endian u16 at any
 * alignment; 4: u32). */
void llm_tokjson_raw_ids(llm_buf *out, const void *raw, uint32_t width, size_t n);
/*
 * The tokens of a record of a stream of that width as JSON object members:
 * "tokens": [...], and ", \"inputs\": [...]" when the record has noised inputs. This is the
 * extra of llm_run_reject for a rejected record, which then keeps everything it held.
 */
void llm_tokjson_members(llm_buf *out, const llm_tok_rec *t, uint32_t width);

#endif
