/* warc.c — WARC and ARC record parsing (see warc.h). */
#include "warc.h"

#include <ctype.h>
#include <errno.h>
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

/* The line the reader is at, counting the lines inside blocks it read as bytes. */
static uint64_t lineno(const llm_reader *r, const llm_warc_record *rec)
{
	return llm_reader_lineno(r) + rec->block_lines;
}

static uint64_t count_lines(const char *p, size_t n)
{
	uint64_t k = 0;
	for (const char *e = p + n; (p = memchr(p, '\n', e - p)); p++)
		k++;
	return k;
}

static void clear(llm_warc_record *rec)
{
	llm_buf_reset(&rec->type);
	llm_buf_reset(&rec->target_uri);
	llm_buf_reset(&rec->date);
	llm_buf_reset(&rec->record_id);
	llm_buf_reset(&rec->content_type);
	llm_buf_reset(&rec->block);
	rec->truncated = false;
	rec->content_length = 0;
}

/* WARC/1.0 writers (wget among them) enclose the URI in angle brackets, as that grammar said. */
static void strip_brackets(llm_buf *uri)
{
	if (uri->len >= 2 && uri->p[0] == '<' && uri->p[uri->len - 1] == '>') {
		memmove(uri->p, uri->p + 1, uri->len - 2);
		llm_buf_truncate(uri, uri->len - 2);
	}
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
			rec->pending_lineno = lineno(r, rec);
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

static int truncated_record(llm_reader *r, const llm_warc_record *rec, const char *what,
                            uint64_t got)
{
	return llm_fail(LLM_EFORMAT, "%s:%llu: truncated %s record: its length is %llu bytes, the file ends after %llu",
	                llm_reader_name(r), (unsigned long long)rec->lineno, what,
	                (unsigned long long)rec->content_length, (unsigned long long)got);
}

/* Read the block of content_length bytes that follows the headers, or skip it when it is
 * over max_block (LLM_ETOOLONG), counting its lines either way. */
static int read_block(llm_reader *r, llm_warc_record *rec, uint64_t max_block, const char *what)
{
	if (rec->content_length > max_block) {
		char skip[1 << 16];
		uint64_t left = rec->content_length;
		while (left) {
			size_t want = left < sizeof skip ? left : sizeof skip;
			ssize_t k = llm_reader_read(r, skip, want);
			if (k < 0)
				return (int)k;
			rec->block_lines += count_lines(skip, (size_t)k);
			left -= (uint64_t)k;
			if ((size_t)k < want)
				return truncated_record(r, rec, what, rec->content_length - left);
		}
		return LLM_ETOOLONG;
	}
	llm_buf_grow(&rec->block, rec->content_length);
	ssize_t k = llm_reader_read(r, rec->block.p, rec->content_length);
	if (k < 0)
		return (int)k;
	rec->block.len = (size_t)k;
	rec->block.p[k] = 0;
	rec->block_lines += count_lines(rec->block.p, rec->block.len);
	if ((uint64_t)k < rec->content_length)
		return truncated_record(r, rec, what, (uint64_t)k);
	return LLM_OK;
}

/* A decimal length from a header: digits only, within 64 bits. */
static bool parse_length(const char *s, size_t n, uint64_t *v)
{
	if (!n || n > 20)
		return false;
	uint64_t x = 0;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
		unsigned d = (unsigned)(s[i] - '0');
		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*v = x;
	return true;
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
				                (unsigned long long)lineno(r, rec));
			if (rc != LLM_OK)
				return rc;
		} while (len == 0);
		if (len < 6 || memcmp(line, "WARC/", 5) != 0)
			return llm_fail(LLM_EFORMAT, "%s:%llu: expected a WARC version line, got '%.40s'",
			                llm_reader_name(r), (unsigned long long)lineno(r, rec), line);
		rec->offset = llm_reader_offset(r);
		rec->lineno = lineno(r, rec);
		lenient = !llm_reader_line_had_cr(r);
	}
	clear(rec);
	int have_length = 0;
	llm_buf tmp = LLM_BUF_INIT;
	for (;;) {
		rc = llm_reader_line(r, &line, &len);
		if (rc == LLM_EOF || rc == LLM_ETOOLONG)
			rc = llm_fail(LLM_EFORMAT, "%s:%llu: WARC header %s", llm_reader_name(r),
			              (unsigned long long)lineno(r, rec),
			              rc == LLM_EOF ? "truncated" : "line too long");
		if (rc != LLM_OK) {
			llm_buf_release(&tmp);
			return rc;
		}
		if (len == 0)
			break;
		if (header_value(line, len, "Content-Length", &tmp)) {
			if (!parse_length(tmp.p, tmp.len, &rec->content_length)) {
				rc = llm_fail(LLM_EFORMAT, "%s:%llu: bad Content-Length '%.40s'",
				              llm_reader_name(r), (unsigned long long)lineno(r, rec), tmp.p);
				llm_buf_release(&tmp);
				return rc;
			}
			have_length = 1;
		} else if (header_value(line, len, "WARC-Truncated", NULL)) {
			rec->truncated = true;
		} else if (!header_value(line, len, "WARC-Type", &rec->type) &&
		           !header_value(line, len, "WARC-Target-URI", &rec->target_uri) &&
		           !header_value(line, len, "WARC-Date", &rec->date) &&
		           !header_value(line, len, "WARC-Record-ID", &rec->record_id)) {
			header_value(line, len, "Content-Type", &rec->content_type);
		}
	}
	llm_buf_release(&tmp);
	strip_brackets(&rec->target_uri);
	if (lenient)
		return read_block_lines(r, rec, max_block);
	if (!have_length)
		return llm_fail(LLM_EFORMAT, "%s:%llu: WARC record without Content-Length",
		                llm_reader_name(r), (unsigned long long)rec->lineno);
	return read_block(r, rec, max_block, "WARC");
}

/* ------------------------------------------------------------------------------------------ */
/* ARC (the Internet Archive's format before WARC)
 *
 * A file is a sequence of records, each one header line and a block:
 *   v1: URL IP-address Archive-date Content-type Archive-length
 *   v2: URL IP-address Archive-date Content-type Result-code Checksum Location Offset Filename
 *       Archive-length
 * followed by Archive-length bytes and a newline. The first record's URL is
 * "filedesc://NAME", its block the file's version description. The fields are separated by
 * single spaces; the URL has none, the content type may be "-" or empty in old files, so the
 * fields are taken from both ends: URL first, the date third, the length last. */

bool llm_arc_detect(const char *p, size_t n)
{
	return n >= 11 && memcmp(p, "filedesc://", 11) == 0;
}

/* "YYYYMMDDhhmmss" (or a prefix of at least the date) as ISO 8601. */
static void arc_date(const char *s, size_t n, llm_buf *out)
{
	llm_buf_reset(out);
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return;
	if (n >= 14)
		llm_buf_addf(out, "%.4s-%.2s-%.2sT%.2s:%.2s:%.2sZ", s, s + 4, s + 6, s + 8, s + 10, s + 12);
	else if (n >= 8)
		llm_buf_addf(out, "%.4s-%.2s-%.2s", s, s + 4, s + 6);
}

int llm_arc_next(llm_reader *r, llm_warc_record *rec, uint64_t max_block)
{
	char *line;
	size_t len;
	int rc;
	do {
		rc = llm_reader_line(r, &line, &len);
		if (rc == LLM_ETOOLONG)
			return llm_fail(LLM_EFORMAT, "%s:%llu: not an ARC record header", llm_reader_name(r),
			                (unsigned long long)lineno(r, rec));
		if (rc != LLM_OK)
			return rc;
	} while (len == 0);
	clear(rec);
	rec->offset = llm_reader_offset(r);
	rec->lineno = lineno(r, rec);
	/* fields: at most 10, split at spaces */
	const char *f[16];
	size_t fl[16], nf = 0;
	for (size_t i = 0; i < len && nf < 16;) {
		while (i < len && line[i] == ' ')
			i++;
		size_t j = i;
		while (j < len && line[j] != ' ')
			j++;
		if (j > i) {
			f[nf] = line + i;
			fl[nf++] = j - i;
		}
		i = j;
	}
	if (nf < 4 || nf > 10 || !parse_length(f[nf - 1], fl[nf - 1], &rec->content_length) ||
	    !memchr(f[0], ':', fl[0]))
		return llm_fail(LLM_EFORMAT, "%s:%llu: expected an ARC record header (URL IP DATE TYPE LENGTH), got '%.60s'",
		                llm_reader_name(r), (unsigned long long)rec->lineno, line);
	llm_buf_add(&rec->target_uri, f[0], fl[0]);
	arc_date(f[2], fl[2], &rec->date);
	if (nf >= 5 && !(fl[3] == 1 && f[3][0] == '-'))
		llm_buf_add(&rec->content_type, f[3], fl[3]);
	rc = read_block(r, rec, max_block, "ARC");
	if (rc != LLM_OK && rc != LLM_ETOOLONG)
		return rc;
	const char *uri = rec->target_uri.p;
	if (strncasecmp(uri, "filedesc:", 9) == 0) {
		llm_buf_adds(&rec->type, "warcinfo");
	} else if ((strncasecmp(uri, "http:", 5) == 0 || strncasecmp(uri, "https:", 6) == 0) &&
	           (rc == LLM_ETOOLONG || (rec->block.len >= 5 && memcmp(rec->block.p, "HTTP/", 5) == 0))) {
		llm_buf_adds(&rec->type, "response");
		llm_buf_reset(&rec->content_type);
		llm_buf_adds(&rec->content_type, "application/http; msgtype=response");
	} else {
		llm_buf_adds(&rec->type, "resource");
	}
	return rc;
}
