/*
 * bpe.h — BPE tokenizers, token for token identical to tiktoken and Hugging Face tokenizers.
 *
 * Loaders (bpe_load.c):
 *   - tiktoken rank files ("base64 rank" per line, CRLF accepted) with a named encoding
 *     (gpt2/r50k, p50k, cl100k, o200k, llama3, qwen, qwen3.5: pattern and special tokens), or
 *     with special tokens and a pattern given;
 *   - Hugging Face tokenizer.json with a Unigram model (spm.h's Viterbi per pre-tokenized
 *     piece, llm_spm_from_vocab) or a BPE model, byte-level (a ByteLevel pre-tokenizer or
 *     decoder: the vocabulary is written in GPT-2's byte map) or over characters
 *     (SentencePiece-style, with byte_fallback, unk_token, fuse_unk): vocab, merges as "a b"
 *     or ["a", "b"], ignore_merges; its normalizer (hfnorm.h), pre-tokenizer (hfpretok.h),
 *     added tokens with their flags, and decoder (ByteLevel, Metaspace, Replace,
 *     ByteFallback, Fuse, Strip). Saved truncation/padding and the post-processor are
 *     ignored (--bos/--eos decide); what is not implemented is refused by name
 *     (LLM_EUNSUPPORTED) rather than approximated;
 *   - GPT-2 vocab.json + merges.txt (the pattern of a tokenizer.json beside them, else GPT-2's
 *     with a warning);
 *   - SentencePiece model files (tokenizer.model), BPE and Unigram, which spm.h encodes.
 * Every loader checks what it reads: bad base64, duplicate ranks or tokens, a merge whose
 * parts or result are not in the vocabulary, ids out of range all give LLM_EFORMAT with a
 * detail naming the file and line or entry.
 *
 * Encoding, as tokenizers orders it: added tokens matched in the text as given are split off
 * (leftmost, longest; lstrip/rstrip take the white space beside them, single_word ones match
 * only between non-word characters); each text between them is normalized and searched for
 * the added tokens matched after normalization; the rest is pre-tokenized and each piece is
 * looked up whole (tiktoken, and HF with ignore_merges), else merged: the adjacent pair of
 * lowest merge rank first, leftmost on ties, which is the order of both references. Short
 * pieces use a linear scan, long ones a heap over a linked list, so a piece of n symbols
 * costs O(n log n). Pairs are found in per-left-token sorted lists behind a small per-encoder
 * pair cache; frequent pieces are cached per encoder. Special tokens (tiktoken's, and added
 * tokens marked special) follow the llm_bpe_special mode; other added tokens always split.
 *
 * Ids: tiktoken ranks are ids; special tokens take the ids of their encoding. The vocabulary
 * size (llm_bpe_vocab_size) is the largest id plus one; ids without a token ("holes") decode
 * to nothing and are refused by llm_bpe_decode.
 *
 * Memory: the vocabulary (its bytes, the byte index, the pair lists and the backtracking
 * tables) shared by all threads: a process that loads cl100k holds 38 MB, o200k 72 MB; an
 * encoder holds its caches (about 1.4 MiB) and scratch for the longest piece.
 * Thread safety: llm_bpe is immutable after loading; use one llm_bpe_enc per thread. Loading
 * with llm_bpe_load_opts.threads builds the pair lists and the backtracking tables on that
 * many threads (pool.h), which it starts and joins; the tables do not depend on the count.
 */
#ifndef LLM_BPE_H
#define LLM_BPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

typedef struct llm_bpe llm_bpe;

/* A growable array of token ids owned by the caller. */
typedef struct {
	uint32_t *v;
	size_t n, cap;
} llm_ids;

void llm_ids_init(llm_ids *ids);
void llm_ids_release(llm_ids *ids);
void llm_ids_push(llm_ids *ids, uint32_t id);

/*
 * Load a tokenizer file. The format is detected: a JSON object with "model" is a
 * tokenizer.json, another JSON object is a GPT-2 vocab.json (merges must then name
 * merges.txt), anything else a tiktoken rank file. encoding names the pattern and special
 * tokens of a rank file (NULL: derived from the file name, e.g. "cl100k_base.tiktoken");
 * pattern, when not NULL, replaces the pre-tokenizer pattern of any format.
 * On failure *out is NULL and the detail names the file.
 */
int llm_bpe_load(llm_bpe **out, const char *path, const char *merges, const char *encoding,
                 const char *pattern);

/* llm_bpe_load with every option. */
typedef struct {
	const char *merges;   /* merges.txt of a GPT-2 vocab.json */
	const char *encoding; /* rank file: the named encoding (NULL: from the file name) */
	const char *pattern;  /* a pre-tokenizer regex replacing the file's, or NULL */
	const char *specials; /* rank file: a JSON object {"text": id, ...} of the special tokens,
	                       * replacing the encoding's (then the encoding names only the pattern) */
	int threads;          /* threads building the tables (below 2: the caller's alone); the
	                       * tables are the same for any count. LLM_EIO when they cannot start */
} llm_bpe_load_opts;

int llm_bpe_load_with(llm_bpe **out, const char *path, const llm_bpe_load_opts *o);

/* The loaders over bytes in memory (the fuzz targets' entry points), in bpe_load.c. name is
 * used in messages and as the default encoding name of a rank file; merges_name names
 * merges.txt in messages about its lines. */
int llm_bpe_load_tiktoken(llm_bpe **out, const char *data, size_t len, const char *name,
                          const char *encoding, const char *pattern, const char *specials,
                          size_t specials_len, const char *specials_name);
int llm_bpe_load_hf(llm_bpe **out, const char *data, size_t len, const char *name,
                         const char *pattern);
int llm_bpe_load_gpt2(llm_bpe **out, const char *vocab, size_t vocab_len, const char *merges,
                      size_t merges_len, const char *name, const char *merges_name,
                      const char *pattern);

/* A SentencePiece model file (spm.h), BPE or Unigram: its pieces are the vocabulary, its
 * control pieces (<s>, </s>) the special tokens, its bos and eos ids BOS and EOS; the model
 * encodes and decodes the text. */
int llm_bpe_load_spm(llm_bpe **out, const char *data, size_t len, const char *name);

void llm_bpe_free(llm_bpe *bpe);

uint32_t llm_bpe_vocab_size(const llm_bpe *bpe);
/* XXH3-64 of the tokenizer file(s) as read (the token stream's tokenizer id). */
uint64_t llm_bpe_file_id(const llm_bpe *bpe);
/* The bytes of a token (special tokens: their text), or NULL for an id without a token. */
const char *llm_bpe_token(const llm_bpe *bpe, uint32_t id, size_t *len);
bool llm_bpe_is_special(const llm_bpe *bpe, uint32_t id);
/* Whether decoding gives back any text encoded, byte for byte: false when a normalizer,
 * a pre-tokenizer that drops or rewrites text (Removed, Metaspace, a prefix space), added
 * tokens that take the white space beside them, or a character-level model (unknown
 * characters, the Metaspace replacement) may change it. */
bool llm_bpe_roundtrips(const llm_bpe *bpe);
/* The id of a special token by its text, or -1. */
int64_t llm_bpe_special_id(const llm_bpe *bpe, const char *text);
/* End-of-text and beginning-of-text ids: the encoding's (<|endoftext|>, <|end_of_text|>,
 * <|begin_of_text|>, <s>, </s>, ...) or -1 when it has none. */
int64_t llm_bpe_eos(const llm_bpe *bpe);
int64_t llm_bpe_bos(const llm_bpe *bpe);

/* What encoding does with special-token text inside a document. */
typedef enum {
	LLM_BPE_SPECIAL_ALLOW,  /* it becomes the special token's id */
	LLM_BPE_SPECIAL_IGNORE, /* it is ordinary text */
	LLM_BPE_SPECIAL_ERROR   /* llm_bpe_encode fails with LLM_EFORMAT */
} llm_bpe_special;

typedef struct llm_bpe_enc llm_bpe_enc;

llm_bpe_enc *llm_bpe_enc_new(const llm_bpe *bpe);
void llm_bpe_enc_free(llm_bpe_enc *enc);
/* Whether every text enc encodes is known to be valid UTF-8 (default false), as the decoded
 * string of a record llm_json_parse accepted always is: the pre-tokenizer then does not
 * check it again, a tenth of the instructions of encoding Chinese. A text that breaks the
 * promise may be read past its end. */
void llm_bpe_enc_valid_utf8(llm_bpe_enc *enc, bool valid);
/* Sample segmentations instead of the best one (a SentencePiece model: llm_spm_enc_sample's
 * nbest, alpha and seed; BPE-dropout for its BPE models). LLM_EUNSUPPORTED for other
 * tokenizers. */
int llm_bpe_enc_sample(llm_bpe_enc *enc, int nbest, double alpha, uint64_t seed);

/*
 * Append the ids of s[0..n) (any bytes) to out. LLM_EFORMAT for special-token text under
 * LLM_BPE_SPECIAL_ERROR (detail names the token; out is unchanged), LLM_ETOOLONG when the
 * text makes the pre-tokenizer reach a limit of PCRE2 (llm_pretok_next; out then holds part of
 * the ids), LLM_EINTERNAL when the pre-tokenizer fails otherwise.
 */
int llm_bpe_encode(llm_bpe_enc *enc, const char *s, size_t n, llm_bpe_special special,
                   llm_ids *out);

/* Append the bytes of ids to out. LLM_EINVAL (detail names it) for an id without a token. */
int llm_bpe_decode(const llm_bpe *bpe, const uint32_t *ids, size_t n, llm_buf *out);

/* GPT-2's reversible byte <-> code point map that byte-level vocabularies are written in. */
uint32_t llm_bpe_byte_to_cp(unsigned char b);
/* The byte for a code point of that map, or -1. */
int llm_bpe_cp_to_byte(uint32_t cp);

#endif
