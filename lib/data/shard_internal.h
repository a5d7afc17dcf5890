/*
 * shard_internal.h — what the files of the shard module share (shard.c the reader,
 * shard_writer.c, shard_io.c, export.c): the header's layout, little-endian field access, and
 * the buffered, hashed output file that shards and exports are written through. Not part of
 * the library's interface: only those files include it.
 */
#ifndef LLM_SHARD_INTERNAL_H
#define LLM_SHARD_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/hash.h"
#include "core/io.h"
#include "core/tmpfile.h"
#include "shard.h"

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

static inline void put16(unsigned char *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
static inline uint16_t get16(const unsigned char *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t get32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t get64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static inline uint64_t align_up(uint64_t x)
{
	return (x + LLM_SHARD_ALIGN - 1) & ~(uint64_t)(LLM_SHARD_ALIGN - 1);
}

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

/* The buffer's bytes go out through write(2) when full or flushed; name is for messages. */
int llm_shard_obuf_flush(obuf *o, const char *name);
int llm_shard_obuf_put(obuf *o, const void *p, size_t n, const char *name);
/* n tokens at the given width (2: little-endian u16, 4: u32). */
int llm_shard_obuf_put_tokens(obuf *o, const uint32_t *t, size_t n, uint32_t width, const char *name);
/* The file offset of the next byte put. */
uint64_t llm_shard_obuf_tell(const obuf *o);
void llm_shard_obuf_init(obuf *o, int fd, size_t cap);
/* Close the descriptor (unless it is -1) and free the buffer and the hasher. */
void llm_shard_obuf_release(obuf *o);

/* A temporary file (core/tmpfile.h) of final name path, buffered by WBUF_SIZE, durable. */
int llm_shard_afile_open(afile *f, const char *path);
/* Give the finished temporary file its final name (after flushing and fsyncing it). */
int llm_shard_afile_publish(afile *f, unsigned flags);
/* Release; the temporary file disappears unless published. */
void llm_shard_afile_release(afile *f);

#endif
