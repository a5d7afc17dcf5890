/*
 * llm-train — train a LLaMA-style model on the shards of a manifest, on the CPU or CUDA GPUs.
 *
 * Input: manifest.json and its shards (llm-shard). Output: a run directory with config.json,
 * train.json (the resolved options and the manifest's hash), metrics.jsonl, TensorBoard
 * events, metrics.prom and ckpt/ (checkpoints that transformers loads and --resume continues
 * exactly). Several processes under mpirun train data-parallel (gradients all-reduced; rank 0
 * logs and checkpoints). Memory: the model's parameters, gradients and AdamW moments (16 bytes
 * per parameter, 20 with --accum > 1) plus the activations of one micro-batch (model.h).
 * The run itself is lib/model/train.h; this file is its options and main, its progress line
 * is llm-train/progress.c.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/tmpfile.h"
#include "model/gpu.h"
#include "model/model.h"
#include "model/mpirt.h"
#include "model/ops.h"
#include "model/runlog.h"
#include "model/train.h"
#include "llm-train/llm-train.h"
#include "model/seqcls.h"
#include "tool.h"

static const char usage[] =
	"usage: llm-train --data MANIFEST [--model NAME | --config FILE] [options]\n"
	"       llm-train --smoke [--run-dir DIR]\n"
	"       llm-train --list-models [--vocab N]\n"
	"       llm-train classify --init CKPT -o DIR [options] [file ...]\n"
	"\n"
	"Train a LLaMA-style decoder on the shards of MANIFEST (manifest.json or its directory);\n"
	"classify: fine-tune a classifier or regressor on labelled JSONL from a pretrained one.\n"
	"\n";

enum {
	OPT_DATA = TOOL_OPT_FIRST_PRIVATE, OPT_MODEL, OPT_CONFIG, OPT_MIX, OPT_WEIGHTED, OPT_SKIP,
	OPT_SEED, OPT_STEPS, OPT_BATCH, OPT_SEQ, OPT_ACCUM, OPT_LR, OPT_MIN_LR, OPT_WARMUP,
	OPT_DECAY, OPT_WD, OPT_BETA1, OPT_BETA2, OPT_EPS, OPT_CLIP, OPT_RUN_DIR, OPT_EVAL_EVERY,
	OPT_EVAL_BATCHES, OPT_PLATEAU, OPT_ON_SPIKE, OPT_SPIKE_K, OPT_SPIKE_WARMUP, OPT_LAYER_NORMS,
	OPT_LOG_EVERY, OPT_REPORT_EVERY, OPT_FAULT, OPT_CKPT_EVERY, OPT_LIGHT_EVERY, OPT_KEEP,
	OPT_RESUME, OPT_SMOKE, OPT_LIST, OPT_VOCAB, OPT_DEVICE, OPT_PRECISION, OPT_RECOMPUTE,
	OPT_ZERO1, OPT_FORCE, OPT_MAX_SKIPS, OPT_TOKENIZER, OPT_THREADS, OPT_INIT, OPT_LABEL_FIELD,
	OPT_LABELS, OPT_PROBLEM
};

static const struct tool_option cli_options[] = {
	TOOL_TEXT("Model and data:"),
	TOOL_OPTION("data", 0, "PATH", OPT_DATA,
	            "manifest.json (train split; the val split for evaluation)"),
	TOOL_CHOICE("model", 0, "NAME", OPT_MODEL, "tiny\0small\0medium\0base\0" "1b\0",
	            "preset: tiny, small, medium, base, 1b (default tiny)"),
	TOOL_OPTION("config", 0, "FILE", OPT_CONFIG,
	            "Hugging Face LlamaConfig JSON instead of a preset"),
	TOOL_OPTION("tokenizer", 0, "FILE", OPT_TOKENIZER,
	            "the shards' tokenizer.json, kept in --run-dir for llm-eval"),
	TOOL_OPTION("mix", 0, "SPEC", OPT_MIX,
	            "domain proportions, e.g. web=0.65,books=0.12,code=0.15,wiki=0.08"),
	TOOL_OPTION("weighted", 0, NULL, OPT_WEIGHTED,
	            "sample documents by their shard weights too"),
	TOOL_OPTION("skip-batches", 0, "LIST", OPT_SKIP,
	            "never train on these batch ids (comma-separated)"),
	TOOL_OPTION("seed", 0, "N", OPT_SEED, "data order and initial weights (default 1)"),
	TOOL_TEXT("Schedule:"),
	TOOL_OPTION("steps", 0, "N", OPT_STEPS, "optimizer steps in all (default 1000)"),
	TOOL_OPTION("batch", 0, "B", OPT_BATCH,
	            "sequences per micro-batch and process (default 8)"),
	TOOL_OPTION("seq-len", 0, "T", OPT_SEQ, "tokens per sequence (default 256)"),
	TOOL_OPTION("accum", 0, "N", OPT_ACCUM, "micro-batches per step and process (default 1)"),
	TOOL_OPTION("lr", 0, "X", OPT_LR, "peak learning rate (default 3e-4)"),
	TOOL_OPTION("min-lr", 0, "X", OPT_MIN_LR, "final learning rate (default lr / 10)"),
	TOOL_OPTION("warmup", 0, "N", OPT_WARMUP, "linear warmup steps (default 100)"),
	TOOL_OPTION("decay-steps", 0, "N", OPT_DECAY, "end of the cosine decay (default --steps)"),
	TOOL_OPTION("weight-decay", 0, "X", OPT_WD, "AdamW decay of matrices (default 0.1)"),
	TOOL_TEXT("      --beta1 X, --beta2 X, --eps X   AdamW (default 0.9, 0.95, 1e-8)"),
	TOOL_OPTION_F("beta1", 0, "X", OPT_BETA1, TOOL_OPTF_NOHELP, NULL),
	TOOL_OPTION_F("beta2", 0, "X", OPT_BETA2, TOOL_OPTF_NOHELP, NULL),
	TOOL_OPTION_F("eps", 0, "X", OPT_EPS, TOOL_OPTF_NOHELP, NULL),
	TOOL_OPTION("clip", 0, "X", OPT_CLIP, "global gradient-norm clip, 0 = off (default 1.0)"),
	TOOL_TEXT("Monitoring and recovery:"),
	TOOL_OPTION("run-dir", 0, "DIR", OPT_RUN_DIR, "logs and checkpoints (default run)"),
	TOOL_OPTION("eval-every", 0, "N", OPT_EVAL_EVERY,
	            "validation loss every N steps, 0 = never (default 100)"),
	TOOL_OPTION("eval-batches", 0, "N", OPT_EVAL_BATCHES,
	            "fixed validation micro-batches (default 8)"),
	TOOL_OPTION("plateau", 0, "N,D,F", OPT_PLATEAU,
	            "after N evaluations in a row above the best by more than D,\n"
	            "multiply the learning rate by F (default off)"),
	TOOL_CHOICE("on-spike", 0, "ACTION", OPT_ON_SPIKE, "log\0skip\0rollback\0",
	            "log, skip or rollback when loss > K x smoothed (default log)"),
	TOOL_OPTION("spike-factor", 0, "K", OPT_SPIKE_K, "(default 2.0)"),
	TOOL_OPTION("spike-warmup", 0, "N", OPT_SPIKE_WARMUP,
	            "steps before spikes are looked for (default 50)"),
	TOOL_OPTION("max-skips", 0, "N", OPT_MAX_SKIPS,
	            "stop (exit 1) after N steps in a row skipped, 0 = never\n"
	            "(default 20)"),
	TOOL_OPTION("layer-norms", 0, NULL, OPT_LAYER_NORMS, "log each layer's gradient norm"),
	TOOL_OPTION("log-every", 0, "N", OPT_LOG_EVERY,
	            "progress line every N steps when not a terminal (default 10)"),
	TOOL_OPTION("report-every", 0, "N", OPT_REPORT_EVERY,
	            "rewrite RUN_DIR/report.html, llm-report's page of the run, every\n"
	            "N steps and at the end (default 0 = never)"),
	TOOL_OPTION("inject-fault", 0, "F@S", OPT_FAULT,
	            "testing: F = nan (non-finite gradients) or spike at step S"),
	TOOL_TEXT("Checkpoints:"),
	TOOL_OPTION("ckpt-every", 0, "N", OPT_CKPT_EVERY,
	            "full checkpoint (with optimizer state) every N steps, 0 = off\n"
	            "(default 100; one is always written at the end)"),
	TOOL_OPTION("light-every", 0, "N", OPT_LIGHT_EVERY,
	            "model-only checkpoint every N steps (default 0 = off)"),
	TOOL_OPTION("keep", 0, "N", OPT_KEEP,
	            "full and light checkpoints kept, each (default 3; 0 = all)"),
	TOOL_OPTION("resume", 0, NULL, OPT_RESUME,
	            "continue the run in --run-dir from ckpt/latest"),
	TOOL_OPTION("force", 0, NULL, OPT_FORCE,
	            "replace the run that --run-dir holds (else refused)"),
	TOOL_TEXT("Other:"),
	TOOL_OPTION("smoke", 0, NULL, OPT_SMOKE,
	            "load, forward, backward, all-reduce, eval, checkpoint, resume and\n"
	            "compare on tiny synthetic shards, printing every tensor"),
	TOOL_OPTION("list-models", 0, NULL, OPT_LIST, "the presets and their parameter counts"),
	TOOL_OPTION("vocab", 0, "N", OPT_VOCAB, "vocabulary for --list-models (default 32000)"),
	TOOL_OPTION("threads", 0, "N", OPT_THREADS, "threads (default: one per core)"),
	TOOL_TEXT("Device:"),
	TOOL_CHOICE("device", 0, "D", OPT_DEVICE, "cpu\0cuda\0auto\0",
	            "cpu, cuda or auto (cuda when a GPU is visible; default cpu)"),
	TOOL_CHOICE("precision", 0, "P", OPT_PRECISION, "fp32\0bf16\0fp16\0mixed\0",
	            "on a GPU: fp32, bf16, fp16 or mixed (default bf16; the CPU\n"
	            "runs fp32); fp16 and mixed use dynamic loss scaling"),
	TOOL_CHOICE("recompute", 0, "R", OPT_RECOMPUTE, "none\0ffn\0all\0",
	            "on a GPU: none, ffn or all activations recomputed in the\n"
	            "backward to save memory (default none)"),
	TOOL_OPTION("zero1", 0, NULL, OPT_ZERO1,
	            "on GPUs: shard the optimizer state over the processes"),
	TOOL_TEXT("Classifiers (llm-train classify):"),
	TOOL_OPTION("init", 0, "CKPT", OPT_INIT,
	            "the pretrained model: an llmkit checkpoint or run, or a Hugging\n"
	            "Face Llama directory, with its tokenizer"),
	TOOL_OPTION("label-field", 0, "KEY", OPT_LABEL_FIELD,
	            "the label of each document (default label)"),
	TOOL_OPTION("labels", 0, "LIST", OPT_LABELS,
	            "the classes in order, comma-separated (default: those seen,\n"
	            "sorted); documents of another label are skipped"),
	TOOL_CHOICE("problem", 0, "P", OPT_PROBLEM, "single\0regression\0",
	            "single (default: one class per document) or regression (the\n"
	            "label is a number)"),
	TOOL_COMMON('o', "classify: the classifier's directory"),
	TOOL_COMMON(TOOL_OPT_FIELD, "classify: text field (default \"text\")"),
	TOOL_COMMON(TOOL_OPT_STRICT, NULL),
	TOOL_COMMON(TOOL_OPT_MAX_LINE, NULL),
	TOOL_COMMON('q', "no progress line"),
	TOOL_COMMON('v', NULL),
	TOOL_COMMON(TOOL_OPT_VERSION, NULL),
	TOOL_COMMON('h', NULL),
	TOOL_OPTIONS_END,
};

static const struct tool_cli cli = { usage, cli_options, "classify\0" };

/* ---- main ---------------------------------------------------------------------------------- */

static void parse_option(options *o, int c, const char *arg)
{
	llm_train_options *t = &o->t;
	switch (c) {
	case OPT_DATA: t->data = arg; break;
	case OPT_MODEL: t->model = arg; break;
	case OPT_CONFIG: t->config = arg; break;
	case OPT_TOKENIZER: t->tokenizer = arg; break;
	case OPT_MIX: t->mix = arg; break;
	case OPT_WEIGHTED: t->weighted = 1; break;
	case OPT_SKIP: o->nskip = tool_u64_list("--skip-batches", arg, &o->skip, o->nskip); break;
	case OPT_SEED: t->seed = (uint64_t)tool_int("--seed", arg, 0, INT64_MAX); break;
	case OPT_STEPS: t->steps = tool_int("--steps", arg, 1, INT64_MAX / 2); break;
	case OPT_BATCH: t->batch = (int)tool_int("--batch", arg, 1, 1 << 16); break;
	case OPT_SEQ: t->seq = (int)tool_int("--seq-len", arg, 1, 1 << 20); break;
	case OPT_ACCUM: t->accum = (int)tool_int("--accum", arg, 1, 1 << 16); break;
	case OPT_LR: t->opt.lr = tool_double("--lr", arg, 0, 10); break;
	case OPT_MIN_LR: t->opt.min_lr = tool_double("--min-lr", arg, 0, 10); break;
	case OPT_WARMUP: t->opt.warmup = tool_int("--warmup", arg, 0, INT64_MAX / 2); break;
	case OPT_DECAY: t->opt.total = tool_int("--decay-steps", arg, 1, INT64_MAX / 2); break;
	case OPT_WD: t->opt.weight_decay = tool_double("--weight-decay", arg, 0, 10); break;
	case OPT_BETA1: t->opt.beta1 = tool_double("--beta1", arg, 0, 0.999999); break;
	case OPT_BETA2: t->opt.beta2 = tool_double("--beta2", arg, 0, 0.999999); break;
	case OPT_EPS: t->opt.eps = tool_double("--eps", arg, 0, 1); break;
	case OPT_CLIP: t->opt.clip = tool_double("--clip", arg, 0, 1e30); break;
	case OPT_RUN_DIR: t->run_dir = arg; break;
	case OPT_EVAL_EVERY: t->eval_every = (int)tool_int("--eval-every", arg, 0, INT32_MAX); break;
	case OPT_EVAL_BATCHES: t->eval_batches = (int)tool_int("--eval-batches", arg, 1, 1 << 16); break;
	case OPT_PLATEAU:
		if (llm_train_plateau_parse(t, arg) != LLM_OK)
			usage_error("--plateau: %s", llm_last_error());
		break;
	case OPT_ON_SPIKE: t->on_spike = tool_choice("--on-spike", arg, "log\0skip\0rollback\0"); break;
	case OPT_SPIKE_K: t->spike_k = tool_double("--spike-factor", arg, 1, 1e30); break;
	case OPT_SPIKE_WARMUP: t->spike_warmup = (int)tool_int("--spike-warmup", arg, 0, INT32_MAX); break;
	case OPT_LAYER_NORMS: t->layer_norms = 1; break;
	case OPT_LOG_EVERY: o->log_every = (int)tool_int("--log-every", arg, 1, INT32_MAX); break;
	case OPT_REPORT_EVERY:
		o->report_every = (int)tool_int("--report-every", arg, 0, INT32_MAX);
		break;
	case OPT_FAULT: {
		const char *at = strchr(arg, '@');
		if (!at || (strncmp(arg, "nan@", 4) != 0 && strncmp(arg, "spike@", 6) != 0))
			usage_error("--inject-fault: expected nan@STEP or spike@STEP");
		t->fault = arg[0] == 'n' ? LLM_FAULT_NAN : LLM_FAULT_SPIKE;
		t->fault_step = tool_int("--inject-fault", at + 1, 1, INT64_MAX / 2);
		break;
	}
	case OPT_CKPT_EVERY: t->ckpt_every = (int)tool_int("--ckpt-every", arg, 0, INT32_MAX); break;
	case OPT_LIGHT_EVERY: t->light_every = (int)tool_int("--light-every", arg, 0, INT32_MAX); break;
	case OPT_KEEP: t->keep = (int)tool_int("--keep", arg, 0, INT32_MAX); break;
	case OPT_RESUME: t->resume = 1; break;
	case OPT_FORCE: t->force = 1; break;
	case OPT_MAX_SKIPS: t->max_skips = (int)tool_int("--max-skips", arg, 0, INT32_MAX); break;
	case OPT_DEVICE: t->backend.device = tool_parsed("--device", arg, llm_device_parse); break;
	case OPT_PRECISION:
		t->backend.precision = tool_parsed("--precision", arg, llm_precision_parse);
		o->precision_given = 1;
		break;
	case OPT_RECOMPUTE: t->backend.recompute = tool_parsed("--recompute", arg, llm_recompute_parse); break;
	case OPT_ZERO1: t->backend.zero1 = 1; break;
	default: tool_bad_option();
	}
}

/* What the options leave to be worked out: defaults that depend on others, the device. */
static void resolve(options *o)
{
	llm_train_options *t = &o->t;
	llm_backend_options *b = &t->backend;
	if (!t->data)
		usage_error("--data is required");
	if (b->device == LLM_DEVICE_CPU &&
	    ((o->precision_given && b->precision != LLM_PREC_FP32) || b->recompute || b->zero1))
		usage_error("--precision other than fp32, --recompute and --zero1 need --device cuda");
	t->skip = o->skip;
	t->nskip = o->nskip;
	int rc = llm_train_options_resolve(t);
	if (rc == LLM_EINVAL)
		usage_error("--model: %s", llm_last_error());
	if (rc != LLM_OK)
		die_lib();
}

/* An error opening the run: a usage error (exit 2) when the options contradict the data,
 * the model or the checkpoint, else a runtime one (exit 1). */
static _Noreturn void open_failed(int rc)
{
	if (rc == LLM_EINVAL)
		usage_error("%s", llm_last_error());
	die_lib();
}

static int smoke(options *o)
{
	llm_buf report = LLM_BUF_INIT;
	progress p = { o, 0, 0, 0, 0, NULL };
	o->log_every = 1;
	o->report_every = 0; /* the smoke run's lives are no run to show */
	int same, rc = llm_train_smoke(&o->t, train_show_progress, &p, &report, &same);
	train_end_progress(o);
	if (rc)
		die_lib();
	fwrite(report.p, 1, report.len, stdout);
	llm_buf_release(&report);
	if (!same)
		llm_error("smoke: the resumed run differs from the straight one");
	return same ? 0 : 1;
}

/* The first SIGINT, SIGTERM or SIGUSR1 asks for a stop after the step under way and its
 * checkpoint; a second one stops at once, as the signal does by default. */
static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	if (stop_signal) {
		llm_tmpfile_unlink_all();
		signal(sig, SIG_DFL);
		raise(sig);
	}
	stop_signal = sig;
}

static void catch_stops(void)
{
	struct sigaction sa = { .sa_handler = on_stop, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
}

static int train(options *o)
{
	catch_stops();
	llm_trainer *t;
	int rc = llm_trainer_open(&t, &o->t);
	if (rc)
		open_failed(rc);
	llm_train_status st;
	llm_trainer_status(t, &st);
	progress p = { o, train_now(), st.step, st.tokens, 1, NULL };
	int stopped;
	rc = llm_train_run(t, train_show_progress, &p, &stop_signal, &stopped);
	train_end_progress(o);
	llm_trainer_status(t, &st);
	int rc2 = llm_trainer_close(t);
	if (rc || rc2)
		die_lib();
	if (o->report_every && o->t.backend.rank == 0) {
		train_report_page(&p, 0, 0); /* the trainer has gone: the last page */
		llm_runlog_free(p.rl);
	}
	if (o->t.backend.rank == 0)
		llm_info("%lld steps, %lld tokens; %lld non-finite steps skipped, %lld spikes, "
		         "%lld rollbacks", (long long)st.step, (long long)st.tokens,
		         (long long)st.nonfinite_steps, (long long)st.spikes, (long long)st.rollbacks);
	if (!stopped)
		return 0;
	/* Stopped by a signal: said, then the exit the signal would have given. */
	if (o->t.backend.rank == 0)
		llm_error("%s: stopped after step %lld; checkpoint %s/ckpt/step-%07lld written, "
		          "--resume continues", strsignal(stop_signal), (long long)st.step,
		          o->t.run_dir, (long long)st.step);
	llm_mpirt_finalize();
	signal(stop_signal, SIG_DFL);
	raise(stop_signal);
	return 128 + stop_signal;
}

/* llm-train classify: llm-train's schedule and batch options, a classifier's data. */
static int classify_main(options *o, const struct tool_common *co, struct classify_args *ca,
                         char **files, int nfiles)
{
	llm_train_options *t = &o->t;
	if (!ca->init || !co->output)
		usage_error("classify needs --init CKPT and -o DIR");
	if (t->data || t->config || t->resume)
		usage_error("classify: --data, --config and --resume are options of training");
	if (!ca->label_field)
		ca->label_field = "label";
	if (t->opt.min_lr < 0)
		t->opt.min_lr = t->opt.lr / 10;
	if (t->opt.total == 0)
		t->opt.total = t->steps;
	return train_classify(t, ca, files, nfiles);
}

int main(int argc, char **argv)
{
	tool_init("llm-train");
	/* A run's files are published as they are written: checkpoints, logs and the run's own
	 * records must survive a run that stops later. */
	llm_tmpfile_defer(0);
	tool_save_cmdline(argc, argv);
	options o = { .log_every = 10 };
	llm_train_options_init(&o.t);
	o.t.opt.min_lr = -1; /* unless given: lr / 10, and the decay ends at --steps */
	o.t.opt.total = 0;
	o.t.command = tool_cmdline();
	if (llm_mpirt_init(&argc, &argv, &o.t.backend.rank, &o.t.backend.world) != LLM_OK)
		die_lib();
	struct tool_common co;
	tool_common_init(&co, &cli);
	int list = 0, smoke_run = 0, vocab = 32000, threads = 0, c;
	/* classify's options are parsed as a command line of their own */
	int classify = argc > 1 && strcmp(argv[1], "classify") == 0;
	struct classify_args ca = { .co = &co, .problem = LLM_SEQCLS_SINGLE };
	if (classify) {
		argc--;
		argv++;
	}
	while ((c = tool_getopt(&co, argc, argv)) != -1) {
		if (c == OPT_INIT)
			ca.init = optarg;
		else if (c == OPT_LABEL_FIELD)
			ca.label_field = optarg;
		else if (c == OPT_LABELS)
			ca.labels = optarg;
		else if (c == OPT_PROBLEM)
			ca.problem = tool_choice("--problem", optarg, "single\0regression\0") ?
			             LLM_SEQCLS_REGRESSION : LLM_SEQCLS_SINGLE;
		else if (c == OPT_THREADS)
			threads = (int)tool_int("--threads", optarg, 1, 1024);
		else if (c == OPT_SMOKE)
			smoke_run = 1;
		else if (c == OPT_LIST)
			list = 1;
		else if (c == OPT_VOCAB)
			vocab = (int)tool_int("--vocab", optarg, 1, INT32_MAX);
		else
			parse_option(&o, c, optarg);
	}
	if (optind < argc && !classify)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (!classify && (ca.init || ca.label_field || ca.labels || co.output))
		usage_error("--init, --label-field, --labels, --problem and -o are options of "
		            "classify");
	if (list) {
		llm_buf b = LLM_BUF_INIT;
		llm_model_presets_table(vocab, &b);
		fwrite(b.p, 1, b.len, stdout);
		llm_buf_release(&b);
		llm_mpirt_finalize();
		return 0;
	}
	llm_ops_set_threads(threads ? threads : llm_mpirt_local_threads());
	int rc;
	if (classify) {
		rc = classify_main(&o, &co, &ca, argv + optind, argc - optind);
	} else if (smoke_run) {
		rc = smoke(&o);
	} else {
		resolve(&o);
		rc = train(&o);
	}
	free(o.skip);
	llm_mpirt_finalize();
	return rc;
}
