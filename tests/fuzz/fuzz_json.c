/* Fuzz target: the JSONL record scanner, unescaping, editing and re-parsing of the result. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	if (llm_json_parse(&rec, (const char *)data, size) == LLM_OK) {
		llm_buf b = LLM_BUF_INIT;
		for (size_t i = 0; i < rec.nfields; i++) {
			llm_buf_reset(&b);
			llm_json_str(&rec.fields[i].key, &b);
			if (rec.fields[i].val.type == LLM_JSON_STRING)
				llm_json_str(&rec.fields[i].val, &b);
			size_t it = 0;
			llm_json_val k, v;
			while (llm_json_next(&rec.fields[i].val, &it, &k, &v) == LLM_OK)
				;
		}
		llm_json_edit ed;
		llm_json_edit_init(&ed);
		llm_json_edit_str(&ed, "text", (const char *)data, size < 64 ? size : 64);
		llm_json_edit_del(&ed, "id");
		llm_json_edit_f64(&ed, "score", 0.5);
		llm_buf out = LLM_BUF_INIT;
		llm_json_write(&rec, &ed, &out);
		llm_json_rec again;
		llm_json_rec_init(&again);
		if (llm_json_parse(&again, out.p, out.len) != LLM_OK)
			abort(); /* an edit of a valid record must stay valid */
		llm_json_rec_release(&again);
		llm_buf_release(&out);
		llm_buf_release(&b);
		llm_json_edit_release(&ed);
	}
	llm_json_rec_release(&rec);
	return 0;
}
