/*
 * llm-clean — clean the JSONL document stream: HTML to text, normalisation, quality and
 * repetition filters (Gopher, C4, FineWeb), language id, PII and time masking, freshness.
 *
 * Input: documents (DESIGN §3). Output: the kept documents, in input order; every dropped
 * record goes to --rejects with reject_reason and the measured value. Memory: one batch of
 * records (--batch, default 8 MiB of input) and its output, whatever --threads is.
 * With --threads N, each batch is cleaned by N threads and written in input order.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/io.h"
#include "text/clean.h"
#include "text/fasttext.h"
#include "text/timemask.h"
#include "tool.h"

static const char usage[] =
	"usage: llm-clean [options] [file ...]\n"
	"\n"
	"Clean JSONL documents: HTML to text, normalisation, Gopher/C4/FineWeb filters, language\n"
	"id, PII and time masking, freshness weights. With no file, or when file is -, read\n"
	"standard input.\n"
	"\n"
	"      --html             treat every text as HTML (else only records with \"format\": \"html\")\n"
	"      --keep-boilerplate HTML: keep navigation, footers and link lists\n"
	"      --normalize LIST   normalisation steps (default all; none, or repair, controls,\n"
	"                         zero-width, width, newlines, spaces, trim, blank-lines)\n"
	"      --filters LIST     filters (default: length,gopher-rep,gopher-quality,c4,fineweb; none)\n"
	"      --min-chars N      drop shorter documents (code points; default 50)\n"
	"      --max-chars N      drop longer documents (default no limit)\n"
	"      --min-words N      drop documents with fewer words (default 0)\n"
	"      --set NAME=VALUE   set a filter threshold for every language (see llm-clean(1))\n"
	"      --stop-words FILE  stop words for the Gopher rule (one per line)\n"
	"      --drop-pattern FILE       drop documents matching any PCRE2 pattern in FILE\n"
	"      --drop-line-pattern FILE  drop lines matching any pattern in FILE\n"
	"      --lang LIST        keep only these languages (comma-separated; enables language id)\n"
	"      --lang-threshold X minimum language score (default 0.65)\n"
	"      --lang-model FILE  fastText language model (e.g. lid.176.ftz); default built-in\n"
	"      --detect-lang      add lang and lang_score without filtering\n"
	"      --mask-pii[=LIST]  mask e-mail, ip, phone, id, card (default all)\n"
	"      --pii-placeholder KIND=TEXT  placeholder for a kind (default <EMAIL>, <IP>, ...)\n"
	"      --mask-time        mask absolute dates and times as [TIME]\n"
	"      --time-placeholder TEXT\n"
	"      --freshness        add weight = 1 / (ref-year - year + 1) from date/year\n"
	"      --ref-year YEAR    reference year (default the current year)\n"
	"      --default-weight X weight of undated documents (default 1)\n"
	"      --min-weight X     lowest weight (default 0.05)\n"
	"      --batch SIZE       input bytes per batch (default 8M)\n"
	"  -o, --output FILE      write to FILE (NAME.zst compresses) instead of standard output\n"
	"      --rejects FILE     write every dropped record there, with \"reject_reason\"\n"
	"      --stats FILE       write the run summary as JSON\n"
	"      --strict           stop at the first malformed record (exit 1)\n"
	"      --max-line SIZE    longest line accepted (default 64M)\n"
	"      --field KEY        text field (default \"text\")\n"
	"      --threads N        worker threads (default 1; 0 = all cores)\n"
	"  -q, --quiet            no progress line or summary\n"
	"  -v, --verbose          more messages\n"
	"      --version          print the version and exit\n"
	"  -h, --help             print this help and exit\n";

enum {
	OPT_HTML = TOOL_OPT_FIRST_PRIVATE, OPT_KEEP_BOILER, OPT_NORMALIZE, OPT_FILTERS,
	OPT_MIN_CHARS, OPT_MAX_CHARS, OPT_MIN_WORDS, OPT_SET, OPT_STOP_WORDS, OPT_DROP_PATTERN,
	OPT_DROP_LINE_PATTERN, OPT_LANG, OPT_LANG_THRESHOLD, OPT_LANG_MODEL, OPT_DETECT_LANG,
	OPT_MASK_PII, OPT_PII_PLACEHOLDER, OPT_MASK_TIME, OPT_TIME_PLACEHOLDER, OPT_FRESHNESS,
	OPT_REF_YEAR, OPT_DEFAULT_WEIGHT, OPT_MIN_WEIGHT, OPT_BATCH
};

static const struct option longopts[] = {
	TOOL_COMMON_OPTIONS,
	{ "html", no_argument, NULL, OPT_HTML },
	{ "keep-boilerplate", no_argument, NULL, OPT_KEEP_BOILER },
	{ "normalize", required_argument, NULL, OPT_NORMALIZE },
	{ "filters", required_argument, NULL, OPT_FILTERS },
	{ "min-chars", required_argument, NULL, OPT_MIN_CHARS },
	{ "max-chars", required_argument, NULL, OPT_MAX_CHARS },
	{ "min-words", required_argument, NULL, OPT_MIN_WORDS },
	{ "set", required_argument, NULL, OPT_SET },
	{ "stop-words", required_argument, NULL, OPT_STOP_WORDS },
	{ "drop-pattern", required_argument, NULL, OPT_DROP_PATTERN },
	{ "drop-line-pattern", required_argument, NULL, OPT_DROP_LINE_PATTERN },
	{ "lang", required_argument, NULL, OPT_LANG },
	{ "lang-threshold", required_argument, NULL, OPT_LANG_THRESHOLD },
	{ "lang-model", required_argument, NULL, OPT_LANG_MODEL },
	{ "detect-lang", no_argument, NULL, OPT_DETECT_LANG },
	{ "mask-pii", optional_argument, NULL, OPT_MASK_PII },
	{ "pii-placeholder", required_argument, NULL, OPT_PII_PLACEHOLDER },
	{ "mask-time", no_argument, NULL, OPT_MASK_TIME },
	{ "time-placeholder", required_argument, NULL, OPT_TIME_PLACEHOLDER },
	{ "freshness", no_argument, NULL, OPT_FRESHNESS },
	{ "ref-year", required_argument, NULL, OPT_REF_YEAR },
	{ "default-weight", required_argument, NULL, OPT_DEFAULT_WEIGHT },
	{ "min-weight", required_argument, NULL, OPT_MIN_WEIGHT },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ NULL, 0, NULL, 0 }
};

/* --set NAME=VALUE: thresholds by name, applied to the parameters of every language. */
#define QP(f) offsetof(llm_quality_params, f)
static const struct {
	const char *name;
	size_t off;
	char type; /* d double, i int, b bool */
} params[] = {
	{ "min_doc_words", QP(min_doc_words), 'd' }, { "max_doc_words", QP(max_doc_words), 'd' },
	{ "min_avg_word_length", QP(min_avg_word_len), 'd' },
	{ "max_avg_word_length", QP(max_avg_word_len), 'd' },
	{ "max_symbol_word_ratio", QP(max_symbol_word_ratio), 'd' },
	{ "max_bullet_lines_ratio", QP(max_bullet_lines_ratio), 'd' },
	{ "max_ellipsis_lines_ratio", QP(max_ellipsis_lines_ratio), 'd' },
	{ "min_alpha_words_ratio", QP(min_alpha_words_ratio), 'd' },
	{ "min_stop_words", QP(min_stop_words), 'i' },
	{ "dup_para_frac", QP(dup_para_frac), 'd' }, { "dup_para_char_frac", QP(dup_para_char_frac), 'd' },
	{ "dup_line_frac", QP(dup_line_frac), 'd' }, { "dup_line_char_frac", QP(dup_line_char_frac), 'd' },
	{ "top_2_gram", QP(top_ngram_frac[0]), 'd' }, { "top_3_gram", QP(top_ngram_frac[1]), 'd' },
	{ "top_4_gram", QP(top_ngram_frac[2]), 'd' }, { "dup_5_gram", QP(dup_ngram_frac[0]), 'd' },
	{ "dup_6_gram", QP(dup_ngram_frac[1]), 'd' }, { "dup_7_gram", QP(dup_ngram_frac[2]), 'd' },
	{ "dup_8_gram", QP(dup_ngram_frac[3]), 'd' }, { "dup_9_gram", QP(dup_ngram_frac[4]), 'd' },
	{ "dup_10_gram", QP(dup_ngram_frac[5]), 'd' },
	{ "c4_remove_citations", QP(c4_remove_citations), 'b' },
	{ "c4_terminal_punct", QP(c4_terminal_punct), 'b' },
	{ "c4_min_words_per_line", QP(c4_min_words_per_line), 'i' },
	{ "c4_max_word_length", QP(c4_max_word_len), 'i' },
	{ "c4_min_sentences", QP(c4_min_sentences), 'i' },
	{ "c4_lorem_ipsum", QP(c4_lorem_ipsum), 'b' }, { "c4_javascript", QP(c4_javascript), 'b' },
	{ "c4_curly_bracket", QP(c4_curly_bracket), 'b' }, { "c4_policy", QP(c4_policy), 'b' },
	{ "fineweb_line_punct_ratio", QP(fw_line_punct_thr), 'd' },
	{ "fineweb_short_line_ratio", QP(fw_short_line_thr), 'd' },
	{ "fineweb_short_line_length", QP(fw_short_line_len), 'i' },
	{ "fineweb_char_dup_ratio", QP(fw_char_dup_ratio), 'd' },
	{ "fineweb_new_line_ratio", QP(fw_new_line_ratio), 'd' },
};

static void set_param(llm_clean_cfg *cfg, const char *arg)
{
	const char *eq = strchr(arg, '=');
	if (!eq)
		usage_error("--set: expected NAME=VALUE, got '%s'", arg);
	size_t n = (size_t)(eq - arg);
	for (size_t i = 0; i < sizeof params / sizeof *params; i++) {
		if (strlen(params[i].name) != n || memcmp(params[i].name, arg, n) != 0)
			continue;
		llm_quality_params *qs[3] = { &cfg->qp_en, &cfg->qp_zh, &cfg->qp_ja };
		for (int k = 0; k < 3; k++) {
			char *p = (char *)qs[k] + params[i].off;
			if (params[i].type == 'd')
				*(double *)(void *)p = tool_double("--set", eq + 1, -1, 1e12);
			else if (params[i].type == 'i')
				*(int *)(void *)p = (int)tool_int("--set", eq + 1, -1, 1 << 30);
			else
				*(bool *)p = tool_choice("--set", eq + 1, "false\0true\0") == 1;
		}
		return;
	}
	usage_error("--set: unknown threshold '%.*s'", (int)n, arg);
}

/* One record of a batch. */
typedef struct {
	size_t off, len;  /* in the batch's bytes */
	uint64_t lineno;
	int toolong;      /* the line was over --max-line (off/len hold its head) */
	size_t full_len;
	llm_json_rec rec;
	llm_buf out;
	llm_clean_result res;
} item;

typedef struct {
	llm_buf data;
	item *items;
	size_t n, cap;
	size_t next; /* next item to clean, taken atomically by the workers */
} batch;

typedef struct {
	batch *b;
	llm_cleaner *cl;
	pthread_t th;
} worker;

/* Workers take records one at a time from a shared counter: documents differ in size by
 * orders of magnitude (a whole book next to a news blurb), so a fixed split would idle. */
static void *work(void *arg)
{
	worker *w = arg;
	batch *b = w->b;
	for (;;) {
		size_t i = __atomic_fetch_add(&b->next, 1, __ATOMIC_RELAXED);
		if (i >= b->n)
			break;
		item *it = &b->items[i];
		if (it->toolong)
			continue;
		llm_clean_record(w->cl, b->data.p + it->off, it->len, &it->rec, &it->out, &it->res);
	}
	return NULL;
}

struct ctx {
	const struct tool_common *co;
	const llm_clean_cfg *cfg;
	llm_run *run;
	llm_writer *out;
	worker *workers;
	int nthreads;
	size_t batch_bytes;
	batch b;
	const char *name;
};

static void extra_value(llm_buf *x, const llm_clean_result *r)
{
	llm_buf_reset(x);
	if (!r->has_value)
		return;
	llm_buf_adds(x, "\"reject_value\": ");
	llm_json_put_f64(x, r->value);
	llm_buf_adds(x, ", \"reject_threshold\": ");
	llm_json_put_f64(x, r->threshold);
}

/* Clean the batch on the workers and account/write its records in order. */
static int flush_batch(struct ctx *c)
{
	batch *b = &c->b;
	b->next = 0;
	if (c->nthreads == 1) {
		work(&c->workers[0]);
	} else {
		for (int t = 0; t < c->nthreads; t++)
			if (pthread_create(&c->workers[t].th, NULL, work, &c->workers[t]) != 0)
				die("cannot start a thread");
		for (int t = 0; t < c->nthreads; t++)
			pthread_join(c->workers[t].th, NULL);
	}
	llm_buf extra = LLM_BUF_INIT;
	for (size_t i = 0; i < b->n; i++) {
		item *it = &b->items[i];
		const char *line = b->data.p + it->off;
		if (it->toolong) {
			if (c->co->strict)
				die("%s:%llu: line longer than --max-line (%zu bytes)", c->name,
				    (unsigned long long)it->lineno, it->full_len);
			llm_warn_at(c->name, it->lineno, "line longer than --max-line (%zu bytes)", it->full_len);
			int dom = llm_run_in(c->run, it->full_len + 1, NULL, 0);
			llm_buf_reset(&extra);
			llm_buf_addf(&extra, "\"length\": %zu", it->full_len);
			if (llm_run_reject(c->run, dom, "line_too_long", line, it->len, NULL, extra.p,
			                   c->name, it->lineno) != LLM_OK)
				die("%s", llm_last_error());
			continue;
		}
		llm_clean_result *r = &it->res;
		bool parsed = r->status != LLM_CLEAN_BAD || strcmp(r->reason, "bad_json") != 0;
		int dom = parsed ? llm_run_in_rec(c->run, it->len + 1, &it->rec)
		                 : llm_run_in(c->run, it->len + 1, NULL, 0);
		if (r->status == LLM_CLEAN_KEEP) {
			if (llm_writer_write(c->out, it->out.p, it->out.len) != LLM_OK ||
			    llm_writer_write(c->out, "\n", 1) != LLM_OK)
				die("%s", llm_last_error());
			llm_run_out(c->run, dom, it->out.len + 1);
			if (r->changed)
				llm_run_count(c->run, "changed", 1);
		} else {
			if (r->status == LLM_CLEAN_BAD) {
				if (c->co->strict)
					die("%s:%llu: %s", c->name, (unsigned long long)it->lineno, r->err_msg);
				if (parsed)
					llm_warn_at(c->name, it->lineno, "%s", r->err_msg);
				else
					llm_warn_at(c->name, it->lineno, "bad JSON at byte %zu: %s",
					            r->err_pos + 1, r->err_msg);
			}
			extra_value(&extra, r);
			if (llm_run_reject(c->run, dom, r->reason, line, it->len, parsed ? &it->rec : NULL,
			                   extra.len ? extra.p : NULL, c->name, it->lineno) != LLM_OK)
				die("%s", llm_last_error());
		}
		for (int k = 0; k < 5; k++) {
			if (r->c4_lines[k]) {
				char name[48];
				snprintf(name, sizeof name, "c4_lines_%s", llm_c4_line_rules[k]);
				llm_run_count(c->run, name, r->c4_lines[k]);
			}
			if (r->pii[k]) {
				char name[48];
				snprintf(name, sizeof name, "pii_%s", llm_pii_name(k));
				llm_run_count(c->run, name, r->pii[k]);
			}
		}
		if (r->times)
			llm_run_count(c->run, "time_masked", r->times);
	}
	llm_buf_release(&extra);
	b->n = 0;
	llm_buf_reset(&b->data);
	return 0;
}

static int clean_one(struct ctx *c, const char *path)
{
	llm_reader *r;
	if (llm_reader_open(&r, path) != LLM_OK) {
		llm_error("%s", llm_last_error());
		return 1;
	}
	llm_reader_set_max_line(r, c->co->max_line);
	c->name = llm_reader_name(r);
	llm_run_begin_input(c->run, c->name, llm_reader_size(r));
	char *line;
	size_t len;
	int rc, failed = 0;
	batch *b = &c->b;
	while ((rc = llm_reader_line(r, &line, &len)) != LLM_EOF) {
		if (rc != LLM_OK && rc != LLM_ETOOLONG) {
			llm_error("%s", llm_last_error());
			failed = 1;
			break;
		}
		if (b->n == b->cap) {
			b->cap = b->cap ? 2 * b->cap : 1024;
			b->items = llm_realloc(b->items, b->cap * sizeof *b->items);
			for (size_t i = b->n; i < b->cap; i++) {
				llm_json_rec_init(&b->items[i].rec);
				llm_buf_init(&b->items[i].out);
			}
		}
		item *it = &b->items[b->n++];
		it->toolong = rc == LLM_ETOOLONG;
		it->full_len = len;
		it->len = it->toolong ? (c->co->max_line < 1024 ? c->co->max_line : 1024) : len;
		it->off = b->data.len;
		it->lineno = llm_reader_lineno(r);
		llm_buf_add(&b->data, line, it->len);
		if (b->data.len >= c->batch_bytes || b->n >= 65536) {
			/* items point into data by offset, so growing data never invalidates them */
			flush_batch(c);
			llm_run_progress(c->run, llm_reader_raw_bytes(r));
		}
	}
	flush_batch(c);
	llm_run_progress(c->run, llm_reader_raw_bytes(r));
	llm_reader_free(r);
	return failed;
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

int main(int argc, char **argv)
{
	tool_init("llm-clean");
	tool_save_cmdline(argc, argv);
	struct tool_common co;
	tool_common_init(&co, usage);
	llm_clean_cfg cfg;
	llm_clean_cfg_init(&cfg);
	const char *stop_file = NULL, *drop_file = NULL, *drop_line_file = NULL, *model_file = NULL;
	const char *time_ph = NULL;
	bool mask_time = false;
	size_t batch_bytes = 8u << 20;
	int c;
	while ((c = getopt_long(argc, argv, TOOL_COMMON_SHORT, longopts, NULL)) != -1) {
		if (tool_common_option(&co, c, optarg))
			continue;
		switch (c) {
		case OPT_HTML: cfg.html = true; break;
		case OPT_KEEP_BOILER: cfg.html_opts.boilerplate = false; break;
		case OPT_NORMALIZE:
			if (llm_norm_parse(optarg, &cfg.norm.flags) != LLM_OK)
				usage_error("--normalize: %s", llm_last_error());
			cfg.normalize = cfg.norm.flags != 0;
			break;
		case OPT_FILTERS:
			if (llm_filter_parse(optarg, &cfg.filters) != LLM_OK)
				usage_error("--filters: %s", llm_last_error());
			break;
		case OPT_MIN_CHARS: cfg.min_chars = (size_t)tool_int("--min-chars", optarg, 0, 1LL << 40); break;
		case OPT_MAX_CHARS: cfg.max_chars = (size_t)tool_int("--max-chars", optarg, 0, 1LL << 40); break;
		case OPT_MIN_WORDS: cfg.min_words = (size_t)tool_int("--min-words", optarg, 0, 1LL << 40); break;
		case OPT_SET: set_param(&cfg, optarg); break;
		case OPT_STOP_WORDS: stop_file = optarg; break;
		case OPT_DROP_PATTERN: drop_file = optarg; break;
		case OPT_DROP_LINE_PATTERN: drop_line_file = optarg; break;
		case OPT_LANG:
			free((void *)cfg.langs);
			cfg.langs = split_list(optarg);
			cfg.lid = true;
			break;
		case OPT_LANG_THRESHOLD: cfg.lang_threshold = tool_double("--lang-threshold", optarg, 0, 1); break;
		case OPT_LANG_MODEL: model_file = optarg; cfg.lid = true; break;
		case OPT_DETECT_LANG: cfg.lid = true; break;
		case OPT_MASK_PII:
			cfg.mask_pii = true;
			if (optarg && llm_pii_parse(optarg, &cfg.pii.kinds) != LLM_OK)
				usage_error("--mask-pii: %s", llm_last_error());
			break;
		case OPT_PII_PLACEHOLDER: {
			const char *eq = strchr(optarg, '=');
			unsigned k;
			char kind[32];
			if (!eq || (size_t)(eq - optarg) >= sizeof kind)
				usage_error("--pii-placeholder: expected KIND=TEXT");
			memcpy(kind, optarg, (size_t)(eq - optarg));
			kind[eq - optarg] = 0;
			if (llm_pii_parse(kind, &k) != LLM_OK || !k || (k & (k - 1)))
				usage_error("--pii-placeholder: unknown kind '%s'", kind);
			cfg.pii.placeholder[__builtin_ctz(k)] = eq + 1;
			break;
		}
		case OPT_MASK_TIME: mask_time = true; break;
		case OPT_TIME_PLACEHOLDER: time_ph = optarg; break;
		case OPT_FRESHNESS: cfg.freshness = true; break;
		case OPT_REF_YEAR: cfg.ref_year = (int)tool_int("--ref-year", optarg, 1, 9999); break;
		case OPT_DEFAULT_WEIGHT: cfg.default_weight = tool_double("--default-weight", optarg, 0, 1e6); break;
		case OPT_MIN_WEIGHT: cfg.min_weight = tool_double("--min-weight", optarg, 0, 1); break;
		case OPT_BATCH: batch_bytes = tool_size("--batch", optarg); break;
		default: tool_bad_option();
		}
	}
	cfg.field = co.field;
	if (batch_bytes < 1)
		batch_bytes = 1;

	llm_wordset *stop = NULL;
	if (stop_file) {
		stop = llm_wordset_new();
		if (llm_wordset_load(stop, stop_file) != LLM_OK)
			die("%s", llm_last_error());
		cfg.qp_en.stop_words = cfg.qp_zh.stop_words = cfg.qp_ja.stop_words = stop;
	}
	llm_patterns *dp = NULL, *dlp = NULL;
	if (drop_file && llm_patterns_load(&dp, drop_file) != LLM_OK)
		die("%s", llm_last_error());
	if (drop_line_file && llm_patterns_load(&dlp, drop_line_file) != LLM_OK)
		die("%s", llm_last_error());
	cfg.drop_pattern = dp;
	cfg.drop_line_pattern = dlp;
	llm_fasttext *model = NULL;
	if (model_file && llm_fasttext_load(&model, model_file) != LLM_OK)
		die("%s", llm_last_error());
	cfg.lang_model = model;
	llm_timemask *tm = NULL;
	if (mask_time && !(tm = llm_timemask_new(time_ph, 0)))
		die("%s", llm_last_error());
	cfg.timemask = tm;

	struct ctx x = { 0 };
	x.co = &co;
	x.cfg = &cfg;
	x.batch_bytes = batch_bytes;
	x.nthreads = co.threads;
	x.workers = llm_calloc((size_t)x.nthreads, sizeof *x.workers);
	for (int t = 0; t < x.nthreads; t++) {
		x.workers[t].b = &x.b;
		x.workers[t].cl = llm_cleaner_new(&cfg);
	}
	if (llm_writer_open(&x.out, co.output) != LLM_OK)
		die("%s", llm_last_error());
	x.run = tool_run_new(&co);
	int failed = 0;
	if (optind == argc)
		failed |= clean_one(&x, "-");
	for (int i = optind; i < argc; i++)
		failed |= clean_one(&x, argv[i]);
	if (llm_writer_close(x.out) != LLM_OK) {
		llm_error("%s", llm_last_error());
		failed = 1;
	}
	for (int t = 0; t < x.nthreads; t++)
		llm_cleaner_free(x.workers[t].cl);
	free(x.workers);
	for (size_t i = 0; i < x.b.cap; i++) {
		llm_json_rec_release(&x.b.items[i].rec);
		llm_buf_release(&x.b.items[i].out);
	}
	free(x.b.items);
	llm_buf_release(&x.b.data);
	llm_wordset_free(stop);
	llm_patterns_free(dp);
	llm_patterns_free(dlp);
	llm_fasttext_free(model);
	llm_timemask_free(tm);
	free((void *)cfg.langs);
	free(langs_copy);
	return tool_run_finish(x.run, failed);
}
