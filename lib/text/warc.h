/*
 * warc.h — WARC 1.0/1.1 records (ISO 28500) from a reader, and the HTTP messages inside them.
 *
 * libarchive's WARC reader returns only some record types, drops conversion (WET) records and
 * rejects some valid files, so records are parsed here; decompression (per-record gzip members,
 * zstd) is the reader's job (io.h). Memory: one record block, up to max_block bytes; a larger
 * block is skipped (LLM_ETOOLONG) and the stream stays in sync through Content-Length.
 * Files with bare LF line ends (hand-written or converted WET files, whose Content-Length
 * usually counts CR LF) are read leniently: a block runs to the next "WARC/1.x" line.
 */
#ifndef LLM_WARC_H
#define LLM_WARC_H

#include <stdint.h>

#include "core/buf.h"
#include "core/io.h"

typedef struct {
	llm_buf type;         /* WARC-Type: response, request, conversion, resource, metadata, ... */
	llm_buf target_uri;   /* WARC-Target-URI */
	llm_buf date;         /* WARC-Date (ISO 8601) */
	llm_buf record_id;    /* WARC-Record-ID */
	llm_buf content_type; /* Content-Type of the block */
	uint64_t content_length;
	uint64_t offset;      /* decompressed offset of the record's version line */
	uint64_t lineno;      /* line of the version line, for messages */
	llm_buf block;        /* the block (empty when skipped for size) */
	/* lenient mode already read the next record's version line: */
	int pending_version;
	uint64_t pending_offset, pending_lineno;
} llm_warc_record;

void llm_warc_record_init(llm_warc_record *rec);
void llm_warc_record_release(llm_warc_record *rec);

/* Next record. LLM_OK, LLM_EOF, LLM_ETOOLONG (headers valid, block skipped), LLM_EFORMAT
 * (not a WARC record: detail names file and line), or a read error. */
int llm_warc_next(llm_reader *r, llm_warc_record *rec, uint64_t max_block);

/*
 * Split an HTTP response (status line, headers, blank line, body) held in block.
 * Returns LLM_EFORMAT when there is no status line or header end. *status is the code,
 * content_type (may be NULL) receives the Content-Type header value, body the payload
 * (de-chunked when Transfer-Encoding is chunked).
 */
int llm_http_response(const char *block, size_t n, int *status, llm_buf *content_type,
                      llm_buf *body);

#endif
