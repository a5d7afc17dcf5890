/*
 * loss.c — llm-eval loss: shards, manifests (a split), JSONL documents (stream or rolling) or
 * the trainer's --sampled validation batches into an evaluator; the table per domain and the
 * JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/json.h"
#include "data/loader.h"
#include "data/shard.h"
#include "llm-eval.h"
#include "model/train.h"

static int is_dir(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int has_magic(const char *p, const char *magic)
{
	FILE *f = fopen(p, "rb");
	char b[8];
	int yes = f && fread(b, 1, 8, f) == 8 && memcmp(b, magic, 8) == 0;
	if (f)
		fclose(f);
	return yes;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Shards must be tokenized like the tokenizer that counts their bytes. */
static void check_tokenizer(const char *name, uint64_t id, const llm_bpe *bpe, const evt_model *mt)
{
	if (bpe && id && llm_bpe_file_id(bpe) != id)
		die("%s: tokenizer id %016llx, but the tokenizer given is %016llx", name,
		    (unsigned long long)id, (unsigned long long)llm_bpe_file_id(bpe));
	if (mt->info.tokenizer_id && id && mt->info.tokenizer_id != id)
		llm_warn("%s: tokenizer id %016llx, but the model was trained on %016llx", name,
		         (unsigned long long)id, (unsigned long long)mt->info.tokenizer_id);
}

/* One evaluation pass over the inputs: the evaluator, the run that accounts the records
 * (NULL: none) and shows the progress, the tokens given to the evaluator so far. */
typedef struct {
	llm_evaluator *ev;
	llm_run *run;
	uint64_t tokens;
} loss_pass;

/* The progress line after a document: tokens so far, and where in its input (< 0: as read). */
static void progress(loss_pass *p, size_t n, int64_t input_pos)
{
	p->tokens += n;
	if (p->run)
		llm_run_progress_work(p->run, "tokens", p->tokens, input_pos);
}

/* A shard file, or (man, ms) one listed by a manifest, which it must match. */
static void eval_shard(loss_pass *p, const char *path, const llm_manifest *man,
                       const llm_manifest_shard *ms, const llm_bpe *bpe, const evt_model *mt)
{
	llm_shard *s;
	if (llm_shard_open(&s, path, 0) != LLM_OK ||
	    (man && llm_manifest_check_shard(man, ms, s) != LLM_OK) || llm_shard_verify(s) != LLM_OK)
		die_lib();
	const llm_shard_info *si = llm_shard_get_info(s);
	check_tokenizer(path, si->tokenizer_id, bpe, mt);
	llm_run *run = p->run;
	if (run)
		llm_run_begin_input(run, path, (int64_t)si->tokens);
	uint64_t pos = 0;
	uint32_t *tok = NULL;
	size_t cap = 0;
	for (uint64_t i = 0; i < si->docs; i++) {
		llm_shard_doc d;
		llm_shard_get_doc(s, i, &d);
		if (d.len > cap) {
			cap = d.len;
			free(tok);
			tok = llm_malloc(cap * sizeof *tok);
		}
		llm_shard_read_tokens(s, d.start, d.len, tok);
		const char *name = llm_shard_domain(s, d.domain);
		if (llm_eval_doc(p->ev, name, tok, d.len) != LLM_OK)
			die("%s: document %llu: %s", path, (unsigned long long)i, llm_last_error());
		if (run) {
			size_t bytes = (size_t)d.len * si->width;
			llm_run_out(run, llm_run_in(run, bytes, name, strlen(name)), bytes);
		}
		pos += d.len;
		progress(p, d.len, (int64_t)pos);
	}
	free(tok);
	llm_shard_free(s);
}

static void eval_manifest(loss_pass *p, const char *path, int split, const llm_bpe *bpe,
                          const evt_model *mt)
{
	llm_manifest man;
	llm_manifest_init(&man);
	if (llm_manifest_load(&man, path) != LLM_OK)
		die_lib();
	check_tokenizer(path, man.tokenizer_id, bpe, mt);
	size_t n = 0;
	for (size_t i = 0; i < man.nshards; i++)
		if (split == EVT_SPLIT_ALL ||
		    man.shards[i].split == (split == EVT_SPLIT_VAL ? LLM_SPLIT_VAL : LLM_SPLIT_TRAIN)) {
			eval_shard(p, man.shards[i].path, &man, &man.shards[i], bpe, mt);
			n++;
		}
	if (!n)
		die("%s: no shard in the %s split", path,
		    split == EVT_SPLIT_VAL ? "val" : split == EVT_SPLIT_TRAIN ? "train" : "any");
	llm_manifest_release(&man);
}

/* JSONL documents: text tokenized, in a stream with end-of-text appended as llm-tokenize
 * does, or alone in rolling windows; each line a record of run (NULL: none), scored or
 * rejected. */
static void eval_docs(loss_pass *p, const char *path, const evt_opts *o, const llm_bpe *bpe,
                      llm_bpe_enc *enc)
{
	if (!bpe)
		usage_error("documents need a tokenizer (-t)");
	llm_evaluator *ev = p->ev;
	llm_run *run = p->run;
	tool_lines in;
	if (tool_lines_open(&in, path, &o->co, run) != LLM_OK)
		die_lib();
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	llm_buf text, dom;
	llm_buf_init(&text);
	llm_buf_init(&dom);
	llm_ids ids;
	llm_ids_init(&ids);
	int64_t eos = llm_bpe_eos(bpe);
	while (tool_lines_next(&in)) {
		int json = !in.too_long && llm_json_parse(&rec, in.line, in.len) == LLM_OK;
		int h = !run ? 0 : json ? llm_run_in_rec(run, in.full_len + 1, &rec)
		                        : llm_run_in(run, in.full_len + 1, NULL, 0);
		llm_buf_reset(&text);
		llm_buf_reset(&dom);
		if (in.too_long) {
			evt_reject_line(o, run, h, &in, "too_long", "line over --max-line", NULL);
			continue;
		}
		if (!json) {
			evt_reject_line(o, run, h, &in, "bad_json", rec.err_msg, NULL);
			continue;
		}
		if (llm_json_get_str(&rec, o->co.field, &text) != LLM_OK) {
			evt_reject_line(o, run, h, &in, "no_text", "no text field", &rec);
			continue;
		}
		llm_json_get_str(&rec, "domain", &dom);
		llm_buf_addc(&dom, 0);
		ids.n = 0;
		if (llm_bpe_encode(enc, text.p, text.len, LLM_BPE_SPECIAL_IGNORE, &ids) != LLM_OK)
			die("%s:%llu: %s", in.name, (unsigned long long)in.lineno, llm_last_error());
		int rc;
		if (o->mode == EVT_MODE_ROLLING) {
			rc = llm_eval_doc_rolling(ev, dom.p, text.p, text.len, ids.v, ids.n);
		} else {
			if (eos >= 0)
				llm_ids_push(&ids, (uint32_t)eos);
			rc = llm_eval_doc(ev, dom.p, ids.v, ids.n);
		}
		if (rc != LLM_OK)
			die("%s:%llu: %s", in.name, (unsigned long long)in.lineno, llm_last_error());
		if (run)
			llm_run_out(run, h, in.full_len + 1);
		progress(p, ids.n, -1);
	}
	if (tool_lines_close(&in) != LLM_OK)
		die_lib();
	llm_ids_release(&ids);
	llm_buf_release(&text);
	llm_buf_release(&dom);
	llm_json_rec_release(&rec);
}

/* --sampled: the trainer's validation micro-batches, one window per row. */
static void eval_sampled(llm_evaluator *ev, const char *path, const evt_opts *o, int B, int T,
                         uint64_t seed)
{
	llm_loader *L;
	if (llm_loader_open(&L, path, LLM_SPLIT_VAL, NULL, 0, llm_train_val_seed(seed)) != LLM_OK)
		die_lib();
	int32_t *x = llm_malloc(2 * (size_t)B * T * sizeof *x), *y = x + (size_t)B * T;
	for (int i = 0; i < o->sampled; i++) {
		llm_loader_next(L, B, T, x, y);
		for (int b = 0; b < B; b++)
			if (llm_eval_window(ev, "sampled", x + (size_t)b * T, y + (size_t)b * T, T) != LLM_OK)
				die("%s: %s", path, llm_last_error());
	}
	free(x);
	llm_loader_free(L);
}

/* rolling: lm-evaluation-harness's word and byte perplexities after bits per byte */
static void print_row(const char *name, const llm_eval_sums *s, int rolling)
{
	char bpb[32] = "-";
	if (s->bytes)
		snprintf(bpb, sizeof bpb, "%.4f", llm_eval_bits_per_byte(s));
	printf("%-12s %8llu %10llu %9.4f %11.3f %9s", name, (unsigned long long)s->docs,
	       (unsigned long long)s->tokens, llm_eval_loss(s), llm_eval_ppl(s), bpb);
	if (rolling)
		printf(" %9.4f %11.6g", llm_eval_byte_ppl(s), llm_eval_word_ppl(s));
	putchar('\n');
}

/* The window length of loss: --sampled draws the trainer's windows, of its length unless
 * given (the trainer checked it against the model). */
static int loss_seq_len(const evt_opts *o, const evt_model *mt)
{
	return o->sampled && !o->seq && mt->info.seq_len > 0 ? (int)mt->info.seq_len : evt_seq_len(o, mt);
}

/* Evaluate the loss of mt over files (or --sampled batches of the manifest); the documents
 * are the records of run (NULL: not accounted). */
llm_evaluator *evt_run_loss(const evt_opts *o, const evt_model *mt, char **files, int nfiles,
                            const llm_bpe *bpe, llm_run *run, double *secs)
{
	int T = loss_seq_len(o, mt);
	/* What precedes each domain's stream: the end-of-text id, from the tokenizer or else from
	 * the model's configuration (llm-train records the shards' there). */
	int64_t start = bpe ? llm_bpe_eos(bpe) : llm_model_get_config(mt->m)->eos_token_id;
	if (o->mode == EVT_MODE_ROLLING) {
		/* lm-evaluation-harness's prefix_token_id (BOS, else EOS) before each document */
		if (o->sampled)
			usage_error("--mode rolling scores documents, not --sampled windows");
		if (!bpe)
			usage_error("--mode rolling needs a tokenizer (-t)");
		if ((start = evt_doc_prefix(o, bpe)) < 0)
			usage_error("--mode rolling needs a prefix token: no --no-prefix, and a tokenizer "
			            "with a beginning- or end-of-text token");
	}
	int B = o->sampled && !o->batch && mt->info.batch > 0 ? (int)mt->info.batch
	                                                          : o->batch ? o->batch : 8;
	double t0 = evt_now();
	llm_evaluator *ev = llm_evaluator_new(mt->m, T, B, bpe, start);
	loss_pass lp = { ev, run, 0 };
	evt_scorer_evaluator(ev, mt);
	if (o->sampled) {
		if (nfiles != 1)
			usage_error("--sampled takes one manifest");
		int64_t seed = o->seed >= 0 ? o->seed : mt->info.seed;
		if (seed < 0)
			usage_error("--sampled needs --seed: %s has no training state", mt->info.dir);
		eval_sampled(ev, files[0], o, B, T, (uint64_t)seed);
	} else {
		llm_bpe_enc *enc = bpe ? llm_bpe_enc_new(bpe) : NULL;
		for (int i = 0; i < nfiles; i++) {
			const char *f = files[i];
			char p[4096];
			int shard = strcmp(f, "-") != 0 && has_magic(f, LLM_SHARD_MAGIC);
			if (o->mode == EVT_MODE_ROLLING && (shard || ends_with(f, ".json") ||
			                                (strcmp(f, "-") != 0 && is_dir(f))))
				usage_error("--mode rolling scores JSONL documents: %s holds tokens", f);
			if (strcmp(f, "-") != 0 && is_dir(f)) {
				snprintf(p, sizeof p, "%s/manifest.json", f);
				eval_manifest(&lp, p, o->split, bpe, mt);
			} else if (shard) {
				eval_shard(&lp, f, NULL, NULL, bpe, mt);
			} else if (ends_with(f, ".json")) {
				eval_manifest(&lp, f, o->split, bpe, mt);
			} else {
				eval_docs(&lp, f, o, bpe, enc);
			}
		}
		llm_bpe_enc_free(enc);
	}
	if (llm_eval_flush(ev) != LLM_OK)
		die_lib();
	if (run)
		llm_run_progress_clear(run);
	*secs = evt_now() - t0;
	return ev;
}

int evt_cmd_loss(const evt_opts *o, char **files, int nfiles)
{
	static char *stdin_only[] = { "-" };
	if (!o->ckpt)
		usage_error("loss needs --ckpt");
	if (!nfiles) {
		files = stdin_only;
		nfiles = 1;
	}
	if (o->sampled && o->co.rejects)
		usage_error("--rejects: --sampled reads windows, no lines to reject");
	/* --sampled windows are not records */
	llm_run *run = o->sampled ? NULL : evt_new_run(o);
	evt_model mt;
	evt_load_model(&mt, o->ckpt, o);
	llm_bpe *bpe = evt_tokenizer(o, &mt);
	double secs;
	llm_evaluator *ev = evt_run_loss(o, &mt, files, nfiles, bpe, run, &secs);
	uint64_t bad = run ? llm_run_records_rejected(run) : 0;
	llm_eval_sums all;
	llm_eval_total(ev, &all);
	int rolling = o->mode == EVT_MODE_ROLLING;
	printf("%-12s %8s %10s %9s %11s %9s%s\n", "domain", "docs", "tokens", "loss", "ppl",
	       "bits/byte", rolling ? "  byte_ppl    word_ppl" : "");
	for (size_t i = 0; i < llm_eval_ndomains(ev); i++)
		print_row(llm_eval_domain_name(ev, i), llm_eval_domain_sums(ev, i), rolling);
	print_row("all", &all, rolling);
	evt_check_stdout();
	if (o->json) {
		llm_buf b;
		llm_buf_init(&b);
		llm_buf_adds(&b, "{\"checkpoint\": ");
		llm_json_put_str(&b, mt.info.dir, strlen(mt.info.dir));
		llm_buf_addf(&b, ", \"step\": %lld, \"tokens_seen\": %lld, \"mode\": \"%s\"",
		             (long long)mt.info.step, (long long)mt.info.tokens,
		             o->sampled ? "sampled" : rolling ? "rolling" : "stream");
		llm_buf_addf(&b, ", \"seq_len\": %d", loss_seq_len(o, &mt));
		evt_device_json(&b, o);
		llm_buf_adds(&b, ", \"all\": ");
		llm_evalres_sums_json(&b, &all);
		llm_buf_adds(&b, ", \"domains\": {");
		for (size_t i = 0; i < llm_eval_ndomains(ev); i++) {
			const char *n = llm_eval_domain_name(ev, i);
			llm_buf_adds(&b, i ? ", " : "");
			llm_json_put_str(&b, n, strlen(n));
			llm_buf_adds(&b, ": ");
			llm_evalres_sums_json(&b, llm_eval_domain_sums(ev, i));
		}
		llm_buf_addf(&b, "}, \"skipped\": %llu, \"seconds\": ", (unsigned long long)bad);
		llm_json_put_f64(&b, secs);
		llm_buf_addc(&b, '}');
		evt_write_json(o->json, &b);
		llm_buf_release(&b);
	}
	llm_info("%llu tokens in %.2f s (%.0f tokens/s)%s", (unsigned long long)all.tokens, secs,
	         all.tokens / (secs > 0 ? secs : 1e-9), bad ? "; malformed lines skipped" : "");
	llm_evaluator_free(ev);
	llm_bpe_free(bpe);
	evt_free_model(&mt);
	return evt_finish_run(o, run, 0);
}

