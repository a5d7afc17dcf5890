/*
 * test_ckpt.c — checkpoint save/load round trip (bit-exact), latest link, keep-last-N,
 * light checkpoints, and the crash property: a writer killed with SIGKILL at arbitrary moments
 * never leaves `latest` pointing at an incomplete checkpoint; removal never follows a link.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/err.h"
#include "core/io.h"
#include "model/ckpt.h"
#include "unit.h"

static char dir[256];

static llm_model_config cfg(void)
{
	llm_model_config c = { .vocab_size = 50,
	                       .hidden_size = 16,
	                       .intermediate_size = 24,
	                       .num_hidden_layers = 2,
	                       .num_attention_heads = 4,
	                       .num_key_value_heads = 2,
	                       .max_position_embeddings = 32,
	                       .tie_word_embeddings = 0,
	                       .rope_theta = 10000,
	                       .rms_norm_eps = 1e-5,
	                       .initializer_range = 0.02,
	                       .bos_token_id = -1,
	                       .eos_token_id = 0 };
	return c;
}

static int exists(const char *root, const char *name)
{
	char p[600];
	struct stat sb;
	snprintf(p, sizeof p, "%s/%s", root, name);
	return stat(p, &sb) == 0;
}

static void test_round_trip(void)
{
	char root[300];
	snprintf(root, sizeof root, "%s/rt/ckpt", dir);
	llm_model_config c = cfg();
	llm_model *m = llm_model_new(&c);
	size_t n = llm_model_nparams(m);
	float *am = malloc(n * sizeof *am), *av = malloc(n * sizeof *av);
	for (int step = 1; step <= 3; step++) {
		llm_model_init(m, (uint64_t)step);
		for (size_t i = 0; i < n; i++) {
			am[i] = (float)i * 1e-3f * step;
			av[i] = (float)(n - i) * 1e-7f;
		}
		char state[64];
		int k = snprintf(state, sizeof state, "{\"step\": %d}", step);
		char *path = NULL;
		CHECK_EQ_INT(llm_ckpt_save(root, step, m, am, av, state, (size_t)k, NULL, 0, &path), LLM_OK);
		CHECK(path && strstr(path, "step-000000"));
		free(path);
		CHECK_EQ_INT(llm_ckpt_prune(root, 1, 2), LLM_OK);
	}
	CHECK(!exists(root, "step-0000001") && exists(root, "step-0000002") &&
	      exists(root, "step-0000003"));
	/* a light checkpoint does not move latest and has no optimizer file; further files go
	 * in with the others, under names that cannot replace them */
	llm_ckpt_file extra[2] = { { "tokenizer.json", "{\"x\": 1}", 8 }, { "empty.json", "", 0 } };
	CHECK_EQ_INT(llm_ckpt_save(root, 4, m, NULL, NULL, "{}", 2, extra, 2, NULL), LLM_OK);
	CHECK(exists(root, "model-0000004/model.safetensors") &&
	      !exists(root, "model-0000004/optimizer.safetensors"));
	char ep[600], *data = NULL;
	size_t elen = 0;
	snprintf(ep, sizeof ep, "%s/model-0000004/tokenizer.json", root);
	CHECK_EQ_INT(llm_read_file(ep, &data, &elen), LLM_OK);
	CHECK_MEM(data, elen, "{\"x\": 1}", 8);
	free(data);
	CHECK(exists(root, "model-0000004/empty.json"));
	static const char *const badnames[] = { "state.json", "config.json", "a/b", "", ".hidden" };
	for (size_t i = 0; i < sizeof badnames / sizeof *badnames; i++) {
		llm_ckpt_file bad = { badnames[i], "x", 1 };
		CHECK_EQ_INT(llm_ckpt_save(root, 5, m, NULL, NULL, "{}", 2, &bad, 1, NULL), LLM_EINVAL);
	}
	CHECK(!exists(root, "model-0000005"));
	char *d;
	char run[300];
	snprintf(run, sizeof run, "%s/rt", dir);
	CHECK_EQ_INT(llm_ckpt_resolve(run, &d), LLM_OK);
	CHECK(d && strstr(d, "ckpt/latest"));
	llm_model_config c2;
	CHECK_EQ_INT(llm_ckpt_read_config(d, &c2), LLM_OK);
	CHECK(memcmp(&c, &c2, sizeof c) == 0);
	llm_model *m2 = llm_model_new(&c2);
	float *bm = calloc(n, sizeof *bm), *bv = calloc(n, sizeof *bv);
	llm_model_init(m, 3);
	CHECK_EQ_INT(llm_ckpt_load_model(d, m2), LLM_OK);
	CHECK(memcmp(llm_model_params(m), llm_model_params(m2), n * sizeof(float)) == 0);
	CHECK_EQ_INT(llm_ckpt_load_optim(d, m2, bm, bv), LLM_OK);
	CHECK(memcmp(am, bm, n * sizeof(float)) == 0 && memcmp(av, bv, n * sizeof(float)) == 0);
	char *state;
	size_t len;
	CHECK_EQ_INT(llm_ckpt_read_state(d, &state, &len), LLM_OK);
	CHECK_STR(state, "{\"step\": 3}");
	free(state);
	free(d);
	/* a model of another shape refuses the checkpoint */
	llm_model_config c3 = cfg();
	c3.intermediate_size = 32;
	llm_model *m3 = llm_model_new(&c3);
	CHECK_EQ_INT(llm_ckpt_resolve(root, &d), LLM_OK);
	CHECK_EQ_INT(llm_ckpt_load_model(d, m3), LLM_EFORMAT);
	free(d);
	CHECK_EQ_INT(llm_ckpt_resolve(dir, &d), LLM_ENOTFOUND);
	llm_model_free(m3);
	llm_model_free(m2);
	llm_model_free(m);
	free(am);
	free(av);
	free(bm);
	free(bv);
}

/* Kill a writer at random moments; every time, latest must load completely. */
static void test_killed_writer(void)
{
	char root[300];
	snprintf(root, sizeof root, "%s/kill/ckpt", dir);
	llm_model_config c = cfg();
	c.hidden_size = 64;
	c.intermediate_size = 128;
	llm_model *m = llm_model_new(&c);
	size_t n = llm_model_nparams(m);
	float *am = calloc(n, sizeof *am);
	CHECK_EQ_INT(llm_ckpt_save(root, 0, m, am, am, "{\"step\": 0}", 11, NULL, 0, NULL), LLM_OK);
	srand(7);
	for (int round = 0; round < 12; round++) {
		pid_t pid = fork();
		if (pid == 0) {
			for (int64_t s = 1;; s++) {
				char st[32];
				int k = snprintf(st, sizeof st, "{\"step\": %lld}", (long long)s);
				if (llm_ckpt_save(root, s + round * 100000, m, am, am, st, (size_t)k, NULL, 0, NULL) ||
				    llm_ckpt_prune(root, 1, 2))
					_exit(3);
			}
		}
		struct timespec ts = { 0, (rand() % 40 + 1) * 1000000L };
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		int status;
		waitpid(pid, &status, 0);
		CHECK(WIFSIGNALED(status));
		char *d = NULL;
		CHECK_EQ_INT(llm_ckpt_resolve(root, &d), LLM_OK);
		llm_model_config c2;
		llm_model *m2 = llm_model_new(&c);
		float *bm = calloc(n, sizeof *bm), *bv = calloc(n, sizeof *bv);
		char *state = NULL;
		size_t len;
		CHECK(d && llm_ckpt_read_config(d, &c2) == LLM_OK && llm_ckpt_load_model(d, m2) == LLM_OK &&
		      llm_ckpt_load_optim(d, m2, bm, bv) == LLM_OK &&
		      llm_ckpt_read_state(d, &state, &len) == LLM_OK && len > 2);
		free(state);
		free(bm);
		free(bv);
		free(d);
		llm_model_free(m2);
	}
	free(am);
	llm_model_free(m);
}

/* Links under the root named like a stale temporary or a checkpoint that pruning removes:
 * the links go, what they point to stays. */
static void test_removal_never_follows_links(void)
{
	char root[300], victim[300], p[700];
	snprintf(root, sizeof root, "%s/links/ckpt", dir);
	snprintf(victim, sizeof victim, "%s/victim", dir);
	mkdir(victim, 0755);
	snprintf(p, sizeof p, "%s/precious", victim);
	FILE *f = fopen(p, "w");
	CHECK(f && fputs("keep me\n", f) >= 0 && fclose(f) == 0);
	llm_model_config c = cfg();
	llm_model *m = llm_model_new(&c);
	size_t n = llm_model_nparams(m);
	float *am = calloc(n, sizeof *am);
	CHECK_EQ_INT(llm_ckpt_save(root, 1, m, am, am, "{}", 2, NULL, 0, NULL), LLM_OK);
	static const char *const links[] = { ".step-0000007.tmp.12345", "step-0000000",
		                             "model-0000000", ".latest.tmp.999" };
	for (size_t i = 0; i < sizeof links / sizeof *links; i++) {
		snprintf(p, sizeof p, "%s/%s", root, links[i]);
		CHECK(symlink(victim, p) == 0);
	}
	CHECK_EQ_INT(llm_ckpt_save(root, 2, m, am, am, "{}", 2, NULL, 0, NULL), LLM_OK); /* stale ones go */
	CHECK_EQ_INT(llm_ckpt_save(root, 3, m, NULL, NULL, "{}", 2, NULL, 0, NULL), LLM_OK);
	CHECK_EQ_INT(llm_ckpt_prune(root, 1, 1), LLM_OK);                      /* step-0000000 */
	CHECK_EQ_INT(llm_ckpt_prune(root, 0, 1), LLM_OK);                      /* model-0000000 */
	for (size_t i = 0; i < sizeof links / sizeof *links; i++) {
		struct stat sb;
		snprintf(p, sizeof p, "%s/%s", root, links[i]);
		CHECK(lstat(p, &sb) != 0);
	}
	CHECK(exists(victim, "precious"));
	CHECK(exists(root, "step-0000002") && exists(root, "model-0000003"));
	/* clearing a run: the checkpoints and links go, the root too, the victim stays */
	snprintf(p, sizeof p, "%s/step-0000009", root);
	CHECK(symlink(victim, p) == 0);
	CHECK_EQ_INT(llm_ckpt_clear(root), LLM_OK);
	struct stat sb;
	CHECK(stat(root, &sb) != 0);
	CHECK(exists(victim, "precious"));
	free(am);
	llm_model_free(m);
}

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/test_ckpt.%ld", (long)getpid());
	if (mkdir(dir, 0700) != 0) {
		perror(dir);
		return 1;
	}
	RUN(test_round_trip);
	RUN(test_killed_writer);
	RUN(test_removal_never_follows_links);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		return 1;
	return unit_done();
}
