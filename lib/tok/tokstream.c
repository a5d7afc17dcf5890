/* tokstream.c — token stream reader and writer (see tokstream.h). */
#include "tokstream.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/err.h"
#include "core/io.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "llmkit's binary formats are read by memcpy: a little-endian host is required"
#endif

static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* The block of 16 is what GCC's -O2 cost model needs to vectorize (a fixed trip count).
 * Baseline x86-64 (SSE2) has no unsigned 32-bit max or zero-extending loads, so on x86-64
 * an AVX2 clone is picked at load time where the CPU has it: it halves the CPU time of
 * llm-shard (perf: these loops were a third of it). */
#define BLK 16
/* (clang would need the attribute on every declaration, in every caller's unit) */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define VECTOR_CLONES
#endif

VECTOR_CLONES
uint32_t llm_tok_widen16(const void *src, uint32_t *dst, size_t n)
{
	const unsigned char *p = src;
	uint32_t hi = 0;
	size_t i = 0;
	for (; i + BLK <= n; i += BLK) {
		uint16_t b[BLK];
		memcpy(b, p + 2 * i, sizeof b);
		for (int k = 0; k < BLK; k++) {
			dst[i + k] = b[k];
			hi = b[k] > hi ? b[k] : hi;
		}
	}
	for (; i < n; i++) {
		uint16_t v;
		memcpy(&v, p + 2 * i, 2);
		dst[i] = v;
		hi = v > hi ? v : hi;
	}
	return hi;
}

VECTOR_CLONES
void llm_tok_narrow16(const uint32_t *src, void *dst, size_t n)
{
	unsigned char *p = dst;
	size_t i = 0;
	for (; i + BLK <= n; i += BLK) {
		uint16_t b[BLK];
		for (int k = 0; k < BLK; k++)
			b[k] = (uint16_t)src[i + k];
		memcpy(p + 2 * i, b, sizeof b);
	}
	for (; i < n; i++) {
		uint16_t v = (uint16_t)src[i];
		memcpy(p + 2 * i, &v, 2);
	}
}

VECTOR_CLONES
uint32_t llm_tok_max(const uint32_t *t, size_t n)
{
	typedef uint32_t v8 __attribute__((vector_size(32))); /* see llm_tok_max16 */
	v8 acc = { 0 };
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		v8 b;
		memcpy(&b, t + i, sizeof b);
		v8 m = (v8)(b > acc);
		acc = (b & m) | (acc & ~m);
	}
	uint32_t hi = 0;
	for (int k = 0; k < 8; k++)
		hi = acc[k] > hi ? acc[k] : hi;
	for (; i < n; i++)
		hi = t[i] > hi ? t[i] : hi;
	return hi;
}

VECTOR_CLONES
uint32_t llm_tok_max16(const void *src, size_t n)
{
	/* Vector extensions keep the running maxima in registers: with an array accumulator
	 * GCC spilled it to the stack on every block (perf: 70% of the time on that store). */
	typedef uint16_t v16 __attribute__((vector_size(32)));
	const unsigned char *p = src;
	v16 acc = { 0 };
	size_t i = 0;
	for (; i + 16 <= n; i += 16) {
		v16 b;
		memcpy(&b, p + 2 * i, sizeof b);
		v16 m = (v16)(b > acc);
		acc = (b & m) | (acc & ~m);
	}
	uint32_t hi = 0;
	for (int k = 0; k < 16; k++)
		hi = acc[k] > hi ? acc[k] : hi;
	for (; i < n; i++) {
		uint16_t v;
		memcpy(&v, p + 2 * i, 2);
		hi = v > hi ? v : hi;
	}
	return hi;
}

void llm_tok_header_init(llm_tok_header *h, uint32_t vocab_size, uint64_t tokenizer_id,
                         uint32_t flags)
{
	h->version = LLM_TOK_VERSION;
	h->width = vocab_size <= 65536 ? 2 : 4;
	h->vocab_size = vocab_size;
	h->flags = flags;
	h->tokenizer_id = tokenizer_id;
}

void llm_tok_header_encode(const llm_tok_header *h, unsigned char out[LLM_TOK_HEADER_SIZE])
{
	memcpy(out, LLM_TOK_MAGIC, 8);
	put32(out + 8, h->version);
	put32(out + 12, h->width);
	put32(out + 16, h->vocab_size);
	put32(out + 20, h->flags);
	put64(out + 24, h->tokenizer_id);
}

int llm_tok_header_check(const llm_tok_header *h)
{
	if (h->version != LLM_TOK_VERSION)
		return llm_fail(LLM_EINVAL, "unsupported token stream version %u", h->version);
	if (h->width != 2 && h->width != 4)
		return llm_fail(LLM_EINVAL, "token width %u is not 2 or 4", h->width);
	if (h->vocab_size == 0)
		return llm_fail(LLM_EINVAL, "vocab size is 0");
	if (h->width == 2 && h->vocab_size > 65536)
		return llm_fail(LLM_EINVAL, "vocab size %u does not fit 2-byte tokens", h->vocab_size);
	if (h->flags & ~LLM_TOK_KNOWN_FLAGS)
		return llm_fail(LLM_EINVAL, "unknown flags 0x%x", h->flags & ~LLM_TOK_KNOWN_FLAGS);
	return LLM_OK;
}

int llm_tok_header_decode(const unsigned char in[LLM_TOK_HEADER_SIZE], llm_tok_header *h)
{
	if (memcmp(in, LLM_TOK_MAGIC, 8) != 0)
		return llm_fail(LLM_EFORMAT, "not a token stream (no LLMTOK01 magic)");
	h->version = get32(in + 8);
	h->width = get32(in + 12);
	h->vocab_size = get32(in + 16);
	h->flags = get32(in + 20);
	h->tokenizer_id = get64(in + 24);
	if (llm_tok_header_check(h) != LLM_OK)
		return llm_fail(LLM_EFORMAT, "bad token stream header: %s", llm_last_error());
	return LLM_OK;
}

/* Narrow n tokens to the stream width after checking them against the vocabulary. */
static int put_tokens(llm_buf *out, const llm_tok_header *h, const uint32_t *t, size_t n)
{
	if (n && llm_tok_max(t, n) >= h->vocab_size)
		for (size_t i = 0; i < n; i++)
			if (t[i] >= h->vocab_size)
				return llm_fail(LLM_EINVAL, "token %u at position %zu is not below vocab size %u",
				                t[i], i, h->vocab_size);
	llm_buf_grow(out, n * h->width);
	unsigned char *p = (unsigned char *)out->p + out->len;
	if (h->width == 4)
		memcpy(p, t, n * 4);
	else
		llm_tok_narrow16(t, p, n);
	out->len += n * h->width;
	out->p[out->len] = 0;
	return LLM_OK;
}

int llm_tok_record_encode(llm_buf *out, const llm_tok_header *h, const char *meta,
                          size_t meta_len, const uint32_t *tokens, const uint32_t *inputs,
                          size_t n)
{
	if (n > LLM_TOK_MAX_TOKENS || n > UINT32_MAX)
		return llm_fail(LLM_EINVAL, "record of %zu tokens is over the limit", n);
	if (meta_len > LLM_TOK_MAX_META)
		return llm_fail(LLM_EINVAL, "metadata of %zu bytes is over the limit", meta_len);
	if ((h->flags & LLM_TOK_NOISED) && !inputs && n)
		return llm_fail(LLM_EINVAL, "noised stream record without inputs");
	size_t start = out->len;
	unsigned char pre[8];
	put32(pre, (uint32_t)n);
	put32(pre + 4, (uint32_t)meta_len);
	llm_buf_add(out, pre, 8);
	llm_buf_add(out, meta, meta_len);
	int st = put_tokens(out, h, tokens, n);
	if (st == LLM_OK && (h->flags & LLM_TOK_NOISED))
		st = put_tokens(out, h, inputs, n);
	if (st != LLM_OK)
		llm_buf_truncate(out, start);
	return st;
}

struct llm_tokreader {
	llm_reader *rd;            /* file/stdin source, or NULL for memory */
	const unsigned char *mem;
	size_t mem_len, mem_pos;
	char *name;
	llm_tok_header h;
	uint64_t index, offset;    /* next record number, its byte offset */
	size_t max_tokens;
	int failed;                /* sticky error status after corruption */
	llm_buf meta;
	unsigned char *raw;        /* the record's tokens as stored: labels, then inputs */
	size_t raw_cap;
	int widen;                 /* fill tokens/inputs as uint32_t (width 2) */
	int mapped;                /* mem is our mapping of the file */
	size_t dropped;            /* mapped bytes before this were given back */
	uint32_t *tok;             /* labels then inputs */
	size_t tok_cap;
};

/* LLM_OK, LLM_EOF (nothing left), LLM_EFORMAT (ended inside), or a read error. */
static int src_read(llm_tokreader *r, void *buf, size_t n)
{
	if (n == 0)
		return LLM_OK;
	if (!r->rd) {
		if (r->mem_pos == r->mem_len)
			return LLM_EOF;
		if (r->mem_len - r->mem_pos < n)
			return llm_fail(LLM_EFORMAT, "unexpected end of data");
		memcpy(buf, r->mem + r->mem_pos, n);
		r->mem_pos += n;
		return LLM_OK;
	}
	/* A damaged compressed stream keeps the reader's detail ("corrupt gzip stream: ..."). */
	ssize_t k = llm_reader_read(r->rd, buf, n);
	if (k < 0)
		return (int)k;
	if (k == 0)
		return LLM_EOF;
	if ((size_t)k < n)
		return llm_fail(LLM_EFORMAT, "unexpected end of data");
	return LLM_OK;
}

static llm_tokreader *reader_new(const char *name)
{
	llm_tokreader *r = llm_calloc(1, sizeof *r);
	r->name = llm_strdup(name);
	r->max_tokens = LLM_TOK_MAX_TOKENS;
	r->widen = 1;
	llm_buf_init(&r->meta);
	return r;
}

static int read_header(llm_tokreader *r)
{
	unsigned char hb[LLM_TOK_HEADER_SIZE];
	int st = src_read(r, hb, sizeof hb);
	if (st == LLM_EOF || st == LLM_EFORMAT)
		return llm_fail(LLM_EFORMAT, "%s: empty or truncated token stream header", r->name);
	if (st != LLM_OK)
		return st;
	if (llm_tok_header_decode(hb, &r->h) != LLM_OK)
		return llm_fail(LLM_EFORMAT, "%s: %s", r->name, llm_last_error());
	r->offset = LLM_TOK_HEADER_SIZE;
	return LLM_OK;
}

/*
 * An uncompressed stream in a regular file is mapped rather than read: records are then
 * checked and copied straight from the page cache, which saves read(2)'s copy and the
 * buffer-to-record copy (a third of llm-shard's CPU time on a 1 GiB stream). Anything else
 * (pipes, compressed files) goes through io.h's reader. Returns 1 when mapped.
 */
static int try_map(llm_tokreader **out, const char *path)
{
	if (!path || strcmp(path, "-") == 0)
		return 0;
	/* Only a regular file is opened here: opening and closing a FIFO would leave its writer
	 * without a reader for a moment, and a write then kills it by SIGPIPE. */
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char magic[8];
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < LLM_TOK_HEADER_SIZE ||
	    pread(fd, magic, 8, 0) != 8 || memcmp(magic, LLM_TOK_MAGIC, 8) != 0) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return 0;
	madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
	llm_tokreader *r = reader_new(path);
	r->mem = m;
	r->mem_len = (size_t)st.st_size;
	r->mapped = 1;
	if (read_header(r) != LLM_OK) { /* a valid magic with a bad header: report it */
		llm_tokreader_free(r);
		return -1;
	}
	*out = r;
	return 1;
}

int llm_tokreader_open(llm_tokreader **out, const char *path)
{
	*out = NULL;
	int mapped = try_map(out, path);
	if (mapped)
		return mapped > 0 ? LLM_OK : LLM_EFORMAT;
	llm_reader *rd;
	int st = llm_reader_open(&rd, path);
	if (st != LLM_OK)
		return st;
	llm_tokreader *r = reader_new(llm_reader_name(rd));
	r->rd = rd;
	if ((st = read_header(r)) != LLM_OK) {
		llm_tokreader_free(r);
		return st;
	}
	*out = r;
	return LLM_OK;
}

int llm_tokreader_open_mem(llm_tokreader **out, const void *data, size_t len, const char *name)
{
	*out = NULL;
	llm_tokreader *r = reader_new(name ? name : "<memory>");
	r->mem = data;
	r->mem_len = len;
	int st = read_header(r);
	if (st != LLM_OK) {
		llm_tokreader_free(r);
		return st;
	}
	*out = r;
	return LLM_OK;
}

void llm_tokreader_free(llm_tokreader *r)
{
	if (!r)
		return;
	llm_reader_free(r->rd);
	if (r->mapped)
		munmap((void *)r->mem, r->mem_len);
	llm_buf_release(&r->meta);
	free(r->raw);
	free(r->tok);
	free(r->name);
	free(r);
}

const llm_tok_header *llm_tokreader_header(const llm_tokreader *r) { return &r->h; }
const char *llm_tokreader_name(const llm_tokreader *r) { return r->name; }
void llm_tokreader_set_max_tokens(llm_tokreader *r, size_t max) { r->max_tokens = max; }
void llm_tokreader_set_widen(llm_tokreader *r, int on) { r->widen = on; }

uint64_t llm_tokreader_raw_bytes(const llm_tokreader *r)
{
	return r->rd ? llm_reader_raw_bytes(r->rd) : r->mem_pos;
}

int64_t llm_tokreader_size(const llm_tokreader *r)
{
	return r->rd ? llm_reader_size(r->rd) : r->mapped ? (int64_t)r->mem_len : -1;
}

/* Mapped pages already read are given back every 8 MiB, so the resident size stays bounded
 * (a mapping's pages count against the process until unmapped or dropped). */
#define DROP_EVERY ((size_t)8 << 20)

/* Give back the mapped pages read so far, every DROP_EVERY bytes. */
static void drop_read_pages(llm_tokreader *r)
{
	if (r->mapped && r->mem_pos - r->dropped >= DROP_EVERY) {
		size_t page = (size_t)sysconf(_SC_PAGESIZE), end = r->mem_pos / page * page;
		madvise((void *)(r->mem + r->dropped), end - r->dropped, MADV_DONTNEED);
		r->dropped = end;
	}
}

/* src_read of n bytes inside a record, where the end of data is an error. */
static int read_body(llm_tokreader *r, void *p, size_t n, const char **what)
{
	int st = src_read(r, p, n);
	if (st == LLM_EOF)
		st = llm_fail(LLM_EFORMAT, "unexpected end of data");
	if (st != LLM_OK)
		*what = llm_last_error();
	return st;
}

/* The record's token count n and metadata length m, checked against the limits; LLM_EOF at
 * the end of the stream. */
static int read_prefix(llm_tokreader *r, size_t *n, size_t *m, const char **what)
{
	unsigned char pre[8];
	int st = src_read(r, pre, 8);
	if (st == LLM_EOF)
		return LLM_EOF;
	if (st != LLM_OK) {
		*what = llm_last_error();
		return st;
	}
	*n = get32(pre), *m = get32(pre + 4);
	if (*n > r->max_tokens) {
		*what = "token count over the limit";
		return LLM_EFORMAT;
	}
	if (*m > LLM_TOK_MAX_META) {
		*what = "metadata length over the limit";
		return LLM_EFORMAT;
	}
	return LLM_OK;
}

static int read_meta(llm_tokreader *r, size_t m, const char **what)
{
	llm_buf_reset(&r->meta);
	llm_buf_grow(&r->meta, m);
	int st = m ? read_body(r, r->meta.p, m, what) : LLM_OK;
	if (st != LLM_OK)
		return st;
	r->meta.len = m;
	r->meta.p[m] = 0;
	return LLM_OK;
}

/*
 * The nt tokens of width w, read in one piece as stored, into *raw. In memory, 2-byte
 * tokens are used in place (their readers need no alignment); 4-byte ones are copied so
 * that they can be handed out as uint32_t.
 */
static int read_tokens(llm_tokreader *r, size_t nt, size_t w, const unsigned char **raw,
                       const char **what)
{
	if (!r->rd && w == 2) {
		if (r->mem_len - r->mem_pos < nt * w) {
			int st = llm_fail(LLM_EFORMAT, "unexpected end of data");
			*what = llm_last_error();
			return st;
		}
		*raw = r->mem + r->mem_pos;
		r->mem_pos += nt * w;
		return LLM_OK;
	}
	if (r->raw_cap < nt * w || !r->raw) {
		free(r->raw);
		r->raw_cap = nt * w > 0 ? nt * w : 4;
		r->raw = llm_malloc(r->raw_cap); /* malloc alignment suits uint32_t */
	}
	*raw = r->raw;
	return read_body(r, r->raw, nt * w, what);
}

/* The tokens as uint32_t (*tok; NULL when 2-byte tokens are not widened); returns the
 * largest. */
static uint32_t token_view(llm_tokreader *r, const unsigned char *raw, size_t nt, size_t w,
                           const uint32_t **tok)
{
	if (w == 4) {
		*tok = (const uint32_t *)raw;
		return llm_tok_max(*tok, nt);
	}
	if (!r->widen) {
		*tok = NULL;
		return llm_tok_max16(raw, nt);
	}
	if (r->tok_cap < nt || !r->tok) {
		free(r->tok);
		r->tok_cap = nt ? nt : 1;
		r->tok = llm_malloc(r->tok_cap * sizeof *r->tok);
	}
	*tok = r->tok;
	return llm_tok_widen16(raw, r->tok, nt);
}

/* A bad record: the error, named by file, record and byte, and sticky because a stream
 * cannot be resynchronised after it. what: the reason, NULL for the detail set. */
static int bad_record(llm_tokreader *r, int st, const char *what)
{
	/* The detail may live in the buffer llm_fail is about to overwrite: copy it first. */
	char why[256];
	snprintf(why, sizeof why, "%s", st == LLM_EIO || !what ? llm_last_error() : what);
	r->failed = llm_fail(st, "%s: record %llu at byte %llu: %s", r->name,
	                     (unsigned long long)r->index, (unsigned long long)r->offset, why);
	return r->failed;
}

int llm_tokreader_next(llm_tokreader *r, llm_tok_rec *rec)
{
	if (r->failed)
		return r->failed;
	drop_read_pages(r);
	const char *what = NULL;
	size_t n, m;
	int st = read_prefix(r, &n, &m, &what);
	if (st == LLM_EOF)
		return LLM_EOF;
	if (st == LLM_OK)
		st = read_meta(r, m, &what);
	/* Labels and inputs are read in one piece, as stored, then checked and widened. */
	size_t seqs = (r->h.flags & LLM_TOK_NOISED) ? 2 : 1, w = r->h.width, nt = n * seqs;
	const unsigned char *raw = NULL;
	if (st == LLM_OK)
		st = read_tokens(r, nt, w, &raw, &what);
	if (st != LLM_OK)
		return bad_record(r, st, what);
	const uint32_t *tok;
	uint32_t hi = token_view(r, raw, nt, w, &tok);
	if (nt && hi >= r->h.vocab_size)
		return bad_record(r, LLM_EFORMAT, "token not below the vocab size");
	rec->meta = r->meta.p;
	rec->meta_len = m;
	rec->tokens = tok;
	rec->inputs = seqs == 2 && tok ? tok + n : NULL;
	rec->raw_tokens = raw;
	rec->raw_inputs = seqs == 2 ? raw + n * w : NULL;
	rec->n = n;
	rec->index = r->index++;
	rec->offset = r->offset;
	r->offset += 8 + m + n * seqs * r->h.width;
	return LLM_OK;
}

struct llm_tokwriter {
	llm_writer *w;
	llm_tok_header h;
	llm_buf buf;
	uint64_t records;
};

/* Records are gathered to this size before each write, so small records cost one copy. */
#define TOKWRITER_FLUSH (1u << 20)

int llm_tokwriter_open(llm_tokwriter **out, const char *path, const llm_tok_header *h)
{
	*out = NULL;
	int st = llm_tok_header_check(h);
	if (st != LLM_OK)
		return st;
	llm_writer *w;
	if ((st = llm_writer_open(&w, path)) != LLM_OK)
		return st;
	llm_tokwriter *tw = llm_calloc(1, sizeof *tw);
	tw->w = w;
	tw->h = *h;
	llm_buf_init(&tw->buf);
	unsigned char hb[LLM_TOK_HEADER_SIZE];
	llm_tok_header_encode(h, hb);
	llm_buf_add(&tw->buf, hb, sizeof hb);
	*out = tw;
	return LLM_OK;
}

static int tokwriter_flush(llm_tokwriter *tw)
{
	int st = tw->buf.len ? llm_writer_write(tw->w, tw->buf.p, tw->buf.len) : LLM_OK;
	llm_buf_reset(&tw->buf);
	return st;
}

int llm_tokwriter_write(llm_tokwriter *tw, const char *meta, size_t meta_len,
                        const uint32_t *tokens, const uint32_t *inputs, size_t n)
{
	int st = llm_tok_record_encode(&tw->buf, &tw->h, meta, meta_len, tokens, inputs, n);
	if (st != LLM_OK)
		return st;
	tw->records++;
	return tw->buf.len >= TOKWRITER_FLUSH ? tokwriter_flush(tw) : LLM_OK;
}

int llm_tokwriter_write_raw(llm_tokwriter *tw, const char *meta, size_t meta_len,
                            const void *raw_tokens, const void *raw_inputs, size_t n)
{
	const llm_tok_header *h = &tw->h;
	int noised = !!(h->flags & LLM_TOK_NOISED);
	if (n > LLM_TOK_MAX_TOKENS || n > UINT32_MAX)
		return llm_fail(LLM_EINVAL, "record of %zu tokens is over the limit", n);
	if (meta_len > LLM_TOK_MAX_META)
		return llm_fail(LLM_EINVAL, "metadata of %zu bytes is over the limit", meta_len);
	if (noised && !raw_inputs && n)
		return llm_fail(LLM_EINVAL, "noised stream record without inputs");
	for (int k = 0; k <= noised && n; k++) {
		const void *t = k ? raw_inputs : raw_tokens;
		if ((h->width == 2 ? llm_tok_max16(t, n) : llm_tok_max(t, n)) >= h->vocab_size)
			return llm_fail(LLM_EINVAL, "a token is not below vocab size %u", h->vocab_size);
	}
	unsigned char pre[8];
	put32(pre, (uint32_t)n);
	put32(pre + 4, (uint32_t)meta_len);
	llm_buf_add(&tw->buf, pre, 8);
	llm_buf_add(&tw->buf, meta, meta_len);
	llm_buf_add(&tw->buf, raw_tokens, n * h->width);
	if (noised)
		llm_buf_add(&tw->buf, raw_inputs, n * h->width);
	tw->records++;
	return tw->buf.len >= TOKWRITER_FLUSH ? tokwriter_flush(tw) : LLM_OK;
}

int llm_tokwriter_close(llm_tokwriter *tw)
{
	int st = tokwriter_flush(tw);
	if (st == LLM_OK)
		st = llm_writer_close(tw->w);
	else
		llm_writer_abort(tw->w);
	llm_buf_release(&tw->buf);
	free(tw);
	return st;
}

const llm_tok_header *llm_tokwriter_header(const llm_tokwriter *tw) { return &tw->h; }
uint64_t llm_tokwriter_records(const llm_tokwriter *tw) { return tw->records; }
