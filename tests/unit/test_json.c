/* Unit tests for lib/json: validation, field access, unescaping, editing byte for byte. */
#include "core/json.h"
#include "unit.h"

static int parse(llm_json_rec *r, const char *s)
{
	return llm_json_parse(r, s, strlen(s));
}

static void test_valid_and_invalid(void)
{
	static const char *good[] = {
		"{}", " {\"a\":1} ", "{\"a\":[1,2,{\"b\":null}],\"c\":true,\"d\":false}",
		"{\"n\":-0.5e+10}", "{\"s\":\"\\u00e9\\ud83d\\ude00\\n\\\"\"}", "{\"u\":\"中文\"}",
		"{\"x\":0}", "{\"lone\":\"\\udc00\"}",
	};
	static const char *bad[] = {
		"", "[]", "{", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{\"a\":01}", "{\"a\":1.}",
		"{\"a\":\"\\x\"}", "{\"a\":\"\x01\"}", "{\"a\":\"\xff\"}", "{\"a\":\"\xc0\xaf\"}",
		"{\"a\":tru}", "{\"a\":1} x", "{\"a\":\"\\u12\"}", "{\"a\":\"unterminated}",
		"{\"a\":\"\xed\xa0\x80\"}", /* encoded surrogate */
	};
	llm_json_rec r;
	llm_json_rec_init(&r);
	for (size_t i = 0; i < sizeof good / sizeof *good; i++)
		CHECK(parse(&r, good[i]) == LLM_OK);
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		int rc = parse(&r, bad[i]);
		if (rc != LLM_EFORMAT)
			printf("#   accepted bad input #%zu\n", i);
		CHECK(rc == LLM_EFORMAT);
		CHECK(r.err_msg != NULL);
	}
	llm_json_rec_release(&r);
}

static void test_error_position(void)
{
	llm_json_rec r;
	llm_json_rec_init(&r);
	CHECK(parse(&r, "{\"a\": 1, \"b\" 2}") == LLM_EFORMAT);
	CHECK_EQ_INT(r.err_pos, 13);
	CHECK_STR(r.err_msg, "expected ':'");
	llm_json_rec_release(&r);
}

static void test_deep_nesting(void)
{
	llm_buf b = LLM_BUF_INIT;
	llm_buf_adds(&b, "{\"a\":");
	for (int i = 0; i < 100000; i++)
		llm_buf_addc(&b, '[');
	llm_json_rec r;
	llm_json_rec_init(&r);
	CHECK(llm_json_parse(&r, b.p, b.len) == LLM_EFORMAT);
	CHECK_STR(r.err_msg, "nesting too deep");
	llm_json_rec_release(&r);
	llm_buf_release(&b);
}

static void test_get_and_unescape(void)
{
	llm_json_rec r;
	llm_json_rec_init(&r);
	const char *s = "{\"text\": \"a\\tb\\u4e2d\\ud83d\\ude00\\/\", \"n\": 42, \"f\": 1.5, "
	                "\"k\\u0065y\": \"v\", \"text\": \"last\"}";
	CHECK(parse(&r, s) == LLM_OK);
	llm_buf b = LLM_BUF_INIT;
	CHECK(llm_json_get_str(&r, "text", &b) == LLM_OK);
	CHECK_STR(b.p, "last"); /* the last duplicate wins */
	llm_buf_reset(&b);
	CHECK(llm_json_str(&r.fields[0].val, &b) == LLM_OK);
	CHECK_STR(b.p, "a\tb\xe4\xb8\xad\xf0\x9f\x98\x80/");
	int64_t n;
	double f;
	CHECK(llm_json_get_i64(&r, "n", &n) == LLM_OK);
	CHECK_EQ_INT(n, 42);
	CHECK(llm_json_get_num(&r, "f", &f) == LLM_OK);
	CHECK_NEAR(f, 1.5, 0);
	CHECK(llm_json_get_i64(&r, "f", &n) == LLM_EINVAL);
	CHECK(llm_json_get(&r, "key") != NULL); /* escaped key matches */
	CHECK(llm_json_get(&r, "k\\u0065y") == NULL); /* as the escape, it does not */
	CHECK(llm_json_get_str(&r, "missing", &b) == LLM_ENOTFOUND);
	CHECK(llm_json_get_str(&r, "n", &b) == LLM_EINVAL);
	llm_buf_release(&b);
	/* An empty string value still leaves a NUL-terminated buffer. */
	CHECK(parse(&r, "{\"e\": \"\"}") == LLM_OK);
	CHECK(llm_json_get_str(&r, "e", &b) == LLM_OK);
	CHECK(b.p != NULL && b.len == 0 && b.p[0] == 0);
	llm_buf_release(&b);
	llm_json_rec_release(&r);
}

/* Strings are scanned a block at a time: an escape, a quote or a control character at every
 * place of strings of every length up to three blocks, after ASCII or Chinese, each escape
 * decoded and the other two placed where parsing must stop. */
static void test_specials_at_every_place(void)
{
	static const struct {
		const char *json, *text; /* in the string, and what it decodes to */
	} esc[] = { { "\\n", "\n" }, { "\\\"", "\"" }, { "\\\\", "\\" }, { "\\u00e9", "\xc3\xa9" } };
	llm_json_rec r;
	llm_json_rec_init(&r);
	llm_buf in = LLM_BUF_INIT, want = LLM_BUF_INIT, got = LLM_BUF_INIT;
	size_t bad = 0;
	for (int zh = 0; zh < 2; zh++)
		for (size_t len = 0; len <= 48; len++)
			for (size_t at = 0; at <= len; at++)
				for (size_t e = 0; e < sizeof esc / sizeof *esc + 2; e++) {
					const char *filler = zh ? "\xe4\xb8\xad" : "x";
					llm_buf_reset(&in);
					llm_buf_reset(&want);
					llm_buf_add(&in, "{\"t\": \"", 7);
					size_t err = 0;
					for (size_t k = 0; k <= len; k++) {
						if (k == at) {
							if (e < sizeof esc / sizeof *esc) {
								llm_buf_add(&in, esc[e].json, strlen(esc[e].json));
								llm_buf_add(&want, esc[e].text, strlen(esc[e].text));
							} else {
								err = in.len; /* a control character, or the string's end */
								llm_buf_addc(&in, e == sizeof esc / sizeof *esc ? '\x01' : '"');
							}
						}
						if (k < len) {
							llm_buf_add(&in, filler, strlen(filler));
							llm_buf_add(&want, filler, strlen(filler));
						}
					}
					llm_buf_add(&in, "\"}", 2);
					int rc = llm_json_parse(&r, in.p, in.len);
					if (e == sizeof esc / sizeof *esc) { /* the control character */
						bad += rc != LLM_EFORMAT || r.err_pos != err;
					} else if (e > sizeof esc / sizeof *esc) { /* "t": "..."...": ends early */
						bad += rc != LLM_EFORMAT || r.err_pos != err + 1;
					} else {
						llm_buf_reset(&got);
						bad += rc != LLM_OK || llm_json_get_str(&r, "t", &got) != LLM_OK ||
						       got.len != want.len || memcmp(got.p, want.p, got.len) != 0;
					}
				}
	CHECK_EQ_INT(bad, 0);
	llm_buf_release(&in);
	llm_buf_release(&want);
	llm_buf_release(&got);
	llm_json_rec_release(&r);
}

static void test_iterate(void)
{
	llm_json_val v, k, e;
	const char *s = "{\"a\": [1, \"x\", {\"b\": 2}], \"c\": {\"d\": [true]}}";
	CHECK(llm_json_parse_value(s, strlen(s), &v, NULL, NULL) == LLM_OK);
	llm_json_val a = llm_json_member(&v, "a");
	CHECK(a.type == LLM_JSON_ARRAY);
	size_t it = 0;
	int count = 0;
	while (llm_json_next(&a, &it, &k, &e) == LLM_OK)
		count++;
	CHECK_EQ_INT(count, 3);
	llm_json_val c = llm_json_member(&v, "c");
	llm_json_val d = llm_json_member(&c, "d");
	CHECK(d.type == LLM_JSON_ARRAY);
	CHECK(llm_json_member(&v, "zz").type == LLM_JSON_INVALID);
}

static void test_put_str(void)
{
	llm_buf b = LLM_BUF_INIT;
	llm_json_put_str(&b, "q\"\\\n\x01\xe2\x80\xa8中\xff", 12);
	CHECK_STR(b.p, "\"q\\\"\\\\\\n\\u0001\\u2028中\xef\xbf\xbd\"");
	llm_json_rec r;
	llm_json_rec_init(&r);
	llm_buf obj = LLM_BUF_INIT;
	llm_buf_adds(&obj, "{\"s\": ");
	llm_buf_add(&obj, b.p, b.len);
	llm_buf_addc(&obj, '}');
	CHECK(llm_json_parse(&r, obj.p, obj.len) == LLM_OK); /* output is valid JSON */
	llm_buf_reset(&b);
	llm_json_put_f64(&b, 0.1);
	CHECK_STR(b.p, "0.1");
	llm_buf_reset(&b);
	llm_json_put_f64(&b, 1.0 / 3);
	CHECK(strtod(b.p, NULL) == 1.0 / 3);
	llm_buf_reset(&b);
	llm_json_put_f64(&b, NAN);
	CHECK_STR(b.p, "null");
	llm_buf_release(&b);
	llm_buf_release(&obj);
	llm_json_rec_release(&r);
}

static void test_edit_keeps_bytes(void)
{
	llm_json_rec r;
	llm_json_edit ed;
	llm_buf out = LLM_BUF_INIT;
	llm_json_rec_init(&r);
	llm_json_edit_init(&ed);
	const char *s = "{ \"id\":\"x\" ,\"text\":  \"héllo\",\"n\":1.50e0 }";
	CHECK(parse(&r, s) == LLM_OK);
	llm_json_write(&r, NULL, &out);
	CHECK_STR(out.p, s); /* untouched record is byte-identical */

	llm_buf_reset(&out);
	llm_json_edit_str(&ed, "text", "bye", 3);
	llm_json_edit_i64(&ed, "count", 7);
	llm_json_write(&r, &ed, &out);
	CHECK_STR(out.p, "{ \"id\":\"x\" ,\"text\":  \"bye\",\"n\":1.50e0 ,\"count\":7 }");

	llm_buf_reset(&out);
	llm_json_edit_reset(&ed);
	llm_json_edit_del(&ed, "id");
	llm_json_edit_f64(&ed, "score", 0.25);
	llm_json_write(&r, &ed, &out);
	CHECK_STR(out.p, "{\"text\":  \"héllo\",\"n\":1.50e0 ,\"score\":0.25 }");
	CHECK(parse(&r, out.p) == LLM_OK);

	/* Empty object gets default separators. */
	CHECK(parse(&r, "{}") == LLM_OK);
	llm_buf_reset(&out);
	llm_json_edit_reset(&ed);
	llm_json_edit_str(&ed, "a", "b", 1);
	llm_json_edit_str(&ed, "c", "d", 1);
	llm_json_write(&r, &ed, &out);
	CHECK_STR(out.p, "{\"a\": \"b\", \"c\": \"d\"}");
	llm_buf_release(&out);
	llm_json_edit_release(&ed);
	llm_json_rec_release(&r);
}

int main(void)
{
	RUN(test_valid_and_invalid);
	RUN(test_error_position);
	RUN(test_deep_nesting);
	RUN(test_get_and_unescape);
	RUN(test_specials_at_every_place);
	RUN(test_iterate);
	RUN(test_put_str);
	RUN(test_edit_keeps_bytes);
	return unit_done();
}
