/* http.c — HTTP responses from web archives: framing and content codings (see http.h). */
#include "http.h"

#include <brotli/decode.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>
#include <zstd.h>

#include "core/err.h"

void llm_http_response_init(llm_http_response *h)
{
	memset(h, 0, sizeof *h);
}

void llm_http_response_release(llm_http_response *h)
{
	llm_buf_release(&h->content_type);
	llm_buf_release(&h->content_encoding);
	llm_buf_release(&h->body);
	llm_buf_release(&h->tmp);
	llm_http_response_init(h);
}

/* "Name: value" with name matching (case-insensitive); value trimmed into out. */
static bool header(const char *line, size_t n, const char *name, llm_buf *out)
{
	size_t k = strlen(name);
	if (n <= k || line[k] != ':' || strncasecmp(line, name, k) != 0)
		return false;
	const char *v = line + k + 1, *end = line + n;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	llm_buf_reset(out);
	llm_buf_add(out, v, end - v);
	return true;
}

/*
 * De-chunk an HTTP/1.1 chunked body (RFC 9112 §7.1): hex size, optional extensions, CRLF,
 * the data, CRLF; a zero size ends the body (trailers are ignored). A body that ends at a
 * chunk boundary without the zero chunk is accepted: nothing of it is lost. A chunk that runs
 * past the end is an error unless the record was cut by the crawler (truncated).
 */
/* Length of the chunk-size line's text at s (up to its line end, at most 20 bytes), for messages. */
static int line_head(const char *s, size_t n)
{
	size_t k = 0;
	while (k < n && k < 20 && s[k] != '\r' && s[k] != '\n')
		k++;
	return (int)k;
}

static int dechunk(const char *s, size_t n, bool truncated, size_t max_body, llm_buf *out)
{
	size_t i = 0;
	while (i < n) {
		size_t j = i;
		uint64_t size = 0;
		while (j < n && isxdigit((unsigned char)s[j])) {
			if (size >> 60)
				return llm_fail(LLM_EFORMAT, "chunk size '%.*s' is too large",
				                line_head(s + i, n - i), s + i);
			int c = tolower((unsigned char)s[j]);
			size = size * 16 + (uint64_t)(isdigit(c) ? c - '0' : c - 'a' + 10);
			j++;
		}
		if (j == i)
			return llm_fail(LLM_EFORMAT, "invalid chunk size '%.*s' at byte %zu of the body",
			                line_head(s + i, n - i), s + i, i);
		while (j < n && (s[j] == ' ' || s[j] == '\t'))
			j++;
		if (j < n && s[j] != ';' && s[j] != '\r' && s[j] != '\n')
			return llm_fail(LLM_EFORMAT, "invalid chunk size '%.*s' at byte %zu of the body",
			                line_head(s + i, n - i), s + i, i);
		const char *nl = memchr(s + j, '\n', n - j);
		if (size == 0)
			return LLM_OK;
		if (!nl) {
			if (truncated)
				return LLM_OK;
			return llm_fail(LLM_EFORMAT, "chunk header at byte %zu of the body has no line end", i);
		}
		i = (size_t)(nl + 1 - s);
		if (size > n - i) {
			if (!truncated)
				return llm_fail(LLM_EFORMAT, "chunk of %llu bytes at byte %zu runs past the end of the body (%zu bytes left)",
				                (unsigned long long)size, i, n - i);
			size = n - i;
		}
		if (out->len + size > max_body)
			return llm_fail(LLM_ETOOLONG, "body longer than %zu bytes", max_body);
		llm_buf_add(out, s + i, (size_t)size);
		i += (size_t)size;
		if (i < n && s[i] == '\r')
			i++;
		if (i < n && s[i] == '\n')
			i++;
		else if (i < n)
			return llm_fail(LLM_EFORMAT, "chunk data at byte %zu of the body does not end with a line end", i);
	}
	return LLM_OK;
}

/* Room for the next piece of decoded output, within max. */
static int grow_out(llm_buf *out, size_t max, size_t *room)
{
	if (out->len >= max)
		return llm_fail(LLM_ETOOLONG, "decoded body longer than %zu bytes", max);
	size_t want = out->len < (1u << 16) ? (1u << 16) : out->len;
	if (want > max - out->len)
		want = max - out->len;
	llm_buf_grow(out, want);
	*room = want;
	return LLM_OK;
}

/* gzip (windowBits 15 + 16), zlib (15) or raw deflate (-15). */
static int inflate_body(const char *in, size_t n, int window, size_t max, llm_buf *out)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	if (inflateInit2(&z, window) != Z_OK)
		return llm_fail(LLM_ENOMEM, "zlib: cannot start inflate");
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)(n < UINT32_MAX ? n : UINT32_MAX);
	int rc;
	do {
		size_t room = 0;
		if ((rc = grow_out(out, max, &room)) != LLM_OK)
			break;
		if (room > UINT32_MAX)
			room = UINT32_MAX;
		z.next_out = (Bytef *)out->p + out->len;
		z.avail_out = (uInt)room;
		int zr = inflate(&z, Z_NO_FLUSH);
		out->len += room - z.avail_out;
		out->p[out->len] = 0;
		if (zr == Z_STREAM_END) {
			/* gzip allows several members back to back */
			if (window > 15 && z.avail_in > 2 && (unsigned char)z.next_in[0] == 0x1f &&
			    (unsigned char)z.next_in[1] == 0x8b) {
				inflateReset(&z);
				continue;
			}
			rc = LLM_OK;
			break;
		}
		if (zr != Z_OK && !(zr == Z_BUF_ERROR && z.avail_out == 0)) {
			rc = llm_fail(LLM_EFORMAT, "corrupt %s data: %s",
			              window > 15 ? "gzip" : "deflate", z.msg ? z.msg : "unexpected end");
			break;
		}
		if (z.avail_in == 0 && z.avail_out != 0) {
			rc = llm_fail(LLM_EFORMAT, "%s data ends early", window > 15 ? "gzip" : "deflate");
			break;
		}
	} while (1);
	inflateEnd(&z);
	return rc;
}

static int brotli_body(const char *in, size_t n, size_t max, llm_buf *out)
{
	BrotliDecoderState *st = BrotliDecoderCreateInstance(NULL, NULL, NULL);
	if (!st)
		return llm_fail(LLM_ENOMEM, "brotli: cannot start the decoder");
	const uint8_t *next_in = (const uint8_t *)in;
	size_t avail_in = n;
	int rc;
	for (;;) {
		size_t room = 0;
		if ((rc = grow_out(out, max, &room)) != LLM_OK)
			break;
		uint8_t *next_out = (uint8_t *)out->p + out->len;
		size_t avail_out = room;
		BrotliDecoderResult br = BrotliDecoderDecompressStream(st, &avail_in, &next_in,
		                                                       &avail_out, &next_out, NULL);
		out->len += room - avail_out;
		out->p[out->len] = 0;
		if (br == BROTLI_DECODER_RESULT_SUCCESS) {
			rc = LLM_OK;
			break;
		}
		if (br == BROTLI_DECODER_RESULT_ERROR) {
			rc = llm_fail(LLM_EFORMAT, "corrupt br data: %s",
			              BrotliDecoderErrorString(BrotliDecoderGetErrorCode(st)));
			break;
		}
		if (br == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT) {
			rc = llm_fail(LLM_EFORMAT, "br data ends early");
			break;
		}
	}
	BrotliDecoderDestroyInstance(st);
	return rc;
}

static int zstd_body(const char *in, size_t n, size_t max, llm_buf *out)
{
	ZSTD_DStream *zd = ZSTD_createDStream();
	if (!zd)
		return llm_fail(LLM_ENOMEM, "zstd: cannot start the decoder");
	ZSTD_inBuffer ib = { in, n, 0 };
	size_t last = 1;
	int rc = LLM_OK;
	while (ib.pos < ib.size) {
		size_t room = 0;
		if ((rc = grow_out(out, max, &room)) != LLM_OK)
			break;
		ZSTD_outBuffer ob = { out->p + out->len, room, 0 };
		last = ZSTD_decompressStream(zd, &ob, &ib);
		out->len += ob.pos;
		out->p[out->len] = 0;
		if (ZSTD_isError(last)) {
			rc = llm_fail(LLM_EFORMAT, "corrupt zstd data: %s", ZSTD_getErrorName(last));
			break;
		}
	}
	if (rc == LLM_OK && last != 0)
		rc = llm_fail(LLM_EFORMAT, "zstd data ends early");
	ZSTD_freeDStream(zd);
	return rc;
}

static bool coding_is(const char *s, size_t n, const char *name)
{
	return strlen(name) == n && strncasecmp(s, name, n) == 0;
}

/* Undo one content coding of in[0..n) into out. */
static int decode_one(const char *c, size_t cn, const char *in, size_t n, size_t max, llm_buf *out)
{
	llm_buf_reset(out);
	int rc;
	if (coding_is(c, cn, "identity"))
		return LLM_EINVAL; /* nothing to do: the caller keeps its input */
	if (coding_is(c, cn, "gzip") || coding_is(c, cn, "x-gzip")) {
		if (n < 2 || (unsigned char)in[0] != 0x1f || (unsigned char)in[1] != 0x8b)
			return LLM_EINVAL; /* stored decoded */
		rc = inflate_body(in, n, 15 + 16, max, out);
	} else if (coding_is(c, cn, "deflate")) {
		rc = inflate_body(in, n, 15, max, out);
		if (rc == LLM_EFORMAT) {
			llm_buf_reset(out);
			rc = inflate_body(in, n, -15, max, out);
		}
	} else if (coding_is(c, cn, "br")) {
		rc = brotli_body(in, n, max, out);
	} else if (coding_is(c, cn, "zstd")) {
		rc = zstd_body(in, n, max, out);
	} else {
		return llm_fail(LLM_EUNSUPPORTED, "unsupported Content-Encoding '%.*s'", (int)cn, c);
	}
	if (rc == LLM_EFORMAT) {
		size_t i = 0;
		while (i < n && isspace((unsigned char)in[i]))
			i++;
		if (i < n && in[i] == '<')
			return LLM_EINVAL; /* HTML: stored decoded under a stale header */
	}
	return rc;
}

/* Undo the codings listed in h->content_encoding, last applied first. */
static int decode_body(llm_http_response *h, size_t max)
{
	const char *list = h->content_encoding.p;
	size_t end = h->content_encoding.len;
	while (end > 0) {
		size_t start = end;
		while (start > 0 && list[start - 1] != ',')
			start--;
		size_t a = start, b = end;
		while (a < b && isspace((unsigned char)list[a]))
			a++;
		while (b > a && isspace((unsigned char)list[b - 1]))
			b--;
		if (b > a) {
			int rc = decode_one(list + a, b - a, h->body.p, h->body.len, max, &h->tmp);
			if (rc == LLM_OK) {
				llm_buf t = h->body;
				h->body = h->tmp;
				h->tmp = t;
			} else if (rc != LLM_EINVAL) {
				return rc;
			}
		}
		end = start ? start - 1 : 0;
	}
	return LLM_OK;
}

int llm_http_parse(llm_http_response *h, const char *s, size_t n, bool truncated, size_t max_body)
{
	llm_buf_reset(&h->content_type);
	llm_buf_reset(&h->content_encoding);
	llm_buf_reset(&h->body);
	h->status = 0;
	if (n < 12 || memcmp(s, "HTTP/", 5) != 0)
		return llm_fail(LLM_EFORMAT, "no HTTP status line");
	/* the bytes need not end in a NUL: the status is read by hand, not by atoi */
	const char *sp = memchr(s, ' ', n);
	if (!sp || sp + 4 > s + n || !isdigit((unsigned char)sp[1]) ||
	    !isdigit((unsigned char)sp[2]) || !isdigit((unsigned char)sp[3]))
		return llm_fail(LLM_EFORMAT, "bad HTTP status line");
	h->status = (sp[1] - '0') * 100 + (sp[2] - '0') * 10 + (sp[3] - '0');
	const char *p = memchr(s, '\n', n);
	bool chunked = false;
	while (p && p < s + n) {
		p++;
		const char *nl = memchr(p, '\n', s + n - p);
		size_t len = (nl ? nl : s + n) - p;
		if (len && p[len - 1] == '\r')
			len--;
		if (len == 0) {
			const char *b = nl ? nl + 1 : s + n;
			size_t bn = s + n - b;
			int rc;
			if (chunked) {
				rc = dechunk(b, bn, truncated, max_body, &h->body);
			} else if (bn > max_body) {
				rc = llm_fail(LLM_ETOOLONG, "body longer than %zu bytes", max_body);
			} else {
				llm_buf_add(&h->body, b, bn);
				rc = LLM_OK;
			}
			if (rc == LLM_OK && h->content_encoding.len)
				rc = decode_body(h, max_body);
			if (!h->body.p)
				llm_buf_grow(&h->body, 0);
			return rc;
		}
		header(p, len, "Content-Type", &h->content_type);
		header(p, len, "Content-Encoding", &h->content_encoding);
		if (header(p, len, "Transfer-Encoding", &h->tmp) && strcasestr(h->tmp.p, "chunked"))
			chunked = true;
		p = nl;
	}
	return llm_fail(LLM_EFORMAT, "HTTP headers without end");
}

bool llm_http_charset(const char *ct, size_t n, llm_buf *out)
{
	llm_buf_reset(out);
	for (size_t i = 0; i + 8 <= n; i++) {
		if (strncasecmp(ct + i, "charset", 7) != 0 || (i > 0 && ct[i - 1] != ';' &&
		                                               !isspace((unsigned char)ct[i - 1])))
			continue;
		size_t j = i + 7;
		while (j < n && isspace((unsigned char)ct[j]))
			j++;
		if (j >= n || ct[j] != '=')
			continue;
		j++;
		while (j < n && isspace((unsigned char)ct[j]))
			j++;
		char q = j < n && (ct[j] == '"' || ct[j] == '\'') ? ct[j++] : 0;
		size_t k = j;
		while (k < n && (q ? ct[k] != q : (ct[k] != ';' && !isspace((unsigned char)ct[k]))))
			k++;
		llm_buf_add(out, ct + j, k - j);
		return k > j;
	}
	return false;
}
