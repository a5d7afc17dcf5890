/*
 * llm-clean — clean the JSONL document stream: HTML to text, normalisation, quality and
 * repetition filters chosen per domain and language by a recipe, language id, PII and time
 * masking, freshness.
 *
 * Input: documents (DESIGN §3). Output: the kept documents, in input order; every dropped
 * record goes to --rejects with reject_reason and the measured value. Memory: one batch of
 * records (--batch, default 8 MiB of input) and its output; with --threads N > 1, two of them.
 * With --threads N, each batch is cleaned by N threads of the pool (lib/core/pool) and
 * written in input order; while it is cleaned, the main thread writes the previous batch and
 * reads the next, so that reading and writing do not leave the cleaning threads idle.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/io.h"
#include "core/pool.h"
#include "text/clean.h"
#include "text/fasttext.h"
#include "text/timemask.h"
#include "text/zhseg.h"
#include "llm-clean/llm-clean.h"

static const char usage[] =
	"usage: llm-clean [options] [file ...]\n"
	"\n"
	"       llm-clean --recipe FILE --explain\n"
	"       llm-clean --list-filters\n"
	"\n"
	"Clean JSONL documents: HTML to text, normalisation, quality filters chosen per domain and\n"
	"language (Gopher, C4, FineWeb, ChineseWebText, code, encoding), language id, PII and time\n"
	"masking, freshness weights. With no file, or when file is -, read standard input.\n"
	"\n";

enum {
	OPT_HTML = TOOL_OPT_FIRST_PRIVATE, OPT_KEEP_BOILER, OPT_NORMALIZE, OPT_FILTERS,
	OPT_MIN_CHARS, OPT_MAX_CHARS, OPT_MIN_WORDS, OPT_SET, OPT_STOP_WORDS, OPT_DROP_PATTERN,
	OPT_DROP_LINE_PATTERN, OPT_LANG, OPT_LANG_THRESHOLD, OPT_LANG_MODEL, OPT_DETECT_LANG,
	OPT_MASK_PII, OPT_PII_PLACEHOLDER, OPT_MASK_TIME, OPT_TIME_PLACEHOLDER, OPT_FRESHNESS,
	OPT_REF_YEAR, OPT_DEFAULT_WEIGHT, OPT_MIN_WEIGHT, OPT_BATCH, OPT_RECIPE, OPT_EXPLAIN,
	OPT_LIST_FILTERS, OPT_SEGMENT, OPT_JUDGED_TEXT
};

static const struct tool_option cli_options[] = {
	TOOL_OPTION("recipe", 0, "FILE", OPT_RECIPE,
	            "filters, thresholds and normalisation per domain and language\n"
	            "(llmkit-recipe(5); a shipped one by name: --recipe default)"),
	TOOL_OPTION("explain", 0, NULL, OPT_EXPLAIN,
	            "print the recipe's settings per domain and language and exit"),
	TOOL_OPTION("list-filters", 0, NULL, OPT_LIST_FILTERS,
	            "print every filter step, its reasons and thresholds, and exit"),
	TOOL_OPTION("html", 0, NULL, OPT_HTML,
	            "treat every text as HTML (else only records with \"format\": \"html\")"),
	TOOL_OPTION("keep-boilerplate", 0, NULL, OPT_KEEP_BOILER,
	            "HTML: keep navigation, footers and link lists"),
	TOOL_OPTION("judged-text", 0, "SIZE", OPT_JUDGED_TEXT,
	            "dropped HTML records carry the text they were judged on in\n"
	            "--rejects, its first SIZE bytes (default 64K; 0: none)"),
	TOOL_OPTION("normalize", 0, "LIST", OPT_NORMALIZE,
	            "normalisation steps for every document (default: repair, controls,\n"
	            "zero-width, width, newlines, spaces, trim, blank-lines; also\n"
	            "width-punct, ideographic-space; all; none)"),
	TOOL_OPTION("filters", 0, "LIST", OPT_FILTERS,
	            "filter steps for every document (default: length, gopher-rep,\n"
	            "gopher-quality, c4, fineweb; also encoding, cwt, code; all; none)"),
	TOOL_OPTION("min-chars", 0, "N", OPT_MIN_CHARS,
	            "drop shorter documents (code points; default 50)"),
	TOOL_OPTION("max-chars", 0, "N", OPT_MAX_CHARS, "drop longer documents (default no limit)"),
	TOOL_OPTION("min-words", 0, "N", OPT_MIN_WORDS,
	            "drop documents with fewer words (default 0)"),
	TOOL_OPTION("set", 0, "NAME=VALUE", OPT_SET,
	            "set a filter threshold for every document (see llm-clean(1))"),
	TOOL_OPTION("stop-words", 0, "FILE", OPT_STOP_WORDS,
	            "stop words for the Gopher rule (one per line; shipped: en, zh)"),
	TOOL_OPTION("drop-pattern", 0, "FILE", OPT_DROP_PATTERN,
	            "drop documents matching any PCRE2 pattern in FILE"),
	TOOL_OPTION("drop-line-pattern", 0, "FILE", OPT_DROP_LINE_PATTERN,
	            "drop lines matching any pattern in FILE"),
	TOOL_OPTION("lang", 0, "LIST", OPT_LANG,
	            "keep only these languages (comma-separated; enables language id)"),
	TOOL_OPTION("lang-threshold", 0, "X", OPT_LANG_THRESHOLD,
	            "minimum language score (default 0.65)"),
	TOOL_OPTION("lang-model", 0, "FILE", OPT_LANG_MODEL,
	            "fastText language model (e.g. lid.176.ftz); default built-in"),
	TOOL_OPTION("detect-lang", 0, NULL, OPT_DETECT_LANG,
	            "add lang and lang_score without filtering"),
	TOOL_OPTION_F("mask-pii", 0, "LIST", OPT_MASK_PII, TOOL_OPTF_OPTARG,
	            "mask e-mail, ip, phone, id, card (default all)"),
	TOOL_OPTION("pii-placeholder", 0, "KIND=TEXT", OPT_PII_PLACEHOLDER,
	            "placeholder for a kind (default <EMAIL>, <IP>, ...)"),
	TOOL_OPTION("mask-time", 0, NULL, OPT_MASK_TIME, "mask absolute dates and times as [TIME]"),
	TOOL_OPTION("time-placeholder", 0, "TEXT", OPT_TIME_PLACEHOLDER,
	            "what --mask-time writes instead of [TIME]"),
	TOOL_OPTION("freshness", 0, NULL, OPT_FRESHNESS,
	            "add weight = 1 / (ref-year - year + 1) from published/year/date"),
	TOOL_OPTION("ref-year", 0, "YEAR", OPT_REF_YEAR,
	            "reference year (default the current year)"),
	TOOL_OPTION("default-weight", 0, "X", OPT_DEFAULT_WEIGHT,
	            "weight of undated documents (default 1)"),
	TOOL_OPTION("min-weight", 0, "X", OPT_MIN_WEIGHT, "lowest weight (default 0.05)"),
	TOOL_OPTION_F("segment", 0, "FIELD", OPT_SEGMENT, TOOL_OPTF_OPTARG,
	            "add FIELD (default \"words\"): the kept text as words separated\n"
	            "by spaces (Chinese words by jieba's method and dictionary)"),
	TOOL_OPTION("batch", 0, "SIZE", OPT_BATCH, "input bytes per batch (default 8M)"),
	TOOL_COMMON('o', "write to FILE (.zst, .gz, .xz, .bz2 compress)"),
	TOOL_COMMON(TOOL_OPT_REJECTS, "write every dropped record there, with \"reject_reason\""),
	TOOL_COMMON(TOOL_OPT_STATS, NULL),
	TOOL_COMMON(TOOL_OPT_STRICT, NULL),
	TOOL_COMMON(TOOL_OPT_MAX_LINE, NULL),
	TOOL_COMMON(TOOL_OPT_FIELD, "text field (default \"text\")"),
	TOOL_COMMON(TOOL_OPT_THREADS, NULL),
	TOOL_COMMON_END,
};

static const struct tool_cli cli = { usage, cli_options, NULL };

/* An option that sets a recipe key for every document: an override of the recipe. */
static void override(llm_recipe *r, const char *opt, const char *key, const char *value)
{
	if (llm_recipe_set(r, key, "=", value) != LLM_OK)
		usage_error("%s: %s", opt, llm_last_error());
}

/* --set NAME=VALUE */
static void set_param(llm_recipe *r, const char *arg)
{
	const char *eq = strchr(arg, '=');
	if (!eq)
		usage_error("--set: expected NAME=VALUE, got '%s'", arg);
	size_t n = (size_t)(eq - arg);
	if (!llm_filter_param_find(arg, n)) {
		llm_filter_param_unknown(arg, n);
		usage_error("--set: %s", llm_last_error());
	}
	char *name = llm_strndup(arg, n);
	override(r, "--set", name, eq + 1);
	free(name);
}

static char *langs_copy;

static const char **split_list(const char *arg)
{
	size_t n = 1;
	for (const char *p = arg; *p; p++)
		n += *p == ',';
	const char **v = llm_calloc(n + 1, sizeof *v);
	free(langs_copy);
	char *copy = langs_copy = llm_strdup(arg);
	size_t k = 0;
	for (char *save, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
		v[k++] = t;
	return v;
}

/* The command line: the common options, the cleaning configuration it builds, and the files
 * that configuration needs loaded. */
struct args {
	struct tool_common co;
	llm_clean_cfg cfg;
	llm_recipe *recipe;
	bool explain, list, mask_time;
	const char *stop_file, *drop_file, *drop_line_file, *model_file, *time_ph, *seg_field;
	size_t batch_bytes, judged_max;
};

/* --pii-placeholder KIND=TEXT */
static void pii_placeholder(llm_clean_cfg *cfg, const char *arg)
{
	const char *eq = strchr(arg, '=');
	unsigned k;
	char kind[32];
	if (!eq || (size_t)(eq - arg) >= sizeof kind)
		usage_error("--pii-placeholder: expected KIND=TEXT");
	memcpy(kind, arg, (size_t)(eq - arg));
	kind[eq - arg] = 0;
	if (llm_pii_parse(kind, &k) != LLM_OK || !k || (k & (k - 1)))
		usage_error("--pii-placeholder: unknown kind '%s'", kind);
	cfg->pii.placeholder[__builtin_ctz(k)] = eq + 1;
}

/* An option that sets a recipe key to a number for every document. */
static void override_int(llm_recipe *r, const char *opt, const char *key, const char *value)
{
	tool_int(opt, value, 0, INT32_MAX);
	override(r, opt, key, value);
}

static void parse_option(struct args *a, int c, const char *arg)
{
	llm_clean_cfg *cfg = &a->cfg;
	switch (c) {
	case OPT_HTML: cfg->html = true; break;
	case OPT_KEEP_BOILER: cfg->html_opts.boilerplate = false; break;
	case OPT_JUDGED_TEXT: a->judged_max = tool_size("--judged-text", arg); break;
	case OPT_RECIPE: {
		/* A recipe is options in a file: one that does not parse, or sets a value outside
		 * its bounds, is a usage error (2); one that cannot be read is 1. */
		int rc = llm_recipe_load(a->recipe, tool_data_find(arg, "recipes", NULL));
		if (rc == LLM_EFORMAT || rc == LLM_EINVAL)
			usage_error("%s", llm_last_error());
		if (rc != LLM_OK)
			die_lib();
		break;
	}
	case OPT_EXPLAIN: a->explain = true; break;
	case OPT_LIST_FILTERS: a->list = true; break;
	case OPT_NORMALIZE: override(a->recipe, "--normalize", "normalize", arg); break;
	case OPT_FILTERS: override(a->recipe, "--filters", "filters", arg); break;
	case OPT_MIN_CHARS: override_int(a->recipe, "--min-chars", "min_chars", arg); break;
	case OPT_MAX_CHARS: override_int(a->recipe, "--max-chars", "max_chars", arg); break;
	case OPT_MIN_WORDS: override_int(a->recipe, "--min-words", "min_words", arg); break;
	case OPT_SET: set_param(a->recipe, arg); break;
	case OPT_STOP_WORDS: a->stop_file = tool_data_find(arg, "samples/stopwords", ".txt"); break;
	case OPT_DROP_PATTERN: a->drop_file = arg; break;
	case OPT_DROP_LINE_PATTERN: a->drop_line_file = arg; break;
	case OPT_LANG:
		free((void *)cfg->langs);
		cfg->langs = split_list(arg);
		cfg->lid = true;
		break;
	case OPT_LANG_THRESHOLD: cfg->lang_threshold = tool_double("--lang-threshold", arg, 0, 1); break;
	case OPT_LANG_MODEL: a->model_file = arg; cfg->lid = true; break;
	case OPT_DETECT_LANG: cfg->lid = true; break;
	case OPT_MASK_PII:
		cfg->mask_pii = true;
		if (arg && llm_pii_parse(arg, &cfg->pii.kinds) != LLM_OK)
			usage_error("--mask-pii: %s", llm_last_error());
		break;
	case OPT_PII_PLACEHOLDER: pii_placeholder(cfg, arg); break;
	case OPT_MASK_TIME: a->mask_time = true; break;
	case OPT_TIME_PLACEHOLDER: a->time_ph = arg; break;
	case OPT_FRESHNESS: cfg->freshness = true; break;
	case OPT_REF_YEAR: cfg->ref_year = (int)tool_int("--ref-year", arg, 1, 9999); break;
	case OPT_DEFAULT_WEIGHT: cfg->default_weight = tool_double("--default-weight", arg, 0, 1e6); break;
	case OPT_MIN_WEIGHT: cfg->min_weight = tool_double("--min-weight", arg, 0, 1); break;
	case OPT_BATCH: a->batch_bytes = tool_size("--batch", arg); break;
	case OPT_SEGMENT:
		a->seg_field = arg ? arg : "words";
		if (!*a->seg_field)
			usage_error("--segment: empty field name");
		break;
	default: tool_bad_option();
	}
}

static void parse_args(struct args *a, int argc, char **argv)
{
	memset(a, 0, sizeof *a);
	tool_common_init(&a->co, &cli);
	llm_clean_cfg_init(&a->cfg);
	a->recipe = llm_recipe_new();
	a->batch_bytes = 8u << 20;
	a->judged_max = 64u << 10;
	int c;
	while ((c = tool_getopt(&a->co, argc, argv)) != -1)
		parse_option(a, c, optarg);
	a->cfg.field = a->co.field;
	a->cfg.recipe = a->recipe;
	a->cfg.preload = a->co.threads > 1;
	if (a->batch_bytes < 1)
		a->batch_bytes = 1;
}

static void args_release(struct args *a)
{
	llm_recipe_free(a->recipe);
	free((void *)a->cfg.langs);
	free(langs_copy);
}

/* --list-filters, --explain: print and exit. */
static int print_info(struct args *a)
{
	llm_buf b = LLM_BUF_INIT;
	if (a->list)
		llm_filter_list(&b);
	else
		llm_recipe_explain(a->recipe, &b);
	if (fwrite(b.p, 1, b.len, stdout) != b.len || fflush(stdout) != 0)
		die("standard output: %s", strerror(errno));
	llm_buf_release(&b);
	args_release(a);
	return 0;
}

/* What the options name to load: stop words, patterns, the language model, the time masker
 * (all set in the cleaning configuration) and --segment's dictionary. */
struct loaded {
	llm_wordset *stop;
	llm_patterns *drop, *drop_line;
	llm_fasttext *model;
	llm_timemask *tm;
	const llm_zhseg_dict *zh; /* NULL without --segment */
};

static void load_files(struct args *a, struct loaded *l)
{
	llm_clean_cfg *cfg = &a->cfg;
	memset(l, 0, sizeof *l);
	if (a->stop_file) {
		l->stop = llm_wordset_new();
		if (llm_wordset_load(l->stop, a->stop_file) != LLM_OK)
			die_lib();
		cfg->stop_words = l->stop;
	}
	if (a->drop_file && llm_patterns_load(&l->drop, a->drop_file) != LLM_OK)
		die_lib();
	if (a->drop_line_file && llm_patterns_load(&l->drop_line, a->drop_line_file) != LLM_OK)
		die_lib();
	cfg->drop_pattern = l->drop;
	cfg->drop_line_pattern = l->drop_line;
	if (a->model_file && llm_fasttext_load(&l->model, a->model_file) != LLM_OK)
		die_lib();
	cfg->lang_model = l->model;
	if (a->mask_time && !(l->tm = llm_timemask_new(a->time_ph, 0)))
		die_lib();
	cfg->timemask = l->tm;
	if (a->seg_field) {
		if (llm_zhseg_dict_default(&l->zh) != LLM_OK)
			die_lib();
		llm_debug("--segment: dictionary %s (%zu words)", llm_zhseg_dict_path(l->zh),
		          llm_zhseg_dict_size(l->zh));
	}
}

static void loaded_release(struct loaded *l)
{
	llm_wordset_free(l->stop);
	llm_patterns_free(l->drop);
	llm_patterns_free(l->drop_line);
	llm_fasttext_free(l->model);
	llm_timemask_free(l->tm);
}

static wordfield *wordfield_new(const struct args *a, const llm_zhseg_dict *zh)
{
	wordfield *s = llm_calloc(1, sizeof *s);
	s->field = a->seg_field;
	s->text_field = a->cfg.field;
	s->z = llm_zhseg_new(zh);
	llm_json_rec_init(&s->rec);
	llm_json_edit_init(&s->ed);
	return s;
}

static void wordfield_free(wordfield *s)
{
	if (!s)
		return;
	llm_zhseg_free(s->z);
	llm_json_rec_release(&s->rec);
	llm_json_edit_release(&s->ed);
	llm_buf_release(&s->text);
	llm_buf_release(&s->words);
	llm_buf_release(&s->out);
	free(s);
}

/* The pool and a cleaner (and segmenter) per worker, the output, the run. */
static void ctx_open(struct ctx *x, const struct args *a, const llm_zhseg_dict *zh)
{
	memset(x, 0, sizeof *x);
	x->co = &a->co;
	x->cfg = &a->cfg;
	x->batch_bytes = a->batch_bytes;
	x->judged_max = a->judged_max;
	if (llm_pool_new(&x->pool, a->co.threads) != LLM_OK)
		die_lib();
	int nworkers = llm_pool_workers(x->pool);
	x->workers = llm_calloc((size_t)nworkers, sizeof *x->workers);
	for (int t = 0; t < nworkers; t++) {
		x->workers[t].cl = llm_cleaner_new(&a->cfg);
		if (zh)
			x->workers[t].seg = wordfield_new(a, zh);
	}
	if (llm_writer_open(&x->out, a->co.output) != LLM_OK)
		die_lib();
	x->run = tool_run_new(&a->co);
	/* A batch is written by size, or at 65536 documents (small records' items). */
	tool_batchloop_init(&x->loop,
	                    &(tool_batchloop_ops){ sizeof(item), clean_item, clean_write_batch,
	                                           clean_item_init, clean_item_release },
	                    x->pool, x, a->batch_bytes, 65536, &a->co);
	x->tally = llm_clean_tally_new();
}

/* Close the output and free everything but the run and the tally; returns 1 if the output
 * failed (reported). */
static int ctx_close(struct ctx *x)
{
	int failed = 0;
	if (llm_writer_close(x->out) != LLM_OK) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	int nworkers = llm_pool_workers(x->pool);
	llm_pool_free(x->pool);
	for (int t = 0; t < nworkers; t++) {
		llm_cleaner_free(x->workers[t].cl);
		wordfield_free(x->workers[t].seg);
	}
	free(x->workers);
	tool_batchloop_release(&x->loop);
	return failed;
}

/* The reasons' tally in --stats, and the run's summary; returns the exit status. */
static int finish(struct ctx *x, int failed)
{
	llm_buf member = LLM_BUF_INIT;
	llm_clean_tally_json(x->tally, &member);
	llm_run_stats_extra(x->run, member.p);
	llm_buf_release(&member);
	llm_clean_tally_free(x->tally);
	return tool_run_finish(x->run, failed);
}

int main(int argc, char **argv)
{
	tool_init("llm-clean");
	tool_save_cmdline(argc, argv);
	struct args a;
	parse_args(&a, argc, argv);
	if (a.explain || a.list)
		return print_info(&a);
	struct loaded l;
	load_files(&a, &l);
	struct ctx x;
	ctx_open(&x, &a, l.zh);
	int failed = 0;
	if (optind == argc)
		failed |= tool_batchloop_file(&x.loop, "-", x.run);
	for (int i = optind; i < argc; i++)
		failed |= tool_batchloop_file(&x.loop, argv[i], x.run);
	failed |= ctx_close(&x);
	loaded_release(&l);
	args_release(&a);
	return finish(&x, failed);
}
