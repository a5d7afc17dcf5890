/*
 * runtime.cu — device, stream, errors, memory and scratch of the CUDA backend (gpu.h).
 *
 * One stream carries all work so that the order of kernels is the order of calls; the
 * data-parallel code adds its own communication stream and orders it with events.
 */
#include <stdio.h>
#include <string.h>

#include "common.cuh"

static cudaStream_t g_stream;
static int g_device = -1, g_deterministic;
static void *g_scratch;
static size_t g_scratch_size;
static __thread char g_detail[512];

extern "C" int llm_cuda_report(int status, const char *what, const char *err, const char *file,
                               int line)
{
	const char *base = strrchr(file, '/');
	snprintf(g_detail, sizeof g_detail, "cuda: %s: %s (%s:%d)", what, err, base ? base + 1 : file,
	         line);
	return status;
}

int llm_cuda_check(cudaError_t e, const char *what, const char *file, int line)
{
	int status = e == cudaErrorMemoryAllocation ? LLM_ENOMEM
	             : e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver ||
	                       e == cudaErrorNoKernelImageForDevice
	                 ? LLM_EUNSUPPORTED
	                 : LLM_EINTERNAL;
	return llm_cuda_report(status, what, cudaGetErrorString(e), file, line);
}

extern "C" const char *llm_cuda_detail(void) { return g_detail[0] ? g_detail : "cuda: unknown error"; }

extern "C" int llm_cuda_device_count(void)
{
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess) {
		cudaGetLastError(); /* clear it: "no device" is an answer, not a sticky error */
		return 0;
	}
	return n;
}

int llm_cuda_blas_init(void);
void llm_cuda_blas_shutdown(void);

extern "C" int llm_cuda_init(int device)
{
	if (g_device == device)
		return LLM_OK;
	if (g_device >= 0)
		return llm_cuda_report(LLM_EINVAL, "init", "already using another device", __FILE__,
		                       __LINE__);
	CUDA_TRY(cudaSetDevice(device));
	CUDA_TRY(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
	g_device = device;
	return llm_cuda_blas_init();
}

extern "C" void llm_cuda_shutdown(void)
{
	if (g_device < 0)
		return;
	cudaStreamSynchronize(g_stream);
	llm_cuda_blas_shutdown();
	cudaFree(g_scratch);
	g_scratch = NULL;
	g_scratch_size = 0;
	cudaStreamDestroy(g_stream);
	g_stream = NULL;
	g_device = -1;
}

/* Dense bf16 tensor-core peaks from NVIDIA's data sheets, for MFU; unknown parts report 0 and
 * the caller asks for --peak-tflops. */
static double bf16_peak(const char *name)
{
	static const struct { const char *key; double tflops; } t[] = {
		{ "H200", 989 }, { "H100 PCIe", 756 }, { "H100", 989 }, { "H800", 989 },
		{ "GH200", 989 }, { "A100", 312 }, { "A800", 312 }, { "L40S", 362 },
		{ "B200", 2250 }, { "A10G", 70 }, { "L4", 121 },
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++)
		if (strstr(name, t[i].key))
			return t[i].tflops * 1e12;
	return 0;
}

extern "C" int llm_cuda_device_info(char *name, size_t cap, int *sms, double *peak)
{
	cudaDeviceProp p;
	CUDA_TRY(cudaGetDeviceProperties(&p, g_device < 0 ? 0 : g_device));
	if (name && cap)
		snprintf(name, cap, "%s", p.name);
	if (sms)
		*sms = p.multiProcessorCount;
	if (peak)
		*peak = bf16_peak(p.name);
	return LLM_OK;
}

extern "C" void *llm_cuda_stream(void) { return g_stream; }
extern "C" void llm_cuda_set_deterministic(int on) { g_deterministic = on; }
extern "C" int llm_cuda_deterministic(void) { return g_deterministic; }

extern "C" int llm_cuda_sync(void)
{
	CUDA_TRY(cudaStreamSynchronize(g_stream));
	return LLM_OK;
}

extern "C" int llm_cuda_malloc(void **p, size_t bytes)
{
	*p = NULL;
	CUDA_TRY(cudaMalloc(p, bytes ? bytes : 1));
	return LLM_OK;
}

extern "C" void llm_cuda_free(void *p)
{
	if (p)
		cudaFree(p);
}

extern "C" int llm_cuda_memset(void *p, int byte, size_t bytes)
{
	CUDA_TRY(cudaMemsetAsync(p, byte, bytes, g_stream));
	return LLM_OK;
}

extern "C" int llm_cuda_to_device(void *dst, const void *src, size_t bytes)
{
	CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, g_stream));
	CUDA_TRY(cudaStreamSynchronize(g_stream));
	return LLM_OK;
}

extern "C" int llm_cuda_to_host(void *dst, const void *src, size_t bytes)
{
	CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, g_stream));
	CUDA_TRY(cudaStreamSynchronize(g_stream));
	return LLM_OK;
}

extern "C" int llm_cuda_scratch(void **p, size_t bytes)
{
	if (bytes > g_scratch_size) {
		/* Kernels queued earlier may still read the old buffer. */
		CUDA_TRY(cudaStreamSynchronize(g_stream));
		cudaFree(g_scratch);
		g_scratch = NULL;
		g_scratch_size = 0;
		CUDA_TRY(cudaMalloc(&g_scratch, bytes));
		g_scratch_size = bytes;
	}
	*p = g_scratch;
	return LLM_OK;
}
