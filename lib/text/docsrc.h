/*
 * docsrc.h — any input becomes documents: the library side of llm-cat.
 *
 * A source reads one file (or stdin) and yields documents as JSONL lines of the document
 * stream (DESIGN §3). Formats, detected from content after decompression unless forced:
 *   jsonl    one record per line, passed through byte for byte unless a field is added;
 *            datatrove's and Dolma's nested fields (metadata.domain, .language, .url,
 *            .date; Dolma's created) become the top-level domain, lang, url and date of a
 *            record that lacks them (llmkit-formats(5) "Peer layouts")
 *   text     one document per file, per line (LLM_DOCSRC_LINES) or per blank-line paragraph
 *   html     one document per file, text left as HTML, "format": "html"
 *   warc     WARC/WARC.gz: response records with HTML (and text) payloads, resource records,
 *            conversion (WET) records; "url" from WARC-Target-URI, "date" from WARC-Date.
 *            An HTTP payload is de-chunked and its Content-Encoding decoded (http.h); a
 *            broken one is rejected as "bad_http", an unknown coding as "content_encoding".
 *   arc      ARC/ARC.gz (the format before WARC): the same for its http records
 *   archive  tar (any compression) or zip: each member file a document, "source" = member path
 *            (its id hashes the archive's name and the member's)
 * Every document gets an "id" when it has none: 16 hex digits of XXH3-64 over the input's name
 * and the byte offset of the record, so ids are stable across runs and unique among inputs of
 * different names: the path as given, or "stdin" (o->source when set) for standard input; a
 * file read with o->source is named "SOURCE!PATH", so that one source over several files
 * still gives each its own ids. Stamps (domain, lang,
 * source) are added to documents that lack the field; existing values are kept.
 * Documents that are not JSONL are decoded to UTF-8 from their encoding, decided as charset.h
 * says (forced, BOM, HTTP charset, <meta>, detection) and recorded as "encoding"; text split
 * into lines or paragraphs is decided once per file. JSONL is UTF-8 by definition (RFC 8259):
 * its ill-formed bytes are repaired. Undecodable bytes become U+FFFD, counted in doc->repaired.
 *
 * Memory: the reader's buffer plus one document, at most max_line bytes (larger ones are
 * rejected as "too_long" with their size). Not thread safe; one source per thread.
 */
#ifndef LLM_DOCSRC_H
#define LLM_DOCSRC_H

#include <stdint.h>

#include "core/buf.h"
#include "core/json.h"

enum { LLM_DOCSRC_AUTO, LLM_DOCSRC_JSONL, LLM_DOCSRC_TEXT, LLM_DOCSRC_HTML, LLM_DOCSRC_WARC,
       LLM_DOCSRC_ARCHIVE, LLM_DOCSRC_ARC };
enum { LLM_DOCSRC_FILE, LLM_DOCSRC_LINES, LLM_DOCSRC_PARAGRAPHS };

/* Names of the formats, NUL-separated in enum order ("auto\0jsonl\0..."), for option parsing. */
extern const char llm_docsrc_format_names[];

typedef struct {
	int format;          /* LLM_DOCSRC_AUTO or a forced format */
	int split;           /* for text: LLM_DOCSRC_FILE, _LINES, _PARAGRAPHS */
	const char *field;   /* text field, default "text" */
	const char *domain;  /* stamps, NULL for none */
	const char *lang;
	const char *source;  /* default: the file name */
	size_t max_line;     /* longest line / document accepted */
	const char *encoding; /* decode every non-JSONL input as this (a label or iconv name;
	                       * llm_charset_known says which are usable), NULL: decide per input */
} llm_docsrc_opts;

typedef struct {
	/* A document (llm_docsrc_next returned LLM_OK): out[0..out_len) is its JSON line. */
	const char *out;
	size_t out_len;
	const char *domain; /* the document's domain for accounting (not NUL-terminated) */
	size_t domain_len;
	const char *lang;   /* its language for accounting (not NUL-terminated), or NULL */
	size_t lang_len;
	size_t repaired;    /* U+FFFD replacements made (ill-formed UTF-8, undecodable bytes) */
	const char *encoding;        /* what the bytes were decoded as ("utf-8", "gb18030", ...),
	                              * NULL for JSONL */
	const char *encoding_source; /* how that was decided: "bom", "http", "meta", ... */
	/* A rejected record (LLM_EFORMAT): reason code, message, and what to put in rejects. */
	const char *reason;
	char msg[256];
	const char *raw;            /* the raw record (a JSONL line) or NULL */
	size_t raw_len;
	const llm_json_rec *rec;    /* its parse when it is valid JSON, else NULL */
	llm_buf extra;              /* raw JSON members for the reject record */
	/* Both: position for messages. */
	const char *file;
	uint64_t line;
	uint64_t bytes;             /* input bytes of this record (decompressed): the line, the
	                             * file, the WARC/ARC record or the archive member */
	uint64_t raw_bytes;         /* input bytes consumed so far (progress) */
	/* private */
	llm_buf json, tmp;
} llm_doc;

void llm_doc_init(llm_doc *d);
void llm_doc_release(llm_doc *d);

typedef struct llm_docsrc llm_docsrc;

/* Open path ("-"/NULL = stdin). Errors name the file. */
int llm_docsrc_open(llm_docsrc **s, const char *path, const llm_docsrc_opts *o);
/* The same over bytes in memory (not copied); name is used in messages and ids. */
int llm_docsrc_open_mem(llm_docsrc **s, const void *data, size_t n, const char *name,
                        const llm_docsrc_opts *o);
/* LLM_OK (a document), LLM_EFORMAT (a rejected record: d->reason, d->msg), LLM_EOF, or a
 * fatal read error (negative, detail set). */
int llm_docsrc_next(llm_docsrc *s, llm_doc *d);
/* Size of the input file (-1 unknown). */
int64_t llm_docsrc_size(const llm_docsrc *s);
/* WARC records that carry no document (request, metadata, warcinfo, revisit), skipped. */
uint64_t llm_docsrc_skipped(const llm_docsrc *s);
void llm_docsrc_free(llm_docsrc *s);

#endif
