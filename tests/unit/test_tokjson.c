/*
 * test_tokjson.c — token ids as JSON: the arrays read back by a JSON parser as the ids
 * written, whatever the width they were stored at.
 */
#include <string.h>

#include "core/json.h"
#include "data/tokjson.h"
#include "unit.h"

/* Parse "[...]" back into ids with the JSON scanner, independently of how it was written. */
static size_t read_ids(const char *p, size_t n, uint32_t *out, size_t cap)
{
	llm_json_val arr, k, v;
	size_t pos, it = 0, got = 0;
	const char *msg;
	if (llm_json_parse_value(p, n, &arr, &pos, &msg) != LLM_OK || arr.type != LLM_JSON_ARRAY)
		return (size_t)-1;
	int64_t x;
	while (llm_json_next(&arr, &it, &k, &v) == LLM_OK && got < cap)
		if (llm_json_i64(&v, &x) == LLM_OK)
			out[got++] = (uint32_t)x;
	return got;
}

static void test_ids(void)
{
	const uint32_t t[] = { 0, 7, 65535, 65536, 4294967295u };
	llm_buf b = LLM_BUF_INIT;
	llm_tokjson_ids(&b, t, 5);
	CHECK(b.len == strlen("[0, 7, 65535, 65536, 4294967295]"));
	CHECK(memcmp(b.p, "[0, 7, 65535, 65536, 4294967295]", b.len) == 0);
	uint32_t back[8];
	CHECK_EQ_INT((int)read_ids(b.p, b.len, back, 8), 5);
	CHECK(memcmp(back, t, sizeof t) == 0);
	llm_buf_reset(&b);
	llm_tokjson_ids(&b, t, 0);
	CHECK(b.len == 2 && memcmp(b.p, "[]", 2) == 0);
	llm_buf_release(&b);
}

/* Raw ids at width 2 (any alignment) and 4 read as the same numbers as their uint32_t. */
static void test_raw(void)
{
	const uint32_t t[] = { 1, 300, 65535, 2, 40000 };
	unsigned char w2[1 + 10], w4[20];
	for (int i = 0; i < 5; i++) {
		uint16_t v = (uint16_t)t[i];
		memcpy(w2 + 1 + 2 * i, &v, 2); /* odd address */
		memcpy(w4 + 4 * i, &t[i], 4);
	}
	llm_buf a = LLM_BUF_INIT, b = LLM_BUF_INIT, c = LLM_BUF_INIT;
	llm_tokjson_ids(&a, t, 5);
	llm_tokjson_raw_ids(&b, w2 + 1, 2, 5);
	llm_tokjson_raw_ids(&c, w4, 4, 5);
	CHECK(a.len == b.len && memcmp(a.p, b.p, a.len) == 0);
	CHECK(a.len == c.len && memcmp(a.p, c.p, a.len) == 0);
	llm_buf_release(&a);
	llm_buf_release(&b);
	llm_buf_release(&c);
}

/* A record's members: "inputs" only when it has them, from widened or raw tokens alike. */
static void test_members(void)
{
	const uint32_t lab[] = { 5, 6, 7 }, inp[] = { 5, 0, 7 };
	uint16_t lab16[3] = { 5, 6, 7 }, inp16[3] = { 5, 0, 7 };
	llm_tok_rec plain = { .tokens = lab, .raw_tokens = lab16, .n = 3 };
	llm_tok_rec raw = { .raw_tokens = lab16, .raw_inputs = inp16, .n = 3 };
	llm_tok_rec wide = { .tokens = lab, .inputs = inp, .raw_tokens = lab16, .raw_inputs = inp16, .n = 3 };
	llm_buf b = LLM_BUF_INIT;
	llm_tokjson_members(&b, &plain, 2);
	const char *want = "\"tokens\": [5, 6, 7]";
	CHECK(b.len == strlen(want) && memcmp(b.p, want, b.len) == 0);
	want = "\"tokens\": [5, 6, 7], \"inputs\": [5, 0, 7]";
	llm_buf_reset(&b);
	llm_tokjson_members(&b, &raw, 2);
	CHECK(b.len == strlen(want) && memcmp(b.p, want, b.len) == 0);
	llm_buf_reset(&b);
	llm_tokjson_members(&b, &wide, 2);
	CHECK(b.len == strlen(want) && memcmp(b.p, want, b.len) == 0);
	/* as an object member list, it is valid JSON */
	llm_buf o = LLM_BUF_INIT;
	llm_buf_addc(&o, '{');
	llm_buf_add(&o, b.p, b.len);
	llm_buf_addc(&o, '}');
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	CHECK_EQ_INT(llm_json_parse(&rec, o.p, o.len), LLM_OK);
	llm_json_rec_release(&rec);
	llm_buf_release(&o);
	llm_buf_release(&b);
}

int main(void)
{
	RUN(test_ids);
	RUN(test_raw);
	RUN(test_members);
	return unit_done();
}
