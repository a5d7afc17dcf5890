/* bpe_doc.c — a JSONL document to a token stream record (see bpe_doc.h). */
#include "bpe_doc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/json.h"

struct llm_bpe_doc {
	llm_bpe_doc_opts o;
	llm_bpe_enc *enc;
	llm_json_rec rec;
	llm_buf text, meta;
	llm_ids ids;
};

llm_bpe_doc *llm_bpe_doc_new(const llm_bpe_doc_opts *o)
{
	llm_bpe_doc *d = llm_calloc(1, sizeof *d);
	d->o = *o;
	d->enc = llm_bpe_enc_new(o->bpe);
	llm_bpe_enc_valid_utf8(d->enc, true); /* llm_json_parse validates, llm_json_str keeps it so */
	if (o->sample) /* the caller checked that the tokenizer can */
		llm_bpe_enc_sample(d->enc, o->nbest, o->alpha, o->seed);
	llm_json_rec_init(&d->rec);
	llm_ids_init(&d->ids);
	return d;
}

void llm_bpe_doc_free(llm_bpe_doc *d)
{
	if (!d)
		return;
	llm_bpe_enc_free(d->enc);
	llm_json_rec_release(&d->rec);
	llm_buf_release(&d->text);
	llm_buf_release(&d->meta);
	llm_ids_release(&d->ids);
	free(d);
}

/* {"id": ..., "domain": ...} with the fields of meta_keys the record has, in record order. */
static void build_meta(llm_bpe_doc *d, bool open_only)
{
	llm_buf *m = &d->meta;
	llm_buf_reset(m);
	llm_buf_addc(m, '{');
	bool first = true;
	for (size_t i = 0; i < d->rec.nfields; i++) {
		const llm_json_field *f = &d->rec.fields[i];
		bool keep = false;
		for (const char *const *k = d->o.meta_keys; k && *k && !keep; k++)
			keep = llm_json_str_eq(&f->key, *k);
		if (!keep)
			continue;
		if (!first)
			llm_buf_adds(m, ", ");
		first = false;
		llm_buf_add(m, f->key.p, f->key.len);
		llm_buf_adds(m, ": ");
		llm_buf_add(m, f->val.p, f->val.len);
	}
	if (open_only) {
		if (!first)
			llm_buf_adds(m, ", ");
		return;
	}
	llm_buf_addc(m, '}');
}

int llm_bpe_doc_encode(llm_bpe_doc *d, const char *line, size_t len, llm_buf *out,
                       llm_bpe_doc_result *res)
{
	memset(res, 0, sizeof *res);
	if (llm_json_parse(&d->rec, line, len) != LLM_OK) {
		res->reason = "bad_json";
		snprintf(res->detail, sizeof res->detail, "bad JSON at byte %zu: %s", d->rec.err_pos,
		         d->rec.err_msg);
		return LLM_OK;
	}
	const llm_json_val *dom = llm_json_get(&d->rec, "domain");
	if (dom && dom->type == LLM_JSON_STRING) {
		llm_buf_reset(&d->text);
		llm_json_str(dom, &d->text);
		snprintf(res->domain, sizeof res->domain, "%.*s", (int)d->text.len, d->text.p);
	}
	const llm_json_val *t = llm_json_get(&d->rec, d->o.field);
	if (!t || t->type != LLM_JSON_STRING) {
		res->reason = "no_text";
		snprintf(res->detail, sizeof res->detail, "%s field '%s'", t ? "non-string" : "missing",
		         d->o.field);
		return LLM_OK;
	}
	llm_buf_reset(&d->text);
	llm_json_str(t, &d->text);
	res->text_bytes = d->text.len;
	const llm_bpe *b = d->o.bpe;
	d->ids.n = 0;
	if (d->o.bos)
		llm_ids_push(&d->ids, (uint32_t)llm_bpe_bos(b));
	int rc = llm_bpe_encode(d->enc, d->text.p, d->text.len, d->o.special, &d->ids);
	if (rc == LLM_EFORMAT) {
		res->reason = "special_token";
		snprintf(res->detail, sizeof res->detail, "%s", llm_last_error());
		return LLM_OK;
	}
	if (rc == LLM_ETOOLONG) {
		res->reason = "pretokenizer_limit";
		snprintf(res->detail, sizeof res->detail, "%s", llm_last_error());
		return LLM_OK;
	}
	if (rc)
		return rc;
	if (d->o.eos)
		llm_ids_push(&d->ids, (uint32_t)llm_bpe_eos(b));
	res->tokens = d->ids.n;
	if (d->o.jsonl) {
		build_meta(d, true);
		llm_buf_add(out, d->meta.p, d->meta.len);
		llm_buf_adds(out, "\"tokens\": [");
		for (size_t i = 0; i < d->ids.n; i++)
			llm_buf_addf(out, i ? ", %u" : "%u", d->ids.v[i]);
		llm_buf_adds(out, "]}\n");
		return LLM_OK;
	}
	build_meta(d, false);
	rc = llm_tok_record_encode(out, d->o.header, d->meta.p, d->meta.len, d->ids.v, NULL, d->ids.n);
	if (rc) {
		/* Only a document over the stream's per-record caps gets here. */
		res->reason = "too_many_tokens";
		snprintf(res->detail, sizeof res->detail, "%s", llm_last_error());
	}
	return LLM_OK;
}
