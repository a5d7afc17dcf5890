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
 * The subcommands are in tools/llm-score/ (llm-score.h).
 *
 * Memory: scoring holds two batches of records (--batch, default 8 MiB of input each) and
 * the models; sketch and merge a few thousand counters per score name; train the training
 * text and the model ((words + --bucket) x --dim floats).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftopt.h"
#include "llm-score/llm-score.h"
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

/* ---- options ---- */

static void add_file(const char **list, int *n, const char *opt, const char *arg)
{
	if (*n == SCORE_MAX_FILES)
		usage_error("%s: at most %d", opt, SCORE_MAX_FILES);
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
	c.cmd = tool_subcommand(&cli, argc, argv, &argi);
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
	case CMD_TRAIN: return score_cmd_train(&c, files, nfiles);
	case CMD_SKETCH: return score_cmd_sketch(&c, files, nfiles);
	case CMD_MERGE: return score_cmd_merge(&c, files, nfiles);
	default: return score_cmd_score(&c, files, nfiles);
	}
}
