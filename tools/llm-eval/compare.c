/*
 * compare.c — llm-eval compare: each checkpoint's validation loss on one manifest (and its
 * accuracy on a task), one row each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "llm-eval.h"

int evt_cmd_compare(const evt_opts *o, char **files, int nfiles)
{
	if (!o->data)
		usage_error("compare needs --data");
	if (!nfiles)
		usage_error("compare needs checkpoints");
	char *data = (char *)o->data;
	llm_buf b;
	llm_buf_init(&b);
	llm_buf_adds(&b, "[");
	printf("%10s %12s %9s %11s %9s %8s %8s  %s\n", "step", "tokens", "val_loss", "ppl",
	       "bits/byte", "acc", "acc_norm", "checkpoint");
	/* The lines read are accounted on the first checkpoint's pass; the others read the same. */
	llm_run *run = evt_new_run(o);
	uint64_t bad0 = 0;
	int failed = 0;
	for (int i = 0; i < nfiles; i++) {
		evt_model mt;
		evt_load_model(&mt, files[i], o);
		llm_bpe *bpe = evt_tokenizer(o, &mt);
		if (o->task && !bpe)
			usage_error("--task needs -t: no tokenizer.json beside %s or in its run directory",
			            mt.info.dir);
		double secs;
		llm_evaluator *ev = evt_run_loss(o, &mt, &data, 1, bpe, i ? NULL : run, &secs);
		llm_eval_sums all;
		llm_eval_total(ev, &all);
		llm_choice_dom acc = { .name = "all" };
		llm_choice_tally res = { 0 };
		if (o->task) {
			char *task = (char *)o->task;
			evt_run_choice(o, &mt, bpe, &task, 1, i ? NULL : run, &res, NULL, NULL);
			llm_choice_tally_total(&res, &acc);
			if (!i)
				bad0 = res.bad;
			if (res.bad != bad0) {
				/* not in the rejects file, which holds the first pass's */
				llm_error("%s: %llu items rejected with %s, %llu with %s", o->task,
				          (unsigned long long)res.bad, files[i], (unsigned long long)bad0,
				          files[0]);
				failed = 1;
			}
		}
		char bpb[32] = "-", a[32] = "-", an[32] = "-";
		if (all.bytes)
			snprintf(bpb, sizeof bpb, "%.4f", llm_eval_bits_per_byte(&all));
		if (acc.items) {
			snprintf(a, sizeof a, "%.4f", llm_eval_ratio(acc.acc, acc.items));
			snprintf(an, sizeof an, "%.4f", llm_eval_ratio(acc.acc_norm, acc.items));
		}
		printf("%10lld %12lld %9.4f %11.3f %9s %8s %8s  %s\n", (long long)mt.info.step,
		       (long long)mt.info.tokens, llm_eval_loss(&all), llm_eval_ppl(&all), bpb, a, an,
		       mt.info.dir);
		evt_check_stdout();
		llm_buf_adds(&b, i ? ",\n " : "");
		llm_buf_adds(&b, "{\"checkpoint\": ");
		llm_json_put_str(&b, mt.info.dir, strlen(mt.info.dir));
		llm_buf_addf(&b, ", \"step\": %lld, \"tokens_seen\": %lld, \"val\": ",
		             (long long)mt.info.step, (long long)mt.info.tokens);
		llm_evalres_sums_json(&b, &all);
		if (o->task) {
			llm_buf_adds(&b, ", \"choice\": ");
			llm_evalres_choice_json(&b, &acc);
		}
		llm_buf_addc(&b, '}');
		llm_choice_tally_release(&res);
		llm_evaluator_free(ev);
		llm_bpe_free(bpe);
		evt_free_model(&mt);
	}
	llm_buf_adds(&b, "]");
	if (o->json)
		evt_write_json(o->json, &b);
	llm_buf_release(&b);
	return evt_finish_run(o, run, failed);
}

