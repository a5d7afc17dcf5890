/*
 * spm_internal.h — the tables of an llm_spm, shared by spm.c (loading, normalizing,
 * decoding) and spm_encode.c (BPE merging, Viterbi, sampling). Not part of libllm's interface.
 */
#ifndef LLM_SPM_INTERNAL_H
#define LLM_SPM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/hash.h"
#include "spm.h"

#define SPM_NONE UINT32_MAX

/* An edge of the piece trie: (node << 8 | byte) + 1 -> child node; key 0 = empty. */
typedef struct {
	uint64_t key;
	uint32_t child;
} spm_edge;

struct llm_spm {
	uint32_t n;                /* pieces */
	uint32_t *off, *len;       /* bytes of piece i: arena[off[i] .. + len[i]] */
	double *score;             /* a file's floats; a tokenizer.json's doubles */
	unsigned char *type;       /* LLM_SPM_* */
	llm_buf arena;
	/* The trie over every piece's bytes. A node's piece is the id whose bytes lead to it:
	 * `piece` for SentencePiece's pieces_ (NORMAL, USER_DEFINED, UNUSED), what merging and
	 * Viterbi search; `reserved` for the others (CONTROL, UNKNOWN, BYTE), which only a
	 * lookup of a whole piece finds, first. */
	uint32_t *piece, *reserved; /* per node, or SPM_NONE */
	uint32_t nnodes;
	spm_edge *edges;
	size_t emask;
	unsigned char udef_first[256]; /* a user-defined symbol starts with this byte */
	bool any_udef;
	bool unigram, byte_fallback;
	bool add_dummy_prefix, remove_extra_ws, escape_ws, ws_suffix;
	int64_t unk, bos, eos, pad;
	uint32_t byte_id[256];     /* <0xXX> pieces (byte_fallback) */
	double min_score, max_score; /* over NORMAL pieces (Unigram's unknown and user scores) */
	/* A Hugging Face Unigram model (llm_spm_from_vocab): no normalization here, scores and
	 * path sums in double, every piece (the unknown one too) in the lattice. */
	bool hf;
	char *unk_surface;
	/* The precompiled charsmap: a darts-clone double array over the rules' sources, whose
	 * values are offsets of NUL-terminated replacements in norm. */
	uint32_t *darts;
	size_t ndarts;
	char *norm;
	size_t norm_len;
	char *name;
};

/* Per thread: the normalized text, the symbols of BPE or the lattice of Unigram. */
struct llm_spm_enc {
	const llm_spm *m;
	llm_buf norm;
	/* BPE */
	struct spm_sym *sym;
	size_t symcap;
	struct spm_agenda *heap;
	size_t heapcap;
	/* Unigram: per byte position of the normalized text */
	struct spm_best *best;
	size_t bestcap;
	llm_ids tmp;
	/* sampling */
	int nbest;
	double alpha;
	uint64_t seed;
	bool sample;
	double *fwd;
	size_t fwdcap;
	struct spm_kbest *kb;
	size_t kbcap;
};

/* The child of node along byte c, or SPM_NONE. */
static inline uint32_t spm_step(const llm_spm *m, uint32_t node, unsigned char c)
{
	uint64_t key = ((uint64_t)node << 8 | c) + 1;
	size_t i = (size_t)(llm_mix64(key) & m->emask);
	while (m->edges[i].key) {
		if (m->edges[i].key == key)
			return m->edges[i].child;
		i = (i + 1) & m->emask;
	}
	return SPM_NONE;
}

/* The trie node of s[0..n), or SPM_NONE. */
static inline uint32_t spm_node(const llm_spm *m, const char *s, size_t n)
{
	uint32_t node = 0;
	for (size_t i = 0; i < n && node != SPM_NONE; i++)
		node = spm_step(m, node, (unsigned char)s[i]);
	return node;
}

/* SentencePiece's PieceToId: reserved pieces first, then pieces_, else the unknown id. */
uint32_t spm_piece_to_id(const llm_spm *m, const char *s, size_t n);
/* The byte length of the user-defined symbol that s[0..n) starts with (longest), or 0. */
size_t spm_udef_prefix(const llm_spm *m, const char *s, size_t n);
/* The id of piece s[0..n) or the <0xXX> pieces of its bytes under byte_fallback, appended
 * to out (SentencePiece's processor after its model). */
void spm_emit(const llm_spm *m, const char *s, size_t n, uint32_t id, llm_ids *out);

#endif
