/*
 * test_zhseg.c — the Chinese segmenter against jieba 0.42.1's output on the committed cases
 * (tests/data/zhseg/cases.jsonl, written by scripts/gen-zhseg-cases.py), plus what jieba
 * cannot be asked: invalid UTF-8, runs over LLM_ZHSEG_MAX_RUN, token kinds, dictionaries
 * with known answers (ties, repeats, errors), the dictionary search order and threads.
 * The cases need Debian's python3-jieba (dict.txt); without it they are skipped.
 */
#include "text/zhseg.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/io.h"
#include "core/json.h"
#include "unit.h"

static const llm_zhseg_dict *dict; /* the default dictionary, or NULL */

/* Tokens of s joined by '|'. */
static const char *seg(llm_zhseg *z, const char *s, size_t n)
{
	static llm_buf b;
	llm_buf_reset(&b);
	const llm_zhseg_span *t;
	size_t k = llm_zhseg_cut(z, s, n, &t);
	for (size_t i = 0; i < k; i++) {
		if (i)
			llm_buf_addc(&b, '|');
		llm_buf_add(&b, s + t[i].off, t[i].len);
	}
	return b.p ? b.p : "";
}

/* Every byte in exactly one token, in order. */
static int covers(const llm_zhseg_span *t, size_t k, size_t n)
{
	size_t at = 0;
	for (size_t i = 0; i < k; i++) {
		if (t[i].off != at || t[i].len == 0)
			return 0;
		at += t[i].len;
	}
	return at == n;
}

static void test_jieba_cases(void)
{
	if (!dict) {
		unit_skip("no jieba dictionary (Debian python3-jieba)");
		return;
	}
	llm_reader *r;
	CHECK(llm_reader_open(&r, unit_path("tests/data/zhseg/cases.jsonl")) == LLM_OK);
	if (!r)
		return;
	llm_zhseg *z = llm_zhseg_new(dict);
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	llm_buf text = LLM_BUF_INIT, want = LLM_BUF_INIT, w = LLM_BUF_INIT;
	char *line;
	size_t len, cases = 0, bad = 0, words = 0;
	while (llm_reader_line(r, &line, &len) == LLM_OK) {
		llm_buf_reset(&text);
		llm_buf_reset(&want);
		CHECK(llm_json_parse(&rec, line, len) == LLM_OK);
		CHECK(llm_json_get_str(&rec, "text", &text) == LLM_OK);
		const llm_json_val *a = llm_json_get(&rec, "jieba");
		CHECK(a != NULL);
		if (!a)
			continue;
		llm_json_val k, v;
		size_t it = 0;
		while (llm_json_next(a, &it, &k, &v) == LLM_OK) {
			llm_buf_reset(&w);
			llm_json_str(&v, &w);
			if (want.len)
				llm_buf_addc(&want, '|');
			llm_buf_add(&want, w.p, w.len);
			words++;
		}
		const llm_zhseg_span *t;
		size_t nt = llm_zhseg_cut(z, text.p ? text.p : "", text.len, &t);
		CHECK(covers(t, nt, text.len));
		const char *got = seg(z, text.p ? text.p : "", text.len);
		if (strcmp(got, want.p ? want.p : "") != 0 && bad++ < 5)
			printf("# case %zu: \"%s\"\n#   jieba: %s\n#   zhseg: %s\n", cases + 1, text.p,
			       want.p ? want.p : "", got);
		cases++;
	}
	printf("# %zu cases, %zu jieba tokens, %zu cases differ\n", cases, words, bad);
	CHECK(cases > 400);
	CHECK_EQ_INT(bad, 0);
	llm_buf_release(&text);
	llm_buf_release(&want);
	llm_buf_release(&w);
	llm_json_rec_release(&rec);
	llm_reader_free(r);
	llm_zhseg_free(z);
}

/* A dictionary file written for one test; the path is static. */
static const char *write_dict(const char *content)
{
	static char path[] = "/tmp/test_zhseg_XXXXXX";
	strcpy(path, "/tmp/test_zhseg_XXXXXX");
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK(write(fd, content, strlen(content)) == (ssize_t)strlen(content));
	close(fd);
	return path;
}

/* Answers worked out by hand from jieba's rules (and checked with jieba 0.42.1). */
static void test_small_dict(void)
{
	const char *p = write_dict("AB 1\nA 1\nB 1\nBC 1\nC 1\n");
	llm_zhseg_dict *d;
	CHECK(llm_zhseg_dict_load(&d, p) == LLM_OK);
	unlink(p);
	if (!d)
		return;
	llm_zhseg *z = llm_zhseg_new(d);
	/* AB+C and A+BC score the same: the tie goes to the longer first word */
	CHECK_STR(seg(z, "ABC", 3), "AB|C");
	CHECK_STR(seg(z, "ABCABC x", 8), "AB|C|AB|C| |x");
	/* single characters that are no word together: finalseg's [a-zA-Z0-9]+ keeps them whole */
	CHECK_STR(seg(z, "CBA", 3), "CBA");
	CHECK_EQ_INT(llm_zhseg_dict_size(d), 5);
	CHECK_EQ_U64(llm_zhseg_dict_total(d), 5);
	CHECK_EQ_U64(llm_zhseg_dict_freq(d, "BC", 2), 1);
	CHECK_EQ_U64(llm_zhseg_dict_freq(d, "CB", 2), 0);
	llm_zhseg_free(z);
	llm_zhseg_dict_free(d);

	/* tags, a repeated word (the last frequency wins; both count in the total), blank and
	 * CRLF lines, and a word that no run can hold (counted, never matched) */
	p = write_dict("中国 10\r\n中国人 5 nz\n\n人 3\n中 2 n\n国人 4\n中国 7\n中·国 100\n");
	CHECK(llm_zhseg_dict_load(&d, p) == LLM_OK);
	unlink(p);
	if (!d)
		return;
	z = llm_zhseg_new(d);
	CHECK_EQ_INT(llm_zhseg_dict_size(d), 7);
	CHECK_EQ_U64(llm_zhseg_dict_total(d), 131);
	CHECK_EQ_U64(llm_zhseg_dict_freq(d, "中国", strlen("中国")), 7);
	CHECK_EQ_U64(llm_zhseg_dict_freq(d, "中·国", strlen("中·国")), 0);
	CHECK_STR(seg(z, "中国人中国", strlen("中国人中国")), "中国人|中国");
	/* 我们 is no word here: the HMM makes it one; 民 alone is left */
	CHECK_STR(seg(z, "我们中国人民", strlen("我们中国人民")), "我们|中国人|民");
	CHECK_STR(seg(z, "人中", strlen("人中")), "人中");
	CHECK(strstr(llm_zhseg_dict_path(d), "/tmp/test_zhseg_") != NULL);
	llm_zhseg_free(z);
	llm_zhseg_dict_free(d);
}

static void test_dict_errors(void)
{
	llm_zhseg_dict *d = (llm_zhseg_dict *)1;
	CHECK(llm_zhseg_dict_load(&d, "/nonexistent/dict.txt") == LLM_EIO);
	CHECK(d == NULL);
	CHECK(strstr(llm_last_error(), "/nonexistent/dict.txt") != NULL);
	static const struct { const char *text; int line; } bad[] = {
		{ "中国 10\n中国人\n", 2 },          /* no frequency */
		{ "中国 10\n中国人 x\n", 2 },        /* not a number */
		{ "中国 10\n\n中国人 -5\n", 3 },     /* negative */
		{ "中国 10\n中国人  5\n", 2 },       /* two spaces: an empty frequency, as in jieba */
		{ "中国 1.5\n", 1 },
		{ "中\xff 10\n", 1 },               /* invalid UTF-8 */
		{ "a 18446744073709551615\nb 1\n", 2 }, /* the total overflows */
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		const char *p = write_dict(bad[i].text);
		char want[128];
		snprintf(want, sizeof want, "%s:%d:", p, bad[i].line);
		CHECK(llm_zhseg_dict_load(&d, p) == LLM_EFORMAT);
		if (!strstr(llm_last_error(), want))
			printf("#   case %zu: \"%s\" lacks \"%s\"\n", i, llm_last_error(), want);
		CHECK(strstr(llm_last_error(), want) != NULL);
		unlink(p);
	}
	const char *p = write_dict("中国 0\n\n");
	CHECK(llm_zhseg_dict_load(&d, p) == LLM_EFORMAT); /* log(0): no word to score against */
	unlink(p);
	p = write_dict("");
	CHECK(llm_zhseg_dict_load(&d, p) == LLM_EFORMAT);
	unlink(p);
}

/* $LLM_ZHSEG_DICT wins over the default places, and is not silently replaced by them. */
static void test_dict_env(void)
{
	const char *p = write_dict("AB 1\nC 1\n");
	setenv("LLM_ZHSEG_DICT", p, 1);
	llm_zhseg_dict *d;
	CHECK(llm_zhseg_dict_load(&d, NULL) == LLM_OK);
	if (d) {
		CHECK_STR(llm_zhseg_dict_path(d), p);
		CHECK_EQ_INT(llm_zhseg_dict_size(d), 2);
	}
	llm_zhseg_dict_free(d);
	unlink(p);
	setenv("LLM_ZHSEG_DICT", "/nonexistent/dict.txt", 1);
	CHECK(llm_zhseg_dict_load(&d, NULL) == LLM_EIO);
	unsetenv("LLM_ZHSEG_DICT");
	/* $LLMKIT_DATA/jieba/dict.txt, the data root's copy, where it exists */
	char root[] = "/tmp/test_zhseg_root_XXXXXX", path[128];
	CHECK(mkdtemp(root) != NULL);
	snprintf(path, sizeof path, "%s/jieba", root);
	CHECK(mkdir(path, 0700) == 0);
	snprintf(path, sizeof path, "%s/jieba/dict.txt", root);
	FILE *f = fopen(path, "w");
	CHECK(f && fputs("XY 2\n", f) >= 0 && fclose(f) == 0);
	setenv("LLMKIT_DATA", root, 1);
	CHECK(llm_zhseg_dict_load(&d, NULL) == LLM_OK);
	if (d)
		CHECK_STR(llm_zhseg_dict_path(d), path);
	llm_zhseg_dict_free(d);
	unlink(path);
	CHECK(llm_zhseg_dict_load(&d, NULL) == (dict ? LLM_OK : LLM_ENOTFOUND)); /* not there */
	if (d)
		CHECK(strcmp(llm_zhseg_dict_path(d), path) != 0);
	llm_zhseg_dict_free(d);
	unsetenv("LLMKIT_DATA");
	snprintf(path, sizeof path, "%s/jieba", root);
	rmdir(path);
	rmdir(root);
	llm_zhseg_dict_free(NULL);
	llm_zhseg_free(NULL);
}

static void test_kinds(void)
{
	if (!dict) {
		unit_skip("no jieba dictionary");
		return;
	}
	llm_zhseg *z = llm_zhseg_new(dict);
	static const char s[] = "中国 ok，\r\n\xff\xe4\xb8" "a\xef\xbf\xbd\xe3\x80\x80\xf0\x9f\x98\x80";
	const llm_zhseg_span *t;
	size_t n = llm_zhseg_cut(z, s, sizeof s - 1, &t);
	static const struct { const char *text; unsigned kind; } want[] = {
		{ "中国", LLM_ZHSEG_WORD }, { " ", LLM_ZHSEG_SPACE }, { "ok", LLM_ZHSEG_WORD },
		{ "，", LLM_ZHSEG_OTHER }, { "\r\n", LLM_ZHSEG_SPACE }, { "\xff", LLM_ZHSEG_INVALID },
		{ "\xe4\xb8", LLM_ZHSEG_INVALID }, { "a", LLM_ZHSEG_WORD },
		{ "\xef\xbf\xbd", LLM_ZHSEG_OTHER }, /* a real U+FFFD is a character */
		{ "\xe3\x80\x80", LLM_ZHSEG_SPACE }, { "\xf0\x9f\x98\x80", LLM_ZHSEG_OTHER },
	};
	CHECK_EQ_INT(n, sizeof want / sizeof *want);
	for (size_t i = 0; i < n && i < sizeof want / sizeof *want; i++) {
		CHECK_MEM(s + t[i].off, t[i].len, want[i].text, strlen(want[i].text));
		CHECK_EQ_INT(t[i].kind, want[i].kind);
	}
	CHECK(covers(t, n, sizeof s - 1));
	/* ill-formed sequences: a surrogate, an overlong form, a lone continuation byte, a
	 * truncated 4-byte sequence at the end; each maximal ill-formed part is one token */
	static const char bad[] = "\xed\xa0\x80\xc0\xaf\x80\xf0\x9f\x98";
	n = llm_zhseg_cut(z, bad, sizeof bad - 1, &t);
	CHECK(covers(t, n, sizeof bad - 1));
	for (size_t i = 0; i < n; i++)
		CHECK_EQ_INT(t[i].kind, LLM_ZHSEG_INVALID);
	CHECK_EQ_INT(t[n - 1].len, 3);
	/* empty input */
	CHECK_EQ_INT(llm_zhseg_cut(z, "", 0, &t), 0);
	llm_zhseg_span one;
	llm_zhseg_start(z, NULL, 0);
	CHECK(!llm_zhseg_next(z, &one));
	llm_zhseg_free(z);
}

/* A run longer than LLM_ZHSEG_MAX_RUN is cut into pieces of that many characters, each
 * segmented as jieba would segment it alone. */
static void test_long_runs(void)
{
	if (!dict) {
		unit_skip("no jieba dictionary");
		return;
	}
	llm_zhseg *z = llm_zhseg_new(dict);
	llm_buf s = LLM_BUF_INIT;
	for (int i = 0; i < 30000; i++) /* 210,000 characters, no punctuation */
		llm_buf_adds(&s, "中华人民共和国");
	const llm_zhseg_span *t;
	size_t n = llm_zhseg_cut(z, s.p, s.len, &t);
	CHECK(covers(t, n, s.len));
	size_t piece = (size_t)LLM_ZHSEG_MAX_RUN * 3, at = 0, k = 0;
	llm_zhseg *z2 = llm_zhseg_new(dict);
	while (at < s.len) {
		size_t len = s.len - at < piece ? s.len - at : piece;
		const llm_zhseg_span *u;
		size_t m = llm_zhseg_cut(z2, s.p + at, len, &u);
		for (size_t i = 0; i < m && k < n; i++, k++)
			if (t[k].off != at + u[i].off || t[k].len != u[i].len)
				break;
		at += len;
	}
	CHECK_EQ_INT(k, n);
	llm_buf_reset(&s);
	for (int i = 0; i < 100000; i++)
		llm_buf_addc(&s, 'a');
	n = llm_zhseg_cut(z, s.p, s.len, &t);
	CHECK_EQ_INT(n, 2);
	CHECK_EQ_INT(t[0].len, LLM_ZHSEG_MAX_RUN);
	CHECK_EQ_INT(t[1].len, 100000 - LLM_ZHSEG_MAX_RUN);
	llm_buf_release(&s);
	llm_zhseg_free(z);
	llm_zhseg_free(z2);
}

/* The iterator gives what llm_zhseg_cut gives, and the default dictionary is one copy. */
static void test_iterator(void)
{
	if (!dict) {
		unit_skip("no jieba dictionary");
		return;
	}
	const llm_zhseg_dict *again;
	CHECK(llm_zhseg_dict_default(&again) == LLM_OK);
	CHECK(again == dict);
	llm_zhseg *z = llm_zhseg_new(dict);
	static const char s[] = "他来到了网易杭研大厦，iPhone 15售价999美元。\n第二行  ";
	const llm_zhseg_span *t;
	size_t n = llm_zhseg_cut(z, s, sizeof s - 1, &t);
	llm_zhseg_span *copy = llm_malloc(n * sizeof *copy);
	memcpy(copy, t, n * sizeof *copy);
	llm_zhseg_start(z, s, sizeof s - 1);
	llm_zhseg_span w;
	size_t k = 0;
	while (llm_zhseg_next(z, &w)) {
		CHECK(k < n && w.off == copy[k].off && w.len == copy[k].len && w.kind == copy[k].kind);
		k++;
	}
	CHECK_EQ_INT(k, n);
	free(copy);
	llm_zhseg_free(z);
}

static void test_join(void)
{
	if (!dict) {
		unit_skip("no jieba dictionary");
		return;
	}
	llm_zhseg *z = llm_zhseg_new(dict);
	static const char s[] = "  我来到北京清华大学，\r\n\r\nhello  world\t!\r\x0b\xe3\x80\x80 end ";
	llm_buf out = LLM_BUF_INIT;
	llm_buf_adds(&out, "x:");
	CHECK_EQ_INT(llm_zhseg_join(z, s, sizeof s - 1, &out), 9);
	CHECK_STR(out.p, "x:我 来到 北京 清华大学 ，\n\nhello world !\nend");
	llm_buf_reset(&out);
	CHECK_EQ_INT(llm_zhseg_join(z, " \t ", 3, &out), 0);
	CHECK_EQ_INT(out.len, 0);
	llm_buf_release(&out);
	llm_zhseg_free(z);
}

/* Threads share one dictionary; each has its own segmenter and gets the same tokens. */
struct job {
	llm_buf text;
	size_t ntok;
	uint64_t sum;
};

static void *thread_main(void *arg)
{
	struct job *j = arg;
	llm_zhseg *z = llm_zhseg_new(dict);
	for (int rep = 0; rep < 20; rep++) {
		const llm_zhseg_span *t;
		j->ntok = llm_zhseg_cut(z, j->text.p, j->text.len, &t);
		j->sum = 0;
		for (size_t i = 0; i < j->ntok; i++)
			j->sum = j->sum * 31 + t[i].off * 7 + t[i].len;
	}
	llm_zhseg_free(z);
	return NULL;
}

static void test_threads(void)
{
	if (!dict) {
		unit_skip("no jieba dictionary");
		return;
	}
	char *data;
	size_t len;
	CHECK(llm_read_file(unit_path("tests/data/zhseg/cases.jsonl"), &data, &len) == LLM_OK);
	struct job jobs[4];
	pthread_t th[4];
	for (int i = 0; i < 4; i++) {
		llm_buf_init(&jobs[i].text);
		llm_buf_add(&jobs[i].text, data, len);
		pthread_create(&th[i], NULL, thread_main, &jobs[i]);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (int i = 1; i < 4; i++) {
		CHECK_EQ_INT(jobs[i].ntok, jobs[0].ntok);
		CHECK_EQ_U64(jobs[i].sum, jobs[0].sum);
	}
	for (int i = 0; i < 4; i++)
		llm_buf_release(&jobs[i].text);
	free(data);
}

int main(void)
{
	if (llm_zhseg_dict_default(&dict) != LLM_OK) {
		printf("# %s\n", llm_last_error());
		dict = NULL;
	}
	RUN(test_jieba_cases);
	RUN(test_small_dict);
	RUN(test_dict_errors);
	RUN(test_dict_env);
	RUN(test_kinds);
	RUN(test_long_runs);
	RUN(test_iterator);
	RUN(test_join);
	RUN(test_threads);
	return unit_done();
}
