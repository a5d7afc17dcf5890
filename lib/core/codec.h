/*
 * codec.h — the compressed formats llmkit reads and writes: zstd, gzip, xz and bzip2, behind
 * one streaming interface, with every checksum each format offers verified when decoding.
 *
 * Decoding follows the reference tools (zstd -d, gzip -d, xz -d, bzip2 -d):
 *   zstd   any number of frames, skippable ones (pzstd's, seekable tables) included; each
 *          frame's content checksum when it has one (libzstd).
 *   gzip   any number of members (pigz, `cat a.gz b.gz`), the CRC-32 and length in each
 *          member's trailer (zlib); NUL bytes after the last member are padding, anything else
 *          there is an error.
 *   xz     concatenated streams and stream padding, each block's check (CRC-32, CRC-64 or
 *          SHA-256; liblzma); at most 1 GiB of decoder memory (xz -9 needs 65 MiB).
 *   bzip2  concatenated streams (pbzip2), every block CRC and the stream CRC (libbz2).
 * A stream that ends early is LLM_EFORMAT "truncated", damaged data LLM_EFORMAT "corrupt":
 * never output that differs silently from what was compressed.
 *
 * Encoding writes what the same tools write at their default levels (zstd 3 with a content
 * checksum, gzip 6, xz 6 with CRC-64, bzip2 9); the output is a function of the input alone
 * (gzip: no name, mtime 0).
 *
 * Memory: zstd ~1 MiB either way; gzip 300 KiB; bzip2 4 MiB decoding, 8 MiB encoding; xz the
 * dictionary of the file decoding (8 MiB for xz -6), 94 MiB encoding. Not thread safe; one
 * codec per stream.
 */
#ifndef LLM_CODEC_H
#define LLM_CODEC_H

#include <stddef.h>

enum { LLM_CODEC_NONE, LLM_CODEC_ZSTD, LLM_CODEC_GZIP, LLM_CODEC_XZ, LLM_CODEC_BZIP2 };

/* Bytes llm_codec_detect needs to see (fewer at the end of a short input is fine). */
#define LLM_CODEC_MAGIC_MAX 6

/* The format whose magic starts p[0..n) (a zstd skippable frame counts as zstd), else NONE. */
int llm_codec_detect(const void *p, size_t n);
/* The format a file name asks for by its suffix: .zst, .gz, .xz, .bz2; else NONE. */
int llm_codec_from_suffix(const char *path);
/* "none", "zstd", "gzip", "xz", "bzip2". */
const char *llm_codec_name(int kind);

typedef struct llm_codec llm_codec;

/* A decoder or encoder of kind (not NONE); name is the file named in messages. */
llm_codec *llm_codec_decoder_new(int kind, const char *name);
llm_codec *llm_codec_encoder_new(int kind, const char *name);
void llm_codec_free(llm_codec *c);

/*
 * Decode from in[*in_pos, in_len) into out[0, cap) (cap > 0), advancing *in_pos and setting
 * *out_len. at_end: nothing follows in_len (the file ends there). Returns
 *   LLM_OK      with *out_len > 0, or with all input consumed when !at_end (give more);
 *   LLM_EOF     the compressed data ended complete and nothing is left to output;
 *   LLM_EFORMAT corrupt, truncated or trailing data: "NAME: corrupt gzip stream: ...".
 */
int llm_codec_decode(llm_codec *c, const void *in, size_t in_len, size_t *in_pos, void *out,
                     size_t cap, size_t *out_len, int at_end);

/*
 * Compress p[0, n) and hand every compressed byte produced to emit (whose failure status is
 * returned at once); finish: end the stream after these bytes (no push may follow).
 * LLM_OK, emit's status, or LLM_EIO from the library naming the file.
 */
typedef int (*llm_codec_emit)(void *ctx, const void *p, size_t n);
int llm_codec_push(llm_codec *c, const void *p, size_t n, int finish, llm_codec_emit emit,
                   void *ctx);

#endif
