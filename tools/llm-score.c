/*
 * llm-score — per-document scores from trained classifiers (lib/text/score.h), their
 * percentile buckets (lib/text/scoresketch.h) and selection on them (lib/text/scorekeep.h).
 *
 *   llm-score -m NAME=MODEL ... [FILE...]   add "scores" to every record; with --buckets and
 *                                           --sketch, "buckets" and "bucket"; with --keep,
 *                                           drop the others (reject_reason "score")
 *   llm-score train -o M ...                a fastText model from --positive and --negative
 *                                           files (DCLM) or a --label-field
 *   llm-score sketch -o S [FILE...]         the sketch of every score of the input
 *   llm-score merge -o S SKETCH...          sketches merged
 *
 * Memory: scoring holds two batches of records (--batch, default 8 MiB of input each) and
 * the models; sketch and merge a few thousand counters per score name; train the training
 * text and the model ((words + --bucket) x --dim floats).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/io.h"
#include "core/json.h"
#include "core/pool.h"
#include "text/fasttext.h"
#include "text/fasttext_train.h"
#include "text/score.h"
#include "text/scorekeep.h"
#include "text/scoresketch.h"
#include "ftopt.h"
#include "tool.h"

static const char usage[] =
	"usage: llm-score [options] -m name=model[:label] ... [file ...]\n"
	"       llm-score [options] --buckets n --sketch sketch [file ...]\n"
	"       llm-score train [options] -o model.bin --positive file --negative file\n"
	"       llm-score train [options] -o model.bin --label-field key [file ...]\n"
	"       llm-score sketch [options] -o sketch [file ...]\n"
	"       llm-score merge [options] -o sketch sketch ...\n"
	"\n"
	"Add classifier scores to the JSONL document stream, their percentile buckets among the\n"
	"corpus, and keep the documents an expression selects; train the classifiers.\n"
	"\n";

enum {
	OPT_LABEL = TOOL_OPT_FIRST_PRIVATE, OPT_ALL_LABELS, OPT_KEEP, OPT_BUCKETS, OPT_SKETCH,
	OPT_ENSEMBLE, OPT_BATCH, OPT_POSITIVE, OPT_NEGATIVE, OPT_LABEL_FIELD
};

static const struct tool_option cli_options[] = {
	TOOL_OPTION("model", 'm', "NAME=MODEL[:LABEL]", 'm',
	            "score NAME: the probability of LABEL under the fastText model\n"
	            "MODEL (.bin or .ftz); LABEL * for every label; repeatable"),
	TOOL_OPTION("label", 0, "LABEL", OPT_LABEL,
	            "the label of models given without one (default hq)"),
	TOOL_OPTION("all-labels", 0, NULL, OPT_ALL_LABELS,
	            "models given without a label score every label (--label '*')"),
	TOOL_OPTION("keep", 0, "EXPR", OPT_KEEP,
	            "keep only the documents EXPR selects, e.g. 'quality >= 0.5',\n"
	            "'bucket >= 15 && tox.toxic < 0.2' (see llm-score(1))"),
	TOOL_OPTION("buckets", 0, "N", OPT_BUCKETS,
	            "add each score's percentile bucket 1..N among the scores of\n"
	            "--sketch (\"buckets\"), and their ensemble (\"bucket\")"),
	TOOL_OPTION("sketch", 0, "FILE", OPT_SKETCH,
	            "the corpus's score sketch (llm-score sketch, merge)"),
	TOOL_CHOICE("ensemble", 0, "max|mean", OPT_ENSEMBLE, "max\0mean\0",
	            "the bucket of several scores: the highest (default, as\n"
	            "Nemotron-CC) or the rounded mean"),
	TOOL_OPTION("batch", 0, "SIZE", OPT_BATCH, "input bytes per batch (default 8M)"),
	TOOL_OPTION("positive", 0, "FILE", OPT_POSITIVE,
	            "train: documents of label hq; repeatable"),
	TOOL_OPTION("negative", 0, "FILE", OPT_NEGATIVE,
	            "train: documents of label cc; repeatable"),
	TOOL_OPTION("label-field", 0, "KEY", OPT_LABEL_FIELD,
	            "train: the label of each document of the files is its field KEY"),
	TOOL_TEXT("      --dim N, --epoch N, --lr X, --word-ngrams N, --minn N, --maxn N, "
	          "--bucket N,\n"
	          "      --min-count N, --loss softmax|ova|hs, --seed N   "
	          "train: as fastText (defaults\n"
	          "                        "
	          "dim 100, epoch 5, lr 0.1, word-ngrams 2, minn 0, maxn 0,\n"
	          "                        "
	          "bucket 2000000, min-count 1, loss softmax, seed 0)"),
	TOOL_FTOPT_ROWS,
	TOOL_COMMON('o', "output (train: the model; sketch, merge: the sketch)"),
	TOOL_COMMON(TOOL_OPT_REJECTS, "write every dropped document there, with \"reject_reason\""),
	TOOL_COMMON(TOOL_OPT_STATS, NULL),
	TOOL_COMMON(TOOL_OPT_STRICT, NULL),
	TOOL_COMMON(TOOL_OPT_MAX_LINE, NULL),
	TOOL_COMMON(TOOL_OPT_FIELD, "text field (default \"text\")"),
	TOOL_COMMON(TOOL_OPT_THREADS, NULL),
	TOOL_COMMON_END,
};

static const struct tool_cli cli = { usage, cli_options, "train\0sketch\0merge\0" };

enum { CMD_SCORE, CMD_TRAIN, CMD_SKETCH, CMD_MERGE };

#define MAX_FILES 256

/* The command line. */
struct cfg {
	struct tool_common co;
	int cmd, nbuckets, mean;
	const char *models[MAX_FILES];
	int nmodels;
	const char *label, *keep_expr, *sketch, *label_field;
	const char *positive[MAX_FILES], *negative[MAX_FILES];
	int npositive, nnegative;
	size_t batch_bytes;
	llm_fasttext_train_args ft;
};

/* ---- scoring: the shared part of the filter and sketch ---- */

/* What a --keep variable reads. */
enum { VAR_SCORE, VAR_LABEL, VAR_BUCKET, VAR_BUCKET_OF };

typedef struct {
	int kind;
	char *name, *label; /* VAR_SCORE, VAR_LABEL: the score (and label) */
	int sk;             /* VAR_BUCKET_OF: the sketch's index */
} var;

/* What every worker reads: the models, the sketch, the expression. */
struct job {
	const struct cfg *c;
	llm_scorer *sc;
	llm_scoresketch *sk;   /* --sketch */
	llm_scorekeep *keep;   /* --keep */
	var *vars;
	size_t nvars;
};

/* One record of a batch. */
typedef struct {
	size_t off, len;   /* the line in the batch's bytes (its head when too long) */
	size_t full_len;
	uint64_t lineno;
	int too_long;
	llm_json_rec rec;
	const char *reason; /* NULL: scored */
	char msg[200];
	int parsed;         /* rec holds the record */
	int unknown;        /* models that knew no feature of the text */
	int kept;
	llm_buf scores;     /* the "scores" object */
	llm_buf out;        /* the output record (score command) */
} item;

typedef struct {
	llm_buf data;
	item *items;
	size_t n, cap;
} batch;

typedef struct {
	llm_scorer_scratch *s;
	llm_buf text, buckets;
	llm_json_edit ed;
	int *bucket;   /* per sketch name */
	double *value; /* per --keep variable */
} worker;

struct pass {
	struct job *j;
	llm_pool *pool;
	worker *w;
	batch b[2];
	int cur, job_b, pending;
	const char *name; /* the input being read */
	void (*emit)(struct pass *p, item *it);
	/* the score command */
	llm_run *run;
	llm_writer *out;
	llm_json_rec outrec;
	uint64_t unknown;
	/* sketch */
	llm_scoresketch *acc;
	char **warned;
	size_t nwarned;
	int failed;
};

static int reject(item *it, const char *reason, const char *fmt, const char *arg)
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
static int bucket_item(const struct job *j, worker *w, item *it, const llm_json_val *scores)
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
			return reject(it, "bad_score", "score '%s' is not a probability", name);
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
static int keep_values(const struct job *j, worker *w, item *it, const llm_json_val *scores,
                       int ensemble)
{
	for (size_t i = 0; i < j->nvars; i++) {
		const var *v = &j->vars[i];
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
static void score_item(void *ctx, size_t i, int wid)
{
	struct pass *p = ctx;
	const struct job *j = p->j;
	const struct cfg *c = j->c;
	batch *b = &p->b[p->job_b];
	item *it = &b->items[i];
	worker *w = &p->w[wid];
	it->reason = NULL;
	it->parsed = 0;
	it->unknown = 0;
	it->kept = 1;
	llm_buf_reset(&it->scores);
	llm_buf_reset(&it->out);
	if (it->too_long) {
		snprintf(it->msg, sizeof it->msg, "line of %zu bytes is longer than --max-line",
		         it->full_len);
		it->reason = "too_long";
		return;
	}
	if (llm_json_parse(&it->rec, b->data.p + it->off, it->len) != LLM_OK) {
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
static void write_batch(struct pass *p, batch *b)
{
	for (size_t i = 0; i < b->n; i++)
		p->emit(p, &b->items[i]);
	b->n = 0;
	llm_buf_reset(&b->data);
}

static void drain(struct pass *p)
{
	if (!p->pending)
		return;
	llm_pool_wait(p->pool);
	write_batch(p, &p->b[p->job_b]);
	p->pending = 0;
}

/* Score the batch just read while the one before is written; as llm-clean does. */
static void submit(struct pass *p)
{
	if (p->pending)
		llm_pool_wait(p->pool);
	batch *prev = p->pending ? &p->b[p->job_b] : NULL;
	p->job_b = p->cur;
	llm_pool_start(p->pool, p->b[p->job_b].n, score_item, p);
	if (prev)
		write_batch(p, prev);
	p->pending = 1;
	if (llm_pool_workers(p->pool) == 1)
		drain(p);
	else
		p->cur ^= 1;
}

static void batch_add(struct pass *p, const tool_lines *in)
{
	batch *b = &p->b[p->cur];
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 1024;
		b->items = llm_realloc(b->items, b->cap * sizeof *b->items);
		for (size_t i = b->n; i < b->cap; i++) {
			memset(&b->items[i], 0, sizeof b->items[i]);
			llm_json_rec_init(&b->items[i].rec);
		}
	}
	item *it = &b->items[b->n++];
	const struct cfg *c = p->j->c;
	it->too_long = in->too_long;
	it->full_len = in->full_len;
	/* an over-long line's reject keeps no more than --max-line of its head */
	it->len = it->too_long && c->co.max_line < in->len ? c->co.max_line : in->len;
	it->off = b->data.len;
	it->lineno = in->lineno;
	llm_buf_add(&b->data, in->line, it->len);
}

/* Every record of path through the pass; 1 when the input failed (reported). */
static int pass_file(struct pass *p, const char *path)
{
	tool_lines in;
	if (tool_lines_open(&in, path, &p->j->c->co, p->run) != LLM_OK) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	p->name = in.name;
	while (tool_lines_next(&in)) {
		batch_add(p, &in);
		batch *b = &p->b[p->cur];
		if (b->data.len >= p->j->c->batch_bytes || b->n >= 65536)
			submit(p);
	}
	/* every record of an input is written while its name is valid */
	if (p->b[p->cur].n)
		submit(p);
	drain(p);
	if (tool_lines_close(&in) != LLM_OK) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	return 0;
}

static void pass_open(struct pass *p, struct job *j)
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
	llm_json_rec_init(&p->outrec);
}

/* Run every input through the pass; 1 when one failed. */
static int pass_run(struct pass *p, char **files, int nfiles)
{
	int failed = 0;
	if (nfiles == 0)
		failed |= pass_file(p, "-");
	for (int i = 0; i < nfiles; i++)
		failed |= pass_file(p, files[i]);
	return failed;
}

static void pass_close(struct pass *p)
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
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < p->b[k].cap; i++) {
			llm_json_rec_release(&p->b[k].items[i].rec);
			llm_buf_release(&p->b[k].items[i].scores);
			llm_buf_release(&p->b[k].items[i].out);
		}
		free(p->b[k].items);
		llm_buf_release(&p->b[k].data);
	}
	llm_json_rec_release(&p->outrec);
	for (size_t i = 0; i < p->nwarned; i++)
		free(p->warned[i]);
	free(p->warned);
}

/* ---- the models, the sketch, the expression, from the options ---- */

static void job_open(struct job *j, const struct cfg *c)
{
	memset(j, 0, sizeof *j);
	j->c = c;
	j->sc = llm_scorer_new();
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
		var *v = &j->vars[i];
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

static void job_close(struct job *j)
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

/* ---- llm-score: the filter ---- */

static void emit_scored(struct pass *p, item *it)
{
	const struct cfg *c = p->j->c;
	const char *line = p->b[p->job_b].data.p + it->off;
	if (it->reason) {
		if (c->co.strict)
			die("%s:%llu: %s", p->name, (unsigned long long)it->lineno, it->msg);
		llm_warn_at(p->name, it->lineno, "%s", it->msg);
		int dom = it->parsed ? llm_run_in_rec(p->run, it->full_len + 1, &it->rec)
		                     : llm_run_in(p->run, it->full_len + 1, NULL, 0);
		char extra[64] = "";
		if (it->too_long)
			snprintf(extra, sizeof extra, "\"length\": %zu", it->full_len);
		if (llm_run_reject(p->run, dom, it->reason, line, it->len, it->parsed ? &it->rec : NULL,
		                   *extra ? extra : NULL, p->name, it->lineno) != LLM_OK)
			die_lib();
		return;
	}
	int dom = llm_run_in_rec(p->run, it->len + 1, &it->rec);
	if (it->unknown)
		llm_run_count_domain(p->run, dom, "no_features", 1);
	if (!it->kept) {
		/* The reject carries the scores and buckets it was judged by. */
		if (llm_json_parse(&p->outrec, it->out.p, it->out.len) != LLM_OK)
			abort();
		if (llm_run_reject(p->run, dom, "score", it->out.p, it->out.len, &p->outrec, NULL,
		                   p->name, it->lineno) != LLM_OK)
			die_lib();
		return;
	}
	llm_buf_addc(&it->out, '\n');
	if (llm_writer_write(p->out, it->out.p, it->out.len) != LLM_OK)
		die_lib();
	llm_run_out(p->run, dom, it->out.len);
}

static int cmd_score(const struct cfg *c, char **files, int nfiles)
{
	if (!c->nmodels && !c->sketch && !c->keep_expr)
		usage_error("nothing to do: give -m NAME=MODEL, --buckets with --sketch, or --keep");
	struct job j;
	job_open(&j, c);
	struct pass p;
	pass_open(&p, &j);
	p.emit = emit_scored;
	if (llm_writer_open(&p.out, c->co.output) != LLM_OK)
		die_lib();
	p.run = tool_run_new(&c->co);
	int failed = pass_run(&p, files, nfiles);
	if (llm_writer_close(p.out) != LLM_OK) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	pass_close(&p);
	job_close(&j);
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

static void emit_sketched(struct pass *p, item *it)
{
	if (it->reason) {
		if (p->j->c->co.strict)
			die("%s:%llu: %s", p->name, (unsigned long long)it->lineno, it->msg);
		llm_warn_at(p->name, it->lineno, "%s", it->msg);
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
		if (llm_scoresketch_add(p->acc, name.p ? name.p : "", name.len, x) != LLM_OK)
			warn_once(p, name.p ? name.p : "", "is not a probability in [0, 1.00001]");
	}
	llm_buf_release(&name);
}

static int cmd_sketch(const struct cfg *c, char **files, int nfiles)
{
	if (!c->co.output)
		usage_error("sketch needs -o SKETCH");
	struct job j;
	job_open(&j, c);
	struct pass p;
	pass_open(&p, &j);
	p.emit = emit_sketched;
	p.acc = llm_scoresketch_new();
	int failed = pass_run(&p, files, nfiles);
	if (!failed && llm_scoresketch_save(p.acc, c->co.output) != LLM_OK) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	for (size_t i = 0; !failed && i < llm_scoresketch_count(p.acc); i++)
		llm_info("score '%s': %llu documents", llm_scoresketch_name(p.acc, i),
		         (unsigned long long)llm_scoresketch_documents(p.acc, i));
	llm_scoresketch_free(p.acc);
	pass_close(&p);
	job_close(&j);
	return failed;
}

/* ---- merge ---- */

static int cmd_merge(const struct cfg *c, char **files, int nfiles)
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

/* ---- train ---- */

struct train {
	const struct cfg *c;
	const char *label; /* the files' label; NULL: --label-field */
	llm_buf data, text, lab;
	uint64_t examples, skipped;
	llm_json_rec rec;
};

static void skip_record(struct train *t, const char *file, uint64_t line, const char *why,
                        const char *arg)
{
	char msg[200];
	snprintf(msg, sizeof msg, why, arg);
	if (t->c->co.strict)
		die("%s:%llu: %s", file, (unsigned long long)line, msg);
	llm_warn_at(file, line, "%s", msg);
	t->skipped++;
}

/* The label of a record from --label-field into t->lab: a string, an integer or a boolean. */
static int record_label(struct train *t)
{
	const llm_json_val *v = llm_json_get(&t->rec, t->c->label_field);
	int64_t x;
	llm_buf_reset(&t->lab);
	if (!v)
		return 0;
	if (v->type == LLM_JSON_STRING)
		llm_json_str(v, &t->lab);
	else if (v->type == LLM_JSON_TRUE || v->type == LLM_JSON_FALSE)
		llm_buf_adds(&t->lab, v->type == LLM_JSON_TRUE ? "true" : "false");
	else if (v->type == LLM_JSON_NUMBER && llm_json_i64(v, &x) == LLM_OK)
		llm_buf_addf(&t->lab, "%lld", (long long)x);
	return t->lab.len > 0;
}

static int train_file(struct train *t, const char *path)
{
	tool_lines in;
	if (tool_lines_open(&in, path, &t->c->co, NULL) != LLM_OK) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	while (tool_lines_next(&in)) {
		if (in.too_long) {
			skip_record(t, in.name, in.lineno, "line is longer than --max-line", NULL);
			continue;
		}
		if (llm_json_parse(&t->rec, in.line, in.len) != LLM_OK) {
			skip_record(t, in.name, in.lineno, "bad JSON: %s", t->rec.err_msg);
			continue;
		}
		const llm_json_val *v = llm_json_get(&t->rec, t->c->co.field);
		if (!v || v->type != LLM_JSON_STRING) {
			skip_record(t, in.name, in.lineno, v ? "field '%s' is not a string" :
			            "missing field '%s'", t->c->co.field);
			continue;
		}
		if (!t->label && !record_label(t)) {
			skip_record(t, in.name, in.lineno, "no label in field '%s'", t->c->label_field);
			continue;
		}
		llm_buf_reset(&t->text);
		llm_json_str(v, &t->text);
		llm_score_train_line(&t->data, t->label ? t->label : t->lab.p, t->text.p ? t->text.p : "",
		                     t->text.len);
		t->examples++;
	}
	if (tool_lines_close(&in) != LLM_OK) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	return 0;
}

static void train_progress(double done, double loss, void *ctx)
{
	(void)ctx;
	llm_debug("training: %.0f%% done, average loss %.4f", done * 100, loss);
}

static int cmd_train(const struct cfg *c, char **files, int nfiles)
{
	if (!c->co.output)
		usage_error("train needs -o MODEL");
	int dclm = c->npositive || c->nnegative;
	if (dclm && c->label_field)
		usage_error("train: --positive and --negative, or --label-field, not both");
	if (dclm && (!c->npositive || !c->nnegative))
		usage_error("train: --positive needs --negative and the other way round");
	if (!dclm && !c->label_field)
		usage_error("train needs --positive and --negative files, or --label-field");
	if (dclm && nfiles)
		usage_error("train: with --positive and --negative, no other file ('%s')", files[0]);
	struct train t = { .c = c };
	llm_json_rec_init(&t.rec);
	int failed = 0;
	for (int i = 0; i < c->npositive; i++) {
		t.label = LLM_SCORE_LABEL;
		failed |= train_file(&t, c->positive[i]);
	}
	for (int i = 0; i < c->nnegative; i++) {
		t.label = LLM_SCORE_NEGATIVE_LABEL;
		failed |= train_file(&t, c->negative[i]);
	}
	if (!dclm) {
		t.label = NULL;
		if (!nfiles)
			failed |= train_file(&t, "-");
		for (int i = 0; i < nfiles; i++)
			failed |= train_file(&t, files[i]);
	}
	llm_json_rec_release(&t.rec);
	llm_buf_release(&t.text);
	llm_buf_release(&t.lab);
	if (failed) {
		llm_buf_release(&t.data);
		return 1;
	}
	if (t.examples == 0)
		die("no labelled document in the input");
	llm_fasttext_train_args a = c->ft;
	a.threads = c->co.threads;
	llm_fasttext *m;
	if (llm_fasttext_train(&m, &a, t.data.p, t.data.len, train_progress, NULL) != LLM_OK)
		die_lib();
	llm_buf_release(&t.data);
	if (llm_fasttext_save(m, c->co.output) != LLM_OK)
		die_lib();
	llm_info("%llu documents (%llu skipped): %d words, %d labels (%s%s%s), dim %d -> %s",
	         (unsigned long long)t.examples, (unsigned long long)t.skipped,
	         llm_fasttext_nwords(m), llm_fasttext_nlabels(m), llm_fasttext_label_name(m, 0),
	         llm_fasttext_nlabels(m) > 1 ? ", " : "",
	         llm_fasttext_nlabels(m) > 1 ? llm_fasttext_label_name(m, 1) : "",
	         llm_fasttext_dim(m), c->co.output);
	llm_fasttext_free(m);
	return 0;
}

/* ---- options ---- */

/* The subcommand argv[1] names (CMD_SCORE when none); *argi is set to its options' start. */
static int subcommand(int argc, char **argv, int *argi)
{
	*argi = 1;
	if (argc < 2 || argv[1][0] == '-')
		return CMD_SCORE;
	int i = 0;
	for (const char *w = cli.commands; *w; w += strlen(w) + 1, i++)
		if (strcmp(argv[1], w) == 0) {
			*argi = 2;
			return i + 1;
		}
	return CMD_SCORE;
}

static void add_file(const char **list, int *n, const char *opt, const char *arg)
{
	if (*n == MAX_FILES)
		usage_error("%s: at most %d", opt, MAX_FILES);
	list[(*n)++] = arg;
}

static void parse_option(struct cfg *c, int ch, const char *arg)
{
	if (tool_ftopt_parse(&c->ft, ch, arg))
		return;
	switch (ch) {
	case 'm': add_file(c->models, &c->nmodels, "-m", arg); break;
	case OPT_LABEL:
		if (!*arg)
			usage_error("--label: empty label");
		c->label = arg;
		break;
	case OPT_ALL_LABELS: c->label = LLM_SCORE_ALL; break;
	case OPT_KEEP: c->keep_expr = arg; break;
	case OPT_BUCKETS:
		c->nbuckets = (int)tool_int("--buckets", arg, 1, LLM_SCORESKETCH_MAX_BUCKETS);
		break;
	case OPT_SKETCH: c->sketch = arg; break;
	case OPT_ENSEMBLE: c->mean = tool_choice("--ensemble", arg, "max\0mean\0"); break;
	case OPT_BATCH: c->batch_bytes = tool_size("--batch", arg); break;
	case OPT_POSITIVE: add_file(c->positive, &c->npositive, "--positive", arg); break;
	case OPT_NEGATIVE: add_file(c->negative, &c->nnegative, "--negative", arg); break;
	case OPT_LABEL_FIELD: c->label_field = arg; break;
	default: tool_bad_option();
	}
}

/* What the options mean together, per subcommand. */
static void check_options(const struct cfg *c)
{
	int train = c->cmd == CMD_TRAIN, score = c->cmd == CMD_SCORE;
	if (c->ft.maxn > 0 && c->ft.minn > c->ft.maxn)
		usage_error("--minn must not exceed --maxn");
	if (!train && (c->npositive || c->nnegative || c->label_field))
		usage_error("--positive, --negative and --label-field are options of train");
	if (train && c->nmodels)
		usage_error("train: -m scores with a model; train makes one (-o)");
	if (c->cmd == CMD_MERGE && (c->nmodels || c->label))
		usage_error("merge takes sketches, no model");
	if (!!c->nbuckets != !!c->sketch && score)
		usage_error("--buckets and --sketch go together");
	if (!score && (c->nbuckets || c->sketch || c->keep_expr))
		usage_error("--buckets, --sketch and --keep are options of scoring (no subcommand)");
	if (!score && c->co.rejects)
		usage_error("--rejects: only scoring drops documents");
	if (!score && c->co.stats)
		usage_error("--stats: only scoring writes a run summary");
	if (!score && !train && c->label && !c->nmodels)
		usage_error("--label and --all-labels apply to -m");
}

static void cfg_init(struct cfg *c)
{
	memset(c, 0, sizeof *c);
	tool_common_init(&c->co, &cli);
	c->batch_bytes = 8u << 20;
	/* fastText's supervised defaults, with the word bigrams of DCLM's classifier. */
	llm_fasttext_train_args_init(&c->ft);
	c->ft.word_ngrams = 2;
}

int main(int argc, char **argv)
{
	tool_init("llm-score");
	struct cfg c;
	cfg_init(&c);
	int argi;
	c.cmd = subcommand(argc, argv, &argi);
	/* the subcommand's options are parsed as a command line of their own */
	int ac = argc - argi + 1;
	char **av = argv + argi - 1;
	int ch;
	while ((ch = tool_getopt(&c.co, ac, av)) != -1)
		parse_option(&c, ch, optarg);
	check_options(&c);
	char **files = av + optind;
	int nfiles = ac - optind;
	switch (c.cmd) {
	case CMD_TRAIN: return cmd_train(&c, files, nfiles);
	case CMD_SKETCH: return cmd_sketch(&c, files, nfiles);
	case CMD_MERGE: return cmd_merge(&c, files, nfiles);
	default: return cmd_score(&c, files, nfiles);
	}
}
