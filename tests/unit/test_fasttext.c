/*
 * test_fasttext.c — lib/fasttext against the fastText 0.9.2 command.
 *
 * The *.ref files in tests/data/tox/ are the output of `fasttext predict-prob MODEL FILE K
 * [THRESHOLD]` (Debian fasttext 0.9.2) on the models and inputs beside them:
 *   lid.176.ftz      x lid_inputs.txt   k=3          (hierarchical softmax, quantized, pruned)
 *   ref_softmax.bin  x ref_inputs.txt   k=2          (softmax, char 2-3-grams, word bigrams)
 *   ref_ova.ftz      x ref_inputs.txt   k=-1 t=0.1   (one-vs-all, quantized with -qnorm)
 * Labels must be equal and in the same order, probabilities within 1e-5 (the bound;
 * in practice they print identically).
 */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "text/fasttext.h"
#include "text/fasttext_train.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	llm_buf b = LLM_BUF_INIT;
	char tmp[65536];
	size_t n;
	while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
		llm_buf_add(&b, tmp, n);
	fclose(f);
	if (!b.p)
		llm_buf_grow(&b, 1);
	return llm_buf_detach(&b, len);
}

/* Next line of buf at *pos (without '\n'); NULL at the end. */
static char *next_line(char *buf, size_t len, size_t *pos, size_t *n)
{
	if (*pos >= len)
		return NULL;
	char *s = buf + *pos, *nl = memchr(s, '\n', len - *pos);
	*n = nl ? (size_t)(nl - s) : len - *pos;
	*pos += *n + 1;
	return s;
}

static int compare_with_ref(const char *model, const char *inputs, const char *ref, int k,
                            float threshold, int *lines_out)
{
	llm_fasttext *m;
	char mp[4096];
	snprintf(mp, sizeof mp, "%s", unit_path(model));
	int rc = llm_fasttext_load(&m, mp);
	CHECK_EQ_INT(rc, LLM_OK);
	if (rc) {
		printf("#   %s\n", llm_last_error());
		return 0;
	}
	size_t ilen, rlen, ipos = 0, rpos = 0, in, rn;
	char *ib = slurp(unit_path(inputs), &ilen);
	char *rb = slurp(unit_path(ref), &rlen);
	CHECK(ib && rb);
	if (!ib || !rb)
		return 0;
	llm_fasttext_scratch *s = llm_fasttext_scratch_new(m);
	llm_fasttext_pred *p = calloc((size_t)llm_fasttext_nlabels(m) + 1, sizeof *p);
	int lines = 0, bad = 0, exact = 0;
	char *il, *rl;
	while ((il = next_line(ib, ilen, &ipos, &in))) {
		rl = next_line(rb, rlen, &rpos, &rn);
		if (!rl) {
			bad++;
			break;
		}
		lines++;
		int c = llm_fasttext_predict(m, s, il, in, k, threshold, p);
		llm_buf mine = LLM_BUF_INIT;
		llm_buf_adds(&mine, "");
		int ok = 1;
		char *tok = rl, *end = rl + rn;
		for (int i = 0; i < c; i++) {
			llm_buf_addf(&mine, "%s%s %.6g", i ? " " : "", llm_fasttext_label(m, p[i].label),
			             p[i].prob);
			/* reference: "LABEL PROB" pairs separated by spaces */
			char *sp = memchr(tok, ' ', (size_t)(end - tok));
			if (!sp) {
				ok = 0;
				break;
			}
			const char *lab = llm_fasttext_label(m, p[i].label);
			if ((size_t)(sp - tok) != strlen(lab) || memcmp(tok, lab, strlen(lab)) != 0)
				ok = 0;
			char *num_end;
			double want = strtod(sp + 1, &num_end);
			if (!(fabs(want - p[i].prob) <= 1e-5))
				ok = 0;
			tok = num_end < end ? num_end + 1 : end;
		}
		if (tok != end)
			ok = 0; /* the reference has more labels */
		if (mine.len == rn && memcmp(mine.p, rl, rn) == 0)
			exact++;
		if (!ok && bad++ < 5)
			printf("#   %s line %d: got \"%s\", want \"%.*s\"\n", model, lines, mine.p, (int)rn, rl);
		llm_buf_release(&mine);
	}
	CHECK_EQ_INT(bad, 0);
	CHECK(lines > 0);
	printf("#   %s: %d lines, %d printed identically\n", model, lines, exact);
	*lines_out = lines;
	free(p);
	free(ib);
	free(rb);
	llm_fasttext_scratch_free(s);
	llm_fasttext_free(m);
	return exact;
}

static void test_lid176_matches_fasttext(void)
{
	int lines = 0;
	int exact = compare_with_ref("tests/data/tox/lid.176.ftz", "tests/data/tox/lid_inputs.txt",
	                             "tests/data/tox/lid_inputs.ref", 3, 0.0f, &lines);
	CHECK_EQ_INT(exact, lines);
}

static void test_softmax_matches_fasttext(void)
{
	int lines = 0;
	int exact = compare_with_ref("tests/data/tox/ref_softmax.bin", "tests/data/tox/ref_inputs.txt",
	                             "tests/data/tox/ref_softmax.ref", 2, 0.0f, &lines);
	CHECK_EQ_INT(exact, lines);
}

static void test_ova_quantized_matches_fasttext(void)
{
	int lines = 0;
	int exact = compare_with_ref("tests/data/tox/ref_ova.ftz", "tests/data/tox/ref_inputs.txt",
	                             "tests/data/tox/ref_ova.ref", -1, 0.1f, &lines);
	CHECK_EQ_INT(exact, lines);
}

static void test_model_facts(void)
{
	llm_fasttext *m;
	CHECK_EQ_INT(llm_fasttext_load(&m, unit_path("tests/data/tox/lid.176.ftz")), LLM_OK);
	if (!m)
		return;
	CHECK_EQ_INT(llm_fasttext_nlabels(m), 176);
	CHECK_EQ_INT(llm_fasttext_dim(m), 16);
	CHECK_EQ_INT(llm_fasttext_loss(m), LLM_FASTTEXT_HS);
	CHECK_EQ_INT(llm_fasttext_quantized(m), 1);
	int en = llm_fasttext_label_id(m, "en");
	CHECK(en >= 0);
	CHECK_EQ_INT(llm_fasttext_label_id(m, "__label__en"), en);
	CHECK_STR(llm_fasttext_label_name(m, en), "en");
	CHECK_EQ_INT(llm_fasttext_label_id(m, "no-such-language"), -1);
	CHECK(llm_fasttext_label(m, 176) == NULL);
	/* A threshold drops labels below it; k <= 0 asks for all of them. */
	llm_fasttext_scratch *s = llm_fasttext_scratch_new(m);
	llm_fasttext_pred p[176];
	const char *t = "The quick brown fox jumps over the lazy dog.";
	/* Hierarchical softmax stops descending below p = 1e-5, so "all" is the 140 labels
	 * that `fasttext predict-prob lid.176.ftz - -1` prints for this line. */
	int all = llm_fasttext_predict(m, s, t, strlen(t), 0, 0.0f, p);
	CHECK_EQ_INT(all, 140);
	double sum = 0;
	for (int i = 0; i < all; i++) {
		sum += p[i].prob - 1e-5;
		if (i)
			CHECK(p[i].prob <= p[i - 1].prob);
	}
	CHECK_NEAR(sum, 1.0, 2e-3);
	CHECK_EQ_INT(p[0].label, en);
	int few = llm_fasttext_predict(m, s, t, strlen(t), 0, 0.01f, p);
	CHECK_EQ_INT(few, 11); /* as `fasttext predict-prob lid.176.ftz - -1 0.01` */
	for (int i = 0; i < few; i++)
		CHECK(p[i].prob >= 0.01f);
	/* A newline inside the text separates words: same answer as a space. */
	float a, b;
	llm_fasttext_predict(m, s, "bonjour le monde", 16, 1, 0.0f, p);
	a = p[0].prob;
	llm_fasttext_predict(m, s, "bonjour\nle monde", 16, 1, 0.0f, p);
	b = p[0].prob;
	CHECK(a == b);
	llm_fasttext_scratch_free(s);
	llm_fasttext_free(m);
}

/* fastText's FNV-1a variant, written out here to pin the sign extension: bytes >= 0x80
 * are xored as uint32_t(int8_t(b)), i.e. 0xFFFFFFxx. */
static uint32_t fnv_signed(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++) {
		h ^= (uint32_t)(int32_t)(int8_t)s[i];
		h *= 16777619u;
	}
	return h;
}

static uint32_t fnv_unsigned(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

static void test_ngram_hash_sign_extension(void)
{
	llm_fasttext *m;
	CHECK_EQ_INT(llm_fasttext_load(&m, unit_path("tests/data/tox/ref_softmax.bin")), LLM_OK);
	if (!m)
		return;
	llm_fasttext_scratch *s = llm_fasttext_scratch_new(m);
	/* "é" is out of vocabulary: its features are the n-grams "<é", "<é>", "é>" of
	 * "<é>" (minn 2, maxn 3), then "</s>" (in vocabulary, its own row only), then the
	 * word bigram ("é", "</s>"). */
	const int32_t *ids;
	int n = llm_fasttext_features(m, s, "\xc3\xa9", 2, &ids);
	CHECK_EQ_INT(n, 5);
	const int32_t nw = llm_fasttext_nwords(m), bucket = 5000;
	const char *grams[3] = { "<\xc3\xa9", "<\xc3\xa9>", "\xc3\xa9>" };
	int differs = 0;
	for (int i = 0; i < 3 && n == 5; i++) {
		size_t len = strlen(grams[i]);
		CHECK_EQ_INT(ids[i], nw + (int32_t)(fnv_signed(grams[i], len) % bucket));
		differs |= fnv_signed(grams[i], len) % bucket != fnv_unsigned(grams[i], len) % bucket;
	}
	CHECK(differs); /* the test would not notice zero extension otherwise */
	if (n == 5) {
		/* Word bigram: hashes widened from int32 with sign extension. */
		uint64_t h = (uint64_t)(int64_t)(int32_t)fnv_signed("\xc3\xa9", 2);
		h = h * 116049371u + (uint64_t)(int64_t)(int32_t)fnv_signed("</s>", 4);
		CHECK_EQ_INT(ids[4], nw + (int32_t)(h % bucket));
	}
	llm_fasttext_scratch_free(s);
	llm_fasttext_free(m);
}

/* Training data with a signal a linear model must learn: lines of ref_inputs.txt that
 * contain a Han character (UTF-8 lead byte E3..E9) against the rest. */
static char *han_training_data(size_t *len, int *nlines)
{
	size_t ilen, pos = 0, n;
	char *ib = slurp(unit_path("tests/data/tox/ref_inputs.txt"), &ilen);
	if (!ib)
		return NULL;
	llm_buf b = LLM_BUF_INIT;
	char *l;
	*nlines = 0;
	while ((l = next_line(ib, ilen, &pos, &n))) {
		int han = 0;
		for (size_t i = 0; i < n; i++)
			han |= (unsigned char)l[i] >= 0xE3 && (unsigned char)l[i] <= 0xE9;
		llm_buf_adds(&b, han ? "__label__han " : "__label__other ");
		llm_buf_add(&b, l, n);
		llm_buf_addc(&b, '\n');
		(*nlines)++;
	}
	free(ib);
	return llm_buf_detach(&b, len);
}

static double accuracy(const llm_fasttext *m, const char *data, size_t len)
{
	llm_fasttext_scratch *s = llm_fasttext_scratch_new(m);
	llm_fasttext_pred p[4];
	size_t pos = 0, n;
	int right = 0, total = 0;
	char *l;
	while ((l = next_line((char *)data, len, &pos, &n))) {
		const char *sp = memchr(l, ' ', n);
		size_t lab = (size_t)(sp - l);
		if (llm_fasttext_predict(m, s, sp + 1, n - lab - 1, 1, 0.0f, p) == 1) {
			const char *got = llm_fasttext_label(m, p[0].label);
			right += strlen(got) == lab && memcmp(got, l, lab) == 0;
		}
		total++;
	}
	llm_fasttext_scratch_free(s);
	return total ? (double)right / total : 0;
}

static void test_train_save_load_round_trip(void)
{
	size_t len;
	int nlines;
	char *data = han_training_data(&len, &nlines);
	CHECK(data && nlines > 100);
	if (!data)
		return;
	static const int losses[3] = { LLM_FASTTEXT_SOFTMAX, LLM_FASTTEXT_OVA, LLM_FASTTEXT_HS };
	for (int li = 0; li < 3; li++) {
		llm_fasttext_train_args a;
		llm_fasttext_train_args_init(&a);
		a.dim = 10;
		a.epoch = 10;
		a.lr = 0.5;
		a.minn = 1;
		a.maxn = 3;
		a.word_ngrams = 2;
		a.bucket = 20000;
		a.loss = losses[li];
		a.seed = 42;
		llm_fasttext *m, *m2;
		CHECK_EQ_INT(llm_fasttext_train(&m, &a, data, len, NULL, NULL), LLM_OK);
		if (!m)
			continue;
		CHECK_EQ_INT(llm_fasttext_nlabels(m), 2);
		double acc = accuracy(m, data, len);
		printf("#   loss %d: training accuracy %.3f\n", a.loss, acc);
		CHECK(acc > 0.95);
		char path[] = "/tmp/test_fasttext_XXXXXX";
		int fd = mkstemp(path);
		CHECK(fd >= 0);
		close(fd);
		CHECK_EQ_INT(llm_fasttext_save(m, path), LLM_OK);
		CHECK_EQ_INT(llm_fasttext_load(&m2, path), LLM_OK);
		if (m2) {
			/* The saved model predicts bit for bit what the trained one does. */
			llm_fasttext_scratch *s1 = llm_fasttext_scratch_new(m), *s2 = llm_fasttext_scratch_new(m2);
			llm_fasttext_pred p1[2], p2[2];
			size_t pos = 0, n;
			char *l;
			int same = 1;
			while ((l = next_line(data, len, &pos, &n))) {
				int c1 = llm_fasttext_predict(m, s1, l, n, 2, 0.0f, p1);
				int c2 = llm_fasttext_predict(m2, s2, l, n, 2, 0.0f, p2);
				same &= c1 == c2 && memcmp(p1, p2, (size_t)c1 * sizeof *p1) == 0;
			}
			CHECK(same);
			llm_fasttext_scratch_free(s1);
			llm_fasttext_scratch_free(s2);
			/* Same data, same seed, one thread: the same model, byte for byte. */
			llm_fasttext *m3;
			char path2[] = "/tmp/test_fasttext_XXXXXX";
			fd = mkstemp(path2);
			close(fd);
			CHECK_EQ_INT(llm_fasttext_train(&m3, &a, data, len, NULL, NULL), LLM_OK);
			CHECK_EQ_INT(llm_fasttext_save(m3, path2), LLM_OK);
			size_t l1, l2;
			char *f1 = slurp(path, &l1), *f2 = slurp(path2, &l2);
			CHECK(f1 && f2 && l1 == l2 && memcmp(f1, f2, l1) == 0);
			free(f1);
			free(f2);
			unlink(path2);
			llm_fasttext_free(m3);
		}
		unlink(path);
		llm_fasttext_free(m2);
		llm_fasttext_free(m);
	}
	/* Several threads (Hogwild) still learn. */
	llm_fasttext_train_args a;
	llm_fasttext_train_args_init(&a);
	a.dim = 10;
	a.epoch = 10;
	a.lr = 0.5;
	a.minn = 1;
	a.maxn = 3;
	a.bucket = 20000;
	a.threads = 3;
	llm_fasttext *m;
	CHECK_EQ_INT(llm_fasttext_train(&m, &a, data, len, NULL, NULL), LLM_OK);
	if (m)
		CHECK(accuracy(m, data, len) > 0.95);
	llm_fasttext_free(m);
	/* No label at all. */
	CHECK_EQ_INT(llm_fasttext_train(&m, &a, "just words\nand more\n", 20, NULL, NULL), LLM_EFORMAT);
	CHECK(m == NULL);
	a.dim = 0;
	CHECK_EQ_INT(llm_fasttext_train(&m, &a, data, len, NULL, NULL), LLM_EINVAL);
	free(data);
}

static void test_save_loaded_models(void)
{
	/* A dense model comes back byte for byte. */
	llm_fasttext *m;
	CHECK_EQ_INT(llm_fasttext_load(&m, unit_path("tests/data/tox/ref_softmax.bin")), LLM_OK);
	char path[] = "/tmp/test_fasttext_XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	CHECK_EQ_INT(llm_fasttext_save(m, path), LLM_OK);
	llm_fasttext_free(m);
	size_t l1, l2;
	char *a = slurp(unit_path("tests/data/tox/ref_softmax.bin"), &l1), *b = slurp(path, &l2);
	CHECK(a && b && l1 == l2 && memcmp(a, b, l1) == 0);
	free(a);
	free(b);
	/* A quantized one predicts as before after the round trip. */
	CHECK_EQ_INT(llm_fasttext_load(&m, unit_path("tests/data/tox/lid.176.ftz")), LLM_OK);
	CHECK_EQ_INT(llm_fasttext_save(m, path), LLM_OK);
	llm_fasttext *m2;
	CHECK_EQ_INT(llm_fasttext_load(&m2, path), LLM_OK);
	if (m && m2) {
		llm_fasttext_scratch *s1 = llm_fasttext_scratch_new(m), *s2 = llm_fasttext_scratch_new(m2);
		llm_fasttext_pred p1[5], p2[5];
		const char *t = "Der schnelle braune Fuchs springt \xc3\xbc" "ber den faulen Hund.";
		int c1 = llm_fasttext_predict(m, s1, t, strlen(t), 5, 0.0f, p1);
		int c2 = llm_fasttext_predict(m2, s2, t, strlen(t), 5, 0.0f, p2);
		CHECK(c1 == 5 && c1 == c2 && memcmp(p1, p2, sizeof p1) == 0);
		llm_fasttext_scratch_free(s1);
		llm_fasttext_scratch_free(s2);
	}
	llm_fasttext_free(m);
	llm_fasttext_free(m2);
	unlink(path);
}

static void test_corrupt_files(void)
{
	size_t len;
	char *d = slurp(unit_path("tests/data/tox/ref_ova.ftz"), &len);
	CHECK(d != NULL);
	if (!d)
		return;
	llm_fasttext *m;
	CHECK_EQ_INT(llm_fasttext_load_mem(&m, d, len, "ref_ova.ftz"), LLM_OK);
	llm_fasttext_free(m);
	/* Every proper prefix is truncated: an error naming the file, never a crash. */
	int fails = 0;
	for (size_t n = 0; n < len; n += (n < 4096 ? 1 : 97)) {
		int rc = llm_fasttext_load_mem(&m, d, n, "cut.ftz");
		fails += rc == LLM_EFORMAT && m == NULL;
		if (rc != LLM_EFORMAT && fails >= 0) {
			printf("#   prefix %zu: status %d\n", n, rc);
			fails = -1000000;
		}
	}
	CHECK(fails > 0);
	CHECK(strstr(llm_last_error(), "cut.ftz") != NULL);
	/* A quantized matrix whose row count times its sub-quantizers overflows 64 bits: refused
	 * as a mismatch, with no signed overflow on the way (UBSan in SAN=1). */
	CHECK_EQ_INT(llm_fasttext_load(&m, unit_path("tests/fuzz/corpus/fuzz_fasttext/"
	                                             "regress-quant-overflow.ftz")),
	             LLM_EFORMAT);
	CHECK(strstr(llm_last_error(), "does not match its quantizer") != NULL);
	/* Not a model at all. */
	CHECK_EQ_INT(llm_fasttext_load_mem(&m, "hello world, not a model", 24, "x"), LLM_EFORMAT);
	CHECK_EQ_INT(llm_fasttext_load(&m, "/nonexistent/model.bin"), LLM_EIO);
	CHECK(strstr(llm_last_error(), "/nonexistent/model.bin") != NULL);
	/* Flipped header fields are caught by the shape checks (run under ASan in SAN=1). */
	for (size_t at = 8; at < 200 && at < len; at++) {
		char *c = malloc(len);
		memcpy(c, d, len);
		c[at] ^= 0x5a;
		if (llm_fasttext_load_mem(&m, c, len, "flip") == LLM_OK) {
			llm_fasttext_scratch *s = llm_fasttext_scratch_new(m);
			llm_fasttext_pred p[8];
			llm_fasttext_predict(m, s, "some text here", 14, 8, 0.0f, p);
			llm_fasttext_scratch_free(s);
			llm_fasttext_free(m);
		}
		free(c);
	}
	free(d);
}

int main(void)
{
	RUN(test_lid176_matches_fasttext);
	RUN(test_softmax_matches_fasttext);
	RUN(test_ova_quantized_matches_fasttext);
	RUN(test_model_facts);
	RUN(test_ngram_hash_sign_extension);
	RUN(test_train_save_load_round_trip);
	RUN(test_save_loaded_models);
	RUN(test_corrupt_files);
	return unit_done();
}
