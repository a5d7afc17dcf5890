/*
 * warc.h — web archive records from a reader: WARC 1.0/1.1 (ISO 28500) and the older ARC
 * format (Internet Archive ARC v1 and v2). The HTTP messages inside them: http.h.
 *
 * libarchive's WARC reader returns only some record types, drops conversion (WET) records and
 * rejects some valid files, so records are parsed here; decompression of the file (per-record
 * gzip members, zstd) is the reader's job (io.h). Memory: one record block, up to max_block
 * bytes; a larger block is skipped (LLM_ETOOLONG) and the stream stays in sync through
 * Content-Length (ARC: the header line's length).
 * Files with bare LF line ends (hand-written or converted WET files, whose Content-Length
 * usually counts CR LF) are read leniently: a block runs to the next "WARC/1.x" line.
 * WARC 1.0 writers such as wget put the target URI in angle brackets ("<https://...>"), as the
 * 1.0 grammar had it; the brackets are removed, so target_uri is always the bare URI.
 *
 * Line numbers count every line of the decompressed file, those inside blocks included, so a
 * message's FILE:LINE opens the file at the record's version line.
 */
#ifndef LLM_WARC_H
#define LLM_WARC_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/io.h"

typedef struct {
	llm_buf type;         /* WARC-Type: response, request, conversion, resource, metadata, ... */
	llm_buf target_uri;   /* WARC-Target-URI, without angle brackets */
	llm_buf date;         /* WARC-Date (ISO 8601) */
	llm_buf record_id;    /* WARC-Record-ID */
	llm_buf content_type; /* Content-Type of the block */
	bool truncated;       /* WARC-Truncated: the crawler cut the payload short */
	uint64_t content_length;
	uint64_t offset;      /* decompressed offset of the record's version line */
	uint64_t lineno;      /* line of the version line, for messages */
	llm_buf block;        /* the block (empty when skipped for size) */
	/* private: lines of the blocks read so far (the reader counts only the lines it returns),
	 * and the next record's version line when lenient mode has already read it */
	uint64_t block_lines;
	int pending_version;
	uint64_t pending_offset, pending_lineno;
} llm_warc_record;

void llm_warc_record_init(llm_warc_record *rec);
void llm_warc_record_release(llm_warc_record *rec);

/* Next record. LLM_OK, LLM_EOF, LLM_ETOOLONG (headers valid, block skipped), LLM_EFORMAT
 * (not a WARC record, a bad header, a truncated file: the detail names file and line), or a
 * read error. */
int llm_warc_next(llm_reader *r, llm_warc_record *rec, uint64_t max_block);

/*
 * Next ARC record, into the same structure: the header line "URL IP DATE TYPE [...] LENGTH"
 * gives target_uri, date (the 14-digit ARC date as ISO 8601) and content_type; the block of an
 * http(s) record holds the HTTP response as in a WARC response record, so its type is
 * "response" with content type "application/http; msgtype=response"; other records
 * (ftp, dns, the "filedesc://" version block) are "resource" or "warcinfo" records.
 * Errors and limits as llm_warc_next.
 */
int llm_arc_next(llm_reader *r, llm_warc_record *rec, uint64_t max_block);

/* Whether the bytes at p look like the start of an ARC file ("filedesc://"). */
bool llm_arc_detect(const char *p, size_t n);

#endif
