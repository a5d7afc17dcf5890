/*
 * cudamodel.c — the LLaMA model on the GPU (cudamodel.h): model.c's forward and backward,
 * op for op, on the launchers of gpu.h.
 *
 * Differences from model.c, each for speed or memory on a GPU:
 * - the residual adds are folded into the output projections (cuBLASLt's beta = 1);
 * - attention keeps the log-sum-exp per row instead of the T x T probabilities;
 * - gradients of activations that feed an fp32 sum (the norm inputs) are produced in fp32
 *   directly by the products (bf16 x bf16 -> fp32), the others in the compute type;
 * - the cross-entropy writes its gradient over the logits in the forward (fused), since
 *   training always runs the backward right after.
 */
#include "cudamodel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "gpu.h"
#include "gpuplan.h"

void llm_cuda_options_init(llm_cuda_options *o)
{
	*o = (llm_cuda_options){ .device = -1,
	                         .precision = LLM_PREC_BF16,
	                         .recompute = LLM_RECOMPUTE_NONE,
	                         .bucket_elems = (size_t)8 << 20 };
}

#ifdef LLM_HAVE_CUDA

#include <cuda_runtime_api.h>

#ifdef LLM_HAVE_NCCL
#include <dlfcn.h>
#include <nccl.h>
#endif

enum { T_LN1, T_Q, T_K, T_V, T_O, T_LN2, T_GATE, T_UP, T_DOWN, T_PER_LAYER };

typedef struct {
	float *res;          /* [N, C] layer input (fp32 residual stream) */
	void *ln1;           /* [N, C] xt */
	float *rstd1;        /* [N] */
	void *q, *k, *v;     /* [N, qd], [N, kvd] xt, q and k after RoPE */
	void *atty;          /* [N, qd] attention output */
	float *lse;          /* [B, H, T] */
	float *mid;          /* [N, C] residual after attention */
	void *ln2;           /* [N, C] */
	float *rstd2;        /* [N] */
	void *gate, *up, *h; /* [N, I] */
} acts;

struct llm_cudamodel {
	llm_model_config cfg;
	llm_cuda_options o;
	int C, I, L, H, KVH, D, V, qd, kvd;
	size_t nt, n, npad; /* tensors, parameters, parameters padded for ZeRO */
	llm_tensor *t;
	llm_dtype xt, yt, *tdt; /* blocks' type, embedding/head type, per tensor */
	float *p32, *g32, *m, *v;
	unsigned char *plow; /* compute copy (xt/yt per tensor), NULL in fp32 */
	size_t lsz;          /* bytes per element of the compute copy: llm_dtype_size(xt) */
	llm_lossscale ls;
	size_t bytes_perm, bytes_acts;
	/* activations for cap_N = B x T tokens; d_pos holds positions for sequences of pos_T */
	size_t cap_N;
	int pos_T;
	void **abuf;
	size_t nabuf;
	acts *la, shared;
	float *res_final, *rstdf, *losses, *d_res, *d_ln, *delta;
	void *lnf, *logits, *d_resx, *d_attn, *dq, *dk, *dv, *dh, *dgate, *dup;
	int32_t *d_in, *d_tg, *d_pos, *d_order, *d_starts, *d_uniq;
	int32_t *h_plan;
	float *h_losses;
	double *d_norm;
	/* data parallel */
	int rank, world;
	llm_gpuplan_bucket *buckets;
	size_t nbuckets;
	llm_gpuplan_part shard;
	llm_gpuplan_piece *pieces;
	size_t npieces;
	float *gshard;
	int comm_pending, scattered;
	double grad_scale; /* the loss scale the current gradients were computed with */
	char device[128];
	double peak;
#ifdef LLM_HAVE_NCCL
	ncclComm_t comm;
	cudaStream_t cs;
	cudaEvent_t ev_compute, ev_comm;
#endif
};

#define TRY(call)                                       \
	do {                                            \
		int rc_ = (call);                       \
		if (rc_)                                \
			return llm_cuda_fail(rc_);      \
	} while (0)

/* The training entry points on a model opened for inference (no gradient memory). */
#define TRAINING(g)                                                                       \
	do {                                                                              \
		if ((g)->o.inference)                                                     \
			return llm_fail(LLM_EINVAL, "%s: the GPU model was opened for "   \
			                "inference only", __func__);                      \
	} while (0)

#ifdef LLM_HAVE_NCCL
/* NCCL is opened at run time, and only by a multi-process run: a single-GPU trainer must start
 * on a machine that has the CUDA driver and cuBLAS but no NCCL. */
static struct {
	ncclResult_t (*GetUniqueId)(ncclUniqueId *);
	ncclResult_t (*CommInitRank)(ncclComm_t *, int, ncclUniqueId, int);
	ncclResult_t (*CommDestroy)(ncclComm_t);
	ncclResult_t (*AllReduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
	                          ncclComm_t, cudaStream_t);
	ncclResult_t (*ReduceScatter)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
	                              ncclComm_t, cudaStream_t);
	ncclResult_t (*AllGather)(const void *, void *, size_t, ncclDataType_t, ncclComm_t,
	                          cudaStream_t);
	const char *(*GetErrorString)(ncclResult_t);
} nccl;

static int nccl_load(void)
{
	static int loaded;
	if (loaded)
		return LLM_OK;
	void *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		h = dlopen("libnccl.so", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return llm_fail(LLM_EUNSUPPORTED, "several GPU processes need NCCL: %s", dlerror());
#define SYM(f)                                                                                   \
	if (!(*(void **)&nccl.f = dlsym(h, "nccl" #f)))                                          \
		return llm_fail(LLM_EUNSUPPORTED, "libnccl lacks nccl%s: %s", #f, dlerror());
	SYM(GetUniqueId) SYM(CommInitRank) SYM(CommDestroy) SYM(AllReduce) SYM(ReduceScatter)
	SYM(AllGather) SYM(GetErrorString)
#undef SYM
	loaded = 1;
	return LLM_OK;
}
#endif

/* ---- tensors --------------------------------------------------------------------------- */

static size_t tidx(const llm_cudamodel *g, int layer, int which)
{
	return 1 + (size_t)layer * T_PER_LAYER + which;
}
static size_t t_norm(const llm_cudamodel *g) { return 1 + (size_t)g->L * T_PER_LAYER; }
static size_t t_head(const llm_cudamodel *g) { return g->cfg.tie_word_embeddings ? 0 : g->nt - 1; }

static float *W32(llm_cudamodel *g, size_t i) { return g->p32 + g->t[i].offset; }
static float *G32(llm_cudamodel *g, size_t i) { return g->g32 + g->t[i].offset; }
/* Element `off` of the compute copy, NULL without one. ZeRO-1 shards it by elements like the
 * masters, so every tensor's copy has the same width (checked at llm_cudamodel_new). */
static void *LOW(llm_cudamodel *g, size_t off)
{
	return g->plow ? g->plow + off * g->lsz : NULL;
}

/* The weight as the products read it: the low-precision copy, or the master in fp32. */
static void *WX(llm_cudamodel *g, size_t i)
{
	return g->plow ? LOW(g, g->t[i].offset) : (void *)W32(g, i);
}

/* Refresh the compute copy of every tensor from the masters. */
static int refresh_low(llm_cudamodel *g)
{
	if (!g->plow)
		return LLM_OK;
	for (size_t i = 0; i < g->nt; i++)
		TRY(llm_cuda_cast(g->tdt[i], LOW(g, g->t[i].offset), LLM_DT_F32, W32(g, i),
		                  g->t[i].numel));
	return LLM_OK;
}

/* ---- construction ---------------------------------------------------------------------- */

static int dmalloc(llm_cudamodel *g, void **p, size_t bytes, int perm)
{
	TRY(llm_cuda_malloc(p, bytes));
	if (perm) {
		g->bytes_perm += bytes;
	} else {
		g->abuf = llm_realloc(g->abuf, (g->nabuf + 1) * sizeof *g->abuf);
		g->abuf[g->nabuf++] = *p;
		g->bytes_acts += bytes;
	}
	return LLM_OK;
}

static int local_device(int want)
{
	if (want >= 0)
		return want;
	static const char *const vars[] = { "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID",
		                            "MPI_LOCALRANKID", "LOCAL_RANK" };
	int n = llm_cuda_device_count(), r = 0;
	for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
		if (getenv(vars[i])) {
			r = atoi(getenv(vars[i]));
			break;
		}
	return n > 0 ? r % n : 0;
}

int llm_cudamodel_new(llm_cudamodel **out, const llm_model *host, const llm_cuda_options *o)
{
	*out = NULL;
	if (llm_cuda_device_count() <= 0)
		return llm_fail(LLM_EUNSUPPORTED, "no CUDA device visible (no driver or no GPU)");
	int rc = llm_cuda_init(local_device(o->device));
	if (rc)
		return llm_cuda_fail(rc);
	const llm_model_config *c = llm_model_get_config(host);
	int D = c->hidden_size / c->num_attention_heads;
	if (D > 128)
		return llm_fail(LLM_EUNSUPPORTED, "head width %d: the GPU attention handles up to 128", D);
	llm_cuda_set_deterministic(o->deterministic);
	llm_cudamodel *g = llm_calloc(1, sizeof *g);
	int sms;
	if ((rc = llm_cuda_device_info(g->device, sizeof g->device, &sms, &g->peak))) {
		free(g);
		return llm_cuda_fail(rc);
	}
	g->cfg = *c;
	g->o = *o;
	g->C = c->hidden_size;
	g->I = c->intermediate_size;
	g->L = c->num_hidden_layers;
	g->H = c->num_attention_heads;
	g->KVH = c->num_key_value_heads;
	g->D = D;
	g->V = c->vocab_size;
	g->qd = g->H * D;
	g->kvd = g->KVH * D;
	g->nt = llm_model_ntensors(host);
	g->n = g->npad = llm_model_nparams(host);
	g->t = llm_malloc(g->nt * sizeof *g->t);
	for (size_t i = 0; i < g->nt; i++)
		g->t[i] = *llm_model_tensor(host, i);
	g->world = 1;
	switch (o->precision) {
	case LLM_PREC_FP32: g->xt = g->yt = LLM_DT_F32; break;
	case LLM_PREC_FP16: g->xt = g->yt = LLM_DT_F16; break;
	case LLM_PREC_MIXED: g->xt = LLM_DT_F16, g->yt = LLM_DT_BF16; break;
	default: g->xt = g->yt = LLM_DT_BF16; break;
	}
	g->tdt = llm_malloc(g->nt * sizeof *g->tdt);
	for (size_t i = 0; i < g->nt; i++)
		g->tdt[i] = g->t[i].layer < 0 ? g->yt : g->xt;
	g->lsz = llm_dtype_size(g->xt);
	if (llm_dtype_size(g->yt) != g->lsz) {
		llm_cudamodel_free(g);
		return llm_fail(LLM_EUNSUPPORTED, "precision %s: the ends and the blocks in types of "
		                "different widths (%s, %s)", llm_precision_name(o->precision),
		                llm_dtype_name(g->yt), llm_dtype_name(g->xt));
	}
	llm_lossscale_init(&g->ls, g->xt == LLM_DT_F16 || g->yt == LLM_DT_F16);
	g->grad_scale = g->ls.scale;
	*out = g;
	int train = !o->inference;
	if ((rc = dmalloc(g, (void **)&g->p32, g->npad * sizeof(float), 1)) ||
	    (train && (rc = dmalloc(g, (void **)&g->g32, g->npad * sizeof(float), 1))) ||
	    (train && (rc = dmalloc(g, (void **)&g->m, g->npad * sizeof(float), 1))) ||
	    (train && (rc = dmalloc(g, (void **)&g->v, g->npad * sizeof(float), 1))) ||
	    (rc = dmalloc(g, (void **)&g->d_norm, g->nt * sizeof(double), 1)) ||
	    (g->xt != LLM_DT_F32 && (rc = dmalloc(g, (void **)&g->plow, g->npad * g->lsz, 1))))
		goto fail;
	if ((rc = llm_cuda_memset(g->p32, 0, g->npad * sizeof(float))) ||
	    (train && (rc = llm_cuda_memset(g->g32, 0, g->npad * sizeof(float)))) ||
	    (train && (rc = llm_cuda_memset(g->m, 0, g->npad * sizeof(float)))) ||
	    (train && (rc = llm_cuda_memset(g->v, 0, g->npad * sizeof(float))))) {
		rc = llm_cuda_fail(rc);
		goto fail;
	}
	return LLM_OK;
fail:
	llm_cudamodel_free(g);
	*out = NULL;
	return rc;
}

static void free_acts(llm_cudamodel *g)
{
	for (size_t i = 0; i < g->nabuf; i++)
		llm_cuda_free(g->abuf[i]);
	free(g->abuf);
	g->abuf = NULL;
	g->nabuf = 0;
	g->bytes_acts = 0;
	free(g->la);
	g->la = NULL;
	free(g->h_plan);
	g->h_plan = NULL;
	free(g->h_losses);
	g->h_losses = NULL;
	g->cap_N = 0;
	g->pos_T = 0;
}

void llm_cudamodel_free(llm_cudamodel *g)
{
	if (!g)
		return;
	llm_cuda_sync();
#ifdef LLM_HAVE_NCCL
	/* All-reduces still queued on the communication stream read and write g32 (an error
	 * path can free the model in the middle of a step): they finish before it goes. The
	 * compute stream's sync above does not cover them, and whether cudaFree waits for other
	 * streams is not something to rely on. */
	if (g->world > 1)
		cudaStreamSynchronize(g->cs);
#endif
	free_acts(g);
	llm_cuda_free(g->p32);
	llm_cuda_free(g->g32);
	llm_cuda_free(g->m);
	llm_cuda_free(g->v);
	llm_cuda_free(g->plow);
	llm_cuda_free(g->d_norm);
	llm_cuda_free(g->gshard);
#ifdef LLM_HAVE_NCCL
	if (g->world > 1) {
		nccl.CommDestroy(g->comm);
		cudaEventDestroy(g->ev_compute);
		cudaEventDestroy(g->ev_comm);
		cudaStreamDestroy(g->cs);
	}
#endif
	free(g->buckets);
	free(g->pieces);
	free(g->tdt);
	free(g->t);
	free(g);
}

llm_lossscale *llm_cudamodel_lossscale(llm_cudamodel *g) { return &g->ls; }
size_t llm_cudamodel_memory(const llm_cudamodel *g) { return g->bytes_perm + g->bytes_acts; }

const char *llm_cudamodel_device(const llm_cudamodel *g, double *peak)
{
	if (peak)
		*peak = g->peak;
	return g->device;
}

/* Positions of the rows of a [B, T] batch (RoPE): row i is position i mod T. */
static int fill_pos(llm_cudamodel *g, int T)
{
	if (T == g->pos_T)
		return LLM_OK;
	int32_t *pos = llm_malloc(g->cap_N * sizeof *pos);
	for (size_t i = 0; i < g->cap_N; i++)
		pos[i] = (int32_t)(i % (size_t)T);
	int rc = llm_cuda_to_device(g->d_pos, pos, g->cap_N * sizeof *pos);
	free(pos);
	if (rc)
		return llm_cuda_fail(rc);
	g->pos_T = T;
	return LLM_OK;
}

/* Activation buffers for B x T tokens (every buffer's size depends on the product only, so a
 * batch of other proportions within the capacity reuses them); with recomputation (and for
 * inference) the recomputed ones are shared by all layers (`shared`), the kept ones per layer. */
static int ensure_acts(llm_cudamodel *g, int B, int T)
{
	size_t N = (size_t)B * T;
	if (N <= g->cap_N)
		return fill_pos(g, T);
	llm_cuda_sync();
	free_acts(g);
	size_t C = g->C, I = g->I, qd = g->qd, kvd = g->kvd;
	size_t xs = llm_dtype_size(g->xt), ys = llm_dtype_size(g->yt), lse = N * g->H;
	int rc, train = !g->o.inference;
	int rec = train ? g->o.recompute : LLM_RECOMPUTE_ALL;
	g->la = llm_calloc((size_t)g->L, sizeof *g->la);
#define A(ptr, bytes)                                                   \
	do {                                                            \
		if ((rc = dmalloc(g, (void **)&(ptr), (bytes), 0)))     \
			return rc;                                      \
	} while (0)
	for (int l = 0; l <= g->L; l++) {
		/* l == L is the shared set used by recomputation. */
		acts *a = l < g->L ? &g->la[l] : &g->shared;
		int keep_attn = l < g->L ? rec != LLM_RECOMPUTE_ALL : rec == LLM_RECOMPUTE_ALL;
		int keep_ffn = l < g->L ? rec == LLM_RECOMPUTE_NONE : rec != LLM_RECOMPUTE_NONE;
		if (l < g->L)
			A(a->res, N * C * 4);
		if (keep_attn) {
			A(a->ln1, N * C * xs);
			A(a->rstd1, N * 4);
			A(a->q, N * qd * xs);
			A(a->k, N * kvd * xs);
			A(a->v, N * kvd * xs);
			A(a->atty, N * qd * xs);
			A(a->lse, lse * 4);
			A(a->mid, N * C * 4);
			A(a->ln2, N * C * xs);
			A(a->rstd2, N * 4);
		}
		if (keep_ffn) {
			A(a->gate, N * I * xs);
			A(a->up, N * I * xs);
			A(a->h, N * I * xs);
		}
	}
	for (int l = 0; l < g->L; l++) {
		acts *a = &g->la[l], *s = &g->shared;
		if (rec == LLM_RECOMPUTE_ALL) {
			float *res = a->res;
			*a = *s;
			a->res = res;
		} else if (rec == LLM_RECOMPUTE_FFN) {
			a->gate = s->gate;
			a->up = s->up;
			a->h = s->h;
		}
	}
	size_t big = N * (qd > I ? qd : I);
	A(g->res_final, N * C * 4);
	A(g->rstdf, N * 4);
	A(g->losses, N * 4);
	A(g->lnf, N * C * ys);
	A(g->logits, N * (size_t)g->V * ys);
	A(g->d_in, N * 4);
	A(g->d_tg, N * 4);
	A(g->d_pos, N * 4);
	if (train) {
		A(g->d_res, N * C * 4);
		A(g->d_ln, N * C * 4);
		A(g->delta, lse * 4);
		A(g->d_resx, N * C * xs);
		A(g->d_attn, N * qd * xs);
		A(g->dq, N * qd * xs);
		A(g->dk, N * kvd * xs);
		A(g->dv, N * kvd * xs);
		A(g->dh, big * xs);
		A(g->dgate, big * xs);
		A(g->dup, big * xs);
		A(g->d_order, N * 4);
		A(g->d_starts, (N + 1) * 4);
		A(g->d_uniq, N * 4);
		g->h_plan = llm_malloc((3 * N + 1) * sizeof *g->h_plan);
	}
#undef A
	g->h_losses = llm_malloc(N * sizeof *g->h_losses);
	g->cap_N = N;
	return fill_pos(g, T);
}

/* ---- data parallel --------------------------------------------------------------------- */

int llm_cuda_nccl_id(void *id)
{
#ifdef LLM_HAVE_NCCL
	ncclUniqueId u;
	int rc = nccl_load();
	if (rc)
		return rc;
	ncclResult_t r = nccl.GetUniqueId(&u);
	if (r != ncclSuccess)
		return llm_fail(LLM_EINTERNAL, "ncclGetUniqueId: %s", nccl.GetErrorString(r));
	memcpy(id, &u, sizeof u < LLM_NCCL_ID_BYTES ? sizeof u : LLM_NCCL_ID_BYTES);
	return LLM_OK;
#else
	(void)id;
	return llm_fail(LLM_EUNSUPPORTED, "built without NCCL: one GPU per run");
#endif
}

#ifdef LLM_HAVE_NCCL
#define NCCL_TRY(call)                                                                          \
	do {                                                                                    \
		ncclResult_t r_ = (call);                                                       \
		if (r_ != ncclSuccess)                                                          \
			return llm_fail(LLM_EINTERNAL, "%s: %s", #call, nccl.GetErrorString(r_)); \
	} while (0)
#define CUDA_RT(call)                                                                           \
	do {                                                                                    \
		cudaError_t e_ = (call);                                                        \
		if (e_ != cudaSuccess)                                                          \
			return llm_fail(LLM_EINTERNAL, "%s: %s", #call, cudaGetErrorString(e_)); \
	} while (0)

/* Tensor table as the planners take it: offsets, sizes, backward completion points. */
static void plan_arrays(const llm_cudamodel *g, size_t *off, size_t *num, int *ready)
{
	for (size_t i = 0; i < g->nt; i++) {
		const llm_tensor *t = &g->t[i];
		off[i] = t->offset;
		num[i] = t->numel;
		/* The backward finishes the head and final norm (point 0), then layers L-1 .. 0
		 * (points 1 .. L), then the embedding (L + 1; tied, it also takes the head's). */
		ready[i] = t->layer >= 0 ? g->L - t->layer : i == 0 ? g->L + 1 : 0;
	}
}
#endif

int llm_cudamodel_dp(llm_cudamodel *g, int rank, int world, const void *id)
{
	TRAINING(g);
	if (world <= 1)
		return LLM_OK;
#ifdef LLM_HAVE_NCCL
	ncclUniqueId u;
	memcpy(&u, id, sizeof u);
	int rc0 = nccl_load();
	if (rc0)
		return rc0;
	NCCL_TRY(nccl.CommInitRank(&g->comm, world, u, rank));
	CUDA_RT(cudaStreamCreateWithFlags(&g->cs, cudaStreamNonBlocking));
	CUDA_RT(cudaEventCreateWithFlags(&g->ev_compute, cudaEventDisableTiming));
	CUDA_RT(cudaEventCreateWithFlags(&g->ev_comm, cudaEventDisableTiming));
	g->rank = rank;
	g->world = world;
	size_t *off = llm_malloc(g->nt * sizeof *off), *num = llm_malloc(g->nt * sizeof *num);
	int *ready = llm_malloc(g->nt * sizeof *ready);
	plan_arrays(g, off, num, ready);
	g->buckets = llm_malloc(g->nt * sizeof *g->buckets);
	g->nbuckets = llm_gpuplan_buckets(off, num, ready, g->nt, g->o.bucket_elems, g->buckets);
	int rc = LLM_OK;
	if (g->o.zero1) {
		/* Reallocate the flat arrays padded to equal shards; moments only for our shard. */
		llm_gpuplan_zero(g->n, world, rank, 64, &g->shard);
		g->pieces = llm_malloc(g->nt * sizeof *g->pieces);
		g->npieces = llm_gpuplan_pieces(off, num, g->nt, &g->shard, g->pieces);
		g->npad = g->shard.padded;
		float *old[3] = { g->p32, g->g32, g->m };
		llm_cuda_sync();
		for (int i = 0; i < 3; i++)
			llm_cuda_free(old[i]);
		llm_cuda_free(g->v);
		llm_cuda_free(g->plow);
		g->p32 = g->g32 = g->m = g->v = NULL;
		g->plow = NULL;
		/* What stays: the norm accumulators; the rest is counted again as it comes. */
		g->bytes_perm = g->nt * sizeof(double);
		size_t pr = g->shard.per_rank * sizeof(float);
		if ((rc = dmalloc(g, (void **)&g->p32, g->npad * sizeof(float), 1)) ||
		    (rc = dmalloc(g, (void **)&g->g32, g->npad * sizeof(float), 1)) ||
		    (rc = dmalloc(g, (void **)&g->m, pr, 1)) || (rc = dmalloc(g, (void **)&g->v, pr, 1)) ||
		    (rc = dmalloc(g, (void **)&g->gshard, pr, 1)) ||
		    (g->xt != LLM_DT_F32 && (rc = dmalloc(g, (void **)&g->plow, g->npad * g->lsz, 1))))
			goto out;
		if ((rc = llm_cuda_memset(g->p32, 0, g->npad * sizeof(float))) ||
		    (rc = llm_cuda_memset(g->g32, 0, g->npad * sizeof(float))) ||
		    (rc = llm_cuda_memset(g->m, 0, pr)) || (rc = llm_cuda_memset(g->v, 0, pr)) ||
		    (g->plow && (rc = llm_cuda_memset(g->plow, 0, g->npad * g->lsz)))) {
			rc = llm_cuda_fail(rc);
			goto out;
		}
	}
out:
	free(off);
	free(num);
	free(ready);
	return rc;
#else
	(void)rank;
	(void)id;
	return llm_fail(LLM_EUNSUPPORTED, "built without NCCL: one GPU per run");
#endif
}

/* Launch the all-reduce of every bucket that became final at backward point `point`, on the
 * communication stream, after the compute stream's work so far. */
static int dp_point(llm_cudamodel *g, int point)
{
#ifdef LLM_HAVE_NCCL
	if (g->world <= 1 || g->o.zero1)
		return LLM_OK;
	int any = 0;
	for (size_t i = 0; i < g->nbuckets; i++) {
		const llm_gpuplan_bucket *b = &g->buckets[i];
		if (b->ready != point)
			continue;
		if (!any) {
			CUDA_RT(cudaEventRecord(g->ev_compute, (cudaStream_t)llm_cuda_stream()));
			CUDA_RT(cudaStreamWaitEvent(g->cs, g->ev_compute, 0));
			any = 1;
		}
		NCCL_TRY(nccl.AllReduce(g->g32 + b->start, g->g32 + b->start, b->len, ncclFloat, ncclSum,
		                       g->comm, g->cs));
		g->comm_pending = 1;
	}
#else
	(void)g;
	(void)point;
#endif
	return LLM_OK;
}

/* The compute stream waits for the communication launched so far. */
static int dp_join(llm_cudamodel *g)
{
#ifdef LLM_HAVE_NCCL
	if (!g->comm_pending)
		return LLM_OK;
	CUDA_RT(cudaEventRecord(g->ev_comm, g->cs));
	CUDA_RT(cudaStreamWaitEvent((cudaStream_t)llm_cuda_stream(), g->ev_comm, 0));
	g->comm_pending = 0;
#else
	(void)g;
#endif
	return LLM_OK;
}

/* ---- host <-> device ------------------------------------------------------------------- */

int llm_cudamodel_set_params(llm_cudamodel *g, const float *p)
{
	TRY(llm_cuda_to_device(g->p32, p, g->n * sizeof *p));
	return refresh_low(g);
}

int llm_cudamodel_get_params(llm_cudamodel *g, float *p)
{
	TRY(llm_cuda_to_host(p, g->p32, g->n * sizeof *p));
	return LLM_OK;
}

int llm_cudamodel_set_optim(llm_cudamodel *g, const float *m, const float *v)
{
	TRAINING(g);
	size_t from = g->o.zero1 && g->world > 1 ? g->shard.start : 0;
	size_t len = g->o.zero1 && g->world > 1 ? g->shard.len : g->n;
	TRY(llm_cuda_to_device(g->m, m + from, len * sizeof *m));
	TRY(llm_cuda_to_device(g->v, v + from, len * sizeof *v));
	return LLM_OK;
}

int llm_cudamodel_get_optim(llm_cudamodel *g, float *m, float *v)
{
	TRAINING(g);
	if (!(g->o.zero1 && g->world > 1)) {
		TRY(llm_cuda_to_host(m, g->m, g->n * sizeof *m));
		TRY(llm_cuda_to_host(v, g->v, g->n * sizeof *v));
		return LLM_OK;
	}
#ifdef LLM_HAVE_NCCL
	/* Gather the shards through the gradient buffer (free between steps). */
	float *src[2] = { g->m, g->v }, *dst[2] = { m, v };
	for (int i = 0; i < 2; i++) {
		NCCL_TRY(nccl.AllGather(src[i], g->g32, g->shard.per_rank, ncclFloat, g->comm,
		                       (cudaStream_t)llm_cuda_stream()));
		TRY(llm_cuda_to_host(dst[i], g->g32, g->n * sizeof(float)));
	}
	TRY(llm_cuda_memset(g->g32, 0, g->npad * sizeof(float)));
	return LLM_OK;
#else
	return llm_fail(LLM_EINTERNAL, "ZeRO-1 state without NCCL");
#endif
}

int llm_cudamodel_get_grads(llm_cudamodel *g, float *grads)
{
	TRAINING(g);
	TRY(dp_join(g));
	TRY(llm_cuda_to_host(grads, g->g32, g->n * sizeof *grads));
	return LLM_OK;
}

int llm_cudamodel_zero_grad(llm_cudamodel *g)
{
	TRAINING(g);
	TRY(dp_join(g));
	TRY(llm_cuda_memset(g->g32, 0, g->npad * sizeof(float)));
	g->scattered = 0;
	g->grad_scale = g->ls.scale;
	return LLM_OK;
}

/* ---- forward and backward -------------------------------------------------------------- */

/* One decoder layer forward; the output (the next layer's input) is written when out is
 * not NULL (a recomputation only needs the inside). */
static int layer_fwd(llm_cudamodel *g, int l, acts *a, float *out, int B, int T, int ffn)
{
	int N = B * T, C = g->C, I = g->I, qd = g->qd, kvd = g->kvd;
	llm_dtype x = g->xt;
	float eps = (float)g->cfg.rms_norm_eps, theta = (float)g->cfg.rope_theta;
	if (!ffn) {
		TRY(llm_cuda_rmsnorm_fwd(x, a->ln1, a->rstd1, a->res, W32(g, tidx(g, l, T_LN1)), N, C, eps));
		TRY(llm_cuda_matmul_fwd(x, x, a->q, 0, a->ln1, WX(g, tidx(g, l, T_Q)), N, C, qd));
		TRY(llm_cuda_matmul_fwd(x, x, a->k, 0, a->ln1, WX(g, tidx(g, l, T_K)), N, C, kvd));
		TRY(llm_cuda_matmul_fwd(x, x, a->v, 0, a->ln1, WX(g, tidx(g, l, T_V)), N, C, kvd));
		TRY(llm_cuda_rope_fwd(x, a->q, a->q, g->d_pos, N, g->H, g->D, theta));
		TRY(llm_cuda_rope_fwd(x, a->k, a->k, g->d_pos, N, g->KVH, g->D, theta));
		TRY(llm_cuda_attention_fwd(x, a->atty, a->lse, a->q, a->k, a->v, B, T, T, g->H, g->KVH,
		                           g->D));
		/* mid = res + o_proj(atty): the residual add is the product's beta. */
		TRY(llm_cuda_gemm(0, 1, N, C, qd, 1, x, a->atty, qd, WX(g, tidx(g, l, T_O)), qd, 1,
		                  LLM_DT_F32, a->res, C, a->mid, C));
		TRY(llm_cuda_rmsnorm_fwd(x, a->ln2, a->rstd2, a->mid, W32(g, tidx(g, l, T_LN2)), N, C, eps));
	}
	TRY(llm_cuda_matmul_fwd(x, x, a->gate, 0, a->ln2, WX(g, tidx(g, l, T_GATE)), N, C, I));
	TRY(llm_cuda_matmul_fwd(x, x, a->up, 0, a->ln2, WX(g, tidx(g, l, T_UP)), N, C, I));
	TRY(llm_cuda_swiglu_fwd(x, a->h, a->gate, a->up, (size_t)N * I));
	if (out)
		TRY(llm_cuda_gemm(0, 1, N, C, I, 1, x, a->h, I, WX(g, tidx(g, l, T_DOWN)), I, 1,
		                  LLM_DT_F32, a->mid, C, out, C));
	return LLM_OK;
}

/* One decoder layer backward: g->d_res holds d(output) and becomes d(input). */
static int layer_bwd(llm_cudamodel *g, int l, acts *a, int B, int T)
{
	int N = B * T, C = g->C, I = g->I, qd = g->qd, kvd = g->kvd;
	size_t NC = (size_t)N * C;
	llm_dtype x = g->xt, f = LLM_DT_F32;
	float theta = (float)g->cfg.rope_theta;
	if (g->o.recompute == LLM_RECOMPUTE_ALL)
		TRY(layer_fwd(g, l, a, NULL, B, T, 0));
	else if (g->o.recompute == LLM_RECOMPUTE_FFN)
		TRY(layer_fwd(g, l, a, NULL, B, T, 1));
	/* out = mid + down(h): d_res reaches mid unchanged, plus the MLP branch. */
	TRY(llm_cuda_cast(x, g->d_resx, f, g->d_res, NC));
	TRY(llm_cuda_matmul_bwd(x, x, g->dh, 0, G32(g, tidx(g, l, T_DOWN)), g->d_resx, a->h,
	                        WX(g, tidx(g, l, T_DOWN)), N, I, C));
	TRY(llm_cuda_swiglu_bwd(x, g->dgate, g->dup, g->dh, a->gate, a->up, (size_t)N * I));
	TRY(llm_cuda_matmul_bwd(x, f, g->d_ln, 0, G32(g, tidx(g, l, T_GATE)), g->dgate, a->ln2,
	                        WX(g, tidx(g, l, T_GATE)), N, C, I));
	TRY(llm_cuda_matmul_bwd(x, f, g->d_ln, 1, G32(g, tidx(g, l, T_UP)), g->dup, a->ln2,
	                        WX(g, tidx(g, l, T_UP)), N, C, I));
	TRY(llm_cuda_rmsnorm_bwd(g->d_res, G32(g, tidx(g, l, T_LN2)), g->d_ln, a->mid,
	                         W32(g, tidx(g, l, T_LN2)), a->rstd2, N, C));
	/* mid = res + o_proj(attention): the same pattern. */
	TRY(llm_cuda_cast(x, g->d_resx, f, g->d_res, NC));
	TRY(llm_cuda_matmul_bwd(x, x, g->d_attn, 0, G32(g, tidx(g, l, T_O)), g->d_resx, a->atty,
	                        WX(g, tidx(g, l, T_O)), N, qd, C));
	TRY(llm_cuda_attention_bwd(x, g->dq, g->dk, g->dv, g->delta, g->d_attn, a->atty, a->q, a->k,
	                           a->v, a->lse, B, T, T, g->H, g->KVH, g->D));
	TRY(llm_cuda_rope_bwd(x, g->dq, g->dq, g->d_pos, N, g->H, g->D, theta));
	TRY(llm_cuda_rope_bwd(x, g->dk, g->dk, g->d_pos, N, g->KVH, g->D, theta));
	TRY(llm_cuda_matmul_bwd(x, f, g->d_ln, 0, G32(g, tidx(g, l, T_Q)), g->dq, a->ln1,
	                        WX(g, tidx(g, l, T_Q)), N, C, qd));
	TRY(llm_cuda_matmul_bwd(x, f, g->d_ln, 1, G32(g, tidx(g, l, T_K)), g->dk, a->ln1,
	                        WX(g, tidx(g, l, T_K)), N, C, kvd));
	TRY(llm_cuda_matmul_bwd(x, f, g->d_ln, 1, G32(g, tidx(g, l, T_V)), g->dv, a->ln1,
	                        WX(g, tidx(g, l, T_V)), N, C, kvd));
	TRY(llm_cuda_rmsnorm_bwd(g->d_res, G32(g, tidx(g, l, T_LN1)), g->d_ln, a->res,
	                         W32(g, tidx(g, l, T_LN1)), a->rstd1, N, C));
	return LLM_OK;
}

static int check_tokens(const llm_cudamodel *g, const int32_t *tok, size_t n, int allow_neg,
                        const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (tok[i] >= g->V || (tok[i] < 0 && !allow_neg))
			return llm_fail(LLM_EINVAL, "%s token %d at position %zu is outside the vocabulary "
			                "of %d", what, (int)tok[i], i, g->V);
	return LLM_OK;
}

/* Forward through the loss; with dloss != 0 the logits become their gradient (times dloss).
 * per_token (may be NULL) receives each position's loss. */
static int forward(llm_cudamodel *g, const int32_t *inputs, const int32_t *targets, int B, int T,
                   float dloss, double *loss, int64_t *count, float *per_token)
{
	if (B <= 0 || T <= 0 || T > g->cfg.max_position_embeddings)
		return llm_fail(LLM_EINVAL, "sequence length %d outside 1..%d", T,
		                g->cfg.max_position_embeddings);
	size_t N = (size_t)B * T;
	int rc;
	if ((rc = check_tokens(g, inputs, N, 0, "input")) ||
	    (rc = check_tokens(g, targets, N, 1, "target")) || (rc = ensure_acts(g, B, T)))
		return rc;
	TRY(llm_cuda_to_device(g->d_in, inputs, N * sizeof *inputs));
	TRY(llm_cuda_to_device(g->d_tg, targets, N * sizeof *targets));
	TRY(llm_cuda_embedding_fwd(g->la[0].res, g->d_in, g->p32, (int)N, g->C));
	for (int l = 0; l < g->L; l++)
		if ((rc = layer_fwd(g, l, &g->la[l], l + 1 < g->L ? g->la[l + 1].res : g->res_final, B, T,
		                    0)))
			return rc;
	TRY(llm_cuda_rmsnorm_fwd(g->yt, g->lnf, g->rstdf, g->res_final, W32(g, t_norm(g)), (int)N,
	                         g->C, (float)g->cfg.rms_norm_eps));
	TRY(llm_cuda_matmul_fwd(g->yt, g->yt, g->logits, 0, g->lnf, WX(g, t_head(g)), (int)N, g->C,
	                        g->V));
	TRY(llm_cuda_xent(g->yt, g->losses, dloss != 0 ? g->logits : NULL, g->logits, g->d_tg, NULL,
	                  dloss, (int)N, g->V));
	TRY(llm_cuda_to_host(g->h_losses, g->losses, N * sizeof *g->h_losses));
	double sum = 0;
	int64_t cnt = 0;
	for (size_t n = 0; n < N; n++) {
		if (targets[n] >= 0) {
			sum += g->h_losses[n];
			cnt++;
		}
		if (per_token)
			per_token[n] = targets[n] >= 0 ? g->h_losses[n] : 0;
	}
	if (loss)
		*loss = cnt ? sum / cnt : 0;
	if (count)
		*count = cnt;
	return LLM_OK;
}

int llm_cudamodel_eval(llm_cudamodel *g, const int32_t *inputs, const int32_t *targets, int B,
                       int T, double *loss, int64_t *count)
{
	return forward(g, inputs, targets, B, T, 0, loss, count, NULL);
}

int llm_cudamodel_token_losses(llm_cudamodel *g, const int32_t *inputs, const int32_t *targets,
                               int B, int T, float *losses)
{
	return forward(g, inputs, targets, B, T, 0, NULL, NULL, losses);
}

int llm_cudamodel_token_loss_fn(void *g, const int32_t *inputs, const int32_t *targets, int B,
                                int T, float *losses)
{
	return llm_cudamodel_token_losses(g, inputs, targets, B, T, losses);
}

int llm_cudamodel_train_micro(llm_cudamodel *g, const int32_t *inputs, const int32_t *targets,
                              int B, int T, float scale, int last, double *loss, int64_t *count)
{
	TRAINING(g);
	float dloss = (float)(scale * g->ls.scale);
	g->grad_scale = g->ls.scale;
	if (!(dloss != 0))
		return llm_fail(LLM_EINVAL, "gradient scale %g", (double)scale);
	/* The previous step's all-reduce reads the gradients this backward adds to. */
	int rc = dp_join(g);
	if (rc || (rc = forward(g, inputs, targets, B, T, dloss, loss, count, NULL)))
		return rc;
	int N = B * T, C = g->C;
	TRY(llm_cuda_matmul_bwd(g->yt, LLM_DT_F32, g->d_ln, 0, G32(g, t_head(g)), g->logits, g->lnf,
	                        WX(g, t_head(g)), N, C, g->V));
	TRY(llm_cuda_memset(g->d_res, 0, (size_t)N * C * sizeof(float)));
	TRY(llm_cuda_rmsnorm_bwd(g->d_res, G32(g, t_norm(g)), g->d_ln, g->res_final,
	                         W32(g, t_norm(g)), g->rstdf, N, C));
	if (last && (rc = dp_point(g, 0)))
		return rc;
	for (int l = g->L - 1; l >= 0; l--) {
		if ((rc = layer_bwd(g, l, &g->la[l], B, T)))
			return rc;
		if (last && (rc = dp_point(g, g->L - l)))
			return rc;
	}
	int32_t *order = g->h_plan, *starts = order + N, *uniq = starts + N + 1;
	int U = llm_gpuplan_embed(inputs, N, g->V, order, starts, uniq);
	TRY(llm_cuda_to_device(g->d_order, order, (size_t)N * sizeof *order));
	TRY(llm_cuda_to_device(g->d_starts, starts, (size_t)(U + 1) * sizeof *starts));
	TRY(llm_cuda_to_device(g->d_uniq, uniq, (size_t)U * sizeof *uniq));
	TRY(llm_cuda_embedding_bwd(g->g32, g->d_res, g->d_order, g->d_starts, g->d_uniq, U, C));
	if (last && (rc = dp_point(g, g->L + 1)))
		return rc;
	return LLM_OK;
}

/* ---- optimizer step -------------------------------------------------------------------- */

/* All ranks' gradients in place for the update: the overlapped all-reduce joined, or with
 * ZeRO-1 the reduce-scatter done (once per step). *grad, *base and *len describe this rank's
 * view: the whole flat array, or its shard. */
static int finish_grads(llm_cudamodel *g, float **grad, size_t *base, size_t *len)
{
	TRAINING(g);
	int zero = g->o.zero1 && g->world > 1;
	TRY(dp_join(g));
	*grad = g->g32;
	*base = 0;
	*len = g->n;
	if (!zero)
		return LLM_OK;
#ifdef LLM_HAVE_NCCL
	if (!g->scattered) {
		NCCL_TRY(nccl.ReduceScatter(g->g32, g->gshard, g->shard.per_rank, ncclFloat, ncclSum,
		                           g->comm, (cudaStream_t)llm_cuda_stream()));
		g->scattered = 1;
	}
#endif
	*grad = g->gshard;
	*base = g->shard.start;
	*len = g->shard.len;
	return LLM_OK;
}

/* Sum the k device doubles over the ranks that each hold a part (ZeRO-1), then fetch them. */
static int fetch_sums(llm_cudamodel *g, double *host, size_t k)
{
#ifdef LLM_HAVE_NCCL
	if (g->o.zero1 && g->world > 1)
		NCCL_TRY(nccl.AllReduce(g->d_norm, g->d_norm, k, ncclDouble, ncclSum, g->comm,
		                       (cudaStream_t)llm_cuda_stream()));
#endif
	TRY(llm_cuda_to_host(host, g->d_norm, k * sizeof *host));
	return LLM_OK;
}

int llm_cudamodel_grad_norm(llm_cudamodel *g, double *norm, int *finite)
{
	float *grad;
	size_t base, len;
	double ss;
	int rc = finish_grads(g, &grad, &base, &len);
	if (rc)
		return rc;
	TRY(llm_cuda_memset(g->d_norm, 0, sizeof(double)));
	TRY(llm_cuda_sum_squares(g->d_norm, grad, len));
	if ((rc = fetch_sums(g, &ss, 1)))
		return rc;
	*finite = isfinite(ss);
	*norm = sqrt(ss) / g->grad_scale;
	llm_lossscale_update(&g->ls, !*finite);
	return LLM_OK;
}

int llm_cudamodel_tensor_sumsq(llm_cudamodel *g, double *ss)
{
	float *grad;
	size_t base, len;
	int rc = finish_grads(g, &grad, &base, &len);
	if (rc)
		return rc;
	TRY(llm_cuda_memset(g->d_norm, 0, g->nt * sizeof(double)));
	if (g->o.zero1 && g->world > 1) {
		for (size_t i = 0; i < g->npieces; i++) {
			const llm_gpuplan_piece *p = &g->pieces[i];
			TRY(llm_cuda_sum_squares(g->d_norm + p->tensor, grad + (p->offset - base), p->numel));
		}
	} else {
		for (size_t i = 0; i < g->nt; i++)
			TRY(llm_cuda_sum_squares(g->d_norm + i, G32(g, i), g->t[i].numel));
	}
	if ((rc = fetch_sums(g, ss, g->nt)))
		return rc;
	for (size_t i = 0; i < g->nt; i++)
		ss[i] /= g->grad_scale * g->grad_scale;
	return LLM_OK;
}

int llm_cudamodel_param_norm(llm_cudamodel *g, double *norm)
{
	double ss;
	TRY(llm_cuda_memset(g->d_norm, 0, sizeof(double)));
	TRY(llm_cuda_sum_squares(g->d_norm, g->p32, g->n));
	TRY(llm_cuda_to_host(&ss, g->d_norm, sizeof ss));
	*norm = sqrt(ss);
	return LLM_OK;
}

int llm_cudamodel_apply(llm_cudamodel *g, const llm_optim_config *c, double lr, int64_t t,
                        double clip_factor)
{
	float *grad;
	size_t base, len;
	int rc = finish_grads(g, &grad, &base, &len);
	if (rc)
		return rc;
	float gscale = (float)(clip_factor / g->grad_scale);
	if (!(g->o.zero1 && g->world > 1)) {
		for (size_t i = 0; i < g->nt; i++) {
			const llm_tensor *ten = &g->t[i];
			TRY(llm_cuda_adamw(W32(g, i), g->tdt[i], LOW(g, ten->offset),
			                   G32(g, i), g->m + ten->offset, g->v + ten->offset, ten->numel,
			                   gscale, lr, ten->decay ? c->weight_decay : 0, c->beta1, c->beta2,
			                   c->eps, t));
		}
		return LLM_OK;
	}
	for (size_t i = 0; i < g->npieces; i++) {
		const llm_gpuplan_piece *p = &g->pieces[i];
		const llm_tensor *ten = &g->t[p->tensor];
		size_t o = p->offset - base;
		TRY(llm_cuda_adamw(g->p32 + p->offset, g->tdt[p->tensor],
		                   LOW(g, p->offset), grad + o, g->m + o, g->v + o,
		                   p->numel, gscale, lr, ten->decay ? c->weight_decay : 0, c->beta1,
		                   c->beta2, c->eps, t));
	}
#ifdef LLM_HAVE_NCCL
	cudaStream_t s = (cudaStream_t)llm_cuda_stream();
	size_t pr = g->shard.per_rank;
	NCCL_TRY(nccl.AllGather(g->p32 + g->shard.start, g->p32, pr, ncclFloat, g->comm, s));
	if (g->plow)
		NCCL_TRY(nccl.AllGather(LOW(g, g->shard.start), g->plow, pr * g->lsz, ncclChar, g->comm,
		                       s));
#endif
	return LLM_OK;
}

int llm_cudamodel_step(llm_cudamodel *g, const llm_optim_config *c, double lr, int64_t t,
                       llm_cuda_stepinfo *info)
{
	int finite, rc;
	info->loss_scale = g->grad_scale;
	if ((rc = llm_cudamodel_grad_norm(g, &info->grad_norm, &finite)))
		return rc;
	info->applied = finite;
	info->clip_factor = finite ? llm_clip_factor(info->grad_norm, c->clip) : 1.0;
	return finite ? llm_cudamodel_apply(g, c, lr, t, info->clip_factor) : LLM_OK;
}

#else /* !LLM_HAVE_CUDA: every entry point says so; the options still work for parsing. */

struct llm_cudamodel {
	llm_lossscale ls;
};

static int no_cuda(void)
{
	return llm_fail(LLM_EUNSUPPORTED, "built without CUDA (nvcc was not found; rebuild with "
	                "CUDA=1)");
}

int llm_cudamodel_new(llm_cudamodel **out, const llm_model *host, const llm_cuda_options *o)
{
	*out = NULL;
	return no_cuda();
}
void llm_cudamodel_free(llm_cudamodel *g) { free(g); }
int llm_cuda_nccl_id(void *id) { return no_cuda(); }
int llm_cudamodel_dp(llm_cudamodel *g, int rank, int world, const void *id) { return no_cuda(); }
int llm_cudamodel_set_params(llm_cudamodel *g, const float *p) { return no_cuda(); }
int llm_cudamodel_get_params(llm_cudamodel *g, float *p) { return no_cuda(); }
int llm_cudamodel_set_optim(llm_cudamodel *g, const float *m, const float *v) { return no_cuda(); }
int llm_cudamodel_get_optim(llm_cudamodel *g, float *m, float *v) { return no_cuda(); }
int llm_cudamodel_get_grads(llm_cudamodel *g, float *grads) { return no_cuda(); }
int llm_cudamodel_zero_grad(llm_cudamodel *g) { return no_cuda(); }
int llm_cudamodel_train_micro(llm_cudamodel *g, const int32_t *inputs, const int32_t *targets,
                              int B, int T, float scale, int last, double *loss, int64_t *count)
{
	return no_cuda();
}
int llm_cudamodel_eval(llm_cudamodel *g, const int32_t *inputs, const int32_t *targets, int B,
                       int T, double *loss, int64_t *count)
{
	return no_cuda();
}
int llm_cudamodel_token_losses(llm_cudamodel *g, const int32_t *inputs, const int32_t *targets,
                               int B, int T, float *losses)
{
	return no_cuda();
}
int llm_cudamodel_token_loss_fn(void *g, const int32_t *inputs, const int32_t *targets, int B,
                                int T, float *losses)
{
	return no_cuda();
}
int llm_cudamodel_step(llm_cudamodel *g, const llm_optim_config *c, double lr, int64_t t,
                       llm_cuda_stepinfo *info)
{
	return no_cuda();
}
int llm_cudamodel_grad_norm(llm_cudamodel *g, double *norm, int *finite) { return no_cuda(); }
int llm_cudamodel_tensor_sumsq(llm_cudamodel *g, double *ss) { return no_cuda(); }
int llm_cudamodel_param_norm(llm_cudamodel *g, double *norm) { return no_cuda(); }
int llm_cudamodel_apply(llm_cudamodel *g, const llm_optim_config *c, double lr, int64_t t,
                        double clip_factor)
{
	return no_cuda();
}
llm_lossscale *llm_cudamodel_lossscale(llm_cudamodel *g) { return &g->ls; }
size_t llm_cudamodel_memory(const llm_cudamodel *g) { return 0; }
const char *llm_cudamodel_device(const llm_cudamodel *g, double *peak)
{
	if (peak)
		*peak = 0;
	return "none";
}

#endif
