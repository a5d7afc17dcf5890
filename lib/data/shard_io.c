/*
 * shard_io.c — the buffered output files shards and exports are written through: a buffer
 * per descriptor, hashed as it goes out, and a file published under its name only when
 * complete (see shard_internal.h).
 */
#include "shard_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/err.h"
#include "tok/tokstream.h"

static int write_all(int fd, const void *p, size_t n, const char *name)
{
	const char *c = p;
	while (n) {
		ssize_t k = write(fd, c, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return llm_fail(LLM_EIO, "%s: %s", name, strerror(errno));
		c += k;
		n -= (size_t)k;
	}
	return LLM_OK;
}

int llm_shard_obuf_flush(obuf *o, const char *name)
{
	if (!o->len)
		return LLM_OK;
	if (o->h)
		llm_hasher_add(o->h, o->buf, o->len);
	int st = write_all(o->fd, o->buf, o->len, name);
	o->pos += o->len;
	o->len = 0;
	if (o->durable && st == LLM_OK)
		llm_writeback_step(&o->wb, o->fd, o->pos);
	return st;
}

int llm_shard_obuf_put(obuf *o, const void *p, size_t n, const char *name)
{
	const unsigned char *c = p;
	while (n) {
		if (o->len == o->cap) {
			int st = llm_shard_obuf_flush(o, name);
			if (st != LLM_OK)
				return st;
		}
		size_t k = o->cap - o->len < n ? o->cap - o->len : n;
		memcpy(o->buf + o->len, c, k);
		o->len += k;
		c += k;
		n -= k;
	}
	return LLM_OK;
}

/* Tokens at the given width, narrowed straight into the buffer. */
int llm_shard_obuf_put_tokens(obuf *o, const uint32_t *t, size_t n, uint32_t width, const char *name)
{
	if (width == 4)
		return llm_shard_obuf_put(o, t, n * 4, name);
	while (n) {
		if (o->cap - o->len < 2) {
			int st = llm_shard_obuf_flush(o, name);
			if (st != LLM_OK)
				return st;
		}
		size_t k = (o->cap - o->len) / 2;
		if (k > n)
			k = n;
		llm_tok_narrow16(t, o->buf + o->len, k);
		o->len += 2 * k;
		t += k;
		n -= k;
	}
	return LLM_OK;
}

uint64_t llm_shard_obuf_tell(const obuf *o) { return o->pos + o->len; }

void llm_shard_obuf_init(obuf *o, int fd, size_t cap)
{
	o->fd = fd;
	o->cap = cap;
	o->buf = llm_malloc(cap);
	o->len = 0;
	o->pos = 0;
	o->h = NULL;
	o->durable = 0;
	o->wb = (llm_writeback){ 0, 0 };
}

void llm_shard_obuf_release(obuf *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	free(o->buf);
	o->buf = NULL;
	llm_hasher_free(o->h);
	o->h = NULL;
}
/* Give the finished temporary file its final name (after flushing and fsyncing it). */
int llm_shard_afile_publish(afile *f, unsigned flags)
{
	int st = llm_shard_obuf_flush(&f->out, f->path);
	f->out.fd = -1;
	if (st == LLM_OK)
		st = llm_tmpfile_publish(f->tmp, flags);
	else
		llm_tmpfile_discard(f->tmp);
	f->tmp = NULL;
	return st;
}

int llm_shard_afile_open(afile *f, const char *path)
{
	memset(f, 0, sizeof *f);
	f->out.fd = -1;
	int st = llm_tmpfile_open(&f->tmp, path);
	if (st != LLM_OK)
		return st;
	f->path = llm_strdup(path);
	llm_shard_obuf_init(&f->out, llm_tmpfile_fd(f->tmp), WBUF_SIZE);
	f->out.durable = 1;
	return LLM_OK;
}

/* Release; the temporary file disappears unless published. */
void llm_shard_afile_release(afile *f)
{
	f->out.fd = -1;
	llm_shard_obuf_release(&f->out);
	llm_tmpfile_discard(f->tmp);
	free(f->path);
	memset(f, 0, sizeof *f);
	f->out.fd = -1;
}

