#!/bin/sh
test_description='CUDA backend: build probe both ways, every launcher built and checked, GPU checks skip without a GPU'
. "$(dirname "$0")/../lib.sh"

probe() { env CC=cc BLAS=0 MPI=0 "$@" sh "$TOP/mk/probe.sh" . ; }

test_expect_success 'CUDA=0 builds without CUDA' '
	probe NVCC="$NVCC_BIN" CUDA=0 >config.mk 2>err &&
	grep "^HAVE_CUDA := 0$" config.mk && ! grep LLM_HAVE_CUDA config.mk &&
	test_grep "CUDA: off" err
'

test_expect_success 'CUDA=1 without nvcc fails loudly' '
	test_must_fail probe NVCC=/nonexistent/nvcc CUDA=1 >config.mk 2>err &&
	test_grep "CUDA=1 but nvcc was not found" err
'

test_expect_success 'CUDA=auto without nvcc falls back to the CPU' '
	probe NVCC= CUDA=auto >config.mk 2>err &&
	grep "^HAVE_CUDA := 0$" config.mk && test_grep "nvcc not found, CPU only" err
'

test_expect_success NVCC 'CUDA=auto with nvcc compiles the kernels' '
	probe NVCC="$NVCC_BIN" CUDA=auto >config.mk 2>err &&
	grep "^HAVE_CUDA := 1$" config.mk && grep "^NVCCFLAGS := .*-DLLM_HAVE_CUDA=1" config.mk &&
	grep "^PROBE_CUDA_LDLIBS := .*-lcudart_static" config.mk &&
	! grep "^PROBE_CUDA_LDLIBS := .*-lcublas" config.mk
'

# The launchers gpu.h declares, one per line.
launchers() {
	sed -n "s/^int \(llm_cuda_[a-z0-9_]*\)(.*/\1/p" "$TOP/lib/model/gpu.h" | sort -u
}

test_expect_success CUDA_BUILD 'every launcher of gpu.h is compiled into libllmcuda.a' '
	launchers >want && test $(wc -l <want) -ge 20 &&
	nm -g --defined-only "$TOP/$B/libllmcuda.a" "$TOP/$B/libllm.a" 2>/dev/null |
		sed -n "s/.* T \(llm_cuda_[a-z0-9_]*\)$/\1/p" | sort -u >have &&
	comm -23 want have >missing && test_cmp /dev/null missing
'

test_expect_success 'every op launcher is exercised by the GPU checks' '
	launchers | grep -v -E "_(init|shutdown|device_count|device_info|stream|set_deterministic|deterministic|detail|fail|sync|malloc|free|memset|to_device|to_host|scratch)$" >ops &&
	test $(wc -l <ops) -ge 15 &&
	while read f; do grep -q "$f(" "$TOP/tests/unit/test_cuda_ops.c" || echo "$f"; done <ops >unchecked &&
	test_cmp /dev/null unchecked
'

test_expect_success CUDA_BUILD,!GPU 'without a GPU the checks say skipped, never passed' '
	(cd "$TOP" && B=$B sh tests/gpu/run-checks.sh) >out 2>&1 &&
	test_grep "^check-gpu: skipped" out && test_grep "^0 passed, 0 failed, [1-9][0-9]* skipped$" out &&
	! grep "^ok [0-9]* - [a-z_]*$" out
'

test_expect_success CUDA_BUILD,!GPU 'the benchmark says skipped without a GPU' '
	"$TOP/$B/unit/test_cuda_model" --bench base 8 1024 5 bf16 >out &&
	test_grep "skipped" out &&
	test_must_fail --code=2 "$TOP/$B/unit/test_cuda_model" --bench base 8 1024 5 fp8 2>err &&
	test_grep "precision .fp8. is not fp32, bf16, fp16 or mixed" err
'

test_done
