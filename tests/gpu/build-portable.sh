#!/bin/sh
# tests/gpu/build-portable.sh — the GPU check and benchmark programs (test_cuda_ops,
# test_cuda_model) built here for a GPU machine that has the driver but neither nvcc nor the
# Debian -dev packages: carry build/gpu there and tests/gpu/run.sh uses it.
#
# Differences from the normal build: lib/ without OpenBLAS (the CPU reference runs its portable
# loops; the checks' shapes are small), the CUDA runtime static, NCCL opened at run time. The
# programs then need only the C and C++ runtimes, the NVIDIA driver and libcublasLt.so.13 (the
# toolkit's, or the one a PyTorch wheel ships; run.sh adds those to LD_LIBRARY_PATH).
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
NVCC=${NVCC:-$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "build-portable: nvcc not found (set NVCC)" >&2; exit 1; }
CUDADIR=$(dirname "$(dirname "$NVCC")")
O=build/gpu
make -j"${JOBS:-2}" build/rel/libllmcuda.a
rm -rf "$O" && mkdir -p "$O/obj" "$O/unit"
CC=${CC:-cc}
FLAGS="-std=c11 -O2 -g -pthread -fno-strict-aliasing -Ilib -D_GNU_SOURCE -DLLM_VERSION=\"portable\"
	-DLLM_HAVE_CUDA=1 -DLLM_HAVE_NCCL=1 -isystem $CUDADIR/include"
for f in lib/*.c; do
	n=${f##*/}
	# shellcheck disable=SC2086
	$CC $FLAGS -c "$f" -o "$O/obj/${n%.c}.o"
done
ar rcs "$O/libllm.a" "$O"/obj/*.o
for t in test_cuda_ops test_cuda_model; do
	# shellcheck disable=SC2086
	$CC $FLAGS "tests/unit/$t.c" "$O/libllm.a" build/rel/libllmcuda.a "$O/libllm.a" \
		-L"$CUDADIR/lib64" -lcublasLt -lcudart_static -lrt -ldl -lpthread -lstdc++ \
		-Wl,--as-needed -lzstd -lpcre2-8 -lxxhash -larchive -lm -o "$O/unit/$t"
done
rm -rf "$O/obj" "$O/libllm.a"
for t in "$O"/unit/*; do
	echo "$t needs: $(readelf -d "$t" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')"
done
du -sh "$O"
