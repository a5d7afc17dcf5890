/*
 * json.h — JSON for JSONL document streams, without building a tree.
 *
 * llm_json_parse validates one complete JSON object (RFC 8259: strings must be valid UTF-8,
 * escapes valid, \u surrogates paired; nesting depth up to 512) and indexes its top-level
 * fields: key and value as spans of the source text. Nested values are validated, not indexed.
 * Nothing is copied; the record points into the caller's line, which must outlive it.
 * On malformed input it returns LLM_EFORMAT with rec->err_pos (byte offset) and rec->err_msg.
 *
 * Editing keeps a record byte-for-byte: llm_json_write copies the source, replacing the values
 * of keys that are set, dropping deleted keys, and appending new keys at the end in the order
 * they were set, using the separator style of the record (", " and ": " when it has none).
 * A record nobody edits is written back unchanged.
 *
 * Strings written by llmkit: UTF-8 kept as is (like ensure_ascii=False), '"', '\\' and control
 * characters escaped (\n \r \t \b \f, else \u00XX), U+2028/U+2029 escaped for JavaScript
 * consumers. Invalid UTF-8 given to llm_json_put_str is replaced by U+FFFD.
 *
 * llm_json_next walks a nested value (array elements, object members) for readers of config
 * files (tokenizer.json, config.json, manifest.json).
 *
 * Thread safety: none needed; all state is in the structs the caller owns.
 */
#ifndef LLM_JSON_H
#define LLM_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

typedef enum {
	LLM_JSON_INVALID = 0,
	LLM_JSON_NULL,
	LLM_JSON_FALSE,
	LLM_JSON_TRUE,
	LLM_JSON_NUMBER,
	LLM_JSON_STRING,
	LLM_JSON_ARRAY,
	LLM_JSON_OBJECT
} llm_json_type;

/* A JSON value as a span of source text (for strings: including the quotes). */
typedef struct {
	const char *p;
	size_t len;
	llm_json_type type;
} llm_json_val;

typedef struct {
	llm_json_val key; /* the key string, quotes included */
	llm_json_val val;
} llm_json_field;

typedef struct {
	const char *src;
	size_t len;
	llm_json_field *fields;
	size_t nfields, cap;
	size_t err_pos;
	const char *err_msg; /* static string */
} llm_json_rec;

void llm_json_rec_init(llm_json_rec *rec);
void llm_json_rec_release(llm_json_rec *rec);

/* Parse one object spanning all of s[0..n) (surrounding whitespace allowed). */
int llm_json_parse(llm_json_rec *rec, const char *s, size_t n);
/* Validate any single JSON value spanning s[0..n); fills *v. */
int llm_json_parse_value(const char *s, size_t n, llm_json_val *v, size_t *err_pos,
                         const char **err_msg);

/* Top-level field by (unescaped) key, or NULL. The last one wins when a key repeats. */
const llm_json_val *llm_json_get(const llm_json_rec *rec, const char *key);

/* Append the unescaped content of a string value to out (LLM_EINVAL if v is not a string).
 * It is valid UTF-8 when the record or value parsed: the parsers check the bytes, and an
 * escaped lone surrogate becomes U+FFFD. */
int llm_json_str(const llm_json_val *v, llm_buf *out);
/* Convenience: field as string / number / integer / bool. LLM_ENOTFOUND if absent,
 * LLM_EINVAL if of another type. */
int llm_json_get_str(const llm_json_rec *rec, const char *key, llm_buf *out);
int llm_json_get_num(const llm_json_rec *rec, const char *key, double *out);
int llm_json_get_i64(const llm_json_rec *rec, const char *key, int64_t *out);
int llm_json_num(const llm_json_val *v, double *out);
int llm_json_i64(const llm_json_val *v, int64_t *out);
/* Compare a string value with a C string without unescaping into a buffer when possible. */
int llm_json_str_eq(const llm_json_val *v, const char *s);
/* Whether obj's member key is a string equal to s. */
int llm_json_member_eq(const llm_json_val *obj, const char *key, const char *s);
/* A string value unescaped into a new NUL-terminated copy (its length in *len), or NULL when
 * v is not a valid string. */
char *llm_json_dup_str(const llm_json_val *v, size_t *len);

/*
 * Iterate the elements of an array or the members of an object:
 *   size_t it = 0; llm_json_val key, val;
 *   while (llm_json_next(&container, &it, &key, &val) == LLM_OK) ...
 * key is unset for arrays. Returns LLM_EOF after the last one. container must be valid
 * (it came from a parse).
 */
int llm_json_next(const llm_json_val *container, size_t *it, llm_json_val *key, llm_json_val *val);
/* Member of an object value by key, or NULL-typed (type INVALID) when absent. */
llm_json_val llm_json_member(const llm_json_val *obj, const char *key);

/* Output helpers. */
void llm_json_put_str(llm_buf *out, const char *s, size_t n);
void llm_json_put_f64(llm_buf *out, double x); /* shortest round-trip; NaN/Inf become null */

typedef struct {
	llm_buf keys;   /* NUL-separated unescaped keys */
	llm_buf vals;   /* raw JSON values, back to back */
	size_t *kofs, *vofs, *vlen; /* per edit: key offset, value offset, value length */
	unsigned char *del;         /* per edit: 1 = delete this key */
	size_t n, cap;
} llm_json_edit;

void llm_json_edit_init(llm_json_edit *ed);
void llm_json_edit_release(llm_json_edit *ed);
void llm_json_edit_reset(llm_json_edit *ed);
void llm_json_edit_raw(llm_json_edit *ed, const char *key, const char *raw, size_t n);
void llm_json_edit_str(llm_json_edit *ed, const char *key, const char *s, size_t n);
void llm_json_edit_f64(llm_json_edit *ed, const char *key, double x);
void llm_json_edit_i64(llm_json_edit *ed, const char *key, int64_t x);
void llm_json_edit_del(llm_json_edit *ed, const char *key);

/* Append rec with edits applied (no newline). ed may be NULL. */
void llm_json_write(const llm_json_rec *rec, const llm_json_edit *ed, llm_buf *out);

#endif
