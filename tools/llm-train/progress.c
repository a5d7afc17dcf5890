/*
 * progress.c — llm-train's progress line (stderr: the step, the loss, tokens per second, the
 * time left; one line redrawn on a terminal, every --log-every steps otherwise) and its
 * --report-every page.
 */
#include <math.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "llm-train.h"
#include "model/report.h"

double train_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * --report-every: llm-report's page of the run (with its diagnosis) into RUN_DIR/report.html,
 * replaced atomically. While training, the page names this trainer and asks the browser to
 * reload it at about the pace it is rewritten. A failure is warned about; training goes on.
 */
void train_report_page(progress *p, int64_t steps_done, int live)
{
	double per_step = (train_now() - p->t_begin) / (double)(steps_done > 0 ? steps_done : 1);
	if (llm_report_run(&p->rl, p->o->t.run_dir, live, per_step * p->o->report_every) != LLM_OK)
		llm_warn("--report-every: %s", llm_last_error());
}

void train_show_progress(void *ctx, const llm_trainer *t, const llm_train_step *s)
{
	progress *p = ctx;
	const options *o = p->o;
	llm_train_status st;
	llm_trainer_status(t, &st);
	if (!p->started) {
		/* A smoke run's lives: the clock starts at their first step. */
		p->started = 1;
		p->t_begin = train_now();
		p->first = st.step - 1;
		p->tok0 = st.tokens - (int64_t)o->t.batch * o->t.seq * o->t.accum * o->t.backend.world;
	}
	if (o->report_every && o->t.backend.rank == 0 && st.step % o->report_every == 0)
		train_report_page(p, st.step - p->first, 1);
	int tty = isatty(2);
	if (o->t.backend.rank || llm_verbosity() < 1 ||
	    (!tty && st.step % o->log_every && st.step != o->t.steps))
		return;
	double el = train_now() - p->t_begin, rate = (st.step - p->first) / (el > 0 ? el : 1e-9);
	double eta = rate > 0 ? (o->t.steps - st.step) / rate : 0;
	double tps = (double)(st.tokens - p->tok0) / (el > 0 ? el : 1e-9);
	char v[32] = "";
	if (isfinite(s->val_loss))
		snprintf(v, sizeof v, " val %.4f", s->val_loss);
	fprintf(stderr, "%sllm-train: step %lld/%lld loss %.4f (smoothed %.4f)%s lr %.3g | "
	                "%.0f tok/s, %.0f s, eta %.0f s%s",
	        tty ? "\r" : "", (long long)st.step, (long long)o->t.steps, s->loss, st.smoothed_loss,
	        v, st.lr, tps, el, eta, tty ? "\033[K" : "\n");
}

void train_end_progress(const options *o)
{
	if (o->t.backend.rank == 0 && llm_verbosity() >= 1 && isatty(2))
		fputc('\n', stderr);
}
