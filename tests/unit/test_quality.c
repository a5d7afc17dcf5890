/*
 * test_quality.c — word splitting, Gopher/C4/FineWeb rules on English and Chinese cases, and
 * agreement with datatrove's decisions on the English samples (tests/data/clean/
 * datatrove-en.tsv, written by bench/clean_datatrove.py --golden from datatrove 0.10.1) and,
 * with jieba's words, with FineWeb-2's Chinese filters (fineweb2-zh.tsv).
 */
#include "text/quality.h"

#include <math.h>
#include <stdlib.h>

#include "core/utf8.h"
#include "text/filter.h"
#include "text/zhseg.h"

#include "core/err.h"
#include "core/io.h"
#include "core/json.h"
#include "unit.h"

static llm_quality *q;

/* Words of s joined by '|'. */
static const char *words(const char *s)
{
	static llm_buf b;
	llm_buf_reset(&b);
	llm_quality_set_text(q, s, strlen(s), NULL);
	for (size_t i = 0; i < llm_quality_nwords(q); i++) {
		size_t n;
		const char *w = llm_quality_word(q, i, &n);
		if (i)
			llm_buf_addc(&b, '|');
		llm_buf_add(&b, w, n);
	}
	return b.p ? b.p : "";
}

/* Expected values: spaCy 3.8's blank English tokenizer (what datatrove counts with). */
static void test_words(void)
{
	CHECK_STR(words("Hello, world! I don't know the U.S. well-known co-op (e.g. this)"),
	          "Hello|,|world|!|I|do|n't|know|the|U.S.|well|-|known|co|-|op|(|e.g.|this|)");
	CHECK_STR(words("\"quoted\"... end. 3.5kg $100 a/b Mr. Smith's car."),
	          "\"|quoted|\"|...|end|.|3.5|kg|$|100|a|/|b|Mr.|Smith|'s|car|.");
	CHECK_STR(words("see http://example.com/a?b=c or foo@bar.com :) f(x): ''"),
	          "see|http://example.com/a?b=c|or|foo@bar.com|:)|f(x|):|''");
	/* spaCy's URL_MATCH: a host needs a lower-case TLD or a public IPv4 address */
	CHECK_STR(words("http://localhost:631/admin smb://user:password@server/printer www.Example.com"),
	          "http://localhost:631|/|admin|smb://user|:|password@server|/|printer|www.Example.com");
	CHECK_STR(words("user@Host.Com http://10.0.0.1/x http://8.8.8.8:53/ 1.2.3.4:1234567 ftp://a.b.cd:80#f"),
	          "user@Host|.|Com|http://10.0.0.1|/|x|http://8.8.8.8:53/|1.2.3.4:1234567|ftp://a.b.cd:80#f");
	CHECK_STR(words("git@github.com:foo/bar.git 172.20.1.1 1.2.3.255 x.co/path?q=1 http://ex_ample.com/"),
	          "git@github.com|:|foo|/|bar.git|172.20.1.1|1.2.3.255|x.co/path?q=1|http://ex_ample.com/");
	CHECK_STR(words("cannot gonna 45\xC2\xB0" "C"), "can|not|gon|na|45|\xC2\xB0|C");
	/* Han and kana are one word per character; Hangul words are space separated */
	CHECK_STR(words("\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C\xE4\xB8\x96\xE7\x95\x8C abc"),
	          "\xE4\xBD\xA0|\xE5\xA5\xBD|\xEF\xBC\x8C|\xE4\xB8\x96|\xE7\x95\x8C|abc");
	CHECK_STR(words("\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4 \xEB\xAC\xB8\xEC\x9E\xA5"),
	          "\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4|\xEB\xAC\xB8\xEC\x9E\xA5");
	CHECK_STR(words(""), "");
	CHECK_STR(words(" \n\t "), "");
	/* other languages, as spaCy 3.8's blank tokenizer for each splits them */
	llm_quality_set_word_rules(q, LLM_WORDS_NO_ENGLISH | LLM_WORDS_NO_HYPHEN);  /* de */
	CHECK_STR(words("im Tar-Datei, 3-4 don't"), "im|Tar-Datei|,|3|-|4|don't");
	llm_quality_set_word_rules(q, LLM_WORDS_NO_ENGLISH | LLM_WORDS_ELISION);  /* fr */
	CHECK_STR(words("l'homme d\xE2\x80\x99un abc-def"), "l'|homme|d\xE2\x80\x99|un|abc|-|def");
	llm_quality_set_word_rules(q, 0);
}

/* A word's hash and power of the base, against Horner's rule one byte at a time, for every
 * length up to past the table of powers. */
static void test_word_hash(void)
{
	unsigned char t[130];
	uint64_t seed = 7;
	for (size_t i = 0; i < sizeof t; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		t[i] = (unsigned char)(seed >> 56);
	}
	for (size_t len = 0; len <= sizeof t; len++) {
		uint64_t h = 0, pw = 1;
		for (size_t i = 0; i < len; i++) {
			h = llm_words_addmod(llm_words_mulmod(h, LLM_WORDS_BASE), t[i] + 1u);
			pw = llm_words_mulmod(pw, LLM_WORDS_BASE);
		}
		llm_word w = llm_words_make((const char *)t, 0, len);
		CHECK(w.h == h);
		CHECK(w.pw == pw);
	}
}

static const char *run(const char *text, const char *lang, int which)
{
	static llm_buf out;
	llm_quality_params p;
	llm_quality_defaults(&p, lang);
	llm_quality_set_word_rules(q, p.word_rules);
	llm_quality_set_text(q, text, strlen(text), NULL);
	llm_verdict v;
	bool keep;
	switch (which) {
	case 0: keep = llm_quality_gopher(q, &p, &v); break;
	case 1: keep = llm_quality_repetition(q, &p, &v); break;
	case 2: keep = llm_quality_c4(q, &p, &out, NULL, &v); break;
	default: keep = llm_quality_fineweb(q, &p, &v); break;
	}
	return keep ? "keep" : v.reason;
}

static char *repeat(const char *fmt, int n, const char *sep)
{
	llm_buf b = LLM_BUF_INIT;
	for (int i = 0; i < n; i++) {
		if (i)
			llm_buf_adds(&b, sep);
		llm_buf_addf(&b, fmt, i);
	}
	return llm_buf_detach(&b, NULL);
}

/* English cases: the expected reasons are datatrove's on the same texts. */
static void test_english(void)
{
	char *good = repeat("Sentence number %d tells of the river and that town with its people.", 10, " ");
	CHECK_STR(run(good, "en", 0), "keep");
	CHECK_STR(run(good, "en", 1), "gopher_rep_top_2_gram");
	CHECK_STR(run(good, "en", 2), "keep");
	CHECK_STR(run(good, "en", 3), "keep");
	CHECK_STR(run("The cat sat with the dog.", "en", 0), "gopher_short_doc");
	char *s = repeat("#tag%d the word and more", 30, " ");
	CHECK_STR(run(s, "en", 0), "gopher_too_many_hashes");
	CHECK_STR(run(s, "en", 3), "fineweb_line_punct_ratio");
	free(s);
	s = repeat("- item %d of the list with words and more words here", 20, "\n");
	CHECK_STR(run(s, "en", 0), "gopher_too_many_bullets");
	free(s);
	s = repeat("Line %d of the text goes on and on with the words...", 20, "\n");
	CHECK_STR(run(s, "en", 0), "gopher_too_many_end_ellipsis");
	CHECK_STR(run(s, "en", 2), "c4_too_few_sentences");
	CHECK_STR(run(s, "en", 3), "keep");
	free(s);
	s = repeat("Cats dogs birds fish mice%d horses cows", 20, " ");
	CHECK_STR(run(s, "en", 0), "gopher_few_stop_words");
	free(s);
	s = repeat("the supercalifragilisticexpialidocious%d", 40, " ");
	CHECK_STR(run(s, "en", 0), "gopher_long_words");
	free(s);
	llm_buf b = LLM_BUF_INIT;
	for (int i = 0; i < 5; i++)
		llm_buf_adds(&b, "The same line repeats here with the words.\n");
	for (int i = 0; i < 5; i++)
		llm_buf_addf(&b, "Another distinct line %d with the text.\n", i);
	CHECK_STR(run(b.p, "en", 1), "gopher_rep_dup_line_frac");
	CHECK_STR(run(b.p, "en", 3), "fineweb_char_dup_ratio");
	llm_buf_release(&b);
	/* C4 page rules and line rules */
	char *c4 = repeat("This is sentence %d of a page. It has two sentences.", 4, "\n");
	CHECK_STR(run(c4, "en", 2), "keep");
	free(c4);
	CHECK_STR(run("Lorem ipsum dolor sit amet, consectetur.\nThis is fine. And more. Yes it is.", "en", 2),
	          "c4_lorem_ipsum");
	CHECK_STR(run("One two three {x}.\nA b c.", "en", 2), "c4_curly_bracket");
	llm_quality_params p;
	llm_quality_defaults(&p, "en");
	llm_buf out = LLM_BUF_INIT;
	uint64_t st[5] = { 0 };
	const char *page = "Menu\nPlease enable JavaScript to view this page.\n"
	                   "We use cookies, see our privacy policy.\n"
	                   "The river runs to the sea.[1] Fish swim in it. Birds fly over it.\n"
	                   "Boats sail on the water. People fish from them.\n";
	llm_quality_set_text(q, page, strlen(page), NULL);
	llm_verdict v;
	CHECK(llm_quality_c4(q, &p, &out, st, &v));
	CHECK_STR(out.p, "The river runs to the sea. Fish swim in it. Birds fly over it.\n"
	                 "Boats sail on the water. People fish from them.");
	CHECK_EQ_INT(st[1], 1); /* "Menu": no terminal punctuation */
	CHECK_EQ_INT(st[3], 1); /* javascript */
	CHECK_EQ_INT(st[4], 1); /* policy */
	llm_buf_release(&out);
	free(good);
}

/* Language tags to FineWeb-2's settings: the primary subtag, two or three letters; every
 * other language has none, and gopher-quality's run says so before judging it. */
static void test_languages(void)
{
	bool ok;
	CHECK_EQ_INT(llm_quality_lang_column(NULL, &ok), LLM_FILTER_EN);
	CHECK(ok);
	CHECK_EQ_INT(llm_quality_lang_column("und", &ok), LLM_FILTER_EN);
	CHECK(ok);
	CHECK_EQ_INT(llm_quality_lang_column("en-GB", &ok), LLM_FILTER_EN);
	CHECK(ok);
	int de = llm_quality_lang_column("de", &ok);
	CHECK(ok && de != LLM_FILTER_EN);
	CHECK_EQ_INT(llm_quality_lang_column("deu_Latn", &ok), de);
	CHECK_EQ_INT(llm_quality_lang_column("DE-at", &ok), de);
	CHECK_EQ_INT(llm_quality_lang_column("deu", &ok), de);
	int zh = llm_quality_lang_column("zh", &ok);
	CHECK_EQ_INT(llm_quality_lang_column("zh-Hant", &ok), zh);
	CHECK_EQ_INT(llm_quality_lang_column("yue", &ok), zh);
	CHECK_EQ_INT(llm_quality_lang_column("cmn_Hani", &ok), zh);
	CHECK(llm_quality_lang_column("ara", &ok) == llm_quality_lang_column("ar", &ok) && ok);
	CHECK_EQ_INT(llm_quality_lang_column("sv", &ok), LLM_FILTER_EN);
	CHECK(!ok);
	CHECK_EQ_INT(llm_quality_lang_column("d", &ok), LLM_FILTER_EN);
	CHECK(!ok);

	/* deu_Latn.yml's values and stop words ("wurde" is longer than any English one) */
	llm_quality_params p;
	llm_quality_defaults(&p, "de");
	CHECK(p.dup_line_frac == 0.263 && p.max_avg_word_len == 15 && p.min_avg_word_len == 0);
	CHECK(p.dup_para_frac == 0 && p.fw_char_dup_ratio == 0.1 && p.lang_configured && !p.cjk);
	char *de_text = repeat("Im Jahr %d wurde die Stadt von den Bauern mit einer Mauer umgeben.", 8, " ");
	CHECK_STR(run(de_text, "de", 0), "keep");
	CHECK_STR(run(de_text, "en", 0), "gopher_few_stop_words");
	/* the two stop words here are "im" and "wurde" */
	char *wurde = repeat("Sie wurde im Haus %d Mal gefragt wer schlief", 10, " ");
	CHECK_STR(run(wurde, "de", 0), "keep");
	free(wurde);

	/* sv: no settings; rejected before any step unless the parameter is off */
	llm_quality_defaults(&p, "sv");
	CHECK(!p.lang_configured && p.reject_unconfigured_lang);
	llm_verdict v;
	CHECK(!llm_quality_lang(&p, &v));
	CHECK_STR(v.reason, "lang_not_configured");
	llm_buf t = LLM_BUF_INIT, scratch = LLM_BUF_INIT;
	llm_buf_adds(&t, de_text);
	uint64_t counts[LLM_FILTER_NCOUNTERS] = { 0 };
	CHECK(!llm_filter_run(1u << LLM_FILTER_GOPHER_QUALITY, q, &p, NULL, &t, &scratch, counts, &v));
	CHECK_STR(v.reason, "lang_not_configured");
	v.reason = "";
	CHECK(llm_filter_run(1u << LLM_FILTER_GOPHER_REP, q, &p, NULL, &t, &scratch, counts, &v) ||
	      strcmp(v.reason, "lang_not_configured") != 0);
	p.reject_unconfigured_lang = false;
	CHECK(!llm_filter_run(1u << LLM_FILTER_GOPHER_QUALITY, q, &p, NULL, &t, &scratch, counts, &v));
	CHECK_STR(v.reason, "gopher_few_stop_words");
	llm_buf_release(&t);
	llm_buf_release(&scratch);
	free(de_text);
}

/* C4's line rules find their phrases and marks once per document, not once per line: a phrase
 * counts only inside one line, also after a line that held it was dropped for another reason,
 * and in a line that the citation rule edited. */
static void test_c4_lines(void)
{
	llm_quality_params p;
	llm_quality_defaults(&p, "en");
	llm_buf out = LLM_BUF_INIT, page = LLM_BUF_INIT;
	llm_buf_adds(&page, "Our privacy policy\n"                    /* no terminal mark */
	                    "Read the privacy\npolicy of the site.\n" /* split over two lines */
	                    "Read the privacy[1] policy of the site.\n"
	                    "The words of the privacy rules are here.\n"
	                    "Read about the uses of cookies here.\n"
	                    "The cookie jar is full. The sky is blue.\n"
	                    "We use cookies on this site, really.\n"
	                    "Two words.\n");
	for (int i = 0; i < 1001; i++)
		llm_buf_addc(&page, 'x');
	llm_buf_adds(&page, " is one long word.\nA last line with [edit] marks.\n");
	uint64_t st[5] = { 0 };
	llm_verdict v;
	llm_quality_set_text(q, page.p, page.len, NULL);
	CHECK(llm_quality_c4(q, &p, &out, st, &v));
	CHECK_STR(out.p, "policy of the site.\n"
	                 "The words of the privacy rules are here.\n"
	                 "Read about the uses of cookies here.\n"
	                 "The cookie jar is full. The sky is blue.\n"
	                 "A last line with  marks.");
	CHECK_EQ_INT(st[0], 1); /* the word of 1001 letters */
	CHECK_EQ_INT(st[1], 2); /* "Our privacy policy", "Read the privacy" */
	CHECK_EQ_INT(st[2], 1); /* "Two words." */
	CHECK_EQ_INT(st[4], 2); /* the edited line, "We use cookies" */
	llm_buf_release(&page);
	llm_buf_release(&out);
}

/* Chinese cases: words are characters, FineWeb-2 cmn_Hani thresholds and stop words. */
static void test_chinese(void)
{
	/* "The river flows into the sea. ... people live by the river." with stop words 的 是 在 */
	const char *good =
		"\xE8\xBF\x99\xE6\x98\xAF\xE4\xB8\x80\xE6\x9D\xA1\xE5\xBE\x88\xE9\x95\xBF\xE7\x9A\x84"
		"\xE6\xB2\xB3\xE6\xB5\x81\xEF\xBC\x8C\xE5\xAE\x83\xE6\xB5\x81\xE5\x90\x91\xE5\xA4\xA7"
		"\xE6\xB5\xB7\xE3\x80\x82\n\xE4\xBA\xBA\xE4\xBB\xAC\xE5\x9C\xA8\xE6\xB2\xB3\xE8\xBE\xB9"
		"\xE7\x94\x9F\xE6\xB4\xBB\xE4\xBA\x86\xE5\xBE\x88\xE5\xA4\x9A\xE5\xB9\xB4\xE3\x80\x82"
		"\xE5\xA4\x8F\xE5\xA4\xA9\xE7\x9A\x84\xE6\xB2\xB3\xE6\xB0\xB4\xE5\xBE\x88\xE6\xB8\x85"
		"\xE3\x80\x82\n\xE5\x86\xAC\xE5\xA4\xA9\xE6\xB2\xB3\xE9\x9D\xA2\xE4\xBC\x9A\xE7\xBB\x93"
		"\xE5\x86\xB0\xE3\x80\x82\xE5\xAD\xA9\xE5\xAD\x90\xE4\xBB\xAC\xE5\x9C\xA8\xE5\x86\xB0"
		"\xE4\xB8\x8A\xE7\x8E\xA9\xE8\x80\x8D\xE3\x80\x82\n";
	llm_buf b = LLM_BUF_INIT;
	for (int i = 0; i < 3; i++)
		llm_buf_adds(&b, good);
	/* The same three lines three times */
	CHECK_STR(run(b.p, "zh", 1), "gopher_rep_dup_line_frac");
	CHECK_STR(run(good, "zh", 1), "keep");
	/* 49 characters: fewer than 50 words */
	CHECK_STR(run(good, "zh", 0), "gopher_short_doc");
	llm_buf_reset(&b);
	llm_buf_adds(&b, good);
	llm_buf_adds(&b, "\xE6\xB2\xB3\xE8\xBE\xB9\xE6\x9C\x89\xE4\xB8\x80\xE5\xBA\xA7\xE5\xB0\x8F"
	                 "\xE6\x9D\x91\xE5\xBA\x84\xEF\xBC\x8C\xE6\x9D\x91\xE9\x87\x8C\xE7\x9A\x84"
	                 "\xE4\xBA\xBA\xE9\x83\xBD\xE5\xBE\x88\xE5\x8F\x8B\xE5\x96\x84\xE3\x80\x82");
	CHECK_STR(run(b.p, "zh", 0), "keep");
	CHECK_STR(run(b.p, "zh", 2), "keep"); /* five sentences ending in 。 */
	/* FineWeb's short-line rule counts code points: short Chinese lines fail it, which is
	 * why FineWeb-2 turns it off (fineweb-2-pipeline.py: short_line_thr=999) */
	CHECK_STR(run(b.p, "en", 3), "fineweb_short_line_ratio");
	CHECK_STR(run(b.p, "zh", 3), "keep");
	/* English thresholds would reject it: average word length 1 < 3 */
	CHECK_STR(run(b.p, "en", 0), "gopher_short_words");
	/* no stop word among 80 characters: 天地玄黄宇宙洪荒寒来暑往秋收冬藏 */
	char *s = repeat("\xE5\xA4\xA9\xE5\x9C\xB0\xE7\x8E\x84\xE9\xBB\x84\xE5\xAE\x87\xE5\xAE\x99"
	                 "\xE6\xB4\xAA\xE8\x8D\x92\xE5\xAF\x92\xE6\x9D\xA5\xE6\x9A\x91\xE5\xBE\x80"
	                 "\xE7\xA7\x8B\xE6\x94\xB6\xE5\x86\xAC\xE8\x97\x8F%.0d", 5, "\xE3\x80\x82");
	CHECK_STR(run(s, "zh", 0), "gopher_few_stop_words");
	free(s);
	/* lines without terminal punctuation: C4 drops them, FineWeb sees no punctuation */
	s = repeat("\xE9\xA6\x96\xE9\xA1\xB5 \xE6\x96\xB0\xE9\x97\xBB \xE8\x81\x94\xE7\xB3\xBB\xE6\x88\x91\xE4\xBB\xAC %d", 8, "\n");
	CHECK_STR(run(s, "zh", 2), "c4_too_few_sentences");
	CHECK_STR(run(s, "zh", 3), "fineweb_line_punct_ratio");
	free(s);
	llm_buf_release(&b);
}

/* One rule on text with the defaults of lang and one parameter changed (name NULL: none). */
static const char *rule(bool (*f)(llm_quality *, const llm_quality_params *, llm_verdict *),
                        const char *text, const char *lang, const char *name, const char *value)
{
	llm_quality_params p;
	llm_quality_defaults(&p, lang);
	if (name)
		CHECK_EQ_INT(llm_filter_param_set(&p, llm_filter_param_find(name, strlen(name)), value), LLM_OK);
	llm_quality_set_text(q, text, strlen(text), NULL);
	llm_verdict v;
	return f(q, &p, &v) ? "keep" : v.reason;
}

static void test_length(void)
{
	CHECK_STR(rule(llm_quality_length, "short", "en", NULL, NULL), "too_short");
	CHECK_STR(rule(llm_quality_length, "short", "en", "min_chars", "5"), "keep");
	const char *seventy = "seventy code points of text, which is more than sixty and more than fifty";
	CHECK_STR(rule(llm_quality_length, seventy, "en", NULL, NULL), "keep");
	CHECK_STR(rule(llm_quality_length, seventy, "en", "max_chars", "60"), "too_long");
	llm_quality_params p;
	llm_quality_defaults(&p, "en");
	p.min_chars = 0;
	p.min_words = 4;
	llm_quality_set_text(q, "one two three", 13, NULL);
	llm_verdict v;
	CHECK(!llm_quality_length(q, &p, &v));
	CHECK_STR(v.reason, "too_few_words");
	CHECK(v.value == 3 && v.threshold == 4);
}

/* ChineseWebText: the arithmetic of CASIA-LM/ChineseWebText preprocess.py. */
static void test_cwt(void)
{
	/* 春眠不觉晓，处处闻啼鸟。 is 12 code points on one line */
	const char *line = "\xE6\x98\xA5\xE7\x9C\xA0\xE4\xB8\x8D\xE8\xA7\x89\xE6\x99\x93\xEF\xBC\x8C"
	                   "\xE5\xA4\x84\xE5\xA4\x84\xE9\x97\xBB\xE5\x95\xBC\xE9\xB8\x9F\xE3\x80\x82";
	CHECK_STR(rule(llm_quality_cwt, line, "zh", NULL, NULL), "keep");
	/* 12 code points over two lines ("\n" counts, as len() does): 13 / 2 < 10 */
	char two[128];
	snprintf(two, sizeof two, "%.18s\n%s", line, line + 18);
	CHECK_STR(rule(llm_quality_cwt, two, "zh", NULL, NULL), "cwt_short_lines");
	CHECK_STR(rule(llm_quality_cwt, two, "zh", "cwt_min_avg_line_length", "6"), "keep");
	/* Han share: 10 Han characters of 40 code points is 0.25 */
	char mixed[256];
	snprintf(mixed, sizeof mixed, "%s abcdefghijklmnopqrstuvwxyz12", line);
	CHECK_STR(rule(llm_quality_cwt, mixed, "zh", NULL, NULL), "cwt_few_han");
	CHECK_STR(rule(llm_quality_cwt, mixed, "zh", "cwt_min_han_ratio", "0.2"), "keep");
	/* the same 20-character line three times: each of its 47 13-grams (range(60 - 13))
	 * occurs more than once */
	const char *poem = "\xE6\x98\xA5\xE7\x9C\xA0\xE4\xB8\x8D\xE8\xA7\x89\xE6\x99\x93\xE5\xA4\x84"
	                   "\xE5\xA4\x84\xE9\x97\xBB\xE5\x95\xBC\xE9\xB8\x9F\xE5\xA4\x9C\xE6\x9D\xA5"
	                   "\xE9\xA3\x8E\xE9\x9B\xA8\xE5\xA3\xB0\xE8\x8A\xB1\xE8\x90\xBD\xE7\x9F\xA5"
	                   "\xE5\xA4\x9A\xE5\xB0\x91";
	llm_buf rep = LLM_BUF_INIT;
	for (int i = 0; i < 3; i++)
		llm_buf_adds(&rep, poem);
	llm_quality_params p;
	llm_quality_defaults(&p, "zh");
	llm_quality_set_text(q, rep.p, rep.len, NULL);
	llm_verdict v;
	CHECK(!llm_quality_cwt(q, &p, &v));
	CHECK_STR(v.reason, "cwt_rep_ngram");
	CHECK(v.value == 1);
	/* twice with a digit between: the 7 + 7 13-grams inside the copies repeat, of 28 */
	llm_buf_reset(&rep);
	llm_buf_adds(&rep, poem);
	llm_buf_adds(&rep, "1");
	llm_buf_adds(&rep, poem);
	llm_quality_set_text(q, rep.p, rep.len, NULL);
	CHECK(llm_quality_cwt(q, &p, &v));
	llm_buf_release(&rep);
	/* spaces, tabs and newlines do not count; case does not matter */
	CHECK_STR(rule(llm_quality_cwt, "ABCDEFGHIJKLMNOP abcdefghijklmnop\tabcdefghijklmnop", "en",
	               "cwt_min_han_ratio", "0"), "cwt_rep_ngram");
}

static void test_code(void)
{
	char *c = repeat("int f%d(int x) { return x * 2; }", 20, "\n");
	CHECK_STR(rule(llm_quality_code, c, "en", NULL, NULL), "keep");
	free(c);
	char longl[1200];
	memset(longl, 'a', 1100);
	longl[1100] = 0;
	CHECK_STR(rule(llm_quality_code, longl, "en", NULL, NULL), "code_long_line");
	CHECK_STR(rule(llm_quality_code, longl, "en", "code_max_line_length", "2000"), "code_long_lines_mean");
	c = repeat("{ } ; ( ) [ ] %d", 20, "\n");
	CHECK_STR(rule(llm_quality_code, c, "en", NULL, NULL), "code_low_alpha");
	free(c);
	CHECK_STR(rule(llm_quality_code, "/* AUTOGENERATED FILE. DO NOT EDIT. */\nint x;\n", "en", NULL, NULL),
	          "code_autogenerated");
	CHECK_STR(rule(llm_quality_code, "/* AUTOGENERATED FILE. DO NOT EDIT. */\nint x;\n", "en",
	               "code_autogenerated", "false"), "keep");
	/* the sixth line is not looked at */
	CHECK_STR(rule(llm_quality_code, "a\nb\nc\nd\ne\n// auto-generated\n", "en", NULL, NULL), "keep");
	/* encoded data: a base64 blob of 10 lines of 64 is kept next to enough code; of 20
	 * lines it is one run over 1024 characters; alone, over half the file */
	c = repeat("int f%d(int x) { return x * 2 + 1; } /* a function */", 60, "\n");
	llm_buf b = LLM_BUF_INIT;
	llm_buf_adds(&b, c);
	llm_buf_adds(&b, "\nstatic const char *png =\n\"");
	for (int i = 0; i < 10; i++)
		llm_buf_adds(&b, "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABiVBORw0KGgoAAAANSUhEUgAAAAEAAAAB\n");
	CHECK_STR(rule(llm_quality_code, b.p, "en", NULL, NULL), "keep");
	for (int i = 0; i < 10; i++)
		llm_buf_adds(&b, "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABiVBORw0KGgoAAAANSUhEUgAAAAEAAAAB\n");
	CHECK_STR(rule(llm_quality_code, b.p, "en", NULL, NULL), "code_encoded_data");
	CHECK_STR(rule(llm_quality_code, b.p, "en", "code_max_encoded_run", "2000"), "keep");
	CHECK_STR(rule(llm_quality_code, b.p + strlen(c), "en", "code_max_encoded_run", "2000"),
	          "code_encoded_data");
	free(c);
	/* a hex dump: StarCoder2's pattern takes bytes separated by commas or white space */
	llm_buf_reset(&b);
	for (int i = 0; i < 40; i++)
		llm_buf_adds(&b, "de ad be ef 00 11 22 33 44 55 66 77\n");
	CHECK_STR(rule(llm_quality_code, b.p, "en", "code_min_alpha_ratio", "0"), "code_encoded_data");
	llm_buf_release(&b);
}

static void test_encoding(void)
{
	CHECK_STR(rule(llm_quality_encoding, "caf\xC3\xA9 cr\xC3\xA8me br\xC3\xBBl\xC3\xA9" "e", "en", NULL, NULL),
	          "keep");
	/* "café" read as Latin-1: "cafÃ©" */
	CHECK_STR(rule(llm_quality_encoding, "caf\xC3\x83\xC2\xA9 and more words here", "en", NULL, NULL),
	          "encoding_mojibake");
	/* "don’t" read as cp1252: "donâ€™t" */
	CHECK_STR(rule(llm_quality_encoding, "don\xC3\xA2\xE2\x82\xAC\xE2\x84\xA2t stop now", "en", NULL, NULL),
	          "encoding_mojibake");
	CHECK_STR(rule(llm_quality_encoding, "broken \xEF\xBF\xBD\xEF\xBF\xBD text", "en", NULL, NULL),
	          "encoding_replacement");
	CHECK_STR(rule(llm_quality_encoding, "broken \xEF\xBF\xBD\xEF\xBF\xBD text", "en",
	               "max_replacement_ratio", "0.2"), "keep");
	/* Chinese text is never mojibake */
	CHECK_STR(rule(llm_quality_encoding, "\xE4\xBD\xA0\xE5\xA5\xBD\xE3\x80\x82", "zh", NULL, NULL), "keep");
}

/* A segmenter that cuts every run into pieces of two code points. */
static size_t cut_pairs(void *self, const char *s, size_t n, uint32_t *lens)
{
	(void)self;
	size_t k = 0;
	for (size_t i = 0; i < n;) {
		size_t a = i;
		for (int c = 0; c < 2 && i < n; c++) {
			uint32_t cp;
			i += llm_utf8_decode(s + i, n - i, &cp);
		}
		lens[k++] = (uint32_t)(i - a);
	}
	return k;
}

/* Words through the segmenter interface: every run between spaces is the segmenter's alone,
 * and the repetition rules join n-grams with spaces instead of counting characters. */
static void test_segmenter(void)
{
	llm_segmenter seg = { cut_pairs, NULL };
	const char *t = "\xE4\xBD\xA0\xE5\xA5\xBD\xE4\xB8\x96\xE7\x95\x8C\xE5\x95\x8A don't";
	llm_quality_set_text(q, t, strlen(t), &seg);
	llm_buf b = LLM_BUF_INIT;
	for (size_t i = 0; i < llm_quality_nwords(q); i++) {
		size_t n;
		const char *w = llm_quality_word(q, i, &n);
		if (i)
			llm_buf_addc(&b, '|');
		llm_buf_add(&b, w, n);
	}
	CHECK_STR(b.p, "\xE4\xBD\xA0\xE5\xA5\xBD|\xE4\xB8\x96\xE7\x95\x8C|\xE5\x95\x8A|do|n'|t");
	llm_buf_release(&b);
	/* 天地 repeated: with two-character words the top 2-gram "天地 天地" covers
	 * 5 * count characters of a 2 * 40-character text */
	llm_buf sb = LLM_BUF_INIT;
	for (int i = 0; i < 40; i++)
		llm_buf_adds(&sb, "\xE5\xA4\xA9\xE5\x9C\xB0");
	char *s = llm_buf_detach(&sb, NULL);
	llm_quality_params p;
	llm_quality_defaults(&p, "zh");
	llm_verdict v;
	llm_quality_set_text(q, s, strlen(s), &seg);
	CHECK(!llm_quality_repetition(q, &p, &v));
	CHECK_STR(v.reason, "gopher_rep_top_2_gram");
	CHECK(fabs(v.value - 5.0 * 39 / 80) < 1e-12);
	/* without it, a 2-gram is four characters joined without a space */
	llm_quality_set_text(q, s, strlen(s), NULL);
	CHECK(!llm_quality_repetition(q, &p, &v));
	CHECK(fabs(v.value - 4.0 * 39 / 80) < 1e-12);
	free(s);
}

static void test_wordset(void)
{
	llm_wordset *ws = llm_wordset_new();
	CHECK_EQ_INT(llm_wordset_load(ws, unit_path("samples/stopwords/zh.txt")), LLM_OK);
	CHECK_EQ_INT(llm_wordset_size(ws), 22);
	CHECK(llm_wordset_find(ws, "\xE7\x9A\x84", 3) >= 0);
	CHECK(llm_wordset_find(ws, "#", 1) < 0);
	for (int i = 0; i < 200; i++) {
		char w[16];
		snprintf(w, sizeof w, "w%d", i);
		llm_wordset_add(ws, w, strlen(w));
	}
	CHECK_EQ_INT(llm_wordset_size(ws), 222);
	CHECK(llm_wordset_find(ws, "w199", 4) >= 0);
	CHECK_EQ_INT(llm_wordset_load(ws, "/nonexistent/stop.txt"), LLM_EIO);
	llm_wordset_free(ws);
}

typedef bool (*rule_fn)(llm_quality *, const llm_quality_params *, llm_verdict *);

static bool c4_rule(llm_quality *qq, const llm_quality_params *p, llm_verdict *v)
{
	static llm_buf out;
	return llm_quality_c4(qq, p, &out, NULL, v);
}

/*
 * Our decisions against datatrove's on every sample record whose lang is lang1 or lang2:
 * reference (written by bench/clean_datatrove.py or clean_fineweb2.py --golden) has one line
 * per record, "id<TAB>reason-or-keep" per filter, in the order of rules. Each rule runs with
 * the defaults of lang1 and words from seg. Returns the documents compared; agree[k] counts
 * the agreements of rule k, and every disagreement is printed.
 */
static size_t agreement(const char *reference, const char *lang1, const char *lang2,
                        const llm_segmenter *seg, const rule_fn *rules, int nrules, size_t *agree)
{
	char *tsv;
	size_t tlen;
	if (llm_read_file(unit_path(reference), &tsv, &tlen) != LLM_OK)
		return 0;
	static const char *const files[] = { "books", "code", "legal", "news", "qa", "web", "wiki" };
	llm_quality_params p;
	llm_quality_defaults(&p, lang1);
	llm_quality_set_word_rules(q, p.word_rules);
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	llm_buf text = LLM_BUF_INIT, id = LLM_BUF_INIT;
	size_t docs = 0;
	for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
		char path[64];
		snprintf(path, sizeof path, "samples/corpus/%s.jsonl", files[f]);
		llm_reader *r;
		CHECK_EQ_INT(llm_reader_open(&r, unit_path(path)), LLM_OK);
		char *line;
		size_t len;
		while (r && llm_reader_line(r, &line, &len) == LLM_OK) {
			if (llm_json_parse(&rec, line, len) != LLM_OK)
				continue;
			const llm_json_val *lang = llm_json_get(&rec, "lang");
			if (!lang || !(llm_json_str_eq(lang, lang1) || (lang2 && llm_json_str_eq(lang, lang2))))
				continue;
			/* the reference line (after the header): "\nid\treason..." */
			llm_buf_reset(&id);
			llm_buf_addc(&id, '\n');
			llm_json_get_str(&rec, "id", &id);
			llm_buf_addc(&id, '\t');
			const char *ref = memmem(tsv, tlen, id.p, id.len);
			if (!ref)
				continue;
			ref += id.len;
			llm_buf_reset(&text);
			llm_json_get_str(&rec, "text", &text);
			llm_quality_set_text(q, text.p ? text.p : "", text.len, seg);
			for (int k = 0; k < nrules; k++) {
				llm_verdict v;
				bool ours = rules[k](q, &p, &v);
				bool theirs = strncmp(ref, "keep", 4) == 0 && (ref[4] == '\t' || ref[4] == '\n');
				if (theirs == ours)
					agree[k]++;
				else
					printf("#   %.*s filter %d: datatrove %.*s\n", (int)id.len - 2, id.p + 1, k,
					       (int)strcspn(ref, "\t\n"), ref);
				ref += strcspn(ref, "\t\n") + 1;
			}
			docs++;
		}
		llm_reader_free(r);
	}
	free(tsv);
	llm_json_rec_release(&rec);
	llm_buf_release(&text);
	llm_buf_release(&id);
	return docs;
}

/* The English samples against datatrove's FineWeb filters with their default arguments: every
 * decision the same. */
static void test_datatrove_agreement(void)
{
	static const rule_fn rules[4] = { llm_quality_gopher, llm_quality_repetition, c4_rule,
		                          llm_quality_fineweb };
	size_t agree[4] = { 0 };
	size_t docs = agreement("tests/data/clean/datatrove-en.tsv", "en", NULL, NULL, rules, 4, agree);
	printf("#   %zu documents; agreement gopher-quality %zu, gopher-rep %zu, c4 %zu, fineweb %zu\n",
	       docs, agree[0], agree[1], agree[2], agree[3]);
	CHECK(docs > 1000);
	for (int k = 0; k < 4; k++)
		CHECK_EQ_INT(agree[k], docs);
}

/* The Chinese samples against datatrove with FineWeb-2's cmn_Hani values and jieba's words
 * (zhseg), each filter alone. */
static void test_fineweb2_agreement(void)
{
	const llm_zhseg_dict *d;
	if (llm_zhseg_dict_default(&d) != LLM_OK) {
		printf("#   skipped: %s\n", llm_last_error());
		return;
	}
	llm_zhseg *z = llm_zhseg_new(d);
	llm_segmenter seg = llm_zhseg_segmenter(z);
	static const rule_fn rules[3] = { llm_quality_repetition, llm_quality_fineweb, llm_quality_gopher };
	size_t agree[3] = { 0 };
	size_t docs = agreement("tests/data/clean/fineweb2-zh.tsv", "zh", "zh-Hant", &seg, rules, 3, agree);
	printf("#   %zu Chinese documents; agreement gopher-rep %zu, fineweb %zu, gopher-quality %zu\n",
	       docs, agree[0], agree[1], agree[2]);
	CHECK(docs > 7000);
	for (int k = 0; k < 3; k++)
		CHECK(agree[k] * 100 >= docs * 97);
	llm_zhseg_free(z);
}

int main(void)
{
	q = llm_quality_new();
	RUN(test_words);
	RUN(test_word_hash);
	RUN(test_english);
	RUN(test_languages);
	RUN(test_c4_lines);
	RUN(test_chinese);
	RUN(test_length);
	RUN(test_cwt);
	RUN(test_code);
	RUN(test_encoding);
	RUN(test_segmenter);
	RUN(test_wordset);
	RUN(test_datatrove_agreement);
	RUN(test_fineweb2_agreement);
	llm_quality_free(q);
	return unit_done();
}
