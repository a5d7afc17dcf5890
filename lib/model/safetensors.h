/*
 * safetensors.h — read and write the safetensors format (Hugging Face), the file format of
 * llmkit checkpoints (model.safetensors, optimizer.safetensors).
 *
 * Format: u64 little-endian header size N; N bytes of JSON, an object mapping each tensor name
 * to {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]} (offsets relative to the
 * byte after the header), plus an optional "__metadata__" object of string values; then the
 * data. The writer pads the header with spaces to a multiple of 8 so tensor data is aligned.
 *
 * Reading validates everything before any access (the input may be hostile): header size
 * against the file, JSON, known dtype, shape product times dtype size equal to the byte range,
 * ranges inside the data and covering it without holes or overlap (as the Rust reference
 * requires), no duplicate names. After a successful parse every accessor is in bounds.
 *
 * Ownership: llm_safetensors_parse keeps pointers into the caller's buffer (which must outlive the
 * object); llm_safetensors_open maps the file read-only and owns the mapping. The writer references
 * the caller's tensor data until llm_safetensors_writer_write returns.
 * Not thread safe for writing; a parsed object may be read from several threads.
 */
#ifndef LLM_SAFETENSORS_H
#define LLM_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

enum {
	LLM_ST_BOOL, LLM_ST_U8, LLM_ST_I8, LLM_ST_I16, LLM_ST_U16, LLM_ST_F16, LLM_ST_BF16,
	LLM_ST_I32, LLM_ST_U32, LLM_ST_F32, LLM_ST_F64, LLM_ST_I64, LLM_ST_U64, LLM_ST_NDTYPES
};
#define LLM_ST_MAX_DIMS 8

/* "F32", ... and element size in bytes. */
const char *llm_safetensors_dtype_name(int dtype);

typedef struct {
	char *name;
	int dtype;
	int ndim;
	int64_t shape[LLM_ST_MAX_DIMS];
	uint64_t numel;
	uint64_t begin, end; /* byte range in the data section */
} llm_safetensors_tensor;

typedef struct llm_safetensors llm_safetensors;

/* Parse a whole file image; name is used in messages. *st is NULL on failure (LLM_EFORMAT
 * with "NAME: what"). */
int llm_safetensors_parse(llm_safetensors **st, const void *data, size_t len, const char *name);
/* Map and parse a file (LLM_EIO when it cannot be read). */
int llm_safetensors_open(llm_safetensors **st, const char *path);
void llm_safetensors_free(llm_safetensors *st);

size_t llm_safetensors_count(const llm_safetensors *st);
/* Tensor i in file order. */
const llm_safetensors_tensor *llm_safetensors_at(const llm_safetensors *st, size_t i);
const llm_safetensors_tensor *llm_safetensors_find(const llm_safetensors *st, const char *name);
/* A tensor's bytes; may be unaligned. */
const void *llm_safetensors_data(const llm_safetensors *st, const llm_safetensors_tensor *t);
/* Metadata value of key (NUL-terminated, unescaped), or NULL. */
const char *llm_safetensors_meta(const llm_safetensors *st, const char *key);

/* Copy tensor `name` into out as fp32 (from F32, BF16, F16 or F64), checking that its shape is
 * exactly shape[0..ndim). LLM_ENOTFOUND if absent; LLM_EFORMAT on a shape or dtype mismatch. */
int llm_safetensors_read_f32(const llm_safetensors *st, const char *name, float *out, int ndim,
                    const int64_t *shape);

typedef struct llm_safetensors_writer llm_safetensors_writer;

llm_safetensors_writer *llm_safetensors_writer_new(void);
void llm_safetensors_writer_free(llm_safetensors_writer *w);
/* Add a tensor (data: numel x dtype size bytes, little-endian, referenced, not copied). */
void llm_safetensors_writer_add(llm_safetensors_writer *w, const char *name, int dtype, int ndim,
                       const int64_t *shape, const void *data);
void llm_safetensors_writer_meta(llm_safetensors_writer *w, const char *key, const char *value);
/* Write to path through a temporary name beside it, fsync, rename. LLM_EIO with detail. */
int llm_safetensors_writer_write(llm_safetensors_writer *w, const char *path);

#endif
