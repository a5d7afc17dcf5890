/*
 * http.h — an HTTP response as a web archive stores it: status line, headers, blank line, body.
 *
 * llm_http_parse splits it, removes the chunked transfer coding and decodes the
 * Content-Encoding: gzip (x-gzip), deflate (zlib-wrapped as the standard says, or raw as some
 * servers send it), br (libbrotli), zstd and identity; a list ("gzip, br") is undone in
 * reverse order. Some crawlers store the body decoded and keep the header: a body declared
 * gzip that does not start with gzip's magic, or any declared body that fails to decode but
 * starts with '<', is taken as already decoded.
 *
 * Errors (detail set, without a file name: the caller adds where the message was):
 *   LLM_EFORMAT      no status line or no end of headers; an invalid chunk size; a chunk
 *                    that runs past the end of the message (unless truncated: the archive
 *                    says the crawler cut the payload); corrupt compressed data
 *   LLM_EUNSUPPORTED a content coding not listed above (compress, or an unknown name)
 *   LLM_ETOOLONG     the decoded body would exceed max_body bytes (a decompression bomb is
 *                    stopped at the cap, not after)
 * Memory: the body, bounded by max_body, and a scratch buffer of the same bound.
 * Thread safety: one llm_http_response per thread.
 */
#ifndef LLM_HTTP_H
#define LLM_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"

typedef struct {
	int status;
	llm_buf content_type;     /* the Content-Type header value, "" if none */
	llm_buf content_encoding; /* the Content-Encoding header value, "" if none */
	llm_buf body;             /* the payload, de-chunked and decoded */
	llm_buf tmp;              /* private scratch */
} llm_http_response;

void llm_http_response_init(llm_http_response *h);
void llm_http_response_release(llm_http_response *h);
int llm_http_parse(llm_http_response *h, const char *msg, size_t n, bool truncated,
                   size_t max_body);

/* The charset parameter of a Content-Type value ("text/html; charset=GBK" -> "GBK"), without
 * quotes, into out; false (out empty) when there is none. */
bool llm_http_charset(const char *ctype, size_t n, llm_buf *out);

#endif
