/*
 * llm-dedup — remove exact and near-duplicate documents (exact, MinHash-LSH, SimHash) or
 * repeated lines, alone or against a saved index, in one process or as file stages.
 *
 * Input: the JSONL document stream; output: the survivors in input order, duplicates to
 * --rejects with "reject_reason": "duplicate" and "dup_of" (the survivor's id).
 * A single run reads its input twice (files are reopened, standard input is spooled to a
 * temporary file): the first pass signs and clusters, the second writes, because whether a
 * document survives can depend on documents after it (see dedup.h).
 * Memory: the engine's (dedup.h): its tables up to --memory, then sorted runs on disk, plus
 * 8 bytes per document and one record; stated in llm-dedup(1).
 *
 * This file holds the options and main; each subcommand and method is a file of
 * tools/llm-dedup/ (llm-dedup.h lists them).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "llm-dedup/llm-dedup.h"

static const char usage[] =
	"usage: llm-dedup [options] [file ...]\n"
	"       llm-dedup sign [options] -o sigfile [file ...]\n"
	"       llm-dedup cluster [options] [--outdir dir] sigfile ...\n"
	"       llm-dedup apply [options] --removals rmfile [file ...]\n"
	"       llm-dedup --info [--clusters] index ...\n"
	"\n"
	"Remove duplicate documents from the JSONL document stream; the first document of each\n"
	"cluster survives. sign, cluster and apply split the same work into file stages.\n"
	"\n";

enum {
	OPT_MINHASH = TOOL_OPT_FIRST_PRIVATE, OPT_EXACT, OPT_SIMHASH, OPT_LINES, OPT_NORMALIZE,
	OPT_UNITS, OPT_NGRAM, OPT_NUM_PERM, OPT_BANDS, OPT_ROWS, OPT_THRESHOLD, OPT_HASH_BITS,
	OPT_PRESET, OPT_VERIFY, OPT_HAMMING, OPT_BLOCKS, OPT_LINE_MAX, OPT_SEED, OPT_ANNOTATE,
	OPT_INDEX, OPT_OUTDIR, OPT_REMOVALS, OPT_MEMORY, OPT_TMPDIR, OPT_DUP_COUNT, OPT_INFO,
	OPT_CLUSTERS, OPT_SUBSTRING, OPT_MIN_LENGTH, OPT_DECON, OPT_DECON_REPORT
};

static const struct tool_option cli_options[] = {
	TOOL_TEXT("Method:"),
	TOOL_OPTION("minhash", 0, NULL, OPT_MINHASH, "MinHash-LSH near duplicates (default)"),
	TOOL_OPTION("exact", 0, NULL, OPT_EXACT, "identical text after normalisation (XXH3-128)"),
	TOOL_OPTION("simhash", 0, NULL, OPT_SIMHASH, "SimHash near duplicates"),
	TOOL_OPTION("lines", 0, NULL, OPT_LINES,
	            "drop lines seen more than --line-max times in the corpus"),
	TOOL_OPTION("substring", 0, NULL, OPT_SUBSTRING,
	            "remove every span of --min-length bytes seen before in the\n"
	            "corpus (suffix arrays; Lee et al. 2022)"),
	TOOL_OPTION("normalize", 0, "L", OPT_NORMALIZE,
	            "none, space or full (default; lower-case, no punctuation,\n"
	            "digit runs as 0, white space collapsed)"),
	TOOL_OPTION("units", 0, "U", OPT_UNITS,
	            "auto (default: words; Chinese in the segmenter's words,\n"
	            "Japanese Kana in characters), word, char"),
	TOOL_OPTION("ngram", 0, "N", OPT_NGRAM, "shingle size in units (default 5)"),
	TOOL_OPTION("num-perm", 0, "N", OPT_NUM_PERM, "MinHash permutations (default 112)"),
	TOOL_TEXT("      --bands B, --rows R  LSH bands and rows per band (default 14 x 8)"),
	TOOL_OPTION_F("bands", 0, "B", OPT_BANDS, TOOL_OPTF_NOHELP, NULL),
	TOOL_OPTION_F("rows", 0, "R", OPT_ROWS, TOOL_OPTF_NOHELP, NULL),
	TOOL_OPTION("threshold", 0, "T", OPT_THRESHOLD,
	            "choose bands x rows for Jaccard T (printed)"),
	TOOL_OPTION("hash-bits", 0, "32|64", OPT_HASH_BITS,
	            "width of the MinHash values in band keys (default 32)"),
	TOOL_OPTION("preset", 0, "P", OPT_PRESET,
	            "datatrove (5-word, 14 x 8, 64-bit) or nemo (24-char, 20 x 13)"),
	TOOL_OPTION("verify", 0, NULL, OPT_VERIFY,
	            "join LSH candidates only at Jaccard >= T (default 0.8)"),
	TOOL_OPTION("hamming", 0, "K", OPT_HAMMING,
	            "SimHash: largest Hamming distance (default 3)"),
	TOOL_OPTION("blocks", 0, "N", OPT_BLOCKS,
	            "SimHash: blocks of the permuted tables (default 6)"),
	TOOL_OPTION("line-max", 0, "N", OPT_LINE_MAX,
	            "--lines: largest allowed count of a line (default 1)"),
	TOOL_OPTION("min-length", 0, "N", OPT_MIN_LENGTH,
	            "--substring: shortest repeated span removed, in bytes\n"
	            "(default 100)"),
	TOOL_OPTION("decontaminate", 0, "F", OPT_DECON,
	            "drop documents that share an n-gram with an item of the\n"
	            "benchmark file F (JSONL; a directory: its *.jsonl);\n"
	            "repeat for more files; --ngram defaults to 13 here"),
	TOOL_OPTION("decon-report", 0, "F", OPT_DECON_REPORT,
	            "write the benchmark items found, with their counts, to F"),
	TOOL_OPTION("seed", 0, "N", OPT_SEED, "hash seed (default 1)"),
	TOOL_TEXT("Run:"),
	TOOL_OPTION("annotate", 0, NULL, OPT_ANNOTATE,
	            "keep every document; add dup_cluster and dup_of"),
	TOOL_OPTION("dup-count", 0, NULL, OPT_DUP_COUNT,
	            "add dup_count (documents in its cluster) to every survivor"),
	TOOL_OPTION("index", 0, "FILE", OPT_INDEX,
	            "dedup against FILE too and save the updated index there;\n"
	            "a run with the inputs of its last run replaces that run"),
	TOOL_OPTION_F("clusters", 0, NULL, OPT_CLUSTERS, TOOL_OPTF_NOHELP, NULL),
	TOOL_OPTION("info", 0, NULL, OPT_INFO,
	            "describe each index file given; with --clusters, list its\n"
	            "clusters as JSONL (id, dup_count, run)"),
	TOOL_OPTION("memory", 0, "SIZE", OPT_MEMORY,
	            "bucket tables and sort buffers above SIZE go to sorted\n"
	            "files on disk (default: a quarter of physical memory)"),
	TOOL_OPTION("tmpdir", 0, "DIR", OPT_TMPDIR,
	            "temporary files there (default: $TMPDIR, else /tmp)"),
	TOOL_OPTION("outdir", 0, "DIR", OPT_OUTDIR,
	            "cluster: write NAME.rm for each NAME.sig into DIR"),
	TOOL_OPTION("removals", 0, "FILE", OPT_REMOVALS, "apply: the removal list of this shard"),
	TOOL_COMMON('o', "write to FILE (.zst, .gz, .xz, .bz2 compress)"),
	TOOL_COMMON(TOOL_OPT_REJECTS, NULL),
	TOOL_COMMON(TOOL_OPT_STATS, NULL),
	TOOL_COMMON(TOOL_OPT_STRICT, NULL),
	TOOL_COMMON(TOOL_OPT_MAX_LINE, NULL),
	TOOL_COMMON(TOOL_OPT_FIELD, NULL),
	TOOL_COMMON(TOOL_OPT_THREADS, "sign on N threads (default 1; 0 = all cores)"),
	TOOL_COMMON_END,
};

static const struct tool_cli cli = { usage, cli_options, "sign\0cluster\0apply\0" };

enum { MODE_RUN, MODE_SIGN, MODE_CLUSTER, MODE_APPLY };

/* The options as given, before presets, defaults and the threshold resolve them. */
struct opts {
	struct dedup_cfg c;
	int mode, info, method, preset, verify;
	long long ngram, num_perm, bands, rows, hash_bits, units, hamming, blocks, norm;
	double threshold;
	uint64_t seed;
};

/* The subcommand, when argv[1] names one: shifted off. */
static int subcommand(int *argc, char ***argv)
{
	static const char *const sub[] = { "sign", "cluster", "apply" };
	if (*argc > 1)
		for (int i = 0; i < 3; i++)
			if (!strcmp((*argv)[1], sub[i])) {
				(*argv)++;
				(*argc)--;
				return MODE_SIGN + i;
			}
	return MODE_RUN;
}

/*
 * A quarter of physical memory, else 1 GiB; but at most half of an address-space or data
 * limit (ulimit -v, RLIMIT_AS and RLIMIT_DATA) when one is set, so that a limited process
 * spills to more shards or tables instead of failing to allocate: the other half is for
 * what the budget does not count (the program, read buffers, a mapped text).
 */
static size_t default_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), pagesize = sysconf(_SC_PAGESIZE);
	size_t m = pages > 0 && pagesize > 0 ? (size_t)pages / 4 * (size_t)pagesize : (size_t)1 << 30;
	static const int res[] = { RLIMIT_AS, RLIMIT_DATA };
	for (size_t i = 0; i < sizeof res / sizeof *res; i++) {
		struct rlimit rl;
		if (getrlimit(res[i], &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
		    rl.rlim_cur / 2 < m)
			m = (size_t)(rl.rlim_cur / 2);
	}
	return m;
}

static void set_method(struct opts *o, int method)
{
	o->method = method;
	o->c.lines = o->c.substring = 0;
}

/* One option of the method (what the signatures are); 0 when ch is not one. */
static int method_option(struct opts *o, int ch, const char *arg)
{
	switch (ch) {
	case OPT_MINHASH: set_method(o, LLM_DEDUP_MINHASH); break;
	case OPT_EXACT: set_method(o, LLM_DEDUP_EXACT); break;
	case OPT_SIMHASH: set_method(o, LLM_DEDUP_SIMHASH); break;
	case OPT_NORMALIZE: o->norm = tool_choice("--normalize", arg, "none\0space\0full\0"); break;
	case OPT_UNITS: o->units = tool_choice("--units", arg, "auto\0word\0char\0"); break;
	case OPT_NGRAM: o->ngram = tool_int("--ngram", arg, 1, 1 << 16); break;
	case OPT_NUM_PERM: o->num_perm = tool_int("--num-perm", arg, 1, LLM_MINHASH_MAX_PERM); break;
	case OPT_BANDS: o->bands = tool_int("--bands", arg, 1, LLM_MINHASH_MAX_PERM); break;
	case OPT_ROWS: o->rows = tool_int("--rows", arg, 1, LLM_MINHASH_MAX_PERM); break;
	case OPT_THRESHOLD: o->threshold = tool_double("--threshold", arg, 0.01, 1.0); break;
	case OPT_HASH_BITS:
		o->hash_bits = tool_choice("--hash-bits", arg, "32\0" "64\0") ? 64 : 32;
		break;
	case OPT_PRESET: o->preset = tool_choice("--preset", arg, "datatrove\0nemo\0"); break;
	case OPT_VERIFY: o->verify = 1; break;
	case OPT_HAMMING: o->hamming = tool_int("--hamming", arg, 0, 63); break;
	case OPT_BLOCKS: o->blocks = tool_int("--blocks", arg, 1, 64); break;
	case OPT_SEED: o->seed = (uint64_t)tool_int("--seed", arg, 0, INT64_MAX); break;
	default: return 0;
	}
	return 1;
}

/* One option of the run (what is done with the documents). */
static void run_option(struct opts *o, int ch, const char *arg)
{
	struct dedup_cfg *c = &o->c;
	switch (ch) {
	case OPT_LINES: c->lines = 1; c->substring = 0; break;
	case OPT_SUBSTRING: c->substring = 1; c->lines = 0; break;
	case OPT_DECON:
		c->decon = llm_realloc(c->decon, (size_t)(c->ndecon + 1) * sizeof *c->decon);
		c->decon[c->ndecon++] = arg;
		break;
	case OPT_DECON_REPORT: c->decon_report = arg; break;
	case OPT_MIN_LENGTH: c->min_len = (size_t)tool_int("--min-length", arg, 1, 1 << 20); break;
	case OPT_LINE_MAX: c->line_max = (unsigned)tool_int("--line-max", arg, 1, 254); break;
	case OPT_ANNOTATE: c->annotate = 1; break;
	case OPT_INDEX: c->index = arg; break;
	case OPT_OUTDIR: c->outdir = arg; break;
	case OPT_REMOVALS: c->removals = arg; break;
	case OPT_MEMORY: c->memory = (size_t)tool_size("--memory", arg); break;
	case OPT_TMPDIR: c->tmpdir = arg; break;
	case OPT_DUP_COUNT: c->dup_count = 1; break;
	case OPT_INFO: o->info = 1; break;
	case OPT_CLUSTERS: c->clusters = 1; break;
	default: tool_bad_option();
	}
}

static void parse_options(struct opts *o, int argc, char **argv)
{
	*o = (struct opts){
		.c = { .line_max = 1, .min_len = 100, .memory = default_memory() },
		.method = LLM_DEDUP_MINHASH, .preset = -1, .ngram = -1, .num_perm = -1, .bands = -1,
		.rows = -1, .hash_bits = -1, .units = -1, .hamming = -1, .blocks = -1, .norm = -1,
		.threshold = -1, .seed = 1,
	};
	tool_common_init(&o->c.co, &cli);
	o->mode = subcommand(&argc, &argv);
	int ch;
	while ((ch = tool_getopt(&o->c.co, argc, argv)) != -1)
		if (!method_option(o, ch, optarg))
			run_option(o, ch, optarg);
	o->c.files = argv + optind;
	o->c.nfiles = argc - optind;
}

/* The presets: datatrove's MinhashConfig defaults, NeMo Curator's fuzzy dedup defaults. */
static void apply_preset(llm_dedup_params *p, int preset)
{
	if (preset == 0) {
		p->sh.units = LLM_UNITS_WORD;
		p->sh.ngram = 5, p->num_perm = 112, p->bands = 14, p->rows = 8, p->hash_bits = 64;
	} else if (preset == 1) {
		p->sh.units = LLM_UNITS_CHAR;
		p->sh.ngram = 24, p->num_perm = 260, p->bands = 20, p->rows = 13, p->hash_bits = 32;
	}
}

/* The LSH layout: --bands and --rows, or chosen for --threshold. */
static void resolve_bands(struct opts *o, llm_dedup_params *p)
{
	if (o->num_perm > 0) {
		p->num_perm = (unsigned)o->num_perm;
		if (o->bands < 0 && o->rows < 0 && o->threshold < 0 && o->preset < 0)
			o->threshold = 0.8; /* a new permutation count needs a new band layout */
	}
	if (o->threshold > 0 && (o->bands > 0 || o->rows > 0))
		usage_error("--threshold chooses --bands and --rows; give one or the other");
	if (o->threshold > 0)
		llm_lsh_optimal(o->threshold, p->num_perm, 0.5, 0.5, &p->bands, &p->rows);
	if (o->bands > 0) p->bands = (unsigned)o->bands;
	if (o->rows > 0) p->rows = (unsigned)o->rows;
	if (o->bands > 0 && o->rows < 0) p->rows = p->num_perm / p->bands ? p->num_perm / p->bands : 1;
	if (o->rows > 0 && o->bands < 0) p->bands = p->num_perm / p->rows ? p->num_perm / p->rows : 1;
}

/* Presets first, explicit options over them, then bands x rows from the threshold. */
static void resolve_params(struct opts *o)
{
	llm_dedup_params *p = &o->c.p;
	llm_dedup_params_default(p, (llm_dedup_method)o->method);
	apply_preset(p, o->preset);
	if (o->norm >= 0) p->sh.norm = (llm_norm_level)o->norm;
	if (o->units >= 0) p->sh.units = (llm_units)o->units;
	if (o->ngram > 0) p->sh.ngram = (unsigned)o->ngram;
	if (o->hash_bits > 0) p->hash_bits = (unsigned)o->hash_bits;
	if (o->hamming >= 0) p->hamming = (unsigned)o->hamming;
	if (o->blocks > 0) p->blocks = (unsigned)o->blocks;
	p->sh.seed = o->seed;
	resolve_bands(o, p);
	if (o->verify) {
		if (o->method != LLM_DEDUP_MINHASH)
			usage_error("--verify applies to --minhash only");
		if (o->c.index)
			usage_error("--verify cannot be combined with --index (an index keeps no shingle sets)");
		p->verify = o->threshold > 0 ? o->threshold : 0.8;
	}
	if (llm_dedup_params_check(p))
		usage_error("%s", llm_last_error());
}

/* The options that belong to some modes only, and --decontaminate's n-grams. */
static void check_modes(struct opts *o)
{
	struct dedup_cfg *c = &o->c;
	int mode = o->mode;
	if (c->lines && (mode != MODE_RUN || c->index || c->annotate || c->dup_count))
		usage_error("--lines runs in one process, without --index, --annotate or --dup-count");
	if (c->ndecon && (mode != MODE_RUN || c->index || c->dup_count || c->lines || c->substring))
		usage_error("--decontaminate runs in one process, without a dedup method, --index "
		            "or --dup-count");
	if (c->decon_report && !c->ndecon)
		usage_error("--decon-report belongs to --decontaminate");
	if (c->ndecon && o->ngram < 0)
		c->p.sh.ngram = 13; /* GPT-3's 13-grams */
	if (c->ndecon && c->p.sh.units == LLM_UNITS_AUTO)
		c->p.sh.units = LLM_UNITS_AUTO_CHAR; /* 13 characters of Chinese, not 13 words */
	if (c->substring && (mode != MODE_RUN || c->index || c->dup_count))
		usage_error("--substring runs in one process, without --index or --dup-count");
	if (c->dup_count && (mode == MODE_SIGN || mode == MODE_CLUSTER))
		usage_error("--dup-count belongs to the single run and apply");
	if (mode == MODE_APPLY && c->index)
		usage_error("apply takes no --index (cluster uses it)");
	if (c->outdir && mode != MODE_CLUSTER)
		usage_error("--outdir belongs to cluster");
	if (c->removals && mode != MODE_APPLY)
		usage_error("--removals belongs to apply");
}

/* The single run: the method or filter chosen. */
static int run_single(struct dedup_cfg *c)
{
	if (c->ndecon) {
		int rc = dedup_run_decon(c);
		free(c->decon);
		return rc;
	}
	return c->substring ? dedup_run_substring(c) : c->lines ? dedup_run_lines(c) : dedup_run_docs(c);
}

int main(int argc, char **argv)
{
	tool_init("llm-dedup");
	tool_save_cmdline(argc, argv);
	struct opts o;
	parse_options(&o, argc, argv);
	if (o.info && o.mode != MODE_RUN)
		usage_error("--info is a mode of its own");
	if (o.c.clusters && !o.info)
		usage_error("--clusters belongs to --info");
	if (o.info)
		return dedup_run_info(&o.c);
	resolve_params(&o);
	check_modes(&o);
	struct dedup_cfg *c = &o.c;
	if (!c->lines && !c->substring && !c->ndecon && (o.mode == MODE_RUN || o.mode == MODE_SIGN))
		dedup_describe_params(&c->p);
	switch (o.mode) {
	case MODE_SIGN: return dedup_run_sign(c);
	case MODE_CLUSTER: return dedup_run_cluster(c);
	case MODE_APPLY: return dedup_run_apply(c);
	}
	return run_single(c);
}
