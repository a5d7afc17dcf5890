/*
 * test_trainlog.c — CRC-32C against published vectors (RFC 3720), the tfevents file decoded
 * back record by record (framing, masked CRCs, Event and Summary fields), metrics.jsonl and
 * metrics.prom contents.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "core/json.h"
#include "model/trainlog.h"
#include "unit.h"

static char dir[256];

static void test_crc32c(void)
{
	CHECK_EQ_U64(llm_crc32c(0, "123456789", 9), 0xe3069283u);
	unsigned char z[32] = { 0 }, o[32], inc[32];
	memset(o, 0xff, sizeof o);
	for (int i = 0; i < 32; i++)
		inc[i] = (unsigned char)i;
	CHECK_EQ_U64(llm_crc32c(0, z, 32), 0x8a9136aau);
	CHECK_EQ_U64(llm_crc32c(0, o, 32), 0x62a8ab43u);
	CHECK_EQ_U64(llm_crc32c(0, inc, 32), 0x46dd794eu);
	/* continuing a CRC over pieces equals one pass */
	CHECK_EQ_U64(llm_crc32c(llm_crc32c(0, "1234", 4), "56789", 5), 0xe3069283u);
	CHECK_EQ_U64(llm_crc32c_mask(0), 0xa282ead8u);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *p = NULL;
	size_t n = 0, cap = 0, k;
	do {
		if (n + 4096 > cap)
			p = realloc(p, cap = 2 * (n + 4096));
		k = fread(p + n, 1, 4096, f);
		n += k;
	} while (k);
	fclose(f);
	p[n] = 0;
	*len = n;
	return p;
}

static uint64_t le(const unsigned char *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint64_t varint(const unsigned char **p)
{
	uint64_t v = 0;
	for (int s = 0;; s += 7) {
		unsigned char c = *(*p)++;
		v |= (uint64_t)(c & 0x7f) << s;
		if (!(c & 0x80))
			return v;
	}
}

static void test_logs(void)
{
	llm_trainlog *lg;
	CHECK_EQ_INT(llm_trainlog_open(&lg, dir), LLM_OK);
	if (!lg)
		return;
	llm_trainlog_set(lg, "loss", 2.5);
	llm_trainlog_set(lg, "lr", 3e-4);
	CHECK_EQ_INT(llm_trainlog_commit(lg, 7, 1700000000.5), LLM_OK);
	llm_trainlog_set(lg, "loss", 0.0 / 0.0);
	CHECK_EQ_INT(llm_trainlog_commit(lg, 8, 1700000001.0), LLM_OK);
	CHECK_EQ_INT(llm_trainlog_event(lg, 8, "rollback", "\"batch\": 12"), LLM_OK);
	char *tf = llm_strdup(llm_trainlog_tfevents_path(lg));
	CHECK_EQ_INT(llm_trainlog_close(lg), LLM_OK);

	char path[400];
	size_t len;
	snprintf(path, sizeof path, "%s/metrics.jsonl", dir);
	char *j = slurp(path, &len);
	CHECK(j != NULL);
	CHECK_STR(j, "{\"step\": 7, \"loss\": 2.5, \"lr\": 0.0003}\n"
	             "{\"step\": 8, \"loss\": null}\n"
	             "{\"step\": 8, \"event\": \"rollback\", \"batch\": 12}\n");
	free(j);
	snprintf(path, sizeof path, "%s/metrics.prom", dir);
	char *p = slurp(path, &len);
	CHECK(p && strstr(p, "\nllm_train_step 8\n") && strstr(p, "\nllm_train_loss NaN\n") &&
	      !strstr(p, "llm_train_lr"));
	free(p);

	/* tfevents: version record, then one event per commit with a scalar per value. */
	unsigned char *t = (unsigned char *)slurp(tf, &len), *e = t + len, *r = t;
	int records = 0, scalars = 0;
	while (t && r + 12 <= e) {
		uint64_t n = le(r, 8);
		CHECK_EQ_U64(le(r + 8, 4), llm_crc32c_mask(llm_crc32c(0, r, 8)));
		CHECK(r + 16 + n <= e);
		if (r + 16 + n > e)
			break;
		const unsigned char *d = r + 12, *de = d + n;
		CHECK_EQ_U64(le(de, 4), llm_crc32c_mask(llm_crc32c(0, d, n)));
		CHECK(d[0] == 0x09 && d[9] == 0x10);
		d += 10;
		uint64_t step = varint(&d);
		if (records == 0) {
			CHECK(d[0] == 0x1a && d[1] == 13 && memcmp(d + 2, "brain.Event:2", 13) == 0);
		} else {
			CHECK_EQ_U64(step, 6 + (uint64_t)records);
			CHECK(*d++ == 0x2a);
			uint64_t sl = varint(&d);
			CHECK(d + sl == de);
			while (d < de) {
				CHECK(*d++ == 0x0a);
				uint64_t vl = varint(&d);
				const unsigned char *v = d;
				CHECK(v[0] == 0x0a);
				size_t tl = v[1];
				CHECK(v[2 + tl] == 0x15);
				float f;
				memcpy(&f, v + 3 + tl, 4);
				if (records == 1 && tl == 10 && memcmp(v + 2, "train/loss", 10) == 0)
					CHECK(f == 2.5f);
				scalars++;
				d += vl;
			}
		}
		records++;
		r += 16 + n;
	}
	CHECK(r == e);
	CHECK_EQ_INT(records, 3);
	CHECK_EQ_INT(scalars, 3);
	free(t);
	unlink(tf);
	free(tf);
	CHECK_EQ_INT(llm_trainlog_open(&lg, "/nonexistent/dir"), LLM_EIO);
	CHECK(lg == NULL);
}

/* The steps of the records of an event file (the version record is step 0); -1 when a
 * record is torn or its checksum wrong. */
static int event_steps(const char *path, uint64_t *steps, int max)
{
	size_t len;
	unsigned char *t = (unsigned char *)slurp(path, &len), *e = t + len, *r = t;
	int n = 0;
	while (t && r + 12 <= e && n < max) {
		uint64_t k = le(r, 8);
		if (le(r + 8, 4) != llm_crc32c_mask(llm_crc32c(0, r, 8)) || r + 16 + k > e ||
		    le(r + 12 + k, 4) != llm_crc32c_mask(llm_crc32c(0, r + 12, k)))
			break;
		const unsigned char *d = r + 12 + 10;
		steps[n++] = varint(&d);
		r += 16 + k;
	}
	int ok = t && r == e;
	free(t);
	return ok ? n : -1;
}

static void append(const char *path, const char *bytes, size_t n)
{
	FILE *f = fopen(path, "ab");
	CHECK(f && fwrite(bytes, 1, n, f) == n && fclose(f) == 0);
}

/* Two lives in one process (their event files distinct), a torn line and a torn record
 * (killed writers), then the cut back to step 3: each file holds steps up to 3 only. */
static void test_cut(void)
{
	char sub[300], path[400];
	snprintf(sub, sizeof sub, "%s/cut", dir);
	mkdir(sub, 0700);
	char *tf[2];
	for (int life = 0; life < 2; life++) {
		llm_trainlog *lg;
		CHECK_EQ_INT(llm_trainlog_open(&lg, sub), LLM_OK);
		if (!lg)
			return;
		for (int s = life ? 3 : 1; s <= 6; s++) {
			llm_trainlog_set(lg, "loss", s);
			CHECK_EQ_INT(llm_trainlog_commit(lg, s, 1700000000.0 + s), LLM_OK);
			if (s == 5)
				CHECK_EQ_INT(llm_trainlog_event(lg, 5, "spike", NULL), LLM_OK);
		}
		tf[life] = llm_strdup(llm_trainlog_tfevents_path(lg));
		CHECK_EQ_INT(llm_trainlog_close(lg), LLM_OK);
	}
	CHECK(strcmp(tf[0], tf[1]) != 0);
	uint64_t st[32];
	CHECK_EQ_INT(event_steps(tf[0], st, 32), 7);
	snprintf(path, sizeof path, "%s/metrics.jsonl", sub);
	append(path, "{\"step\": 2, \"loss\": 1.", 21);
	append(tf[1], "\x20\0\0\0\0\0\0\0garbage", 15);
	CHECK_EQ_INT(event_steps(tf[1], st, 32), -1);
	CHECK_EQ_INT(llm_trainlog_cut(sub, 3), LLM_OK);
	size_t len;
	char *j = slurp(path, &len);
	CHECK_STR(j, "{\"step\": 1, \"loss\": 1}\n{\"step\": 2, \"loss\": 2}\n{\"step\": 3, \"loss\": 3}\n"
	             "{\"step\": 3, \"loss\": 3}\n");
	free(j);
	CHECK_EQ_INT(event_steps(tf[0], st, 32), 4);
	CHECK(st[0] == 0 && st[1] == 1 && st[2] == 2 && st[3] == 3);
	CHECK_EQ_INT(event_steps(tf[1], st, 32), 2);
	CHECK(st[0] == 0 && st[1] == 3);
	for (int life = 0; life < 2; life++) {
		unlink(tf[life]);
		free(tf[life]);
	}
	unlink(path);
	snprintf(path, sizeof path, "%s/metrics.prom", sub);
	unlink(path);
	CHECK_EQ_INT(rmdir(sub), 0);
}

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/test_trainlog.%ld", (long)getpid());
	if (mkdir(dir, 0700) != 0) {
		perror(dir);
		return 1;
	}
	RUN(test_crc32c);
	RUN(test_logs);
	RUN(test_cut);
	char path[400];
	snprintf(path, sizeof path, "%s/metrics.jsonl", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/metrics.prom", dir);
	unlink(path);
	rmdir(dir);
	return unit_done();
}
