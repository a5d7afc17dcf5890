/*
 * scorepass.c — llm-score's pass over the records: every record scored on the pool, its
 * buckets and its --keep verdict, written in order by the subcommand's emitter; and the
 * models, the sketch and the expression the pass reads, from the options.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm-score.h"

static int reject(score_item *it, const char *reason, const char *fmt, const char *arg)
{
	it->reason = reason;
	snprintf(it->msg, sizeof it->msg, fmt, arg);
	return 0;
}

/* A number member of an object value (type INVALID when absent). */
static int member_num(const llm_json_val *obj, const char *key, double *x)
{
	llm_json_val v = llm_json_member(obj, key);
	return v.type == LLM_JSON_NUMBER && llm_json_num(&v, x) == LLM_OK;
}

/* The buckets of the item's scores under --sketch: "buckets" into w->buckets, the ensemble
 * returned (0: a score is missing, the item rejected). */
static int bucket_item(const struct job *j, score_worker *w, score_item *it,
                       const llm_json_val *scores)
{
	size_t n = llm_scoresketch_count(j->sk);
	long sum = 0;
	int best = 0;
	llm_buf_reset(&w->buckets);
	llm_buf_addc(&w->buckets, '{');
	for (size_t i = 0; i < n; i++) {
		const char *name = llm_scoresketch_name(j->sk, i);
		double x;
		if (!member_num(scores, name, &x))
			return reject(it, "no_score", "no score '%s' to bucket", name);
		int b = llm_scoresketch_bucket(j->sk, i, x, j->c->nbuckets);
		if (!b)
			return reject(it, "bad_score", llm_scoresketch_is_value(j->sk, i) ?
			              "score '%s' is not a finite number" : "score '%s' is not a probability",
			              name);
		w->bucket[i] = b;
		sum += b;
		best = b > best ? b : best;
		llm_buf_addf(&w->buckets, "%s", i ? ", " : "");
		llm_json_put_str(&w->buckets, name, strlen(name));
		llm_buf_addf(&w->buckets, ": %d", b);
	}
	llm_buf_addc(&w->buckets, '}');
	/* The rounded mean, halves up: (2 sum + n) / 2n in integers. */
	return j->c->mean ? (int)((2 * sum + (long)n) / (2 * (long)n)) : best;
}

/* The --keep variables of the item; 0 when one is missing (the item rejected). */
static int keep_values(const struct job *j, score_worker *w, score_item *it,
                       const llm_json_val *scores, int ensemble)
{
	for (size_t i = 0; i < j->nvars; i++) {
		const score_var *v = &j->vars[i];
		double x = NAN;
		if (v->kind == VAR_BUCKET) {
			x = ensemble;
		} else if (v->kind == VAR_BUCKET_OF) {
			x = w->bucket[v->sk];
		} else if (v->kind == VAR_SCORE) {
			if (!member_num(scores, v->name, &x))
				return reject(it, "no_score", "no score '%s' for --keep", v->name);
		} else {
			llm_json_val d = llm_json_member(scores, v->name);
			if (d.type != LLM_JSON_OBJECT || !member_num(&d, v->label, &x))
				return reject(it, "no_score", "no score '%s' for --keep",
				              llm_scorekeep_var(j->keep, i));
		}
		w->value[i] = x;
	}
	return 1;
}

/* Score record i of the batch on the pool with worker wid's scratch. */
static void score_one(void *ctx, tool_batch *b, size_t i, int wid)
{
	struct pass *p = ctx;
	const struct job *j = p->j;
	const struct cfg *c = j->c;
	score_item *it = tool_batch_item(&p->loop, b, i);
	score_worker *w = &p->w[wid];
	it->reason = NULL;
	it->parsed = 0;
	it->unknown = 0;
	it->kept = 1;
	llm_buf_reset(&it->scores);
	llm_buf_reset(&it->out);
	if (it->ln.too_long) {
		snprintf(it->msg, sizeof it->msg, "line of %zu bytes is longer than --max-line",
		         it->ln.full_len);
		it->reason = "too_long";
		return;
	}
	if (llm_json_parse(&it->rec, tool_batch_text(b, &it->ln), it->ln.len) != LLM_OK) {
		it->reason = "bad_json";
		snprintf(it->msg, sizeof it->msg, "bad JSON: %s at byte %zu", it->rec.err_msg,
		         it->rec.err_pos + 1);
		return;
	}
	it->parsed = 1;
	const llm_json_val *prev = llm_json_get(&it->rec, "scores");
	if (prev && prev->type != LLM_JSON_OBJECT) {
		reject(it, "bad_scores", "field '%s' is not an object", "scores");
		return;
	}
	if (llm_scorer_count(j->sc)) {
		const llm_json_val *t = llm_json_get(&it->rec, c->co.field);
		if (!t || t->type != LLM_JSON_STRING) {
			reject(it, "no_text", t ? "field '%s' is not a string" : "missing field '%s'",
			       c->co.field);
			return;
		}
		llm_buf_reset(&w->text);
		llm_json_str(t, &w->text);
		it->unknown = llm_scorer_run(j->sc, w->s, w->text.p ? w->text.p : "", w->text.len,
		                             prev, &it->scores);
	} else if (prev) {
		llm_buf_add(&it->scores, prev->p, prev->len);
	} else {
		llm_buf_adds(&it->scores, "{}");
	}
	if (c->cmd == CMD_SKETCH)
		return;
	llm_json_val scores;
	size_t epos;
	const char *emsg;
	/* Our own text, or a value the record's parse validated. */
	if (llm_json_parse_value(it->scores.p, it->scores.len, &scores, &epos, &emsg) != LLM_OK)
		abort();
	int ensemble = 0;
	if (j->sk && !(ensemble = bucket_item(j, w, it, &scores)))
		return;
	if (j->keep) {
		if (!keep_values(j, w, it, &scores, ensemble))
			return;
		it->kept = llm_scorekeep_eval(j->keep, w->value);
	}
	llm_json_edit_reset(&w->ed);
	if (llm_scorer_count(j->sc))
		llm_json_edit_raw(&w->ed, "scores", it->scores.p, it->scores.len);
	if (j->sk) {
		llm_json_edit_raw(&w->ed, "buckets", w->buckets.p, w->buckets.len);
		llm_json_edit_i64(&w->ed, "bucket", ensemble);
	}
	llm_json_write(&it->rec, &w->ed, &it->out);
}


/* Write the scored batch, in input order, through the pass's emitter. */
static void write_batch(void *ctx, tool_batch *b)
{
	struct pass *p = ctx;
	for (size_t i = 0; i < b->n; i++) {
		score_item *it = tool_batch_item(&p->loop, b, i);
		p->emit(p, it, tool_batch_text(b, &it->ln));
	}
}

static void item_init(void *x)
{
	llm_json_rec_init(&((score_item *)x)->rec);
}

static void item_release(void *x)
{
	score_item *it = x;
	llm_json_rec_release(&it->rec);
	llm_buf_release(&it->scores);
	llm_buf_release(&it->out);
}

void score_pass_open(struct pass *p, struct job *j)
{
	memset(p, 0, sizeof *p);
	p->j = j;
	if (llm_pool_new(&p->pool, j->c->co.threads) != LLM_OK)
		die_lib();
	int nw = llm_pool_workers(p->pool);
	size_t nsk = j->sk ? llm_scoresketch_count(j->sk) : 0;
	p->w = llm_calloc((size_t)nw, sizeof *p->w);
	for (int i = 0; i < nw; i++) {
		if (!(p->w[i].s = llm_scorer_scratch_new(j->sc)))
			die("out of memory for the models' scratch");
		llm_json_edit_init(&p->w[i].ed);
		p->w[i].bucket = llm_calloc(nsk + 1, sizeof *p->w[i].bucket);
		p->w[i].value = llm_calloc(j->nvars + 1, sizeof *p->w[i].value);
	}
	/* A batch is scored by size, or at 65536 documents (small records' items). */
	tool_batchloop_init(&p->loop,
	                    &(tool_batchloop_ops){ sizeof(score_item), score_one, write_batch,
	                                           item_init, item_release },
	                    p->pool, p, j->c->batch_bytes, 65536, &j->c->co);
	llm_json_rec_init(&p->outrec);
}

int score_pass_run(struct pass *p, char **files, int nfiles)
{
	int failed = 0;
	if (nfiles == 0)
		failed |= tool_batchloop_file(&p->loop, "-", p->run);
	for (int i = 0; i < nfiles; i++)
		failed |= tool_batchloop_file(&p->loop, files[i], p->run);
	return failed;
}

const char *score_pass_name(const struct pass *p)
{
	return p->loop.name;
}

void score_pass_close(struct pass *p)
{
	int nw = llm_pool_workers(p->pool);
	llm_pool_free(p->pool);
	for (int i = 0; i < nw; i++) {
		llm_scorer_scratch_free(p->w[i].s);
		llm_buf_release(&p->w[i].text);
		llm_buf_release(&p->w[i].buckets);
		llm_json_edit_release(&p->w[i].ed);
		free(p->w[i].bucket);
		free(p->w[i].value);
	}
	free(p->w);
	tool_batchloop_release(&p->loop);
	llm_json_rec_release(&p->outrec);
	for (size_t i = 0; i < p->nwarned; i++)
		free(p->warned[i]);
	free(p->warned);
}

/* ---- the models, the sketch, the expression, from the options ---- */

void score_job_open(struct job *j, const struct cfg *c)
{
	memset(j, 0, sizeof *j);
	j->c = c;
	j->sc = llm_scorer_new();
	llm_scorer_set_opener(j->sc, score_model_open, NULL);
	for (int i = 0; i < c->nmodels; i++) {
		int rc = llm_scorer_add(j->sc, c->models[i], c->label);
		if (rc == LLM_EINVAL || rc == LLM_ENOTFOUND)
			usage_error("-m: %s", llm_last_error());
		if (rc != LLM_OK)
			die_lib();
	}
	if (c->sketch) {
		if (llm_scoresketch_load(&j->sk, c->sketch) != LLM_OK)
			die_lib();
		if (!llm_scoresketch_count(j->sk))
			die("%s: the sketch holds no score", c->sketch);
		for (size_t i = 0; i < llm_scoresketch_count(j->sk); i++)
			if (!llm_scoresketch_documents(j->sk, i))
				die("%s: score '%s' has no document", c->sketch, llm_scoresketch_name(j->sk, i));
	}
	if (!c->keep_expr)
		return;
	if (llm_scorekeep_parse(&j->keep, c->keep_expr) != LLM_OK)
		usage_error("--keep: %s", llm_last_error());
	j->nvars = llm_scorekeep_nvars(j->keep);
	j->vars = llm_calloc(j->nvars, sizeof *j->vars);
	/* Every name checked now that can be: a typo must not reject the whole corpus. */
	for (size_t i = 0; i < j->nvars; i++) {
		const char *s = llm_scorekeep_var(j->keep, i), *dot = strchr(s, '.');
		score_var *v = &j->vars[i];
		size_t n = dot ? (size_t)(dot - s) : strlen(s);
		if (n == 6 && memcmp(s, "bucket", 6) == 0) {
			if (!j->sk)
				usage_error("--keep: '%s' needs --buckets and --sketch", s);
			v->kind = dot ? VAR_BUCKET_OF : VAR_BUCKET;
			if (dot && (v->sk = llm_scoresketch_find(j->sk, dot + 1, strlen(dot + 1))) < 0)
				usage_error("--keep: '%s': %s has no score '%s'", s, c->sketch, dot + 1);
			continue;
		}
		v->kind = dot ? VAR_LABEL : VAR_SCORE;
		v->name = llm_strndup(s, n);
		v->label = dot ? llm_strdup(dot + 1) : NULL;
		if (llm_scorer_check(j->sc, s, n, v->label) == LLM_EINVAL)
			usage_error("--keep: %s", llm_last_error());
		if (llm_scorer_count(j->sc) && llm_scorer_find(j->sc, s, n) < 0)
			llm_warn("--keep: no -m names score '%s': it must be in the input's scores",
			         v->name);
	}
}

void score_job_close(struct job *j)
{
	for (size_t i = 0; i < j->nvars; i++) {
		free(j->vars[i].name);
		free(j->vars[i].label);
	}
	free(j->vars);
	llm_scorekeep_free(j->keep);
	llm_scoresketch_free(j->sk);
	llm_scorer_free(j->sc);
}

