/*
 * bpe_doc.h — one JSONL document to one token stream record: what every llm-tokenize worker
 * thread does per line.
 *
 * The document's text field is encoded (bpe.h), framed by the optional BOS/EOS ids, and
 * written as a token stream record (tokstream.h) or as a JSONL line holding the chosen
 * metadata fields plus "tokens". The metadata of a record is a JSON object with the
 * document's fields named in meta_keys, copied verbatim.
 *
 * A document that cannot be encoded is not an error of the run: the result names the reason
 * ("bad_json", "no_text", "special_token", "too_many_tokens", "pretokenizer_limit": the text
 * makes the pre-tokenizer's regular expression reach a limit of PCRE2) and the caller rejects the record.
 *
 * Thread safety: an llm_bpe_doc holds per-thread state; create one per thread.
 */
#ifndef LLM_BPE_DOC_H
#define LLM_BPE_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpe.h"
#include "core/buf.h"
#include "tokstream.h"

typedef struct {
	const llm_bpe *bpe;
	const llm_tok_header *header; /* the output stream's header (vocab size, width) */
	const char *field;            /* text field, "text" */
	const char *const *meta_keys; /* NULL-terminated */
	llm_bpe_special special;
	bool bos, eos;
	bool jsonl;                   /* write JSONL lines instead of records */
	/* subword regularization of a SentencePiece model (llm_bpe_enc_sample) */
	bool sample;
	int nbest;
	double alpha;
	uint64_t seed;
} llm_bpe_doc_opts;

typedef struct {
	const char *reason;  /* NULL when encoded; else the reject reason */
	char detail[200];    /* message for a rejected document, truncated */
	char domain[64];     /* the "domain" field, truncated; "" when absent */
	size_t text_bytes;   /* bytes of the text */
	size_t tokens;       /* tokens written, BOS/EOS included */
} llm_bpe_doc_result;

typedef struct llm_bpe_doc llm_bpe_doc;

llm_bpe_doc *llm_bpe_doc_new(const llm_bpe_doc_opts *o);
void llm_bpe_doc_free(llm_bpe_doc *d);

/* Encode one line and append its record (or JSONL line with "\n") to out. Returns LLM_OK
 * (res->reason says whether the document was encoded or is to be rejected) or LLM_EINTERNAL
 * when the pre-tokenizer fails. */
int llm_bpe_doc_encode(llm_bpe_doc *d, const char *line, size_t len, llm_buf *out,
                       llm_bpe_doc_result *res);

#endif
