/*
 * ops.c — CPU reference ops (see ops.h for shapes and conventions).
 *
 * The code favours being obviously the formula over being clever: the CUDA kernels are checked
 * against it, and tests/unit/test_ops.c checks it against float64 finite differences. Speed
 * comes from llm_gemm (OpenBLAS); attention also runs its two products per head through it.
 *
 * Threads (llm_ops_set_threads): one pool of ours (core/pool.h), OpenBLAS kept to one thread.
 * OpenBLAS's own threads spin between products, and around every loop of ours that ran on one
 * thread while they spun, so two threads cost twice the CPU for much less than twice the speed;
 * the pool's threads sleep on a condition variable between jobs. Every parallel split computes
 * each output element with the same operations in the same order as one thread does: a product
 * is cut along rows or columns of C (never along K), attention by key-value head (whose query
 * heads add into dk and dv in order), the RMSNorm weight gradient by columns, everything else
 * by rows. So the results do not depend on the thread count.
 */
#include "ops.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/err.h"
#include "core/pool.h"

#ifdef LLM_HAVE_BLAS
#include <cblas.h>
#endif

/* ---- threads ---------------------------------------------------------------------------- */

static struct {
	llm_pool *pool;        /* NULL: everything runs on the calling thread */
	int workers;           /* llm_pool_workers(pool), 1 without one */
	pthread_mutex_t drive; /* held by the thread driving the pool, for one job */
	float *scratch;        /* attention backward: Tq * Tk floats per worker from worker 1 on */
	size_t scratch_cap;
} par = { NULL, 1, PTHREAD_MUTEX_INITIALIZER, NULL, 0 };

void llm_ops_set_threads(int n)
{
	if (n <= 0) {
		long cores = sysconf(_SC_NPROCESSORS_ONLN);
		n = cores > 1 ? (int)(cores < 1024 ? cores : 1024) : 1;
	}
	pthread_mutex_lock(&par.drive);
	llm_pool_free(par.pool);
	par.pool = NULL;
	par.workers = 1;
	if (n > 1 && llm_pool_new(&par.pool, n) == LLM_OK)
		par.workers = n;
	pthread_mutex_unlock(&par.drive);
#ifdef LLM_HAVE_BLAS
	/* A pool that cannot start leaves the threads to OpenBLAS, as before there was one. */
	openblas_set_num_threads(par.pool ? 1 : n);
#endif
}

int llm_ops_threads(void)
{
	return par.workers;
}

/* Take the pool for one job, or fail when there is none or it is taken: a job's own products
 * (llm_gemm inside attention) and a second thread using the ops then run on their caller. */
static int par_take(size_t n)
{
	return n > 1 && par.pool && pthread_mutex_trylock(&par.drive) == 0;
}

void llm_ops_parallel(size_t n, llm_pool_fn *f, void *ctx)
{
	if (par_take(n)) {
		llm_pool_run(par.pool, n, f, ctx);
		pthread_mutex_unlock(&par.drive);
		return;
	}
	for (size_t i = 0; i < n; i++)
		f(ctx, i, 0);
}

/* Rows [lo, hi) of a loop of n rows, for pieces of it. */
typedef void range_fn(const void *args, size_t lo, size_t hi);

typedef struct {
	range_fn *f;
	const void *args;
	size_t n, step;
} range_job;

static void range_piece(void *ctx, size_t i, int worker)
{
	(void)worker;
	const range_job *j = ctx;
	size_t lo = i * j->step, hi = lo + j->step < j->n ? lo + j->step : j->n;
	if (lo < hi)
		j->f(j->args, lo, hi);
}

/* f over [0, n) in one piece per worker, or in one call when there are fewer than `grain`
 * rows per worker (a job costs the threads' wake-up, some microseconds). */
static void par_range(size_t n, size_t grain, range_fn *f, const void *args)
{
	size_t k = (size_t)par.workers;
	if (k < 2 || n < 2 * grain) {
		f(args, 0, n);
		return;
	}
	if (k > n / grain)
		k = n / grain;
	range_job j = { f, args, n, (n + k - 1) / k };
	llm_ops_parallel(k, range_piece, &j);
}

typedef struct {
	float *x;
} zero_args;

static void zero_range(const void *args, size_t lo, size_t hi)
{
	const zero_args *a = args;
	memset(a->x + lo, 0, (hi - lo) * sizeof *a->x);
}

void llm_ops_zero(float *x, size_t n)
{
	zero_args a = { x };
	par_range(n, 1 << 16, zero_range, &a);
}

/* ---- exponentials ------------------------------------------------------------------------ */

/*
 * The softmaxes, the cross-entropy and SwiGLU spend most of their time in expf, one call per
 * element. exps() gives the bits of expf four at a time: glibc's expf (2.28 on) is a table of
 * 2^(i/32) and a cubic in double precision, which its x86-64 FMA build (the one its ifunc picks
 * on a CPU with AVX2 and FMA) evaluates as the fused steps below; the same steps on four lanes
 * give the same double, hence the same float. Elements whose |x| reaches 88, infinities and
 * NaNs take glibc's own expf, as do machines without AVX2/FMA and any libm whose expf differs
 * on the probe values (exp_ready checks them once); on this machine every float was compared.
 */
typedef void exps_fn(float *y, const float *x, float sub, int neg, size_t n);

/* y[i] = expf(neg ? -(x[i] - sub) : x[i] - sub); y may alias x. */
static void exps_libm(float *y, const float *x, float sub, int neg, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		float a = x[i] - sub;
		y[i] = expf(neg ? -a : a);
	}
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

static const uint64_t exp2f_tab[32] = {
	0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
	0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
	0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
	0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
	0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
	0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
	0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
	0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
};

__attribute__((target("avx2,fma"))) static void exps_avx2(float *y, const float *x, float sub,
                                                          int neg, size_t n)
{
	const __m256d inv_ln2n = _mm256_castsi256_pd(_mm256_set1_epi64x(0x40471547652b82fe));
	const __m256d shift = _mm256_castsi256_pd(_mm256_set1_epi64x(0x4338000000000000));
	const __m256d c0 = _mm256_castsi256_pd(_mm256_set1_epi64x(0x3ebc6af84b912394));
	const __m256d c1 = _mm256_castsi256_pd(_mm256_set1_epi64x(0x3f2ebfce50fac4f3));
	const __m256d c2 = _mm256_castsi256_pd(_mm256_set1_epi64x(0x3f962e42ff0c52d6));
	const __m256d one = _mm256_set1_pd(1.0);
	const __m128 vsub = _mm_set1_ps(sub), sign = _mm_set1_ps(neg ? -0.0f : 0.0f);
	/* |x| >= 88 (top 12 bits, sign dropped, at or above 0x42a): glibc's special cases. */
	const __m128i big = _mm_set1_epi32(0x42b00000 - 1), abs = _mm_set1_epi32(0x7fffffff);
	size_t i = 0;
	for (; i + 4 <= n; i += 4) {
		__m128 a = _mm_xor_ps(_mm_sub_ps(_mm_loadu_ps(x + i), vsub), sign);
		__m128i bits = _mm_and_si128(_mm_castps_si128(a), abs);
		if (_mm_movemask_epi8(_mm_cmpgt_epi32(bits, big))) {
			float t[4];
			_mm_storeu_ps(t, a);
			for (int j = 0; j < 4; j++)
				y[i + j] = expf(t[j]);
			continue;
		}
		__m256d xd = _mm256_cvtps_pd(a);
		__m256d kd = _mm256_fmadd_pd(inv_ln2n, xd, shift);
		__m256i ki = _mm256_castpd_si256(kd);
		kd = _mm256_sub_pd(kd, shift);
		__m256d r = _mm256_fmsub_pd(inv_ln2n, xd, kd);
		__m256i t = _mm256_i64gather_epi64((const long long *)exp2f_tab,
		                                   _mm256_and_si256(ki, _mm256_set1_epi64x(31)), 8);
		t = _mm256_add_epi64(t, _mm256_slli_epi64(ki, 47));
		__m256d z = _mm256_fmadd_pd(c0, r, c1), r2 = _mm256_mul_pd(r, r);
		__m256d p = _mm256_fmadd_pd(c2, r, one);
		p = _mm256_fmadd_pd(z, r2, p);
		p = _mm256_mul_pd(p, _mm256_castsi256_pd(t));
		_mm_storeu_ps(y + i, _mm256_cvtpd_ps(p));
	}
	exps_libm(y + i, x + i, sub, neg, n - i);
}

/* The probe: both sides of zero, the largest arguments short of the special cases, the
 * smallest normal results, and a spread in between. */
static int exps_agrees(exps_fn *f)
{
	enum { PROBE = 4096 };
	float x[PROBE], a[PROBE], b[PROBE];
	for (int i = 0; i < PROBE; i++)
		x[i] = -87.9f + 175.8f * (float)i / (PROBE - 1) + (float)(i % 7) * 1e-3f;
	f(a, x, 0, 0, PROBE);
	exps_libm(b, x, 0, 0, PROBE);
	return memcmp(a, b, sizeof a) == 0;
}

static exps_fn *exps_pick(void)
{
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
	    exps_agrees(exps_avx2))
		return exps_avx2;
	return exps_libm;
}
#else
static exps_fn *exps_pick(void)
{
	return exps_libm;
}
#endif

/* Loops that need a sum or more arithmetic after the exponential go by blocks of EXP_BLOCK
 * elements, the exponentials first, into a buffer on the stack. */
enum { EXP_BLOCK = 256 };

static exps_fn *exps_impl;
static pthread_once_t exps_once = PTHREAD_ONCE_INIT;

static void exps_init(void)
{
	exps_impl = exps_pick();
}

static void exps(float *y, const float *x, float sub, int neg, size_t n)
{
	pthread_once(&exps_once, exps_init);
	exps_impl(y, x, sub, neg, n);
}

int llm_ops_fast_exp(void)
{
	pthread_once(&exps_once, exps_init);
	return exps_impl != exps_libm;
}

/* ---- products ---------------------------------------------------------------------------- */

static void gemm1(int trans_a, int trans_b, int M, int N, int K, float alpha, const float *A,
                  int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
#ifdef LLM_HAVE_BLAS
	cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
	            trans_b ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
#else
	/* Row by row, k outer, j inner: the inner loop runs along contiguous rows of B and C when
	 * B is not transposed, which is the case the compiler vectorises. */
	for (int i = 0; i < M; i++) {
		float *c = C + (size_t)i * ldc;
		if (beta == 0)
			memset(c, 0, (size_t)N * sizeof *c);
		else if (beta != 1)
			for (int j = 0; j < N; j++)
				c[j] *= beta;
		if (!trans_b) {
			for (int k = 0; k < K; k++) {
				float a = alpha * (trans_a ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k]);
				const float *b = B + (size_t)k * ldb;
				for (int j = 0; j < N; j++)
					c[j] += a * b[j];
			}
		} else {
			for (int j = 0; j < N; j++) {
				const float *b = B + (size_t)j * ldb;
				float s = 0;
				for (int k = 0; k < K; k++)
					s += (trans_a ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k]) * b[k];
				c[j] += alpha * s;
			}
		}
	}
#endif
}

typedef struct {
	int ta, tb, M, N, K;
	float alpha, beta;
	const float *A, *B;
	float *C;
	int lda, ldb, ldc;
} gemm_args;

/* Products cut into pieces of rows of C for the pool: item i is piece i - first[j] of product
 * j, rows [piece * step[j], + step[j]). */
typedef struct {
	const gemm_args *g;
	int ng, step[2], first[3];
} gemm_job;

static void gemm_piece(void *ctx, size_t i, int worker)
{
	(void)worker;
	const gemm_job *job = ctx;
	int j = (int)i >= job->first[1];
	const gemm_args *g = &job->g[j];
	int lo = ((int)i - job->first[j]) * job->step[j];
	int len = g->M - lo < job->step[j] ? g->M - lo : job->step[j];
	gemm1(g->ta, g->tb, len, g->N, g->K, g->alpha, g->A + (size_t)lo * (g->ta ? 1 : g->lda),
	      g->lda, g->B, g->ldb, g->beta, g->C + (size_t)lo * g->ldc, g->ldc);
}

/*
 * Below GEMM_PAR_MIN multiply-adds a product runs on its caller: waking the threads would cost
 * about what they save. Cuts fall on multiples of GEMM_ROWS rows of C. OpenBLAS computes an
 * element of C with operations that depend on its place in the kernel's tile along the rows of
 * a row-major C (12 rows on Zen): a cut at a multiple of the tile leaves every element's bits
 * as one call gives them, and 48 is a multiple of the tiles of OpenBLAS's x86 sgemm kernels.
 * A cut along the columns changed elements at every alignment tried, so none is made; a
 * product with few rows (a weight gradient) runs whole beside its sibling instead.
 */
enum { GEMM_PAR_MIN = 1 << 20, GEMM_ROWS = 48 };

/* One or two independent products (distinct outputs), on the pool when it is worth it. Each
 * gets a share of the pieces in proportion to its work, so that the two products of a
 * backward run side by side on two threads, each whole. */
static void gemm_run(const gemm_args *g, int ng)
{
	int k = par.workers;
	double work[2] = { 0, 0 }, total = 0;
	for (int j = 0; j < ng; j++)
		total += work[j] = (double)g[j].M * g[j].N * g[j].K;
	if (k < 2 || total < GEMM_PAR_MIN) {
		for (int j = 0; j < ng; j++)
			gemm1(g[j].ta, g[j].tb, g[j].M, g[j].N, g[j].K, g[j].alpha, g[j].A, g[j].lda, g[j].B,
			      g[j].ldb, g[j].beta, g[j].C, g[j].ldc);
		return;
	}
	gemm_job job = { g, ng, { 1, 1 }, { 0, 0, 0 } };
	for (int j = 0; j < ng; j++) {
		int pieces = (int)ceil(k * work[j] / total - 1e-9);
		int maxp = (g[j].M + GEMM_ROWS - 1) / GEMM_ROWS;
		pieces = pieces < 1 ? 1 : pieces > maxp ? maxp : pieces;
		int step = ((g[j].M + pieces - 1) / pieces + GEMM_ROWS - 1) / GEMM_ROWS * GEMM_ROWS;
		job.step[j] = step;
		job.first[j + 1] = job.first[j] + (g[j].M + step - 1) / step;
	}
	llm_ops_parallel((size_t)job.first[ng], gemm_piece, &job);
}

void llm_gemm(int trans_a, int trans_b, int M, int N, int K, float alpha, const float *A, int lda,
              const float *B, int ldb, float beta, float *C, int ldc)
{
	if (M <= 0 || N <= 0)
		return;
	gemm_args g = { trans_a, trans_b, M, N, K, alpha, beta, A, B, C, lda, ldb, ldc };
	gemm_run(&g, 1);
}

const char *llm_ops_backend(void)
{
#ifdef LLM_HAVE_BLAS
	return "OpenBLAS";
#else
	return "portable loops";
#endif
}

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double llm_ops_peak_flops(void)
{
	/* Square products of the size the small presets use; the best of several runs, so that a
	 * noisy neighbour lowers the measurement less than it lowers a training step. */
	enum { S = 512 };
	float *a = llm_malloc(3 * (size_t)S * S * sizeof *a), *b = a + S * S, *c = b + S * S;
	for (size_t i = 0; i < 2 * (size_t)S * S; i++)
		a[i] = (float)((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
	double best = 0, start = now_seconds();
	do {
		double t0 = now_seconds();
		llm_gemm(0, 1, S, S, S, 1, a, S, b, S, 0, c, S);
		double dt = now_seconds() - t0;
		if (dt > 0 && 2.0 * S * S * S / dt > best)
			best = 2.0 * S * S * S / dt;
	} while (now_seconds() - start < 0.2);
	free(a);
	return best;
}

void llm_embedding_fwd(float *out, const int32_t *tokens, const float *wte, int N, int C)
{
	for (int n = 0; n < N; n++)
		memcpy(out + (size_t)n * C, wte + (size_t)tokens[n] * C, (size_t)C * sizeof *out);
}

void llm_embedding_bwd(float *dwte, const float *dout, const int32_t *tokens, int N, int C)
{
	for (int n = 0; n < N; n++) {
		float *d = dwte + (size_t)tokens[n] * C;
		const float *g = dout + (size_t)n * C;
		for (int c = 0; c < C; c++)
			d[c] += g[c];
	}
}

void llm_matmul_fwd(float *out, const float *inp, const float *w, int N, int K, int M)
{
	llm_gemm(0, 1, N, M, K, 1, inp, K, w, K, 0, out, M);
}

void llm_matmul_bwd(float *dinp, float *dw, const float *dout, const float *inp, const float *w,
                    int N, int K, int M)
{
	gemm_args g[2];
	int ng = 0;
	if (dinp && N > 0 && K > 0)
		g[ng++] = (gemm_args){ 0, 0, N, K, M, 1, 1, dout, w, dinp, M, K, K };
	if (dw && M > 0 && K > 0)
		g[ng++] = (gemm_args){ 1, 0, M, K, N, 1, 1, dout, inp, dw, M, K, K };
	if (ng)
		gemm_run(g, ng);
}

enum { ROPE_MAX_HALF = 1024 };

typedef struct {
	float *out, *rstd, *dinp, *dweight;
	const float *inp, *weight, *dout, *r; /* r: the forward's rstd, for the backward */
	int C;
	float eps;
} norm_args;

static void rmsnorm_rows(const void *args, size_t lo, size_t hi)
{
	const norm_args *a = args;
	int C = a->C;
	for (size_t n = lo; n < hi; n++) {
		const float *x = a->inp + n * C;
		float *y = a->out + n * C;
		float ss = 0;
		for (int c = 0; c < C; c++)
			ss += x[c] * x[c];
		float r = 1.0f / sqrtf(ss / C + a->eps);
		for (int c = 0; c < C; c++)
			y[c] = a->weight[c] * (x[c] * r);
		if (a->rstd)
			a->rstd[n] = r;
	}
}

void llm_rmsnorm_fwd(float *out, float *rstd, const float *inp, const float *weight, int N, int C,
                     float eps)
{
	norm_args a = { .out = out, .rstd = rstd, .inp = inp, .weight = weight, .C = C, .eps = eps };
	par_range((size_t)N, 64, rmsnorm_rows, &a);
}

/* y = w * x * r, r = (mean(x^2) + eps)^-1/2, so dx = r * (g - xhat * mean(g * xhat)) with
 * g = dy * w and xhat = x * r. With dweight (one thread): both gradients in one pass. Without
 * (threads): dx by rows, and dweight afterwards by columns (rmsnorm_dweight), which adds each
 * column's terms in the same row order. */
static void rmsnorm_bwd_rows(const void *args, size_t lo, size_t hi)
{
	const norm_args *a = args;
	int C = a->C;
	for (size_t n = lo; n < hi; n++) {
		const float *x = a->inp + n * C, *dy = a->dout + n * C, *w = a->weight;
		float *dx = a->dinp + n * C;
		float r = a->r[n], dot = 0;
		for (int c = 0; c < C; c++)
			dot += dy[c] * w[c] * x[c] * r;
		dot /= C;
		for (int c = 0; c < C; c++) {
			float xhat = x[c] * r;
			dx[c] += r * (dy[c] * w[c] - xhat * dot);
			if (a->dweight)
				a->dweight[c] += dy[c] * xhat;
		}
	}
}

typedef struct {
	const norm_args *a;
	size_t N;
} dweight_args;

static void rmsnorm_dweight(const void *args, size_t lo, size_t hi)
{
	const dweight_args *d = args;
	const norm_args *a = d->a;
	size_t C = (size_t)a->C;
	for (size_t n = 0; n < d->N; n++) {
		const float *x = a->inp + n * C, *dy = a->dout + n * C;
		float r = a->r[n];
		for (size_t c = lo; c < hi; c++)
			a->dweight[c] += dy[c] * (x[c] * r);
	}
}

void llm_rmsnorm_bwd(float *dinp, float *dweight, const float *dout, const float *inp,
                     const float *weight, const float *rstd, int N, int C)
{
	norm_args a = { .dinp = dinp, .dweight = dweight, .dout = dout, .inp = inp, .weight = weight,
		        .r = rstd, .C = C };
	if (par.workers < 2) {
		rmsnorm_bwd_rows(&a, 0, (size_t)N);
		return;
	}
	a.dweight = NULL;
	par_range((size_t)N, 64, rmsnorm_bwd_rows, &a);
	a.dweight = dweight;
	dweight_args d = { &a, (size_t)N };
	par_range((size_t)C, 16, rmsnorm_dweight, &d);
}

/* The angle table: transformers computes inv_freq = 1 / theta^(2i/D) in fp32, then
 * pos * inv_freq in fp32, then cos/sin; doing the same keeps logits within fp32 rounding of a
 * Hugging Face model loading our checkpoints. One row of D/2 cosines and D/2 sines per position
 * 0 .. npos - 1: a batch repeats the positions of one sequence B times. */
static float *rope_table(int npos, int D, float theta)
{
	int half = D / 2;
	float *tab = llm_malloc((size_t)npos * D * sizeof *tab), inv[ROPE_MAX_HALF];
	for (int i = 0; i < half; i++)
		inv[i] = (float)(1.0 / pow((double)theta, (double)(2 * i) / D));
	for (int p = 0; p < npos; p++)
		for (int i = 0; i < half; i++) {
			float a = (float)p * inv[i];
			tab[(size_t)p * D + i] = cosf(a);
			tab[(size_t)p * D + half + i] = sinf(a);
		}
	return tab;
}

typedef struct {
	float *out;
	const float *inp, *tab;
	const int32_t *pos;
	int H, D, bwd, inplace;
} rope_args;

static void rope_rows(const void *args, size_t lo, size_t hi)
{
	const rope_args *a = args;
	int H = a->H, D = a->D, half = D / 2;
	for (size_t n = lo; n < hi; n++) {
		const float *cs = a->tab + (size_t)a->pos[n] * D, *sn = cs + half;
		for (int h = 0; h < H; h++) {
			const float *x = a->inp + (n * H + h) * D;
			float *y = a->out + (n * H + h) * D;
			for (int i = 0; i < half; i++) {
				float x1 = x[i], x2 = x[i + half];
				if (!a->bwd) {
					y[i] = x1 * cs[i] - x2 * sn[i];
					y[i + half] = x2 * cs[i] + x1 * sn[i];
					continue;
				}
				float d1 = x1 * cs[i] + x2 * sn[i], d2 = x2 * cs[i] - x1 * sn[i];
				if (a->inplace) {
					y[i] = d1;
					y[i + half] = d2;
				} else {
					y[i] += d1;
					y[i + half] += d2;
				}
			}
		}
	}
}

static void rope(float *out, const float *inp, const int32_t *pos, int N, int H, int D,
                 float theta, int bwd)
{
	if (N <= 0)
		return;
	int npos = 0;
	for (int n = 0; n < N; n++)
		npos = pos[n] >= npos ? pos[n] + 1 : npos;
	float *tab = rope_table(npos, D, theta);
	rope_args a = { out, inp, tab, pos, H, D, bwd, out == inp };
	par_range((size_t)N, 64, rope_rows, &a);
	free(tab);
}

void llm_rope_fwd(float *out, const float *inp, const int32_t *pos, int N, int H, int D,
                  float theta)
{
	rope(out, inp, pos, N, H, D, theta, 0);
}

void llm_rope_bwd(float *dinp, const float *dout, const int32_t *pos, int N, int H, int D,
                  float theta)
{
	rope(dinp, dout, pos, N, H, D, theta, 1);
}

/* Queries are processed in blocks of this many rows: a block needs only the keys up to its
 * last row, so the products skip most of the masked upper triangle (10/16 of the full work
 * for T = 4 blocks) while each call stays large enough for BLAS to run at speed. */
enum { ATT_BLOCK = 64 };

/* One job item per sequence and key-value head: the query heads that read it run in order on
 * one thread, so their additions into dk and dv keep the one-thread order. */
typedef struct {
	float *out, *att, *dq, *dk, *dv, *scratch;
	const float *q, *k, *v, *dout, *p; /* p: the forward's att, for the backward */
	int Tq, Tk, H, KVH, D;
} att_args;

static void attention_fwd_item(void *ctx, size_t item, int worker)
{
	(void)worker;
	const att_args *a = ctx;
	int Tq = a->Tq, Tk = a->Tk, H = a->H, KVH = a->KVH, D = a->D;
	int rep = H / KVH, off = Tk - Tq, b = (int)(item / (size_t)KVH), g = (int)(item % (size_t)KVH);
	size_t qs = (size_t)H * D, ks = (size_t)KVH * D;
	float scale = 1.0f / sqrtf((float)D);
	for (int h = g * rep; h < (g + 1) * rep; h++) {
		const float *qb = a->q + (size_t)b * Tq * qs + (size_t)h * D;
		const float *kb = a->k + (size_t)b * Tk * ks + (size_t)g * D;
		const float *vb = a->v + (size_t)b * Tk * ks + (size_t)g * D;
		float *ob = a->out + (size_t)b * Tq * qs + (size_t)h * D;
		float *p = a->att + ((size_t)b * H + h) * Tq * Tk;
		for (int i0 = 0; i0 < Tq; i0 += ATT_BLOCK) {
			int rows = Tq - i0 < ATT_BLOCK ? Tq - i0 : ATT_BLOCK, keys = off + i0 + rows;
			float *pb = p + (size_t)i0 * Tk;
			llm_gemm(0, 1, rows, keys, D, scale, qb + i0 * qs, (int)qs, kb, (int)ks, 0, pb, Tk);
			for (int i = i0; i < i0 + rows; i++) {
				float *row = p + (size_t)i * Tk;
				int last = off + i;
				float mx = row[0];
				for (int j = 1; j <= last; j++)
					mx = row[j] > mx ? row[j] : mx;
				float sum = 0;
				exps(row, row, mx, 0, (size_t)last + 1);
				for (int j = 0; j <= last; j++)
					sum += row[j];
				float inv = 1.0f / sum;
				for (int j = 0; j <= last; j++)
					row[j] *= inv;
				for (int j = last + 1; j < Tk; j++)
					row[j] = 0;
			}
			llm_gemm(0, 0, rows, D, keys, 1, pb, Tk, vb, (int)ks, 0, ob + i0 * qs, (int)qs);
		}
	}
}

void llm_attention_fwd(float *out, float *att, const float *q, const float *k, const float *v,
                       int B, int Tq, int Tk, int H, int KVH, int D)
{
	att_args a = { .out = out, .att = att, .q = q, .k = k, .v = v, .Tq = Tq, .Tk = Tk, .H = H,
		       .KVH = KVH, .D = D };
	llm_ops_parallel((size_t)B * KVH, attention_fwd_item, &a);
}

static void attention_bwd_item(void *ctx, size_t item, int worker)
{
	const att_args *a = ctx;
	int Tq = a->Tq, Tk = a->Tk, H = a->H, KVH = a->KVH, D = a->D;
	int rep = H / KVH, off = Tk - Tq, b = (int)(item / (size_t)KVH), g = (int)(item % (size_t)KVH);
	size_t qs = (size_t)H * D, ks = (size_t)KVH * D;
	float scale = 1.0f / sqrtf((float)D);
	float *scratch = worker ? par.scratch + (size_t)(worker - 1) * Tq * Tk : a->scratch;
	const float *k = a->k, *v = a->v, *q = a->q;
	for (int h = g * rep; h < (g + 1) * rep; h++) {
		size_t qo = (size_t)b * Tq * qs + (size_t)h * D;
		size_t ko = (size_t)b * Tk * ks + (size_t)g * D;
		const float *p = a->p + ((size_t)b * H + h) * Tq * Tk;
		for (int i0 = 0; i0 < Tq; i0 += ATT_BLOCK) {
			int rows = Tq - i0 < ATT_BLOCK ? Tq - i0 : ATT_BLOCK, keys = off + i0 + rows;
			const float *pb = p + (size_t)i0 * Tk, *dob = a->dout + qo + i0 * qs;
			float *ds = scratch + (size_t)i0 * Tk;
			/* dP = dO V^T; dS = P * (dP - rowsum(P * dP)) (softmax backward). */
			llm_gemm(0, 1, rows, keys, D, 1, dob, (int)qs, v + ko, (int)ks, 0, ds, Tk);
			for (int i = i0; i < i0 + rows; i++) {
				const float *pr = p + (size_t)i * Tk;
				float *dr = scratch + (size_t)i * Tk;
				int last = off + i;
				float dot = 0;
				for (int j = 0; j <= last; j++)
					dot += pr[j] * dr[j];
				for (int j = 0; j <= last; j++)
					dr[j] = pr[j] * (dr[j] - dot);
				for (int j = last + 1; j < keys; j++)
					dr[j] = 0;
			}
			llm_gemm(0, 0, rows, D, keys, scale, ds, Tk, k + ko, (int)ks, 1, a->dq + qo + i0 * qs,
			         (int)qs);
			llm_gemm(1, 0, keys, D, rows, scale, ds, Tk, q + qo + i0 * qs, (int)qs, 1,
			         a->dk + ko, (int)ks);
			llm_gemm(1, 0, keys, D, rows, 1, pb, Tk, dob, (int)qs, 1, a->dv + ko, (int)ks);
		}
	}
}

void llm_attention_bwd(float *dq, float *dk, float *dv, float *scratch, const float *dout,
                       const float *q, const float *k, const float *v, const float *att, int B,
                       int Tq, int Tk, int H, int KVH, int D)
{
	att_args a = { .dq = dq, .dk = dk, .dv = dv, .scratch = scratch, .dout = dout, .q = q,
		       .k = k, .v = v, .p = att, .Tq = Tq, .Tk = Tk, .H = H, .KVH = KVH,
		       .D = D };
	size_t items = (size_t)B * KVH;
	if (par_take(items)) {
		/* Workers other than 0 take their scratch from ours; the pool is held, so no other
		 * job can be growing it. */
		size_t need = (size_t)(par.workers - 1) * Tq * Tk;
		if (need > par.scratch_cap) {
			free(par.scratch);
			par.scratch = llm_malloc(need * sizeof *par.scratch);
			par.scratch_cap = need;
		}
		llm_pool_run(par.pool, items, attention_bwd_item, &a);
		pthread_mutex_unlock(&par.drive);
		return;
	}
	for (size_t i = 0; i < items; i++)
		attention_bwd_item(&a, i, 0);
}

typedef struct {
	float *out, *dgate, *dup;
	const float *gate, *up, *dout, *x, *y;
} elem_args;

static void swiglu_fwd_range(const void *args, size_t lo, size_t hi)
{
	const elem_args *a = args;
	float e[EXP_BLOCK];
	for (size_t i0 = lo; i0 < hi; i0 += EXP_BLOCK) {
		size_t len = hi - i0 < EXP_BLOCK ? hi - i0 : EXP_BLOCK;
		exps(e, a->gate + i0, 0, 1, len);
		for (size_t j = 0; j < len; j++) {
			float g = a->gate[i0 + j];
			a->out[i0 + j] = g / (1.0f + e[j]) * a->up[i0 + j];
		}
	}
}

void llm_swiglu_fwd(float *out, const float *gate, const float *up, size_t n)
{
	elem_args a = { .out = out, .gate = gate, .up = up };
	par_range(n, 4096, swiglu_fwd_range, &a);
}

static void swiglu_bwd_range(const void *args, size_t lo, size_t hi)
{
	const elem_args *a = args;
	float e[EXP_BLOCK];
	for (size_t i0 = lo; i0 < hi; i0 += EXP_BLOCK) {
		size_t len = hi - i0 < EXP_BLOCK ? hi - i0 : EXP_BLOCK;
		exps(e, a->gate + i0, 0, 1, len);
		for (size_t j = 0; j < len; j++) {
			size_t i = i0 + j;
			float g = a->gate[i], s = 1.0f / (1.0f + e[j]);
			a->dgate[i] += a->dout[i] * a->up[i] * s * (1.0f + g * (1.0f - s));
			a->dup[i] += a->dout[i] * g * s;
		}
	}
}

void llm_swiglu_bwd(float *dgate, float *dup, const float *dout, const float *gate,
                    const float *up, size_t n)
{
	elem_args a = { .dgate = dgate, .dup = dup, .dout = dout, .gate = gate, .up = up };
	par_range(n, 4096, swiglu_bwd_range, &a);
}

static void residual_range(const void *args, size_t lo, size_t hi)
{
	const elem_args *a = args;
	for (size_t i = lo; i < hi; i++)
		a->out[i] = a->x[i] + a->y[i];
}

void llm_residual_fwd(float *out, const float *a, const float *b, size_t n)
{
	elem_args e = { .out = out, .x = a, .y = b };
	par_range(n, 16384, residual_range, &e);
}

/* The maximum of x[0 .. n-1] as the loop `mx = x[j] > mx ? x[j] : mx` from mx = x[0] finds it.
 * Eight running maxima give the same value whatever the order, but for the sign of a zero
 * maximum (the loop keeps the first of +0 and -0) and for NaN (the loop ignores a NaN after
 * x[0], as each lane does): a zero maximum is found again by the loop. */
static float row_max(const float *x, int n)
{
	float mx = x[0];
	int j = 1;
	if (n >= 16 && !isnan(mx)) {
		float m[8];
		for (int l = 0; l < 8; l++)
			m[l] = mx;
		for (; j + 8 <= n; j += 8)
			for (int l = 0; l < 8; l++)
				m[l] = x[j + l] > m[l] ? x[j + l] : m[l];
		for (int l = 0; l < 8; l++)
			mx = m[l] > mx ? m[l] : mx;
		if (mx == 0) {
			mx = x[0];
			j = 1;
		}
	}
	for (; j < n; j++)
		mx = x[j] > mx ? x[j] : mx;
	return mx;
}

/* Row maximum and log-sum-exp; the sum in double because V reaches 10^5 terms. */
static float row_logsumexp(const float *x, int V)
{
	float mx = row_max(x, V);
	double s = 0;
	float e[EXP_BLOCK];
	for (int j0 = 0; j0 < V; j0 += EXP_BLOCK) {
		int len = V - j0 < EXP_BLOCK ? V - j0 : EXP_BLOCK;
		exps(e, x + j0, mx, 0, (size_t)len);
		for (int j = 0; j < len; j++)
			s += e[j];
	}
	return mx + (float)log(s);
}

typedef struct {
	float *losses, *lse, *dlogits;
	const float *logits, *lse_in, *dloss;
	const int32_t *targets;
	int V;
} xent_args;

static void xent_fwd_rows(const void *args, size_t lo, size_t hi)
{
	const xent_args *a = args;
	for (size_t n = lo; n < hi; n++) {
		const float *x = a->logits + n * a->V;
		float l = row_logsumexp(x, a->V);
		if (a->lse)
			a->lse[n] = l;
		a->losses[n] = a->targets[n] < 0 ? 0 : l - x[a->targets[n]];
	}
}

void llm_xent_fwd(float *losses, float *lse, const float *logits, const int32_t *targets, int N,
                  int V)
{
	xent_args a = { .losses = losses, .lse = lse, .logits = logits, .targets = targets, .V = V };
	par_range((size_t)N, 8, xent_fwd_rows, &a);
}

static void xent_bwd_rows(const void *args, size_t lo, size_t hi)
{
	const xent_args *a = args;
	int V = a->V;
	for (size_t n = lo; n < hi; n++) {
		const float *x = a->logits + n * V;
		float *d = a->dlogits + n * V;
		if (a->targets[n] < 0) {
			memset(d, 0, (size_t)V * sizeof *d);
			continue;
		}
		float l = a->lse_in ? a->lse_in[n] : row_logsumexp(x, V), g = a->dloss[n];
		exps(d, x, l, 0, (size_t)V);
		for (int j = 0; j < V; j++)
			d[j] *= g;
		d[a->targets[n]] -= g;
	}
}

void llm_xent_bwd(float *dlogits, const float *logits, const float *lse, const int32_t *targets,
                  const float *dloss, int N, int V)
{
	xent_args a = { .dlogits = dlogits, .logits = logits, .lse_in = lse, .targets = targets,
		        .dloss = dloss, .V = V };
	par_range((size_t)N, 8, xent_bwd_rows, &a);
}
