/*
 * harness.c — llm-eval task: lm-evaluation-harness task YAML for local data (model/task.h).
 * multiple_choice tasks are scored as llm-eval choice scores its items, their documents
 * turned into items by the YAML's templates; one row per task, and with --json the JSON of
 * lm-evaluation-harness's results ("results", "n-shot", "versions", "configs").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/io.h"
#include "core/json.h"
#include "llm-eval.h"

typedef struct {
	llm_task t;
	llm_choice_dom all;
	llm_choice_tally tally;
	llm_eval_sums sums; /* loglikelihood_rolling */
	int nshot;
} task_res;

static int rolling(const llm_task *t)
{
	return t->output_type == LLM_TASK_ROLLING;
}

static int has_metric(const llm_task *t, const char *m)
{
	if (!t->nmetrics && rolling(t)) /* lm-evaluation-harness's defaults */
		return strcmp(m, "word_perplexity") == 0 || strcmp(m, "byte_perplexity") == 0 ||
		       strcmp(m, "bits_per_byte") == 0;
	if (!t->nmetrics)
		return strcmp(m, "acc") == 0 || strcmp(m, "acc_norm") == 0;
	for (size_t i = 0; i < t->nmetrics; i++)
		if (strcmp(t->metrics[i], m) == 0)
			return 1;
	return 0;
}

static void put_str(llm_buf *b, const char *s)
{
	if (s)
		llm_json_put_str(b, s, strlen(s));
	else
		llm_buf_adds(b, "null");
}

/* A version as lm-evaluation-harness keeps it: the YAML's number, else its text. */
static void put_version(llm_buf *b, const char *v)
{
	char *end;
	if (v && *v && (strtod(v, &end), !*end))
		llm_buf_adds(b, v);
	else
		put_str(b, v);
}

static const char *const metric_names[] = { "acc", "acc_norm", "word_perplexity",
	                                     "byte_perplexity", "bits_per_byte", NULL };

/* A rolling task's metrics; lm-evaluation-harness gives them no standard error ("N/A"). */
static void rolling_json(llm_buf *b, const llm_task *t, const llm_eval_sums *s)
{
	if (!rolling(t))
		return;
	double v[] = { llm_eval_word_ppl(s), llm_eval_byte_ppl(s), llm_eval_bits_per_byte(s) };
	for (int m = 0; m < 3; m++)
		if (has_metric(t, metric_names[m + 2])) {
			llm_buf_addf(b, ", \"%s,none\": ", metric_names[m + 2]);
			llm_json_put_f64(b, v[m]);
			llm_buf_addf(b, ", \"%s_stderr,none\": \"N/A\"", metric_names[m + 2]);
		}
}

static void results_json(llm_buf *b, const evt_opts *o, const evt_model *mt, const task_res *r,
                         size_t n)
{
	static const char *const sections[] = { "results", "n-shot", "versions", "configs",
		                                "higher_is_better", "n-samples" };
	llm_buf_adds(b, "{");
	for (size_t s = 0; s < sizeof sections / sizeof *sections; s++) {
		llm_buf_addf(b, "%s\"%s\": {", s ? ", " : "", sections[s]);
		for (size_t i = 0; i < n; i++) {
			const llm_task *t = &r[i].t;
			const llm_choice_dom *a = &r[i].all;
			llm_buf_adds(b, i ? ", " : "");
			put_str(b, t->name);
			llm_buf_adds(b, ": ");
			if (s == 0) {
				llm_buf_adds(b, "{\"alias\": ");
				put_str(b, t->name);
				if (has_metric(t, "acc")) {
					llm_buf_adds(b, ", \"acc,none\": ");
					llm_json_put_f64(b, llm_eval_ratio(a->acc, a->items));
					llm_buf_adds(b, ", \"acc_stderr,none\": ");
					llm_json_put_f64(b, llm_eval_acc_stderr(a->acc, a->items));
				}
				if (has_metric(t, "acc_norm")) {
					llm_buf_adds(b, ", \"acc_norm,none\": ");
					llm_json_put_f64(b, llm_eval_ratio(a->acc_norm, a->items));
					llm_buf_adds(b, ", \"acc_norm_stderr,none\": ");
					llm_json_put_f64(b, llm_eval_acc_stderr(a->acc_norm, a->items));
				}
				rolling_json(b, t, &r[i].sums);
				llm_buf_addc(b, '}');
			} else if (s == 1) {
				llm_buf_addf(b, "%d", r[i].nshot);
			} else if (s == 2) {
				put_version(b, t->version);
			} else if (s == 3) {
				llm_buf_adds(b, "{\"task\": ");
				put_str(b, t->name);
				llm_buf_adds(b, ", \"dataset_path\": \"json\", \"test_split\": ");
				put_str(b, llm_task_eval_split(t));
				llm_buf_addf(b, ", \"output_type\": \"%s\", \"description\": ",
				             rolling(t) ? "loglikelihood_rolling" : "multiple_choice");
				put_str(b, t->description ? t->description : "");
				llm_buf_adds(b, ", \"target_delimiter\": ");
				put_str(b, t->target_delimiter ? t->target_delimiter : " ");
				llm_buf_adds(b, ", \"fewshot_delimiter\": ");
				put_str(b, t->fewshot_delimiter ? t->fewshot_delimiter : "\n\n");
				llm_buf_addf(b, ", \"num_fewshot\": %d, \"metadata\": {\"version\": ", r[i].nshot);
				put_version(b, t->version);
				llm_buf_adds(b, "}}");
			} else if (s == 4) {
				/* every metric here is better higher (acc) or lower (perplexities) */
				llm_buf_adds(b, "{");
				for (size_t m = 0, k = 0; metric_names[m]; m++)
					if (has_metric(t, metric_names[m]))
						llm_buf_addf(b, "%s\"%s\": %s", k++ ? ", " : "", metric_names[m],
						             m < 2 ? "true" : "false");
				llm_buf_adds(b, "}");
			} else {
				uint64_t docs = rolling(t) ? r[i].sums.docs : a->items;
				llm_buf_addf(b, "{\"original\": %llu, \"effective\": %llu}",
				             (unsigned long long)docs, (unsigned long long)docs);
			}
		}
		llm_buf_adds(b, "}");
	}
	llm_buf_adds(b, ", \"config\": {\"model\": \"llm-eval\", \"model_args\": ");
	put_str(b, mt->info.dir);
	llm_buf_addf(b, ", \"step\": %lld}", (long long)mt->info.step);
	evt_device_json(b, o);
	llm_buf_adds(b, "}");
}

/* A loglikelihood_rolling task: each document's doc_to_target alone, as loss --mode rolling
 * scores a document (lm-evaluation-harness's max_length windows, its prefix token). */
static void run_rolling(const evt_opts *o, const evt_model *mt, const llm_bpe *bpe, llm_run *run,
                        task_res *r)
{
	const llm_task *t = &r->t;
	if (o->fewshot_given && o->num_fewshot)
		die("%s: a loglikelihood_rolling task takes no few-shot examples", t->file);
	evt_opts to = *o;
	to.mode = EVT_MODE_ROLLING;
	int64_t start = evt_doc_prefix(o, bpe);
	if (start < 0)
		usage_error("%s: loglikelihood_rolling needs a prefix token (no --no-prefix)", t->file);
	llm_evaluator *ev = llm_evaluator_new(mt->m, evt_seq_len(&to, mt), o->batch ? o->batch : 8,
	                                      bpe, start);
	evt_scorer_evaluator(ev, mt);
	llm_bpe_enc *enc = llm_bpe_enc_new(bpe);
	tool_lines in;
	if (tool_lines_open(&in, llm_task_split_file(t, llm_task_eval_split(t)), &o->co, run) != LLM_OK)
		die_lib();
	llm_json_rec rec;
	llm_json_rec_init(&rec);
	llm_buf text = LLM_BUF_INIT;
	llm_ids ids;
	llm_ids_init(&ids);
	while (tool_lines_next(&in)) {
		int json = !in.too_long && llm_json_parse(&rec, in.line, in.len) == LLM_OK;
		int h = json ? llm_run_in_rec(run, in.full_len + 1, &rec)
		             : llm_run_in(run, in.full_len + 1, NULL, 0);
		llm_buf_reset(&text);
		if (in.too_long || !json) {
			evt_reject_line(o, run, h, &in, in.too_long ? "too_long" : "bad_json",
			                in.too_long ? "line over --max-line" : rec.err_msg, NULL);
			continue;
		}
		if (llm_task_render(t->doc_to_target, &rec, &text) != LLM_OK) {
			evt_reject_line(o, run, h, &in, "bad_item", llm_last_error(), &rec);
			continue;
		}
		ids.n = 0;
		if (llm_bpe_encode(enc, text.p, text.len, LLM_BPE_SPECIAL_IGNORE, &ids) != LLM_OK ||
		    llm_eval_doc_rolling(ev, t->name, text.p ? text.p : "", text.len, ids.v, ids.n))
			die("%s:%llu: %s", in.name, (unsigned long long)in.lineno, llm_last_error());
		llm_run_out(run, h, in.full_len + 1);
	}
	if (tool_lines_close(&in) != LLM_OK || llm_eval_flush(ev) != LLM_OK)
		die_lib();
	llm_eval_total(ev, &r->sums);
	llm_ids_release(&ids);
	llm_buf_release(&text);
	llm_json_rec_release(&rec);
	llm_bpe_enc_free(enc);
	llm_evaluator_free(ev);
}

/* Score one task into r. */
static void run_task(const evt_opts *o, const evt_model *mt, const llm_bpe *bpe, llm_run *run,
                     task_res *r, llm_writer *samples)
{
	const llm_task *t = &r->t;
	for (size_t i = 0; i < t->nmetrics; i++)
		if (rolling(t) != (strncmp(t->metrics[i], "acc", 3) != 0))
			die("%s: metric %s is not one of %s", t->file, t->metrics[i],
			    rolling(t) ? "loglikelihood_rolling's (word_perplexity, byte_perplexity, "
			                 "bits_per_byte)" : "multiple_choice's (acc, acc_norm)");
	if (rolling(t)) {
		run_rolling(o, mt, bpe, run, r);
		return;
	}
	evt_opts to = *o;
	to.ytask = t;
	to.delim = t->target_delimiter ? t->target_delimiter : " ";
	to.fewshot_delim = t->fewshot_delimiter ? t->fewshot_delimiter : "\n\n";
	to.num_fewshot = o->fewshot_given ? o->num_fewshot : t->num_fewshot > 0 ? t->num_fewshot : 0;
	if (!o->description)
		to.description = t->description;
	to.fewshot_from = llm_task_split_file(t, llm_task_fewshot_split(t));
	to.fewshot_self = llm_task_fewshot_self(t);
	if (!to.fewshot_from && to.num_fewshot)
		die("%s: no data file for the few-shot split %s", t->file, llm_task_fewshot_split(t));
	r->nshot = to.num_fewshot;
	char *file = (char *)llm_task_split_file(t, llm_task_eval_split(t));
	llm_fewshot *fs = evt_load_fewshot(&to, &file, 1);
	evt_run_choice(&to, mt, bpe, &file, 1, run, &r->tally, samples, fs);
	llm_fewshot_free(fs);
	llm_choice_tally_total(&r->tally, &r->all);
}

int evt_cmd_task(const evt_opts *o, char **files, int nfiles)
{
	if (!o->ckpt)
		usage_error("task needs --ckpt");
	if (!nfiles)
		usage_error("task needs task YAML files");
	if (o->fewshot_from)
		usage_error("--fewshot-from: a task names its few-shot split");
	task_res *r = llm_calloc((size_t)nfiles, sizeof *r);
	for (int i = 0; i < nfiles; i++)
		if (llm_task_load(&r[i].t, files[i]) != LLM_OK)
			die_lib();
	llm_run *run = evt_new_run(o);
	evt_model mt;
	evt_load_model(&mt, o->ckpt, o);
	llm_bpe *bpe = evt_tokenizer(o, &mt);
	if (!bpe)
		usage_error("task needs -t: no tokenizer.json beside %s or in its run directory",
		            mt.info.dir);
	llm_writer *samples = NULL;
	if (o->log_samples && llm_writer_open(&samples, o->log_samples) != LLM_OK)
		die_lib();
	double t0 = evt_now();
	for (int i = 0; i < nfiles; i++)
		run_task(o, &mt, bpe, run, &r[i], samples);
	if (samples && llm_writer_close(samples) != LLM_OK)
		die_lib();
	printf("%-20s %6s %8s %8s %8s %8s %8s\n", "task", "n-shot", "items", "acc", "stderr",
	       "acc_norm", "stderr");
	uint64_t items = 0;
	for (int i = 0; i < nfiles; i++) {
		const llm_choice_dom *d = &r[i].all;
		if (rolling(&r[i].t)) {
			/* the perplexities in the columns of acc and acc_norm, bits per byte after */
			const llm_eval_sums *su = &r[i].sums;
			printf("%-20s %6d %8llu %8s %8s %8s %8s  word_ppl %.6g byte_ppl %.6g "
			       "bits_per_byte %.6g\n", r[i].t.name, 0, (unsigned long long)su->docs,
			       "-", "-", "-", "-", llm_eval_word_ppl(su), llm_eval_byte_ppl(su),
			       llm_eval_bits_per_byte(su));
			items += su->docs;
			continue;
		}
		printf("%-20s %6d %8llu %8.4f %8.4f %8.4f %8.4f\n", r[i].t.name, r[i].nshot,
		       (unsigned long long)d->items, llm_eval_ratio(d->acc, d->items),
		       llm_eval_acc_stderr(d->acc, d->items), llm_eval_ratio(d->acc_norm, d->items),
		       llm_eval_acc_stderr(d->acc_norm, d->items));
		items += d->items;
	}
	evt_check_stdout();
	if (o->json) {
		llm_buf b = LLM_BUF_INIT;
		results_json(&b, o, &mt, r, (size_t)nfiles);
		evt_write_json(o->json, &b);
		llm_buf_release(&b);
	}
	llm_info("%llu items of %d tasks in %.2f s", (unsigned long long)items, nfiles,
	         evt_now() - t0);
	for (int i = 0; i < nfiles; i++) {
		llm_choice_tally_release(&r[i].tally);
		llm_task_release(&r[i].t);
	}
	free(r);
	llm_bpe_free(bpe);
	evt_free_model(&mt);
	return evt_finish_run(o, run, 0);
}
