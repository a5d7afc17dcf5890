/*
 * decode.c — llm-tokenize decode: a token stream or JSONL with "tokens" back to JSONL
 * documents (or plain text with --format text); one record in memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/io.h"
#include "core/json.h"
#include "llm-tokenize.h"
#include "tok/tokstream.h"

struct decoder {
	const struct tok_opts *o;
	const llm_bpe *bpe;
	llm_writer *w;
	llm_run *run;
	bool text;
	llm_buf bytes, out;
	llm_json_rec rejrec; /* a token stream record being rejected, as JSON */
};

/* The metadata object (or NULL) with a member appended: `"key": ` is added and the caller
 * writes the value and the closing brace. */
static void meta_open(llm_buf *out, const char *meta, size_t meta_len, const char *key)
{
	size_t end = meta ? meta_len : 0;
	while (end && meta[end - 1] != '}')
		end--;
	if (end) {
		size_t k = end - 1;
		llm_buf_add(out, meta, k);
		while (k && (meta[k - 1] == ' ' || meta[k - 1] == '\n'))
			k--;
		if (meta[k - 1] != '{')
			llm_buf_adds(out, ", ");
	} else {
		llm_buf_addc(out, '{');
	}
	llm_buf_addf(out, "\"%s\": ", key);
}

/*
 * One record's tokens and metadata object (or NULL) to a document line. rec is the parsed
 * JSONL line (line, len) it came from, or NULL for a token stream record, which a reject
 * then shows as its metadata with "tokens". Returns 0, or 1 to stop the run.
 */
static int decode_one(struct decoder *d, const uint32_t *t, size_t n, const char *meta,
                      size_t meta_len, const char *file, uint64_t where, size_t bytes_in,
                      const llm_json_rec *rec, const char *line, size_t len)
{
	const llm_bpe *b = d->bpe;
	const uint32_t *all = t;
	size_t nall = n;
	if (!d->o->keep_special) {
		if (n && llm_bpe_bos(b) >= 0 && t[0] == (uint32_t)llm_bpe_bos(b)) {
			t++;
			n--;
		}
		if (n && llm_bpe_eos(b) >= 0 && t[n - 1] == (uint32_t)llm_bpe_eos(b))
			n--;
	}
	llm_buf_reset(&d->bytes);
	llm_buf_reset(&d->out);
	if (llm_bpe_decode(b, t, n, &d->bytes) != LLM_OK) {
		/* Checked before the record is counted in: a --strict stop keeps the invariant. */
		if (d->o->co.strict) {
			llm_error_at(file, where, "%s", llm_last_error());
			return 1;
		}
		llm_warn_at(file, where, "%s", llm_last_error());
		int dom = rec ? llm_run_in_rec(d->run, bytes_in, rec) : llm_run_in(d->run, bytes_in, NULL, 0);
		if (!rec) {
			meta_open(&d->out, meta, meta_len, "tokens");
			llm_buf_addc(&d->out, '[');
			for (size_t i = 0; i < nall; i++)
				llm_buf_addf(&d->out, i ? ",%u" : "%u", all[i]);
			llm_buf_adds(&d->out, "]}");
			if (llm_json_parse(&d->rejrec, d->out.p, d->out.len) != LLM_OK)
				die("internal error: cannot parse a rejected record");
			rec = &d->rejrec;
			line = d->out.p;
			len = d->out.len;
		}
		if (llm_run_reject(d->run, dom, "bad_token", line, len, rec, NULL, file, where) != LLM_OK)
			die_lib();
		return 0;
	}
	int dom = rec ? llm_run_in_rec(d->run, bytes_in, rec) : llm_run_in(d->run, bytes_in, NULL, 0);
	if (d->text) {
		llm_buf_add(&d->out, d->bytes.p, d->bytes.len);
	} else {
		meta_open(&d->out, meta, meta_len, "text");
		llm_json_put_str(&d->out, d->bytes.p, d->bytes.len);
		llm_buf_addc(&d->out, '}');
	}
	llm_buf_addc(&d->out, '\n');
	if (llm_writer_write(d->w, d->out.p, d->out.len) != LLM_OK)
		die_lib();
	llm_run_out(d->run, dom, d->out.len);
	return 0;
}

static int decode_stream(struct decoder *d, llm_tokreader *tr)
{
	llm_tok_rec rec;
	int rc;
	const char *name = llm_tokreader_name(tr);
	if (llm_tokreader_header(tr)->tokenizer_id != llm_bpe_file_id(d->bpe) &&
	    llm_tokreader_header(tr)->tokenizer_id)
		llm_warn("%s: made with another tokenizer file than %s", name, d->o->tokenizer);
	while ((rc = llm_tokreader_next(tr, &rec)) == LLM_OK)
		if (decode_one(d, rec.tokens, rec.n, rec.meta, rec.meta_len, name, rec.index + 1,
		               rec.n * 4 + rec.meta_len + 8, NULL, NULL, 0))
			return 1;
	if (rc != LLM_EOF) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	return 0;
}

/* One JSONL line with "tokens": the other fields are kept, "tokens" becomes "text". */
struct jsonl_state {
	llm_json_rec rec;
	llm_ids ids;
	llm_buf meta;
	llm_json_edit ed;
};

/* A line of token JSONL that is not a record: fatal with --strict, else warned and rejected. */
static int decode_reject(struct decoder *d, const tool_lines *in, const char *reason,
                         const char *why, const llm_json_rec *rec)
{
	if (d->o->co.strict) {
		llm_error_at(in->name, in->lineno, "%s", why);
		return 1;
	}
	llm_warn_at(in->name, in->lineno, "%s", why);
	int dom = rec ? llm_run_in_rec(d->run, in->full_len + 1, rec)
	              : llm_run_in(d->run, in->full_len + 1, NULL, 0);
	if (llm_run_reject(d->run, dom, reason, in->line, in->len, rec, NULL, in->name,
	                   in->lineno) != LLM_OK)
		die_lib();
	return 0;
}

static int decode_jsonl_line(struct decoder *d, struct jsonl_state *js, const tool_lines *in)
{
	if (in->too_long)
		return decode_reject(d, in, "too_long", "line over --max-line", NULL);
	const llm_json_val *t = NULL;
	const char *line = in->line, *name = in->name;
	size_t len = in->len;
	uint64_t ln = in->lineno;
	bool parsed = llm_json_parse(&js->rec, line, len) == LLM_OK;
	if (!parsed || !(t = llm_json_get(&js->rec, "tokens")) || t->type != LLM_JSON_ARRAY)
		return decode_reject(d, in, parsed ? "no_tokens" : "bad_json",
		                     "not a JSON object with a \"tokens\" array", parsed ? &js->rec : NULL);
	js->ids.n = 0;
	size_t it = 0;
	llm_json_val k, v;
	int64_t x;
	while (llm_json_next(t, &it, &k, &v) == LLM_OK)
		llm_ids_push(&js->ids, llm_json_i64(&v, &x) || x < 0 || x > UINT32_MAX ? UINT32_MAX : (uint32_t)x);
	llm_json_edit_reset(&js->ed);
	llm_json_edit_del(&js->ed, "tokens");
	llm_buf_reset(&js->meta);
	llm_json_write(&js->rec, &js->ed, &js->meta);
	return decode_one(d, js->ids.v, js->ids.n, js->meta.p, js->meta.len, name, ln, len + 1,
	                  &js->rec, line, len);
}

/* Decode the token JSONL that r reads, and free r. */
static int decode_jsonl(struct decoder *d, struct jsonl_state *js, llm_reader *r)
{
	tool_lines in;
	tool_lines_init(&in, r, &d->o->co, NULL);
	int failed = 0;
	while (!failed && tool_lines_next(&in))
		failed = decode_jsonl_line(d, js, &in);
	if (tool_lines_close(&in) != LLM_OK) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	return failed;
}

/* Standard input cannot be reopened once its first bytes told the format, so it is read
 * whole: decoding from stdin holds the input in memory. */
static int decode_stdin(struct decoder *d, struct jsonl_state *js)
{
	llm_reader *r;
	if (llm_reader_open(&r, "-") != LLM_OK) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	llm_buf all = LLM_BUF_INIT;
	ssize_t got;
	do {
		llm_buf_grow(&all, 1 << 20);
		got = llm_reader_read(r, all.p + all.len, 1 << 20);
		if (got > 0)
			all.len += (size_t)got;
	} while (got > 0);
	llm_reader_free(r);
	int failed = 0;
	if (got < 0) {
		llm_error("%s", llm_last_error());
		failed = 1;
	} else if (all.len >= 8 && memcmp(all.p, LLM_TOK_MAGIC, 8) == 0) {
		llm_tokreader *tr;
		if (llm_tokreader_open_mem(&tr, all.p, all.len, "<stdin>") != LLM_OK) {
			llm_error("%s", llm_last_error());
			failed = 1;
		} else {
			failed = decode_stream(d, tr);
			llm_tokreader_free(tr);
		}
	} else if (llm_reader_open_mem(&r, all.p, all.len, "<stdin>") != LLM_OK) {
		llm_error("%s", llm_last_error());
		failed = 1;
	} else {
		failed = decode_jsonl(d, js, r);
	}
	llm_buf_release(&all);
	return failed;
}

static int decode_file(struct decoder *d, struct jsonl_state *js, const char *path)
{
	/* A token stream starts with its magic; anything else is read as JSONL. */
	llm_reader *r;
	if (llm_reader_open(&r, path) != LLM_OK) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	char magic[8];
	ssize_t got = llm_reader_read(r, magic, sizeof magic);
	llm_reader_free(r);
	int failed = 0;
	if (got == 8 && memcmp(magic, LLM_TOK_MAGIC, 8) == 0) {
		llm_tokreader *tr;
		if (llm_tokreader_open(&tr, path) != LLM_OK) {
			llm_error("%s", llm_last_error());
			return 1;
		}
		failed = decode_stream(d, tr);
		llm_tokreader_free(tr);
		return failed;
	}
	if (llm_reader_open(&r, path) != LLM_OK) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	return decode_jsonl(d, js, r);
}

int tok_decode(struct tok_opts *o, int nfiles, char **files)
{
	llm_bpe *bpe = tok_load_tokenizer(o);
	struct decoder d = { o, bpe, NULL, NULL, false, LLM_BUF_INIT, LLM_BUF_INIT, { 0 } };
	llm_json_rec_init(&d.rejrec);
	if (o->format)
		d.text = tool_choice("--format", o->format, "jsonl\0text\0") == 1;
	if (llm_writer_open(&d.w, o->co.output) != LLM_OK)
		die_lib();
	d.run = tool_run_new(&o->co);
	struct jsonl_state js;
	llm_json_rec_init(&js.rec);
	llm_ids_init(&js.ids);
	llm_buf_init(&js.meta);
	llm_json_edit_init(&js.ed);
	int failed = 0;
	if (nfiles == 0)
		failed = decode_stdin(&d, &js);
	for (int f = 0; f < nfiles; f++)
		failed |= strcmp(files[f], "-") == 0 ? decode_stdin(&d, &js) : decode_file(&d, &js, files[f]);
	if (llm_writer_close(d.w) != LLM_OK) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	llm_json_rec_release(&js.rec);
	llm_ids_release(&js.ids);
	llm_buf_release(&js.meta);
	llm_json_edit_release(&js.ed);
	llm_buf_release(&d.bytes);
	llm_buf_release(&d.out);
	llm_json_rec_release(&d.rejrec);
	llm_bpe_free(bpe);
	return tool_run_finish(d.run, failed);
}
