/*
 * tokjson.c — token ids as JSON (see tokjson.h).
 */
#include "tokjson.h"

#include <string.h>

void llm_tokjson_ids(llm_buf *out, const uint32_t *t, size_t n)
{
	llm_buf_addc(out, '[');
	for (size_t i = 0; i < n; i++)
		llm_buf_addf(out, i ? ", %u" : "%u", t[i]);
	llm_buf_addc(out, ']');
}

void llm_tokjson_raw_ids(llm_buf *out, const void *raw, uint32_t width, size_t n)
{
	const unsigned char *p = raw;
	llm_buf_addc(out, '[');
	for (size_t i = 0; i < n; i++) {
		uint32_t v = 0;
		memcpy(&v, p + i * width, width); /* little-endian host (tokstream.c checks) */
		llm_buf_addf(out, i ? ", %u" : "%u", v);
	}
	llm_buf_addc(out, ']');
}

void llm_tokjson_members(llm_buf *out, const llm_tok_rec *t, uint32_t width)
{
	llm_buf_adds(out, "\"tokens\": ");
	if (t->tokens)
		llm_tokjson_ids(out, t->tokens, t->n);
	else
		llm_tokjson_raw_ids(out, t->raw_tokens, width, t->n);
	if (!t->raw_inputs)
		return;
	llm_buf_adds(out, ", \"inputs\": ");
	if (t->inputs)
		llm_tokjson_ids(out, t->inputs, t->n);
	else
		llm_tokjson_raw_ids(out, t->raw_inputs, width, t->n);
}
