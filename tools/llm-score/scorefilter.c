/*
 * scorefilter.c — llm-score's scoring filter (no subcommand), sketch and merge.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm-score.h"

/* ---- llm-score: the filter ---- */

static void emit_scored(struct pass *p, score_item *it, const char *line)
{
	const struct cfg *c = p->j->c;
	const char *name = score_pass_name(p);
	if (it->reason) {
		if (c->co.strict)
			die("%s:%llu: %s", name, (unsigned long long)it->ln.lineno, it->msg);
		llm_warn_at(name, it->ln.lineno, "%s", it->msg);
		int dom = it->parsed ? llm_run_in_rec(p->run, it->ln.full_len + 1, &it->rec)
		                     : llm_run_in(p->run, it->ln.full_len + 1, NULL, 0);
		char extra[64] = "";
		if (it->ln.too_long)
			snprintf(extra, sizeof extra, "\"length\": %zu", it->ln.full_len);
		if (llm_run_reject(p->run, dom, it->reason, line, it->ln.len, it->parsed ? &it->rec : NULL,
		                   *extra ? extra : NULL, name, it->ln.lineno) != LLM_OK)
			die_lib();
		return;
	}
	int dom = llm_run_in_rec(p->run, it->ln.len + 1, &it->rec);
	if (it->unknown)
		llm_run_count_domain(p->run, dom, "no_features", 1);
	if (!it->kept) {
		/* The reject carries the scores and buckets it was judged by. */
		if (llm_json_parse(&p->outrec, it->out.p, it->out.len) != LLM_OK)
			abort();
		if (llm_run_reject(p->run, dom, "score", it->out.p, it->out.len, &p->outrec, NULL,
		                   name, it->ln.lineno) != LLM_OK)
			die_lib();
		return;
	}
	llm_buf_addc(&it->out, '\n');
	if (llm_writer_write(p->out, it->out.p, it->out.len) != LLM_OK)
		die_lib();
	llm_run_out(p->run, dom, it->out.len);
}

int score_cmd_score(const struct cfg *c, char **files, int nfiles)
{
	if (!c->nmodels && !c->sketch && !c->keep_expr)
		usage_error("nothing to do: give -m NAME=MODEL, --buckets with --sketch, or --keep");
	struct job j;
	score_job_open(&j, c);
	struct pass p;
	score_pass_open(&p, &j);
	p.emit = emit_scored;
	if (llm_writer_open(&p.out, c->co.output) != LLM_OK)
		die_lib();
	p.run = tool_run_new(&c->co);
	int failed = score_pass_run(&p, files, nfiles);
	if (llm_writer_close(p.out) != LLM_OK) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	score_pass_close(&p);
	score_job_close(&j);
	return tool_run_finish(p.run, failed);
}

/* ---- sketch ---- */

/* Warn once per score name that is not a probability. */
static void warn_once(struct pass *p, const char *name, const char *why)
{
	for (size_t i = 0; i < p->nwarned; i++)
		if (strcmp(p->warned[i], name) == 0)
			return;
	p->warned = llm_realloc(p->warned, (p->nwarned + 1) * sizeof *p->warned);
	p->warned[p->nwarned++] = llm_strdup(name);
	llm_warn("score '%s' %s: not sketched", name, why);
}

static void emit_sketched(struct pass *p, score_item *it, const char *line)
{
	(void)line;
	if (it->reason) {
		const char *in = score_pass_name(p);
		if (p->j->c->co.strict)
			die("%s:%llu: %s", in, (unsigned long long)it->ln.lineno, it->msg);
		llm_warn_at(in, it->ln.lineno, "%s", it->msg);
		return;
	}
	llm_json_val scores;
	size_t epos;
	const char *emsg;
	if (llm_json_parse_value(it->scores.p, it->scores.len, &scores, &epos, &emsg) != LLM_OK)
		abort();
	size_t iter = 0;
	llm_json_val key, val;
	llm_buf name = LLM_BUF_INIT;
	while (llm_json_next(&scores, &iter, &key, &val) == LLM_OK) {
		llm_buf_reset(&name);
		llm_json_str(&key, &name);
		double x;
		if (val.type != LLM_JSON_NUMBER || llm_json_num(&val, &x) != LLM_OK) {
			if (val.type != LLM_JSON_OBJECT) /* a distribution is sketched by no name */
				warn_once(p, name.p ? name.p : "", "is not a number");
			continue;
		}
		/* a model's value (a perplexity) is sketched as a value, any other score as a
		 * probability */
		int i = llm_scorer_find(p->j->sc, name.p ? name.p : "", name.len);
		if (i >= 0 && llm_scorer_is_value(p->j->sc, (size_t)i)) {
			if (llm_scoresketch_add_value(p->acc, name.p, name.len, x) != LLM_OK)
				warn_once(p, name.p, "is not a finite number");
		} else if (llm_scoresketch_add(p->acc, name.p ? name.p : "", name.len, x) != LLM_OK) {
			warn_once(p, name.p ? name.p : "", "is not a probability in [0, 1.00001] (a "
			          "value score is sketched with its model, -m)");
		}
	}
	llm_buf_release(&name);
}

int score_cmd_sketch(const struct cfg *c, char **files, int nfiles)
{
	if (!c->co.output)
		usage_error("sketch needs -o SKETCH");
	struct job j;
	score_job_open(&j, c);
	struct pass p;
	score_pass_open(&p, &j);
	p.emit = emit_sketched;
	p.acc = llm_scoresketch_new();
	int failed = score_pass_run(&p, files, nfiles);
	if (!failed && llm_scoresketch_save(p.acc, c->co.output) != LLM_OK) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	for (size_t i = 0; !failed && i < llm_scoresketch_count(p.acc); i++)
		llm_info("score '%s': %llu documents", llm_scoresketch_name(p.acc, i),
		         (unsigned long long)llm_scoresketch_documents(p.acc, i));
	llm_scoresketch_free(p.acc);
	score_pass_close(&p);
	score_job_close(&j);
	return failed;
}

/* ---- merge ---- */

int score_cmd_merge(const struct cfg *c, char **files, int nfiles)
{
	if (!c->co.output)
		usage_error("merge needs -o SKETCH");
	if (nfiles < 1)
		usage_error("merge needs at least one sketch");
	llm_scoresketch *all = llm_scoresketch_new();
	for (int i = 0; i < nfiles; i++) {
		llm_scoresketch *s;
		if (llm_scoresketch_load(&s, files[i]) != LLM_OK)
			die_lib();
		if (llm_scoresketch_merge(all, s) != LLM_OK)
			die("%s: %s", files[i], llm_last_error());
		llm_scoresketch_free(s);
	}
	if (llm_scoresketch_save(all, c->co.output) != LLM_OK)
		die_lib();
	llm_scoresketch_free(all);
	return 0;
}

