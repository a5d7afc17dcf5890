/*
 * matmul.cu — llm_gemm and llm_matmul_fwd/bwd on cuBLASLt (gpu.h).
 *
 * cuBLASLt is column-major; a row-major X[r,c] with row stride ld is the column-major X^T with
 * the same leading dimension, so row-major D = op(A) op(B) is computed as the column-major
 * D^T = op(B)^T op(A)^T: the operands swap and the transpose flags keep their meaning.
 *
 * Accumulation is always fp32 (CUBLAS_COMPUTE_32F: true fp32 for fp32 operands, not TF32, so
 * the fp32 check against the CPU holds at 1e-5). The algorithm comes from cuBLASLt's heuristic
 * and is cached per shape: asking costs tens of microseconds, a model has a few dozen shapes.
 *
 * libcublasLt is opened at run time (dlopen, on the first GPU use), like libnccl: the programs
 * then start, and run on the CPU, on machines without the CUDA libraries, and a CPU run does
 * not pay for loading the library (about 0.2 s).
 */
#include <cublasLt.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "common.cuh"

enum { WORKSPACE = 32 << 20, CACHE = 128 }; /* Hopper wants 32 MiB for its best kernels */

static cublasLtHandle_t g_lt;
static void *g_ws;

typedef struct {
	int ta, tb, M, N, K, lda, ldb, ldc, ldd, ab, cd, det, beta0, align[4];
	cublasLtMatmulAlgo_t algo;
	int used;
} algo_entry;
static algo_entry g_cache[CACHE];
static int g_cache_next;

static int lt_check(cublasStatus_t s, const char *what, int line)
{
	if (s == CUBLAS_STATUS_SUCCESS)
		return LLM_OK;
	char err[64];
	snprintf(err, sizeof err, "cuBLAS status %d", (int)s);
	return llm_cuda_report(s == CUBLAS_STATUS_ALLOC_FAILED ? LLM_ENOMEM
	                       : s == CUBLAS_STATUS_NOT_SUPPORTED ? LLM_EUNSUPPORTED
	                                                          : LLM_EINTERNAL,
	                       what, err, __FILE__, line);
}

#define LT_TRY(call)                                                     \
	do {                                                             \
		int rc_ = lt_check((call), #call, __LINE__);             \
		if (rc_) {                                               \
			rc = rc_;                                        \
			goto out;                                        \
		}                                                        \
	} while (0)

#define LT_FUNCS(X)                                                                      \
	X(cublasLtCreate) X(cublasLtDestroy) X(cublasLtMatmulDescCreate)                  \
	X(cublasLtMatmulDescDestroy) X(cublasLtMatmulDescSetAttribute)                    \
	X(cublasLtMatrixLayoutCreate) X(cublasLtMatrixLayoutDestroy)                      \
	X(cublasLtMatmulPreferenceCreate) X(cublasLtMatmulPreferenceDestroy)              \
	X(cublasLtMatmulPreferenceSetAttribute) X(cublasLtMatmulAlgoGetHeuristic)         \
	X(cublasLtMatmul)

static struct {
#define LT_PTR(f) decltype(&::f) f;
	LT_FUNCS(LT_PTR)
#undef LT_PTR
} lt;

#define LT_STR_(x) #x
#define LT_STR(x) LT_STR_(x)

/* Open the cuBLASLt of the major version the kernels were built against. */
static int lt_open(void)
{
	static int opened;
	if (opened)
		return LLM_OK;
	static const char *const names[] = { "libcublasLt.so." LT_STR(CUBLAS_VER_MAJOR),
		                             "libcublasLt.so" };
	void *h = NULL;
	for (size_t i = 0; i < 2 && !h; i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return llm_fail(LLM_EUNSUPPORTED,
		                "cannot open %s (%s): install the CUDA toolkit's cuBLAS, or put the "
		                "directory of PyTorch's nvidia-cublas library on LD_LIBRARY_PATH",
		                names[0], dlerror());
#define LT_SYM(f)                                                                          \
	if (!(lt.f = (decltype(&::f))dlsym(h, #f)))                                        \
		return llm_fail(LLM_EUNSUPPORTED, "%s has no %s: not the cuBLASLt %d this "      \
		                "build needs", names[0], #f, CUBLAS_VER_MAJOR);
	LT_FUNCS(LT_SYM)
#undef LT_SYM
	opened = 1;
	return LLM_OK;
}

int llm_cuda_blas_init(void)
{
	int rc = lt_open();
	if (rc)
		return rc;
	rc = lt_check(lt.cublasLtCreate(&g_lt), "cublasLtCreate", __LINE__);
	if (rc)
		return rc;
	CUDA_TRY(cudaMalloc(&g_ws, WORKSPACE));
	memset(g_cache, 0, sizeof g_cache);
	return LLM_OK;
}

void llm_cuda_blas_shutdown(void)
{
	cudaFree(g_ws);
	g_ws = NULL;
	if (g_lt)
		lt.cublasLtDestroy(g_lt);
	g_lt = NULL;
}

/* Largest power of two (up to 256) dividing the address. cuBLASLt's heuristic assumes 256-byte
 * aligned operands unless told otherwise, and a tensor inside the flat parameter array (or a
 * row offset into an activation) is often aligned to far less. */
static uint32_t alignment(const void *p)
{
	uint32_t a = 256;
	while (a > 1 && (uintptr_t)p % a)
		a >>= 1;
	return a;
}

static cudaDataType_t cuda_type(llm_dtype t)
{
	return t == LLM_DT_BF16 ? CUDA_R_16BF : t == LLM_DT_F16 ? CUDA_R_16F : CUDA_R_32F;
}

/* The descriptors of one product: the operation and the four matrix layouts. */
typedef struct {
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t la, lb, lc, ld;
} gemm_desc;

static void desc_destroy(gemm_desc *g)
{
	if (g->ld)
		lt.cublasLtMatrixLayoutDestroy(g->ld);
	if (g->lc)
		lt.cublasLtMatrixLayoutDestroy(g->lc);
	if (g->lb)
		lt.cublasLtMatrixLayoutDestroy(g->lb);
	if (g->la)
		lt.cublasLtMatrixLayoutDestroy(g->la);
	if (g->op)
		lt.cublasLtMatmulDescDestroy(g->op);
}

/* Column-major view of the row-major product: m = N, n = M; the first operand is B, the
 * second A. What was created is in g even on failure (desc_destroy frees it). */
static int desc_create(gemm_desc *g, int ta, int tb, int M, int N, int K, llm_dtype ab, int lda,
                       int ldb, llm_dtype cd, int ldc, int ldd)
{
	int rc = LLM_OK;
	cublasOperation_t opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N, opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
	LT_TRY(lt.cublasLtMatmulDescCreate(&g->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
	LT_TRY(lt.cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSA, &opb, sizeof opb));
	LT_TRY(lt.cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSB, &opa, sizeof opa));
	/* Stored shapes (column-major rows x cols) of the two operands. */
	LT_TRY(lt.cublasLtMatrixLayoutCreate(&g->la, cuda_type(ab), tb ? K : N, tb ? N : K, ldb));
	LT_TRY(lt.cublasLtMatrixLayoutCreate(&g->lb, cuda_type(ab), ta ? M : K, ta ? K : M, lda));
	LT_TRY(lt.cublasLtMatrixLayoutCreate(&g->lc, cuda_type(cd), N, M, ldc));
	LT_TRY(lt.cublasLtMatrixLayoutCreate(&g->ld, cuda_type(cd), N, M, ldd));
out:
	return rc;
}

/* The cached algorithm for key, or NULL. */
static algo_entry *cache_find(const algo_entry *key)
{
	for (int i = 0; i < CACHE; i++)
		if (g_cache[i].used && memcmp(&g_cache[i], key, offsetof(algo_entry, algo)) == 0)
			return &g_cache[i];
	return NULL;
}

/* The preferences of the search: the workspace, the operands' alignments and, in
 * deterministic mode, no split-K. */
static int set_preferences(cublasLtMatmulPreference_t pref, const algo_entry *key)
{
	int rc = LLM_OK;
	size_t ws = WORKSPACE;
	LT_TRY(lt.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
	                                              &ws, sizeof ws));
	static const cublasLtMatmulPreferenceAttributes_t align_attr[4] = {
		CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
		CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES
	};
	for (int i = 0; i < 4; i++) {
		uint32_t al = (uint32_t)key->align[i];
		LT_TRY(lt.cublasLtMatmulPreferenceSetAttribute(pref, align_attr[i], &al, sizeof al));
	}
	if (key->det) {
		/* No split-K: each output is one accumulation in a fixed order, so the result
		 * cannot depend on how partial products meet. Slower for skinny shapes;
		 * deterministic mode is for tests. */
		uint32_t mask = CUBLASLT_REDUCTION_SCHEME_NONE;
		LT_TRY(lt.cublasLtMatmulPreferenceSetAttribute(
			pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask, sizeof mask));
	}
out:
	return rc;
}

/* cuBLASLt's best algorithm for the product, into the next cache slot (*hit). */
static int choose_algo(const gemm_desc *g, const algo_entry *key, algo_entry **hit)
{
	cublasLtMatmulPreference_t pref = NULL;
	cublasLtMatmulHeuristicResult_t res;
	int rc = LLM_OK, found = 0;
	LT_TRY(lt.cublasLtMatmulPreferenceCreate(&pref));
	if ((rc = set_preferences(pref, key)) != LLM_OK)
		goto out;
	LT_TRY(lt.cublasLtMatmulAlgoGetHeuristic(g_lt, g->op, g->la, g->lb, g->lc, g->ld, pref, 1,
	                                         &res, &found));
	if (!found) {
		rc = llm_cuda_report(LLM_EUNSUPPORTED, "cublasLtMatmulAlgoGetHeuristic",
		                     "no algorithm for this shape and type", __FILE__, __LINE__);
		goto out;
	}
	*hit = &g_cache[g_cache_next];
	g_cache_next = (g_cache_next + 1) % CACHE;
	**hit = *key;
	(*hit)->algo = res.algo;
out:
	if (pref)
		lt.cublasLtMatmulPreferenceDestroy(pref);
	return rc;
}

/* A launch's error, and in deterministic mode the product finished. */
static int launched(void)
{
	cudaError_t e = cudaGetLastError();
	if (e == cudaSuccess && llm_cuda_deterministic())
		e = cudaStreamSynchronize(STREAM);
	return e != cudaSuccess ? llm_cuda_check(e, "cublasLtMatmul", __FILE__, __LINE__) : LLM_OK;
}

extern "C" int llm_cuda_gemm(int ta, int tb, int M, int N, int K, float alpha, llm_dtype ab,
                             const void *A, int lda, const void *B, int ldb, float beta,
                             llm_dtype cd, const void *C, int ldc, void *D, int ldd)
{
	if (M <= 0 || N <= 0)
		return LLM_OK;
	if (!g_lt)
		return llm_cuda_report(LLM_EINVAL, "gemm", "llm_cuda_init was not called", __FILE__,
		                       __LINE__);
	if (cd != ab && cd != LLM_DT_F32)
		return llm_cuda_report(LLM_EUNSUPPORTED, "gemm", "output type must be the input type or fp32",
		                       __FILE__, __LINE__);
	if (!C || beta == 0) {
		C = D;
		ldc = ldd;
	}
	gemm_desc g = { NULL, NULL, NULL, NULL, NULL };
	algo_entry key, *hit;
	memset(&key, 0, sizeof key);
	key.ta = ta, key.tb = tb, key.M = M, key.N = N, key.K = K, key.lda = lda, key.ldb = ldb;
	key.ldc = ldc, key.ldd = ldd, key.ab = ab, key.cd = cd;
	key.det = llm_cuda_deterministic(), key.beta0 = beta == 0;
	/* In cuBLASLt's operand order: its A is our B. */
	key.align[0] = (int)alignment(B), key.align[1] = (int)alignment(A);
	key.align[2] = (int)alignment(C), key.align[3] = (int)alignment(D);
	key.used = 1;
	int rc = desc_create(&g, ta, tb, M, N, K, ab, lda, ldb, cd, ldc, ldd);
	if (rc == LLM_OK && !(hit = cache_find(&key)))
		rc = choose_algo(&g, &key, &hit);
	if (rc == LLM_OK) {
		LT_TRY(lt.cublasLtMatmul(g_lt, g.op, &alpha, B, g.la, A, g.lb, &beta, C, g.lc, D, g.ld,
		                         &hit->algo, g_ws, WORKSPACE, STREAM));
		rc = launched();
	}
out:
	desc_destroy(&g);
	return rc;
}

extern "C" int llm_cuda_matmul_fwd(llm_dtype t, llm_dtype ot, void *out, float beta,
                                   const void *inp, const void *w, int N, int K, int M)
{
	return llm_cuda_gemm(0, 1, N, M, K, 1.0f, t, inp, K, w, K, beta, ot, out, M, out, M);
}

extern "C" int llm_cuda_matmul_bwd(llm_dtype t, llm_dtype dt_in, void *dinp, float beta_in,
                                   float *dw, const void *dout, const void *inp, const void *w,
                                   int N, int K, int M)
{
	int rc;
	if (dinp && (rc = llm_cuda_gemm(0, 0, N, K, M, 1.0f, t, dout, M, w, K, beta_in, dt_in, dinp, K,
	                                dinp, K)))
		return rc;
	if (dw && (rc = llm_cuda_gemm(1, 0, M, K, N, 1.0f, t, dout, M, inp, K, 1.0f, LLM_DT_F32, dw, K,
	                              dw, K)))
		return rc;
	return LLM_OK;
}
