/*
 * choice.c — llm-eval choice: multiple-choice task items (after their few-shot examples)
 * scored per domain as acc and acc_norm, each item to --log-samples; the table and the JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/io.h"
#include "core/json.h"
#include "llm-eval.h"

/* The few-shot pool: --fewshot-from's items (a malformed one is fatal), else the task's own
 * (a malformed one is the scoring pass's to reject). NULL without --num-fewshot or
 * --description. */
/* A line of a task: llmkit's item, or a document of the task YAML (task.h). */
static int parse_item(const evt_opts *o, const char *line, size_t n, llm_choice_item *it)
{
	return o->ytask ? llm_task_item(o->ytask, line, n, it) : llm_choice_parse(it, line, n);
}

llm_fewshot *evt_load_fewshot(const evt_opts *o, char **files, int nfiles)
{
	if (!o->num_fewshot && !o->description)
		return NULL;
	char *from[] = { (char *)o->fewshot_from };
	if (o->fewshot_from) {
		files = from;
		nfiles = 1;
	}
	for (int f = 0; f < nfiles; f++)
		if (o->num_fewshot && strcmp(files[f], "-") == 0)
			usage_error("--num-fewshot from standard input needs --fewshot-from FILE");
	llm_fewshot *fs = llm_fewshot_new((size_t)o->num_fewshot, o->seed >= 0 ? (uint64_t)o->seed : 1234,
	                                  !o->fewshot_from || o->fewshot_self, o->description,
	                                  o->delim ? o->delim : " ",
	                                  o->fewshot_delim ? o->fewshot_delim : "\n\n");
	for (int f = 0; f < nfiles && o->num_fewshot; f++) {
		tool_lines in;
		if (tool_lines_open(&in, files[f], &o->co, NULL) != LLM_OK)
			die_lib();
		while (tool_lines_next(&in)) {
			llm_choice_item it;
			if (!in.too_long && parse_item(o, in.line, in.len, &it) == LLM_OK)
				llm_fewshot_add(fs, &it);
			else if (o->fewshot_from && !o->fewshot_self)
				die("%s:%llu: %s", in.name, (unsigned long long)in.lineno,
				    in.too_long ? "line over --max-line" : llm_last_error());
			if (!in.too_long)
				llm_choice_item_release(&it);
		}
		if (tool_lines_close(&in) != LLM_OK)
			die_lib();
	}
	return fs;
}

/* Score the task items of files, after their few-shot examples (fs NULL: none); each line a
 * record of run (NULL: not accounted), each item scored a line of samples (NULL: none). */
void evt_run_choice(const evt_opts *o, const evt_model *mt, const llm_bpe *bpe, char **files,
                    int nfiles, llm_run *run, llm_choice_tally *res, llm_writer *samples,
                    llm_fewshot *fs)
{
	uint64_t doc_id = 0;
	llm_buf line = LLM_BUF_INIT;
	llm_chooser *ch = llm_chooser_new(mt->m, bpe, evt_doc_prefix(o, bpe), o->delim ? o->delim : " ");
	evt_scorer_chooser(ch, mt);
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	double *ll = NULL;
	size_t llcap = 0;
	for (int f = 0; f < nfiles; f++) {
		tool_lines in;
		if (tool_lines_open(&in, files[f], &o->co, run) != LLM_OK)
			die_lib();
		while (tool_lines_next(&in)) {
			int json = !in.too_long && llm_json_parse(&rec, in.line, in.len) == LLM_OK;
			int h = !run ? 0 : json ? llm_run_in_rec(run, in.full_len + 1, &rec)
			                        : llm_run_in(run, in.full_len + 1, NULL, 0);
			llm_choice_item it;
			const char *reason = NULL;
			if (in.too_long) {
				reason = "too_long";
				llm_fail(LLM_ETOOLONG, "line over --max-line");
			} else if (parse_item(o, in.line, in.len, &it) != LLM_OK) {
				reason = json ? "bad_item" : "bad_json";
			} else {
				if (it.nchoices > llcap) {
					llcap = it.nchoices;
					ll = llm_realloc(ll, llcap * sizeof *ll);
				}
				size_t pred, pred_norm;
				if (fs) {
					if (llm_fewshot_context(fs, &it, &line) != LLM_OK)
						die("%s:%llu: %s", in.name, (unsigned long long)in.lineno,
						    llm_last_error());
					free(it.context);
					it.context = llm_strndup(line.p, line.len);
				}
				if (llm_chooser_score(ch, &it, ll, &pred, &pred_norm) == LLM_OK) {
					llm_choice_tally_add(res, it.domain, pred == it.gold,
					                     pred_norm == it.gold);
					if (samples) {
						llm_buf_reset(&line);
						llm_choice_sample_json(&line, &it, doc_id, ll, llm_chooser_ntokens(ch),
						                       pred, pred_norm);
						llm_buf_addc(&line, '\n');
						if (llm_writer_write(samples, line.p, line.len) != LLM_OK)
							die_lib();
					}
				} else {
					reason = "unscorable";
				}
			}
			if (!in.too_long)
				llm_choice_item_release(&it);
			if (reason) {
				evt_reject_line(o, run, h, &in, reason, llm_last_error(), json ? &rec : NULL);
				res->bad++;
			} else if (run) {
				llm_run_out(run, h, in.full_len + 1);
			}
			doc_id++;
		}
		if (tool_lines_close(&in) != LLM_OK)
			die_lib();
	}
	free(ll);
	llm_buf_release(&line);
	llm_json_rec_release(&rec);
	llm_chooser_free(ch);
}


int evt_cmd_choice(const evt_opts *o, char **files, int nfiles)
{
	static char *stdin_only[] = { "-" };
	if (!o->ckpt)
		usage_error("choice needs --ckpt");
	if (!nfiles) {
		files = stdin_only;
		nfiles = 1;
	}
	if (o->log_samples && (tool_same_output(o->log_samples, NULL) ||
	                       (o->json && tool_same_output(o->log_samples, o->json)) ||
	                       (o->co.rejects && tool_same_output(o->log_samples, o->co.rejects))))
		usage_error("--log-samples %s: the same file as standard output, --json or --rejects",
		            o->log_samples);
	llm_run *run = evt_new_run(o);
	evt_model mt;
	evt_load_model(&mt, o->ckpt, o);
	llm_bpe *bpe = evt_tokenizer(o, &mt);
	if (!bpe)
		usage_error("choice needs -t: no tokenizer.json beside %s or in its run directory",
		            mt.info.dir);
	llm_choice_tally res = { 0 };
	double t0 = evt_now();
	llm_writer *samples = NULL;
	if (o->log_samples && llm_writer_open(&samples, o->log_samples) != LLM_OK)
		die_lib();
	llm_fewshot *fs = evt_load_fewshot(o, files, nfiles);
	evt_run_choice(o, &mt, bpe, files, nfiles, run, &res, samples, fs);
	llm_fewshot_free(fs);
	if (samples && llm_writer_close(samples) != LLM_OK)
		die_lib();
	double secs = evt_now() - t0;
	llm_choice_dom all;
	llm_choice_tally_total(&res, &all);
	printf("%-12s %8s %8s %8s %8s %8s\n", "domain", "items", "acc", "stderr", "acc_norm",
	       "stderr");
	for (size_t i = 0; i <= res.n; i++) {
		const llm_choice_dom *d = i < res.n ? &res.d[i] : &all;
		printf("%-12s %8llu %8.4f %8.4f %8.4f %8.4f\n", d->name, (unsigned long long)d->items,
		       llm_eval_ratio(d->acc, d->items), llm_eval_acc_stderr(d->acc, d->items),
		       llm_eval_ratio(d->acc_norm, d->items), llm_eval_acc_stderr(d->acc_norm, d->items));
	}
	evt_check_stdout();
	if (o->json) {
		llm_buf b;
		llm_buf_init(&b);
		llm_buf_adds(&b, "{\"checkpoint\": ");
		llm_json_put_str(&b, mt.info.dir, strlen(mt.info.dir));
		llm_buf_addf(&b, ", \"step\": %lld", (long long)mt.info.step);
		evt_device_json(&b, o);
		llm_buf_adds(&b, ", \"all\": ");
		llm_evalres_choice_json(&b, &all);
		llm_buf_adds(&b, ", \"domains\": {");
		for (size_t i = 0; i < res.n; i++) {
			llm_buf_adds(&b, i ? ", " : "");
			llm_json_put_str(&b, res.d[i].name, strlen(res.d[i].name));
			llm_buf_adds(&b, ": ");
			llm_evalres_choice_json(&b, &res.d[i]);
		}
		llm_buf_addf(&b, "}, \"skipped\": %llu}", (unsigned long long)res.bad);
		evt_write_json(o->json, &b);
		llm_buf_release(&b);
	}
	llm_info("%llu items in %.2f s%s", (unsigned long long)all.items, secs,
	         res.bad ? "; malformed items skipped" : "");
	llm_choice_tally_release(&res);
	llm_bpe_free(bpe);
	evt_free_model(&mt);
	return evt_finish_run(o, run, 0);
}

