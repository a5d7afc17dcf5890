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
 * The subcommands are in tools/llm-tox/ (llm-tox.h).
 *
 * Memory: filter holds a batch of records (at most 1024 or 16 MB plus one line); predict and
 * normalize one record; eval four numbers per labelled record; train the normalized training
 * text and the model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftopt.h"
#include "llm-tox/llm-tox.h"
#include "tool.h"

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
	            "fastText model (.bin or .ftz), or a transformer classifier's\n"
	            "directory (second stage); default samples/tox/tox.bin"),
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
	case OPT_RECIPE: {
		if (!c->recipe)
			c->recipe = llm_recipe_new();
		/* as llm-clean's: a recipe that does not parse, or sets a value outside its bounds,
		 * is a usage error (2); one that cannot be read is 1 */
		int rc = llm_recipe_load(c->recipe, tool_data_find(arg, "recipes", NULL));
		if (rc == LLM_EFORMAT || rc == LLM_EINVAL)
			usage_error("%s", llm_last_error());
		if (rc != LLM_OK)
			die_lib();
		break;
	}
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
	case CMD_TRAIN: return tox_cmd_train(c, args, nargs);
	case CMD_EVAL: return tox_cmd_eval(c, args, nargs);
	case CMD_PREDICT: return tox_cmd_predict(c, args, nargs);
	case CMD_NORMALIZE: return tox_cmd_normalize(c, args, nargs);
	default: return tox_cmd_filter(c, args, nargs);
	}
}

int main(int argc, char **argv)
{
	tool_init("llm-tox");
	struct cfg c;
	cfg_init(&c);
	int argi;
	c.cmd = tool_subcommand(&cli, argc, argv, &argi);
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
