/*
 * train.c — llm-tokenize train: learn a byte-level BPE tokenizer from JSONL documents and
 * write it as a tokenizer.json (and a tiktoken rank file).
 *
 * Memory: the distinct pieces of the input and, while training, their adjacent pairs, within
 * --memory (default a quarter of physical memory): beyond it counts spill to --tmpdir and
 * training goes in rounds on the pieces that fit (lib/tok/bpe_train.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/io.h"
#include "core/json.h"
#include "llm-tokenize.h"
#include "tok/bpe_train.h"
#include "tok/pretok.h"

/* What was counted and what training left out, as a line before the summary and in --stats. */
static void train_report(const struct tok_opts *o, const llm_bpe_trainer *tr, llm_run *run)
{
	llm_bpe_train_stats st;
	llm_bpe_trainer_stats(tr, &st);
	double frac = st.occurrences ? (double)st.pruned_occurrences / (double)st.occurrences : 0;
	double bfrac = st.bytes ? (double)st.pruned_bytes / (double)st.bytes : 0;
	llm_buf b = LLM_BUF_INIT;
	llm_buf_addf(&b, "%llu distinct pieces, %llu occurrences; ", (unsigned long long)st.pieces,
	             (unsigned long long)st.occurrences);
	if (st.pruned_pieces)
		llm_buf_addf(&b, "pruned %llu pieces seen fewer than %llu times (%.2f%% of occurrences, "
		             "%.2f%% of bytes) to fit --memory", (unsigned long long)st.pruned_pieces,
		             (unsigned long long)st.min_count, 100 * frac, 100 * bfrac);
	else
		llm_buf_adds(&b, "none pruned");
	if (st.runs)
		llm_buf_addf(&b, "; %u runs spilled to disk", st.runs);
	llm_buf_addf(&b, "; %zu tokens, peak %.1f MB", llm_bpe_trainer_vocab_size(tr),
	             (double)st.peak_memory / 1e6);
	llm_info("%s", b.p);
	if (llm_bpe_trainer_vocab_size(tr) < (size_t)o->vocab_size) {
		if (st.pruned_pieces)
			llm_warn("%zu tokens, not %lld: no more pairs of the pieces kept within --memory are "
			         "seen %lld times; raise --memory", llm_bpe_trainer_vocab_size(tr),
			         o->vocab_size, o->min_freq);
		else
			llm_warn("%zu tokens, not %lld: no more pairs are seen %lld times in the input",
			         llm_bpe_trainer_vocab_size(tr), o->vocab_size, o->min_freq);
	}
	llm_buf_reset(&b);
	llm_buf_addf(&b, "\"train\": {\"pieces\": %llu, \"occurrences\": %llu, \"bytes\": %llu, "
	             "\"pruned_pieces\": %llu, \"pruned_occurrences\": %llu, \"pruned_bytes\": %llu, "
	             "\"pruned_fraction\": ", (unsigned long long)st.pieces,
	             (unsigned long long)st.occurrences, (unsigned long long)st.bytes,
	             (unsigned long long)st.pruned_pieces, (unsigned long long)st.pruned_occurrences,
	             (unsigned long long)st.pruned_bytes);
	llm_json_put_f64(&b, frac);
	llm_buf_adds(&b, ", \"pruned_bytes_fraction\": ");
	llm_json_put_f64(&b, bfrac);
	llm_buf_addf(&b, ", \"min_count\": %llu, \"pairs\": %llu, \"runs\": %u, \"merge_passes\": %u, "
	             "\"retrains\": %u, \"rounds\": %u, \"first_merges\": %llu, \"exact_merges\": %llu, "
	             "\"superbpe_from\": %llu, \"memory_limit\": %zu, \"peak_memory\": %zu, "
	             "\"vocab_size\": %zu}",
	             (unsigned long long)st.min_count, (unsigned long long)st.pairs, st.runs,
	             st.merge_passes, st.retrains, st.rounds, (unsigned long long)st.first_merges,
	             (unsigned long long)st.exact_merges, (unsigned long long)st.superbpe_from,
	             o->memory, st.peak_memory,
	             llm_bpe_trainer_vocab_size(tr));
	llm_run_stats_extra(run, b.p);
	llm_buf_release(&b);
}

/* The default pre-tokenizer of train, measured for mixed Chinese and English text
 * (bench/tokenize_patterns.sh, man page): o200k's gives the most characters per token on
 * Chinese and within 0.3% of the most on English. */
#define TRAIN_PATTERN "o200k"

int tok_train(struct tok_opts *o, int nfiles, char **files)
{
	if (o->vocab_size <= 0)
		usage_error("train needs --vocab-size N");
	if (!o->co.output)
		usage_error("train needs -o tokenizer.json");
	const char *pattern = o->pattern ? o->pattern : TRAIN_PATTERN;
	size_t npat = 1;
	const char *const *pats = llm_pretok_named_seq(pattern, &npat);
	llm_bpe_trainer *tr;
	if (llm_bpe_trainer_new_seq(&tr, pats ? pats : &pattern, pats ? npat : 1) != LLM_OK)
		usage_error("%s", llm_last_error());
	llm_bpe_trainer_set_memory(tr, o->memory, o->tmpdir);
	if (o->superbpe && llm_bpe_trainer_set_superbpe(tr, NULL, (size_t)o->superbpe) != LLM_OK)
		usage_error("--superbpe: %s", llm_last_error());
	llm_run *run = tool_run_new(&o->co);
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	llm_buf text = LLM_BUF_INIT;
	int failed = 0;
	char *dash[] = { "-" };
	if (nfiles == 0) {
		nfiles = 1;
		files = dash;
	}
	for (int f = 0; f < nfiles; f++) {
		tool_lines in;
		if (tool_lines_open(&in, files[f], &o->co, run) != LLM_OK) {
			llm_error("%s", llm_last_error());
			failed = 1;
			continue;
		}
		while (tool_lines_next(&in)) {
			const char *reason = NULL;
			const llm_json_val *t = NULL;
			int ok = !in.too_long && llm_json_parse(&rec, in.line, in.len) == LLM_OK;
			int dom = ok ? llm_run_in_rec(run, in.full_len + 1, &rec)
			             : llm_run_in(run, in.full_len + 1, NULL, 0);
			if (in.too_long)
				reason = "too_long";
			else if (!ok)
				reason = "bad_json";
			else if (!(t = llm_json_get(&rec, o->co.field)) || t->type != LLM_JSON_STRING)
				reason = "no_text";
			if (reason) {
				if (o->co.strict)
					die("%s:%llu: %s", in.name, (unsigned long long)in.lineno, reason);
				llm_warn_at(in.name, in.lineno, "%s", reason);
				if (llm_run_reject(run, dom, reason, in.line, in.len, ok ? &rec : NULL, NULL,
				                   in.name, in.lineno))
					die_lib();
				continue;
			}
			llm_buf_reset(&text);
			llm_json_str(t, &text);
			if (llm_bpe_trainer_add(tr, text.p, text.len) != LLM_OK)
				die("%s:%llu: %s", in.name, (unsigned long long)in.lineno, llm_last_error());
			llm_run_out(run, dom, in.full_len + 1);
		}
		if (tool_lines_close(&in) != LLM_OK) {
			llm_error("%s", llm_last_error());
			failed = 1;
		}
	}
	llm_json_rec_release(&rec);
	llm_buf_release(&text);
	if (llm_run_records_out(run) == 0) {
		/* A tokenizer of the 256 bytes alone is never what was asked for. */
		llm_error("no documents to train on; %s not written", o->co.output);
		llm_bpe_trainer_free(tr);
		tool_run_finish(run, 1);
		return 1;
	}
	if (o->nspecials == 0)
		o->specials[o->nspecials++] = "<|endoftext|>";
	if (llm_bpe_trainer_train(tr, (size_t)o->vocab_size, (uint64_t)o->min_freq, o->specials,
	                          (size_t)o->nspecials) != LLM_OK)
		die_lib();
	llm_buf out = LLM_BUF_INIT;
	llm_bpe_trainer_write_hf(tr, &out);
	if (llm_write_file(o->co.output, out.p, out.len) != LLM_OK)
		die_lib();
	if (o->tiktoken) {
		llm_buf_reset(&out);
		llm_bpe_trainer_write_tiktoken(tr, &out);
		if (llm_write_file(o->tiktoken, out.p, out.len) != LLM_OK)
			die_lib();
	}
	llm_buf_release(&out);
	train_report(o, tr, run);
	llm_bpe_trainer_free(tr);
	return tool_run_finish(run, failed);
}
