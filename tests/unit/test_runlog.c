/*
 * test_runlog.c — a run directory read back (lib/model/runlog.h): metrics.jsonl's rows and
 * events, a step logged again after a rollback, a malformed line, a line still being written
 * and the file replaced (a live run); the TensorBoard event files of a run without
 * metrics.jsonl; checkpoints and the data manifest's hash.
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/io.h"
#include "model/runlog.h"
#include "model/trainlog.h"
#include "unit.h"

static char dir[64];

static void put(const char *name, const char *text, const char *mode)
{
	char p[128];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	FILE *f = fopen(p, mode);
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void rm(const char *name)
{
	char p[128];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	unlink(p);
}

static double value(const llm_runlog *rl, const char *key, size_t row)
{
	const double *c = llm_runlog_col(rl, key);
	return c && row < llm_runlog_rows(rl) ? c[row] : -1;
}

static void test_lines(void)
{
	llm_runlog *rl = llm_runlog_new();
	static const char *const lines[] = {
		"{\"step\": 1, \"loss\": 5.5, \"lr\": 0.001}",
		"{\"step\": 2, \"loss\": null, \"lr\": 0.002, \"note\": \"text\"}",
		"{\"step\": 2, \"event\": \"nonfinite_skipped\", \"batches\": [3, 4], \"loss\": null}",
		"{\"step\": 3, \"loss\": 4.5}",
		"{\"step\": 3, \"event\": \"rollback\", \"to_step\": 1}",
		"{\"step\": 2, \"loss\": 4.75}", /* redone after the rollback */
	};
	for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
		CHECK_EQ_INT(llm_runlog_add_line(rl, lines[i], strlen(lines[i])), LLM_OK);
	CHECK_EQ_INT(llm_runlog_rows(rl), 2);
	CHECK_EQ_INT(llm_runlog_steps(rl)[1], 2);
	CHECK_NEAR(value(rl, "loss", 1), 4.75, 0);
	CHECK(isnan(value(rl, "lr", 1))); /* the redone step did not log it */
	CHECK(llm_runlog_col(rl, "note") == NULL);
	CHECK_EQ_INT(llm_runlog_nevents(rl), 2);
	const llm_runlog_event *e = llm_runlog_event_at(rl, 0);
	CHECK_STR(e->name, "nonfinite_skipped");
	CHECK_EQ_INT(e->nbatches, 2);
	CHECK_EQ_U64(e->batches[1], 4);
	CHECK_EQ_INT(llm_runlog_event_at(rl, 1)->to_step, 1);
	CHECK(llm_runlog_add_line(rl, "{\"loss\": 1}", 11) == LLM_EFORMAT);
	CHECK(llm_runlog_add_line(rl, "{\"step\": ", 9) == LLM_EFORMAT);
	llm_runlog_free(rl);

	/* An infinite loss logged as null stays "logged, not finite". */
	rl = llm_runlog_new();
	llm_runlog_set(rl, 1, "loss", NAN);
	CHECK(isinf(value(rl, "loss", 0)));
	llm_runlog_free(rl);
}

static void test_tag_key(void)
{
	static const char *const cases[][2] = {
		{ "train/loss", "loss" }, { "Loss/train", "loss" }, { "learning_rate", "lr" },
		{ "eval/loss", "val_loss" }, { "train/grad_norm", "grad_norm" },
		{ "perf/tokens_per_s", "perf_tokens_per_s" },
	};
	llm_buf b = LLM_BUF_INIT;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		llm_runlog_tag_key(cases[i][0], strlen(cases[i][0]), &b);
		CHECK_STR(b.p, cases[i][1]);
	}
	llm_buf_release(&b);
}

/* A live run: a last line being written waits, a malformed line is counted, new lines are
 * read by refresh, a replaced file is read again from its start. */
static void test_live_file(void)
{
	strcpy(dir, "/tmp/test_runlog.XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	llm_runlog *rl;
	CHECK(llm_runlog_open(&rl, dir) == LLM_ENOTFOUND);
	put("metrics.jsonl", "{\"step\": 1, \"loss\": 5}\nnot json\n{\"step\": 2, \"lo", "w");
	CHECK_EQ_INT(llm_runlog_open(&rl, dir), LLM_OK);
	CHECK_EQ_INT(llm_runlog_rows(rl), 1);
	CHECK_EQ_INT(llm_runlog_bad_lines(rl), 1);
	CHECK_STR(llm_runlog_source(rl), "metrics.jsonl");
	put("metrics.jsonl", "ss\": 4}\n{\"step\": 3, \"loss\": 3}\n", "a");
	CHECK_EQ_INT(llm_runlog_refresh(rl), LLM_OK);
	CHECK_EQ_INT(llm_runlog_rows(rl), 3);
	CHECK_NEAR(value(rl, "loss", 1), 4, 0);
	/* Replaced, as a resume's cut replaces it: read from the start. */
	char a[128], b[128];
	snprintf(a, sizeof a, "%s/new", dir);
	snprintf(b, sizeof b, "%s/metrics.jsonl", dir);
	put("new", "{\"step\": 1, \"loss\": 6}\n", "w");
	CHECK_EQ_INT(rename(a, b), 0);
	CHECK_EQ_INT(llm_runlog_refresh(rl), LLM_OK);
	CHECK_EQ_INT(llm_runlog_rows(rl), 1);
	CHECK_NEAR(value(rl, "loss", 0), 6, 0);
	CHECK_EQ_INT(llm_runlog_bad_lines(rl), 0);
	llm_runlog_free(rl);
	rm("metrics.jsonl");
	rmdir(dir);
}

/* A run with only TensorBoard event files (as trainlog.h writes them) gives the same curves. */
static void test_tensorboard(void)
{
	strcpy(dir, "/tmp/test_runlog.XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	llm_trainlog *lg;
	CHECK_EQ_INT(llm_trainlog_open(&lg, dir), LLM_OK);
	for (int s = 1; s <= 5; s++) {
		llm_trainlog_set(lg, "loss", 6.0 - s);
		llm_trainlog_set(lg, "lr", 0.5 * s);
		CHECK_EQ_INT(llm_trainlog_commit(lg, s, 1e9 + s), LLM_OK);
	}
	char events[256];
	snprintf(events, sizeof events, "%s", llm_trainlog_tfevents_path(lg));
	CHECK_EQ_INT(llm_trainlog_close(lg), LLM_OK);
	rm("metrics.jsonl");
	rm("metrics.prom");
	llm_runlog *rl;
	CHECK_EQ_INT(llm_runlog_open(&rl, dir), LLM_OK);
	CHECK_STR(llm_runlog_source(rl), "TensorBoard event files");
	CHECK_EQ_INT(llm_runlog_rows(rl), 5);
	CHECK_NEAR(value(rl, "loss", 4), 1, 1e-6);
	CHECK_NEAR(value(rl, "lr", 1), 1, 1e-6);
	llm_runlog_free(rl);
	/* A torn last record (a killed writer) ends the file. */
	struct stat sb;
	CHECK_EQ_INT(stat(events, &sb), 0);
	CHECK_EQ_INT(truncate(events, sb.st_size - 3), 0);
	CHECK_EQ_INT(llm_runlog_open(&rl, dir), LLM_OK);
	CHECK_EQ_INT(llm_runlog_rows(rl), 4);
	llm_runlog_free(rl);
	unlink(events);
	rmdir(dir);
}

/* train.json's numbers and hash, the run's copy of the manifest, the checkpoints. */
static void test_files(void)
{
	strcpy(dir, "/tmp/test_runlog.XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	put("metrics.jsonl", "{\"step\": 1, \"loss\": 5}\n", "w");
	put("train.json", "{\"steps\": 100, \"clip\": 1.0, \"manifest_hash\": \"0123456789abcdef\"}",
	    "w");
	put("data-manifest.json", "{\"shards\": []}", "w");
	char p[128];
	snprintf(p, sizeof p, "%s/ckpt", dir);
	CHECK_EQ_INT(mkdir(p, 0777), 0);
	snprintf(p, sizeof p, "%s/ckpt/step-0000050", dir);
	CHECK_EQ_INT(mkdir(p, 0777), 0);
	put("ckpt/step-0000050/model.safetensors", "0123456789", "w");
	llm_runlog *rl;
	CHECK_EQ_INT(llm_runlog_open(&rl, dir), LLM_OK);
	CHECK_NEAR(llm_runlog_train_num(rl, "steps"), 100, 0);
	CHECK(isnan(llm_runlog_train_num(rl, "accum")));
	int same = 2;
	CHECK_STR(llm_runlog_manifest_hash(rl, &same), "0123456789abcdef");
	CHECK_EQ_INT(same, 0); /* the copy's XXH3 is another */
	CHECK_EQ_INT(llm_runlog_nckpts(rl), 1);
	if (llm_runlog_nckpts(rl)) {
		const llm_runlog_ckpt *c = llm_runlog_ckpt_at(rl, 0);
		CHECK_EQ_INT(c->step, 50);
		CHECK_EQ_INT(c->full, 1);
		CHECK_EQ_U64(c->bytes, 10);
	}
	CHECK_EQ_INT(llm_runlog_live(dir, NULL, 0), 0);
	llm_runlog_free(rl);
	rm("ckpt/step-0000050/model.safetensors");
	snprintf(p, sizeof p, "%s/ckpt/step-0000050", dir);
	rmdir(p);
	snprintf(p, sizeof p, "%s/ckpt", dir);
	rmdir(p);
	rm("metrics.jsonl");
	rm("train.json");
	rm("data-manifest.json");
	rmdir(dir);
}

int main(void)
{
	RUN(test_lines);
	RUN(test_tag_key);
	RUN(test_live_file);
	RUN(test_tensorboard);
	RUN(test_files);
	return unit_done();
}
