/*
 * test_loader.c — training windows from real shards written with the shard writer:
 * windows are contiguous token runs across document boundaries, labels are inputs shifted by
 * one, noised inputs feed the model while labels stay clean, the same seed gives the same
 * batches, a saved state continues the exact sequence, skipping a batch with NULL outputs
 * keeps the stream aligned, and --mix / --weighted proportions hold.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "data/loader.h"
#include "data/shard.h"
#include "unit.h"

static char dir[256];

/* Document d of domain dom: tokens base, base+1, ... (base = 1000 * d + 1), EOS 0 appended by
 * the writer; the noised input of token t is t + 500000. Weight: web 1, code 3. */
static void write_shards(const char *name, int noised)
{
	char sd[300], path[400];
	snprintf(sd, sizeof sd, "%s/%s", dir, name);
	mkdir(sd, 0755);
	llm_manifest man;
	llm_manifest_init(&man);
	man.vocab_size = 1000000;
	man.width = 4;
	man.eos_id = 0;
	man.tokenizer_id = 7;
	man.noised = noised;
	for (int split = 0; split < 2; split++) {
		char file[64];
		snprintf(file, sizeof file, "%s-00000.bin", llm_split_name(split));
		snprintf(path, sizeof path, "%s/%s", sd, file);
		llm_shard_params p = { .width = 4, .vocab_size = 1000000, .eos_id = 0,
			               .tokenizer_id = 7, .noised = noised };
		llm_shard_writer *w;
		CHECK_EQ_INT(llm_shard_writer_open(&w, path, &p), LLM_OK);
		for (int d = 0; d < (split ? 4 : 40); d++) {
			uint32_t tok[200], inp[200];
			size_t n = 50 + (size_t)(d * 37) % 100;
			for (size_t i = 0; i < n; i++) {
				tok[i] = (uint32_t)(1000 * d + 1 + i);
				inp[i] = tok[i] + 500000;
			}
			llm_shard_doc_in in = { .tokens = tok, .inputs = noised ? inp : NULL, .n = n,
				                .domain = d % 4 == 3 ? "code" : "web",
				                .weight = d % 4 == 3 ? 3.0f : 1.0f, .meta = "{}",
				                .meta_len = 2 };
			CHECK_EQ_INT(llm_shard_writer_add(w, &in), LLM_OK);
		}
		llm_shard_info info;
		CHECK_EQ_INT(llm_shard_writer_close(w, &info), LLM_OK);
		struct stat sb;
		stat(path, &sb);
		llm_manifest_add_shard(&man, file, split, &info, (uint64_t)sb.st_size);
	}
	snprintf(path, sizeof path, "%s/manifest.json", sd);
	CHECK_EQ_INT(llm_manifest_write(&man, path), LLM_OK);
	llm_manifest_release(&man);
}

static char *at(const char *name)
{
	static char p[400];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	return p;
}

enum { B = 4, T = 120 };

static void test_windows(void)
{
	write_shards("plain", 0);
	llm_loader *L;
	CHECK_EQ_INT(llm_loader_open(&L, at("plain"), LLM_SPLIT_TRAIN, NULL, 0, 5), LLM_OK);
	if (!L)
		return;
	CHECK_EQ_INT(llm_loader_vocab(L), 1000000);
	CHECK_EQ_INT(llm_loader_eos(L), 0);
	CHECK_EQ_INT(llm_loader_docs(L), 40);
	int32_t x[B * T], y[B * T];
	int crossings = 0;
	for (int k = 0; k < 50; k++) {
		CHECK_EQ_U64(llm_loader_next(L, B, T, x, y), (uint64_t)k);
		for (int b = 0; b < B; b++)
			for (int t = 0; t < T; t++) {
				int32_t cur = x[b * T + t], nxt = y[b * T + t];
				if (t + 1 < T)
					CHECK(x[b * T + t + 1] == nxt); /* labels are the inputs shifted */
				/* within a document +1; at its end the EOS; after an EOS a document start */
				int ok = (cur != 0 && (nxt == cur + 1 || nxt == 0)) ||
				         (cur == 0 && nxt % 1000 == 1);
				CHECK(ok);
				crossings += cur == 0;
			}
	}
	CHECK(crossings > 0);
	llm_loader_free(L);
}

static void test_determinism_and_state(void)
{
	llm_loader *a, *b;
	CHECK_EQ_INT(llm_loader_open(&a, at("plain"), LLM_SPLIT_TRAIN, NULL, 0, 9), LLM_OK);
	CHECK_EQ_INT(llm_loader_open(&b, at("plain"), LLM_SPLIT_TRAIN, NULL, 0, 9), LLM_OK);
	if (!a || !b)
		return;
	int32_t x1[B * T], y1[B * T], x2[B * T], y2[B * T];
	llm_loader_next(a, B, T, x1, y1);
	llm_loader_next(b, B, T, x2, y2);
	CHECK(memcmp(x1, x2, sizeof x1) == 0 && memcmp(y1, y2, sizeof y1) == 0);
	/* Saved state: the continuation is identical. Skipping (NULL) stays aligned. */
	llm_loader_state s;
	llm_loader_get_state(a, &s);
	llm_loader_next(a, B, T, NULL, NULL);
	llm_loader_next(a, B, T, x1, y1);
	llm_loader_set_state(b, &s);
	llm_loader_next(b, B, T, x2, y2);
	llm_loader_next(b, B, T, x2, y2);
	CHECK(memcmp(x1, x2, sizeof x1) == 0);
	CHECK_EQ_U64(llm_loader_next(b, B, T, NULL, NULL), 3);
	llm_loader_free(a);
	llm_loader_free(b);
	/* Another seed, other windows. */
	CHECK_EQ_INT(llm_loader_open(&a, at("plain"), LLM_SPLIT_TRAIN, NULL, 0, 10), LLM_OK);
	llm_loader_next(a, B, T, x2, y2);
	llm_loader_free(a);
	llm_loader_open(&b, at("plain"), LLM_SPLIT_TRAIN, NULL, 0, 9);
	llm_loader_next(b, B, T, x1, y1);
	CHECK(memcmp(x1, x2, sizeof x1) != 0);
	llm_loader_free(b);
}

/* Share of windows starting in code documents (every 4th document, ids d % 4 == 3). */
static double code_share(const char *mix, int weighted)
{
	llm_loader *L;
	if (llm_loader_open(&L, at("plain"), LLM_SPLIT_TRAIN, mix, weighted, 3) != LLM_OK)
		return -1;
	int32_t x[16], y[16];
	int code = 0, n = 4000;
	for (int i = 0; i < n; i++) {
		llm_loader_next(L, 1, 1, x, y);
		int32_t t = x[0] ? x[0] : y[0];
		code += (t - 1) / 1000 % 4 == 3;
	}
	llm_loader_free(L);
	return (double)code / n;
}

static void test_mix_and_weights(void)
{
	/* Natural share: code holds 10 of 40 documents and 26% of the tokens. */
	double natural = code_share(NULL, 0);
	CHECK(natural > 0.2 && natural < 0.32);
	CHECK_NEAR(code_share("web=0.5,code=0.5", 0), 0.5, 0.04);
	CHECK_NEAR(code_share("web=0.9,code=0.1", 0), 0.1, 0.03);
	CHECK(code_share("code=1", 0) == 1.0);
	/* Weight 3 on code: 3 * 26 / (3 * 26 + 74) of the tokens. */
	double w = code_share(NULL, 1);
	CHECK(w > 0.45 && w < 0.58);
	llm_loader *L;
	CHECK_EQ_INT(llm_loader_open(&L, at("plain"), LLM_SPLIT_TRAIN, "web=1,books=1", 0, 1),
	             LLM_EINVAL);
	CHECK(strstr(llm_last_error(), "books") != NULL);
	CHECK_EQ_INT(llm_loader_open(&L, at("plain"), LLM_SPLIT_TRAIN, "web", 0, 1), LLM_EINVAL);
	CHECK_EQ_INT(llm_loader_open(&L, at("plain"), LLM_SPLIT_TRAIN, "web=0", 0, 1), LLM_EINVAL);
	CHECK_EQ_INT(llm_loader_open(&L, at("nowhere"), LLM_SPLIT_TRAIN, NULL, 0, 1) != LLM_OK, 1);
}

static void test_noised(void)
{
	write_shards("noised", 1);
	llm_loader *L;
	CHECK_EQ_INT(llm_loader_open(&L, at("noised"), LLM_SPLIT_VAL, NULL, 0, 1), LLM_OK);
	if (!L)
		return;
	CHECK(llm_loader_noised(L));
	CHECK_EQ_INT(llm_loader_docs(L), 4);
	int32_t x[B * T], y[B * T];
	llm_loader_next(L, B, T, x, y);
	/* x[t] is the noised token at the position of label y[t - 1]; labels stay clean. */
	int checked = 0;
	for (int b = 0; b < B; b++)
		for (int t = 0; t < T; t++) {
			int i = b * T + t;
			CHECK(y[i] < 500000);
			if (t > 0 && y[i - 1] != 0) {
				CHECK(x[i] == y[i - 1] + 500000);
				checked++;
			}
		}
	CHECK(checked > B * T / 2);
	llm_loader_free(L);
}

/* A valid shard that is not the one the manifest lists (another run's, or the other split's)
 * is refused at open, naming it: the loader never trains on what the manifest does not
 * describe. */
static void test_shards_against_manifest(void)
{
	write_shards("swap", 0);
	char cmd[1000];
	snprintf(cmd, sizeof cmd, "cd '%s' && cp val-00000.bin train-00000.bin", at("swap"));
	CHECK_EQ_INT(system(cmd), 0);
	llm_loader *L;
	CHECK_EQ_INT(llm_loader_open(&L, at("swap"), LLM_SPLIT_TRAIN, NULL, 0, 1), LLM_EFORMAT);
	CHECK(strstr(llm_last_error(), "swap/train-00000.bin: differs from its manifest") != NULL);
	CHECK(L == NULL);
}

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/test_loader.%ld", (long)getpid());
	if (mkdir(dir, 0700) != 0) {
		perror(dir);
		return 1;
	}
	RUN(test_windows);
	RUN(test_determinism_and_state);
	RUN(test_mix_and_weights);
	RUN(test_noised);
	RUN(test_shards_against_manifest);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		return 1;
	return unit_done();
}
