/*
 * shard.c — shard writer, mmap reader and manifest.json (see shard.h).
 *
 * The writer produces the file in one sequential pass: a zeroed header, the tokens section
 * streamed from the 1 MiB buffer, then at close the per-document arrays from memory and the
 * inputs and metadata from their spools (hashed as they were spooled, copied in by the
 * kernel), each section hashed as its bytes go out; finally the header is written at offset
 * 0. The disk writes the file while it is being produced (llm_writeback_step), so the fsync
 * before it is named waits for little more than the last chunk.
 */
#include "shard.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/hash.h"
#include "core/io.h"
#include "core/json.h"
#include "core/tmpfile.h"
#include "tok/tokstream.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "llmkit's binary formats are read by memcpy: a little-endian host is required"
#endif

#define SEC_TABLE 64
#define SEC_ENTRY 32
#define HDR_CHECKSUM_AT (LLM_SHARD_HEADER_SIZE - 8)
/* Write buffers: large enough that write(2) calls are few, small enough that the kernel's
 * copy into the page cache reads them from cache (perf, 1 GiB stream: with 4 MiB that copy
 * was a third of llm-shard's CPU time, with 1 MiB a tenth). */
#define WBUF_SIZE ((size_t)1 << 20)

static const char *const sec_names[] = { "header", "tokens", "doc_offsets", "doc_info",
	                                 "inputs", "meta_offsets", "meta", "domains" };

const char *llm_shard_section_name(int kind)
{
	return kind >= 1 && kind <= LLM_SHARD_NSECTIONS ? sec_names[kind] : "header";
}

const char *llm_split_name(int split)
{
	return split == LLM_SPLIT_VAL ? "val" : "train";
}

static void put16(unsigned char *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
static uint16_t get16(const unsigned char *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static uint32_t get32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static uint64_t align_up(uint64_t x)
{
	return (x + LLM_SHARD_ALIGN - 1) & ~(uint64_t)(LLM_SHARD_ALIGN - 1);
}

/* ---- header encoding ---- */

static void header_encode(const llm_shard_info *in, unsigned char h[LLM_SHARD_HEADER_SIZE])
{
	memset(h, 0, LLM_SHARD_HEADER_SIZE);
	memcpy(h, LLM_SHARD_MAGIC, 8);
	put32(h + 8, in->version);
	put32(h + 12, in->width);
	put32(h + 16, in->vocab_size);
	put32(h + 20, in->flags);
	put64(h + 24, in->tokenizer_id);
	put64(h + 32, in->docs);
	put64(h + 40, in->tokens);
	put32(h + 48, in->eos_id);
	put32(h + 52, LLM_SHARD_NSECTIONS);
	for (int k = 1; k <= LLM_SHARD_NSECTIONS; k++) {
		unsigned char *e = h + SEC_TABLE + (k - 1) * SEC_ENTRY;
		put32(e, (uint32_t)k);
		put64(e + 8, in->sec[k].offset);
		put64(e + 16, in->sec[k].length);
		put64(e + 24, in->sec[k].checksum);
	}
	put64(h + HDR_CHECKSUM_AT, llm_hash64(h, HDR_CHECKSUM_AT, 0));
}

/* ---- writer ---- */

/* A buffered sequential output to one descriptor; hashes what passes through when h is set. */
typedef struct {
	int fd;
	unsigned char *buf;
	size_t len, cap;
	uint64_t pos;    /* file offset of buf[0] */
	llm_hasher *h;
	int durable;     /* fsynced at the end: start writeback early (io.h) */
	llm_writeback wb;
} obuf;

/* A file written under a temporary identity and given its name only when complete. */
typedef struct {
	char *path;
	llm_tmpfile *tmp;
	obuf out;      /* out.fd belongs to tmp */
} afile;

static int afile_open(afile *f, const char *path);
static int afile_publish(afile *f, unsigned flags);
static void afile_release(afile *f);

struct llm_shard_writer {
	afile f;
	char *path;
	llm_shard_params p;
	obuf inputs, meta;
	uint64_t *doc_off, *meta_off;
	unsigned char *info;
	size_t docs, cap;
	uint64_t tokens, meta_bytes;
	char **domains;
	size_t ndomains, last_dom;
	int failed;
};

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

static int obuf_flush(obuf *o, const char *name)
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

static int obuf_put(obuf *o, const void *p, size_t n, const char *name)
{
	const unsigned char *c = p;
	while (n) {
		if (o->len == o->cap) {
			int st = obuf_flush(o, name);
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
static int obuf_put_tokens(obuf *o, const uint32_t *t, size_t n, uint32_t width, const char *name)
{
	if (width == 4)
		return obuf_put(o, t, n * 4, name);
	while (n) {
		if (o->cap - o->len < 2) {
			int st = obuf_flush(o, name);
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

static uint64_t obuf_tell(const obuf *o) { return o->pos + o->len; }

static void obuf_init(obuf *o, int fd, size_t cap)
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

static void obuf_release(obuf *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	free(o->buf);
	o->buf = NULL;
	llm_hasher_free(o->h);
	o->h = NULL;
}

int llm_shard_writer_open(llm_shard_writer **out, const char *path, const llm_shard_params *p)
{
	*out = NULL;
	if ((p->width != 2 && p->width != 4) || p->vocab_size == 0 ||
	    (p->width == 2 && p->vocab_size > 65536) ||
	    (p->eos_id != LLM_SHARD_NO_EOS && p->eos_id >= p->vocab_size))
		return llm_fail(LLM_EINVAL, "%s: bad shard parameters (width %u, vocab %u, eos %u)",
		                path, p->width, p->vocab_size, p->eos_id);
	llm_shard_writer *w = llm_calloc(1, sizeof *w);
	w->path = llm_strdup(path);
	w->p = *p;
	w->f.out.fd = w->inputs.fd = w->meta.fd = -1;
	char *dir = llm_tmpfile_dir(path);
	int fd;
	if (afile_open(&w->f, path) != LLM_OK)
		goto fail;
	if ((fd = llm_tmpfd(dir)) < 0)
		goto fail;
	obuf_init(&w->meta, fd, (size_t)1 << 16);
	w->meta.h = llm_hasher_new(0);
	if (p->noised) {
		if ((fd = llm_tmpfd(dir)) < 0)
			goto fail;
		obuf_init(&w->inputs, fd, WBUF_SIZE);
		w->inputs.h = llm_hasher_new(0);
	}
	/* The header is written last; keep its place with zeros. */
	static const unsigned char zero[LLM_SHARD_HEADER_SIZE];
	if (obuf_put(&w->f.out, zero, sizeof zero, path) != LLM_OK ||
	    obuf_flush(&w->f.out, path) != LLM_OK)
		goto fail;
	w->f.out.h = llm_hasher_new(0);
	w->cap = 1024;
	w->doc_off = llm_malloc((w->cap + 1) * sizeof *w->doc_off);
	w->meta_off = llm_malloc((w->cap + 1) * sizeof *w->meta_off);
	w->info = llm_malloc(w->cap * 8);
	w->doc_off[0] = w->meta_off[0] = 0;
	free(dir);
	*out = w;
	return LLM_OK;
fail:
	free(dir);
	llm_shard_writer_abort(w); /* the detail of the failure stays set */
	return LLM_EIO;
}

static int domain_id(llm_shard_writer *w, const char *name, uint16_t *id)
{
	if (!name || !*name)
		name = "unknown";
	if (w->ndomains && strcmp(w->domains[w->last_dom], name) == 0) {
		*id = (uint16_t)w->last_dom;
		return LLM_OK;
	}
	for (size_t i = 0; i < w->ndomains; i++)
		if (strcmp(w->domains[i], name) == 0) {
			w->last_dom = i;
			*id = (uint16_t)i;
			return LLM_OK;
		}
	if (w->ndomains == 65536)
		return llm_fail(LLM_EINVAL, "%s: more than 65536 domains", w->path);
	w->domains = llm_realloc(w->domains, (w->ndomains + 1) * sizeof *w->domains);
	w->domains[w->ndomains] = llm_strdup(name);
	w->last_dom = w->ndomains++;
	*id = (uint16_t)w->last_dom;
	return LLM_OK;
}

/* The largest token and the last one of a sequence given either way (see llm_shard_doc_in). */
static uint32_t seq_max(const uint32_t *t, const void *raw, size_t n, uint32_t width)
{
	if (t)
		return llm_tok_max(t, n);
	return width == 2 ? llm_tok_max16(raw, n) : llm_tok_max(raw, n);
}

static uint32_t seq_last(const uint32_t *t, const void *raw, size_t n, uint32_t width)
{
	if (t)
		return t[n - 1];
	const unsigned char *p = raw;
	return width == 2 ? get16(p + 2 * (n - 1)) : get32(p + 4 * (n - 1));
}

static int put_seq(obuf *o, const uint32_t *t, const void *raw, size_t n, uint32_t width,
                   const char *name)
{
	return t ? obuf_put_tokens(o, t, n, width, name) : obuf_put(o, raw, n * width, name);
}

int llm_shard_writer_add(llm_shard_writer *w, const llm_shard_doc_in *d)
{
	if (w->failed)
		return w->failed;
	uint32_t width = w->p.width;
	const uint32_t *in = d->tokens ? d->inputs : NULL;
	const void *rin = d->tokens ? NULL : d->raw_inputs;
	if (d->n && (seq_max(d->tokens, d->raw_tokens, d->n, width) >= w->p.vocab_size ||
	              (w->p.noised && seq_max(in, rin, d->n, width) >= w->p.vocab_size)))
		return llm_fail(LLM_EINVAL, "%s: a token is not below vocab size %u", w->path,
		                w->p.vocab_size);
	uint16_t dom = 0;
	int st = domain_id(w, d->domain, &dom);
	if (st != LLM_OK)
		return st;
	uint16_t flags = d->flags & ~LLM_SHARD_DOC_EOS_ADDED;
	int add_eos = w->p.eos_id != LLM_SHARD_NO_EOS &&
	              (d->n == 0 || seq_last(d->tokens, d->raw_tokens, d->n, width) != w->p.eos_id);
	if (add_eos)
		flags |= LLM_SHARD_DOC_EOS_ADDED;
	if (w->docs == w->cap) {
		w->cap *= 2;
		w->doc_off = llm_realloc(w->doc_off, (w->cap + 1) * sizeof *w->doc_off);
		w->meta_off = llm_realloc(w->meta_off, (w->cap + 1) * sizeof *w->meta_off);
		w->info = llm_realloc(w->info, w->cap * 8);
	}
	st = put_seq(&w->f.out, d->tokens, d->raw_tokens, d->n, width, w->path);
	if (st == LLM_OK && add_eos)
		st = obuf_put_tokens(&w->f.out, &w->p.eos_id, 1, width, w->path);
	if (st == LLM_OK && w->p.noised) {
		st = put_seq(&w->inputs, in, rin, d->n, width, w->path);
		if (st == LLM_OK && add_eos)
			st = obuf_put_tokens(&w->inputs, &w->p.eos_id, 1, width, w->path);
	}
	if (st == LLM_OK)
		st = obuf_put(&w->meta, d->meta, d->meta_len, w->path);
	if (st != LLM_OK)
		return w->failed = st;
	w->tokens += d->n + (size_t)add_eos;
	w->meta_bytes += d->meta_len;
	unsigned char *inf = w->info + 8 * w->docs;
	put16(inf, dom);
	put16(inf + 2, flags);
	memcpy(inf + 4, &d->weight, 4);
	w->docs++;
	w->doc_off[w->docs] = w->tokens;
	w->meta_off[w->docs] = w->meta_bytes;
	return LLM_OK;
}

uint64_t llm_shard_writer_bytes(const llm_shard_writer *w)
{
	uint64_t tb = w->tokens * w->p.width;
	return LLM_SHARD_HEADER_SIZE + align_up(tb) * (w->p.noised ? 2 : 1) +
	       align_up(w->docs * 24 + 16) + align_up(w->meta_bytes) + 3 * LLM_SHARD_ALIGN;
}

uint64_t llm_shard_writer_docs(const llm_shard_writer *w) { return w->docs; }

/* Close the current section (kind) that started at start: digest, pad to alignment. */
static int end_section(llm_shard_writer *w, llm_shard_info *in, int kind, uint64_t start)
{
	int st = obuf_flush(&w->f.out, w->path);
	in->sec[kind].offset = start;
	in->sec[kind].length = obuf_tell(&w->f.out) - start;
	in->sec[kind].checksum = llm_hasher_digest(w->f.out.h);
	llm_hasher_free(w->f.out.h);
	w->f.out.h = NULL;
	static const unsigned char zero[LLM_SHARD_ALIGN];
	uint64_t pad = align_up(obuf_tell(&w->f.out)) - obuf_tell(&w->f.out);
	if (st == LLM_OK && kind < LLM_SHARD_NSECTIONS &&
	    (st = obuf_put(&w->f.out, zero, pad, w->path)) == LLM_OK)
		st = obuf_flush(&w->f.out, w->path); /* padding belongs to no section's checksum */
	w->f.out.h = llm_hasher_new(0);
	return st;
}

/*
 * Append a spool's content to the output as the next section's bytes. The spool hashed them
 * as they were added, so its hasher becomes the section's; the bytes themselves are copied
 * inside the kernel (copy_file_range: no round trip through this process, and a reflink
 * where the file system shares blocks), with read and write as the fallback.
 */
static int copy_spool(llm_shard_writer *w, obuf *sp)
{
	obuf *o = &w->f.out;
	int st = obuf_flush(sp, w->path);
	if (st == LLM_OK)
		st = obuf_flush(o, w->path);
	if (st != LLM_OK)
		return st;
	llm_hasher_free(o->h);
	o->h = sp->h;
	sp->h = NULL;
	off_t in_off = 0, out_off = (off_t)o->pos;
#ifdef __linux__
	int in_kernel = 1;
#endif
	while ((uint64_t)in_off < sp->pos) {
		size_t want = (size_t)(sp->pos - (uint64_t)in_off);
		ssize_t k;
#ifdef __linux__
		if (in_kernel) {
			k = copy_file_range(sp->fd, &in_off, o->fd, &out_off, want, 0);
			if (k > 0 || (k < 0 && errno == EINTR))
				continue;
			in_kernel = 0; /* not supported here (or an error the plain path will report) */
		}
#endif
		if (want > o->cap)
			want = o->cap;
		k = pread(sp->fd, o->buf, want, in_off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return llm_fail(LLM_EIO, "%s: reading back a spool: %s", w->path,
			                k < 0 ? strerror(errno) : "short file");
		ssize_t put;
		do
			put = pwrite(o->fd, o->buf, (size_t)k, out_off);
		while (put < 0 && errno == EINTR);
		if (put < 0)
			return llm_fail(LLM_EIO, "%s: %s", w->path, strerror(errno));
		in_off += put;
		out_off += put;
	}
	o->pos = (uint64_t)out_off;
	if (lseek(o->fd, out_off, SEEK_SET) < 0)
		return llm_fail(LLM_EIO, "%s: %s", w->path, strerror(errno));
	llm_writeback_step(&o->wb, o->fd, o->pos);
	return LLM_OK;
}

/* Give the finished temporary file its final name (after flushing and fsyncing it). */
static int afile_publish(afile *f, unsigned flags)
{
	int st = obuf_flush(&f->out, f->path);
	f->out.fd = -1;
	if (st == LLM_OK)
		st = llm_tmpfile_publish(f->tmp, flags);
	else
		llm_tmpfile_discard(f->tmp);
	f->tmp = NULL;
	return st;
}

static int afile_open(afile *f, const char *path)
{
	memset(f, 0, sizeof *f);
	f->out.fd = -1;
	int st = llm_tmpfile_open(&f->tmp, path);
	if (st != LLM_OK)
		return st;
	f->path = llm_strdup(path);
	obuf_init(&f->out, llm_tmpfile_fd(f->tmp), WBUF_SIZE);
	f->out.durable = 1;
	return LLM_OK;
}

/* Release; the temporary file disappears unless published. */
static void afile_release(afile *f)
{
	f->out.fd = -1;
	obuf_release(&f->out);
	llm_tmpfile_discard(f->tmp);
	free(f->path);
	memset(f, 0, sizeof *f);
	f->out.fd = -1;
}

static void writer_free(llm_shard_writer *w)
{
	afile_release(&w->f);
	obuf_release(&w->inputs);
	obuf_release(&w->meta);
	for (size_t i = 0; i < w->ndomains; i++)
		free(w->domains[i]);
	free(w->domains);
	free(w->doc_off);
	free(w->meta_off);
	free(w->info);
	free(w->path);
	free(w);
}

int llm_shard_writer_close(llm_shard_writer *w, llm_shard_info *info)
{
	llm_shard_info in;
	memset(&in, 0, sizeof in);
	in.version = LLM_SHARD_VERSION;
	in.width = w->p.width;
	in.vocab_size = w->p.vocab_size;
	in.flags = w->p.noised ? LLM_SHARD_NOISED : 0;
	in.eos_id = w->p.eos_id;
	in.tokenizer_id = w->p.tokenizer_id;
	in.docs = w->docs;
	in.tokens = w->tokens;
	int st = w->failed;
	uint64_t start = LLM_SHARD_HEADER_SIZE;
	if (st == LLM_OK)
		st = end_section(w, &in, LLM_SHARD_SEC_TOKENS, start);
	start = obuf_tell(&w->f.out);
	if (st == LLM_OK && (st = obuf_put(&w->f.out, w->doc_off, (w->docs + 1) * 8, w->path)) == LLM_OK)
		st = end_section(w, &in, LLM_SHARD_SEC_DOC_OFFSETS, start);
	start = obuf_tell(&w->f.out);
	if (st == LLM_OK && (st = obuf_put(&w->f.out, w->info, w->docs * 8, w->path)) == LLM_OK)
		st = end_section(w, &in, LLM_SHARD_SEC_DOC_INFO, start);
	start = obuf_tell(&w->f.out);
	if (st == LLM_OK && (!w->p.noised || (st = copy_spool(w, &w->inputs)) == LLM_OK))
		st = end_section(w, &in, LLM_SHARD_SEC_INPUTS, start);
	start = obuf_tell(&w->f.out);
	if (st == LLM_OK && (st = obuf_put(&w->f.out, w->meta_off, (w->docs + 1) * 8, w->path)) == LLM_OK)
		st = end_section(w, &in, LLM_SHARD_SEC_META_OFFSETS, start);
	start = obuf_tell(&w->f.out);
	if (st == LLM_OK && (st = copy_spool(w, &w->meta)) == LLM_OK)
		st = end_section(w, &in, LLM_SHARD_SEC_META, start);
	start = obuf_tell(&w->f.out);
	if (st == LLM_OK) {
		llm_buf j = LLM_BUF_INIT;
		llm_buf_addc(&j, '[');
		for (size_t i = 0; i < w->ndomains; i++) {
			if (i)
				llm_buf_adds(&j, ", ");
			llm_json_put_str(&j, w->domains[i], strlen(w->domains[i]));
		}
		llm_buf_addc(&j, ']');
		if ((st = obuf_put(&w->f.out, j.p, j.len, w->path)) == LLM_OK)
			st = end_section(w, &in, LLM_SHARD_SEC_DOMAINS, start);
		llm_buf_release(&j);
	}
	if (st == LLM_OK) {
		unsigned char h[LLM_SHARD_HEADER_SIZE];
		header_encode(&in, h);
		in.header_checksum = get64(h + HDR_CHECKSUM_AT);
		ssize_t k;
		do
			k = pwrite(w->f.out.fd, h, sizeof h, 0);
		while (k < 0 && errno == EINTR);
		if (k != (ssize_t)sizeof h)
			st = llm_fail(LLM_EIO, "%s: %s", w->path, k < 0 ? strerror(errno) : "short write");
	}
	/* At once: a shard is a part of a dataset that its manifest switches as a whole. */
	if (st == LLM_OK)
		st = afile_publish(&w->f, LLM_PUBLISH_NOW);
	if (st != LLM_OK) {
		llm_shard_writer_abort(w);
		return st;
	}
	if (info)
		*info = in;
	writer_free(w);
	return LLM_OK;
}

void llm_shard_writer_abort(llm_shard_writer *w)
{
	if (!w)
		return;
	writer_free(w);
}

/* ---- exports ---- */

struct llm_export {
	int format;
	uint32_t vocab, width;   /* width: bytes per token in the output */
	afile bin;
	obuf lens;               /* Megatron: int32 sequence lengths, spooled */
	uint64_t tokens, docs;
	char *idx_path;
};

int llm_export_open(llm_export **out, int format, const char *path, uint32_t vocab)
{
	*out = NULL;
	if (vocab == 0)
		return llm_fail(LLM_EINVAL, "%s: vocab size 0", path);
	llm_export *e = llm_calloc(1, sizeof *e);
	e->format = format;
	e->vocab = vocab;
	e->lens.fd = -1;
	e->width = format == LLM_EXPORT_MEGATRON ? (vocab < 65500 ? 2 : 4) : (vocab <= 65536 ? 2 : 4);
	llm_buf name = LLM_BUF_INIT;
	llm_buf_addf(&name, "%s%s", path, format == LLM_EXPORT_MEGATRON ? ".bin" : "");
	int st = afile_open(&e->bin, name.p);
	llm_buf_release(&name);
	if (st == LLM_OK && format == LLM_EXPORT_MEGATRON) {
		llm_buf_addf(&name, "%s.idx", path);
		e->idx_path = llm_buf_detach(&name, NULL);
		char *dir = llm_tmpfile_dir(path);
		int fd = llm_tmpfd(dir);
		free(dir);
		if (fd < 0)
			st = LLM_EIO;
		else
			obuf_init(&e->lens, fd, (size_t)1 << 16);
	}
	if (st == LLM_OK && format == LLM_EXPORT_LLMC) {
		/* The header's token count is patched in at close. */
		int32_t h[256] = { 0 };
		st = obuf_put(&e->bin.out, h, sizeof h, path);
	}
	if (st != LLM_OK) {
		llm_export_abort(e);
		return st;
	}
	*out = e;
	return LLM_OK;
}

/* The limits of a document of n tokens, before anything of it is written. */
static int export_check(const llm_export *e, size_t n)
{
	if (e->format == LLM_EXPORT_LLMC && e->tokens + n > LLM_EXPORT_LLMC_MAX_TOKENS)
		return llm_fail(LLM_EINVAL, "%s: llm.c files hold fewer than 2^31 tokens", e->bin.path);
	if (e->format == LLM_EXPORT_MEGATRON && n > INT32_MAX)
		return llm_fail(LLM_EINVAL, "%s: document of %zu tokens is too long for Megatron",
		                e->bin.path, n);
	return LLM_OK;
}

/* Count a document of n tokens whose tokens are written. */
static int export_done(llm_export *e, size_t n)
{
	int st = LLM_OK;
	if (e->format == LLM_EXPORT_MEGATRON) {
		int32_t len = (int32_t)n;
		st = obuf_put(&e->lens, &len, 4, e->bin.path);
	}
	if (st == LLM_OK) {
		e->tokens += n;
		e->docs++;
	}
	return st;
}

static int export_bad_token(const llm_export *e)
{
	return llm_fail(LLM_EINVAL, "%s: a token is not below vocab size %u", e->bin.path, e->vocab);
}

int llm_export_add(llm_export *e, const uint32_t *t, size_t n)
{
	if (n && llm_tok_max(t, n) >= e->vocab)
		return export_bad_token(e);
	int st = export_check(e, n);
	if (st == LLM_OK)
		st = obuf_put_tokens(&e->bin.out, t, n, e->width, e->bin.path);
	return st == LLM_OK ? export_done(e, n) : st;
}

int llm_export_add_raw(llm_export *e, const void *raw, uint32_t width, size_t n, uint32_t eos)
{
	if ((width != 2 && width != 4) || width > e->width)
		return llm_fail(LLM_EINVAL, "%s: %u-byte tokens do not fit a %u-byte export", e->bin.path,
		                width, e->width);
	size_t m = n + (eos != LLM_SHARD_NO_EOS);
	if ((n && (width == 2 ? llm_tok_max16(raw, n) : llm_tok_max(raw, n)) >= e->vocab) ||
	    (eos != LLM_SHARD_NO_EOS && eos >= e->vocab))
		return export_bad_token(e);
	int st = export_check(e, m);
	if (st != LLM_OK)
		return st;
	obuf *o = &e->bin.out;
	if (width == e->width) {
		st = obuf_put(o, raw, n * width, e->bin.path);
	} else { /* 2 to 4: Megatron's int32 for vocabularies of 65500 to 65536 */
		const unsigned char *p = raw;
		uint32_t wide[1024];
		for (size_t i = 0; i < n && st == LLM_OK; i += 1024) {
			size_t k = n - i < 1024 ? n - i : 1024;
			llm_tok_widen16(p + 2 * i, wide, k);
			st = obuf_put(o, wide, 4 * k, e->bin.path);
		}
	}
	if (st == LLM_OK && eos != LLM_SHARD_NO_EOS)
		st = obuf_put_tokens(o, &eos, 1, e->width, e->bin.path);
	return st == LLM_OK ? export_done(e, m) : st;
}

uint64_t llm_export_tokens(const llm_export *e) { return e->tokens; }
/* llm.c's 256 int32 header is part of the file, so it counts against the shard size. */
uint64_t llm_export_bytes(const llm_export *e)
{
	return e->tokens * e->width + (e->format == LLM_EXPORT_LLMC ? 256 * sizeof(int32_t) : 0);
}

/* Megatron's .idx: header, lengths (from the spool), pointers and document indices computed
 * on the fly, so the index needs no memory per document. */
static int write_idx(llm_export *e)
{
	afile idx;
	int st = afile_open(&idx, e->idx_path);
	if (st != LLM_OK)
		return st;
	unsigned char h[9 + 8 + 1 + 8 + 8];
	memcpy(h, "MMIDIDX\0\0", 9);
	put64(h + 9, 1);
	h[17] = e->width == 2 ? 8 : 4;
	put64(h + 18, e->docs);
	put64(h + 26, e->docs + 1);
	st = obuf_put(&idx.out, h, sizeof h, idx.path);
	if (st == LLM_OK)
		st = obuf_flush(&e->lens, idx.path);
	/* lengths, then pointers: two passes over the spool */
	for (int pass = 0; pass < 2 && st == LLM_OK; pass++) {
		int64_t ptr = 0;
		int32_t buf[4096];
		for (uint64_t i = 0; i < e->docs && st == LLM_OK;) {
			size_t k = e->docs - i < 4096 ? (size_t)(e->docs - i) : 4096;
			ssize_t r = pread(e->lens.fd, buf, k * 4, (off_t)(i * 4));
			if (r != (ssize_t)(k * 4)) {
				st = llm_fail(LLM_EIO, "%s: reading back lengths: %s", idx.path,
				              r < 0 ? strerror(errno) : "short file");
				break;
			}
			if (pass == 0) {
				st = obuf_put(&idx.out, buf, k * 4, idx.path);
			} else {
				for (size_t j = 0; j < k && st == LLM_OK; j++) {
					st = obuf_put(&idx.out, &ptr, 8, idx.path);
					ptr += (int64_t)buf[j] * e->width;
				}
			}
			i += k;
		}
	}
	for (uint64_t i = 0; i <= e->docs && st == LLM_OK; i++) {
		int64_t d = (int64_t)i;
		st = obuf_put(&idx.out, &d, 8, idx.path);
	}
	if (st == LLM_OK)
		st = afile_publish(&idx, 0);
	afile_release(&idx);
	return st;
}

int llm_export_close(llm_export *e)
{
	int st = obuf_flush(&e->bin.out, e->bin.path);
	if (st == LLM_OK && e->format == LLM_EXPORT_LLMC) {
		int32_t h[3] = { e->width == 2 ? 20240520 : 20240801, e->width == 2 ? 1 : 7,
			         (int32_t)e->tokens };
		if (pwrite(e->bin.out.fd, h, sizeof h, 0) != (ssize_t)sizeof h)
			st = llm_fail(LLM_EIO, "%s: %s", e->bin.path, strerror(errno));
	}
	/* The index goes first: a .bin under its final name always has its .idx. */
	if (st == LLM_OK && e->format == LLM_EXPORT_MEGATRON)
		st = write_idx(e);
	if (st == LLM_OK)
		st = afile_publish(&e->bin, 0);
	llm_export_abort(e);
	return st;
}

void llm_export_abort(llm_export *e)
{
	if (!e)
		return;
	afile_release(&e->bin);
	obuf_release(&e->lens);
	free(e->idx_path);
	free(e);
}

/* ---- reader ---- */

struct llm_shard {
	char *path;
	const unsigned char *map;
	size_t size;
	llm_shard_info info;
	char **domains;
	size_t ndomains;
};

static int bad(const char *path, int kind, const char *what)
{
	return llm_fail(LLM_EFORMAT, "%s: %s%s%s: %s", path, kind ? "section '" : "",
	                llm_shard_section_name(kind), kind ? "'" : "", what);
}

static const unsigned char *sec_ptr(const llm_shard *s, int kind)
{
	return s->map + s->info.sec[kind].offset;
}

/* Check that an offsets section (n + 1 u64) starts at 0, never decreases and ends at end. */
static int check_offsets(const llm_shard *s, int kind, uint64_t n, uint64_t end)
{
	const uint64_t *o = (const uint64_t *)sec_ptr(s, kind);
	if (o[0] != 0)
		return bad(s->path, kind, "does not start at 0");
	for (uint64_t i = 0; i < n; i++)
		if (o[i + 1] < o[i])
			return bad(s->path, kind, "offsets decrease");
	if (o[n] != end)
		return bad(s->path, kind, "last offset does not match the data length");
	return LLM_OK;
}

static int parse_domains(llm_shard *s)
{
	const char *p = (const char *)sec_ptr(s, LLM_SHARD_SEC_DOMAINS);
	size_t n = s->info.sec[LLM_SHARD_SEC_DOMAINS].length, pos;
	llm_json_val arr, key, v;
	const char *msg;
	if (llm_json_parse_value(p, n, &arr, &pos, &msg) != LLM_OK || arr.type != LLM_JSON_ARRAY)
		return bad(s->path, LLM_SHARD_SEC_DOMAINS, "not a JSON array");
	size_t it = 0;
	llm_buf b = LLM_BUF_INIT;
	while (llm_json_next(&arr, &it, &key, &v) == LLM_OK) {
		if (v.type != LLM_JSON_STRING || s->ndomains == 65536) {
			llm_buf_release(&b);
			return bad(s->path, LLM_SHARD_SEC_DOMAINS, "not an array of at most 65536 names");
		}
		llm_buf_reset(&b);
		llm_json_str(&v, &b);
		s->domains = llm_realloc(s->domains, (s->ndomains + 1) * sizeof *s->domains);
		s->domains[s->ndomains++] = llm_strndup(b.p ? b.p : "", b.len);
	}
	llm_buf_release(&b);
	return LLM_OK;
}

static int shard_check(llm_shard *s)
{
	const unsigned char *h = s->map;
	llm_shard_info *in = &s->info;
	if (s->size < LLM_SHARD_HEADER_SIZE || memcmp(h, LLM_SHARD_MAGIC, 8) != 0)
		return bad(s->path, 0, "not a shard (no LLMSHRD1 magic)");
	in->header_checksum = get64(h + HDR_CHECKSUM_AT);
	if (llm_hash64(h, HDR_CHECKSUM_AT, 0) != in->header_checksum)
		return bad(s->path, 0, "checksum mismatch");
	in->version = get32(h + 8);
	in->width = get32(h + 12);
	in->vocab_size = get32(h + 16);
	in->flags = get32(h + 20);
	in->tokenizer_id = get64(h + 24);
	in->docs = get64(h + 32);
	in->tokens = get64(h + 40);
	in->eos_id = get32(h + 48);
	if (in->version != LLM_SHARD_VERSION)
		return bad(s->path, 0, "unsupported version");
	if ((in->width != 2 && in->width != 4) || in->vocab_size == 0 ||
	    (in->width == 2 && in->vocab_size > 65536) || (in->flags & ~LLM_SHARD_NOISED) ||
	    (in->eos_id != LLM_SHARD_NO_EOS && in->eos_id >= in->vocab_size) ||
	    get32(h + 52) != LLM_SHARD_NSECTIONS)
		return bad(s->path, 0, "invalid width, vocab size, flags, eos id or section count");
	/* Counts are bounded by the file size before any product is formed. */
	if (in->tokens > s->size / in->width || in->docs >= s->size / 8)
		return bad(s->path, 0, "counts larger than the file");
	for (int k = 1; k <= LLM_SHARD_NSECTIONS; k++) {
		const unsigned char *e = h + SEC_TABLE + (k - 1) * SEC_ENTRY;
		in->sec[k].offset = get64(e + 8);
		in->sec[k].length = get64(e + 16);
		in->sec[k].checksum = get64(e + 24);
		if (get32(e) != (uint32_t)k)
			return bad(s->path, 0, "section table out of order");
		if (in->sec[k].offset % LLM_SHARD_ALIGN || in->sec[k].offset < LLM_SHARD_HEADER_SIZE ||
		    in->sec[k].offset > s->size || in->sec[k].length > s->size - in->sec[k].offset)
			return bad(s->path, k, "offset or length outside the file");
	}
	uint64_t tb = in->tokens * in->width, ob = (in->docs + 1) * 8;
	if (in->sec[LLM_SHARD_SEC_TOKENS].length != tb)
		return bad(s->path, LLM_SHARD_SEC_TOKENS, "length does not match the token count");
	if (in->sec[LLM_SHARD_SEC_DOC_OFFSETS].length != ob)
		return bad(s->path, LLM_SHARD_SEC_DOC_OFFSETS, "length does not match the document count");
	if (in->sec[LLM_SHARD_SEC_DOC_INFO].length != in->docs * 8)
		return bad(s->path, LLM_SHARD_SEC_DOC_INFO, "length does not match the document count");
	if (in->sec[LLM_SHARD_SEC_INPUTS].length != ((in->flags & LLM_SHARD_NOISED) ? tb : 0))
		return bad(s->path, LLM_SHARD_SEC_INPUTS, "length does not match the token count");
	if (in->sec[LLM_SHARD_SEC_META_OFFSETS].length != ob)
		return bad(s->path, LLM_SHARD_SEC_META_OFFSETS, "length does not match the document count");
	int st;
	if ((st = check_offsets(s, LLM_SHARD_SEC_DOC_OFFSETS, in->docs, in->tokens)) != LLM_OK ||
	    (st = check_offsets(s, LLM_SHARD_SEC_META_OFFSETS, in->docs,
	                        in->sec[LLM_SHARD_SEC_META].length)) != LLM_OK ||
	    (st = parse_domains(s)) != LLM_OK)
		return st;
	const unsigned char *inf = sec_ptr(s, LLM_SHARD_SEC_DOC_INFO);
	for (uint64_t i = 0; i < in->docs; i++)
		if (get16(inf + 8 * i) >= s->ndomains)
			return bad(s->path, LLM_SHARD_SEC_DOC_INFO, "domain id out of range");
	return LLM_OK;
}

int llm_shard_open(llm_shard **out, const char *path, unsigned flags)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return llm_fail(LLM_EIO, "%s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return llm_fail(LLM_EIO, "%s: %s", path, strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return llm_fail(LLM_EIO, "%s: not a regular file", path);
	}
	llm_shard *s = llm_calloc(1, sizeof *s);
	s->path = llm_strdup(path);
	s->size = (size_t)st.st_size;
	if (s->size >= LLM_SHARD_HEADER_SIZE) {
		void *m = mmap(NULL, s->size, PROT_READ, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED) {
			int e = errno;
			close(fd);
			llm_shard_free(s);
			return llm_fail(LLM_EIO, "%s: mmap: %s", path, strerror(e));
		}
		s->map = m;
	}
	close(fd);
	int rc = s->map ? shard_check(s) : bad(path, 0, "file shorter than the header");
	if (rc == LLM_OK && (flags & LLM_SHARD_VERIFY))
		rc = llm_shard_verify(s);
	if (rc != LLM_OK) {
		llm_shard_free(s);
		return rc;
	}
	*out = s;
	return LLM_OK;
}

void llm_shard_free(llm_shard *s)
{
	if (!s)
		return;
	if (s->map)
		munmap((void *)s->map, s->size);
	for (size_t i = 0; i < s->ndomains; i++)
		free(s->domains[i]);
	free(s->domains);
	free(s->path);
	free(s);
}

/* Every token of a section below vocab size. */
static int check_range(const llm_shard *s, int kind)
{
	const unsigned char *p = sec_ptr(s, kind);
	uint64_t n = s->info.sec[kind].length / s->info.width;
	/* the sections are 4 KiB aligned, so width-4 tokens can be read in place */
	uint32_t hi = s->info.width == 2 ? llm_tok_max16(p, n) : llm_tok_max((const uint32_t *)p, n);
	return n && hi >= s->info.vocab_size ? bad(s->path, kind, "token not below the vocab size")
	                                     : LLM_OK;
}

int llm_shard_verify(const llm_shard *s)
{
	for (int k = 1; k <= LLM_SHARD_NSECTIONS; k++)
		if (llm_hash64(sec_ptr(s, k), s->info.sec[k].length, 0) != s->info.sec[k].checksum)
			return bad(s->path, k, "checksum mismatch");
	int st = check_range(s, LLM_SHARD_SEC_TOKENS);
	if (st == LLM_OK)
		st = check_range(s, LLM_SHARD_SEC_INPUTS);
	return st;
}

const llm_shard_info *llm_shard_get_info(const llm_shard *s) { return &s->info; }
const char *llm_shard_path(const llm_shard *s) { return s->path; }

const void *llm_shard_inputs_raw(const llm_shard *s)
{
	return (s->info.flags & LLM_SHARD_NOISED) ? sec_ptr(s, LLM_SHARD_SEC_INPUTS) : NULL;
}

const uint64_t *llm_shard_doc_offsets(const llm_shard *s)
{
	return (const uint64_t *)sec_ptr(s, LLM_SHARD_SEC_DOC_OFFSETS);
}

static void widen(const unsigned char *p, uint32_t width, uint64_t start, size_t n, uint32_t *out)
{
	if (width == 4) {
		memcpy(out, p + 4 * start, n * 4);
		return;
	}
	llm_tok_widen16(p + 2 * start, out, n);
}

uint32_t llm_shard_token(const llm_shard *s, uint64_t i)
{
	const unsigned char *p = sec_ptr(s, LLM_SHARD_SEC_TOKENS);
	return s->info.width == 2 ? get16(p + 2 * i) : get32(p + 4 * i);
}

void llm_shard_read_tokens(const llm_shard *s, uint64_t start, size_t n, uint32_t *out)
{
	widen(sec_ptr(s, LLM_SHARD_SEC_TOKENS), s->info.width, start, n, out);
}

int llm_shard_read_inputs(const llm_shard *s, uint64_t start, size_t n, uint32_t *out)
{
	if (!(s->info.flags & LLM_SHARD_NOISED))
		return 0;
	widen(sec_ptr(s, LLM_SHARD_SEC_INPUTS), s->info.width, start, n, out);
	return 1;
}

void llm_shard_get_doc(const llm_shard *s, uint64_t i, llm_shard_doc *d)
{
	const uint64_t *o = llm_shard_doc_offsets(s);
	const uint64_t *mo = (const uint64_t *)sec_ptr(s, LLM_SHARD_SEC_META_OFFSETS);
	const unsigned char *inf = sec_ptr(s, LLM_SHARD_SEC_DOC_INFO) + 8 * i;
	d->start = o[i];
	d->len = o[i + 1] - o[i];
	d->domain = get16(inf);
	d->flags = get16(inf + 2);
	memcpy(&d->weight, inf + 4, 4);
	d->meta = (const char *)sec_ptr(s, LLM_SHARD_SEC_META) + mo[i];
	d->meta_len = (size_t)(mo[i + 1] - mo[i]);
}

size_t llm_shard_ndomains(const llm_shard *s) { return s->ndomains; }

const char *llm_shard_domain(const llm_shard *s, size_t id)
{
	return id < s->ndomains ? s->domains[id] : "unknown";
}

/* ---- descriptions (llm-shard --info) ---- */

void llm_shard_describe(const llm_shard *s, llm_buf *out)
{
	const llm_shard_info *in = llm_shard_get_info(s);
	llm_buf_addf(out, "%s: shard version %u, %u-byte tokens, vocab %u, tokenizer %016llx, eos ",
	             llm_shard_path(s), in->version, in->width, in->vocab_size,
	             (unsigned long long)in->tokenizer_id);
	if (in->eos_id == LLM_SHARD_NO_EOS)
		llm_buf_adds(out, "none\n");
	else
		llm_buf_addf(out, "%u\n", in->eos_id);
	llm_buf_addf(out, "  documents %llu, tokens %llu, noised inputs %s\n", (unsigned long long)in->docs,
	             (unsigned long long)in->tokens, (in->flags & LLM_SHARD_NOISED) ? "yes" : "no");
	size_t nd = llm_shard_ndomains(s);
	uint64_t *docs = llm_calloc(nd + 1, 8), *toks = llm_calloc(nd + 1, 8), trunc = 0;
	for (uint64_t i = 0; i < in->docs; i++) {
		llm_shard_doc d;
		llm_shard_get_doc(s, i, &d);
		docs[d.domain]++;
		toks[d.domain] += d.len;
		trunc += !!(d.flags & LLM_SHARD_DOC_TRUNCATED);
	}
	for (size_t i = 0; i < nd; i++)
		llm_buf_addf(out, "  domain %s: %llu documents, %llu tokens\n", llm_shard_domain(s, i),
		             (unsigned long long)docs[i], (unsigned long long)toks[i]);
	if (trunc)
		llm_buf_addf(out, "  truncated documents %llu\n", (unsigned long long)trunc);
	for (int k = 1; k <= LLM_SHARD_NSECTIONS; k++)
		llm_buf_addf(out, "  section %-12s offset %10llu length %12llu xxh3 %016llx\n",
		             llm_shard_section_name(k), (unsigned long long)in->sec[k].offset,
		             (unsigned long long)in->sec[k].length, (unsigned long long)in->sec[k].checksum);
	free(docs);
	free(toks);
}

void llm_manifest_describe(const llm_manifest *m, const char *path, llm_buf *out)
{
	llm_buf_addf(out, "%s: %zu shards, vocab %u, %u-byte tokens, tokenizer %016llx, noised inputs %s\n",
	             path, m->nshards, m->vocab_size, m->width, (unsigned long long)m->tokenizer_id,
	             m->noised ? "yes" : "no");
	for (int sp = 0; sp < LLM_NSPLITS; sp++) {
		uint64_t n = 0, d = 0, t = 0;
		for (size_t i = 0; i < m->nshards; i++)
			if (m->shards[i].split == sp) {
				n++;
				d += m->shards[i].docs;
				t += m->shards[i].tokens;
			}
		llm_buf_addf(out, "  %s: %llu shards, %llu documents, %llu tokens\n", llm_split_name(sp),
		             (unsigned long long)n, (unsigned long long)d, (unsigned long long)t);
	}
	for (size_t i = 0; i < m->ndomains; i++) {
		const llm_manifest_domain *d = &m->domains[i];
		llm_buf_addf(out, "  domain %s: train %llu documents %llu tokens, val %llu documents %llu tokens",
		             d->name, (unsigned long long)d->docs[0], (unsigned long long)d->tokens[0],
		             (unsigned long long)d->docs[1], (unsigned long long)d->tokens[1]);
		if (d->truncate_at)
			llm_buf_addf(out, ", cut at %llu tokens: %llu documents, %llu tokens removed",
			             (unsigned long long)d->truncate_at, (unsigned long long)d->truncated_docs,
			             (unsigned long long)d->truncated_tokens);
		llm_buf_addc(out, '\n');
	}
	for (size_t i = 0; i < m->nshards; i++)
		llm_buf_addf(out, "  %s %s: %llu documents, %llu tokens, %llu bytes\n",
		             llm_split_name(m->shards[i].split), m->shards[i].file,
		             (unsigned long long)m->shards[i].docs, (unsigned long long)m->shards[i].tokens,
		             (unsigned long long)m->shards[i].bytes);
}

/* ---- manifest ---- */

void llm_manifest_init(llm_manifest *m)
{
	memset(m, 0, sizeof *m);
	m->eos_id = LLM_SHARD_NO_EOS;
}

void llm_manifest_release(llm_manifest *m)
{
	for (size_t i = 0; i < m->nshards; i++) {
		free(m->shards[i].file);
		free(m->shards[i].path);
	}
	for (size_t i = 0; i < m->ndomains; i++)
		free(m->domains[i].name);
	free(m->shards);
	free(m->domains);
	free(m->extra);
	memset(m, 0, sizeof *m);
}

void llm_manifest_add_shard(llm_manifest *m, const char *file, int split,
                            const llm_shard_info *info, uint64_t bytes)
{
	m->shards = llm_realloc(m->shards, (m->nshards + 1) * sizeof *m->shards);
	llm_manifest_shard *sh = &m->shards[m->nshards++];
	memset(sh, 0, sizeof *sh);
	sh->file = llm_strdup(file);
	sh->path = llm_strdup(file);
	sh->split = split;
	sh->docs = info->docs;
	sh->tokens = info->tokens;
	sh->bytes = bytes;
	sh->info = *info;
}

llm_manifest_domain *llm_manifest_domain_get(llm_manifest *m, const char *name)
{
	for (size_t i = 0; i < m->ndomains; i++)
		if (strcmp(m->domains[i].name, name) == 0)
			return &m->domains[i];
	m->domains = llm_realloc(m->domains, (m->ndomains + 1) * sizeof *m->domains);
	llm_manifest_domain *d = &m->domains[m->ndomains++];
	memset(d, 0, sizeof *d);
	d->name = llm_strdup(name);
	return d;
}

static void put_hex(llm_buf *b, uint64_t x)
{
	llm_buf_addf(b, "\"%016llx\"", (unsigned long long)x);
}

int llm_manifest_write(const llm_manifest *m, const char *path)
{
	llm_buf b = LLM_BUF_INIT;
	llm_buf_adds(&b, "{\n  \"format\": \"llmkit-shards\",\n  \"version\": 1,\n  \"tokenizer_id\": ");
	put_hex(&b, m->tokenizer_id);
	llm_buf_addf(&b, ",\n  \"vocab_size\": %u,\n  \"token_width\": %u,\n  \"eos_id\": ",
	             m->vocab_size, m->width);
	if (m->eos_id == LLM_SHARD_NO_EOS)
		llm_buf_adds(&b, "null");
	else
		llm_buf_addf(&b, "%u", m->eos_id);
	llm_buf_addf(&b, ",\n  \"noised\": %s,\n  \"shards\": [", m->noised ? "true" : "false");
	uint64_t sd[LLM_NSPLITS] = { 0 }, stok[LLM_NSPLITS] = { 0 };
	for (size_t i = 0; i < m->nshards; i++) {
		const llm_manifest_shard *sh = &m->shards[i];
		sd[sh->split] += sh->docs;
		stok[sh->split] += sh->tokens;
		llm_buf_adds(&b, i ? ",\n    {\"file\": " : "\n    {\"file\": ");
		llm_json_put_str(&b, sh->file, strlen(sh->file));
		llm_buf_addf(&b, ", \"split\": \"%s\", \"documents\": %llu, \"tokens\": %llu, "
		             "\"bytes\": %llu, \"header_checksum\": ", llm_split_name(sh->split),
		             (unsigned long long)sh->docs, (unsigned long long)sh->tokens,
		             (unsigned long long)sh->bytes);
		put_hex(&b, sh->info.header_checksum);
		llm_buf_adds(&b, ", \"checksums\": {");
		for (int k = 1; k <= LLM_SHARD_NSECTIONS; k++) {
			llm_buf_addf(&b, "%s\"%s\": ", k > 1 ? ", " : "", llm_shard_section_name(k));
			put_hex(&b, sh->info.sec[k].checksum);
		}
		llm_buf_adds(&b, "}}");
	}
	llm_buf_adds(&b, m->nshards ? "\n  ],\n  \"splits\": {" : "],\n  \"splits\": {");
	for (int sp = 0; sp < LLM_NSPLITS; sp++)
		llm_buf_addf(&b, "%s\"%s\": {\"documents\": %llu, \"tokens\": %llu}", sp ? ", " : "",
		             llm_split_name(sp), (unsigned long long)sd[sp],
		             (unsigned long long)stok[sp]);
	llm_buf_adds(&b, "},\n  \"domains\": {");
	for (size_t i = 0; i < m->ndomains; i++) {
		const llm_manifest_domain *d = &m->domains[i];
		llm_buf_adds(&b, i ? ",\n    " : "\n    ");
		llm_json_put_str(&b, d->name, strlen(d->name));
		llm_buf_addf(&b, ": {\"train_documents\": %llu, \"train_tokens\": %llu, "
		             "\"val_documents\": %llu, \"val_tokens\": %llu, \"truncate_at\": %llu, "
		             "\"truncated_documents\": %llu, \"truncated_tokens\": %llu}",
		             (unsigned long long)d->docs[0], (unsigned long long)d->tokens[0],
		             (unsigned long long)d->docs[1], (unsigned long long)d->tokens[1],
		             (unsigned long long)d->truncate_at, (unsigned long long)d->truncated_docs,
		             (unsigned long long)d->truncated_tokens);
	}
	llm_buf_adds(&b, m->ndomains ? "\n  }" : "}");
	if (m->extra && *m->extra) {
		llm_buf_adds(&b, ",\n  ");
		llm_buf_adds(&b, m->extra);
	}
	llm_buf_adds(&b, "\n}\n");
	int st = llm_write_file(path, b.p, b.len);
	llm_buf_release(&b);
	return st;
}

/* Members of the manifest as typed values; the detail names the manifest and the key. */
static int m_u64(const char *path, const llm_json_val *obj, const char *key, uint64_t *out)
{
	llm_json_val v = llm_json_member(obj, key);
	int64_t x;
	if (v.type != LLM_JSON_NUMBER || llm_json_i64(&v, &x) != LLM_OK || x < 0)
		return llm_fail(LLM_EFORMAT, "%s: '%s' is missing or not a count", path, key);
	*out = (uint64_t)x;
	return LLM_OK;
}

static int m_hex(const char *path, const llm_json_val *obj, const char *key, uint64_t *out)
{
	llm_json_val v = llm_json_member(obj, key);
	llm_buf b = LLM_BUF_INIT;
	int st = LLM_EFORMAT;
	if (v.type == LLM_JSON_STRING && llm_json_str(&v, &b) == LLM_OK && b.len == 16) {
		char *end;
		errno = 0;
		unsigned long long x = strtoull(b.p, &end, 16);
		if (!errno && *end == 0) {
			*out = x;
			st = LLM_OK;
		}
	}
	llm_buf_release(&b);
	return st == LLM_OK ? st : llm_fail(LLM_EFORMAT, "%s: '%s' is missing or not 16 hex digits", path, key);
}

/*
 * A shard's file name must stay inside the manifest's directory: relative, components neither
 * empty, "." nor "..", no NUL. A manifest is data, not a list of files to open anywhere
 * ("/etc/shadow", "../../home/x").
 */
static int inside_name(const char *p, size_t n)
{
	if (!p || n == 0 || memchr(p, 0, n) || p[0] == '/')
		return 0;
	for (size_t i = 0; i <= n;) {
		size_t j = i;
		while (j < n && p[j] != '/')
			j++;
		size_t k = j - i;
		if (k == 0 || (k == 1 && p[i] == '.') || (k == 2 && p[i] == '.' && p[i + 1] == '.'))
			return 0;
		i = j + 1;
	}
	return 1;
}

static int load_shard(llm_manifest *m, const char *path, const char *dir, const llm_json_val *o)
{
	llm_json_val f = llm_json_member(o, "file"), sp = llm_json_member(o, "split");
	llm_json_val cs = llm_json_member(o, "checksums");
	if (f.type != LLM_JSON_STRING || sp.type != LLM_JSON_STRING || cs.type != LLM_JSON_OBJECT)
		return llm_fail(LLM_EFORMAT, "%s: shard %zu lacks 'file', 'split' or 'checksums'", path,
		                m->nshards);
	int split = llm_json_str_eq(&sp, "train") ? LLM_SPLIT_TRAIN
	            : llm_json_str_eq(&sp, "val") ? LLM_SPLIT_VAL : -1;
	if (split < 0)
		return llm_fail(LLM_EFORMAT, "%s: shard %zu: split is not \"train\" or \"val\"", path,
		                m->nshards);
	llm_shard_info info;
	memset(&info, 0, sizeof info);
	uint64_t bytes;
	int st;
	if ((st = m_u64(path, o, "documents", &info.docs)) || (st = m_u64(path, o, "tokens", &info.tokens)) ||
	    (st = m_u64(path, o, "bytes", &bytes)) ||
	    (st = m_hex(path, o, "header_checksum", &info.header_checksum)))
		return st;
	for (int k = 1; k <= LLM_SHARD_NSECTIONS; k++)
		if ((st = m_hex(path, &cs, llm_shard_section_name(k), &info.sec[k].checksum)))
			return st;
	info.version = LLM_SHARD_VERSION;
	info.width = m->width;
	info.vocab_size = m->vocab_size;
	info.eos_id = m->eos_id;
	info.tokenizer_id = m->tokenizer_id;
	info.flags = m->noised ? LLM_SHARD_NOISED : 0;
	llm_buf name = LLM_BUF_INIT;
	llm_json_str(&f, &name);
	if (!inside_name(name.p, name.len)) {
		st = llm_fail(LLM_EFORMAT, "%s: shard %zu: file '%s' is not a name inside the "
		              "manifest's directory", path, m->nshards, name.p ? name.p : "");
		llm_buf_release(&name);
		return st;
	}
	for (size_t i = 0; i < m->nshards; i++)
		if (strcmp(m->shards[i].file, name.p) == 0) {
			st = llm_fail(LLM_EFORMAT, "%s: shard '%s' is listed twice", path, name.p);
			llm_buf_release(&name);
			return st;
		}
	llm_manifest_add_shard(m, name.p, split, &info, bytes);
	free(m->shards[m->nshards - 1].path);
	llm_buf full = LLM_BUF_INIT;
	llm_buf_addf(&full, "%s/%s", dir, name.p);
	m->shards[m->nshards - 1].path = llm_buf_detach(&full, NULL);
	llm_buf_release(&name);
	return LLM_OK;
}

static int load_domains(llm_manifest *m, const char *path, const llm_json_val *o)
{
	size_t it = 0;
	llm_json_val key, v;
	llm_buf name = LLM_BUF_INIT;
	int st = LLM_OK;
	while (st == LLM_OK && llm_json_next(o, &it, &key, &v) == LLM_OK) {
		llm_buf_reset(&name);
		llm_json_str(&key, &name);
		if (v.type != LLM_JSON_OBJECT) {
			st = llm_fail(LLM_EFORMAT, "%s: domain '%s' is not an object", path, name.p);
			break;
		}
		llm_manifest_domain *d = llm_manifest_domain_get(m, name.p ? name.p : "");
		(void)((st = m_u64(path, &v, "train_documents", &d->docs[0])) ||
		       (st = m_u64(path, &v, "train_tokens", &d->tokens[0])) ||
		       (st = m_u64(path, &v, "val_documents", &d->docs[1])) ||
		       (st = m_u64(path, &v, "val_tokens", &d->tokens[1])) ||
		       (st = m_u64(path, &v, "truncate_at", &d->truncate_at)) ||
		       (st = m_u64(path, &v, "truncated_documents", &d->truncated_docs)) ||
		       (st = m_u64(path, &v, "truncated_tokens", &d->truncated_tokens)));
	}
	llm_buf_release(&name);
	return st;
}

/* The split totals are the sums over the shards, and over the domains when the manifest has
 * a breakdown by domain (llm-shard's always do; "domains": {} gives none). */
static int check_totals(const llm_manifest *m, const char *path)
{
	int have_domains = m->ndomains > 0;
	for (int sp = 0; sp < LLM_NSPLITS; sp++) {
		uint64_t d = 0, t = 0, dd = 0, dt = 0;
		for (size_t i = 0; i < m->nshards; i++)
			if (m->shards[i].split == sp) {
				d += m->shards[i].docs;
				t += m->shards[i].tokens;
			}
		for (size_t i = 0; i < m->ndomains; i++) {
			dd += m->domains[i].docs[sp];
			dt += m->domains[i].tokens[sp];
		}
		const char *what = d != m->split_docs[sp] || t != m->split_tokens[sp] ? "its shards"
		                   : have_domains && (dd != d || dt != t) ? "its domains" : NULL;
		if (what)
			return llm_fail(LLM_EFORMAT, "%s: the %s split's documents or tokens are not the "
			                "sum over %s", path, llm_split_name(sp), what);
	}
	return LLM_OK;
}

int llm_manifest_check_shard(const llm_manifest *m, const llm_manifest_shard *ms,
                             const llm_shard *s)
{
	const llm_shard_info *in = llm_shard_get_info(s);
	struct stat st;
	const char *what = NULL;
	if (in->version != LLM_SHARD_VERSION)
		what = "version";
	else if (in->width != m->width)
		what = "token_width";
	else if (in->vocab_size != m->vocab_size)
		what = "vocab_size";
	else if (in->tokenizer_id != m->tokenizer_id)
		what = "tokenizer_id";
	else if (in->eos_id != m->eos_id)
		what = "eos_id";
	else if (!!(in->flags & LLM_SHARD_NOISED) != !!m->noised)
		what = "noised";
	else if (in->docs != ms->docs || in->tokens != ms->tokens)
		what = "document or token count";
	else if (stat(llm_shard_path(s), &st) != 0 || (uint64_t)st.st_size != ms->bytes)
		what = "size in bytes";
	else if (in->header_checksum != ms->info.header_checksum)
		what = "header checksum";
	for (int k = 1; !what && k <= LLM_SHARD_NSECTIONS; k++)
		if (in->sec[k].checksum != ms->info.sec[k].checksum)
			what = llm_shard_section_name(k);
	return what ? llm_fail(LLM_EFORMAT, "%s: differs from its manifest: %s", ms->path, what)
	            : LLM_OK;
}

int llm_manifest_load(llm_manifest *m, const char *path)
{
	llm_manifest_init(m);
	char *text;
	size_t len;
	int st = llm_read_file(path, &text, &len);
	if (st != LLM_OK)
		return st;
	llm_json_val top, v, key;
	size_t pos;
	const char *msg;
	char *dir = llm_tmpfile_dir(path);
	uint64_t x;
	if (llm_json_parse_value(text, len, &top, &pos, &msg) != LLM_OK || top.type != LLM_JSON_OBJECT) {
		st = llm_fail(LLM_EFORMAT, "%s: not a JSON object", path);
		goto out;
	}
	v = llm_json_member(&top, "format");
	if (v.type != LLM_JSON_STRING || !llm_json_str_eq(&v, "llmkit-shards")) {
		st = llm_fail(LLM_EFORMAT, "%s: not an llmkit shard manifest", path);
		goto out;
	}
	if ((st = m_u64(path, &top, "version", &x)))
		goto out;
	if (x != 1) {
		st = llm_fail(LLM_EFORMAT, "%s: manifest version %llu (this llmkit reads version 1)",
		              path, (unsigned long long)x);
		goto out;
	}
	if ((st = m_hex(path, &top, "tokenizer_id", &m->tokenizer_id)) ||
	    (st = m_u64(path, &top, "vocab_size", &x)))
		goto out;
	if (x > UINT32_MAX) {
		st = llm_fail(LLM_EFORMAT, "%s: vocab_size too large", path);
		goto out;
	}
	m->vocab_size = (uint32_t)x;
	if ((st = m_u64(path, &top, "token_width", &x)))
		goto out;
	m->width = (uint32_t)x;
	if (m->vocab_size == 0 || (m->width != 2 && m->width != 4)) {
		st = llm_fail(LLM_EFORMAT, "%s: bad vocab_size or token_width", path);
		goto out;
	}
	v = llm_json_member(&top, "eos_id");
	if (v.type != LLM_JSON_NULL) {
		if ((st = m_u64(path, &top, "eos_id", &x)))
			goto out;
		if (x >= m->vocab_size) {
			st = llm_fail(LLM_EFORMAT, "%s: eos_id is not below vocab_size", path);
			goto out;
		}
		m->eos_id = (uint32_t)x;
	}
	v = llm_json_member(&top, "noised");
	m->noised = v.type == LLM_JSON_TRUE;
	v = llm_json_member(&top, "shards");
	if (v.type != LLM_JSON_ARRAY) {
		st = llm_fail(LLM_EFORMAT, "%s: 'shards' is not an array", path);
		goto out;
	}
	size_t it = 0;
	llm_json_val o;
	while (llm_json_next(&v, &it, &key, &o) == LLM_OK) {
		if (o.type != LLM_JSON_OBJECT) {
			st = llm_fail(LLM_EFORMAT, "%s: shard %zu is not an object", path, m->nshards);
			goto out;
		}
		if ((st = load_shard(m, path, dir, &o)) != LLM_OK)
			goto out;
	}
	v = llm_json_member(&top, "splits");
	for (int sp = 0; sp < LLM_NSPLITS; sp++) {
		llm_json_val o2 = llm_json_member(&v, llm_split_name(sp));
		if (v.type != LLM_JSON_OBJECT || o2.type != LLM_JSON_OBJECT) {
			st = llm_fail(LLM_EFORMAT, "%s: 'splits' lacks \"%s\"", path, llm_split_name(sp));
			goto out;
		}
		if ((st = m_u64(path, &o2, "documents", &m->split_docs[sp])) ||
		    (st = m_u64(path, &o2, "tokens", &m->split_tokens[sp])))
			goto out;
	}
	v = llm_json_member(&top, "domains");
	if (v.type == LLM_JSON_OBJECT && (st = load_domains(m, path, &v)) != LLM_OK)
		goto out;
	st = check_totals(m, path);
out:
	free(dir);
	free(text);
	if (st != LLM_OK)
		llm_manifest_release(m);
	return st;
}
