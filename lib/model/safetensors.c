/*
 * safetensors.c — safetensors reader (validating) and writer; see safetensors.h.
 *
 * Written without io.h on purpose: llm-train and llm-eval use it and must not pull in the
 * compression libraries of the data pipeline.
 */
#include "safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/json.h"

static const struct {
	const char *name;
	size_t size;
} dtypes[LLM_ST_NDTYPES] = {
	[LLM_ST_BOOL] = { "BOOL", 1 }, [LLM_ST_U8] = { "U8", 1 },    [LLM_ST_I8] = { "I8", 1 },
	[LLM_ST_I16] = { "I16", 2 },   [LLM_ST_U16] = { "U16", 2 },  [LLM_ST_F16] = { "F16", 2 },
	[LLM_ST_BF16] = { "BF16", 2 }, [LLM_ST_I32] = { "I32", 4 },  [LLM_ST_U32] = { "U32", 4 },
	[LLM_ST_F32] = { "F32", 4 },   [LLM_ST_F64] = { "F64", 8 },  [LLM_ST_I64] = { "I64", 8 },
	[LLM_ST_U64] = { "U64", 8 },
};

const char *llm_safetensors_dtype_name(int dtype)
{
	return dtype >= 0 && dtype < LLM_ST_NDTYPES ? dtypes[dtype].name : "?";
}

/* Header bigger than this is refused before allocating for it (the Rust crate uses 100 MB). */
#define MAX_HEADER (100u << 20)

struct llm_safetensors {
	const unsigned char *data; /* the data section */
	uint64_t data_len;
	llm_safetensors_tensor *t;
	size_t n;
	char **meta; /* key, value, key, value ... */
	size_t nmeta;
	void *map;
	size_t map_len;
};

void llm_safetensors_free(llm_safetensors *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->n; i++)
		free(st->t[i].name);
	free(st->t);
	for (size_t i = 0; i < 2 * st->nmeta; i++)
		free(st->meta[i]);
	free(st->meta);
	if (st->map)
		munmap(st->map, st->map_len);
	free(st);
}

static int cmp_begin(const void *a, const void *b)
{
	const llm_safetensors_tensor *x = *(const llm_safetensors_tensor *const *)a;
	const llm_safetensors_tensor *y = *(const llm_safetensors_tensor *const *)b;
	return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->end > y->end) - (x->end < y->end);
}

static int cmp_name(const void *a, const void *b)
{
	const llm_safetensors_tensor *x = *(const llm_safetensors_tensor *const *)a;
	const llm_safetensors_tensor *y = *(const llm_safetensors_tensor *const *)b;
	return strcmp(x->name, y->name);
}

/* One tensor entry {"dtype", "shape", "data_offsets"}. */
static int parse_entry(llm_safetensors_tensor *t, const llm_json_val *v, const char *name,
                       llm_buf *tmp)
{
	if (v->type != LLM_JSON_OBJECT)
		return llm_fail(LLM_EFORMAT, "%s: tensor '%s': entry is not an object", name, t->name);
	llm_json_val dt = llm_json_member(v, "dtype"), sh = llm_json_member(v, "shape"),
	             of = llm_json_member(v, "data_offsets");
	if (dt.type != LLM_JSON_STRING || sh.type != LLM_JSON_ARRAY || of.type != LLM_JSON_ARRAY)
		return llm_fail(LLM_EFORMAT, "%s: tensor '%s': needs dtype, shape and data_offsets", name,
		                t->name);
	llm_buf_reset(tmp);
	llm_json_str(&dt, tmp);
	t->dtype = -1;
	for (int i = 0; i < LLM_ST_NDTYPES; i++)
		if (strcmp(tmp->p, dtypes[i].name) == 0)
			t->dtype = i;
	if (t->dtype < 0)
		return llm_fail(LLM_EFORMAT, "%s: tensor '%s': unknown dtype '%s'", name, t->name, tmp->p);
	size_t it = 0;
	llm_json_val e;
	t->numel = 1;
	t->ndim = 0;
	while (llm_json_next(&sh, &it, NULL, &e) == LLM_OK) {
		int64_t d;
		if (t->ndim == LLM_ST_MAX_DIMS || llm_json_i64(&e, &d) != LLM_OK || d < 0)
			return llm_fail(LLM_EFORMAT, "%s: tensor '%s': bad shape", name, t->name);
		t->shape[t->ndim++] = d;
		if (d && t->numel > UINT64_MAX / (uint64_t)d)
			return llm_fail(LLM_EFORMAT, "%s: tensor '%s': shape overflows", name, t->name);
		t->numel *= (uint64_t)d;
	}
	int64_t off[2];
	int k = 0;
	it = 0;
	while (llm_json_next(&of, &it, NULL, &e) == LLM_OK) {
		if (k == 2 || llm_json_i64(&e, &off[k]) != LLM_OK || off[k] < 0)
			return llm_fail(LLM_EFORMAT, "%s: tensor '%s': bad data_offsets", name, t->name);
		k++;
	}
	if (k != 2 || off[0] > off[1])
		return llm_fail(LLM_EFORMAT, "%s: tensor '%s': bad data_offsets", name, t->name);
	t->begin = (uint64_t)off[0];
	t->end = (uint64_t)off[1];
	size_t es = dtypes[t->dtype].size;
	if (t->numel > UINT64_MAX / es || t->numel * es != t->end - t->begin)
		return llm_fail(LLM_EFORMAT, "%s: tensor '%s': %llu bytes for shape of %llu elements", name,
		                t->name, (unsigned long long)(t->end - t->begin),
		                (unsigned long long)t->numel);
	return LLM_OK;
}

static int parse_meta(llm_safetensors *st, const llm_json_val *v, const char *name)
{
	if (v->type != LLM_JSON_OBJECT)
		return llm_fail(LLM_EFORMAT, "%s: __metadata__ is not an object", name);
	size_t it = 0, cap = 0;
	llm_json_val k, val;
	while (llm_json_next(v, &it, &k, &val) == LLM_OK) {
		if (val.type != LLM_JSON_STRING)
			return llm_fail(LLM_EFORMAT, "%s: __metadata__ values must be strings", name);
		if (st->nmeta == cap) {
			cap = cap ? 2 * cap : 8;
			st->meta = llm_realloc(st->meta, 2 * cap * sizeof *st->meta);
		}
		llm_buf b = LLM_BUF_INIT;
		llm_json_str(&k, &b);
		llm_buf_addc(&b, 0);
		st->meta[2 * st->nmeta] = llm_buf_detach(&b, NULL);
		llm_json_str(&val, &b);
		llm_buf_addc(&b, 0);
		st->meta[2 * st->nmeta + 1] = llm_buf_detach(&b, NULL);
		st->nmeta++;
	}
	return LLM_OK;
}

static int parse(llm_safetensors *st, const unsigned char *p, size_t len, const char *name)
{
	if (len < 8)
		return llm_fail(LLM_EFORMAT, "%s: too short for a safetensors header", name);
	uint64_t hl = 0;
	for (int i = 7; i >= 0; i--)
		hl = hl << 8 | p[i];
	if (hl > MAX_HEADER || hl > len - 8)
		return llm_fail(LLM_EFORMAT, "%s: header size %llu does not fit the file of %zu bytes",
		                name, (unsigned long long)hl, len);
	const char *h = (const char *)p + 8;
	if (hl == 0 || h[0] != '{')
		return llm_fail(LLM_EFORMAT, "%s: header is not a JSON object", name);
	st->data = p + 8 + hl;
	st->data_len = len - 8 - hl;
	llm_json_rec r;
	llm_json_rec_init(&r);
	int rc = llm_json_parse(&r, h, hl);
	if (rc != LLM_OK) {
		rc = llm_fail(LLM_EFORMAT, "%s: header byte %zu: %s", name, r.err_pos, r.err_msg);
		llm_json_rec_release(&r);
		return rc;
	}
	st->t = llm_calloc(r.nfields ? r.nfields : 1, sizeof *st->t);
	llm_buf tmp = LLM_BUF_INIT;
	for (size_t i = 0; i < r.nfields && rc == LLM_OK; i++) {
		llm_buf_reset(&tmp);
		llm_json_str(&r.fields[i].key, &tmp);
		if (strlen(tmp.p) != tmp.len) {
			rc = llm_fail(LLM_EFORMAT, "%s: tensor name with a NUL byte", name);
			break;
		}
		if (strcmp(tmp.p, "__metadata__") == 0) {
			rc = parse_meta(st, &r.fields[i].val, name);
			continue;
		}
		llm_safetensors_tensor *t = &st->t[st->n++];
		t->name = llm_strdup(tmp.p);
		rc = parse_entry(t, &r.fields[i].val, name, &tmp);
	}
	llm_buf_release(&tmp);
	llm_json_rec_release(&r);
	if (rc != LLM_OK)
		return rc;
	/* Ranges must tile [0, data_len) exactly, and names be unique. */
	llm_safetensors_tensor **order = llm_malloc((st->n ? st->n : 1) * sizeof *order);
	for (size_t i = 0; i < st->n; i++)
		order[i] = &st->t[i];
	qsort(order, st->n, sizeof *order, cmp_begin);
	uint64_t at = 0;
	for (size_t i = 0; i < st->n && rc == LLM_OK; i++) {
		if (order[i]->begin != at)
			rc = llm_fail(LLM_EFORMAT, "%s: tensor '%s': data at %llu, expected %llu (hole or "
			              "overlap)", name, order[i]->name, (unsigned long long)order[i]->begin,
			              (unsigned long long)at);
		at = order[i]->end;
	}
	if (rc == LLM_OK && at != st->data_len)
		rc = llm_fail(LLM_EFORMAT, "%s: tensors cover %llu of %llu data bytes", name,
		              (unsigned long long)at, (unsigned long long)st->data_len);
	qsort(order, st->n, sizeof *order, cmp_name);
	for (size_t i = 1; i < st->n && rc == LLM_OK; i++)
		if (strcmp(order[i - 1]->name, order[i]->name) == 0)
			rc = llm_fail(LLM_EFORMAT, "%s: tensor '%s' appears twice", name, order[i]->name);
	free(order);
	return rc;
}

int llm_safetensors_parse(llm_safetensors **out, const void *data, size_t len, const char *name)
{
	llm_safetensors *st = llm_calloc(1, sizeof *st);
	int rc = parse(st, data, len, name);
	if (rc != LLM_OK) {
		llm_safetensors_free(st);
		st = NULL;
	}
	*out = st;
	return rc;
}

int llm_safetensors_open(llm_safetensors **out, const char *path)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return llm_fail(LLM_EIO, "%s: %s", path, strerror(errno));
	struct stat sb;
	if (fstat(fd, &sb) != 0) {
		int e = errno;
		close(fd);
		return llm_fail(LLM_EIO, "%s: %s", path, strerror(e));
	}
	size_t len = (size_t)sb.st_size;
	void *map = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
	int e = errno;
	close(fd);
	if (map == MAP_FAILED)
		return llm_fail(LLM_EIO, "%s: %s", path, strerror(e));
	llm_safetensors *st = llm_calloc(1, sizeof *st);
	st->map = map;
	st->map_len = len;
	int rc = parse(st, map, len, path);
	if (rc != LLM_OK) {
		llm_safetensors_free(st);
		return rc;
	}
	*out = st;
	return LLM_OK;
}

size_t llm_safetensors_count(const llm_safetensors *st) { return st->n; }
const llm_safetensors_tensor *llm_safetensors_at(const llm_safetensors *st, size_t i)
{
	return &st->t[i];
}

const llm_safetensors_tensor *llm_safetensors_find(const llm_safetensors *st, const char *name)
{
	for (size_t i = 0; i < st->n; i++)
		if (strcmp(st->t[i].name, name) == 0)
			return &st->t[i];
	return NULL;
}

const void *llm_safetensors_data(const llm_safetensors *st, const llm_safetensors_tensor *t)
{
	return st->data + t->begin;
}

const char *llm_safetensors_meta(const llm_safetensors *st, const char *key)
{
	for (size_t i = 0; i < st->nmeta; i++)
		if (strcmp(st->meta[2 * i], key) == 0)
			return st->meta[2 * i + 1];
	return NULL;
}

static float half_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
	if (exp == 0x1f)
		bits = sign | 0x7f800000u | man << 13;
	else if (exp)
		bits = sign | (exp + 112) << 23 | man << 13;
	else if (!man)
		bits = sign;
	else { /* subnormal: normalise */
		exp = 113;
		while (!(man & 0x400)) {
			man <<= 1;
			exp--;
		}
		bits = sign | exp << 23 | (man & 0x3ff) << 13;
	}
	float f;
	memcpy(&f, &bits, 4);
	return f;
}

int llm_safetensors_read_f32(const llm_safetensors *st, const char *name, float *out, int ndim,
                    const int64_t *shape)
{
	const llm_safetensors_tensor *t = llm_safetensors_find(st, name);
	if (!t)
		return llm_fail(LLM_ENOTFOUND, "tensor '%s' is missing", name);
	int same = t->ndim == ndim;
	for (int i = 0; same && i < ndim; i++)
		same = t->shape[i] == shape[i];
	if (!same)
		return llm_fail(LLM_EFORMAT, "tensor '%s' has another shape than the model's", name);
	const unsigned char *p = llm_safetensors_data(st, t);
	for (uint64_t i = 0; i < t->numel; i++) {
		switch (t->dtype) {
		case LLM_ST_F32:
			memcpy(&out[i], p + 4 * i, 4);
			break;
		case LLM_ST_F64: {
			double d;
			memcpy(&d, p + 8 * i, 8);
			out[i] = (float)d;
			break;
		}
		case LLM_ST_BF16: {
			uint32_t bits = (uint32_t)(p[2 * i] | p[2 * i + 1] << 8) << 16;
			memcpy(&out[i], &bits, 4);
			break;
		}
		case LLM_ST_F16:
			out[i] = half_to_f32((uint16_t)(p[2 * i] | p[2 * i + 1] << 8));
			break;
		default:
			return llm_fail(LLM_EFORMAT, "tensor '%s': dtype %s is not a float type", name,
			                dtypes[t->dtype].name);
		}
	}
	return LLM_OK;
}

/* ---- writer ---------------------------------------------------------------------------- */

typedef struct {
	char *name;
	int dtype, ndim;
	int64_t shape[LLM_ST_MAX_DIMS];
	size_t bytes;
	const void *data;
} wtensor;

struct llm_safetensors_writer {
	wtensor *t;
	size_t n, cap;
	llm_buf meta;
};

llm_safetensors_writer *llm_safetensors_writer_new(void)
{
	return llm_calloc(1, sizeof(llm_safetensors_writer));
}

void llm_safetensors_writer_free(llm_safetensors_writer *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n; i++)
		free(w->t[i].name);
	free(w->t);
	llm_buf_release(&w->meta);
	free(w);
}

void llm_safetensors_writer_add(llm_safetensors_writer *w, const char *name, int dtype, int ndim,
                       const int64_t *shape, const void *data)
{
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 32;
		w->t = llm_realloc(w->t, w->cap * sizeof *w->t);
	}
	wtensor *t = &w->t[w->n++];
	t->name = llm_strdup(name);
	t->dtype = dtype;
	t->ndim = ndim;
	t->bytes = dtypes[dtype].size;
	for (int i = 0; i < ndim; i++) {
		t->shape[i] = shape[i];
		t->bytes *= (size_t)shape[i];
	}
	t->data = data;
}

void llm_safetensors_writer_meta(llm_safetensors_writer *w, const char *key, const char *value)
{
	llm_buf_adds(&w->meta, w->meta.len ? ", " : "");
	llm_json_put_str(&w->meta, key, strlen(key));
	llm_buf_adds(&w->meta, ": ");
	llm_json_put_str(&w->meta, value, strlen(value));
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t k = write(fd, c, n > (1u << 30) ? (1u << 30) : n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

int llm_safetensors_writer_write(llm_safetensors_writer *w, const char *path)
{
	llm_buf h = LLM_BUF_INIT;
	llm_buf_adds(&h, "{");
	if (w->meta.len)
		llm_buf_addf(&h, "\"__metadata__\": {%s}", w->meta.p);
	uint64_t at = 0;
	for (size_t i = 0; i < w->n; i++) {
		wtensor *t = &w->t[i];
		llm_buf_adds(&h, h.len > 1 ? ", " : "");
		llm_json_put_str(&h, t->name, strlen(t->name));
		llm_buf_addf(&h, ": {\"dtype\": \"%s\", \"shape\": [", dtypes[t->dtype].name);
		for (int d = 0; d < t->ndim; d++)
			llm_buf_addf(&h, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
		llm_buf_addf(&h, "], \"data_offsets\": [%llu, %llu]}", (unsigned long long)at,
		             (unsigned long long)(at + t->bytes));
		at += t->bytes;
	}
	llm_buf_adds(&h, "}");
	while (h.len % 8)
		llm_buf_addc(&h, ' ');
	unsigned char len8[8];
	for (int i = 0; i < 8; i++)
		len8[i] = (unsigned char)((uint64_t)h.len >> (8 * i));

	llm_buf tmp = LLM_BUF_INIT;
	const char *slash = strrchr(path, '/');
	llm_buf_addf(&tmp, "%.*s.%s.tmp.%ld", slash ? (int)(slash - path + 1) : 0, path,
	             slash ? slash + 1 : path, (long)getpid());
	/* A file (or a planted link) of that name is removed, never written through. */
	unlink(tmp.p);
	int rc = LLM_OK, fd = open(tmp.p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = llm_fail(LLM_EIO, "%s: %s", tmp.p, strerror(errno));
		goto out;
	}
	int bad = write_all(fd, len8, 8) || write_all(fd, h.p, h.len);
	for (size_t i = 0; i < w->n && !bad; i++)
		bad = write_all(fd, w->t[i].data, w->t[i].bytes);
	if (bad || fsync(fd) != 0) {
		rc = llm_fail(LLM_EIO, "%s: %s", path, strerror(errno));
		close(fd);
		unlink(tmp.p);
		goto out;
	}
	if (close(fd) != 0 || rename(tmp.p, path) != 0) {
		rc = llm_fail(LLM_EIO, "%s: %s", path, strerror(errno));
		unlink(tmp.p);
	}
out:
	llm_buf_release(&tmp);
	llm_buf_release(&h);
	return rc;
}
