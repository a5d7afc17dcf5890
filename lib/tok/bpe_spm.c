/*
 * bpe_spm.c — a SentencePiece model as an llm_bpe (bpe.h): the pieces fill the vocabulary
 * tables, so that everything that reads a tokenizer (the token stream's vocabulary size,
 * llm_bpe_token, special tokens, BOS and EOS) sees the model's, and the model encodes and
 * decodes the text (bpe.c hands it over).
 */
#include <string.h>

#include "bpe_internal.h"
#include "core/err.h"
#include "core/hash.h"
#include "spm.h"

int llm_bpe_load_spm(llm_bpe **out, const char *data, size_t len, const char *name)
{
	*out = NULL;
	llm_spm *m;
	int rc = llm_spm_load(&m, data, len, name);
	if (rc)
		return rc;
	llm_bpe *b = bpe_new(name);
	b->spm = m;
	b->bytelevel = false; /* pieces of characters; bytes are the <0xXX> pieces */
	uint32_t n = llm_spm_size(m);
	/* Control pieces are special tokens: --special allow splits their text off. The others
	 * are ordinary; the byte index of bpe.c is never searched, so only their bytes matter. */
	for (uint32_t id = 0; id < n && !rc; id++) {
		size_t pl;
		const char *p = llm_spm_piece(m, id, &pl);
		if (llm_spm_type(m, id) == LLM_SPM_CONTROL)
			rc = bpe_add_special(b, p, pl, id, n, NULL);
		else
			rc = bpe_set_token(b, id, p, pl, 0, n);
	}
	if (!rc)
		rc = bpe_finish(b, NULL, false);
	if (rc) {
		llm_bpe_free(b);
		return rc;
	}
	b->eos = llm_spm_eos(m);
	b->bos = llm_spm_bos(m);
	b->unk = llm_spm_unk(m);
	b->lossy = true; /* normalization, the unknown piece */
	b->file_id = llm_hash64(data, len, 0);
	*out = b;
	return LLM_OK;
}
