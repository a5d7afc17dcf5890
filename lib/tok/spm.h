/*
 * spm.h — SentencePiece model files (the `tokenizer.model` of Llama 2, T5, mT5, XLM-R, ...),
 * id for id identical to the sentencepiece library.
 *
 * The file is SentencePiece's ModelProto (protobuf; read with protobuf-c from the subset in
 * sentencepiece_model.proto). Both model types are read:
 *   - BPE: the text's characters (a user-defined symbol is one symbol and never merged) are
 *     merged pairwise, the pair whose joined piece has the highest score first, leftmost on
 *     ties; a merged piece of type UNUSED is split back into the two it was made of;
 *   - Unigram: the segmentation with the highest sum of piece scores (Viterbi), a character
 *     without a piece being the unknown piece at the lowest score minus 10, a user-defined
 *     symbol winning over any other segmentation of its text. Subword regularization samples
 *     a segmentation instead (llm_spm_enc_sample).
 * Before either, the text is normalized as the model's normalizer spec says: the rules of its
 * precompiled_charsmap (what nmt_nfkc, nfkc, nfkc_cf, nmt_nfkc_cf, identity and a custom rule
 * TSV compile into: a double-array trie of the rules' sources and their replacements), extra
 * white space removed (remove_extra_whitespaces), a space put in front (add_dummy_prefix; at
 * the end with treat_whitespace_as_suffix), spaces written as U+2581 (escape_whitespaces).
 * A piece that the model does not have becomes the unknown piece, or with byte_fallback the
 * <0xXX> pieces of its bytes.
 *
 * Decoding joins the pieces, U+2581 back to spaces, the <0xXX> pieces to their bytes (a
 * sequence that is not UTF-8 becomes U+FFFD per byte), the unknown piece to the model's
 * unk_surface (" \xE2\x81\x87 "), control pieces to nothing, and drops the space the dummy
 * prefix put first.
 *
 * Memory: the pieces, a trie over them and the charsmap; an encoder holds scratch for the
 * longest text. Thread safety: an llm_spm is immutable once loaded; one llm_spm_enc per thread.
 */
#ifndef LLM_SPM_H
#define LLM_SPM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpe.h"
#include "core/buf.h"

typedef struct llm_spm llm_spm;

/* Piece types, SentencePiece's numbers. */
enum {
	LLM_SPM_NORMAL = 1,
	LLM_SPM_UNKNOWN = 2,
	LLM_SPM_CONTROL = 3,
	LLM_SPM_USER_DEFINED = 4,
	LLM_SPM_UNUSED = 5,
	LLM_SPM_BYTE = 6
};

/* Whether data looks like a SentencePiece model: a protobuf whose first field is a piece. */
bool llm_spm_is_model(const void *data, size_t len);

/* Read a model file's bytes; name is used in messages. LLM_EFORMAT (the detail says what is
 * wrong) for a protobuf that does not parse or a model that breaks SentencePiece's rules
 * (no unknown piece, duplicate pieces, a byte_fallback model without its 256 byte pieces, a
 * charsmap cut short); LLM_EUNSUPPORTED for the WORD and CHAR model types. */
int llm_spm_load(llm_spm **out, const void *data, size_t len, const char *name);
void llm_spm_free(llm_spm *m);

/* A Hugging Face tokenizer.json Unigram model: n pieces with their scores, the unknown id,
 * byte_fallback (its <0xXX> pieces are then the bytes of unknown characters). It does no
 * normalization (the tokenizer.json's normalizer and pre-tokenizer come before it: use
 * llm_spm_encode_piece), and sums scores in double and puts every piece in the lattice, as
 * tokenizers does; adjacent unknown characters are one unknown piece (fuse_unk).
 * LLM_EFORMAT for duplicate or empty pieces or an unknown id outside the pieces,
 * LLM_EUNSUPPORTED without one (tokenizers then fails on an unknown character). */
int llm_spm_from_vocab(llm_spm **out, const char *name, uint32_t n, const char *const *piece,
                       const size_t *len, const double *score, int64_t unk, bool byte_fallback);

uint32_t llm_spm_size(const llm_spm *m);
/* The bytes of piece id as the file has them (U+2581 for spaces), its type and score. */
const char *llm_spm_piece(const llm_spm *m, uint32_t id, size_t *len);
int llm_spm_type(const llm_spm *m, uint32_t id);
double llm_spm_score(const llm_spm *m, uint32_t id);
/* The trainer spec's unk, bos, eos and pad ids (-1: none). */
int64_t llm_spm_unk(const llm_spm *m);
int64_t llm_spm_bos(const llm_spm *m);
int64_t llm_spm_eos(const llm_spm *m);
/* Whether the model is a Unigram model (else BPE). */
bool llm_spm_is_unigram(const llm_spm *m);

typedef struct llm_spm_enc llm_spm_enc;

llm_spm_enc *llm_spm_enc_new(const llm_spm *m);
void llm_spm_enc_free(llm_spm_enc *e);

/*
 * Subword regularization (Unigram models; Kudo 2018), with SentencePiece's parameters:
 * nbest < 0 samples from all segmentations (forward filtering, backward sampling), nbest > 1
 * from the nbest best ones, each with probability proportional to exp(alpha * score);
 * nbest 0 or 1 is the best segmentation. Each text's sample is drawn from a generator seeded
 * by seed and the text, so a document gets the same segmentation at any thread count and in
 * any order. Ignored by BPE models.
 */
void llm_spm_enc_sample(llm_spm_enc *e, int nbest, double alpha, uint64_t seed);

/* Normalize s[0..n) (any bytes) as the model does; the result is in *norm until the next call
 * with e. */
void llm_spm_normalize(llm_spm_enc *e, const char *s, size_t n, const char **norm,
                       size_t *norm_len);

/* Append the ids of s[0..n) (any bytes) to out. */
void llm_spm_encode(llm_spm_enc *e, const char *s, size_t n, llm_ids *out);
/* The same without normalizing: s[0..n) is a piece an outer pre-tokenizer made. */
void llm_spm_encode_piece(llm_spm_enc *e, const char *s, size_t n, llm_ids *out);

/* Append the text of ids to out. LLM_EINVAL (detail names it) for an id outside the model. */
int llm_spm_decode(const llm_spm *m, const uint32_t *ids, size_t n, llm_buf *out);

#endif
