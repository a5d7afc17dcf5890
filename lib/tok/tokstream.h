/*
 * tokstream.h — the token stream (DESIGN §4, llmkit-formats(5) TOKEN STREAM): the binary,
 * pipe-friendly format between llm-tokenize, llm-noise and llm-shard.
 *
 * Layout, little-endian:
 *   header, 32 bytes: magic "LLMTOK01"; u32 version (1); u32 token width in bytes (2 or 4);
 *                     u32 vocab size; u32 flags; u64 tokenizer id (XXH3-64 of the tokenizer file)
 *   record:           u32 token count N; u32 metadata length M; M bytes of metadata (a JSON
 *                     object: "id", "domain", "weight", ...); N tokens, the labels; when flag
 *                     LLM_TOK_NOISED is set, N more tokens, the model inputs.
 * The stream ends after the last complete record; a stream that stops inside a record is
 * truncated (LLM_EFORMAT). Every token is below the vocab size; width 2 needs vocab <= 65536.
 *
 * In memory tokens are always uint32_t whatever the width on disk, so code that uses them
 * never depends on the width.
 *
 * Reader memory: one record (its metadata, and its tokens as uint32_t; a mapped file keeps at
 * most 8 MiB of pages already read resident), capped by
 * llm_tokreader_set_max_tokens (default LLM_TOK_MAX_TOKENS) and LLM_TOK_MAX_META, so a corrupt
 * count can never make the reader allocate gigabytes. The metadata bytes are handed over
 * unparsed; whoever needs fields parses them (json.h).
 *
 * Objects are not thread safe; use one per thread.
 */
#ifndef LLM_TOKSTREAM_H
#define LLM_TOKSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

#define LLM_TOK_MAGIC "LLMTOK01"
#define LLM_TOK_VERSION 1
#define LLM_TOK_HEADER_SIZE 32
/* Flag bit 0: each record carries a second, noised input sequence after its labels. */
#define LLM_TOK_NOISED 0x1u
#define LLM_TOK_KNOWN_FLAGS LLM_TOK_NOISED
/* Default cap on tokens per record (1 GiB of uint32_t) and the fixed cap on metadata bytes. */
#define LLM_TOK_MAX_TOKENS ((size_t)1 << 28)
#define LLM_TOK_MAX_META ((size_t)1 << 24)

typedef struct {
	uint32_t version;      /* LLM_TOK_VERSION */
	uint32_t width;        /* 2 or 4 */
	uint32_t vocab_size;   /* > 0; every token < vocab_size */
	uint32_t flags;        /* LLM_TOK_* bits */
	uint64_t tokenizer_id; /* XXH3-64 of the tokenizer file; 0 when unknown */
} llm_tok_header;

/* A header for vocab_size tokens: width 2 when the vocabulary fits in 16 bits, else 4. */
void llm_tok_header_init(llm_tok_header *h, uint32_t vocab_size, uint64_t tokenizer_id,
                         uint32_t flags);
/* Serialize (exactly LLM_TOK_HEADER_SIZE bytes). */
void llm_tok_header_encode(const llm_tok_header *h, unsigned char out[LLM_TOK_HEADER_SIZE]);
/* Parse and validate 32 bytes; LLM_EFORMAT with a detail (not naming a file) when invalid. */
int llm_tok_header_decode(const unsigned char in[LLM_TOK_HEADER_SIZE], llm_tok_header *h);
/* Check a header's values (width, vocab, flags) as decode does; LLM_EINVAL with a detail. */
int llm_tok_header_check(const llm_tok_header *h);

/*
 * Append one record to out. tokens (and inputs, required iff h has LLM_TOK_NOISED, else
 * ignored) hold n tokens each. LLM_EINVAL when a token is >= h->vocab_size, n or meta_len is
 * over its cap; out is then unchanged.
 */
int llm_tok_record_encode(llm_buf *out, const llm_tok_header *h, const char *meta,
                          size_t meta_len, const uint32_t *tokens, const uint32_t *inputs,
                          size_t n);

/* One record as read. Pointers are valid until the next llm_tokreader_next or _free. */
typedef struct {
	const char *meta;        /* metadata bytes, NUL-terminated (meta[meta_len] == 0) */
	size_t meta_len;
	const uint32_t *tokens;  /* n labels (NULL when widening is off for a 2-byte stream) */
	const uint32_t *inputs;  /* n noised inputs, or NULL when the stream has none */
	const void *raw_tokens;  /* the labels as stored: n x width bytes, little-endian */
	const void *raw_inputs;  /* the inputs as stored, or NULL */
	size_t n;
	uint64_t index;          /* 0-based record number */
	uint64_t offset;         /* byte offset of the record in the (decompressed) stream */
} llm_tok_rec;

/*
 * Width conversion, shared with the shard code and usable by readers of shards. Blocks of 16
 * let the compiler vectorize these at -O2; they run at memory speed.
 * widen16: n little-endian u16 at src (any alignment) into dst, returns the largest (0 if n 0).
 * narrow16: n tokens (each < 65536) to little-endian u16 at dst (any alignment).
 * max / max16: the largest of n tokens (u32 in memory / u16 at any alignment), 0 when n is 0.
 */
uint32_t llm_tok_widen16(const void *src, uint32_t *dst, size_t n);
void llm_tok_narrow16(const uint32_t *src, void *dst, size_t n);
uint32_t llm_tok_max(const uint32_t *t, size_t n);
uint32_t llm_tok_max16(const void *src, size_t n);

typedef struct llm_tokreader llm_tokreader;

/*
 * Open a token stream file ("-"/NULL = stdin; compression detected as io.h does) and read its
 * header. An uncompressed regular file is memory-mapped and read in place (the file must not
 * be truncated while it is open). On failure *r is NULL and the detail names the file.
 */
int llm_tokreader_open(llm_tokreader **r, const char *path);
/* The same over bytes in memory (not copied; they must outlive the reader). */
int llm_tokreader_open_mem(llm_tokreader **r, const void *data, size_t len, const char *name);
void llm_tokreader_free(llm_tokreader *r);

const llm_tok_header *llm_tokreader_header(const llm_tokreader *r);
const char *llm_tokreader_name(const llm_tokreader *r);
void llm_tokreader_set_max_tokens(llm_tokreader *r, size_t max);
/* Off: a 2-byte stream's records give only raw_tokens/raw_inputs (tokens and inputs NULL),
 * which saves the conversion for code that copies tokens as stored (llm-shard). Tokens are
 * checked against the vocabulary either way. Default on. */
void llm_tokreader_set_widen(llm_tokreader *r, int on);
/* Bytes of the underlying file consumed so far (for progress), compressed size when it is. */
uint64_t llm_tokreader_raw_bytes(const llm_tokreader *r);
/* File size on disk, or -1 (stdin, memory). */
int64_t llm_tokreader_size(const llm_tokreader *r);

/*
 * Next record. LLM_OK: *rec filled. LLM_EOF: clean end. LLM_EFORMAT: truncated or corrupt
 * (a count over its cap, a token >= vocab size), detail "NAME: record K at byte B: what";
 * the stream cannot be resynchronised, so later calls return the same error. LLM_EIO: read
 * error.
 */
int llm_tokreader_next(llm_tokreader *r, llm_tok_rec *rec);

typedef struct llm_tokwriter llm_tokwriter;

/*
 * Create a token stream at path ("-"/NULL = stdout; atomic temporary name and ".zst" as io.h
 * does) and write the header. h is checked (LLM_EINVAL).
 */
int llm_tokwriter_open(llm_tokwriter **w, const char *path, const llm_tok_header *h);
/* Append a record (see llm_tok_record_encode for the arguments and LLM_EINVAL). */
int llm_tokwriter_write(llm_tokwriter *w, const char *meta, size_t meta_len,
                        const uint32_t *tokens, const uint32_t *inputs, size_t n);
/* The same with tokens as a reader's raw_tokens / raw_inputs hold them: n tokens each at the
 * stream's width (2: any alignment; 4: 4-byte aligned), copied without conversion. */
int llm_tokwriter_write_raw(llm_tokwriter *w, const char *meta, size_t meta_len,
                            const void *raw_tokens, const void *raw_inputs, size_t n);
/* Flush and close (rename into place for files). Frees w. */
int llm_tokwriter_close(llm_tokwriter *w);
const llm_tok_header *llm_tokwriter_header(const llm_tokwriter *w);
uint64_t llm_tokwriter_records(const llm_tokwriter *w);

#endif
