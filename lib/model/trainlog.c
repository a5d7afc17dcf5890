/*
 * trainlog.c — metrics.jsonl, TensorBoard event files and a Prometheus text file.
 *
 * The TensorBoard writer encodes the two protocol buffer messages it needs by hand (Event with
 * wall_time, step, file_version or summary; Summary.Value with tag and simple_value) rather
 * than depend on protobuf: the wire format of those few fields is fixed forever.
 */
#include "trainlog.h"

#include <dirent.h>
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
#include "core/fmt.h"
#include "core/io.h"
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
	/* A new file per open, never an old one truncated: a process that opens the logs twice in
	 * a second (a resume in --smoke) gets a suffix, as TensorFlow's writers add one. */
	for (int k = 0; lg->tf_fd < 0 && k < 1000; k++) {
		llm_buf_reset(&p);
		llm_buf_addf(&p, "%s/events.out.tfevents.%lld.%s.%ld", dir, (long long)ts.tv_sec, host,
		             (long)getpid());
		if (k)
			llm_buf_addf(&p, ".%d", k);
		free(lg->tf_path);
		lg->tf_path = llm_buf_detach(&p, NULL);
		lg->tf_fd = open(lg->tf_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (lg->tf_fd < 0 && errno != EEXIST)
			break;
	}
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
			llm_fmt_double(num, sizeof num, v); /* 0.0003, not 0.00029999999999999997 */
		llm_buf_addf(b, "# TYPE llm_train_%s gauge\nllm_train_%s %s\n", lg->slots[i].key,
		             lg->slots[i].key, num);
	}
	/* Never through a link someone left at the name: a stale file of this name (a dead
	 * process with the same pid) is removed, a link by itself and not its target. */
	int fd = open(lg->prom_tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 && errno == EEXIST && unlink(lg->prom_tmp) == 0)
		fd = open(lg->prom_tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
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

/* ---- cutting the logs back to a step (a resume) ----------------------------------------- */

/* The step of a metrics.jsonl line ({"step": N, ...}); -1 when it has none. */
static int64_t line_step(const char *line)
{
	static const char key[] = "{\"step\": ";
	if (strncmp(line, key, sizeof key - 1) != 0)
		return -1;
	char *end;
	long long v = strtoll(line + sizeof key - 1, &end, 10);
	return end != line + sizeof key - 1 && (*end == ',' || *end == '}') ? v : -1;
}

/* metrics.jsonl: the complete lines of steps <= step. */
static int cut_jsonl(const char *path, int64_t step)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return errno == ENOENT ? LLM_OK : llm_fail(LLM_EIO, "%s: %s", path, strerror(errno));
	llm_writer *w = NULL;
	int rc = llm_writer_open(&w, path);
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while (!rc && (n = getline(&line, &cap, f)) > 0)
		if (line[n - 1] == '\n' && line_step(line) >= 0 && line_step(line) <= step)
			rc = llm_writer_write(w, line, (size_t)n);
	if (!rc && ferror(f))
		rc = llm_fail(LLM_EIO, "%s: %s", path, strerror(errno));
	free(line);
	fclose(f);
	if (rc) {
		if (w)
			llm_writer_abort(w);
		return rc;
	}
	return llm_writer_close(w);
}

static uint64_t get_le(const unsigned char *p, int bytes)
{
	uint64_t v = 0;
	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* ---- reading event files: the framing and the few protocol buffer fields we need -------- */

/* The next record of f into rec, framing included: rec->p + 12 holds its *len bytes of Event.
 * 1 for a record, 0 at the end or at a torn or corrupt record. */
static int read_record(FILE *f, llm_buf *rec, size_t *len)
{
	unsigned char head[12];
	if (fread(head, 1, 12, f) != 12)
		return 0;
	uint64_t n = get_le(head, 8);
	if (get_le(head + 8, 4) != llm_crc32c_mask(llm_crc32c(0, head, 8)) || n > (1u << 30))
		return 0;
	llm_buf_reset(rec);
	llm_buf_grow(rec, 12 + (size_t)n + 4);
	memcpy(rec->p, head, 12);
	unsigned char *data = (unsigned char *)rec->p + 12;
	if (fread(data, 1, (size_t)n, f) != n || fread(data + n, 1, 4, f) != 4 ||
	    get_le(data + n, 4) != llm_crc32c_mask(llm_crc32c(0, data, (size_t)n)))
		return 0;
	rec->len = 12 + (size_t)n + 4;
	*len = (size_t)n;
	return 1;
}

typedef struct {
	const unsigned char *p, *end;
} pb_reader;

static int pb_varint(pb_reader *r, uint64_t *v)
{
	*v = 0;
	for (int sh = 0; r->p < r->end && sh < 64; sh += 7) {
		unsigned char b = *r->p++;
		*v |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80))
			return 1;
	}
	return 0;
}

/* The next field of a message: its number and wire type, and its value: *v for a varint or
 * a fixed-size field (its bits), [*s, *s + *n) for a length-delimited one.
 * 1 for a field, 0 at the end of the message, -1 when malformed. */
static int pb_next(pb_reader *r, uint64_t *field, int *wire, uint64_t *v,
                   const unsigned char **s, size_t *n)
{
	uint64_t tag;
	if (r->p == r->end)
		return 0;
	if (!pb_varint(r, &tag))
		return -1;
	*field = tag >> 3;
	*wire = (int)(tag & 7);
	switch (*wire) {
	case 0:
		return pb_varint(r, v) ? 1 : -1;
	case 1:
	case 5: {
		size_t k = *wire == 1 ? 8 : 4;
		if ((size_t)(r->end - r->p) < k)
			return -1;
		*v = get_le(r->p, (int)k);
		r->p += k;
		return 1;
	}
	case 2:
		if (!pb_varint(r, v) || *v > (uint64_t)(r->end - r->p))
			return -1;
		*s = r->p;
		*n = (size_t)*v;
		r->p += *n;
		return 1;
	default:
		return -1;
	}
}

/* The step (field 2) of an Event message; 0 when absent, -1 when malformed. */
static int64_t event_step(const unsigned char *p, size_t n)
{
	pb_reader r = { p, p + n };
	uint64_t field, v = 0;
	const unsigned char *s;
	size_t len;
	int wire, k;
	int64_t step = 0;
	while ((k = pb_next(&r, &field, &wire, &v, &s, &len)) > 0)
		if (field == 2 && wire == 0)
			step = (int64_t)v;
	return k < 0 ? -1 : step;
}

/* The value of a TensorProto holding one float (dtype 1) or double (dtype 2), in
 * tensor_content (4) or float_val (5) / double_val (6), packed or not. 0 when it is anything
 * else: a string, several values, another type. */
static int tensor_scalar(const unsigned char *p, size_t n, double *out)
{
	pb_reader r = { p, p + n };
	uint64_t field, v = 0, dtype = 0;
	const unsigned char *s = NULL;
	size_t len = 0;
	int wire, k, count = 0;
	double x = 0;
	while ((k = pb_next(&r, &field, &wire, &v, &s, &len)) > 0) {
		if (field == 1 && wire == 0) {
			dtype = v;
			continue;
		}
		size_t width = field == 6 ? 8 : 4;
		if (field == 4 && wire == 2) {
			width = len;
			if (len != 4 && len != 8)
				return 0;
			v = get_le(s, (int)len);
		} else if ((field == 5 && wire == 2) || (field == 6 && wire == 2)) {
			if (len != width)
				return 0; /* packed: exactly one element */
			v = get_le(s, (int)width);
		} else if (!((field == 5 && wire == 5) || (field == 6 && wire == 1))) {
			continue; /* shape, version, other types' values */
		}
		if (width == 4) {
			uint32_t b = (uint32_t)v;
			float f;
			memcpy(&f, &b, 4);
			x = f;
		} else {
			memcpy(&x, &v, 8);
		}
		count++;
		if ((dtype == 1 && width != 4) || (dtype == 2 && width != 8))
			return 0;
	}
	if (k < 0 || count != 1 || (dtype != 1 && dtype != 2))
		return 0;
	*out = x;
	return 1;
}

/* The scalars of one Event: wall_time (1), step (2), summary (5) of values (1) with a tag (1,
 * or node_name 7 in old files) and simple_value (2) or tensor (8). */
static long long scan_event(const unsigned char *p, size_t n, llm_trainlog_scalar_fn *fn,
                            void *ctx)
{
	pb_reader r = { p, p + n };
	uint64_t field, v = 0;
	const unsigned char *s = NULL, *sum = NULL;
	size_t len = 0, sum_len = 0;
	int wire, k;
	int64_t step = 0;
	double wall = 0;
	while ((k = pb_next(&r, &field, &wire, &v, &s, &len)) > 0) {
		if (field == 1 && wire == 1)
			memcpy(&wall, &v, 8);
		else if (field == 2 && wire == 0)
			step = (int64_t)v;
		else if (field == 5 && wire == 2)
			sum = s, sum_len = len;
	}
	if (k < 0 || !sum)
		return 0;
	long long found = 0;
	pb_reader rs = { sum, sum + sum_len };
	while (pb_next(&rs, &field, &wire, &v, &s, &len) > 0) {
		if (field != 1 || wire != 2)
			continue;
		pb_reader rv = { s, s + len };
		const unsigned char *tag = NULL, *node = NULL, *vs;
		size_t tag_len = 0, node_len = 0, vl;
		double x = 0;
		int have = 0;
		while ((k = pb_next(&rv, &field, &wire, &v, &vs, &vl)) > 0) {
			if (field == 1 && wire == 2)
				tag = vs, tag_len = vl;
			else if (field == 7 && wire == 2)
				node = vs, node_len = vl;
			else if (field == 2 && wire == 5) {
				uint32_t b = (uint32_t)v;
				float f;
				memcpy(&f, &b, 4);
				x = f;
				have = 1;
			} else if (field == 8 && wire == 2)
				have = tensor_scalar(vs, vl, &x);
		}
		if (!tag_len)
			tag = node, tag_len = node_len;
		if (k == 0 && have && tag_len) {
			fn(ctx, step, wall, (const char *)tag, tag_len, x);
			found++;
		}
	}
	return found;
}

long long llm_trainlog_scan(FILE *f, llm_trainlog_scalar_fn *fn, void *ctx)
{
	llm_buf rec = LLM_BUF_INIT;
	size_t len;
	long long n = 0;
	while (read_record(f, &rec, &len))
		n += scan_event((const unsigned char *)rec.p + 12, len, fn, ctx);
	llm_buf_release(&rec);
	return ferror(f) ? llm_fail(LLM_EIO, "event file: %s", strerror(errno)) : n;
}

/* One event file: its records of steps <= step, up to the first torn or corrupt one. */
static int cut_events(const char *path, int64_t step)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return llm_fail(LLM_EIO, "%s: %s", path, strerror(errno));
	llm_writer *w = NULL;
	int rc = llm_writer_open(&w, path);
	llm_buf rec = LLM_BUF_INIT;
	size_t len;
	while (!rc && read_record(f, &rec, &len)) {
		int64_t s = event_step((const unsigned char *)rec.p + 12, len);
		if (s >= 0 && s <= step)
			rc = llm_writer_write(w, rec.p, rec.len);
	}
	llm_buf_release(&rec);
	fclose(f);
	if (rc) {
		if (w)
			llm_writer_abort(w);
		return rc;
	}
	return llm_writer_close(w);
}

int llm_trainlog_cut(const char *dir, int64_t step)
{
	llm_buf p = LLM_BUF_INIT;
	llm_buf_addf(&p, "%s/metrics.jsonl", dir);
	int rc = cut_jsonl(p.p, step);
	DIR *d = rc ? NULL : opendir(dir);
	struct dirent *e;
	while (d && !rc && (e = readdir(d)))
		if (strncmp(e->d_name, "events.out.tfevents.", 20) == 0) {
			llm_buf_reset(&p);
			llm_buf_addf(&p, "%s/%s", dir, e->d_name);
			rc = cut_events(p.p, step);
		}
	if (d)
		closedir(d);
	llm_buf_release(&p);
	return rc;
}
