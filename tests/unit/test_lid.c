/* test_lid.c — the built-in detector on the sample corpus (records carry their language). */
#include "text/lid.h"

#include "core/err.h"
#include "core/io.h"
#include "core/json.h"
#include "unit.h"

static const char *detect(const char *s)
{
	static llm_lid_result r;
	llm_lid_detect(s, strlen(s), 0, &r);
	return r.lang;
}

static void test_scripts(void)
{
	CHECK_STR(detect("The river flows to the sea and the people live with it."), "en");
	CHECK_STR(detect("\xE8\xBF\x99\xE6\x98\xAF\xE4\xB8\xAD\xE6\x96\x87\xE3\x80\x82"), "zh");
	CHECK_STR(detect("\xE3\x81\x93\xE3\x82\x8C\xE3\x81\xAF\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xA7\xE3\x81\x99\xE3\x80\x82"), "ja");
	CHECK_STR(detect("\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4 \xEB\xAC\xB8\xEC\x9E\xA5\xEC\x9E\x85\xEB\x8B\x88\xEB\x8B\xA4."), "ko");
	CHECK_STR(detect("\xD0\xAD\xD1\x82\xD0\xBE \xD1\x80\xD1\x83\xD1\x81\xD1\x81\xD0\xBA\xD0\xB8\xD0\xB9 \xD1\x82\xD0\xB5\xD0\xBA\xD1\x81\xD1\x82"), "ru");
	CHECK_STR(detect("Der Fluss und die Stadt sind nicht mit dem Meer verbunden."), "de");
	CHECK_STR(detect("12345 !!!"), "und");
	CHECK_STR(detect(""), "und");
}

/* zh/zh-Hant/en records of the samples (and the books': Tang poems and Song ci are
 * Traditional, the classics Simplified): the detector agrees with the recorded language. */
static void test_samples(void)
{
	static const char *const files[] = { "samples/corpus/wiki.jsonl", "samples/corpus/qa.jsonl",
	                                     "samples/corpus/web.jsonl", "samples/corpus/books.jsonl" };
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	llm_buf text = LLM_BUF_INIT, lang = LLM_BUF_INIT;
	size_t n = 0, ok = 0, nhant = 0, okhant = 0;
	for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
		llm_reader *r;
		CHECK_EQ_INT(llm_reader_open(&r, unit_path(files[f])), LLM_OK);
		char *line;
		size_t len;
		while (r && llm_reader_line(r, &line, &len) == LLM_OK) {
			if (llm_json_parse(&rec, line, len) != LLM_OK)
				continue;
			llm_buf_reset(&lang);
			llm_buf_reset(&text);
			if (llm_json_get_str(&rec, "lang", &lang) != LLM_OK ||
			    llm_json_get_str(&rec, "text", &text) != LLM_OK)
				continue;
			const char *want = lang.p;
			if ((strcmp(want, "zh") && strcmp(want, "zh-Hant") && strcmp(want, "en")) || text.len < 200)
				continue;
			llm_lid_result lr;
			llm_lid_detect(text.p, text.len, 1 << 16, &lr);
			n++;
			ok += strcmp(lr.lang, want) == 0;
			if (strcmp(want, "zh-Hant") == 0) {
				nhant++;
				okhant += strcmp(lr.lang, want) == 0;
			} else if (strcmp(lr.lang, want) != 0) {
				printf("#   %s: %s\n", want, lr.lang);
			}
		}
		llm_reader_free(r);
	}
	printf("#   %zu of %zu zh/zh-Hant/en sample records identified (zh-Hant %zu of %zu)\n", ok, n,
	       okhant, nhant);
	CHECK(n > 1000);
	CHECK(nhant > 500);
	CHECK(ok * 100 >= n * 98);
	CHECK(okhant * 100 >= nhant * 98);
	llm_json_rec_release(&rec);
	llm_buf_release(&text);
	llm_buf_release(&lang);
}

int main(void)
{
	RUN(test_scripts);
	RUN(test_samples);
	return unit_done();
}
