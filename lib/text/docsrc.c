/*
 * docsrc.c — documents from JSONL, text, HTML, WARC and archives (see docsrc.h).
 *
 * JSONL is the hot path: a valid record that needs no new field is handed back as the very
 * line that was read, so passthrough costs one validation scan and one copy to the writer.
 * Archives are read by libarchive on top of our reader, so tar.zst works like tar.gz.
 */
#include "docsrc.h"

#include <archive.h>
#include <archive_entry.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/err.h"
#include "core/hash.h"
#include "core/io.h"
#include "core/utf8.h"
#include "charset.h"
#include "http.h"
#include "warc.h"

const char llm_docsrc_format_names[] = "auto\0jsonl\0text\0html\0warc\0archive\0arc\0";

struct llm_docsrc {
	llm_docsrc_opts o;
	char *path;   /* for messages */
	char *source; /* stamped "source" */
	char *seed;   /* hashed with each record's offset into its id */
	int format;
	llm_reader *r;
	llm_json_rec rec;
	llm_json_edit ed;
	llm_warc_record warc;
	llm_http_response http;
	struct archive *ar;
	llm_buf payload, ctype, member;
	llm_charset *cs;
	llm_buf charset;          /* the charset label of the current WARC/ARC payload */
	const char *file_enc;     /* text in pieces: the encoding chosen for the whole file */
	int file_enc_source;
	uint64_t skipped;
	int done;
};

void llm_doc_init(llm_doc *d)
{
	memset(d, 0, sizeof *d);
}

void llm_doc_release(llm_doc *d)
{
	llm_buf_release(&d->extra);
	llm_buf_release(&d->json);
	llm_buf_release(&d->tmp);
	llm_doc_init(d);
}

static int has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);
	return n >= k && strcasecmp(s + n - k, suf) == 0;
}

/* Strip known compression suffixes for name-based hints. */
static int name_hint(const char *path, const char *ext)
{
	static const char *const comp[] = { "", ".gz", ".zst", ".xz", ".bz2" };
	char buf[64];
	for (size_t i = 0; i < sizeof comp / sizeof comp[0]; i++) {
		snprintf(buf, sizeof buf, "%s%s", ext, comp[i]);
		if (has_suffix(path, buf))
			return 1;
	}
	return 0;
}

static int looks_html(const char *p, size_t n)
{
	static const char *const tags[] = { "<!doctype html", "<html", "<head", "<body", "<!--" };
	for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++) {
		size_t k = strlen(tags[i]);
		if (n >= k && strncasecmp(p, tags[i], k) == 0)
			return 1;
	}
	return 0;
}

/* NUL bytes mean binary data, unless the text is UTF-16 (a BOM, or --encoding says so). */
static int is_binary(const llm_docsrc *s, const char *p, size_t n)
{
	if (n >= 2 && (memcmp(p, "\xFF\xFE", 2) == 0 || memcmp(p, "\xFE\xFF", 2) == 0))
		return 0;
	if (s->o.encoding && strncasecmp(s->o.encoding, "utf-16", 6) == 0)
		return 0;
	return memchr(p, 0, n < 8192 ? n : 8192) != NULL;
}

static int detect_format(llm_docsrc *s)
{
	const char *p;
	size_t n;
	int rc = llm_reader_peek(s->r, 512, &p, &n);
	if (rc != LLM_OK)
		return rc;
	if (n >= 262 && memcmp(p + 257, "ustar", 5) == 0)
		return LLM_DOCSRC_ARCHIVE;
	if (n >= 4 && memcmp(p, "PK\x03\x04", 4) == 0)
		return LLM_DOCSRC_ARCHIVE;
	size_t i = 0;
	if (n >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
		i = 3;
	while (i < n && isspace((unsigned char)p[i]))
		i++;
	if (n - i >= 6 && memcmp(p + i, "WARC/1", 6) == 0)
		return LLM_DOCSRC_WARC;
	if (llm_arc_detect(p + i, n - i))
		return LLM_DOCSRC_ARC;
	if (name_hint(s->path, ".jsonl") || name_hint(s->path, ".ndjson") || name_hint(s->path, ".json") ||
	    (i < n && p[i] == '{') || n == 0)
		return LLM_DOCSRC_JSONL;
	if (name_hint(s->path, ".html") || name_hint(s->path, ".htm") || looks_html(p + i, n - i))
		return LLM_DOCSRC_HTML;
	if (name_hint(s->path, ".warc"))
		return LLM_DOCSRC_WARC;
	if (name_hint(s->path, ".arc"))
		return LLM_DOCSRC_ARC;
	return LLM_DOCSRC_TEXT;
}

static la_ssize_t archive_from_reader(struct archive *a, void *ctx, const void **out)
{
	llm_docsrc *s = ctx;
	static _Thread_local char buf[1 << 16];
	ssize_t k = llm_reader_read(s->r, buf, sizeof buf);
	if (k < 0) {
		archive_set_error(a, EIO, "%s", llm_last_error());
		return -1;
	}
	*out = buf;
	return k;
}

/* Common part of the open functions: path and reader are set. */
static int docsrc_start(llm_docsrc *s)
{
	llm_reader_set_max_line(s->r, s->o.max_line);
	s->format = s->o.format;
	if (s->format == LLM_DOCSRC_AUTO) {
		int rc = detect_format(s);
		if (rc < 0)
			return rc;
		s->format = rc;
	}
	if (s->format == LLM_DOCSRC_TEXT && s->o.split != LLM_DOCSRC_FILE) {
		/* pieces of one file share its encoding: decide once, on its first 64 KiB */
		if (s->o.encoding) {
			s->file_enc = s->o.encoding;
			s->file_enc_source = LLM_CHARSET_FORCED;
		} else {
			const char *p;
			size_t n;
			int rc = llm_reader_peek(s->r, 1 << 16, &p, &n);
			if (rc != LLM_OK)
				return rc;
			llm_charset_result cr;
			llm_charset_choose(s->cs, p, n, NULL, 0, false, &cr);
			s->file_enc = cr.encoding;
			s->file_enc_source = cr.source;
		}
	}
	if (s->format == LLM_DOCSRC_ARCHIVE) {
		s->ar = archive_read_new();
		archive_read_support_format_tar(s->ar);
		archive_read_support_format_zip(s->ar);
		archive_read_support_format_cpio(s->ar);
		archive_read_support_format_7zip(s->ar);
		archive_read_support_filter_all(s->ar);
		if (archive_read_open(s->ar, s, NULL, archive_from_reader, NULL) != ARCHIVE_OK)
			return llm_fail(LLM_EFORMAT, "%s: not a readable archive: %s", s->path,
			                archive_error_string(s->ar));
	}
	return LLM_OK;
}

/*
 * The id seed names the input among all those llm-cat reads: its path as given, or for
 * standard input "stdin". --source names what standard input is; for a file it is only a
 * stamp, since one --source for several files would give the records at equal offsets of
 * each the same id: the seed is then "SOURCE!PATH", unique per file and per source.
 */
static llm_docsrc *docsrc_new(const char *path, const char *source, int is_stdin,
                              const llm_docsrc_opts *o)
{
	llm_docsrc *s = llm_calloc(1, sizeof *s);
	s->o = *o;
	if (!s->o.field)
		s->o.field = "text";
	if (!s->o.max_line)
		s->o.max_line = (size_t)64 << 20;
	s->path = llm_strdup(path);
	s->source = llm_strdup(o->source ? o->source : source);
	if (o->source && !is_stdin) {
		llm_buf b = LLM_BUF_INIT;
		llm_buf_addf(&b, "%s!%s", o->source, source);
		s->seed = llm_buf_detach(&b, NULL);
	} else {
		s->seed = llm_strdup(s->source);
	}
	llm_json_rec_init(&s->rec);
	llm_json_edit_init(&s->ed);
	llm_warc_record_init(&s->warc);
	llm_http_response_init(&s->http);
	s->cs = llm_charset_new();
	return s;
}

int llm_docsrc_open(llm_docsrc **sp, const char *path, const llm_docsrc_opts *o)
{
	int stdin_ = !path || strcmp(path, "-") == 0;
	llm_docsrc *s = docsrc_new(stdin_ ? "<stdin>" : path, stdin_ ? "stdin" : path, stdin_, o);
	int rc = llm_reader_open(&s->r, path);
	if (rc == LLM_OK)
		rc = docsrc_start(s);
	if (rc != LLM_OK) {
		llm_docsrc_free(s);
		s = NULL;
	}
	*sp = s;
	return rc;
}

int llm_docsrc_open_mem(llm_docsrc **sp, const void *data, size_t n, const char *name,
                        const llm_docsrc_opts *o)
{
	llm_docsrc *s = docsrc_new(name, name, 0, o);
	int rc = llm_reader_open_mem(&s->r, data, n, name);
	if (rc == LLM_OK)
		rc = docsrc_start(s);
	if (rc != LLM_OK) {
		llm_docsrc_free(s);
		s = NULL;
	}
	*sp = s;
	return rc;
}

void llm_docsrc_free(llm_docsrc *s)
{
	if (!s)
		return;
	if (s->ar)
		archive_read_free(s->ar);
	llm_reader_free(s->r);
	llm_json_rec_release(&s->rec);
	llm_json_edit_release(&s->ed);
	llm_warc_record_release(&s->warc);
	llm_http_response_release(&s->http);
	llm_buf_release(&s->payload);
	llm_buf_release(&s->ctype);
	llm_buf_release(&s->member);
	llm_buf_release(&s->charset);
	llm_charset_free(s->cs);
	free(s->path);
	free(s->source);
	free(s->seed);
	free(s);
}

int64_t llm_docsrc_size(const llm_docsrc *s) { return llm_reader_size(s->r); }
uint64_t llm_docsrc_skipped(const llm_docsrc *s) { return s->skipped; }

static void make_id(const char *source, uint64_t offset, char out[17])
{
	llm_buf b = LLM_BUF_INIT;
	llm_buf_addf(&b, "%s:%llu", source, (unsigned long long)offset);
	snprintf(out, 17, "%016llx", (unsigned long long)llm_hash64(b.p, b.len, 0));
	llm_buf_release(&b);
}

static int reject(llm_doc *d, const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int reject(llm_doc *d, const char *reason, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof d->msg, fmt, ap);
	va_end(ap);
	d->reason = reason;
	return LLM_EFORMAT;
}

static void put_member(llm_buf *b, const char *key, const char *v, size_t n)
{
	llm_buf_adds(b, ", ");
	llm_json_put_str(b, key, strlen(key));
	llm_buf_adds(b, ": ");
	llm_json_put_str(b, v, n);
}

/* Where a document that is not JSONL comes from. */
typedef struct {
	const char *format;   /* "html" or "text" */
	const char *source;   /* stamped "source" */
	const char *id_seed;  /* hashed with offset into the id */
	uint64_t offset;
	const char *url, *date;
	const char *charset;  /* the transport's charset label (HTTP Content-Type), or NULL */
	size_t charset_len;
} doc_meta;

/* Build a document line for text that came from a file, a WARC record or an archive member:
 * the bytes are decoded from their encoding (charset.h) into the text field. */
static void emit_doc(llm_docsrc *s, llm_doc *d, const char *text, size_t n, const doc_meta *m)
{
	char id[17];
	make_id(m->id_seed, m->offset, id);
	llm_buf *b = &d->json;
	llm_buf_reset(b);
	llm_buf_reset(&d->tmp);
	llm_charset_result cr;
	bool html = strcmp(m->format, "html") == 0;
	if (s->file_enc) {
		/* decided once for the file (text split into lines or paragraphs) */
		llm_charset_decode(s->cs, text, n, s->file_enc, NULL, 0, false, &d->tmp, &cr);
		cr.source = s->file_enc_source;
	} else {
		llm_charset_decode(s->cs, text, n, s->o.encoding, m->charset, m->charset_len, html,
		                   &d->tmp, &cr);
	}
	d->repaired = cr.replaced;
	d->encoding = cr.encoding;
	d->encoding_source = llm_charset_source_name(cr.source);
	llm_buf_adds(b, "{\"id\": ");
	llm_json_put_str(b, id, 16);
	put_member(b, s->o.field, d->tmp.p, d->tmp.len);
	put_member(b, "format", m->format, strlen(m->format));
	put_member(b, "encoding", cr.encoding, strlen(cr.encoding));
	put_member(b, "source", m->source, strlen(m->source));
	if (m->url && *m->url)
		put_member(b, "url", m->url, strlen(m->url));
	if (m->date && *m->date)
		put_member(b, "date", m->date, strlen(m->date));
	if (s->o.domain)
		put_member(b, "domain", s->o.domain, strlen(s->o.domain));
	if (s->o.lang)
		put_member(b, "lang", s->o.lang, strlen(s->o.lang));
	llm_buf_addc(b, '}');
	d->out = b->p;
	d->out_len = b->len;
	d->domain = s->o.domain;
	d->domain_len = s->o.domain ? strlen(s->o.domain) : 0;
	d->lang = s->o.lang;
	d->lang_len = s->o.lang ? strlen(s->o.lang) : 0;
}

/*
 * The fields other pipelines keep where llmkit does not look: datatrove writes
 * {"text", "id", "metadata": {...}} with the reader's and filters' fields ("url", "date",
 * "language", ...) inside "metadata"; Dolma writes {"id", "text", "source", "added",
 * "created", "metadata"} with "url" and "language" inside "metadata" and the crawl time as
 * "created". Left there, they were ignored and every document judged as domain "unknown".
 * Rows are tried in order for a field the record lacks at its top level (a top-level field
 * always wins); the first string found is copied to the top, so that every later tool sees
 * it as its own. llmkit-formats(5) PEER LAYOUTS documents the table.
 */
static const struct {
	const char *field;  /* llmkit's field */
	const char *outer;  /* the record's member */
	const char *inner;  /* inside it, or NULL for outer itself */
} peer_fields[] = {
	{ "domain", "metadata", "domain" },
	{ "lang", "metadata", "language" },
	{ "url", "metadata", "url" },
	{ "date", "metadata", "date" },
	{ "date", "created", NULL },
};

/* The string value of row i of peer_fields in rec, or a value of type INVALID. */
static llm_json_val peer_value(const llm_json_rec *rec, size_t i)
{
	llm_json_val none = { 0 };
	const llm_json_val *v = llm_json_get(rec, peer_fields[i].outer);
	if (!v)
		return none;
	llm_json_val x = *v;
	if (peer_fields[i].inner) {
		if (v->type != LLM_JSON_OBJECT)
			return none;
		x = llm_json_member(v, peer_fields[i].inner);
	}
	return x.type == LLM_JSON_STRING && x.len > 2 ? x : none;
}

/* Copy the peers' fields a record lacks to its top level (edits of s->ed); returns the
 * domain and language copied (NULL-typed when none) for the accounting. */
static void peer_fields_add(llm_docsrc *s, llm_json_val *dom, llm_json_val *lang)
{
	const size_t n = sizeof peer_fields / sizeof *peer_fields;
	unsigned char done[sizeof peer_fields / sizeof *peer_fields] = { 0 };
	dom->type = lang->type = LLM_JSON_INVALID;
	for (size_t i = 0; i < n; i++) {
		const char *f = peer_fields[i].field;
		int taken = llm_json_get(&s->rec, f) != NULL;
		for (size_t j = 0; j < i && !taken; j++)
			taken = done[j] && strcmp(peer_fields[j].field, f) == 0;
		if (taken)
			continue;
		llm_json_val v = peer_value(&s->rec, i);
		if (v.type != LLM_JSON_STRING)
			continue;
		llm_json_edit_raw(&s->ed, f, v.p, v.len);
		done[i] = 1;
		if (strcmp(f, "domain") == 0)
			*dom = v;
		else if (strcmp(f, "lang") == 0)
			*lang = v;
	}
}

static int next_jsonl(llm_docsrc *s, llm_doc *d)
{
	char *line;
	size_t len;
	int rc;
	do {
		rc = llm_reader_line(s->r, &line, &len);
		if (rc == LLM_ETOOLONG) {
			d->line = llm_reader_lineno(s->r);
			d->raw = line;
			d->raw_len = strlen(line);
			llm_buf_addf(&d->extra, "\"bytes\": %zu", len);
			return reject(d, "too_long", "line of %zu bytes is longer than --max-line", len);
		}
		if (rc != LLM_OK)
			return rc;
	} while (len == 0 || strspn(line, " \t") == len);
	d->line = llm_reader_lineno(s->r);
	d->raw = line;
	d->raw_len = len;
	if (llm_json_parse(&s->rec, line, len) != LLM_OK) {
		const char *why = s->rec.err_msg;
		size_t pos = s->rec.err_pos;
		if (strcmp(why, "invalid UTF-8") != 0) {
			llm_buf_addf(&d->extra, "\"error\": \"%s at byte %zu\"", why, pos + 1);
			return reject(d, "bad_json", "bad JSON: %s at byte %zu", why, pos + 1);
		}
		/* Repair ill-formed UTF-8 and try again: a record is worth keeping for a bad byte. */
		llm_buf_reset(&d->tmp);
		d->repaired = llm_utf8_repair(line, len, &d->tmp);
		if (llm_json_parse(&s->rec, d->tmp.p, d->tmp.len) != LLM_OK) {
			llm_buf_addf(&d->extra, "\"error\": \"%s at byte %zu\"", s->rec.err_msg,
			             s->rec.err_pos + 1);
			return reject(d, "bad_json", "bad JSON: %s at byte %zu", s->rec.err_msg,
			              s->rec.err_pos + 1);
		}
		line = d->tmp.p;
		len = d->tmp.len;
	}
	d->rec = &s->rec;
	const llm_json_val *text = llm_json_get(&s->rec, s->o.field);
	if (!text)
		return reject(d, "no_text", "missing field '%s'", s->o.field);
	if (text->type != LLM_JSON_STRING)
		return reject(d, "no_text", "field '%s' is not a string", s->o.field);
	llm_json_edit_reset(&s->ed);
	if (!llm_json_get(&s->rec, "id")) {
		char id[17];
		make_id(s->seed, llm_reader_offset(s->r), id);
		llm_json_edit_str(&s->ed, "id", id, 16);
	}
	llm_json_val peer_dom, peer_lang;
	peer_fields_add(s, &peer_dom, &peer_lang);
	const llm_json_val *dom = llm_json_get(&s->rec, "domain");
	if (!dom && peer_dom.type == LLM_JSON_STRING)
		dom = &peer_dom;
	if (dom && dom->type == LLM_JSON_STRING && !memchr(dom->p, '\\', dom->len)) {
		d->domain = dom->p + 1;
		d->domain_len = dom->len - 2;
	} else {
		d->domain = s->o.domain;
		d->domain_len = s->o.domain ? strlen(s->o.domain) : 0;
	}
	const llm_json_val *lang = llm_json_get(&s->rec, "lang");
	if (!lang && peer_lang.type == LLM_JSON_STRING)
		lang = &peer_lang;
	if (lang && lang->type == LLM_JSON_STRING && !memchr(lang->p, '\\', lang->len)) {
		d->lang = lang->p + 1;
		d->lang_len = lang->len - 2;
	}
	if (s->o.domain && !dom)
		llm_json_edit_str(&s->ed, "domain", s->o.domain, strlen(s->o.domain));
	if (s->o.lang && !lang)
		llm_json_edit_str(&s->ed, "lang", s->o.lang, strlen(s->o.lang));
	if (s->o.source && !llm_json_get(&s->rec, "source"))
		llm_json_edit_str(&s->ed, "source", s->o.source, strlen(s->o.source));
	if (s->ed.n == 0) {
		d->out = line;
		d->out_len = len;
		return LLM_OK;
	}
	llm_buf_reset(&d->json);
	llm_json_write(&s->rec, &s->ed, &d->json);
	d->out = d->json.p;
	d->out_len = d->json.len;
	return LLM_OK;
}

/* Whole input as one document (text or html file). */
static int next_whole(llm_docsrc *s, llm_doc *d, const char *format)
{
	if (s->done)
		return LLM_EOF;
	s->done = 1;
	llm_buf_reset(&s->payload);
	char tmp[1 << 16];
	ssize_t k;
	while ((k = llm_reader_read(s->r, tmp, sizeof tmp)) > 0) {
		if (s->payload.len + k > s->o.max_line) {
			uint64_t total = s->payload.len + k;
			while ((k = llm_reader_read(s->r, tmp, sizeof tmp)) > 0)
				total += k;
			if (k < 0)
				return (int)k;
			llm_buf_addf(&d->extra, "\"bytes\": %llu", (unsigned long long)total);
			return reject(d, "too_long", "document of %llu bytes is longer than --max-line",
			              (unsigned long long)total);
		}
		llm_buf_add(&s->payload, tmp, k);
	}
	if (k < 0)
		return (int)k;
	if (is_binary(s, s->payload.p ? s->payload.p : "", s->payload.len))
		return reject(d, "binary", "binary data (NUL bytes), not text");
	doc_meta m = { .format = format, .source = s->source, .id_seed = s->seed };
	emit_doc(s, d, s->payload.p ? s->payload.p : "", s->payload.len, &m);
	return LLM_OK;
}

static int next_text_split(llm_docsrc *s, llm_doc *d)
{
	char *line;
	size_t len;
	int rc;
	if (s->o.split == LLM_DOCSRC_LINES) {
		do {
			rc = llm_reader_line(s->r, &line, &len);
			if (rc == LLM_ETOOLONG) {
				d->line = llm_reader_lineno(s->r);
				llm_buf_addf(&d->extra, "\"bytes\": %zu", len);
				return reject(d, "too_long", "line of %zu bytes is longer than --max-line", len);
			}
			if (rc != LLM_OK)
				return rc;
		} while (len == 0);
		d->line = llm_reader_lineno(s->r);
		doc_meta m = { .format = "text", .source = s->source, .id_seed = s->seed,
		               .offset = llm_reader_offset(s->r) };
		emit_doc(s, d, line, len, &m);
		return LLM_OK;
	}
	/* Paragraphs: runs of non-blank lines. */
	llm_buf_reset(&s->payload);
	uint64_t start = 0, first = 0;
	for (;;) {
		rc = llm_reader_line(s->r, &line, &len);
		if (rc == LLM_EOF)
			break;
		if (rc == LLM_ETOOLONG) {
			d->line = llm_reader_lineno(s->r);
			llm_buf_addf(&d->extra, "\"bytes\": %zu", len);
			return reject(d, "too_long", "line of %zu bytes is longer than --max-line", len);
		}
		if (rc != LLM_OK)
			return rc;
		int blank = strspn(line, " \t\f\v") == len;
		if (blank) {
			if (s->payload.len)
				break;
			continue;
		}
		if (!s->payload.len) {
			start = llm_reader_offset(s->r);
			first = llm_reader_lineno(s->r);
		} else {
			llm_buf_addc(&s->payload, '\n');
		}
		if (s->payload.len + len > s->o.max_line) {
			d->line = first;
			llm_buf_reset(&s->payload);
			return reject(d, "too_long", "paragraph longer than --max-line");
		}
		llm_buf_add(&s->payload, line, len);
	}
	if (!s->payload.len)
		return LLM_EOF;
	d->line = first;
	doc_meta m = { .format = "text", .source = s->source, .id_seed = s->seed, .offset = start };
	emit_doc(s, d, s->payload.p, s->payload.len, &m);
	return LLM_OK;
}

static int ctype_is(const llm_buf *ct, const char *prefix)
{
	return ct->len >= strlen(prefix) && strncasecmp(ct->p, prefix, strlen(prefix)) == 0;
}

/* Reject a WARC payload that is neither text nor HTML (d->extra already names the url). */
static int reject_content_type(llm_doc *d, const char *ctype, size_t n, const char *url)
{
	llm_buf_adds(&d->extra, ", \"content_type\": ");
	llm_json_put_str(&d->extra, ctype, n);
	return reject(d, "content_type", "unsupported content type '%.*s' for '%s'", (int)n, ctype, url);
}

/* WARC and ARC files: one document per response (2xx, text or HTML), resource or conversion
 * record; the other records (requests, metadata, warcinfo, revisits) carry none. */
static int next_web(llm_docsrc *s, llm_doc *d)
{
	llm_warc_record *w = &s->warc;
	for (;;) {
		int rc = s->format == LLM_DOCSRC_ARC ? llm_arc_next(s->r, w, s->o.max_line)
		                                     : llm_warc_next(s->r, w, s->o.max_line);
		if (rc != LLM_OK && rc != LLM_ETOOLONG)
			return rc;
		d->line = w->lineno;
		/* lenient files: the next version line is read already and not this record's */
		d->bytes = (w->pending_version ? w->pending_offset : llm_reader_tell(s->r)) - w->offset;
		const char *type = w->type.p ? w->type.p : "";
		const char *url = w->target_uri.p ? w->target_uri.p : "";
		const char *date = w->date.p ? w->date.p : "";
		/* Every reject of a record names its url. */
		llm_buf_reset(&d->extra);
		llm_buf_adds(&d->extra, "\"url\": ");
		llm_json_put_str(&d->extra, url, strlen(url));
		if (rc == LLM_ETOOLONG) {
			llm_buf_addf(&d->extra, ", \"bytes\": %llu", (unsigned long long)w->content_length);
			return reject(d, "too_long", "record of %llu bytes is longer than --max-line",
			              (unsigned long long)w->content_length);
		}
		const char *format;
		const char *body;
		size_t blen;
		if (strcmp(type, "response") == 0 && ctype_is(&w->content_type, "application/http")) {
			llm_http_response *h = &s->http;
			rc = llm_http_parse(h, w->block.p, w->block.len, w->truncated, s->o.max_line);
			if (rc == LLM_ETOOLONG)
				return reject(d, "too_long", "response for '%s': %s", url, llm_last_error());
			if (rc == LLM_EUNSUPPORTED) {
				llm_buf_adds(&d->extra, ", \"content_encoding\": ");
				llm_json_put_str(&d->extra, h->content_encoding.p, h->content_encoding.len);
				return reject(d, "content_encoding", "response for '%s': %s", url, llm_last_error());
			}
			if (rc != LLM_OK)
				return reject(d, "bad_http", "response for '%s': %s", url, llm_last_error());
			if (h->status < 200 || h->status >= 300) {
				llm_buf_addf(&d->extra, ", \"http_status\": %d", h->status);
				return reject(d, "http_status", "HTTP status %d for '%s'", h->status, url);
			}
			const llm_buf *ct = &h->content_type;
			if (ct->len && !ctype_is(ct, "text/") && !ctype_is(ct, "application/xhtml"))
				return reject_content_type(d, ct->p, ct->len, url);
			format = ctype_is(ct, "text/plain") ? "text" : "html";
			llm_http_charset(ct->p, ct->len, &s->charset);
			body = h->body.p;
			blen = h->body.len;
		} else if (strcmp(type, "conversion") == 0 ||
		           /* wget stores its log and arguments as metadata:// resources */
		           (strcmp(type, "resource") == 0 && strncmp(url, "metadata:", 9) != 0)) {
			if (w->content_type.len && !ctype_is(&w->content_type, "text/"))
				return reject_content_type(d, w->content_type.p, w->content_type.len, url);
			format = ctype_is(&w->content_type, "text/html") ? "html" : "text";
			llm_http_charset(w->content_type.p, w->content_type.len, &s->charset);
			body = w->block.p ? w->block.p : "";
			blen = w->block.len;
		} else {
			s->skipped++;
			continue;
		}
		if (is_binary(s, body, blen))
			return reject(d, "binary", "binary payload for '%s'", url);
		doc_meta m = { .format = format, .source = s->source, .id_seed = s->seed,
		               .offset = w->offset, .url = url, .date = date,
		               .charset = s->charset.p, .charset_len = s->charset.len };
		emit_doc(s, d, body, blen, &m);
		return LLM_OK;
	}
}

static int next_archive(llm_docsrc *s, llm_doc *d)
{
	struct archive_entry *e;
	for (;;) {
		int rc = archive_read_next_header(s->ar, &e);
		if (rc == ARCHIVE_EOF)
			return LLM_EOF;
		if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN)
			return llm_fail(LLM_EFORMAT, "%s: corrupt archive: %s", s->path,
			                archive_error_string(s->ar));
		if (archive_entry_filetype(e) != AE_IFREG)
			continue;
		const char *name = archive_entry_pathname(e);
		llm_buf_reset(&s->member);
		llm_buf_adds(&s->member, name ? name : "");
		int64_t pos = archive_read_header_position(s->ar);
		llm_buf_reset(&s->payload);
		char tmp[1 << 16];
		la_ssize_t k;
		uint64_t total = 0;
		while ((k = archive_read_data(s->ar, tmp, sizeof tmp)) > 0) {
			total += k;
			if (total <= s->o.max_line)
				llm_buf_add(&s->payload, tmp, k);
		}
		if (k < 0)
			return llm_fail(LLM_EFORMAT, "%s: corrupt archive member '%s': %s", s->path,
			                s->member.p, archive_error_string(s->ar));
		d->bytes = total;
		llm_buf_adds(&d->extra, "\"member\": ");
		llm_json_put_str(&d->extra, s->member.p, s->member.len);
		if (total > s->o.max_line) {
			llm_buf_addf(&d->extra, ", \"bytes\": %llu", (unsigned long long)total);
			return reject(d, "too_long", "member '%s' of %llu bytes is longer than --max-line",
			              s->member.p, (unsigned long long)total);
		}
		const char *p = s->payload.p ? s->payload.p : "";
		if (is_binary(s, p, s->payload.len))
			return reject(d, "binary", "member '%s' is binary data", s->member.p);
		llm_buf_reset(&d->extra);
		int html = has_suffix(s->member.p, ".html") || has_suffix(s->member.p, ".htm") ||
		           looks_html(p, s->payload.len);
		/* Ids hash the archive and member names, so equal member paths in two archives differ. */
		llm_buf_reset(&s->ctype);
		llm_buf_addf(&s->ctype, "%s!%s", s->seed, s->member.p);
		doc_meta m = { .format = html ? "html" : "text", .source = s->member.p,
		               .id_seed = s->ctype.p, .offset = (uint64_t)pos };
		emit_doc(s, d, p, s->payload.len, &m);
		return LLM_OK;
	}
}

int llm_docsrc_next(llm_docsrc *s, llm_doc *d)
{
	d->out = d->raw = NULL;
	d->out_len = d->raw_len = 0;
	d->rec = NULL;
	d->reason = NULL;
	d->msg[0] = 0;
	d->repaired = 0;
	d->encoding = d->encoding_source = NULL;
	d->lang = s->o.lang;
	d->lang_len = s->o.lang ? strlen(s->o.lang) : 0;
	d->domain = s->o.domain;
	d->domain_len = s->o.domain ? strlen(s->o.domain) : 0;
	llm_buf_reset(&d->extra);
	d->file = s->path;
	d->bytes = 0;
	uint64_t start = llm_reader_tell(s->r);
	int rc;
	switch (s->format) {
	case LLM_DOCSRC_JSONL: rc = next_jsonl(s, d); break;
	case LLM_DOCSRC_HTML: rc = next_whole(s, d, "html"); break;
	case LLM_DOCSRC_WARC:
	case LLM_DOCSRC_ARC: rc = next_web(s, d); break;
	case LLM_DOCSRC_ARCHIVE: rc = next_archive(s, d); break;
	default:
		rc = s->o.split == LLM_DOCSRC_FILE ? next_whole(s, d, "text") : next_text_split(s, d);
	}
	if (!d->bytes)
		d->bytes = llm_reader_tell(s->r) - start;
	d->raw_bytes = llm_reader_raw_bytes(s->r);
	return rc;
}
