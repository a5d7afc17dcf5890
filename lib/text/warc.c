/* warc.c — WARC record and HTTP response parsing (see warc.h). */
#include "warc.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/err.h"

void llm_warc_record_init(llm_warc_record *rec)
{
	memset(rec, 0, sizeof *rec);
}

void llm_warc_record_release(llm_warc_record *rec)
{
	llm_buf_release(&rec->type);
	llm_buf_release(&rec->target_uri);
	llm_buf_release(&rec->date);
	llm_buf_release(&rec->record_id);
	llm_buf_release(&rec->content_type);
	llm_buf_release(&rec->block);
	llm_warc_record_init(rec);
}

/* "Name: value" with name matching (case-insensitive); value trimmed into out. */
static int header_value(const char *line, size_t n, const char *name, llm_buf *out)
{
	size_t k = strlen(name);
	if (n <= k || line[k] != ':' || strncasecmp(line, name, k) != 0)
		return 0;
	const char *v = line + k + 1, *end = line + n;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (out) {
		llm_buf_reset(out);
		llm_buf_add(out, v, end - v);
	}
	return 1;
}

/* Lenient block for LF-only files: lines up to the next version line, which is kept pending. */
static int read_block_lines(llm_reader *r, llm_warc_record *rec, uint64_t max_block)
{
	char *line;
	size_t len;
	int rc;
	while ((rc = llm_reader_line(r, &line, &len)) == LLM_OK || rc == LLM_ETOOLONG) {
		if (rc == LLM_OK && len >= 7 && memcmp(line, "WARC/1.", 7) == 0) {
			rec->pending_version = 1;
			rec->pending_offset = llm_reader_offset(r);
			rec->pending_lineno = llm_reader_lineno(r);
			break;
		}
		if (rc == LLM_ETOOLONG || rec->block.len + len + 1 > max_block)
			return LLM_ETOOLONG;
		llm_buf_add(&rec->block, line, len);
		llm_buf_addc(&rec->block, '\n');
	}
	if (rc != LLM_OK && rc != LLM_EOF)
		return rc;
	while (rec->block.len && rec->block.p[rec->block.len - 1] == '\n')
		llm_buf_truncate(&rec->block, rec->block.len - 1);
	return LLM_OK;
}

int llm_warc_next(llm_reader *r, llm_warc_record *rec, uint64_t max_block)
{
	char *line;
	size_t len;
	int rc, lenient;
	if (rec->pending_version) {
		rec->pending_version = 0;
		rec->offset = rec->pending_offset;
		rec->lineno = rec->pending_lineno;
		lenient = 1;
	} else {
		/* Skip the blank lines that end the previous record. */
		do {
			rc = llm_reader_line(r, &line, &len);
			if (rc == LLM_ETOOLONG)
				return llm_fail(LLM_EFORMAT, "%s:%llu: not a WARC record", llm_reader_name(r),
				                (unsigned long long)llm_reader_lineno(r));
			if (rc != LLM_OK)
				return rc;
		} while (len == 0);
		if (len < 6 || memcmp(line, "WARC/", 5) != 0)
			return llm_fail(LLM_EFORMAT, "%s:%llu: expected a WARC version line, got '%.40s'",
			                llm_reader_name(r), (unsigned long long)llm_reader_lineno(r), line);
		rec->offset = llm_reader_offset(r);
		rec->lineno = llm_reader_lineno(r);
		lenient = !llm_reader_line_had_cr(r);
	}
	llm_buf_reset(&rec->type);
	llm_buf_reset(&rec->target_uri);
	llm_buf_reset(&rec->date);
	llm_buf_reset(&rec->record_id);
	llm_buf_reset(&rec->content_type);
	llm_buf_reset(&rec->block);
	rec->content_length = 0;
	int have_length = 0;
	llm_buf tmp = LLM_BUF_INIT;
	for (;;) {
		rc = llm_reader_line(r, &line, &len);
		if (rc == LLM_EOF || rc == LLM_ETOOLONG)
			rc = llm_fail(LLM_EFORMAT, "%s:%llu: WARC header %s", llm_reader_name(r),
			              (unsigned long long)llm_reader_lineno(r),
			              rc == LLM_EOF ? "truncated" : "line too long");
		if (rc != LLM_OK) {
			llm_buf_release(&tmp);
			return rc;
		}
		if (len == 0)
			break;
		if (header_value(line, len, "Content-Length", &tmp)) {
			char *end;
			unsigned long long v = strtoull(tmp.p, &end, 10);
			if (end == tmp.p || *end || tmp.p[0] == '-') {
				llm_buf_release(&tmp);
				return llm_fail(LLM_EFORMAT, "%s:%llu: bad Content-Length '%.40s'",
				                llm_reader_name(r), (unsigned long long)llm_reader_lineno(r),
				                line);
			}
			rec->content_length = v;
			have_length = 1;
		} else if (!header_value(line, len, "WARC-Type", &rec->type) &&
		           !header_value(line, len, "WARC-Target-URI", &rec->target_uri) &&
		           !header_value(line, len, "WARC-Date", &rec->date) &&
		           !header_value(line, len, "WARC-Record-ID", &rec->record_id)) {
			header_value(line, len, "Content-Type", &rec->content_type);
		}
	}
	llm_buf_release(&tmp);
	if (lenient)
		return read_block_lines(r, rec, max_block);
	if (!have_length)
		return llm_fail(LLM_EFORMAT, "%s:%llu: WARC record without Content-Length",
		                llm_reader_name(r), (unsigned long long)rec->lineno);
	if (rec->content_length > max_block) {
		char skip[1 << 16];
		uint64_t left = rec->content_length;
		while (left) {
			size_t k = left < sizeof skip ? left : sizeof skip;
			rc = llm_reader_read_exact(r, skip, k);
			if (rc != LLM_OK)
				return rc == LLM_EOF ? llm_fail(LLM_EFORMAT, "%s: truncated WARC record at line %llu",
				                                llm_reader_name(r), (unsigned long long)rec->lineno)
				                     : rc;
			left -= k;
		}
		return LLM_ETOOLONG;
	}
	llm_buf_grow(&rec->block, rec->content_length);
	rc = llm_reader_read_exact(r, rec->block.p, rec->content_length);
	if (rc == LLM_EOF || (rc == LLM_EFORMAT && rec->content_length))
		return llm_fail(LLM_EFORMAT, "%s: truncated WARC record at line %llu", llm_reader_name(r),
		                (unsigned long long)rec->lineno);
	if (rc != LLM_OK && rec->content_length)
		return rc;
	rec->block.len = rec->content_length;
	rec->block.p[rec->block.len] = 0;
	return LLM_OK;
}

/* De-chunk an HTTP/1.1 chunked body; on malformed framing keep what was decoded. */
static void dechunk(const char *s, size_t n, llm_buf *out)
{
	size_t i = 0;
	while (i < n) {
		char *end;
		unsigned long long size = strtoull(s + i, &end, 16);
		if (end == s + i)
			return;
		const char *nl = memchr(s + i, '\n', n - i);
		if (!nl || size == 0)
			return;
		i = nl + 1 - s;
		if (size > n - i)
			size = n - i;
		llm_buf_add(out, s + i, size);
		i += size;
		while (i < n && (s[i] == '\r' || s[i] == '\n'))
			i++;
	}
}

int llm_http_response(const char *s, size_t n, int *status, llm_buf *content_type, llm_buf *body)
{
	if (n < 12 || memcmp(s, "HTTP/", 5) != 0)
		return llm_fail(LLM_EFORMAT, "no HTTP status line");
	const char *sp = memchr(s, ' ', n);
	if (!sp || sp + 4 > s + n || !isdigit((unsigned char)sp[1]))
		return llm_fail(LLM_EFORMAT, "bad HTTP status line");
	*status = atoi(sp + 1);
	const char *p = memchr(s, '\n', n);
	int chunked = 0;
	if (content_type)
		llm_buf_reset(content_type);
	llm_buf te = LLM_BUF_INIT;
	while (p && p < s + n) {
		p++;
		const char *nl = memchr(p, '\n', s + n - p);
		size_t len = (nl ? nl : s + n) - p;
		if (len && p[len - 1] == '\r')
			len--;
		if (len == 0) {
			const char *b = nl ? nl + 1 : s + n;
			llm_buf_reset(body);
			if (chunked)
				dechunk(b, s + n - b, body);
			else
				llm_buf_add(body, b, s + n - b);
			llm_buf_release(&te);
			return LLM_OK;
		}
		if (content_type)
			header_value(p, len, "Content-Type", content_type);
		if (header_value(p, len, "Transfer-Encoding", &te) && strcasestr(te.p, "chunked"))
			chunked = 1;
		p = nl;
	}
	llm_buf_release(&te);
	return llm_fail(LLM_EFORMAT, "HTTP headers without end");
}
