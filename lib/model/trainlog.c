/*
 * trainlog.c — metrics.jsonl, TensorBoard event files and a Prometheus text file.
 *
 * The TensorBoard writer encodes the two protocol buffer messages it needs by hand (Event with
 * wall_time, step, file_version or summary; Summary.Value with tag and simple_value) rather
 * than depend on protobuf: the wire format of those few fields is fixed forever.
 */
#include "trainlog.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/json.h"

static uint32_t crc_table[256];

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0x82f63b78u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

uint32_t llm_crc32c(uint32_t crc, const void *data, size_t n)
{
	if (!crc_table[1])
		crc_init(); /* idempotent: a race writes the same values */
	const unsigned char *p = data;
	crc = ~crc;
	while (n--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

uint32_t llm_crc32c_mask(uint32_t crc)
{
	return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

typedef struct {
	char key[48];
	double value;
	int set;
} slot;

struct llm_trainlog {
	char *dir;
	FILE *jsonl;
	int tf_fd;
	char *tf_path, *prom_path, *prom_tmp;
	slot *slots;
	size_t n, cap;
	int failed;
	llm_buf line, rec;
};

static void put_varint(llm_buf *b, uint64_t v)
{
	while (v >= 0x80) {
		llm_buf_addc(b, (char)(v | 0x80));
		v >>= 7;
	}
	llm_buf_addc(b, (char)v);
}

static void put_le(llm_buf *b, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		llm_buf_addc(b, (char)(v >> (8 * i)));
}

/* One Event message: wall_time (1, double), step (2, varint), then either file_version (3)
 * or summary (5) as a length-delimited field. */
static void event_begin(llm_buf *ev, double wall, int64_t step)
{
	uint64_t bits;
	memcpy(&bits, &wall, 8);
	llm_buf_reset(ev);
	llm_buf_addc(ev, 0x09);
	put_le(ev, bits, 8);
	llm_buf_addc(ev, 0x10);
	put_varint(ev, (uint64_t)step);
}

static int tf_write(llm_trainlog *lg, const llm_buf *ev)
{
	llm_buf *r = &lg->rec;
	llm_buf_reset(r);
	put_le(r, ev->len, 8);
	put_le(r, llm_crc32c_mask(llm_crc32c(0, r->p, 8)), 4);
	llm_buf_add(r, ev->p, ev->len);
	put_le(r, llm_crc32c_mask(llm_crc32c(0, ev->p, ev->len)), 4);
	size_t off = 0;
	while (off < r->len) {
		ssize_t k = write(lg->tf_fd, r->p + off, r->len - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return llm_fail(LLM_EIO, "%s: %s", lg->tf_path, strerror(errno));
		off += (size_t)k;
	}
	return LLM_OK;
}

int llm_trainlog_open(llm_trainlog **out, const char *dir)
{
	*out = NULL;
	llm_trainlog *lg = llm_calloc(1, sizeof *lg);
	lg->dir = llm_strdup(dir);
	lg->tf_fd = -1;
	llm_buf p = LLM_BUF_INIT;
	llm_buf_addf(&p, "%s/metrics.jsonl", dir);
	lg->jsonl = fopen(p.p, "a");
	if (!lg->jsonl) {
		int rc = llm_fail(LLM_EIO, "%s: %s", p.p, strerror(errno));
		llm_buf_release(&p);
		llm_trainlog_close(lg);
		return rc;
	}
	char host[64] = "localhost";
	gethostname(host, sizeof host - 1);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	llm_buf_reset(&p);
	llm_buf_addf(&p, "%s/events.out.tfevents.%lld.%s.%ld", dir, (long long)ts.tv_sec, host,
	             (long)getpid());
	lg->tf_path = llm_buf_detach(&p, NULL);
	lg->tf_fd = open(lg->tf_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	llm_buf_addf(&p, "%s/metrics.prom", dir);
	lg->prom_path = llm_buf_detach(&p, NULL);
	llm_buf_addf(&p, "%s/.metrics.prom.tmp.%ld", dir, (long)getpid());
	lg->prom_tmp = llm_buf_detach(&p, NULL);
	if (lg->tf_fd < 0) {
		int rc = llm_fail(LLM_EIO, "%s: %s", lg->tf_path, strerror(errno));
		llm_trainlog_close(lg);
		return rc;
	}
	/* The first record names the format version, as TensorFlow's writer does. */
	llm_buf ev = LLM_BUF_INIT;
	event_begin(&ev, ts.tv_sec + ts.tv_nsec * 1e-9, 0);
	static const char ver[] = "brain.Event:2";
	llm_buf_addc(&ev, 0x1a);
	put_varint(&ev, sizeof ver - 1);
	llm_buf_add(&ev, ver, sizeof ver - 1);
	int rc = tf_write(lg, &ev);
	llm_buf_release(&ev);
	if (rc != LLM_OK) {
		llm_trainlog_close(lg);
		return rc;
	}
	*out = lg;
	return LLM_OK;
}

void llm_trainlog_set(llm_trainlog *lg, const char *key, double value)
{
	for (size_t i = 0; i < lg->n; i++)
		if (strcmp(lg->slots[i].key, key) == 0) {
			lg->slots[i].value = value;
			lg->slots[i].set = 1;
			return;
		}
	if (lg->n == lg->cap) {
		lg->cap = lg->cap ? 2 * lg->cap : 32;
		lg->slots = llm_realloc(lg->slots, lg->cap * sizeof *lg->slots);
	}
	slot *s = &lg->slots[lg->n++];
	snprintf(s->key, sizeof s->key, "%s", key);
	s->value = value;
	s->set = 1;
}

static int write_prom(llm_trainlog *lg, int64_t step)
{
	llm_buf *b = &lg->line;
	llm_buf_reset(b);
	llm_buf_addf(b, "# HELP llm_train_step Optimizer steps done.\n# TYPE llm_train_step gauge\n"
	                "llm_train_step %lld\n", (long long)step);
	for (size_t i = 0; i < lg->n; i++) {
		if (!lg->slots[i].set)
			continue;
		char num[40];
		double v = lg->slots[i].value;
		if (isnan(v))
			snprintf(num, sizeof num, "NaN");
		else if (isinf(v))
			snprintf(num, sizeof num, v > 0 ? "+Inf" : "-Inf");
		else
			snprintf(num, sizeof num, "%.17g", v);
		llm_buf_addf(b, "# TYPE llm_train_%s gauge\nllm_train_%s %s\n", lg->slots[i].key,
		             lg->slots[i].key, num);
	}
	int fd = open(lg->prom_tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return llm_fail(LLM_EIO, "%s: %s", lg->prom_tmp, strerror(errno));
	ssize_t k = write(fd, b->p, b->len);
	int e = errno;
	/* No fsync: a lost update of a gauge file costs nothing, a sync per step costs time. */
	if (close(fd) != 0 || k != (ssize_t)b->len || rename(lg->prom_tmp, lg->prom_path) != 0) {
		unlink(lg->prom_tmp);
		return llm_fail(LLM_EIO, "%s: %s", lg->prom_path, strerror(k < 0 ? e : errno));
	}
	return LLM_OK;
}

int llm_trainlog_commit(llm_trainlog *lg, int64_t step, double wall_time)
{
	llm_buf *b = &lg->line;
	llm_buf_reset(b);
	llm_buf_addf(b, "{\"step\": %lld", (long long)step);
	llm_buf ev = LLM_BUF_INIT, sum = LLM_BUF_INIT, val = LLM_BUF_INIT;
	for (size_t i = 0; i < lg->n; i++) {
		slot *s = &lg->slots[i];
		if (!s->set)
			continue;
		llm_buf_addf(b, ", \"%s\": ", s->key);
		llm_json_put_f64(b, s->value);
		/* Summary.Value { tag = 1; simple_value = 2 }, tag "train/KEY" */
		llm_buf_reset(&val);
		size_t kl = strlen(s->key);
		llm_buf_addc(&val, 0x0a);
		put_varint(&val, kl + 6);
		llm_buf_add(&val, "train/", 6);
		llm_buf_add(&val, s->key, kl);
		float f = (float)s->value;
		uint32_t bits;
		memcpy(&bits, &f, 4);
		llm_buf_addc(&val, 0x15);
		put_le(&val, bits, 4);
		llm_buf_addc(&sum, 0x0a);
		put_varint(&sum, val.len);
		llm_buf_add(&sum, val.p, val.len);
	}
	llm_buf_adds(b, "}\n");
	int rc = LLM_OK;
	if (fwrite(b->p, 1, b->len, lg->jsonl) != b->len || fflush(lg->jsonl) != 0)
		rc = llm_fail(LLM_EIO, "%s/metrics.jsonl: %s", lg->dir, strerror(errno));
	event_begin(&ev, wall_time, step);
	llm_buf_addc(&ev, 0x2a);
	put_varint(&ev, sum.len);
	llm_buf_add(&ev, sum.p, sum.len);
	int rc2 = tf_write(lg, &ev);
	int rc3 = write_prom(lg, step);
	for (size_t i = 0; i < lg->n; i++)
		lg->slots[i].set = 0;
	llm_buf_release(&ev);
	llm_buf_release(&sum);
	llm_buf_release(&val);
	rc = rc ? rc : rc2 ? rc2 : rc3;
	if (rc)
		lg->failed = 1;
	return rc;
}

int llm_trainlog_event(llm_trainlog *lg, int64_t step, const char *name, const char *members)
{
	llm_buf *b = &lg->line;
	llm_buf_reset(b);
	llm_buf_addf(b, "{\"step\": %lld, \"event\": ", (long long)step);
	llm_json_put_str(b, name, strlen(name));
	if (members && *members)
		llm_buf_addf(b, ", %s", members);
	llm_buf_adds(b, "}\n");
	if (fwrite(b->p, 1, b->len, lg->jsonl) != b->len || fflush(lg->jsonl) != 0) {
		lg->failed = 1;
		return llm_fail(LLM_EIO, "%s/metrics.jsonl: %s", lg->dir, strerror(errno));
	}
	return LLM_OK;
}

const char *llm_trainlog_tfevents_path(const llm_trainlog *lg) { return lg->tf_path; }

int llm_trainlog_close(llm_trainlog *lg)
{
	if (!lg)
		return LLM_OK;
	int rc = lg->failed ? llm_fail(LLM_EIO, "%s: a log write failed", lg->dir) : LLM_OK;
	if (lg->jsonl && fclose(lg->jsonl) != 0)
		rc = llm_fail(LLM_EIO, "%s/metrics.jsonl: %s", lg->dir, strerror(errno));
	if (lg->tf_fd >= 0 && (fsync(lg->tf_fd), close(lg->tf_fd)) != 0)
		rc = llm_fail(LLM_EIO, "%s: %s", lg->tf_path, strerror(errno));
	free(lg->dir);
	free(lg->tf_path);
	free(lg->prom_path);
	free(lg->prom_tmp);
	free(lg->slots);
	llm_buf_release(&lg->line);
	llm_buf_release(&lg->rec);
	free(lg);
	return rc;
}
