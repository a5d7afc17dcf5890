/*
 * io.h — streaming input and output for every tool.
 *
 * Reader: a file or stdin ("-" or NULL), compression (zstd, gzip, xz, bzip2) detected from the
 * first bytes and decoded by codec.h with every checksum of the format checked; concatenated
 * frames, members and streams read as one stream. Lines are returned without their "\n" and without a "\r" before it, so CRLF and
 * LF files read the same; a last line without a newline is still a line. Memory: one 1 MiB
 * input buffer plus the longest line seen, capped by llm_reader_set_max_line (default 64 MiB).
 * A longer line is not returned in full: llm_reader_line reads past it and gives LLM_ETOOLONG
 * with its first min(length, LLM_READER_HEAD) bytes and its total length; the next call
 * continues with the following line.
 *
 * Writer: stdout ("-" or NULL) or a file. A path that exists and is not a regular file (a
 * device such as /dev/full, a FIFO) is written directly. A regular file is written to a
 * temporary file beside it (tmpfile.h) and published under NAME by llm_writer_close only when
 * everything was written, flushed and fsynced, so a killed tool never leaves a half-written
 * file under the final name; with deferred publishing (every tool but llm-train) not before
 * the program ends with status 0, so a failed run keeps the previous file. A name ending in ".zst", ".gz", ".xz" or ".bz2" is compressed in that format. Every write is checked; a write error (e.g.
 * /dev/full) is reported by the write or close call that sees it. A closed pipe raises SIGPIPE
 * as with any write(2) (programs keep its default action and die silently, like cat).
 *
 * Neither object is thread safe; use one per thread.
 */
#ifndef LLM_IO_H
#define LLM_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"

typedef struct llm_reader llm_reader;

/* Bytes of an over-long line kept for messages and rejects. */
#define LLM_READER_HEAD 1024

/* Open path ("-"/NULL = stdin). On failure *r is NULL and llm_last_error() names the file. */
int llm_reader_open(llm_reader **r, const char *path);
/* Read from an already open descriptor (not closed by free); name is used in messages. */
int llm_reader_open_fd(llm_reader **r, int fd, const char *name);
/* Read from memory (not copied: data must outlive the reader); compression detected as usual. */
int llm_reader_open_mem(llm_reader **r, const void *data, size_t n, const char *name);
void llm_reader_free(llm_reader *r);

void llm_reader_set_max_line(llm_reader *r, size_t max);

/*
 * Next line. LLM_OK: *line and *len hold it (valid until the next call; the byte after it is a
 * writable NUL). LLM_EOF: no more lines. LLM_ETOOLONG: *line holds the line's first
 * min(*len, LLM_READER_HEAD) bytes, NUL-terminated, and *len its full length.
 * LLM_EIO / LLM_EFORMAT: read error, or a corrupt or truncated compressed stream (detail set).
 */
int llm_reader_line(llm_reader *r, char **line, size_t *len);

/* Look at the next n bytes without consuming them; *len may be less at the end of input.
 * *p is valid until the next read call. */
int llm_reader_peek(llm_reader *r, size_t n, const char **p, size_t *len);

/* Binary reading. read returns bytes read (0 at end) or a negative status. read_exact returns
 * LLM_OK, LLM_EOF when no byte was left, or LLM_EFORMAT when the stream ends inside the n bytes. */
ssize_t llm_reader_read(llm_reader *r, void *buf, size_t n);
int llm_reader_read_exact(llm_reader *r, void *buf, size_t n);

const char *llm_reader_name(const llm_reader *r);       /* path, or "<stdin>" */
int llm_reader_line_had_cr(const llm_reader *r);        /* the last line ended in CR LF */
uint64_t llm_reader_lineno(const llm_reader *r);        /* 1-based number of the last line */
uint64_t llm_reader_offset(const llm_reader *r);        /* decompressed offset of that line */
uint64_t llm_reader_tell(const llm_reader *r);          /* decompressed bytes consumed so far */
uint64_t llm_reader_raw_bytes(const llm_reader *r);     /* bytes consumed from the file */
int64_t llm_reader_size(const llm_reader *r);           /* file size on disk, or -1 */
const char *llm_reader_compression(const llm_reader *r); /* "none", "zstd", "gzip", "xz", "bzip2" */

/* Read a whole (possibly compressed) file into memory; for small files (configs, vocabularies). */
int llm_read_file(const char *path, char **data, size_t *len);

typedef struct llm_writer llm_writer;

int llm_writer_open(llm_writer **w, const char *path);
int llm_writer_write(llm_writer *w, const void *data, size_t n);
/* Flush, finish compression, then publish (files, tmpfile.h) or flush (stdout). Frees w. */
int llm_writer_close(llm_writer *w);
/* Discard: remove the temporary file. Frees w. */
void llm_writer_abort(llm_writer *w);

/* Write data to path atomically (a writer: temporary file, fsync, publish). */
int llm_write_file(const char *path, const void *data, size_t n);

/*
 * Early writeback for a file that will be fsynced when complete: call after each write with the
 * bytes written so far (pos). Each 8 MiB written is handed to the disk at once, and the writer
 * waits for what lies more than 64 MiB behind, so the final fsync finds little left and one
 * file's dirty pages stay bounded. Best effort (errors surface at the fsync); Linux only,
 * elsewhere the fsync does all of it.
 */
typedef struct {
	uint64_t queued; /* writeback started for [0, queued) */
	uint64_t waited; /* [0, waited) was on disk when we last waited */
} llm_writeback;
void llm_writeback_step(llm_writeback *wb, int fd, uint64_t pos);

/* pread/pwrite of exactly n bytes at off, retried on EINTR and short transfers; LLM_EIO
 * naming what (e.g. "temporary sort file") with the system's reason, or "short" at the end
 * of the file. */
int llm_pread_all(int fd, void *p, size_t n, uint64_t off, const char *what);
int llm_pwrite_all(int fd, const void *p, size_t n, uint64_t off, const char *what);

/* An anonymous temporary file in dir (NULL or "": $TMPDIR, else /tmp): O_TMPFILE, or
 * mkstemp's and unlinked at once, so that nothing is left behind; the descriptor, or LLM_EIO
 * naming the directory. */
int llm_tmpfd(const char *dir);

#endif
