/*
 * shard.h — shards, the mmap-able files llm-train reads (DESIGN §5, llmkit-formats(5) SHARDS),
 * and manifest.json, the list of shards beside them.
 *
 * A shard is written complete or not at all (an unnamed or hidden temporary file, fsynced, then
 * renamed); every section carries an XXH3-64 checksum. Layout, little-endian:
 *
 *   0     4 KiB header: magic "LLMSHRD1"; u32 version (1); u32 token width (2|4); u32 vocab
 *         size; u32 flags (bit 0: noised inputs present); u64 tokenizer id; u64 document count;
 *         u64 token count; u32 end-of-text id (0xffffffff: none); u32 section count (7);
 *         u64 zero; at 64, one 32-byte entry per section: u32 kind (1..7), u32 zero, u64
 *         offset, u64 length, u64 XXH3-64 of the section's bytes; zeros; at 4088 the XXH3-64
 *         of header bytes [0, 4088).
 *   sections, in this order, each at a 4 KiB-aligned offset:
 *     1 tokens        token count x width: all documents back to back
 *     2 doc_offsets   u64 x (documents + 1): document i is tokens [off[i], off[i+1])
 *     3 doc_info      8 bytes per document: u16 domain id, u16 flags, f32 weight
 *     4 inputs        noised inputs, same length and indexing as tokens (empty without flag 0)
 *     5 meta_offsets  u64 x (documents + 1) into meta
 *     6 meta          each document's metadata JSON from the token stream, verbatim
 *     7 domains       JSON array of domain names; a domain id indexes it
 * Each document ends with the end-of-text id: llm-shard appends it to a document whose tokens
 * do not already end with it and sets LLM_SHARD_DOC_EOS_ADDED, so the token stream can be
 * given back exactly (llm-shard --dump).
 *
 * Reading: llm_shard_open maps the file read-only and checks everything that bounds memory
 * accesses (header checksum, sizes against the file, offsets monotonic, domain ids): the
 * accessors below never read outside the mapping, whatever the file holds. Section checksums
 * and token ranges (every token < vocab size) cost a full read of the file, so they are
 * checked only with LLM_SHARD_VERIFY or llm_shard_verify. A reader that uses tokens as indices
 * (embedding rows) must verify, or check each token itself.
 * A shard object is immutable after open: any number of threads may read it concurrently.
 */
#ifndef LLM_SHARD_H
#define LLM_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

#define LLM_SHARD_MAGIC "LLMSHRD1"
#define LLM_SHARD_VERSION 1
#define LLM_SHARD_HEADER_SIZE 4096
#define LLM_SHARD_ALIGN 4096
#define LLM_SHARD_NO_EOS 0xffffffffu
/* Header flag: the inputs section holds noised model inputs. */
#define LLM_SHARD_NOISED 0x1u
/* Document flag: the end-of-text id at the end of this document was added by llm-shard. */
#define LLM_SHARD_DOC_EOS_ADDED 0x1u
#define LLM_SHARD_DOC_TRUNCATED 0x2u /* cut by --truncate-quantile (before the EOS) */

enum {
	LLM_SHARD_SEC_TOKENS = 1,
	LLM_SHARD_SEC_DOC_OFFSETS,
	LLM_SHARD_SEC_DOC_INFO,
	LLM_SHARD_SEC_INPUTS,
	LLM_SHARD_SEC_META_OFFSETS,
	LLM_SHARD_SEC_META,
	LLM_SHARD_SEC_DOMAINS,
	LLM_SHARD_NSECTIONS = LLM_SHARD_SEC_DOMAINS
};

/* Name of a section kind ("tokens", "doc_offsets", ...), for messages and --info. */
const char *llm_shard_section_name(int kind);

typedef struct {
	uint32_t version;
	uint32_t width;        /* bytes per token on disk: 2 or 4 */
	uint32_t vocab_size;
	uint32_t flags;        /* LLM_SHARD_NOISED */
	uint32_t eos_id;       /* or LLM_SHARD_NO_EOS */
	uint64_t tokenizer_id;
	uint64_t docs, tokens; /* tokens includes each document's end-of-text id */
	struct {
		uint64_t offset, length, checksum;
	} sec[LLM_SHARD_NSECTIONS + 1]; /* indexed by kind; sec[0] unused */
	uint64_t header_checksum;
} llm_shard_info;

/* One document of an open shard; pointers into the mapping. */
typedef struct {
	uint64_t start, len;   /* token range [start, start + len), EOS included */
	uint16_t domain;       /* index into llm_shard_domain */
	uint16_t flags;        /* LLM_SHARD_DOC_* */
	float weight;
	const char *meta;      /* metadata JSON (not NUL-terminated) */
	size_t meta_len;
} llm_shard_doc;

typedef struct llm_shard llm_shard;

#define LLM_SHARD_VERIFY 0x1u /* llm_shard_open: also run llm_shard_verify */

/* Map a shard. LLM_EFORMAT with "PATH: section 'x': what" (or "PATH: header: what") when it
 * is not a valid shard; LLM_EIO when it cannot be read. *s is NULL on failure. */
int llm_shard_open(llm_shard **s, const char *path, unsigned flags);
void llm_shard_free(llm_shard *s);
/* Every section checksum, then every token and input below vocab size. The first problem
 * found is the detail: "PATH: section 'tokens': checksum mismatch". */
int llm_shard_verify(const llm_shard *s);
/* Append a human-readable summary (llm-shard --info): header, counts per domain, sections. */
void llm_shard_describe(const llm_shard *s, llm_buf *out);

const llm_shard_info *llm_shard_get_info(const llm_shard *s);
const char *llm_shard_path(const llm_shard *s);

/* Token i (i < tokens), and n tokens from start widened to uint32_t (start + n <= tokens). */
uint32_t llm_shard_token(const llm_shard *s, uint64_t i);
void llm_shard_read_tokens(const llm_shard *s, uint64_t start, size_t n, uint32_t *out);
/* The same for the noised inputs; returns 0 (and leaves out alone) when the shard has none. */
int llm_shard_read_inputs(const llm_shard *s, uint64_t start, size_t n, uint32_t *out);
/* The raw sections: inputs (NULL when none), doc offsets. */
const void *llm_shard_inputs_raw(const llm_shard *s);
const uint64_t *llm_shard_doc_offsets(const llm_shard *s);

/* Document i (i < docs). */
void llm_shard_get_doc(const llm_shard *s, uint64_t i, llm_shard_doc *d);
size_t llm_shard_ndomains(const llm_shard *s);
const char *llm_shard_domain(const llm_shard *s, size_t id); /* NUL-terminated */

/*
 * Writer. One shard file, written to a temporary file in the same directory and renamed to
 * path by llm_shard_writer_close; a killed process leaves nothing under path (and, where the
 * file system has O_TMPFILE, nothing at all). Memory: a 1 MiB write buffer plus 24 bytes per
 * document and the domain names; noised inputs and metadata are spooled to temporary files
 * and copied in at close. The file's writeback starts as it is written (about 64 MiB
 * at most wait in the page cache), so the fsync at close waits for little more than the last part.
 */
typedef struct llm_shard_writer llm_shard_writer;

typedef struct {
	uint32_t width;        /* 2 or 4 */
	uint32_t vocab_size;
	uint32_t eos_id;       /* LLM_SHARD_NO_EOS when documents are delimited by offsets only */
	uint64_t tokenizer_id;
	int noised;            /* documents carry inputs */
} llm_shard_params;

/* A document to add. Tokens come either as uint32_t (tokens, inputs) or, when tokens is
 * NULL, as stored at the shard's width (raw_tokens, raw_inputs; 4-byte aligned for width 4),
 * which llm-shard uses to copy a token stream without converting it. */
typedef struct {
	const uint32_t *tokens;
	const uint32_t *inputs; /* required iff params.noised */
	size_t n;
	const char *domain;     /* NULL or "" = "unknown" */
	float weight;
	uint16_t flags;         /* LLM_SHARD_DOC_TRUNCATED; EOS_ADDED is decided by the writer */
	const char *meta;
	size_t meta_len;
	const void *raw_tokens;
	const void *raw_inputs;
} llm_shard_doc_in;

int llm_shard_writer_open(llm_shard_writer **w, const char *path, const llm_shard_params *p);
/* Append a document, adding the EOS id when it does not end with it. LLM_EINVAL for a token
 * >= vocab size (nothing added), LLM_EIO on a write error. */
int llm_shard_writer_add(llm_shard_writer *w, const llm_shard_doc_in *d);
/* Bytes the shard would have if closed now (for rotation at --shard-size). */
uint64_t llm_shard_writer_bytes(const llm_shard_writer *w);
uint64_t llm_shard_writer_docs(const llm_shard_writer *w);
/* Write the other sections and the header, fsync, rename into place. info (may be NULL)
 * receives the header as written. Frees w. */
int llm_shard_writer_close(llm_shard_writer *w, llm_shard_info *info);
/* Discard everything. Frees w. */
void llm_shard_writer_abort(llm_shard_writer *w);

/*
 * Exports to the formats other trainers read, written atomically like shards:
 *   LLM_EXPORT_MEGATRON  PATH.bin and PATH.idx, Megatron-LM's indexed dataset: tokens as
 *       uint16 when vocab size < 65500, else int32 (its best_fitting_dtype); the .idx is
 *       "MMIDIDX\0\0", u64 version 1, u8 dtype code (8 uint16, 4 int32), u64 sequence
 *       count, u64 document count (+1), int32 lengths, int64 byte pointers, int64 document
 *       indices 0..n: one sequence per document.
 *   LLM_EXPORT_LLMC      PATH: llm.c's 256 int32 header (20240520, version 1, token count)
 *       and uint16 tokens, or (20240801, version 7, count) and uint32 tokens when vocab size
 *       > 65536; fewer than 2^31 tokens per file.
 *   LLM_EXPORT_RAW       PATH: the tokens back to back, uint16 (nanoGPT's train.bin) or
 *       uint32 when vocab size > 65536.
 * Memory: the 1 MiB write buffer; Megatron's lengths are spooled (4 bytes per document).
 */
enum { LLM_EXPORT_MEGATRON, LLM_EXPORT_LLMC, LLM_EXPORT_RAW };
#define LLM_EXPORT_LLMC_MAX_TOKENS (((uint64_t)1 << 31) - 1)
typedef struct llm_export llm_export;

int llm_export_open(llm_export **e, int format, const char *path, uint32_t vocab_size);
/* Append one document (tokens < vocab size, else LLM_EINVAL). LLMC: LLM_EINVAL past
 * LLM_EXPORT_LLMC_MAX_TOKENS. */
int llm_export_add(llm_export *e, const uint32_t *tokens, size_t n);
/* The same for n tokens as a token stream stores them (width 2: little-endian u16 at any
 * alignment; 4: u32, 4-byte aligned; not wider than the export's tokens), followed by eos
 * unless it is LLM_SHARD_NO_EOS: one document of n + 1 tokens. Tokens that already have the
 * export's width are copied without conversion. */
int llm_export_add_raw(llm_export *e, const void *raw, uint32_t width, size_t n, uint32_t eos);
uint64_t llm_export_tokens(const llm_export *e);
/* Bytes of the .bin file so far, LLMC's header included (for rotation against a size). */
uint64_t llm_export_bytes(const llm_export *e);
int llm_export_close(llm_export *e);
void llm_export_abort(llm_export *e);

/*
 * manifest.json: written by llm-shard beside its shards, read by llm-train and llm-eval.
 * { "format": "llmkit-shards", "version": 1, "tokenizer_id": "0123456789abcdef",
 *   "vocab_size": 50257, "token_width": 2, "eos_id": 50256, "noised": false,
 *   "shards": [ {"file": "train-00000.bin", "split": "train", "documents": 10, "tokens": 999,
 *                "bytes": 20480, "header_checksum": "hex16",
 *                "checksums": {"tokens": "hex16", ...}}, ... ],
 *   "splits": {"train": {"documents": 10, "tokens": 999}, "val": {...}},
 *   "domains": {"web": {"train_documents": 1, "train_tokens": 2, "val_documents": 0,
 *               "val_tokens": 0, "truncate_at": 0, "truncated_documents": 0,
 *               "truncated_tokens": 0}, ...},
 *   "commands": ["llm-shard ..."], ... }
 * File names are relative to the manifest's directory and stay inside it: no absolute path,
 * no "..", no empty component. llm-shard puts them in one generation directory, "gen-N/"
 * (llm-shard(1)).
 */
enum { LLM_SPLIT_TRAIN = 0, LLM_SPLIT_VAL = 1, LLM_NSPLITS = 2 };
const char *llm_split_name(int split); /* "train", "val" */

typedef struct {
	char *file;            /* as written in the manifest */
	char *path;            /* resolved against the manifest's directory */
	int split;             /* LLM_SPLIT_* */
	uint64_t docs, tokens, bytes;
	llm_shard_info info;   /* version, sizes and checksums as recorded (writer: as written) */
} llm_manifest_shard;

typedef struct {
	char *name;
	uint64_t docs[LLM_NSPLITS], tokens[LLM_NSPLITS];
	uint64_t truncate_at;  /* token length cut, 0 when not truncated */
	uint64_t truncated_docs, truncated_tokens;
} llm_manifest_domain;

/* Caller-owned: llm_manifest_init / llm_manifest_release. */
typedef struct {
	uint64_t tokenizer_id;
	uint32_t vocab_size, width, eos_id;
	int noised;
	uint64_t split_docs[LLM_NSPLITS], split_tokens[LLM_NSPLITS]; /* loaded: as recorded */
	llm_manifest_shard *shards;
	size_t nshards;
	llm_manifest_domain *domains;
	size_t ndomains;
	char *extra;           /* writer: raw JSON members appended verbatim ("\"commands\": [...]") */
} llm_manifest;

void llm_manifest_init(llm_manifest *m);
void llm_manifest_release(llm_manifest *m);
/* Record a closed shard (file is the name relative to the manifest directory). */
void llm_manifest_add_shard(llm_manifest *m, const char *file, int split,
                            const llm_shard_info *info, uint64_t bytes);
/* The domain entry of that name, created zeroed when new. */
llm_manifest_domain *llm_manifest_domain_get(llm_manifest *m, const char *name);
/* Write atomically. */
int llm_manifest_write(const llm_manifest *m, const char *path);
/*
 * Read a manifest (path to manifest.json) and check that it is one: format and version, every
 * member present and typed, each file name inside the manifest's directory and listed once,
 * the split totals the sums of the shards' counts, and the domains' counts (when there are
 * domains) those totals.
 * LLM_EFORMAT naming the file and what is wrong.
 */
int llm_manifest_load(llm_manifest *m, const char *path);
/* Whether an open shard is the very file the manifest describes: format version, token width,
 * vocab size, tokenizer, end-of-text id, noise flag, counts, size and every checksum of its
 * header. Cheap (the header only); LLM_EFORMAT "PATH: differs from its manifest: what". */
int llm_manifest_check_shard(const llm_manifest *m, const llm_manifest_shard *ms,
                             const llm_shard *s);
/* Append a human-readable summary (llm-shard --info): splits, domains, truncation, shards. */
void llm_manifest_describe(const llm_manifest *m, const char *path, llm_buf *out);

#endif
