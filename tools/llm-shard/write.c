/*
 * write.c — llm-shard writing: each document to its split's shard or export, rotated at
 * --shard-size; the manifest; the switch to the new generation.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "llm-shard.h"
#include "core/fault.h"
#include "core/hash.h"
#include "core/tmpfile.h"
#include "data/tokjson.h"

/* The first input fixes the header; later ones must agree with it. */
static int check_header(struct shard_run *r, const llm_tokreader *tr)
{
	const llm_tok_header *h = llm_tokreader_header(tr);
	const char *name = llm_tokreader_name(tr);
	if (!r->have_header) {
		if (r->tokenizer_id && h->tokenizer_id && h->tokenizer_id != r->tokenizer_id) {
			llm_error("%s: made with another tokenizer than --tokenizer", name);
			return 1;
		}
		if (r->eos != LLM_SHARD_NO_EOS && r->eos >= h->vocab_size) {
			llm_error("%s: end-of-text id %u is not below the vocab size %u", name, r->eos,
			          h->vocab_size);
			return 1;
		}
		r->h = *h;
		r->have_header = 1;
		return 0;
	}
	if (h->width != r->h.width || h->vocab_size != r->h.vocab_size ||
	    h->tokenizer_id != r->h.tokenizer_id || h->flags != r->h.flags) {
		llm_error("%s: token width, vocab size, tokenizer or noise flag differ from the first input",
		          name);
		return 1;
	}
	return 0;
}

static char *sink_name(const struct shard_run *r, int split, unsigned index)
{
	llm_buf b = LLM_BUF_INIT;
	const char *sp = llm_split_name(split);
	const char *pre = r->prefix ? r->prefix : "", *sep = r->prefix ? "-" : "";
	switch (r->format) {
	case SHARD_FMT_SHARDS: llm_buf_addf(&b, "%s%s%s-%05u.bin", pre, sep, sp, index); break;
	case LLM_EXPORT_LLMC: llm_buf_addf(&b, "%s%s%s_%06u.bin", pre, r->prefix ? "_" : "", sp, index); break;
	case LLM_EXPORT_MEGATRON: llm_buf_addf(&b, "%s%s%s", pre, sep, sp); break;
	default: llm_buf_addf(&b, "%s%s%s.bin", pre, sep, sp); break;
	}
	return llm_buf_detach(&b, NULL);
}

static int sink_close(struct shard_run *r, shard_sink *s)
{
	int st = LLM_OK;
	if (s->w) {
		llm_shard_info info;
		st = llm_shard_writer_close(s->w, &info);
		if (st == LLM_OK) {
			char *file = sink_name(r, s->split, s->index);
			llm_buf rel = LLM_BUF_INIT;
			llm_buf_addf(&rel, "%s/%s", r->gen, file);
			struct stat sb;
			llm_manifest_add_shard(&r->m, rel.p, s->split, &info,
			                       stat(s->path, &sb) == 0 ? (uint64_t)sb.st_size : 0);
			llm_run_count(r->run, "shards", 1);
			llm_buf_release(&rel);
			free(file);
			llm_fault_point("shard-closed");
		}
	} else if (s->e) {
		st = llm_export_close(s->e);
		llm_run_count(r->run, "files", 1);
	}
	if (st != LLM_OK)
		llm_error("%s", llm_last_error());
	s->w = NULL;
	s->e = NULL;
	free(s->path);
	s->path = NULL;
	s->index++;
	return st != LLM_OK;
}

/* Open the split's next file when there is none or this document would overflow it. */
static int sink_ready(struct shard_run *r, shard_sink *s, size_t ntok, size_t meta_len)
{
	uint64_t per = r->h.width * ((r->h.flags & LLM_TOK_NOISED) && r->format == SHARD_FMT_SHARDS ? 2 : 1);
	uint64_t add = (ntok + 1) * per + meta_len + 24;
	if (s->w && llm_shard_writer_docs(s->w) &&
	    llm_shard_writer_bytes(s->w) + add > r->shard_size && sink_close(r, s))
		return 1;
	if (s->e && r->format == LLM_EXPORT_LLMC && llm_export_tokens(s->e) &&
	    (llm_export_bytes(s->e) + add > r->shard_size ||
	     llm_export_tokens(s->e) + ntok + 1 > LLM_EXPORT_LLMC_MAX_TOKENS) && sink_close(r, s))
		return 1;
	if (s->w || s->e)
		return 0;
	char *file = sink_name(r, s->split, s->index);
	llm_buf p = LLM_BUF_INIT;
	llm_buf_addf(&p, "%s/%s%s%s", r->dir, r->gen ? r->gen : "", r->gen ? "/" : "", file);
	free(file);
	s->path = llm_buf_detach(&p, NULL);
	int st;
	if (r->format == SHARD_FMT_SHARDS) {
		llm_shard_params par = { r->h.width, r->h.vocab_size, r->eos, r->h.tokenizer_id,
			                 !!(r->h.flags & LLM_TOK_NOISED) };
		st = llm_shard_writer_open(&s->w, s->path, &par);
	} else {
		st = llm_export_open(&s->e, r->format, s->path, r->h.vocab_size);
	}
	if (st != LLM_OK)
		die_lib();
	return 0;
}

/* Token n - 1 of a record, from its stored bytes. */
static uint32_t last_token(const llm_tok_header *h, const llm_tok_rec *t, size_t n)
{
	const unsigned char *p = (const unsigned char *)t->raw_tokens + (n - 1) * h->width;
	uint32_t v = 0;
	memcpy(&v, p, h->width); /* little-endian host (tokstream.c checks) */
	return v;
}

/* Tokens go to shards and exports as the stream stores them: the reader does not widen them
 * (shard_one) and nothing here copies them. */
static int add_doc(struct shard_run *r, const llm_tok_rec *t, const shard_meta *f, size_t n,
                   int split, int truncated)
{
	shard_sink *s = &r->sinks[split];
	if (sink_ready(r, s, n, t->meta_len))
		return 1;
	int st;
	if (s->w) {
		llm_shard_doc_in d = { .n = n, .domain = f->domain, .weight = f->weight,
			               .flags = truncated ? LLM_SHARD_DOC_TRUNCATED : 0,
			               .meta = t->meta, .meta_len = t->meta_len,
			               .raw_tokens = t->raw_tokens, .raw_inputs = t->raw_inputs };
		st = llm_shard_writer_add(s->w, &d);
	} else {
		if (t->raw_inputs && !r->warned_inputs++)
			llm_warn("noised inputs are not exported: %s holds one sequence per document",
			         r->format == LLM_EXPORT_MEGATRON ? "megatron" : r->format == LLM_EXPORT_LLMC ? "llmc" : "raw");
		int eos = r->eos != LLM_SHARD_NO_EOS && (n == 0 || last_token(&r->h, t, n) != r->eos);
		st = llm_export_add_raw(s->e, t->raw_tokens, r->h.width, n, eos ? r->eos : LLM_SHARD_NO_EOS);
	}
	if (st != LLM_OK)
		die_lib();
	return 0;
}

/* A record that cannot be written as it is: with --strict it stops the run (reported, and
 * not counted in, so that in = out + rejected still holds); else it is warned about and
 * rejected, its tokens kept in the rejects file. Returns 1 to stop. */
static int reject_doc(struct shard_run *r, const char *name, const llm_tok_rec *t,
                      const shard_meta *f, size_t bytes)
{
	if (r->strict) {
		llm_error_at(name, t->index + 1, "%s", f->why);
		return 1;
	}
	llm_warn_at(name, t->index + 1, "%s", f->why);
	int dom = llm_run_in(r->run, bytes, f->domain, strlen(f->domain));
	llm_buf_reset(&r->extra);
	llm_tokjson_members(&r->extra, t, r->h.width);
	if (llm_run_reject(r->run, dom, f->bad, t->meta, t->meta_len, f->parsed ? &r->rec : NULL,
	                   r->extra.p, name, t->index + 1) != LLM_OK)
		die_lib();
	return 0;
}

static int shard_one(struct shard_run *r, const char *path, const char *name)
{
	llm_tokreader *tr;
	if (llm_tokreader_open(&tr, path) != LLM_OK) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	if (check_header(r, tr)) {
		llm_tokreader_free(tr);
		return 1;
	}
	llm_tokreader_set_widen(tr, 0); /* see add_doc */
	llm_run_begin_input(r->run, name, llm_tokreader_size(tr));
	llm_tok_rec t;
	shard_meta f;
	int st, failed = 0;
	while (!failed && (st = llm_tokreader_next(tr, &t)) == LLM_OK) {
		size_t bytes = 8 + t.meta_len + t.n * r->h.width * (t.raw_inputs ? 2 : 1);
		shard_parse_meta(r, &t, &f);
		if (f.bad) {
			failed = reject_doc(r, name, &t, &f, bytes);
			continue;
		}
		int dom = llm_run_in(r->run, bytes, f.domain, strlen(f.domain));
		uint64_t key = f.id ? llm_hash64(f.id, f.id_len, r->seed)
		                    : llm_hash64(t.raw_tokens, t.n * r->h.width, r->seed ^ 0x5eed);
		int split = (double)(key >> 11) * 0x1p-53 < r->val_fraction ? LLM_SPLIT_VAL : LLM_SPLIT_TRAIN;
		shard_domain *d = shard_find_domain(r, f.domain);
		size_t n = t.n;
		int truncated = d->cut && n > d->cut;
		if (truncated) {
			n = (size_t)d->cut;
			llm_run_count_domain(r->run, dom, "truncated", 1);
			llm_run_count_domain(r->run, dom, "truncated_tokens", t.n - n);
			llm_run_count(r->run, "truncated", 1);
		}
		failed = add_doc(r, &t, &f, n, split, truncated);
		llm_manifest_domain *md = llm_manifest_domain_get(&r->m, f.domain);
		md->docs[split]++;
		md->tokens[split] += n + (r->eos != LLM_SHARD_NO_EOS && (n == 0 || last_token(&r->h, &t, n) != r->eos));
		md->truncate_at = d->cut;
		if (truncated) {
			md->truncated_docs++;
			md->truncated_tokens += t.n - n;
		}
		if (split == LLM_SPLIT_VAL)
			llm_run_count(r->run, "val", 1);
		llm_run_out(r->run, dom, bytes);
		llm_run_progress(r->run, llm_tokreader_raw_bytes(tr));
	}
	if (!failed && st != LLM_EOF) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	llm_tokreader_free(tr);
	return failed;
}

/* Write every input into the splits' sinks; returns 1 on a failure (reported). */
int shard_write_inputs(struct shard_run *r, const shard_inputs *in)
{
	int failed = 0;
	llm_manifest_init(&r->m);
	for (int sp = 0; sp < LLM_NSPLITS; sp++)
		r->sinks[sp].split = sp;
	for (int i = 0; i < in->n && !(failed && r->strict); i++)
		failed |= shard_one(r, in->path[i], in->path[i] == in->spooled ? "<stdin>" : in->path[i]);
	for (int sp = 0; sp < LLM_NSPLITS; sp++)
		failed |= sink_close(r, &r->sinks[sp]);
	/* An empty input is a stage upstream that died: a dataset of nothing would hide it. */
	if (!failed && llm_run_records_in(r->run) == 0) {
		llm_error("no documents in the input: no %s written",
		          r->format == SHARD_FMT_SHARDS ? "dataset" : "export");
		failed = 1;
	}
	return failed;
}

/* DIR/manifest.json, with the options that made the dataset; returns 1 on failure (reported). */
int shard_write_manifest(struct shard_run *r)
{
	r->m.tokenizer_id = r->h.tokenizer_id;
	r->m.vocab_size = r->h.vocab_size;
	r->m.width = r->h.width;
	r->m.eos_id = r->eos;
	r->m.noised = !!(r->h.flags & LLM_TOK_NOISED);
	llm_buf x = LLM_BUF_INIT;
	llm_buf_adds(&x, "\"val_fraction\": ");
	llm_json_put_f64(&x, r->val_fraction);
	llm_buf_addf(&x, ", \"seed\": %llu, \"shard_size\": %llu, \"truncate_quantile\": ",
	             (unsigned long long)r->seed, (unsigned long long)r->shard_size);
	llm_json_put_f64(&x, r->quantile);
	llm_buf_adds(&x, ",\n  \"commands\": [");
	llm_json_put_str(&x, tool_cmdline(), strlen(tool_cmdline()));
	llm_buf_adds(&x, "]");
	r->m.extra = llm_buf_detach(&x, NULL);
	llm_buf p = LLM_BUF_INIT;
	llm_buf_addf(&p, "%s/manifest.json", r->dir);
	int failed = 0;
	if (llm_manifest_write(&r->m, p.p) != LLM_OK) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	llm_buf_release(&p);
	return failed;
}

void shard_run_release(struct shard_run *r)
{
	for (size_t i = 0; i < r->ndoms; i++) {
		free(r->doms[i].name);
		llm_sketch_free(r->doms[i].sketch);
	}
	free(r->doms);
	llm_manifest_release(&r->m);
	llm_json_rec_release(&r->rec);
	llm_buf_release(&r->id);
	llm_buf_release(&r->dom);
	llm_buf_release(&r->extra);
}

/* Finish the run and, when it succeeded, switch the dataset to the new generation; returns
 * the exit status. */
int shard_publish(llm_run *run, llm_dataset *ds, int failed)
{
	if (!failed)
		llm_fault_point("shard-generation");
	int rc = tool_run_finish(run, failed);
	if (rc != 0) {
		llm_dataset_abandon(ds); /* the manifest is never published: the old dataset stays */
	} else if (llm_tmpfile_commit() != LLM_OK) {
		/* whether the switch happened or not, the next run clears what no manifest names */
		llm_error("%s", llm_last_error());
		rc = 1;
	} else {
		llm_fault_point("shard-switched");
		llm_dataset_retire_old(ds);
	}
	llm_dataset_close(ds);
	return rc;
}
