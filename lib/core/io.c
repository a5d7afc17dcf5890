/*
 * io.c — readers with compression detected from content, atomic writers.
 *
 * Reader layout: decompressed bytes land in r->data[0..end); lines are found with memchr and
 * returned in place. A partial line at the end of the buffer is moved to the front before the
 * next fill, and the buffer doubles only when one line does not fit, so memory follows the
 * longest line up to the cap. Plain input is read(2) straight into that buffer: no copy.
 * Compressed input is read into r->raw and decoded by codec.h, which checks every checksum
 * the format has.
 */
#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "codec.h"
#include "err.h"
#include "tmpfile.h"

#define DATA_INIT (1u << 20)
#define RAW_SIZE (1u << 17)
#define HEAD_MAX LLM_READER_HEAD

struct llm_reader {
	int fd, own_fd;
	const char *mem; /* memory source instead of fd */
	size_t mem_len, mem_pos;
	char *name;
	int comp;           /* LLM_CODEC_* */
	llm_codec *codec;   /* decoder, when compressed */
	int64_t size;
	/* raw (compressed) input */
	char *raw;
	size_t raw_pos, raw_end;
	uint64_t raw_bytes;
	int raw_eof;
	/* decompressed data */
	char *data;
	size_t cap, pos, end;
	uint64_t base; /* decompressed offset of data[0] */
	int eof, err;
	size_t max_line;
	uint64_t lineno, line_off;
	int had_cr;
	char head[HEAD_MAX + 1];
};

static ssize_t read_fd(int fd, void *buf, size_t n)
{
	if (fd < 0)
		return 0;
	for (;;) {
		ssize_t k = read(fd, buf, n);
		if (k >= 0 || errno != EINTR)
			return k;
	}
}

/* Read raw bytes into r->raw (after consuming what is there). 0 at end, <0 on error. */
static ssize_t raw_read(llm_reader *r, char *out, size_t n)
{
	if (!r->mem)
		return read_fd(r->fd, out, n);
	size_t k = r->mem_len - r->mem_pos < n ? r->mem_len - r->mem_pos : n;
	memcpy(out, r->mem + r->mem_pos, k);
	r->mem_pos += k;
	return k;
}

static ssize_t raw_fill(llm_reader *r)
{
	if (r->raw_eof)
		return 0;
	if (r->raw_pos == r->raw_end)
		r->raw_pos = r->raw_end = 0;
	ssize_t k = raw_read(r, r->raw + r->raw_end, RAW_SIZE - r->raw_end);
	if (k < 0)
		return llm_fail(LLM_EIO, "%s: %s", r->name, strerror(errno));
	if (k == 0)
		r->raw_eof = 1;
	r->raw_end += k;
	r->raw_bytes += k;
	return k;
}

static int detect(llm_reader *r)
{
	while (r->raw_end < LLM_CODEC_MAGIC_MAX && !r->raw_eof)
		if (raw_fill(r) < 0)
			return LLM_EIO;
	r->comp = llm_codec_detect(r->raw, r->raw_end);
	if (r->comp != LLM_CODEC_NONE && !(r->codec = llm_codec_decoder_new(r->comp, r->name)))
		return LLM_ENOMEM;
	return LLM_OK;
}

/* Decompressed bytes into data[end..cap). Returns bytes added, 0 at end, <0 on error. */
static ssize_t fill(llm_reader *r)
{
	char *out = r->data + r->end;
	size_t room = r->cap - r->end;
	if (r->comp == LLM_CODEC_NONE) {
		if (r->raw_pos < r->raw_end) { /* bytes peeked by detect */
			size_t k = r->raw_end - r->raw_pos < room ? r->raw_end - r->raw_pos : room;
			memcpy(out, r->raw + r->raw_pos, k);
			r->raw_pos += k;
			return k;
		}
		if (r->raw_eof)
			return 0;
		ssize_t k = raw_read(r, out, room);
		if (k < 0)
			return llm_fail(LLM_EIO, "%s: %s", r->name, strerror(errno));
		if (k == 0)
			r->raw_eof = 1;
		r->raw_bytes += k;
		return k;
	}
	for (;;) {
		if (r->raw_pos == r->raw_end && !r->raw_eof) {
			ssize_t k = raw_fill(r);
			if (k < 0)
				return k;
		}
		size_t got;
		int rc = llm_codec_decode(r->codec, r->raw, r->raw_end, &r->raw_pos, out, room, &got,
		                          r->raw_eof);
		if (rc == LLM_EOF)
			return 0;
		if (rc < 0)
			return rc;
		if (got)
			return got;
		if (r->raw_eof)
			return llm_fail(LLM_EINTERNAL, "%s: decoder made no progress", r->name);
	}
}

/* A reader over fd (or, when mem is not NULL, over mem[0..n)), compression detected. */
static int reader_start(llm_reader **rp, int fd, const void *mem, size_t n, const char *name)
{
	llm_reader *r = llm_calloc(1, sizeof *r);
	r->fd = fd;
	r->mem = mem;
	r->mem_len = n;
	r->name = llm_strdup(name);
	r->raw = llm_malloc(RAW_SIZE);
	r->cap = DATA_INIT;
	r->data = llm_malloc(r->cap + 1);
	r->max_line = (size_t)64 << 20;
	r->size = mem ? (int64_t)n : -1;
	struct stat st;
	if (!mem && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		r->size = st.st_size;
	int rc = detect(r);
	if (rc != LLM_OK) {
		llm_reader_free(r);
		r = NULL;
	}
	*rp = r;
	return rc;
}

int llm_reader_open_fd(llm_reader **rp, int fd, const char *name)
{
	return reader_start(rp, fd, NULL, 0, name);
}

int llm_reader_open_mem(llm_reader **rp, const void *data, size_t n, const char *name)
{
	return reader_start(rp, -1, data ? data : "", n, name);
}

int llm_reader_open(llm_reader **rp, const char *path)
{
	*rp = NULL;
	if (!path || strcmp(path, "-") == 0)
		return llm_reader_open_fd(rp, 0, "<stdin>");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return llm_fail(LLM_EIO, "%s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		return llm_fail(LLM_EIO, "%s: Is a directory", path);
	}
	int rc = llm_reader_open_fd(rp, fd, path);
	if (rc != LLM_OK) {
		close(fd);
		return rc;
	}
	(*rp)->own_fd = 1;
	return LLM_OK;
}

void llm_reader_free(llm_reader *r)
{
	if (!r)
		return;
	llm_codec_free(r->codec);
	if (r->own_fd)
		close(r->fd);
	free(r->name);
	free(r->raw);
	free(r->data);
	free(r);
}

void llm_reader_set_max_line(llm_reader *r, size_t max)
{
	r->max_line = max ? max : SIZE_MAX / 2;
}

/* Make room after end: slide unread bytes to the front, or grow. */
static void make_room(llm_reader *r)
{
	if (r->pos > 0) {
		memmove(r->data, r->data + r->pos, r->end - r->pos);
		r->base += r->pos;
		r->end -= r->pos;
		r->pos = 0;
	}
	if (r->end == r->cap) {
		r->cap *= 2;
		r->data = llm_realloc(r->data, r->cap + 1);
	}
}

/* Discard the rest of an over-long line; returns its total length or a negative status. */
/* Append to the head of an over-long line what still fits (it keeps min(length, HEAD_MAX)). */
static void head_add(llm_reader *r, const char *p, size_t n, size_t *head_len)
{
	size_t k = HEAD_MAX - *head_len < n ? HEAD_MAX - *head_len : n;
	memcpy(r->head + *head_len, p, k);
	*head_len += k;
	r->head[*head_len] = 0;
}

/* Read past an over-long line starting at pos, keeping its head; returns a status. */
static int64_t skip_long_line(llm_reader *r, size_t *total)
{
	size_t head_len = 0;
	for (;;) {
		char *nl = memchr(r->data + r->pos, '\n', r->end - r->pos);
		size_t n = (nl ? (size_t)(nl - r->data) : r->end) - r->pos;
		head_add(r, r->data + r->pos, n, &head_len);
		*total += n;
		if (nl) {
			r->pos = nl + 1 - r->data;
			return LLM_OK;
		}
		r->base += r->end;
		r->pos = r->end = 0;
		ssize_t k = fill(r);
		if (k < 0)
			return k;
		if (k == 0)
			return LLM_OK;
		r->end = k;
	}
}

int llm_reader_line(llm_reader *r, char **line, size_t *len)
{
	size_t scan_from = r->pos;
	for (;;) {
		char *nl = memchr(r->data + scan_from, '\n', r->end - scan_from);
		size_t llen = (nl ? (size_t)(nl - r->data) : r->end) - r->pos;
		if (llen > r->max_line) {
			size_t total = 0;
			r->lineno++;
			r->line_off = r->base + r->pos;
			int rc = (int)skip_long_line(r, &total);
			if (rc < 0)
				return rc;
			*line = r->head;
			*len = total;
			return LLM_ETOOLONG;
		}
		if (nl || (r->eof && r->pos < r->end)) {
			char *s = r->data + r->pos;
			r->lineno++;
			r->line_off = r->base + r->pos;
			r->pos += llen + (nl != NULL);
			r->had_cr = llen && s[llen - 1] == '\r';
			if (r->had_cr)
				llen--;
			s[llen] = 0;
			*line = s;
			*len = llen;
			return LLM_OK;
		}
		if (r->eof)
			return LLM_EOF;
		scan_from = r->end;
		size_t old_pos = r->pos;
		make_room(r);
		scan_from -= old_pos - r->pos;
		ssize_t k = fill(r);
		if (k < 0) {
			r->err = (int)k;
			return (int)k;
		}
		if (k == 0)
			r->eof = 1;
		r->end += k;
	}
}

int llm_reader_peek(llm_reader *r, size_t n, const char **p, size_t *len)
{
	while (r->end - r->pos < n && !r->eof) {
		make_room(r);
		if (r->cap - r->end < n) {
			r->cap = r->end + n;
			r->data = llm_realloc(r->data, r->cap + 1);
		}
		ssize_t k = fill(r);
		if (k < 0)
			return (int)k;
		if (k == 0)
			r->eof = 1;
		r->end += k;
	}
	*p = r->data + r->pos;
	*len = r->end - r->pos < n ? r->end - r->pos : n;
	return LLM_OK;
}

ssize_t llm_reader_read(llm_reader *r, void *buf, size_t n)
{
	char *o = buf;
	size_t got = 0;
	while (got < n) {
		if (r->pos < r->end) {
			size_t k = r->end - r->pos < n - got ? r->end - r->pos : n - got;
			memcpy(o + got, r->data + r->pos, k);
			r->pos += k;
			got += k;
			continue;
		}
		if (r->eof)
			break;
		r->base += r->end;
		r->pos = r->end = 0;
		ssize_t k = fill(r);
		if (k < 0)
			return k;
		if (k == 0)
			r->eof = 1;
		r->end = k;
	}
	return got;
}

int llm_reader_read_exact(llm_reader *r, void *buf, size_t n)
{
	ssize_t k = llm_reader_read(r, buf, n);
	if (k < 0)
		return (int)k;
	if ((size_t)k == n)
		return LLM_OK;
	if (k == 0)
		return LLM_EOF;
	return llm_fail(LLM_EFORMAT, "%s: truncated: expected %zu more bytes, got %zd", r->name, n, k);
}

const char *llm_reader_name(const llm_reader *r) { return r->name; }
uint64_t llm_reader_lineno(const llm_reader *r) { return r->lineno; }
int llm_reader_line_had_cr(const llm_reader *r) { return r->had_cr; }
uint64_t llm_reader_offset(const llm_reader *r) { return r->line_off; }
uint64_t llm_reader_tell(const llm_reader *r) { return r->base + r->pos; }
uint64_t llm_reader_raw_bytes(const llm_reader *r) { return r->raw_bytes; }
int64_t llm_reader_size(const llm_reader *r) { return r->size; }
const char *llm_reader_compression(const llm_reader *r) { return llm_codec_name(r->comp); }

int llm_read_file(const char *path, char **data, size_t *len)
{
	llm_reader *r;
	int rc = llm_reader_open(&r, path);
	if (rc != LLM_OK)
		return rc;
	llm_buf b = LLM_BUF_INIT;
	char tmp[1 << 16];
	ssize_t k;
	while ((k = llm_reader_read(r, tmp, sizeof tmp)) > 0)
		llm_buf_add(&b, tmp, k);
	llm_reader_free(r);
	if (k < 0) {
		llm_buf_release(&b);
		return (int)k;
	}
	*data = llm_buf_detach(&b, len);
	return LLM_OK;
}

/*
 * Without it, a file fsynced before it is named reaches the disk only at that fsync: with the
 * default dirty limits a whole 1 GiB output sits in the page cache, and the fsync then waits
 * for all of it (1.6 s of a 3.3 s llm-shard run). Starting the writeback of each chunk as soon
 * as it is written lets the disk work while the next chunks are prepared; waiting for the
 * chunk WB_AHEAD behind keeps the dirty pages of one file bounded. The waits cost nothing
 * while the disk keeps up, and when it does not, the disk is the limit anyway.
 */
#define WB_CHUNK ((uint64_t)8 << 20)
#define WB_AHEAD ((uint64_t)8 * WB_CHUNK)

void llm_writeback_step(llm_writeback *wb, int fd, uint64_t pos)
{
#ifdef SYNC_FILE_RANGE_WRITE
	if (pos - wb->queued < WB_CHUNK)
		return;
	uint64_t end = pos / WB_CHUNK * WB_CHUNK;
	sync_file_range(fd, (off_t)wb->queued, (off_t)(end - wb->queued), SYNC_FILE_RANGE_WRITE);
	wb->queued = end;
	if (end - wb->waited > WB_AHEAD) {
		uint64_t to = end - WB_AHEAD;
		sync_file_range(fd, (off_t)wb->waited, (off_t)(to - wb->waited),
		                SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
		                SYNC_FILE_RANGE_WAIT_AFTER);
		wb->waited = to;
	}
#else
	(void)wb, (void)fd, (void)pos;
#endif
}

static int pio_all(int fd, char *p, size_t n, uint64_t off, const char *what, int wr)
{
	while (n) {
		ssize_t k = wr ? pwrite(fd, p, n, (off_t)off) : pread(fd, p, n, (off_t)off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return llm_fail(LLM_EIO, "%s: %s", what,
			                k < 0 ? strerror(errno) : wr ? "nothing written" : "short");
		p += k, n -= (size_t)k, off += (uint64_t)k;
	}
	return LLM_OK;
}

int llm_pread_all(int fd, void *p, size_t n, uint64_t off, const char *what)
{
	return pio_all(fd, p, n, off, what, 0);
}

int llm_pwrite_all(int fd, const void *p, size_t n, uint64_t off, const char *what)
{
	return pio_all(fd, (char *)p, n, off, what, 1);
}

int llm_tmpfd(const char *dir)
{
	if (!dir || !*dir)
		dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
#ifdef O_TMPFILE
	int tfd = open(dir, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
	if (tfd >= 0)
		return tfd; /* never named: nothing to remove, whatever happens */
#endif
	size_t n = strlen(dir) + sizeof "/llmkit-XXXXXX";
	char *path = llm_malloc(n);
	snprintf(path, n, "%s/llmkit-XXXXXX", dir);
	int fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		free(path);
		return llm_fail(LLM_EIO, "temporary file in %s: %s", dir, strerror(e));
	}
	unlink(path);
	free(path);
	return fd;
}

/* ---- writer ---- */

#define WBUF (1u << 20)

struct llm_writer {
	int fd;
	char *name;
	llm_tmpfile *tmp; /* NULL: writing in place (stdout, devices, FIFOs) */
	char *buf;
	size_t len;
	uint64_t bytes;
	llm_codec *enc;    /* compressor chosen by the name's suffix, or NULL */
	int err;
	uint64_t written;  /* bytes given to the file */
	llm_writeback wb;  /* files fsynced at close (tmp != NULL) */
};

static int write_all(llm_writer *w, const char *p, size_t n)
{
	while (n) {
		ssize_t k = write(w->fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			w->err = LLM_EIO;
			return llm_fail(LLM_EIO, "write error: %s: %s", w->name, strerror(errno));
		}
		p += k;
		n -= k;
		w->written += (uint64_t)k;
	}
	if (w->tmp)
		llm_writeback_step(&w->wb, w->fd, w->written);
	return LLM_OK;
}

static int emit(void *ctx, const void *p, size_t n)
{
	return write_all(ctx, p, n);
}

/* Data through the compressor (finish: and end its stream), or straight to the file. */
static int put(llm_writer *w, const char *p, size_t n, int finish)
{
	if (!w->enc)
		return write_all(w, p, n);
	int rc = llm_codec_push(w->enc, p, n, finish, emit, w);
	if (rc != LLM_OK)
		w->err = rc;
	return rc;
}

static int flush_buf(llm_writer *w)
{
	if (!w->len)
		return LLM_OK;
	int rc = put(w, w->buf, w->len, 0);
	w->len = 0;
	return rc;
}

int llm_writer_open(llm_writer **wp, const char *path)
{
	llm_writer *w = llm_calloc(1, sizeof *w);
	*wp = NULL;
	if (!path || strcmp(path, "-") == 0) {
		w->fd = 1;
		w->name = llm_strdup("<stdout>");
	} else {
		struct stat st;
		w->name = llm_strdup(path);
		int rc = LLM_OK;
		if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
			w->fd = open(path, O_WRONLY | O_CLOEXEC);
			if (w->fd < 0)
				rc = llm_fail(LLM_EIO, "%s: %s", path, strerror(errno));
		} else if ((rc = llm_tmpfile_open(&w->tmp, path)) == LLM_OK) {
			w->fd = llm_tmpfile_fd(w->tmp);
		}
		if (rc != LLM_OK) {
			free(w->name);
			free(w);
			return rc;
		}
	}
	w->buf = llm_malloc(WBUF);
	int kind = llm_codec_from_suffix(w->name);
	if (kind != LLM_CODEC_NONE && !(w->enc = llm_codec_encoder_new(kind, w->name))) {
		int rc = LLM_ENOMEM;
		llm_writer_abort(w);
		return rc;
	}
	*wp = w;
	return LLM_OK;
}

int llm_writer_write(llm_writer *w, const void *data, size_t n)
{
	if (w->err)
		return w->err;
	w->bytes += n;
	if (w->len + n <= WBUF) {
		memcpy(w->buf + w->len, data, n);
		w->len += n;
		return LLM_OK;
	}
	if (flush_buf(w) != LLM_OK)
		return LLM_EIO;
	if (n >= WBUF / 2)
		return put(w, data, n, 0);
	memcpy(w->buf, data, n);
	w->len = n;
	return LLM_OK;
}

static void writer_release(llm_writer *w)
{
	llm_codec_free(w->enc);
	free(w->buf);
	free(w->name);
	free(w);
}

int llm_writer_close(llm_writer *w)
{
	if (!w)
		return LLM_OK;
	int rc = w->err;
	if (!rc)
		rc = flush_buf(w);
	if (!rc && w->enc)
		rc = put(w, NULL, 0, 1);
	if (w->tmp) {
		if (rc)
			llm_tmpfile_discard(w->tmp);
		else
			rc = llm_tmpfile_publish(w->tmp, 0);
	} else if (w->fd != 1) {
		if (close(w->fd) != 0 && !rc)
			rc = llm_fail(LLM_EIO, "write error: %s: %s", w->name, strerror(errno));
	}
	writer_release(w);
	return rc;
}

void llm_writer_abort(llm_writer *w)
{
	if (!w)
		return;
	if (w->tmp)
		llm_tmpfile_discard(w->tmp);
	else if (w->fd != 1)
		close(w->fd);
	writer_release(w);
}

int llm_write_file(const char *path, const void *data, size_t n)
{
	llm_writer *w;
	int rc = llm_writer_open(&w, path);
	if (rc != LLM_OK)
		return rc;
	rc = llm_writer_write(w, data, n);
	if (rc != LLM_OK) {
		llm_writer_abort(w);
		return rc;
	}
	return llm_writer_close(w);
}
