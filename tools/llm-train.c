/*
 * llm-train — train a LLaMA-style model on the shards of a manifest, on the CPU.
 *
 * Input: manifest.json and its shards (llm-shard). Output: a run directory with config.json,
 * train.json (the resolved options and the manifest's hash), metrics.jsonl, TensorBoard
 * events, metrics.prom and ckpt/ (checkpoints that transformers loads and --resume continues
 * exactly). Several processes under mpirun train data-parallel (gradients all-reduced; rank 0
 * logs and checkpoints). Memory: the model's parameters, gradients and AdamW moments (16 bytes
 * per parameter, 20 with --accum > 1) plus the activations of one micro-batch (model.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/hash.h"
#include "core/io.h"
#include "core/json.h"
#include "data/loader.h"
#include "data/shard.h"
#include "model/ckpt.h"
#include "model/cudamodel.h"
#include "model/gpu.h"
#include "model/model.h"
#include "model/mpirt.h"
#include "model/ops.h"
#include "model/optim.h"
#include "model/trainlog.h"
#include "tool.h"


static const char usage[] =
	"usage: llm-train --data MANIFEST [--model NAME | --config FILE] [options]\n"
	"       llm-train --smoke [--run-dir DIR]\n"
	"       llm-train --list-models [--vocab N]\n"
	"\n"
	"Train a LLaMA-style decoder on the shards of MANIFEST (manifest.json or its directory).\n"
	"\n"
	"Model and data:\n"
	"      --data PATH          manifest.json (train split; the val split for evaluation)\n"
	"      --model NAME         preset: tiny, small, medium, base, 1b (default tiny)\n"
	"      --config FILE        Hugging Face LlamaConfig JSON instead of a preset\n"
	"      --mix SPEC           domain proportions, e.g. web=0.65,books=0.12,code=0.15,wiki=0.08\n"
	"      --weighted           sample documents by their shard weights too\n"
	"      --skip-batches LIST  never train on these batch ids (comma-separated)\n"
	"      --seed N             data order and initial weights (default 1)\n"
	"Schedule:\n"
	"      --steps N            optimizer steps in all (default 1000)\n"
	"      --batch B            sequences per micro-batch and process (default 8)\n"
	"      --seq-len T          tokens per sequence (default 256)\n"
	"      --accum N            micro-batches per step and process (default 1)\n"
	"      --lr X               peak learning rate (default 3e-4)\n"
	"      --min-lr X           final learning rate (default lr / 10)\n"
	"      --warmup N           linear warmup steps (default 100)\n"
	"      --decay-steps N      end of the cosine decay (default --steps)\n"
	"      --weight-decay X     AdamW decay of matrices (default 0.1)\n"
	"      --beta1 X, --beta2 X, --eps X   AdamW (default 0.9, 0.95, 1e-8)\n"
	"      --clip X             global gradient-norm clip, 0 = off (default 1.0)\n"
	"Monitoring and recovery:\n"
	"      --run-dir DIR        logs and checkpoints (default run)\n"
	"      --eval-every N       validation loss every N steps, 0 = never (default 100)\n"
	"      --eval-batches N     fixed validation micro-batches (default 8)\n"
	"      --plateau N,D,F      after N evaluations in a row above the best by more than D,\n"
	"                           multiply the learning rate by F (default off)\n"
	"      --on-spike ACTION    log, skip or rollback when loss > K x smoothed (default log)\n"
	"      --spike-factor K     (default 2.0)\n"
	"      --spike-warmup N     steps before spikes are looked for (default 50)\n"
	"      --layer-norms        log each layer's gradient norm\n"
	"      --log-every N        progress line every N steps when not a terminal (default 10)\n"
	"      --inject-fault F@S   testing: F = nan (non-finite gradients) or spike at step S\n"
	"Checkpoints:\n"
	"      --ckpt-every N       full checkpoint (with optimizer state) every N steps, 0 = off\n"
	"                           (default 100; one is always written at the end)\n"
	"      --light-every N      model-only checkpoint every N steps (default 0 = off)\n"
	"      --keep N             full and light checkpoints kept, each (default 3; 0 = all)\n"
	"      --resume             continue the run in --run-dir from ckpt/latest\n"
	"Other:\n"
	"      --smoke              load, forward, backward, all-reduce, eval, checkpoint, resume and\n"
	"                           compare on tiny synthetic shards, printing every tensor\n"
	"      --list-models        the presets and their parameter counts\n"
	"      --vocab N            vocabulary for --list-models (default 32000)\n"
	"      --threads N          threads for matrix products (default: OpenBLAS's choice)\n"
	"Device:\n"
	"      --device D           cpu, cuda or auto (cuda when a GPU is visible; default cpu)\n"
	"      --precision P        on a GPU: fp32, bf16, fp16 or mixed (default bf16; the CPU\n"
	"                           runs fp32); fp16 and mixed use dynamic loss scaling\n"
	"      --recompute R        on a GPU: none, ffn or all activations recomputed in the\n"
	"                           backward to save memory (default none)\n"
	"      --zero1              on GPUs: shard the optimizer state over the processes\n"
	"  -q, --quiet              no progress line\n"
	"  -v, --verbose            more messages\n"
	"      --version            print the version and exit\n"
	"  -h, --help               print this help and exit\n";

enum {
	OPT_DATA = TOOL_OPT_FIRST_PRIVATE, OPT_MODEL, OPT_CONFIG, OPT_MIX, OPT_WEIGHTED, OPT_SKIP,
	OPT_SEED, OPT_STEPS, OPT_BATCH, OPT_SEQ, OPT_ACCUM, OPT_LR, OPT_MIN_LR, OPT_WARMUP,
	OPT_DECAY, OPT_WD, OPT_BETA1, OPT_BETA2, OPT_EPS, OPT_CLIP, OPT_RUN_DIR, OPT_EVAL_EVERY,
	OPT_EVAL_BATCHES, OPT_PLATEAU, OPT_ON_SPIKE, OPT_SPIKE_K, OPT_SPIKE_WARMUP, OPT_LAYER_NORMS,
	OPT_LOG_EVERY, OPT_FAULT, OPT_CKPT_EVERY, OPT_LIGHT_EVERY, OPT_KEEP, OPT_RESUME, OPT_SMOKE,
	OPT_LIST, OPT_VOCAB, OPT_DEVICE, OPT_PRECISION, OPT_RECOMPUTE, OPT_ZERO1
};

static const struct option longopts[] = {
	TOOL_COMMON_OPTIONS,
	{ "data", required_argument, NULL, OPT_DATA },
	{ "model", required_argument, NULL, OPT_MODEL },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "mix", required_argument, NULL, OPT_MIX },
	{ "weighted", no_argument, NULL, OPT_WEIGHTED },
	{ "skip-batches", required_argument, NULL, OPT_SKIP },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "steps", required_argument, NULL, OPT_STEPS },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "seq-len", required_argument, NULL, OPT_SEQ },
	{ "accum", required_argument, NULL, OPT_ACCUM },
	{ "lr", required_argument, NULL, OPT_LR },
	{ "min-lr", required_argument, NULL, OPT_MIN_LR },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "decay-steps", required_argument, NULL, OPT_DECAY },
	{ "weight-decay", required_argument, NULL, OPT_WD },
	{ "beta1", required_argument, NULL, OPT_BETA1 },
	{ "beta2", required_argument, NULL, OPT_BETA2 },
	{ "eps", required_argument, NULL, OPT_EPS },
	{ "clip", required_argument, NULL, OPT_CLIP },
	{ "run-dir", required_argument, NULL, OPT_RUN_DIR },
	{ "eval-every", required_argument, NULL, OPT_EVAL_EVERY },
	{ "eval-batches", required_argument, NULL, OPT_EVAL_BATCHES },
	{ "plateau", required_argument, NULL, OPT_PLATEAU },
	{ "on-spike", required_argument, NULL, OPT_ON_SPIKE },
	{ "spike-factor", required_argument, NULL, OPT_SPIKE_K },
	{ "spike-warmup", required_argument, NULL, OPT_SPIKE_WARMUP },
	{ "layer-norms", no_argument, NULL, OPT_LAYER_NORMS },
	{ "log-every", required_argument, NULL, OPT_LOG_EVERY },
	{ "inject-fault", required_argument, NULL, OPT_FAULT },
	{ "ckpt-every", required_argument, NULL, OPT_CKPT_EVERY },
	{ "light-every", required_argument, NULL, OPT_LIGHT_EVERY },
	{ "keep", required_argument, NULL, OPT_KEEP },
	{ "resume", no_argument, NULL, OPT_RESUME },
	{ "smoke", no_argument, NULL, OPT_SMOKE },
	{ "list-models", no_argument, NULL, OPT_LIST },
	{ "vocab", required_argument, NULL, OPT_VOCAB },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "precision", required_argument, NULL, OPT_PRECISION },
	{ "recompute", required_argument, NULL, OPT_RECOMPUTE },
	{ "zero1", no_argument, NULL, OPT_ZERO1 },
	{ NULL, 0, NULL, 0 }
};

enum { SPIKE_LOG, SPIKE_SKIP, SPIKE_ROLLBACK };
enum { FAULT_NONE, FAULT_NAN, FAULT_SPIKE };

typedef struct {
	const char *data, *model, *config, *run_dir, *mix;
	int weighted, batch, seq, accum, eval_every, eval_batches, on_spike, spike_warmup;
	int layer_norms, log_every, ckpt_every, light_every, keep, resume, threads;
	int plateau_n, fault, smoke;
	int device, precision, recompute, zero1, have_precision;
	int64_t steps, fault_step;
	uint64_t seed;
	double spike_k, plateau_delta, plateau_factor;
	int have_min_lr, have_decay;
	llm_optim_config opt;
	uint64_t *skip;
	size_t nskip;
} options;

/* ---- data parallelism ------------------------------------------------------------------ */

static int dp_rank, dp_world = 1;

/* Open MPI is opened at run time, only under a launcher (mpirt.h); its calls abort the job
 * on failure, so a failing one here is fatal too. */
static void dp_init(int *argc, char ***argv)
{
	if (llm_mpirt_init(argc, argv, &dp_rank, &dp_world) != LLM_OK)
		die("%s", llm_last_error());
}

static void dp_sum_f32(float *x, size_t n)
{
	if (llm_mpirt_sum_f32(x, n) != LLM_OK)
		die("%s", llm_last_error());
}

static void dp_sum_f64(double *x, int n)
{
	if (llm_mpirt_sum_f64(x, (size_t)n) != LLM_OK)
		die("%s", llm_last_error());
}

static void dp_barrier(void)
{
	if (llm_mpirt_barrier() != LLM_OK)
		die("%s", llm_last_error());
}

static void dp_finish(void)
{
	llm_mpirt_finalize();
}

/* ---- the trainer ----------------------------------------------------------------------- */

typedef struct {
	const options *o;
	llm_model_config cfg;
	llm_model *m;
	llm_cudamodel *gpu; /* --device cuda: the model lives there, t->m holds checkpoints */
	llm_loader *train, *val;
	float *am, *av, *acc;
	int32_t *x, *y, *vx, *vy;
	int nval;
	llm_trainlog *log;
	char *ckpt_root, *manifest_path;
	char manifest_hash[17];
	double peak, flops_tok, t0;
	double loss_scale_used; /* the loss scale of the last step's gradients (GPU) */
	char backend[160];      /* what the products run on, for train.json and the log */
	/* state saved in checkpoints */
	int64_t step, tokens, adam_t;
	double smooth, lr_factor, plateau_best;
	int64_t smooth_n, plateau_rises;
	int64_t n_nonfinite, n_spikes, n_rollbacks, n_skipped;
	uint64_t *skip;
	size_t nskip;
	int fault_done;
	double last_loss;
	/* per-step losses of this process's life, for --smoke's comparison */
	double *hist;
	int64_t hist_n;
} trainer;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double wall(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double rss_mb(void)
{
	long pages = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &res) != 2)
			res = 0;
		fclose(f);
	}
	return res * (double)sysconf(_SC_PAGESIZE) / (1 << 20);
}

static int skipped(const trainer *t, uint64_t id)
{
	for (size_t i = 0; i < t->nskip; i++)
		if (t->skip[i] == id)
			return 1;
	return 0;
}

static void add_skip(trainer *t, uint64_t id)
{
	if (skipped(t, id))
		return;
	t->skip = llm_realloc(t->skip, (t->nskip + 1) * sizeof *t->skip);
	t->skip[t->nskip++] = id;
}

/* The next global micro-batch not on the skip list; copied out only when it is ours. */
static uint64_t draw(trainer *t, int mine)
{
	llm_loader_state st;
	for (;;) {
		llm_loader_get_state(t->train, &st);
		if (!skipped(t, st.position))
			break;
		llm_loader_next(t->train, t->o->batch, t->o->seq, NULL, NULL);
	}
	return llm_loader_next(t->train, t->o->batch, t->o->seq, mine ? t->x : NULL,
	                       mine ? t->y : NULL);
}

/* state.json: everything that --resume needs beyond the tensors. */
static void state_json(const trainer *t, llm_buf *b)
{
	const options *o = t->o;
	llm_loader_state ls;
	llm_loader_get_state(t->train, &ls);
	char rng[65];
	llm_rng_format(&ls.rng, rng);
	llm_buf_addf(b, "{\n  \"format\": \"llmkit-train-state\",\n  \"version\": 1,\n");
	llm_buf_addf(b, "  \"step\": %lld,\n  \"tokens\": %lld,\n  \"adam_t\": %lld,\n",
	             (long long)t->step, (long long)t->tokens, (long long)t->adam_t);
	llm_buf_addf(b, "  \"data_position\": %llu,\n  \"data_rng\": \"%s\",\n",
	             (unsigned long long)ls.position, rng);
	llm_buf_adds(b, "  \"skip_batches\": [");
	for (size_t i = 0; i < t->nskip; i++)
		llm_buf_addf(b, "%s%llu", i ? ", " : "", (unsigned long long)t->skip[i]);
	llm_buf_addf(b, "],\n  \"seed\": %llu,\n  \"batch\": %d,\n  \"seq_len\": %d,\n  \"accum\": %d,\n",
	             (unsigned long long)o->seed, o->batch, o->seq, o->accum);
	llm_buf_addf(b, "  \"world_size\": %d,\n  \"weighted\": %s,\n  \"mix\": ", dp_world,
	             o->weighted ? "true" : "false");
	llm_json_put_str(b, o->mix ? o->mix : "", o->mix ? strlen(o->mix) : 0);
	llm_buf_adds(b, ",\n  \"smoothed_loss\": ");
	llm_json_put_f64(b, t->smooth);
	llm_buf_addf(b, ",\n  \"smoothed_n\": %lld,\n  \"lr_factor\": ", (long long)t->smooth_n);
	llm_json_put_f64(b, t->lr_factor);
	llm_buf_adds(b, ",\n  \"plateau_best\": ");
	llm_json_put_f64(b, t->plateau_best);
	llm_buf_addf(b, ",\n  \"plateau_rises\": %lld,\n  \"nonfinite_steps\": %lld,\n"
	                "  \"spikes\": %lld,\n  \"rollbacks\": %lld,\n  \"skipped_steps\": %lld,\n",
	             (long long)t->plateau_rises, (long long)t->n_nonfinite, (long long)t->n_spikes,
	             (long long)t->n_rollbacks, (long long)t->n_skipped);
	llm_buf_addf(b, "  \"loss_scale\": %.17g,\n  \"loss_scale_good_steps\": %lld,\n"
	                "  \"tokenizer_id\": \"%016llx\",\n"
	                "  \"manifest_hash\": \"%s\",\n  \"command\": ",
	             t->gpu ? llm_cudamodel_lossscale(t->gpu)->scale : 1.0,
	             t->gpu ? (long long)llm_cudamodel_lossscale(t->gpu)->good_steps : 0LL,
	             (unsigned long long)llm_loader_tokenizer_id(t->train), t->manifest_hash);
	llm_json_put_str(b, tool_cmdline(), strlen(tool_cmdline()));
	llm_buf_adds(b, "\n}\n");
}

static int64_t jint(const llm_json_rec *r, const char *dir, const char *key)
{
	int64_t v;
	if (llm_json_get_i64(r, key, &v) != LLM_OK)
		die("%s/state.json: missing or bad '%s'", dir, key);
	return v;
}

static double jnum(const llm_json_rec *r, const char *dir, const char *key)
{
	const llm_json_val *v = llm_json_get(r, key);
	double d;
	if (v && v->type == LLM_JSON_NULL)
		return NAN;
	if (!v || llm_json_num(v, &d) != LLM_OK)
		die("%s/state.json: missing or bad '%s'", dir, key);
	return d;
}

/*
 * Restore from checkpoint dir. full: everything (--resume); otherwise a rollback, which keeps
 * this process's skip list and counters (they record what happened after the checkpoint).
 */
static void restore(trainer *t, const char *dir, int full)
{
	const options *o = t->o;
	char *text;
	size_t len;
	if (llm_ckpt_read_state(dir, &text, &len) || llm_ckpt_load_model(dir, t->m) ||
	    llm_ckpt_load_optim(dir, t->m, t->am, t->av))
		die("%s", llm_last_error());
	llm_json_rec r;
	llm_json_rec_init(&r);
	if (llm_json_parse(&r, text, len) != LLM_OK)
		die("%s/state.json: byte %zu: %s", dir, r.err_pos, r.err_msg);
	if (full) {
		struct { const char *key; int64_t want; const char *opt; } same[] = {
			{ "batch", o->batch, "--batch" },       { "seq_len", o->seq, "--seq-len" },
			{ "accum", o->accum, "--accum" },       { "world_size", dp_world, "processes" },
			{ "seed", (int64_t)o->seed, "--seed" },
		};
		for (size_t i = 0; i < sizeof same / sizeof *same; i++)
			if (jint(&r, dir, same[i].key) != same[i].want)
				die("%s: resuming needs the same %s as the checkpoint (%lld, not %lld)", dir,
				    same[i].opt, (long long)jint(&r, dir, same[i].key), (long long)same[i].want);
		llm_buf mix = LLM_BUF_INIT;
		llm_json_get_str(&r, "mix", &mix);
		const llm_json_val *w = llm_json_get(&r, "weighted");
		if (strcmp(mix.len ? mix.p : "", o->mix ? o->mix : "") != 0 ||
		    !w || (w->type == LLM_JSON_TRUE) != !!o->weighted)
			die("%s: resuming needs the same --mix and --weighted as the checkpoint", dir);
		llm_buf_release(&mix);
		t->nskip = 0;
		const llm_json_val *sk = llm_json_get(&r, "skip_batches");
		size_t it = 0;
		llm_json_val e;
		int64_t id;
		while (sk && llm_json_next(sk, &it, NULL, &e) == LLM_OK)
			if (llm_json_i64(&e, &id) == LLM_OK && id >= 0)
				add_skip(t, (uint64_t)id);
		t->n_nonfinite = jint(&r, dir, "nonfinite_steps");
		t->n_spikes = jint(&r, dir, "spikes");
		t->n_rollbacks = jint(&r, dir, "rollbacks");
		t->n_skipped = jint(&r, dir, "skipped_steps");
	}
	t->step = jint(&r, dir, "step");
	t->tokens = jint(&r, dir, "tokens");
	t->adam_t = jint(&r, dir, "adam_t");
	t->smooth = jnum(&r, dir, "smoothed_loss");
	t->smooth_n = jint(&r, dir, "smoothed_n");
	t->lr_factor = jnum(&r, dir, "lr_factor");
	t->plateau_best = jnum(&r, dir, "plateau_best");
	t->plateau_rises = jint(&r, dir, "plateau_rises");
	llm_loader_state ls;
	ls.position = (uint64_t)jint(&r, dir, "data_position");
	llm_buf rng = LLM_BUF_INIT;
	if (llm_json_get_str(&r, "data_rng", &rng) != LLM_OK || llm_rng_parse(&ls.rng, rng.p) != LLM_OK)
		die("%s/state.json: bad 'data_rng'", dir);
	llm_loader_set_state(t->train, &ls);
	llm_buf_release(&rng);
	if (t->gpu) {
		llm_lossscale *sc = llm_cudamodel_lossscale(t->gpu);
		int64_t good;
		if (llm_json_get_i64(&r, "loss_scale_good_steps", &good) == LLM_OK && sc->enabled) {
			sc->scale = jnum(&r, dir, "loss_scale");
			sc->good_steps = good;
		}
		if (llm_cudamodel_set_params(t->gpu, llm_model_params(t->m)) ||
		    llm_cudamodel_set_optim(t->gpu, t->am, t->av))
			die("%s", llm_last_error());
	}
	llm_json_rec_release(&r);
	free(text);
}

static void save(trainer *t, int full)
{
	if (t->gpu && (llm_cudamodel_get_params(t->gpu, llm_model_params(t->m)) ||
	               (full && llm_cudamodel_get_optim(t->gpu, t->am, t->av))))
		die("%s", llm_last_error());
	if (dp_rank == 0) {
		llm_buf st = LLM_BUF_INIT;
		state_json(t, &st);
		char *path = NULL;
		if (llm_ckpt_save(t->ckpt_root, t->step, t->m, full ? t->am : NULL, full ? t->av : NULL,
		                  st.p, st.len, &path) != LLM_OK ||
		    llm_ckpt_prune(t->ckpt_root, full, t->o->keep) != LLM_OK)
			die("%s", llm_last_error());
		llm_debug("checkpoint %s", path);
		free(path);
		llm_buf_release(&st);
	}
	dp_barrier(); /* a rollback on any rank may read it next */
}

static double evaluate(trainer *t)
{
	double s[2] = { 0, 0 };
	int B = t->o->batch, T = t->o->seq;
	for (int i = dp_rank; i < t->nval; i += dp_world) {
		double loss;
		int64_t n;
		size_t off = (size_t)i * B * T;
		if ((t->gpu ? llm_cudamodel_eval(t->gpu, t->vx + off, t->vy + off, B, T, &loss, &n)
		            : llm_model_forward(t->m, t->vx + off, t->vy + off, B, T, &loss, &n)) != LLM_OK)
			die("%s", llm_last_error());
		s[0] += loss * (double)n;
		s[1] += (double)n;
	}
	dp_sum_f64(s, 2);
	return s[1] > 0 ? s[0] / s[1] : NAN;
}

/* Longest run of tokens between end-of-text ids in the labels of one micro-batch. */
static int longest_doc(const int32_t *y, int B, int T, uint32_t eos)
{
	int best = 0;
	for (int b = 0; b < B; b++) {
		int run = 0;
		for (int i = 0; i < T; i++) {
			run = (uint32_t)y[(size_t)b * T + i] == eos ? 0 : run + 1;
			best = run > best ? run : best;
		}
	}
	return best;
}

/* One optimizer step. Returns 1 when it was rolled back (the step counter went back). */
static int train_step(trainer *t)
{
	const options *o = t->o;
	int A = o->accum, W = dp_world, B = o->batch, T = o->seq;
	size_t n = llm_model_nparams(t->m);
	float *g = llm_model_grads(t->m), *G = A > 1 ? t->acc : g;
	uint64_t *ids = llm_malloc((size_t)A * W * sizeof *ids);
	double loss_sum = 0, t_start = now();
	int longest = 0;
	float scale = 1.0f / ((float)B * T * A * W);
	for (int a = 0; a < A; a++) {
		for (int w = 0; w < W; w++)
			ids[a * W + w] = draw(t, w == dp_rank);
		double loss;
		int lg = longest_doc(t->y, B, T, llm_loader_eos(t->train));
		longest = lg > longest ? lg : longest;
		if (t->gpu) {
			/* Gradients accumulate on the device; the last micro-batch's backward starts
			 * the NCCL all-reduce. */
			if ((a == 0 && llm_cudamodel_zero_grad(t->gpu)) ||
			    llm_cudamodel_train_micro(t->gpu, t->x, t->y, B, T, scale, a == A - 1, &loss,
			                              NULL))
				die("%s", llm_last_error());
			loss_sum += loss;
			continue;
		}
		llm_model_zero_grad(t->m);
		if (llm_model_forward(t->m, t->x, t->y, B, T, &loss, NULL) != LLM_OK)
			die("%s", llm_last_error());
		loss_sum += loss;
		llm_model_backward(t->m, scale);
		/* A separate accumulator (rather than backward adding into the gradients) makes the
		 * sum over micro-batches the same additions as the all-reduce over ranks, so one
		 * process with --accum 2 equals two processes bit for bit. */
		if (A > 1) {
			if (a == 0)
				memcpy(G, g, n * sizeof *G);
			else
				for (size_t i = 0; i < n; i++)
					G[i] += g[i];
		}
	}
	int64_t step1 = t->step + 1;
	int fault = 0;
	if (o->fault && o->fault_step == step1 && !t->fault_done) {
		t->fault_done = 1;
		fault = o->fault;
		if (fault == FAULT_NAN && dp_rank == 0 && !t->gpu)
			G[0] = NAN;
	}
	if (!t->gpu)
		dp_sum_f32(G, n);
	dp_sum_f64(&loss_sum, 1);
	double loss = loss_sum / (A * W);
	if (fault == FAULT_SPIKE)
		loss *= 100;
	double gnorm;
	if (t->gpu) {
		int finite;
		t->loss_scale_used = llm_cudamodel_lossscale(t->gpu)->scale;
		if (llm_cudamodel_grad_norm(t->gpu, &gnorm, &finite))
			die("%s", llm_last_error());
		if (!finite || fault == FAULT_NAN)
			gnorm = NAN;
	} else {
		gnorm = sqrt(llm_sum_squares(G, n));
	}
	llm_buf ev = LLM_BUF_INIT;
	llm_buf_adds(&ev, "\"batches\": [");
	for (int i = 0; i < A * W; i++)
		llm_buf_addf(&ev, "%s%llu", i ? ", " : "", (unsigned long long)ids[i]);
	llm_buf_adds(&ev, "], \"loss\": ");
	llm_json_put_f64(&ev, loss);
	int apply = 1, spike = isfinite(loss) && t->step >= o->spike_warmup && t->smooth_n > 0 &&
	                       loss > o->spike_k * t->smooth;
	if (!isfinite(loss) || !isfinite(gnorm)) {
		t->n_nonfinite++;
		apply = 0;
		if (t->log)
			llm_trainlog_event(t->log, step1, "nonfinite_skipped", ev.p);
		llm_warn("step %lld: non-finite loss or gradient, step skipped", (long long)step1);
	} else if (spike) {
		t->n_spikes++;
		llm_buf_adds(&ev, ", \"smoothed_loss\": ");
		llm_json_put_f64(&ev, t->smooth);
		if (t->log)
			llm_trainlog_event(t->log, step1, "spike", ev.p);
		char *dir = NULL;
		if (o->on_spike == SPIKE_ROLLBACK && llm_ckpt_resolve(t->ckpt_root, &dir) == LLM_OK) {
			for (int i = 0; i < A * W; i++)
				add_skip(t, ids[i]);
			t->n_rollbacks++;
			restore(t, dir, 0);
			llm_buf_addf(&ev, ", \"to_step\": %lld", (long long)t->step);
			if (t->log)
				llm_trainlog_event(t->log, step1, "rollback", ev.p);
			llm_warn("step %lld: loss spike %.4g (smoothed %.4g): rolled back to step %lld, "
			         "skipping its batches", (long long)step1, loss, t->smooth, (long long)t->step);
			free(dir);
			free(ids);
			llm_buf_release(&ev);
			return 1;
		}
		if (o->on_spike == SPIKE_ROLLBACK)
			llm_warn("step %lld: loss spike but no checkpoint to roll back to; step skipped",
			         (long long)step1);
		apply = o->on_spike == SPIKE_LOG;
		if (!apply)
			t->n_skipped++;
	}
	free(ids);
	llm_buf_release(&ev);
	double lr = llm_lr_at(&o->opt, t->step) * t->lr_factor, moved = 0;
	double clipf = llm_clip_factor(gnorm, o->opt.clip);
	if (apply) {
		t->adam_t++;
		float *p = llm_model_params(t->m);
		if (t->gpu && llm_cudamodel_apply(t->gpu, &o->opt, lr, t->adam_t, clipf))
			die("%s", llm_last_error());
		for (size_t i = 0; !t->gpu && i < llm_model_ntensors(t->m); i++) {
			const llm_tensor *ten = llm_model_tensor(t->m, i);
			moved += llm_adamw_update(p + ten->offset, G + ten->offset, t->am + ten->offset,
			                          t->av + ten->offset, ten->numel, clipf, lr,
			                          ten->decay ? o->opt.weight_decay : 0, &o->opt, t->adam_t);
		}
		/* Spikes stay out of the average they are measured against. */
		if (!spike) {
			t->smooth = t->smooth_n ? 0.9 * t->smooth + 0.1 * loss : loss;
			t->smooth_n++;
		}
	}
	double dt = now() - t_start;
	t->step = step1;
	t->tokens += (int64_t)B * T * A * W;
	t->last_loss = loss;
	if (t->hist)
		t->hist[t->hist_n++] = loss;
	if (!t->log)
		return 0;
	double pnorm;
	if (t->gpu ? llm_cudamodel_param_norm(t->gpu, &pnorm) != LLM_OK
	           : (pnorm = sqrt(llm_sum_squares(llm_model_params(t->m), n)), 0))
		die("%s", llm_last_error());
	double tps = (double)B * T * A * W / dt;
	llm_trainlog *lg = t->log;
	llm_trainlog_set(lg, "loss", loss);
	llm_trainlog_set(lg, "smoothed_loss", t->smooth);
	llm_trainlog_set(lg, "lr", lr);
	llm_trainlog_set(lg, "grad_norm", gnorm);
	llm_trainlog_set(lg, "clip_factor", clipf);
	llm_trainlog_set(lg, "param_norm", pnorm);
	if (!t->gpu) /* the GPU update does not measure how far it moved */
		llm_trainlog_set(lg, "update_ratio", apply && pnorm > 0 ? sqrt(moved) / pnorm : 0);
	llm_trainlog_set(lg, "loss_scale", t->gpu ? t->loss_scale_used : 1);
	llm_trainlog_set(lg, "tokens", (double)t->tokens);
	llm_trainlog_set(lg, "tokens_per_s", tps);
	llm_trainlog_set(lg, "mfu", t->flops_tok * tps / (t->peak * W));
	llm_trainlog_set(lg, "longest_seq", longest);
	llm_trainlog_set(lg, "batch_id", (double)(t->step - 1) * A * W);
	llm_trainlog_set(lg, "mem_mb", rss_mb());
	llm_trainlog_set(lg, "step_s", dt);
	llm_trainlog_set(lg, "nonfinite_steps", (double)t->n_nonfinite);
	llm_trainlog_set(lg, "spikes", (double)t->n_spikes);
	llm_trainlog_set(lg, "rollbacks", (double)t->n_rollbacks);
	if (o->layer_norms) {
		const llm_model_config *c = llm_model_get_config(t->m);
		double *tss = NULL;
		if (t->gpu) {
			tss = llm_malloc(llm_model_ntensors(t->m) * sizeof *tss);
			if (llm_cudamodel_tensor_sumsq(t->gpu, tss))
				die("%s", llm_last_error());
		}
		for (int l = 0; l < c->num_hidden_layers; l++) {
			double s = 0;
			for (size_t i = 0; i < llm_model_ntensors(t->m); i++) {
				const llm_tensor *ten = llm_model_tensor(t->m, i);
				if (ten->layer == l)
					s += tss ? tss[i] : llm_sum_squares(G + ten->offset, ten->numel);
			}
			char key[40];
			snprintf(key, sizeof key, "grad_norm_layer_%d", l);
			llm_trainlog_set(lg, key, sqrt(s));
		}
		free(tss);
	}
	return 0;
}

/* --plateau: count evaluations in a row above the best by more than delta. */
static void plateau(trainer *t, double vl)
{
	const options *o = t->o;
	if (!o->plateau_n || !isfinite(vl))
		return;
	if (!isfinite(t->plateau_best) || vl < t->plateau_best) {
		t->plateau_best = vl;
		t->plateau_rises = 0;
		return;
	}
	if (vl > t->plateau_best + o->plateau_delta && ++t->plateau_rises >= o->plateau_n) {
		t->lr_factor *= o->plateau_factor;
		t->plateau_rises = 0;
		if (t->log) {
			char m[64];
			snprintf(m, sizeof m, "\"lr_factor\": %.17g", t->lr_factor);
			llm_trainlog_event(t->log, t->step, "plateau", m);
		}
	}
}

static void write_run_files(trainer *t)
{
	const options *o = t->o;
	llm_buf b = LLM_BUF_INIT, p = LLM_BUF_INIT;
	llm_model_config_json(&t->cfg, &b);
	llm_buf_addf(&p, "%s/config.json", o->run_dir);
	if (llm_write_file(p.p, b.p, b.len) != LLM_OK)
		die("%s", llm_last_error());
	llm_buf_reset(&b);
	llm_buf_adds(&b, "{\n  \"data\": ");
	llm_json_put_str(&b, o->data, strlen(o->data));
	llm_buf_addf(&b, ",\n  \"manifest_hash\": \"%s\",\n  \"mix\": ", t->manifest_hash);
	llm_json_put_str(&b, llm_loader_mix(t->train), strlen(llm_loader_mix(t->train)));
	llm_buf_addf(&b, ",\n  \"weighted\": %s,\n  \"train_tokens\": %llu,\n  \"train_documents\": "
	                 "%llu,\n  \"parameters\": %lld,\n",
	             o->weighted ? "true" : "false", (unsigned long long)llm_loader_tokens(t->train),
	             (unsigned long long)llm_loader_docs(t->train),
	             (long long)llm_model_config_params(&t->cfg));
	llm_buf_addf(&b, "  \"steps\": %lld,\n  \"batch\": %d,\n  \"seq_len\": %d,\n  \"accum\": %d,\n"
	                 "  \"world_size\": %d,\n  \"seed\": %llu,\n",
	             (long long)o->steps, o->batch, o->seq, o->accum, dp_world,
	             (unsigned long long)o->seed);
	const llm_optim_config *c = &o->opt;
	llm_buf_addf(&b, "  \"lr\": %.17g,\n  \"min_lr\": %.17g,\n  \"warmup\": %lld,\n"
	                 "  \"decay_steps\": %lld,\n  \"beta1\": %.17g,\n  \"beta2\": %.17g,\n"
	                 "  \"eps\": %.17g,\n  \"weight_decay\": %.17g,\n  \"clip\": %.17g,\n",
	             c->lr, c->min_lr, (long long)c->warmup, (long long)c->total, c->beta1, c->beta2,
	             c->eps, c->weight_decay, c->clip);
	llm_buf_addf(&b, "  \"backend\": \"%s\",\n  \"peak_flops\": %.6g,\n  \"command\": ",
	             t->backend, t->peak);
	llm_json_put_str(&b, tool_cmdline(), strlen(tool_cmdline()));
	llm_buf_adds(&b, "\n}\n");
	llm_buf_reset(&p);
	llm_buf_addf(&p, "%s/train.json", o->run_dir);
	if (llm_write_file(p.p, b.p, b.len) != LLM_OK)
		die("%s", llm_last_error());
	/* The manifest itself: the shards' names, sizes and checksums this run trained on. */
	char *man;
	size_t len;
	llm_buf_reset(&p);
	llm_buf_addf(&p, "%s/data-manifest.json", o->run_dir);
	if (llm_read_file(t->manifest_path, &man, &len) != LLM_OK ||
	    llm_write_file(p.p, man, len) != LLM_OK)
		die("%s", llm_last_error());
	free(man);
	llm_buf_release(&b);
	llm_buf_release(&p);
}

/* The fixed validation batches, so that others (a Hugging Face model, llm-eval) can score
 * exactly what val_loss measured: one {"inputs": [...], "labels": [...]} per sequence. */
static void write_val_batches(const trainer *t)
{
	if (!t->nval)
		return;
	llm_buf b = LLM_BUF_INIT, p = LLM_BUF_INIT;
	size_t T = (size_t)t->o->seq, n = (size_t)t->nval * t->o->batch;
	for (size_t i = 0; i < n; i++) {
		for (int k = 0; k < 2; k++) {
			const int32_t *v = (k ? t->vy : t->vx) + i * T;
			llm_buf_adds(&b, k ? "], \"labels\": [" : "{\"inputs\": [");
			for (size_t j = 0; j < T; j++)
				llm_buf_addf(&b, "%s%d", j ? ", " : "", (int)v[j]);
		}
		llm_buf_adds(&b, "]}\n");
	}
	llm_buf_addf(&p, "%s/val_batches.jsonl", t->o->run_dir);
	if (llm_write_file(p.p, b.p, b.len) != LLM_OK)
		die("%s", llm_last_error());
	llm_buf_release(&b);
	llm_buf_release(&p);
}

/* --device cuda: the model moves to the GPU (one per process; NCCL between them, its id
 * passed along by MPI). t->m stays as the host copy that checkpoints read and write. */
static void gpu_open(trainer *t, const options *o)
{
	llm_cuda_options co;
	llm_cuda_options_init(&co);
	co.precision = o->precision < 0 ? LLM_PREC_BF16 : o->precision;
	co.recompute = o->recompute;
	co.zero1 = o->zero1;
	if (llm_cudamodel_new(&t->gpu, t->m, &co) != LLM_OK)
		die("%s", llm_last_error());
	if (dp_world > 1) {
		unsigned char id[LLM_NCCL_ID_BYTES] = { 0 };
		if (dp_rank == 0 && llm_cuda_nccl_id(id) != LLM_OK)
			die("%s", llm_last_error());
		if (llm_mpirt_bcast(id, sizeof id, 0) != LLM_OK)
			die("%s", llm_last_error());
		if (llm_cudamodel_dp(t->gpu, dp_rank, dp_world, id) != LLM_OK)
			die("%s", llm_last_error());
	}
	if (llm_cudamodel_set_params(t->gpu, llm_model_params(t->m)) != LLM_OK)
		die("%s", llm_last_error());
	snprintf(t->backend, sizeof t->backend, "%s, %s%s%s", llm_cudamodel_device(t->gpu, NULL),
	         llm_precision_name(co.precision), co.recompute ? ", recompute " : "",
	         co.recompute ? llm_recompute_name(co.recompute) : "");
}

static void trainer_open(trainer *t, const options *o)
{
	memset(t, 0, sizeof *t);
	t->o = o;
	t->lr_factor = 1;
	t->plateau_best = NAN;
	t->smooth = NAN;
	if (llm_loader_open(&t->train, o->data, LLM_SPLIT_TRAIN, o->mix, o->weighted, o->seed))
		die("%s", llm_last_error());
	char mpath[4096];
	struct stat sb;
	snprintf(mpath, sizeof mpath, "%s%s", o->data,
	         stat(o->data, &sb) == 0 && S_ISDIR(sb.st_mode) ? "/manifest.json" : "");
	uint64_t mh;
	if (llm_hash_file(mpath, &mh) != LLM_OK)
		die("%s", llm_last_error());
	t->manifest_path = llm_strdup(mpath);
	snprintf(t->manifest_hash, sizeof t->manifest_hash, "%016llx", (unsigned long long)mh);
	int vocab = (int)llm_loader_vocab(t->train);
	llm_buf ckpt = LLM_BUF_INIT;
	llm_buf_addf(&ckpt, "%s/ckpt", o->run_dir);
	t->ckpt_root = llm_buf_detach(&ckpt, NULL);
	char *resume_dir = NULL;
	if (o->resume) {
		if (llm_ckpt_resolve(t->ckpt_root, &resume_dir) != LLM_OK)
			die("--resume: %s", llm_last_error());
		if (llm_ckpt_read_config(resume_dir, &t->cfg) != LLM_OK)
			die("%s", llm_last_error());
	} else if (o->config) {
		char *text;
		size_t len;
		if (llm_read_file(o->config, &text, &len) != LLM_OK)
			die("%s", llm_last_error());
		if (llm_model_config_parse(&t->cfg, text, len) != LLM_OK)
			die("%s: %s", o->config, llm_last_error());
		free(text);
	} else {
		t->cfg.vocab_size = vocab;
		if (llm_model_preset(&t->cfg, o->model) != LLM_OK)
			usage_error("--model: %s", llm_last_error());
	}
	if (t->cfg.vocab_size < vocab)
		die("the model's vocabulary of %d is smaller than the shards' %d", t->cfg.vocab_size,
		    vocab);
	if (o->seq > t->cfg.max_position_embeddings)
		usage_error("--seq-len %d exceeds the model's max_position_embeddings %d", o->seq,
		            t->cfg.max_position_embeddings);
	if (llm_loader_eos(t->train) != LLM_SHARD_NO_EOS && t->cfg.eos_token_id < 0)
		t->cfg.eos_token_id = (int)llm_loader_eos(t->train);
	t->m = llm_model_new(&t->cfg);
	size_t n = llm_model_nparams(t->m);
	t->am = llm_calloc(n, sizeof *t->am);
	t->av = llm_calloc(n, sizeof *t->av);
	if (o->accum > 1)
		t->acc = llm_calloc(n, sizeof *t->acc);
	size_t bt = (size_t)o->batch * o->seq;
	t->x = llm_malloc(2 * bt * sizeof *t->x);
	t->y = t->x + bt;
	llm_model_init(t->m, o->seed);
	snprintf(t->backend, sizeof t->backend, "%s", llm_ops_backend());
	if (o->device == LLM_DEVICE_CUDA)
		gpu_open(t, o);
	for (size_t i = 0; i < o->nskip; i++)
		add_skip(t, o->skip[i]);
	if (resume_dir) {
		restore(t, resume_dir, 1);
		for (size_t i = 0; i < o->nskip; i++)
			add_skip(t, o->skip[i]);
		llm_info("resuming %s at step %lld", resume_dir, (long long)t->step);
		free(resume_dir);
	}
	if (o->eval_every > 0) {
		/* Fixed validation batches from their own stream: the same at every evaluation and
		 * in every resumed or data-parallel run. */
		int rc = llm_loader_open(&t->val, o->data, LLM_SPLIT_VAL, NULL, 0, o->seed ^ 0x76616cULL);
		if (rc == LLM_OK) {
			t->nval = o->eval_batches;
			t->vx = llm_malloc(2 * (size_t)t->nval * bt * sizeof *t->vx);
			t->vy = t->vx + (size_t)t->nval * bt;
			for (int i = 0; i < t->nval; i++)
				llm_loader_next(t->val, o->batch, o->seq, t->vx + i * bt, t->vy + i * bt);
		} else if (rc == LLM_ENOTFOUND) {
			if (dp_rank == 0)
				llm_warn("no val split in %s: evaluation is off", o->data);
		} else {
			die("%s", llm_last_error());
		}
	}
	double gpu_peak = 0;
	if (t->gpu)
		llm_cudamodel_device(t->gpu, &gpu_peak);
	t->peak = t->gpu ? (gpu_peak > 0 ? gpu_peak : NAN) : llm_ops_peak_flops();
	t->flops_tok = llm_model_flops_per_token(&t->cfg, o->seq);
	if (dp_rank == 0) {
		struct stat st;
		if (stat(o->run_dir, &st) != 0 && mkdir(o->run_dir, 0755) != 0)
			die("%s: %s", o->run_dir, strerror(errno));
		write_run_files(t);
		write_val_batches(t);
		if (llm_trainlog_open(&t->log, o->run_dir) != LLM_OK)
			die("%s", llm_last_error());
		llm_info("%s: %d layers, width %d, %d/%d heads, vocab %d: %.2fM parameters; %llu train "
		         "tokens (mix %s); %d process%s, %s, peak %.1f GFLOP/s",
		         o->config ? o->config : o->model, t->cfg.num_hidden_layers, t->cfg.hidden_size,
		         t->cfg.num_attention_heads, t->cfg.num_key_value_heads, t->cfg.vocab_size,
		         llm_model_config_params(&t->cfg) / 1e6,
		         (unsigned long long)llm_loader_tokens(t->train), llm_loader_mix(t->train),
		         dp_world, dp_world > 1 ? "es" : "", t->backend, t->peak / 1e9);
	}
}

static int trainer_close(trainer *t)
{
	int rc = llm_trainlog_close(t->log);
	if (rc)
		llm_error("%s", llm_last_error());
	llm_loader_free(t->train);
	llm_loader_free(t->val);
	llm_cudamodel_free(t->gpu);
	llm_model_free(t->m);
	free(t->am);
	free(t->av);
	free(t->acc);
	free(t->x);
	free(t->vx);
	free(t->skip);
	free(t->ckpt_root);
	free(t->manifest_path);
	free(t->hist);
	return rc ? 1 : 0;
}

static void show_progress(const trainer *t, double loss, double val, double t_begin,
                          int64_t first, int64_t tok0)
{
	const options *o = t->o;
	int tty = isatty(2);
	if (dp_rank || llm_verbosity() < 1 ||
	    (!tty && t->step % o->log_every && t->step != o->steps))
		return;
	double el = now() - t_begin, rate = (t->step - first) / (el > 0 ? el : 1e-9);
	double eta = rate > 0 ? (o->steps - t->step) / rate : 0;
	double tps = (double)(t->tokens - tok0) / (el > 0 ? el : 1e-9);
	char v[32] = "";
	if (isfinite(val))
		snprintf(v, sizeof v, " val %.4f", val);
	fprintf(stderr, "%sllm-train: step %lld/%lld loss %.4f (smoothed %.4f)%s lr %.3g | "
	                "%.0f tok/s, %.0f s, eta %.0f s%s",
	        tty ? "\r" : "", (long long)t->step, (long long)o->steps, loss, t->smooth, v,
	        llm_lr_at(&o->opt, t->step - 1) * t->lr_factor, tps, el, eta, tty ? "\033[K" : "\n");
}

/* The training loop proper; returns the exit status. */
static int trainer_run(trainer *t)
{
	const options *o = t->o;
	double t_begin = now();
	int64_t first = t->step, tok0 = t->tokens;
	while (t->step < o->steps) {
		if (train_step(t))
			continue;
		double loss = t->last_loss, val = NAN;
		if (t->nval && (t->step % o->eval_every == 0 || t->step == o->steps)) {
			val = evaluate(t);
			plateau(t, val);
			if (t->log) {
				llm_trainlog_set(t->log, "val_loss", val);
				llm_trainlog_set(t->log, "val_ppl", exp(val));
			}
		}
		if (t->log && llm_trainlog_commit(t->log, t->step, wall()) != LLM_OK)
			die("%s", llm_last_error());
		int full = (o->ckpt_every && t->step % o->ckpt_every == 0) || t->step == o->steps;
		if (full)
			save(t, 1);
		else if (o->light_every && t->step % o->light_every == 0)
			save(t, 0);
		show_progress(t, loss, val, t_begin, first, tok0);
	}
	if (dp_rank == 0 && llm_verbosity() >= 1 && isatty(2))
		fputc('\n', stderr);
	if (dp_rank == 0)
		llm_info("%lld steps, %lld tokens; %lld non-finite steps skipped, %lld spikes, "
		         "%lld rollbacks", (long long)t->step, (long long)t->tokens,
		         (long long)t->n_nonfinite, (long long)t->n_spikes, (long long)t->n_rollbacks);
	return 0;
}

/* ---- --smoke ----------------------------------------------------------------------------- */

/* Tiny synthetic shards: documents of a repeating pattern (learnable) in two domains. */
static void smoke_data(const char *dir)
{
	mkdir(dir, 0755);
	llm_manifest man;
	llm_manifest_init(&man);
	man.vocab_size = 61;
	man.width = 2;
	man.eos_id = 0;
	man.tokenizer_id = 0x736d6f6b65ULL;
	llm_rng r;
	llm_rng_seed(&r, 42);
	for (int split = 0; split < 2; split++) {
		char file[64], path[4300];
		snprintf(file, sizeof file, "%s-00000.bin", llm_split_name(split));
		snprintf(path, sizeof path, "%s/%s", dir, file);
		llm_shard_params sp = { 2, 61, 0, man.tokenizer_id, 0 };
		llm_shard_writer *w;
		if (llm_shard_writer_open(&w, path, &sp) != LLM_OK)
			die("%s", llm_last_error());
		for (int d = 0; d < (split ? 8 : 48); d++) {
			uint32_t tok[80];
			size_t n = 20 + llm_rng_below(&r, 50);
			uint32_t a = 1 + (uint32_t)llm_rng_below(&r, 60), step = 1 + (uint32_t)(d % 3);
			for (size_t i = 0; i < n; i++)
				tok[i] = 1 + (a + step * (uint32_t)i) % 60;
			llm_shard_doc_in in = { .tokens = tok, .n = n, .domain = d % 2 ? "code" : "web",
				                .weight = 1.0f, .meta = "{}", .meta_len = 2 };
			if (llm_shard_writer_add(w, &in) != LLM_OK)
				die("%s", llm_last_error());
		}
		llm_shard_info info;
		if (llm_shard_writer_close(w, &info) != LLM_OK)
			die("%s", llm_last_error());
		struct stat sb;
		if (stat(path, &sb) != 0)
			die("%s: %s", path, strerror(errno));
		llm_manifest_add_shard(&man, file, split, &info, (uint64_t)sb.st_size);
	}
	char mpath[4300];
	snprintf(mpath, sizeof mpath, "%s/manifest.json", dir);
	if (llm_manifest_write(&man, mpath) != LLM_OK)
		die("%s", llm_last_error());
	llm_manifest_release(&man);
}

static int smoke(options *o)
{
	char data[4200], cfgp[4200];
	struct stat sb;
	if (stat(o->run_dir, &sb) != 0 && mkdir(o->run_dir, 0755) != 0)
		die("%s: %s", o->run_dir, strerror(errno));
	snprintf(data, sizeof data, "%s/smoke-data", o->run_dir);
	if (dp_rank == 0)
		smoke_data(data);
	dp_barrier();
	llm_model_config c = { .vocab_size = 61, .hidden_size = 32, .intermediate_size = 64,
		               .num_hidden_layers = 2, .num_attention_heads = 4,
		               .num_key_value_heads = 2, .max_position_embeddings = 64,
		               .tie_word_embeddings = 0, .rope_theta = 10000, .rms_norm_eps = 1e-5,
		               .initializer_range = 0.02, .bos_token_id = -1, .eos_token_id = 0 };
	llm_buf b = LLM_BUF_INIT;
	llm_model_config_json(&c, &b);
	snprintf(cfgp, sizeof cfgp, "%s/smoke-config.json", o->run_dir);
	if (dp_rank == 0 && llm_write_file(cfgp, b.p, b.len) != LLM_OK)
		die("%s", llm_last_error());
	llm_buf_release(&b);
	dp_barrier();
	/* Remove an earlier smoke run's checkpoints so the first half starts fresh. */
	char ck[4300];
	snprintf(ck, sizeof ck, "%s/ckpt/latest", o->run_dir);
	if (dp_rank == 0)
		unlink(ck);
	o->data = data;
	o->config = cfgp;
	o->batch = 2;
	o->seq = 16;
	o->steps = 6;
	o->ckpt_every = 3;
	o->eval_every = 3;
	o->eval_batches = 2;
	o->opt.warmup = 2;
	o->opt.total = 6;
	o->opt.lr = 1e-2;
	o->opt.min_lr = 1e-3;
	o->log_every = 1;
	o->resume = 0;

	trainer t;
	trainer_open(&t, o);
	if (dp_rank == 0) {
		printf("load: %s, %llu train tokens; model %s\n", data,
		       (unsigned long long)llm_loader_tokens(t.train), cfgp);
		for (size_t i = 0; i < llm_model_ntensors(t.m); i++) {
			const llm_tensor *ten = llm_model_tensor(t.m, i);
			if (ten->ndim == 2)
				printf("  %-48s F32 [%lld, %lld]\n", ten->name, (long long)ten->shape[0],
				       (long long)ten->shape[1]);
			else
				printf("  %-48s F32 [%lld]\n", ten->name, (long long)ten->shape[0]);
		}
		printf("  activations: inputs/labels I32 [%d, %d], logits F32 [%d, %d]\n", o->batch,
		       o->seq, o->batch * o->seq, c.vocab_size);
		printf("all-reduce: %d process%s%s\n", dp_world, dp_world > 1 ? "es" : "",
		       llm_mpirt_active() ? " (MPI)" : "");
	}
	t.hist = llm_calloc((size_t)o->steps, sizeof *t.hist);
	trainer_run(&t);
	double first[16];
	memcpy(first, t.hist, sizeof(double) * (size_t)t.hist_n);
	int64_t n1 = t.hist_n;
	double val = t.nval ? evaluate(&t) : NAN;
	trainer_close(&t);
	/* Second life: resume from the checkpoint at step 3 and redo steps 4..6. */
	snprintf(ck, sizeof ck, "%s/ckpt/step-0000003", o->run_dir);
	char link[4300];
	snprintf(link, sizeof link, "%s/ckpt/latest", o->run_dir);
	if (dp_rank == 0) {
		unlink(link);
		if (symlink("step-0000003", link) != 0)
			die("%s: %s", link, strerror(errno));
	}
	dp_barrier();
	o->resume = 1;
	trainer_open(&t, o);
	t.hist = llm_calloc((size_t)o->steps, sizeof *t.hist);
	trainer_run(&t);
	int same = t.hist_n == 3 && n1 == 6 && memcmp(t.hist, first + 3, 3 * sizeof(double)) == 0;
	if (dp_rank == 0) {
		printf("forward/backward/optimizer: losses");
		for (int i = 0; i < n1; i++)
			printf(" %.6f", first[i]);
		printf("\neval: val loss %.6f\ncheckpoint: %s/ckpt\nresume from step 3: losses", val,
		       o->run_dir);
		for (int i = 0; i < t.hist_n; i++)
			printf(" %.6f", t.hist[i]);
		printf("\ncompare: %s\n", same ? "identical" : "DIFFERENT");
	}
	trainer_close(&t);
	if (!same)
		llm_error("smoke: the resumed run differs from the straight one");
	return same ? 0 : 1;
}

/* ---- main ---------------------------------------------------------------------------------- */

static void list_models(int vocab)
{
	printf("%-8s %6s %6s %6s %8s %6s %14s\n", "name", "layers", "width", "heads", "kv_heads",
	       "tied", "parameters");
	for (const char *p = llm_model_preset_names; *p; p += strlen(p) + 1) {
		llm_model_config c = { .vocab_size = vocab };
		llm_model_preset(&c, p);
		printf("%-8s %6d %6d %6d %8d %6s %14lld\n", p, c.num_hidden_layers, c.hidden_size,
		       c.num_attention_heads, c.num_key_value_heads, c.tie_word_embeddings ? "yes" : "no",
		       (long long)llm_model_config_params(&c));
	}
}

static void parse_skip(options *o, const char *arg)
{
	const char *s = arg;
	while (*s) {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(s, &end, 10);
		if (end == s || errno || (*end && *end != ',') || *s == '-')
			usage_error("--skip-batches: bad list '%s'", arg);
		o->skip = llm_realloc(o->skip, (o->nskip + 1) * sizeof *o->skip);
		o->skip[o->nskip++] = v;
		s = *end ? end + 1 : end;
	}
}

int main(int argc, char **argv)
{
	tool_init("llm-train");
	tool_save_cmdline(argc, argv);
	dp_init(&argc, &argv);
	struct tool_common co;
	tool_common_init(&co, usage);
	options o = { .model = "tiny", .run_dir = "run", .batch = 8, .seq = 256, .accum = 1,
		      .eval_every = 100, .eval_batches = 8, .spike_warmup = 50, .log_every = 10,
		      .ckpt_every = 100, .keep = 3, .steps = 1000, .seed = 1, .spike_k = 2.0,
		      .device = LLM_DEVICE_CPU, .precision = -1 };
	llm_optim_defaults(&o.opt);
	int list = 0, vocab = 32000, threads = 0, c;
	while ((c = getopt_long(argc, argv, TOOL_COMMON_SHORT, longopts, NULL)) != -1) {
		if (c == TOOL_OPT_THREADS) {
			threads = (int)tool_int("--threads", optarg, 1, 1024);
			continue;
		}
		if (tool_common_option(&co, c, optarg))
			continue;
		switch (c) {
		case OPT_DATA: o.data = optarg; break;
		case OPT_MODEL: o.model = optarg; break;
		case OPT_CONFIG: o.config = optarg; break;
		case OPT_MIX: o.mix = optarg; break;
		case OPT_WEIGHTED: o.weighted = 1; break;
		case OPT_SKIP: parse_skip(&o, optarg); break;
		case OPT_SEED: o.seed = (uint64_t)tool_int("--seed", optarg, 0, INT64_MAX); break;
		case OPT_STEPS: o.steps = tool_int("--steps", optarg, 1, INT64_MAX / 2); break;
		case OPT_BATCH: o.batch = (int)tool_int("--batch", optarg, 1, 1 << 16); break;
		case OPT_SEQ: o.seq = (int)tool_int("--seq-len", optarg, 1, 1 << 20); break;
		case OPT_ACCUM: o.accum = (int)tool_int("--accum", optarg, 1, 1 << 16); break;
		case OPT_LR: o.opt.lr = tool_double("--lr", optarg, 0, 10); break;
		case OPT_MIN_LR:
			o.opt.min_lr = tool_double("--min-lr", optarg, 0, 10);
			o.have_min_lr = 1;
			break;
		case OPT_WARMUP: o.opt.warmup = tool_int("--warmup", optarg, 0, INT64_MAX / 2); break;
		case OPT_DECAY:
			o.opt.total = tool_int("--decay-steps", optarg, 1, INT64_MAX / 2);
			o.have_decay = 1;
			break;
		case OPT_WD: o.opt.weight_decay = tool_double("--weight-decay", optarg, 0, 10); break;
		case OPT_BETA1: o.opt.beta1 = tool_double("--beta1", optarg, 0, 0.999999); break;
		case OPT_BETA2: o.opt.beta2 = tool_double("--beta2", optarg, 0, 0.999999); break;
		case OPT_EPS: o.opt.eps = tool_double("--eps", optarg, 0, 1); break;
		case OPT_CLIP: o.opt.clip = tool_double("--clip", optarg, 0, 1e30); break;
		case OPT_RUN_DIR: o.run_dir = optarg; break;
		case OPT_EVAL_EVERY: o.eval_every = (int)tool_int("--eval-every", optarg, 0, INT32_MAX); break;
		case OPT_EVAL_BATCHES:
			o.eval_batches = (int)tool_int("--eval-batches", optarg, 1, 1 << 16);
			break;
		case OPT_PLATEAU: {
			int used = 0;
			if (sscanf(optarg, "%d,%lf,%lf%n", &o.plateau_n, &o.plateau_delta,
			           &o.plateau_factor, &used) != 3 || optarg[used] || o.plateau_n < 1 ||
			    !(o.plateau_delta >= 0) || !(o.plateau_factor > 0 && o.plateau_factor <= 1))
				usage_error("--plateau: expected N,DELTA,FACTOR (e.g. 5,0.05,0.5), not '%s'",
				            optarg);
			break;
		}
		case OPT_ON_SPIKE: o.on_spike = tool_choice("--on-spike", optarg, "log\0skip\0rollback\0"); break;
		case OPT_SPIKE_K: o.spike_k = tool_double("--spike-factor", optarg, 1, 1e30); break;
		case OPT_SPIKE_WARMUP:
			o.spike_warmup = (int)tool_int("--spike-warmup", optarg, 0, INT32_MAX);
			break;
		case OPT_LAYER_NORMS: o.layer_norms = 1; break;
		case OPT_LOG_EVERY: o.log_every = (int)tool_int("--log-every", optarg, 1, INT32_MAX); break;
		case OPT_FAULT: {
			const char *at = strchr(optarg, '@');
			if (!at)
				usage_error("--inject-fault: expected nan@STEP or spike@STEP");
			if (strncmp(optarg, "nan@", 4) == 0)
				o.fault = FAULT_NAN;
			else if (strncmp(optarg, "spike@", 6) == 0)
				o.fault = FAULT_SPIKE;
			else
				usage_error("--inject-fault: expected nan@STEP or spike@STEP");
			o.fault_step = tool_int("--inject-fault", at + 1, 1, INT64_MAX / 2);
			break;
		}
		case OPT_CKPT_EVERY: o.ckpt_every = (int)tool_int("--ckpt-every", optarg, 0, INT32_MAX); break;
		case OPT_LIGHT_EVERY:
			o.light_every = (int)tool_int("--light-every", optarg, 0, INT32_MAX);
			break;
		case OPT_KEEP: o.keep = (int)tool_int("--keep", optarg, 0, INT32_MAX); break;
		case OPT_RESUME: o.resume = 1; break;
		case OPT_SMOKE: o.smoke = 1; break;
		case OPT_LIST: list = 1; break;
		case OPT_VOCAB: vocab = (int)tool_int("--vocab", optarg, 1, INT32_MAX); break;
		case OPT_DEVICE: o.device = tool_parsed("--device", optarg, llm_device_parse); break;
		case OPT_PRECISION: o.precision = tool_parsed("--precision", optarg, llm_precision_parse); break;
		case OPT_RECOMPUTE: o.recompute = tool_parsed("--recompute", optarg, llm_recompute_parse); break;
		case OPT_ZERO1: o.zero1 = 1; break;
		default: tool_bad_option();
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (list) {
		list_models(vocab);
		dp_finish();
		return 0;
	}
	if (!threads && getenv("OMPI_COMM_WORLD_LOCAL_SIZE")) {
		/* Processes sharing a machine share its cores; OpenBLAS would start one thread per
		 * core in each of them. */
		long cores = sysconf(_SC_NPROCESSORS_ONLN), local = atol(getenv("OMPI_COMM_WORLD_LOCAL_SIZE"));
		if (cores > 0 && local > 1)
			threads = (int)(cores / local > 1 ? cores / local : 1);
	}
	llm_ops_set_threads(threads);
	if (o.smoke) {
		int rc = smoke(&o);
		dp_finish();
		return rc;
	}
	if (!o.data)
		usage_error("--data is required");
	if (o.device == LLM_DEVICE_CPU &&
	    ((o.precision >= 0 && o.precision != LLM_PREC_FP32) || o.recompute || o.zero1))
		usage_error("--precision other than fp32, --recompute and --zero1 need --device cuda");
	if (llm_device_resolve(o.device, &o.device) != LLM_OK)
		die("%s", llm_last_error());
	if (o.device == LLM_DEVICE_CPU && o.precision >= 0 && o.precision != LLM_PREC_FP32)
		o.precision = LLM_PREC_FP32; /* --device auto without a GPU: the CPU runs fp32 */
	if (!o.have_min_lr)
		o.opt.min_lr = o.opt.lr / 10;
	if (!o.have_decay)
		o.opt.total = o.steps;
	if (o.opt.total <= o.opt.warmup)
		o.opt.total = o.opt.warmup + 1;
	trainer t;
	trainer_open(&t, &o);
	int rc = trainer_run(&t);
	rc |= trainer_close(&t);
	free(o.skip);
	dp_finish();
	return rc;
}
