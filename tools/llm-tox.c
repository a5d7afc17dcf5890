/*
 * llm-tox — toxicity filter: word-list rules OR a fastText classifier (lib/tox/tox.h).
 *
 *   llm-tox [FILE...]            filter (or --mode annotate) the JSONL document stream,
 *                                adding tox_score and tox_hits; rejects carry reject_reason
 *                                tox_words or tox_model
 *   llm-tox train -o M FILE...   train a fastText-format model on labelled JSONL
 *   llm-tox eval FILE...         precision, recall, F1 and false-positive rate per language
 *                                over a sweep of thresholds, or the threshold per language
 *                                that meets --max-fpr / --min-recall, as a table or JSON
 *   llm-tox predict M [FILE]     `fasttext predict-prob` on raw text lines, for comparison
 *   llm-tox normalize [FILE...]  the text the model sees, one line per document
 *
 * Memory: filter holds a batch of records (at most 1024 or 16 MB plus one line); predict and
 * normalize one record; eval four numbers per labelled record; train the normalized training
 * text and the model.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/io.h"
#include "core/json.h"
#include "core/pool.h"
#include "text/fasttext.h"
#include "text/fasttext_train.h"
#include "text/recipe.h"
#include "ftopt.h"
#include "tool.h"
#include "tox/tox.h"
#include "tox/toxeval.h"
#include "tox/toxlang.h"

static const char usage[] =
	"usage: llm-tox [options] [file ...]\n"
	"       llm-tox train [options] -o model.bin [file ...]\n"
	"       llm-tox eval [options] [file ...]\n"
	"       llm-tox predict [-k n] [--threshold t] model [file]\n"
	"       llm-tox normalize [options] [file ...]\n"
	"\n"
	"Drop (or annotate) toxic documents of the JSONL stream: word lists OR a fastText model.\n"
	"\n";

enum {
	OPT_WORDS = TOOL_OPT_FIRST_PRIVATE, OPT_NO_WORDS, OPT_PER_1K, OPT_MODEL, OPT_NO_MODEL,
	OPT_LABEL, OPT_THRESHOLD, OPT_LABEL_FIELD, OPT_JSON, OPT_THRESHOLDS,
	OPT_CJK_MIN, OPT_MAX_FPR, OPT_MIN_RECALL, OPT_ZH_SUBSTRINGS, OPT_ZH_WORDS, OPT_ADD_WORDS,
	OPT_RECIPE
};

static const struct tool_option cli_options[] = {
	TOOL_OPTION("mode", 'm', "MODE", 0,
	            "filter (default): drop toxic documents; annotate: keep all"),
	TOOL_OPTION("words", 0, "[LANG:]FILE", OPT_WORDS,
	            "word list for documents in LANG (all documents without LANG);\n"
	            "repeatable; default: samples/wordlists, one list per language"),
	TOOL_OPTION("add-words", 0, "[LANG:]FILE", OPT_ADD_WORDS,
	            "a list used with the default lists, not instead"),
	TOOL_OPTION("no-words", 0, NULL, OPT_NO_WORDS, "no word-list stage"),
	TOOL_OPTION("words-per-1k", 0, "X", OPT_PER_1K,
	            "the rule fires at X or more hits per 1,000 characters (default 1;\n"
	            "per language as --threshold)"),
	TOOL_OPTION("cjk-min-chars", 0, "N", OPT_CJK_MIN,
	            "ignore CJK list entries shorter than N characters (default 2)"),
	TOOL_OPTION("zh-substrings", 0, NULL, OPT_ZH_SUBSTRINGS,
	            "CJK list entries match anywhere, not only where Chinese words\n"
	            "start and end (no segmentation, no dictionary)"),
	TOOL_OPTION("zh-words", 0, NULL, OPT_ZH_WORDS,
	            "train, normalize: the Chinese words too (a model trained so\n"
	            "gets them when it filters)"),
	TOOL_OPTION("model", 0, "FILE", OPT_MODEL,
	            "fastText model (.bin or .ftz); default samples/tox/tox.bin"),
	TOOL_OPTION("no-model", 0, NULL, OPT_NO_MODEL, "no model stage"),
	TOOL_OPTION("label", 0, "NAME", OPT_LABEL, "the model's toxic label (default toxic)"),
	TOOL_OPTION("threshold", 0, "T", OPT_THRESHOLD,
	            "the model fires at tox_score >= T (default 0.85); per language:\n"
	            "zh=0.9,en=0.85 (a bare value for the other languages)"),
	TOOL_OPTION("recipe", 0, "FILE", OPT_RECIPE,
	            "filter, eval: per domain and language, whether toxicity applies,\n"
	            "with the word lists or not, and the threshold (llmkit-recipe(5));\n"
	            "--threshold wins where it is given"),
	TOOL_OPTION("label-field", 0, "KEY", OPT_LABEL_FIELD,
	            "train, eval: the label field (default label; 1/true/toxic = toxic)"),
	TOOL_OPTION("json", 0, NULL, OPT_JSON, "eval: JSON instead of a table"),
	TOOL_OPTION("thresholds", 0, "LIST", OPT_THRESHOLDS,
	            "eval: comma-separated thresholds to sweep"),
	TOOL_OPTION("max-fpr", 0, "X", OPT_MAX_FPR,
	            "eval: per language, the threshold of highest recall whose\n"
	            "false-positive rate is at most X; repeatable"),
	TOOL_OPTION("min-recall", 0, "X", OPT_MIN_RECALL,
	            "eval: per language, the highest threshold whose recall is at\n"
	            "least X; repeatable"),
	TOOL_OPTION(NULL, 'k', "N", 'k', "predict: labels per line (default 1; -1 all)"),
	TOOL_TEXT("      --dim N, --epoch N, --lr X, --word-ngrams N, --minn N, --maxn N, "
	          "--bucket N,\n"
	          "      --min-count N, --loss softmax|ova|hs, --seed N   "
	          "train: as fastText (defaults\n"
	          "                        "
	          "dim 16, epoch 5, lr 0.5, word-ngrams 2, minn 0, maxn 0,\n"
	          "                        "
	          "bucket 200000, min-count 1, loss softmax, seed 0)"),
	TOOL_FTOPT_ROWS,
	TOOL_COMMON('o', "output (train: the model) instead of standard output"),
	TOOL_COMMON(TOOL_OPT_REJECTS, "write every dropped document there, with \"reject_reason\""),
	TOOL_COMMON(TOOL_OPT_STATS, NULL),
	TOOL_COMMON(TOOL_OPT_STRICT, NULL),
	TOOL_COMMON(TOOL_OPT_MAX_LINE, NULL),
	TOOL_COMMON(TOOL_OPT_FIELD, "text field (default \"text\")"),
	TOOL_COMMON(TOOL_OPT_THREADS, NULL),
	TOOL_COMMON_END,
};

static const struct tool_cli cli = { usage, cli_options, "train\0eval\0predict\0normalize\0" };

enum { CMD_FILTER, CMD_TRAIN, CMD_EVAL, CMD_PREDICT, CMD_NORMALIZE };

#define MAX_WORDS 64
#define MAX_THRESHOLDS 64
#define MAX_TARGETS 16
static const char *const default_langs[] = { "ar", "de", "en", "es", "fr", "hi", "ja", "ko", "ru", "zh" };

struct cfg {
	struct tool_common co;
	int cmd, annotate, no_words, no_model, json, k, cjk_min, zh_substrings, zh_words;
	const char *words[MAX_WORDS];
	int nwords, nreplace; /* --words and --add-words in order; how many were --words */
	llm_toxlang threshold, per_1k; /* by language */
	int threshold_set;
	llm_recipe *recipe; /* --recipe, or NULL */
	const char *model, *label, *label_field;
	double thresholds[MAX_THRESHOLDS];
	int nthresholds;
	llm_toxeval_target targets[MAX_TARGETS];
	int ntargets;
	llm_fasttext_train_args ft;
};

/* ---- reading records ---- */

typedef struct {
	const char *file;
	uint64_t lineno;
	const char *line;
	size_t len;      /* the line's length */
	size_t head_len; /* bytes in line: len, or the head of a line too long */
	int too_long;
	const char *reason; /* NULL: a document with text */
	char msg[160];
	llm_json_rec rec;
	int rec_ok;
	llm_buf text;
} record;

static void record_parse(record *r, const struct cfg *c)
{
	r->reason = NULL;
	r->rec_ok = 0;
	llm_buf_reset(&r->text);
	if (r->too_long) {
		r->reason = "too_long";
		snprintf(r->msg, sizeof r->msg, "line of %zu bytes is longer than --max-line", r->len);
		return;
	}
	if (llm_json_parse(&r->rec, r->line, r->len) != LLM_OK) {
		r->reason = "bad_json";
		snprintf(r->msg, sizeof r->msg, "bad JSON: %s at byte %zu", r->rec.err_msg,
		         r->rec.err_pos + 1);
		return;
	}
	r->rec_ok = 1;
	const llm_json_val *t = llm_json_get(&r->rec, c->co.field);
	if (!t || t->type != LLM_JSON_STRING) {
		r->reason = "no_text";
		snprintf(r->msg, sizeof r->msg, t ? "field '%s' is not a string" : "missing field '%s'",
		         c->co.field);
		return;
	}
	llm_json_str(t, &r->text);
}

typedef int (*record_fn)(void *ctx, record *r);

/* Call fn for every line of every input, parsed unless file_end is given (the filter parses
 * in its workers), and file_end after the last line of each input, while its name is still
 * valid. Returns 1 if an input failed (reported). */
static int each_record_ex(const struct cfg *c, char **files, int nfiles, record_fn fn,
                          void (*file_end)(void *), void *ctx, llm_run *run)
{
	static char *stdin_only[] = { "-" };
	if (nfiles == 0) {
		files = stdin_only;
		nfiles = 1;
	}
	record r;
	memset(&r, 0, sizeof r);
	llm_json_rec_init(&r.rec);
	llm_buf_init(&r.text);
	int failed = 0;
	for (int i = 0; i < nfiles; i++) {
		tool_lines in;
		if (tool_lines_open(&in, files[i], &c->co, run) != LLM_OK) {
			llm_error("%s", llm_last_error());
			failed = 1;
			continue;
		}
		while (tool_lines_next(&in)) {
			r.file = in.name;
			r.lineno = in.lineno;
			r.line = in.line;
			r.head_len = in.len;
			r.len = in.full_len;
			r.too_long = in.too_long;
			if (!file_end)
				record_parse(&r, c);
			if (fn(ctx, &r))
				failed = 1;
		}
		if (file_end)
			file_end(ctx);
		if (tool_lines_close(&in) != LLM_OK) {
			llm_error("%s", llm_last_error());
			failed = 1;
		}
	}
	llm_json_rec_release(&r.rec);
	llm_buf_release(&r.text);
	return failed;
}

static int each_record(const struct cfg *c, char **files, int nfiles, record_fn fn, void *ctx,
                       llm_run *run)
{
	return each_record_ex(c, files, nfiles, fn, NULL, ctx, run);
}

/* A malformed record outside the filter (train, eval): warn, or die with --strict. */
static void skip_record(const struct cfg *c, const record *r, const char *why)
{
	if (c->co.strict)
		die("%s:%llu: %s", r->file, (unsigned long long)r->lineno, why);
	llm_warn_at(r->file, r->lineno, "%s", why);
}

/* The record's label: 1 toxic, 0 clean, -1 absent or unreadable. */
static int record_label(const struct cfg *c, const record *r, llm_buf *tmp)
{
	const llm_json_val *v = llm_json_get(&r->rec, c->label_field);
	if (!v)
		return -1;
	double x;
	switch (v->type) {
	case LLM_JSON_TRUE: return 1;
	case LLM_JSON_FALSE: return 0;
	case LLM_JSON_NUMBER: return llm_json_num(v, &x) == LLM_OK ? x != 0 : -1;
	case LLM_JSON_STRING: {
		static const char *const yes[] = { "1", "true", "toxic", "offensive", "hate" };
		static const char *const no[] = { "0", "false", "clean", "ok", "none", "neither" };
		llm_buf_reset(tmp);
		llm_json_str(v, tmp);
		for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
			if (strcasecmp(tmp->p, yes[i]) == 0)
				return 1;
		for (size_t i = 0; i < sizeof no / sizeof *no; i++)
			if (strcasecmp(tmp->p, no[i]) == 0)
				return 0;
		return -1;
	}
	default: return -1;
	}
}

/* ---- the scorer from options ---- */

static llm_tox *make_tox(const struct cfg *c)
{
	llm_tox *t = llm_tox_new();
	llm_tox_set_cjk_min(t, (size_t)c->cjk_min);
	llm_tox_set_zh_bounds(t, !c->zh_substrings);
	char path[TOOL_PATH_MAX], rel[64];
	if (!c->no_words && c->nreplace == 0) {
		for (size_t i = 0; i < sizeof default_langs / sizeof *default_langs; i++) {
			snprintf(rel, sizeof rel, "samples/wordlists/%s", default_langs[i]);
			tool_data_path(path, sizeof path, rel);
			if (llm_tox_add_words(t, default_langs[i], path) != LLM_OK)
				die("default word list: %s (use --words FILE or --no-words)", llm_last_error());
		}
	}
	for (int i = 0; !c->no_words && i < c->nwords; i++) {
		const char *arg = c->words[i], *colon = strchr(arg, ':');
		char lang[32] = "";
		const char *file = arg;
		/* "LANG:FILE" when what precedes the colon looks like a language tag. */
		if (colon && colon - arg > 0 && colon - arg < (long)sizeof lang &&
		    strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_") == (size_t)(colon - arg)) {
			memcpy(lang, arg, (size_t)(colon - arg));
			file = colon + 1;
		}
		if (llm_tox_add_words(t, *lang ? lang : NULL,
		                      tool_data_find(file, "samples/wordlists", NULL)) != LLM_OK)
			die_lib();
	}
	if (!c->no_model) {
		const char *m = c->model;
		if (!m) {
			m = tool_data_path(path, sizeof path, "samples/tox/tox.bin");
		}
		if (llm_tox_set_model(t, m, c->label) != LLM_OK) {
			if (c->model)
				die_lib();
			die("default model: %s (use --model FILE or --no-model)", llm_last_error());
		}
	}
	int rc = llm_tox_ready(t);
	if (rc == LLM_ENOTFOUND)
		die("%s (--zh-substrings matches CJK list entries without it)", llm_last_error());
	if (rc != LLM_OK)
		die_lib();
	return t;
}

static void lang_of(const record *r, const char **lang, size_t *len, llm_buf *tmp)
{
	const llm_json_val *v = llm_json_get(&r->rec, "lang");
	*lang = NULL;
	*len = 0;
	if (v && v->type == LLM_JSON_STRING) {
		llm_buf_reset(tmp);
		llm_json_str(v, tmp);
		*lang = tmp->p;
		*len = tmp->len;
	}
}

/* The record's domain field (NULL when it has none), NUL-terminated in tmp. */
static const char *domain_of(const record *r, llm_buf *tmp)
{
	const llm_json_val *v = llm_json_get(&r->rec, "domain");
	if (!v || v->type != LLM_JSON_STRING)
		return NULL;
	llm_buf_reset(tmp);
	llm_json_str(v, tmp);
	return tmp->p;
}

/*
 * What applies to a document of language lang[0..len) (NULL: none) and domain (NULL: none).
 * The threshold: --threshold's value for the language if it names it, else its bare value
 * if it has one, else the recipe's, else 0.85. A recipe may exempt the document (tox = no)
 * or its word lists (tox_words = no).
 */
static void policy_for(const struct cfg *c, const char *lang, size_t len, const char *domain,
                       llm_tox_policy *p)
{
	p->threshold = llm_toxlang_get(&c->threshold, lang, len);
	p->words_per_1k = llm_toxlang_get(&c->per_1k, lang, len);
	p->words = !c->no_words;
	p->model = !c->no_model;
	if (!c->recipe)
		return;
	llm_recipe_settings st;
	llm_recipe_resolve(c->recipe, domain, lang && len ? lang : NULL, &st);
	if (st.tox_threshold >= 0 && !llm_toxlang_named(&c->threshold, lang, len) &&
	    !c->threshold.dflt_set)
		p->threshold = st.tox_threshold;
	p->words &= st.tox && st.tox_words;
	p->model &= st.tox;
}

/* ---- filter / annotate ---- */

/*
 * Records are scored in batches on the shared pool (core/pool.h): the main thread copies
 * lines into a batch; while the pool scores it, the main thread writes the batch before it,
 * in input order, and fills the next. Each worker parses with its own record and matcher
 * scratch. Memory: two batches (BATCH_DOCS records or BATCH_BYTES bytes each).
 */
#define BATCH_DOCS 1024
#define BATCH_BYTES ((size_t)16 << 20)

typedef struct {
	size_t off, len; /* the line in the batch arena (its first --max-line bytes if too long) */
	size_t full_len;
	const char *file;
	uint64_t lineno;
	int too_long;
	llm_tox_result res;
	llm_tox_policy pol;
} item;

typedef struct {
	item *items;
	size_t n;
	llm_buf arena;
} batch;

typedef struct {
	llm_tox_scratch *s;
	record r;
	llm_buf lang, domain;
} worker;

struct filter {
	const struct cfg *c;
	const llm_tox *tox;
	llm_pool *pool;
	worker *w; /* one per pool worker */
	batch b[2];
	int cur;     /* the batch being filled */
	int running; /* the other batch is on the pool */
	llm_run *run;
	llm_writer *out;
	llm_json_edit ed;
	llm_buf buf, extra;
	record r; /* the main thread's parse at output time */
};

static double round4(double x)
{
	return round(x * 1e4) / 1e4;
}

static void score_one(void *ctx, size_t i, int wid)
{
	struct filter *f = ctx;
	const batch *b = &f->b[!f->cur];
	item *it = &b->items[i];
	worker *w = &f->w[wid];
	w->r.line = b->arena.p + it->off;
	w->r.len = it->full_len;
	w->r.too_long = it->too_long;
	record_parse(&w->r, f->c);
	if (w->r.reason)
		return;
	const char *l;
	size_t ll;
	lang_of(&w->r, &l, &ll, &w->lang);
	policy_for(f->c, l, ll, domain_of(&w->r, &w->domain), &it->pol);
	llm_tox_score(f->tox, w->s, w->r.text.p, w->r.text.len, l, ll, &it->pol, &it->res);
}

/* Write or reject one scored record, in input order. */
static void emit(struct filter *f, const batch *b, const item *it)
{
	record *r = &f->r;
	r->file = it->file;
	r->lineno = it->lineno;
	r->line = b->arena.p + it->off;
	r->len = it->full_len;
	r->too_long = it->too_long;
	record_parse(r, f->c);
	if (r->reason) {
		if (f->c->co.strict)
			die("%s:%llu: %s", r->file, (unsigned long long)r->lineno, r->msg);
		llm_warn_at(r->file, r->lineno, "%s", r->msg);
		int dom = r->rec_ok ? llm_run_in_rec(f->run, r->len + 1, &r->rec)
		                    : llm_run_in(f->run, r->len + 1, NULL, 0);
		llm_buf_reset(&f->extra);
		if (r->too_long)
			llm_buf_addf(&f->extra, "\"length\": %zu", r->len);
		size_t keep = r->too_long ? (it->len < 1024 ? it->len : 1024) : r->len;
		if (llm_run_reject(f->run, dom, r->reason, r->line, keep, r->rec_ok ? &r->rec : NULL,
		                   f->extra.len ? f->extra.p : NULL, r->file, r->lineno) != LLM_OK)
			die_lib();
		return;
	}
	const llm_tox_result *res = &it->res;
	int dom = llm_run_in_rec(f->run, r->len + 1, &r->rec);
	int verdict = llm_tox_decide(res, &it->pol);
	if (llm_tox_words_fire(res, &it->pol) && llm_tox_model_fires(res, &it->pol))
		llm_run_count_domain(f->run, dom, "tox_words_and_model", 1);
	llm_json_edit_reset(&f->ed);
	if (res->score >= 0)
		llm_json_edit_f64(&f->ed, "tox_score", round4(res->score));
	if (res->words)
		llm_json_edit_i64(&f->ed, "tox_hits", (int64_t)res->hits);
	if (verdict != LLM_TOX_KEEP && !f->c->annotate) {
		llm_buf_reset(&f->extra);
		if (res->score >= 0)
			llm_buf_addf(&f->extra, "\"tox_score\": %.4f", round4(res->score));
		if (res->words)
			llm_buf_addf(&f->extra, "%s\"tox_hits\": %zu", f->extra.len ? ", " : "", res->hits);
		if (llm_run_reject(f->run, dom, verdict == LLM_TOX_WORDS ? "tox_words" : "tox_model",
		                   r->line, r->len, &r->rec, f->extra.len ? f->extra.p : NULL, r->file,
		                   r->lineno) != LLM_OK)
			die_lib();
		return;
	}
	if (verdict != LLM_TOX_KEEP)
		llm_run_count_domain(f->run, dom, verdict == LLM_TOX_WORDS ? "tox_words" : "tox_model", 1);
	if (f->c->recipe && !it->pol.words && !it->pol.model && (!f->c->no_words || !f->c->no_model))
		llm_run_count_domain(f->run, dom, "tox_exempt", 1);
	llm_buf_reset(&f->buf);
	llm_json_write(&r->rec, &f->ed, &f->buf);
	llm_buf_addc(&f->buf, '\n');
	if (llm_writer_write(f->out, f->buf.p, f->buf.len) != LLM_OK)
		die_lib();
	llm_run_out(f->run, dom, f->buf.len);
}

/* Write the batch on the pool, if any, once it is scored. */
static void finish_running(struct filter *f)
{
	if (!f->running)
		return;
	llm_pool_wait(f->pool);
	batch *b = &f->b[!f->cur];
	for (size_t i = 0; i < b->n; i++)
		emit(f, b, &b->items[i]);
	b->n = 0;
	llm_buf_reset(&b->arena);
	f->running = 0;
}

/* Hand the batch being filled to the pool and fill the other one. */
static void start_batch(struct filter *f)
{
	finish_running(f);
	if (f->b[f->cur].n == 0)
		return;
	f->cur = !f->cur;
	f->running = 1;
	llm_pool_start(f->pool, f->b[!f->cur].n, score_one, f);
}

static int filter_one(void *ctx, record *r)
{
	struct filter *f = ctx;
	batch *b = &f->b[f->cur];
	item *it = &b->items[b->n++];
	it->off = b->arena.len;
	it->len = r->len;
	it->file = r->file; /* the reader's name: valid until that reader is freed */
	it->lineno = r->lineno;
	it->too_long = r->too_long;
	/* A line over --max-line arrives cut: keep its head, at most --max-line of it; its full
	 * length is r->len. */
	if (r->too_long)
		it->len = r->head_len < f->c->co.max_line ? r->head_len : f->c->co.max_line;
	llm_buf_add(&b->arena, r->line, it->len);
	it->full_len = r->len;
	if (b->n == BATCH_DOCS || b->arena.len >= BATCH_BYTES)
		start_batch(f);
	return 0;
}

/* Write everything at the end of each input: the items name their file through its reader. */
static void end_of_file(void *ctx)
{
	struct filter *f = ctx;
	start_batch(f);
	finish_running(f);
}

static int cmd_filter(const struct cfg *c, char **files, int nfiles)
{
	struct filter f = { .c = c };
	f.tox = make_tox(c);
	if (!llm_tox_has_words(f.tox) && !llm_tox_has_model(f.tox))
		usage_error("--no-words and --no-model leave nothing to do");
	if (llm_pool_new(&f.pool, c->co.threads) != LLM_OK)
		die_lib();
	int nw = llm_pool_workers(f.pool);
	f.w = llm_calloc((size_t)nw, sizeof *f.w);
	for (int i = 0; i < nw; i++) {
		if (!(f.w[i].s = llm_tox_scratch_new(f.tox)))
			die("out of memory for the word-list matcher");
		llm_json_rec_init(&f.w[i].r.rec);
	}
	for (int i = 0; i < 2; i++)
		f.b[i].items = llm_malloc(BATCH_DOCS * sizeof *f.b[i].items);
	llm_json_rec_init(&f.r.rec);
	if (llm_writer_open(&f.out, c->co.output) != LLM_OK)
		die_lib();
	f.run = tool_run_new(&c->co);
	llm_json_edit_init(&f.ed);
	int failed = each_record_ex(c, files, nfiles, filter_one, end_of_file, &f, f.run);
	if (llm_writer_close(f.out) != LLM_OK) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	llm_json_edit_release(&f.ed);
	llm_json_rec_release(&f.r.rec);
	llm_buf_release(&f.r.text);
	llm_buf_release(&f.buf);
	llm_buf_release(&f.extra);
	for (int i = 0; i < 2; i++) {
		llm_buf_release(&f.b[i].arena);
		free(f.b[i].items);
	}
	llm_pool_free(f.pool);
	for (int i = 0; i < nw; i++) {
		llm_tox_scratch_free(f.w[i].s);
		llm_json_rec_release(&f.w[i].r.rec);
		llm_buf_release(&f.w[i].r.text);
		llm_buf_release(&f.w[i].lang);
		llm_buf_release(&f.w[i].domain);
	}
	free(f.w);
	llm_tox_free((llm_tox *)f.tox);
	return tool_run_finish(f.run, failed);
}

/* ---- train ---- */

/* The segmenter of --zh-words, or NULL without it. */
static llm_zhseg *zh_segmenter(const struct cfg *c)
{
	const llm_zhseg_dict *d;
	if (!c->zh_words)
		return NULL;
	if (llm_zhseg_dict_default(&d) != LLM_OK)
		die("--zh-words: %s", llm_last_error());
	return llm_zhseg_new(d);
}

struct train {
	const struct cfg *c;
	llm_zhseg *seg; /* --zh-words */
	llm_buf data, tmp;
	uint64_t examples, skipped;
};

static int train_one(void *ctx, record *r)
{
	struct train *t = ctx;
	if (r->reason) {
		skip_record(t->c, r, r->msg);
		t->skipped++;
		return 0;
	}
	int label = record_label(t->c, r, &t->tmp);
	if (label < 0) {
		skip_record(t->c, r, "no usable label");
		t->skipped++;
		return 0;
	}
	llm_buf_adds(&t->data, label ? "__label__toxic " : "__label__clean ");
	llm_tox_normalize(r->text.p, r->text.len, t->seg, &t->data);
	llm_buf_addc(&t->data, '\n');
	t->examples++;
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
	struct train t = { .c = c, .seg = zh_segmenter(c) };
	int failed = each_record(c, files, nfiles, train_one, &t, NULL);
	llm_zhseg_free(t.seg);
	if (failed)
		return 1;
	if (t.examples == 0)
		die("no labelled example in the input");
	llm_fasttext_train_args a = c->ft;
	a.threads = c->co.threads;
	llm_fasttext *m;
	if (llm_fasttext_train(&m, &a, t.data.p, t.data.len, train_progress, NULL) != LLM_OK)
		die_lib();
	if (llm_fasttext_save(m, c->co.output) != LLM_OK)
		die_lib();
	llm_info("%llu examples (%llu skipped): %d words, labels %s/%s, dim %d -> %s",
	         (unsigned long long)t.examples, (unsigned long long)t.skipped,
	         llm_fasttext_nwords(m), llm_fasttext_label_name(m, 0),
	         llm_fasttext_nlabels(m) > 1 ? llm_fasttext_label_name(m, 1) : "-",
	         llm_fasttext_dim(m), c->co.output);
	llm_fasttext_free(m);
	llm_buf_release(&t.data);
	llm_buf_release(&t.tmp);
	return 0;
}

/* ---- eval ---- */

struct eval {
	const struct cfg *c;
	const llm_tox *tox;
	llm_tox_scratch *s;
	llm_toxeval *table;
	llm_buf tmp, lang, domain;
};

static int eval_one(void *ctx, record *r)
{
	struct eval *e = ctx;
	if (r->reason) {
		skip_record(e->c, r, r->msg);
		llm_toxeval_skip(e->table);
		return 0;
	}
	int label = record_label(e->c, r, &e->tmp);
	if (label < 0) {
		skip_record(e->c, r, "no usable label");
		llm_toxeval_skip(e->table);
		return 0;
	}
	const char *lang;
	size_t lang_len;
	lang_of(r, &lang, &lang_len, &e->lang);
	llm_tox_policy pol;
	policy_for(e->c, lang, lang_len, domain_of(r, &e->domain), &pol);
	llm_tox_result res;
	llm_tox_score(e->tox, e->s, r->text.p, r->text.len, lang, lang_len, &pol, &res);
	llm_toxeval_add(e->table, lang, lang_len, &res, &pol, label);
	return 0;
}

static int cmd_eval(const struct cfg *c, char **files, int nfiles)
{
	struct eval e = { .c = c, .table = llm_toxeval_new() };
	e.tox = make_tox(c);
	if (!llm_tox_has_words(e.tox) && !llm_tox_has_model(e.tox))
		usage_error("--no-words and --no-model leave nothing to evaluate");
	if (c->ntargets && !llm_tox_has_model(e.tox))
		usage_error("--max-fpr and --min-recall choose model thresholds: they need the model");
	if (!(e.s = llm_tox_scratch_new(e.tox)))
		die("out of memory for the word-list matcher");
	int failed = each_record(c, files, nfiles, eval_one, &e, NULL);
	llm_toxeval_opts op = {
		.thresholds = c->thresholds, .nthresholds = c->nthresholds, .targets = c->targets,
		.ntargets = c->ntargets, .default_threshold = c->threshold.dflt,
		.words_per_1k = c->per_1k.dflt, .words = llm_tox_has_words(e.tox),
		.model = llm_tox_has_model(e.tox), .json = c->json
	};
	llm_buf o = LLM_BUF_INIT;
	llm_toxeval_report(e.table, &op, &o);
	llm_writer *out;
	if (llm_writer_open(&out, c->co.output) != LLM_OK)
		die_lib();
	if (llm_writer_write(out, o.p, o.len) != LLM_OK || llm_writer_close(out) != LLM_OK)
		die_lib();
	llm_buf_release(&o);
	llm_buf_release(&e.tmp);
	llm_buf_release(&e.lang);
	llm_buf_release(&e.domain);
	llm_toxeval_free(e.table);
	llm_tox_scratch_free(e.s);
	llm_tox_free((llm_tox *)e.tox);
	return failed;
}

/* ---- predict: fastText's predict-prob on raw lines ---- */

static int cmd_predict(const struct cfg *c, char **args, int nargs)
{
	if (nargs < 1 || nargs > 2)
		usage_error("predict needs a model and at most one input file");
	llm_fasttext *m;
	if (llm_fasttext_load(&m, args[0]) != LLM_OK)
		die_lib();
	tool_lines in;
	if (tool_lines_open(&in, nargs == 2 ? args[1] : "-", &c->co, NULL) != LLM_OK)
		die_lib();
	llm_writer *out;
	if (llm_writer_open(&out, c->co.output) != LLM_OK)
		die_lib();
	llm_fasttext_scratch *s = llm_fasttext_scratch_new(m);
	llm_fasttext_pred *p = llm_calloc((size_t)llm_fasttext_nlabels(m) + 1, sizeof *p);
	llm_buf o = LLM_BUF_INIT;
	while (tool_lines_next(&in)) {
		if (in.too_long)
			die("%s:%llu: line of %zu bytes is longer than --max-line", in.name,
			    (unsigned long long)in.lineno, in.full_len);
		int n = llm_fasttext_predict(m, s, in.line, in.len, c->k, (float)c->threshold.dflt, p);
		llm_buf_reset(&o);
		/* %g of a float is what C++ streams print for fastText's float probabilities. */
		for (int i = 0; i < n; i++)
			llm_buf_addf(&o, "%s%s %g", i ? " " : "", llm_fasttext_label(m, p[i].label),
			             (double)p[i].prob);
		llm_buf_addc(&o, '\n');
		if (llm_writer_write(out, o.p, o.len) != LLM_OK)
			die_lib();
	}
	if (tool_lines_close(&in) != LLM_OK)
		die_lib();
	if (llm_writer_close(out) != LLM_OK)
		die_lib();
	llm_buf_release(&o);
	free(p);
	llm_fasttext_scratch_free(s);
	llm_fasttext_free(m);
	return 0;
}

/* ---- normalize ---- */

struct norm {
	const struct cfg *c;
	llm_zhseg *seg; /* --zh-words */
	llm_writer *out;
	llm_buf buf;
};

static int normalize_one(void *ctx, record *r)
{
	struct norm *n = ctx;
	if (r->reason) {
		skip_record(n->c, r, r->msg);
		return 0;
	}
	llm_buf_reset(&n->buf);
	llm_tox_normalize(r->text.p, r->text.len, n->seg, &n->buf);
	llm_buf_addc(&n->buf, '\n');
	if (llm_writer_write(n->out, n->buf.p, n->buf.len) != LLM_OK)
		die_lib();
	return 0;
}

static int cmd_normalize(const struct cfg *c, char **files, int nfiles)
{
	struct norm n = { .c = c, .seg = zh_segmenter(c) };
	if (llm_writer_open(&n.out, c->co.output) != LLM_OK)
		die_lib();
	int failed = each_record(c, files, nfiles, normalize_one, &n, NULL);
	llm_zhseg_free(n.seg);
	if (llm_writer_close(n.out) != LLM_OK)
		die_lib();
	llm_buf_release(&n.buf);
	return failed;
}

/* ---- options ---- */

static void parse_by_lang(const char *opt, llm_toxlang *m, const char *arg, double hi)
{
	if (llm_toxlang_parse(m, arg, 0, hi) != LLM_OK)
		usage_error("%s: %s", opt, llm_last_error());
}

static void parse_thresholds(struct cfg *c, const char *arg)
{
	c->nthresholds = 0;
	char *copy = llm_strdup(arg), *save = NULL;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (c->nthresholds == MAX_THRESHOLDS)
			usage_error("--thresholds: at most %d values", MAX_THRESHOLDS);
		c->thresholds[c->nthresholds++] = tool_double("--thresholds", t, 0, 1);
	}
	free(copy);
	if (!c->nthresholds)
		usage_error("--thresholds needs at least one value");
}

static void cfg_init(struct cfg *c)
{
	memset(c, 0, sizeof *c);
	tool_common_init(&c->co, &cli);
	llm_toxlang_init(&c->per_1k, 1.0);
	llm_toxlang_init(&c->threshold, 0.85); /* predict: fastText's 0 unless given */
	c->label = "toxic";
	c->label_field = "label";
	c->k = 1;
	c->cjk_min = 2;
	parse_thresholds(c, "0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.85,0.9,0.95,0.99");
	llm_fasttext_train_args_init(&c->ft);
	c->ft.dim = 16;
	c->ft.lr = 0.5;
	c->ft.word_ngrams = 2;
	c->ft.bucket = 200000;
}

/* The subcommand argv[1] names (CMD_FILTER when none); *argi is set to its options' start. */
static int subcommand(int argc, char **argv, int *argi)
{
	*argi = 1;
	if (argc < 2 || argv[1][0] == '-')
		return CMD_FILTER;
	int i = 0;
	for (const char *w = cli.commands; *w; w += strlen(w) + 1, i++)
		if (strcmp(argv[1], w) == 0) {
			*argi = 2;
			return i + 1;
		}
	return CMD_FILTER;
}

static void parse_option(struct cfg *c, int ch, const char *arg)
{
	if (tool_ftopt_parse(&c->ft, ch, arg))
		return;
	switch (ch) {
	case 'm': c->annotate = tool_choice("--mode", arg, "filter\0annotate\0"); break;
	case OPT_WORDS:
	case OPT_ADD_WORDS:
		if (c->nwords == MAX_WORDS)
			usage_error("--words, --add-words: at most %d lists", MAX_WORDS);
		c->words[c->nwords++] = arg;
		c->nreplace += ch == OPT_WORDS;
		break;
	case OPT_NO_WORDS: c->no_words = 1; break;
	case OPT_CJK_MIN: c->cjk_min = (int)tool_int("--cjk-min-chars", arg, 1, 100); break;
	case OPT_ZH_SUBSTRINGS: c->zh_substrings = 1; break;
	case OPT_ZH_WORDS: c->zh_words = 1; break;
	case OPT_PER_1K: parse_by_lang("--words-per-1k", &c->per_1k, arg, 1000); break;
	case OPT_MODEL: c->model = tool_data_find(arg, "samples/tox", ".bin"); break;
	case OPT_NO_MODEL: c->no_model = 1; break;
	case OPT_LABEL: c->label = arg; break;
	case OPT_THRESHOLD:
		parse_by_lang("--threshold", &c->threshold, arg, 1);
		c->threshold_set = 1;
		break;
	case OPT_RECIPE:
		if (!c->recipe)
			c->recipe = llm_recipe_new();
		if (llm_recipe_load(c->recipe, tool_data_find(arg, "recipes", NULL)) != LLM_OK)
			die_lib();
		break;
	case OPT_MAX_FPR:
	case OPT_MIN_RECALL:
		if (c->ntargets == MAX_TARGETS)
			usage_error("--max-fpr, --min-recall: at most %d targets", MAX_TARGETS);
		c->targets[c->ntargets].kind = ch == OPT_MAX_FPR ? LLM_TOXEVAL_MAX_FPR : LLM_TOXEVAL_MIN_RECALL;
		c->targets[c->ntargets++].value =
			tool_double(ch == OPT_MAX_FPR ? "--max-fpr" : "--min-recall", arg, 0, 1);
		break;
	case OPT_LABEL_FIELD: c->label_field = arg; break;
	case OPT_JSON: c->json = 1; break;
	case OPT_THRESHOLDS: parse_thresholds(c, arg); break;
	case 'k': c->k = (int)tool_int("-k", arg, -1, 1000000); break;
	default: tool_bad_option();
	}
}

/* What the options mean together, per subcommand. */
static void check_options(struct cfg *c)
{
	if (c->ft.maxn > 0 && c->ft.minn > c->ft.maxn)
		usage_error("--minn must not exceed --maxn");
	if (c->cmd == CMD_PREDICT) {
		if (c->threshold.n)
			usage_error("predict: --threshold takes one value");
		if (!c->threshold_set)
			c->threshold.dflt = 0.0;
	}
	if (c->ntargets && c->cmd != CMD_EVAL)
		usage_error("--max-fpr and --min-recall are options of eval");
	if (c->recipe && c->cmd != CMD_EVAL && c->cmd != CMD_FILTER)
		usage_error("--recipe applies to filtering and eval");
}

static int run_command(const struct cfg *c, char **args, int nargs)
{
	switch (c->cmd) {
	case CMD_TRAIN: return cmd_train(c, args, nargs);
	case CMD_EVAL: return cmd_eval(c, args, nargs);
	case CMD_PREDICT: return cmd_predict(c, args, nargs);
	case CMD_NORMALIZE: return cmd_normalize(c, args, nargs);
	default: return cmd_filter(c, args, nargs);
	}
}

int main(int argc, char **argv)
{
	tool_init("llm-tox");
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
	int rc = run_command(&c, av + optind, ac - optind);
	llm_recipe_free(c.recipe);
	return rc;
}
