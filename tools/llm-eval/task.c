/*
 * task.c — llm-eval task: lm-evaluation-harness task YAML for local data (model/task.h).
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
	int nshot;
} task_res;

static int has_metric(const llm_task *t, const char *m)
{
	if (!t->nmetrics) /* lm-evaluation-harness's multiple_choice defaults */
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
				llm_buf_adds(b, ", \"output_type\": \"multiple_choice\", \"description\": ");
				put_str(b, t->description ? t->description : "");
				llm_buf_adds(b, ", \"target_delimiter\": ");
				put_str(b, t->target_delimiter ? t->target_delimiter : " ");
				llm_buf_adds(b, ", \"fewshot_delimiter\": ");
				put_str(b, t->fewshot_delimiter ? t->fewshot_delimiter : "\n\n");
				llm_buf_addf(b, ", \"num_fewshot\": %d, \"metadata\": {\"version\": ", r[i].nshot);
				put_version(b, t->version);
				llm_buf_adds(b, "}}");
			} else if (s == 4) {
				llm_buf_adds(b, "{");
				if (has_metric(t, "acc"))
					llm_buf_adds(b, "\"acc\": true");
				if (has_metric(t, "acc_norm"))
					llm_buf_adds(b, has_metric(t, "acc") ? ", \"acc_norm\": true"
					                                     : "\"acc_norm\": true");
				llm_buf_adds(b, "}");
			} else {
				llm_buf_addf(b, "{\"original\": %llu, \"effective\": %llu}",
				             (unsigned long long)a->items, (unsigned long long)a->items);
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

/* Score one multiple-choice task into r. */
static void run_task(const evt_opts *o, const evt_model *mt, const llm_bpe *bpe, llm_run *run,
                     task_res *r, llm_writer *samples)
{
	const llm_task *t = &r->t;
	if (t->output_type != LLM_TASK_MULTIPLE_CHOICE)
		die("%s: llm-eval task scores multiple_choice tasks; use llm-eval loss --mode rolling "
		    "for loglikelihood_rolling", t->file);
	for (size_t i = 0; i < t->nmetrics; i++)
		if (strcmp(t->metrics[i], "acc") != 0 && strcmp(t->metrics[i], "acc_norm") != 0)
			die("%s: metric %s is not one of multiple_choice's (acc, acc_norm)", t->file,
			    t->metrics[i]);
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
