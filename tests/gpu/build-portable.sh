#!/bin/sh
# tests/gpu/build-portable.sh — the GPU check and benchmark programs (test_cuda_ops,
# test_cuda_model) and the programs the end-to-end GPU checks run (llm-train, llm-eval,
# llm-tokenize, llm-shard), built here for a GPU machine that has the driver but neither the
# Debian -dev packages nor, perhaps, nvcc: carry build/gpu there and tests/gpu/run.sh uses it.
#
# Differences from the normal build: lib/ without OpenBLAS (the CPU reference runs its portable
# loops; the checks' shapes are small, and OpenBLAS's kernels would add 25 MB per program), the
# CUDA runtime, zstd, PCRE2 and xxHash static, cuBLASLt, NCCL and MPI opened at run time. The
# programs then need only the C and C++ runtimes, the NVIDIA driver and, once they use the
# GPU, libcublasLt.so.13 (the toolkit's, or the one a PyTorch wheel ships; run.sh adds those
# to LD_LIBRARY_PATH).
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
NVCC=${NVCC:-$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "build-portable: nvcc not found (set NVCC)" >&2; exit 1; }
CUDADIR=$(dirname "$(dirname "$NVCC")")
O=build/gpu
make -j"${JOBS:-2}" build/rel/libllmcuda.a
rm -rf "$O" && mkdir -p "$O/obj" "$O/unit" "$O/bin"
CC=${CC:-cc}
FLAGS="-std=c11 -O2 -g -pthread -fno-strict-aliasing -Ilib -D_GNU_SOURCE -DLLM_VERSION=\"portable\"
	-DLLM_HAVE_CUDA=1 -DLLM_HAVE_NCCL=1 -DLLM_HAVE_MPI=1 -isystem $CUDADIR/include"
CUDA_LIBS="-L$CUDADIR/lib64 -lcudart_static -lrt -ldl -lpthread -lstdc++"
DATA_LIBS="-Wl,-Bstatic -lzstd -lpcre2-8 -lxxhash -Wl,-Bdynamic -lm -ldl"
export PB_CC="$CC" PB_FLAGS="$FLAGS" PB_O="$O"
# shellcheck disable=SC2016
ls lib/*/*.c tools/*.c | xargs -P "${JOBS:-2}" -n 1 sh -c \
	'$PB_CC $PB_FLAGS -c "$1" -o "$PB_O/obj/$(basename "$1" .c).o"' sh
ls "$O"/obj/*.o | grep -v -e '/llm-[a-z]*\.o$' -e '/tool\.o$' | xargs ar rcs "$O/libllm.a"
for t in test_cuda_ops test_cuda_model; do
	# shellcheck disable=SC2086
	$CC $FLAGS "tests/unit/$t.c" "$O/libllm.a" build/rel/libllmcuda.a "$O/libllm.a" \
		$CUDA_LIBS -Wl,--as-needed $DATA_LIBS -o "$O/unit/$t"
done
for t in llm-train llm-eval llm-tokenize llm-shard; do
	# shellcheck disable=SC2086
	$CC -pthread "$O/obj/$t.o" "$O/obj/tool.o" "$O/libllm.a" build/rel/libllmcuda.a "$O/libllm.a" \
		$CUDA_LIBS -Wl,--as-needed $DATA_LIBS -o "$O/bin/$t"
done
rm -rf "$O/obj" "$O/libllm.a"
strip --strip-debug "$O"/bin/* # the working tree that travels to the GPU machine is limited
for t in "$O"/unit/* "$O"/bin/*; do
	echo "$t needs: $(readelf -d "$t" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')"
done
du -sh "$O"
