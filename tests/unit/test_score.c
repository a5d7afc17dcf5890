/*
 * test_score.c — llm-score's library: the scorer against fasttext.h's own predictions, the
 * --keep expressions against a table of expected verdicts, and the percentile buckets
 * against exact ranks of sorted data.
 */
#include <unistd.h>

#include "core/err.h"
#include "core/hash.h"
#include "core/json.h"
#include "text/fasttext.h"
#include "text/score.h"
#include "text/scorekeep.h"
#include "text/scoresketch.h"
#include "unit.h"

/* ---- scorer ---- */

static void test_scorer(void)
{
	const char *model = unit_path("tests/data/tox/ref_softmax.bin");
	char spec[4200], spec2[4200];
	llm_scorer *sc = llm_scorer_new();
	snprintf(spec, sizeof spec, "tox=%s:toxic", model);
	snprintf(spec2, sizeof spec2, "dist=%s:*", model);
	CHECK_EQ_INT(llm_scorer_add(sc, spec, NULL), LLM_OK);
	CHECK_EQ_INT(llm_scorer_add(sc, spec2, NULL), LLM_OK);
	CHECK_EQ_INT(llm_scorer_add(sc, spec, NULL), LLM_EINVAL); /* named twice */
	snprintf(spec, sizeof spec, "q=%s", model);
	CHECK_EQ_INT(llm_scorer_add(sc, spec, NULL), LLM_ENOTFOUND); /* no "hq" label */
	CHECK(strstr(llm_last_error(), "its labels: toxic, clean") != NULL);
	CHECK_EQ_INT(llm_scorer_add(sc, spec, "__label__clean"), LLM_OK);
	CHECK_EQ_INT(llm_scorer_add(sc, "no-equals", NULL), LLM_EINVAL);
	CHECK_EQ_INT(llm_scorer_add(sc, "1x=m.bin", NULL), LLM_EINVAL);
	CHECK_EQ_INT(llm_scorer_add(sc, "bucket=m.bin", NULL), LLM_EINVAL);
	CHECK_EQ_INT(llm_scorer_add(sc, "x=", NULL), LLM_EINVAL);
	CHECK_EQ_INT(llm_scorer_count(sc), 3);
	CHECK_EQ_INT(llm_scorer_check(sc, "tox", 3, NULL), LLM_OK);
	CHECK_EQ_INT(llm_scorer_check(sc, "tox", 3, "toxic"), LLM_EINVAL);
	CHECK_EQ_INT(llm_scorer_check(sc, "dist", 4, "clean"), LLM_OK);
	CHECK_EQ_INT(llm_scorer_check(sc, "dist", 4, "other"), LLM_EINVAL);
	CHECK_EQ_INT(llm_scorer_check(sc, "dist", 4, NULL), LLM_EINVAL);
	CHECK_EQ_INT(llm_scorer_check(sc, "nope", 4, NULL), LLM_ENOTFOUND);

	/* The values are fasttext.h's predictions, as floats. */
	llm_fasttext *m;
	CHECK_EQ_INT(llm_fasttext_load(&m, model), LLM_OK);
	llm_fasttext_scratch *fs = llm_fasttext_scratch_new(m);
	llm_fasttext_pred p[2];
	const char *text = "you are an idiot\nand a fool";
	CHECK_EQ_INT(llm_fasttext_predict(m, fs, text, strlen(text), 0, 0.0f, p), 2);
	float tox = p[0].label == 0 ? p[0].prob : p[1].prob;
	float clean = p[0].label == 1 ? p[0].prob : p[1].prob;
	llm_scorer_scratch *s = llm_scorer_scratch_new(sc);
	llm_buf out = LLM_BUF_INIT;
	/* An existing object: its members kept in order, ours replaced in place. */
	const char *line = "{\"scores\": {\"q\": 9, \"old\": [1, 2], \"q\": 8}}";
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	CHECK_EQ_INT(llm_json_parse(&rec, line, strlen(line)), LLM_OK);
	CHECK_EQ_INT(llm_scorer_run(sc, s, text, strlen(text), llm_json_get(&rec, "scores"), &out), 0);
	llm_json_val v;
	size_t pos;
	const char *msg;
	CHECK_EQ_INT(llm_json_parse_value(out.p, out.len, &v, &pos, &msg), LLM_OK);
	CHECK(strncmp(out.p, "{\"q\": ", 6) == 0);
	CHECK(strstr(out.p, "\"old\": [1, 2], \"tox\": ") != NULL);
	llm_json_val q = llm_json_member(&v, "q"), t = llm_json_member(&v, "tox");
	llm_json_val d = llm_json_member(&v, "dist");
	double x;
	CHECK(llm_json_num(&q, &x) == LLM_OK && (float)x == clean);
	CHECK(llm_json_num(&t, &x) == LLM_OK && (float)x == tox);
	llm_json_val dt = llm_json_member(&d, "toxic"), dc = llm_json_member(&d, "clean");
	CHECK(llm_json_num(&dt, &x) == LLM_OK && (float)x == tox);
	CHECK(llm_json_num(&dc, &x) == LLM_OK && (float)x == clean);
	/* Without a previous object, the names in order. */
	llm_buf_reset(&out);
	llm_scorer_run(sc, s, text, strlen(text), NULL, &out);
	CHECK(strncmp(out.p, "{\"tox\": ", 8) == 0 && strstr(out.p, "}, \"q\": ") != NULL);
	llm_json_rec_release(&rec);
	llm_buf_release(&out);
	llm_scorer_scratch_free(s);
	llm_fasttext_scratch_free(fs);
	llm_fasttext_free(m);
	llm_scorer_free(sc);
}

static void test_train_line(void)
{
	llm_buf b = LLM_BUF_INIT;
	llm_score_train_line(&b, "hq", "a\nb c\n", 6);
	llm_score_train_line(&b, "two words", "x", 1);
	CHECK_STR(b.p, "__label__hq a b c \n__label__two_words x\n");
	llm_buf_release(&b);
}

/* ---- --keep ---- */

static void test_keep(void)
{
	static const struct {
		const char *expr;
		double a, b;
		int want;
	} cases[] = {
		{ "a >= 0.5", 0.5, 0, 1 },
		{ "a>=0.5", 0.49, 0, 0 },
		{ "a < 1e-3", 0.0009, 0, 1 },
		{ "a == 2 || b == 3 && a == 1", 2, 0, 1 },  /* && binds tighter */
		{ "(a == 2 || b == 3) && a == 1", 2, 3, 0 },
		{ "!a > 1", 0.5, 0, 1 },
		{ "!(a > 1 || b > 1)", 0.5, 2, 0 },
		{ "a != b.c", 0, 0, 0 },                    /* b.c is a name: not a number */
		{ "a != -2.5 && b <= +3", 1, 3, 1 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		llm_scorekeep *k;
		int rc = llm_scorekeep_parse(&k, cases[i].expr);
		if (i == 7) {
			CHECK_EQ_INT(rc, LLM_EINVAL);
			continue;
		}
		CHECK_EQ_INT(rc, LLM_OK);
		if (rc)
			continue;
		double v[2];
		for (size_t j = 0; j < llm_scorekeep_nvars(k); j++)
			v[j] = strcmp(llm_scorekeep_var(k, j), "a") == 0 ? cases[i].a : cases[i].b;
		if (llm_scorekeep_eval(k, v) != cases[i].want)
			printf("#   %s: not %d\n", cases[i].expr, cases[i].want);
		CHECK_EQ_INT(llm_scorekeep_eval(k, v), cases[i].want);
		llm_scorekeep_free(k);
	}
	llm_scorekeep *k;
	CHECK_EQ_INT(llm_scorekeep_parse(&k, "q.hq > 0.5 && bucket.q >= 3 || q.hq < 0.1"), LLM_OK);
	CHECK_EQ_INT(llm_scorekeep_nvars(k), 2);
	CHECK_STR(llm_scorekeep_var(k, 0), "q.hq");
	CHECK_STR(llm_scorekeep_var(k, 1), "bucket.q");
	llm_scorekeep_free(k);
	CHECK_EQ_INT(llm_scorekeep_parse(&k, "a > 1 &&"), LLM_EINVAL);
	CHECK(strstr(llm_last_error(), "at its end: expected a score name") != NULL);
	CHECK_EQ_INT(llm_scorekeep_parse(&k, "a >> 1"), LLM_EINVAL);
	CHECK(strstr(llm_last_error(), "at byte 4: expected a number") != NULL);
	CHECK(k == NULL);
	/* Nesting is bounded. */
	char deep[400];
	memset(deep, '(', 200);
	strcpy(deep + 200, "a > 1");
	CHECK_EQ_INT(llm_scorekeep_parse(&k, deep), LLM_EINVAL);
	CHECK(strstr(llm_last_error(), "nested too deeply") != NULL);
}

/* ---- percentile buckets ---- */

/* Scores on a grid whose points are 5% apart, measured from 0 below 0.5 and from the top
 * above it, so that the sketch (0.5% resolution) tells every two apart and its ranks are
 * exact; each point is drawn several times (ties). */
static double grid_score(llm_rng *rng)
{
	int k = (int)llm_rng_below(rng, 120);
	double d = 1e-5 * pow(1.169, k % 60); /* 1e-5 .. 0.1 */
	return k < 60 ? d : LLM_SCORESKETCH_TOP - d;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void test_buckets(void)
{
	enum { N = 6000, NB = 20 };
	static double v[N], sorted[N];
	llm_rng rng;
	llm_rng_seed(&rng, 11);
	llm_scoresketch *all = llm_scoresketch_new(), *part[4], *m = llm_scoresketch_new();
	for (int p = 0; p < 4; p++)
		part[p] = llm_scoresketch_new();
	for (int i = 0; i < N; i++) {
		v[i] = grid_score(&rng);
		CHECK_EQ_INT(llm_scoresketch_add(all, "q", 1, v[i]), LLM_OK);
		CHECK_EQ_INT(llm_scoresketch_add(part[i % 4], "q", 1, v[i]), LLM_OK);
		if (i % 3 == 0) /* a second name, in some parts only */
			llm_scoresketch_add(part[i % 2], "e", 1, v[i] / 2);
	}
	CHECK_EQ_INT(llm_scoresketch_add(all, "q", 1, -0.1), LLM_EINVAL);
	CHECK_EQ_INT(llm_scoresketch_add(all, "q", 1, 1.1), LLM_EINVAL);
	CHECK_EQ_INT(llm_scoresketch_add(all, "q", 1, NAN), LLM_EINVAL);
	static const int order[] = { 3, 1, 0, 2 };
	for (int p = 0; p < 4; p++)
		CHECK_EQ_INT(llm_scoresketch_merge(m, part[order[p]]), LLM_OK);
	CHECK_EQ_INT(llm_scoresketch_count(m), 2);
	CHECK_STR(llm_scoresketch_name(m, 0), "e");
	int qa = llm_scoresketch_find(all, "q", 1), qm = llm_scoresketch_find(m, "q", 1);
	CHECK(qa == 0 && qm == 1);
	CHECK_EQ_U64(llm_scoresketch_documents(m, (size_t)qm), N);
	/* Exact buckets: 1 + floor(NB * (scores strictly below) / N). */
	memcpy(sorted, v, sizeof v);
	qsort(sorted, N, sizeof *sorted, cmp_dbl);
	int counts[NB + 1] = { 0 }, bad = 0;
	for (int i = 0; i < N; i++) {
		size_t lo = 0, hi = N;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (sorted[mid] < v[i])
				lo = mid + 1;
			else
				hi = mid;
		}
		int want = (int)(1 + (uint64_t)NB * lo / N);
		int got = llm_scoresketch_bucket(all, (size_t)qa, v[i], NB);
		bad += got != want || llm_scoresketch_bucket(m, (size_t)qm, v[i], NB) != want;
		counts[got]++;
	}
	CHECK_EQ_INT(bad, 0);
	for (int b = 1; b <= NB; b++)
		CHECK(counts[b] > 0);
	CHECK_EQ_INT(llm_scoresketch_bucket(all, (size_t)qa, 0, NB), 1);
	CHECK_EQ_INT(llm_scoresketch_bucket(all, (size_t)qa, LLM_SCORESKETCH_TOP, NB), NB);
	CHECK_EQ_INT(llm_scoresketch_bucket(all, (size_t)qa, 2, NB), 0);
	/* The file round trip keeps every bucket; a corrupt file names itself. */
	char path[] = "/tmp/test_score_XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	CHECK_EQ_INT(llm_scoresketch_save(m, path), LLM_OK);
	llm_scoresketch *back;
	CHECK_EQ_INT(llm_scoresketch_load(&back, path), LLM_OK);
	if (back) {
		llm_buf a = LLM_BUF_INIT, b = LLM_BUF_INIT;
		llm_scoresketch_to_json(m, &a);
		llm_scoresketch_to_json(back, &b);
		CHECK_STR(a.p, b.p);
		llm_buf_release(&a);
		llm_buf_release(&b);
		for (int i = 0; i < 200; i++)
			CHECK_EQ_INT(llm_scoresketch_bucket(back, 1, v[i], NB),
			             llm_scoresketch_bucket(m, 1, v[i], NB));
		llm_scoresketch_free(back);
	}
	static const char *const bad_files[] = {
		"[]", "{\"type\": \"ddsketch\"}", "{\"type\": \"llm-score-sketch\", \"version\": 2}",
		"{\"type\": \"llm-score-sketch\", \"version\": 1, \"scores\": {\"q\": 1}}",
		"{\"type\": \"llm-score-sketch\", \"version\": 1, \"scores\": {\"q\": {\"documents\": 0}}}",
	};
	for (size_t i = 0; i < sizeof bad_files / sizeof *bad_files; i++) {
		FILE *f = fopen(path, "w");
		fputs(bad_files[i], f);
		fclose(f);
		CHECK_EQ_INT(llm_scoresketch_load(&back, path), LLM_EFORMAT);
		CHECK(back == NULL && strstr(llm_last_error(), path) != NULL);
	}
	unlink(path);
	for (int p = 0; p < 4; p++)
		llm_scoresketch_free(part[p]);
	llm_scoresketch_free(all);
	llm_scoresketch_free(m);
}

int main(void)
{
	RUN(test_scorer);
	RUN(test_train_line);
	RUN(test_keep);
	RUN(test_buckets);
	return unit_done();
}
