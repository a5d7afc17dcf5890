/*
 * backend.c — the CPU and the CUDA backend behind backend.h, as two tables of the same calls.
 *
 * The CPU backend is the reference: its float operations are those llm-train has always run
 * (and the order of the additions is what makes --accum equal data parallelism, see backend.h),
 * so a change here shows as changed losses in the resume and MPI tests.
 */
#include "backend.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "cudamodel.h"
#include "gpu.h"
#include "mpirt.h"
#include "ops.h"

typedef struct {
	int (*micro)(llm_backend *, const int32_t *, const int32_t *, int, int, float, int, int,
	             double *);
	int (*grad_norm)(llm_backend *, double *, double *);
	int (*apply)(llm_backend *, const llm_optim_config *, double, int64_t, double, double *);
	int (*tensor_sumsq)(llm_backend *, double *);
	int (*param_norm)(llm_backend *, double *);
	int (*eval)(llm_backend *, const int32_t *, const int32_t *, int, int, double *, int64_t *);
	int (*upload)(llm_backend *);
	int (*download)(llm_backend *, int);
	int (*hidden)(llm_backend *, const int32_t *, int, int, const float **);
} backend_ops;

struct llm_backend {
	const backend_ops *ops;
	llm_backend_options o;
	llm_model *m;
	float *am, *av;
	size_t n;
	char name[160];
	double peak;
	llm_lossscale ls; /* the CPU's, disabled */
	float *acc;       /* CPU, accum > 1: the step's gradient */
	double *moved;    /* CPU: per tensor, the squared change of the last update */
	llm_cudamodel *gpu;
};

void llm_backend_options_init(llm_backend_options *o)
{
	*o = (llm_backend_options){ .device = LLM_DEVICE_CPU, .precision = LLM_PREC_BF16, .accum = 1,
		                    .world = 1 };
}

/* ---- CPU ------------------------------------------------------------------------------- */

static float *cpu_grads(llm_backend *b)
{
	return b->acc ? b->acc : llm_model_grads(b->m);
}

static int cpu_micro(llm_backend *b, const int32_t *x, const int32_t *y, int B, int T, float scale,
                     int first, int last, double *loss)
{
	llm_model_zero_grad(b->m);
	int rc = llm_model_forward(b->m, x, y, B, T, loss, NULL);
	if (rc)
		return rc;
	llm_model_backward(b->m, scale);
	if (b->acc) {
		const float *g = llm_model_grads(b->m);
		if (first)
			memcpy(b->acc, g, b->n * sizeof *g);
		else
			for (size_t i = 0; i < b->n; i++)
				b->acc[i] += g[i];
	}
	return LLM_OK;
}

static int cpu_grad_norm(llm_backend *b, double *norm, double *scale)
{
	float *G = cpu_grads(b);
	int rc = llm_mpirt_sum_f32(G, b->n);
	if (rc)
		return rc;
	*norm = sqrt(llm_sum_squares(G, b->n));
	if (scale)
		*scale = 1;
	return LLM_OK;
}

typedef struct {
	llm_backend *b;
	const llm_optim_config *c;
	double lr, clip;
	int64_t t;
	double *moved; /* per tensor */
} apply_job;

static void apply_tensor(void *ctx, size_t i, int worker)
{
	(void)worker;
	apply_job *j = ctx;
	llm_backend *b = j->b;
	float *p = llm_model_params(b->m), *G = cpu_grads(b);
	const llm_tensor *ten = llm_model_tensor(b->m, i);
	size_t o = ten->offset;
	j->moved[i] = llm_adamw_update(p + o, G + o, b->am + o, b->av + o, ten->numel, j->clip, j->lr,
	                               ten->decay ? j->c->weight_decay : 0, j->c, j->t);
}

/* The tensors on the ops' threads, each whole on one, and their distances summed in tensor
 * order afterwards: the same sum for any thread count. */
static int cpu_apply(llm_backend *b, const llm_optim_config *c, double lr, int64_t t, double clip,
                     double *moved)
{
	size_t n = llm_model_ntensors(b->m);
	apply_job j = { b, c, lr, clip, t, b->moved };
	llm_ops_parallel(n, apply_tensor, &j);
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += b->moved[i];
	*moved = sum;
	return LLM_OK;
}

static int cpu_tensor_sumsq(llm_backend *b, double *ss)
{
	const float *G = cpu_grads(b);
	for (size_t i = 0; i < llm_model_ntensors(b->m); i++) {
		const llm_tensor *ten = llm_model_tensor(b->m, i);
		ss[i] = llm_sum_squares(G + ten->offset, ten->numel);
	}
	return LLM_OK;
}

static int cpu_param_norm(llm_backend *b, double *norm)
{
	*norm = sqrt(llm_sum_squares(llm_model_params(b->m), b->n));
	return LLM_OK;
}

static int cpu_eval(llm_backend *b, const int32_t *x, const int32_t *y, int B, int T, double *loss,
                    int64_t *count)
{
	return llm_model_forward(b->m, x, y, B, T, loss, count);
}

static int cpu_upload(llm_backend *b)
{
	return LLM_OK; /* the CPU trains the host copy itself */
}

static int cpu_download(llm_backend *b, int optim)
{
	return LLM_OK;
}

static int cpu_hidden(llm_backend *b, const int32_t *x, int B, int T, const float **hidden)
{
	int rc = llm_model_forward_hidden(b->m, x, B, T);
	*hidden = rc ? NULL : llm_model_hidden(b->m);
	return rc;
}

static const backend_ops cpu_ops = { cpu_micro, cpu_grad_norm, cpu_apply, cpu_tensor_sumsq,
	                             cpu_param_norm, cpu_eval, cpu_upload, cpu_download, cpu_hidden };

static int cpu_open(llm_backend *b)
{
	if (b->o.accum > 1)
		b->acc = llm_calloc(b->n, sizeof *b->acc);
	b->moved = llm_calloc(llm_model_ntensors(b->m), sizeof *b->moved);
	llm_lossscale_init(&b->ls, 0);
	snprintf(b->name, sizeof b->name, "%s", llm_ops_backend());
	b->peak = llm_ops_peak_flops();
	return LLM_OK;
}

/* ---- CUDA ------------------------------------------------------------------------------ */

static int cuda_micro(llm_backend *b, const int32_t *x, const int32_t *y, int B, int T,
                      float scale, int first, int last, double *loss)
{
	/* Gradients accumulate on the device; the last micro-batch's backward starts the NCCL
	 * all-reduce. */
	int rc = first ? llm_cudamodel_zero_grad(b->gpu) : LLM_OK;
	return rc ? rc : llm_cudamodel_train_micro(b->gpu, x, y, B, T, scale, last, loss, NULL);
}

static int cuda_grad_norm(llm_backend *b, double *norm, double *scale)
{
	if (scale)
		*scale = llm_cudamodel_lossscale(b->gpu)->scale;
	int finite, rc = llm_cudamodel_grad_norm(b->gpu, norm, &finite);
	if (!rc && !finite)
		*norm = NAN;
	return rc;
}

static int cuda_apply(llm_backend *b, const llm_optim_config *c, double lr, int64_t t, double clip,
                      double *moved)
{
	*moved = NAN; /* the device update does not measure how far it moved */
	return llm_cudamodel_apply(b->gpu, c, lr, t, clip);
}

static int cuda_tensor_sumsq(llm_backend *b, double *ss)
{
	return llm_cudamodel_tensor_sumsq(b->gpu, ss);
}

static int cuda_param_norm(llm_backend *b, double *norm)
{
	return llm_cudamodel_param_norm(b->gpu, norm);
}

static int cuda_eval(llm_backend *b, const int32_t *x, const int32_t *y, int B, int T,
                     double *loss, int64_t *count)
{
	return llm_cudamodel_eval(b->gpu, x, y, B, T, loss, count);
}

static int cuda_upload(llm_backend *b)
{
	int rc = llm_cudamodel_set_params(b->gpu, llm_model_params(b->m));
	return rc || b->o.inference ? rc : llm_cudamodel_set_optim(b->gpu, b->am, b->av);
}

static int cuda_download(llm_backend *b, int optim)
{
	int rc = llm_cudamodel_get_params(b->gpu, llm_model_params(b->m));
	return rc || !optim ? rc : llm_cudamodel_get_optim(b->gpu, b->am, b->av);
}

/* The CUDA model keeps its hidden states on the device and has no call that returns them:
 * the heads on hidden states (seqcls.h) run on the CPU backend. */
static int cuda_hidden(llm_backend *b, const int32_t *x, int B, int T, const float **hidden)
{
	(void)b, (void)x, (void)B, (void)T;
	*hidden = NULL;
	return llm_fail(LLM_EUNSUPPORTED, "the CUDA backend gives no hidden states: use the CPU");
}

static const backend_ops cuda_ops = { cuda_micro, cuda_grad_norm, cuda_apply, cuda_tensor_sumsq,
	                              cuda_param_norm, cuda_eval, cuda_upload, cuda_download,
	                              cuda_hidden };

/* One GPU per process; with several, NCCL between them, its id passed along by MPI. */
static int cuda_open(llm_backend *b)
{
	llm_cuda_options co;
	llm_cuda_options_init(&co);
	co.precision = b->o.precision;
	co.recompute = b->o.recompute;
	co.zero1 = b->o.zero1;
	co.inference = b->o.inference;
	int rc = llm_cudamodel_new(&b->gpu, b->m, &co);
	if (rc)
		return rc;
	/* an evaluation scores the host as loaded: nothing to upload later */
	if (b->o.inference && (rc = llm_cudamodel_set_params(b->gpu, llm_model_params(b->m))))
		return rc;
	if (b->o.world > 1) {
		unsigned char id[LLM_NCCL_ID_BYTES] = { 0 };
		if ((b->o.rank == 0 && (rc = llm_cuda_nccl_id(id))) ||
		    (rc = llm_mpirt_bcast(id, sizeof id, 0)) ||
		    (rc = llm_cudamodel_dp(b->gpu, b->o.rank, b->o.world, id)))
			return rc;
	}
	double peak = 0;
	const char *dev = llm_cudamodel_device(b->gpu, &peak);
	snprintf(b->name, sizeof b->name, "%s, %s%s%s", dev, llm_precision_name(co.precision),
	         co.recompute ? ", recompute " : "", co.recompute ? llm_recompute_name(co.recompute) : "");
	b->peak = peak > 0 ? peak : NAN;
	return LLM_OK;
}

/* ---- the interface --------------------------------------------------------------------- */

int llm_backend_open(llm_backend **out, llm_model *host, float *adam_m, float *adam_v,
                     const llm_backend_options *o)
{
	*out = NULL;
	llm_backend *b = llm_calloc(1, sizeof *b);
	b->o = *o;
	b->m = host;
	b->am = adam_m;
	b->av = adam_v;
	b->n = llm_model_nparams(host);
	int cuda = o->device == LLM_DEVICE_CUDA;
	b->ops = cuda ? &cuda_ops : &cpu_ops;
	int rc = cuda ? cuda_open(b) : cpu_open(b);
	if (rc) {
		llm_backend_free(b);
		return rc;
	}
	*out = b;
	return LLM_OK;
}

void llm_backend_free(llm_backend *b)
{
	if (!b)
		return;
	llm_cudamodel_free(b->gpu);
	free(b->acc);
	free(b->moved);
	free(b);
}

const char *llm_backend_name(const llm_backend *b) { return b->name; }
double llm_backend_peak_flops(const llm_backend *b) { return b->peak; }

llm_lossscale *llm_backend_lossscale(llm_backend *b)
{
	return b->gpu ? llm_cudamodel_lossscale(b->gpu) : &b->ls;
}

int llm_backend_upload(llm_backend *b) { return b->ops->upload(b); }
int llm_backend_download(llm_backend *b, int optim) { return b->ops->download(b, optim); }

int llm_backend_micro(llm_backend *b, const int32_t *x, const int32_t *y, int B, int T,
                      float scale, int first, int last, double *loss)
{
	return b->ops->micro(b, x, y, B, T, scale, first, last, loss);
}

int llm_backend_grad_norm(llm_backend *b, double *norm, double *scale)
{
	return b->ops->grad_norm(b, norm, scale);
}

int llm_backend_apply(llm_backend *b, const llm_optim_config *c, double lr, int64_t t,
                      double clip_factor, double *moved)
{
	return b->ops->apply(b, c, lr, t, clip_factor, moved);
}

int llm_backend_tensor_sumsq(llm_backend *b, double *ss) { return b->ops->tensor_sumsq(b, ss); }
int llm_backend_param_norm(llm_backend *b, double *norm) { return b->ops->param_norm(b, norm); }

int llm_backend_eval(llm_backend *b, const int32_t *x, const int32_t *y, int B, int T,
                     double *loss, int64_t *count)
{
	return b->ops->eval(b, x, y, B, T, loss, count);
}

int llm_backend_hidden(llm_backend *b, const int32_t *x, int B, int T, const float **hidden)
{
	return b->ops->hidden(b, x, B, T, hidden);
}

static int cuda_token_losses(void *b, const int32_t *x, const int32_t *y, int B, int T,
                             float *losses)
{
	return llm_cudamodel_token_losses(((llm_backend *)b)->gpu, x, y, B, T, losses);
}

llm_backend_loss_fn llm_backend_token_loss_fn(const llm_backend *b)
{
	return b->gpu ? cuda_token_losses : NULL;
}
