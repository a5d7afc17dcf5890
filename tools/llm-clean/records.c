/*
 * records.c — llm-clean's work on one batch: each record cleaned by a worker of the pool
 * (text/clean.h), with --segment's words added; then, on the main thread and in input order,
 * every record accounted, kept ones written and dropped ones sent to --rejects with their
 * reason, value and, for HTML, the text they were judged on.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "llm-clean.h"

static void add_words(wordfield *s, item *it)
{
	llm_buf_reset(&s->text);
	llm_buf_reset(&s->words);
	if (llm_json_parse(&s->rec, it->out.p, it->out.len) != LLM_OK ||
	    llm_json_get_str(&s->rec, s->text_field, &s->text) != LLM_OK)
		return;
	it->words = llm_zhseg_join(s->z, s->text.p ? s->text.p : "", s->text.len, &s->words);
	llm_json_edit_reset(&s->ed);
	llm_json_edit_str(&s->ed, s->field, s->words.p ? s->words.p : "", s->words.len);
	llm_buf_reset(&s->out);
	llm_json_write(&s->rec, &s->ed, &s->out);
	llm_buf t = it->out;
	it->out = s->out;
	s->out = t;
}

/* Clean record i of the batch being cleaned with worker w's scratch. */
void clean_item(void *ctx, tool_batch *b, size_t i, int w)
{
	struct ctx *c = ctx;
	item *it = tool_batch_item(&c->loop, b, i);
	worker *wk = &c->workers[w];
	if (it->ln.too_long)
		return;
	llm_clean_record(wk->cl, tool_batch_text(b, &it->ln), it->ln.len, &it->rec, &it->out,
	                 &it->res);
	it->words = 0;
	if (wk->seg && it->res.status == LLM_CLEAN_KEEP)
		add_words(wk->seg, it);
}

static void extra_value(llm_buf *x, const llm_clean_result *r)
{
	llm_buf_reset(x);
	if (!r->has_value)
		return;
	llm_buf_adds(x, "\"reject_value\": ");
	llm_json_put_f64(x, r->value);
	llm_buf_adds(x, ", \"reject_threshold\": ");
	llm_json_put_f64(x, r->threshold);
}

/* The text a dropped HTML record was judged on, for its reject: the first max bytes (cut at
 * a character) as "judged_text", its whole length as "judged_bytes". */
static void extra_judged(llm_buf *x, const llm_buf *text, size_t max)
{
	if (!max)
		return;
	size_t n = text->len;
	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)text->p[n] & 0xC0) == 0x80)
			n--;
	}
	if (x->len)
		llm_buf_adds(x, ", ");
	llm_buf_adds(x, "\"judged_text\": ");
	llm_json_put_str(x, text->p ? text->p : "", n);
	llm_buf_addf(x, ", \"judged_bytes\": %zu", text->len);
}

/* Account and write the records of a cleaned batch, in order. */
void clean_write_batch(void *ctx, tool_batch *b)
{
	struct ctx *c = ctx;
	const char *name = c->loop.name;
	llm_buf extra = LLM_BUF_INIT;
	for (size_t i = 0; i < b->n; i++) {
		item *it = tool_batch_item(&c->loop, b, i);
		const char *line = tool_batch_text(b, &it->ln);
		if (it->ln.too_long) {
			if (c->co->strict)
				die("%s:%llu: line longer than --max-line (%zu bytes)", name,
				    (unsigned long long)it->ln.lineno, it->ln.full_len);
			llm_warn_at(name, it->ln.lineno, "line longer than --max-line (%zu bytes)", it->ln.full_len);
			llm_clean_tally_add(c->tally, NULL, NULL, "line_too_long");
			int dom = llm_run_in(c->run, it->ln.full_len + 1, NULL, 0);
			llm_buf_reset(&extra);
			llm_buf_addf(&extra, "\"length\": %zu", it->ln.full_len);
			if (llm_run_reject(c->run, dom, "line_too_long", line, it->ln.len, NULL, extra.p,
			                   name, it->ln.lineno) != LLM_OK)
				die_lib();
			continue;
		}
		llm_clean_result *r = &it->res;
		llm_clean_tally_add(c->tally, r->domain, r->lang, r->status == LLM_CLEAN_KEEP ? NULL : r->reason);
		bool parsed = r->status != LLM_CLEAN_BAD || strcmp(r->reason, "bad_json") != 0;
		int dom = parsed ? llm_run_in_rec(c->run, it->ln.len + 1, &it->rec)
		                 : llm_run_in(c->run, it->ln.len + 1, NULL, 0);
		dom = llm_run_lang(c->run, dom, r->lang, strlen(r->lang));
		if (r->status == LLM_CLEAN_KEEP) {
			if (llm_writer_write(c->out, it->out.p, it->out.len) != LLM_OK ||
			    llm_writer_write(c->out, "\n", 1) != LLM_OK)
				die_lib();
			llm_run_out(c->run, dom, it->out.len + 1);
			if (r->changed)
				llm_run_count(c->run, "changed", 1);
			if (c->workers[0].seg)
				llm_run_count(c->run, "words", it->words);
		} else {
			if (r->status == LLM_CLEAN_BAD) {
				if (c->co->strict)
					die("%s:%llu: %s", name, (unsigned long long)it->ln.lineno, r->err_msg);
				if (parsed)
					llm_warn_at(name, it->ln.lineno, "%s", r->err_msg);
				else
					llm_warn_at(name, it->ln.lineno, "bad JSON at byte %zu: %s",
					            r->err_pos + 1, r->err_msg);
			}
			extra_value(&extra, r);
			if (r->status == LLM_CLEAN_DROP && r->html)
				extra_judged(&extra, &it->out, c->judged_max);
			if (llm_run_reject(c->run, dom, r->reason, line, it->ln.len, parsed ? &it->rec : NULL,
			                   extra.len ? extra.p : NULL, name, it->ln.lineno) != LLM_OK)
				die_lib();
		}
		for (int k = 0; k < LLM_FILTER_NCOUNTERS; k++)
			if (r->counts[k])
				llm_run_count(c->run, llm_filter_counters[k], r->counts[k]);
		for (int k = 0; k < 5; k++) {
			if (r->pii[k]) {
				char counter[48];
				snprintf(counter, sizeof counter, "pii_%s", llm_pii_name(k));
				llm_run_count(c->run, counter, r->pii[k]);
			}
		}
		if (r->times)
			llm_run_count(c->run, "time_masked", r->times);
	}
	llm_buf_release(&extra);
	/* A slot's output buffer keeps the size of the largest document it ever held, and over
	 * a long stream every slot meets a large one: kept as is, the slots grew with the input
	 * (81 MB at 125 MB, 105 MB at 500 MB of input). Between batches they keep at most
	 * --batch bytes together; the rest is freed and grown again when needed. */
	size_t kept = 0;
	for (size_t i = 0; i < b->cap; i++) {
		llm_buf *o = &((item *)tool_batch_item(&c->loop, b, i))->out;
		if (kept + o->cap <= c->batch_bytes)
			kept += o->cap;
		else
			llm_buf_release(o);
	}
}

void clean_item_init(void *p)
{
	item *it = p;
	llm_json_rec_init(&it->rec);
	llm_buf_init(&it->out);
}

void clean_item_release(void *p)
{
	item *it = p;
	llm_json_rec_release(&it->rec);
	llm_buf_release(&it->out);
}
