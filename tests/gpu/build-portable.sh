#!/bin/sh
# tests/gpu/build-portable.sh — the GPU check and benchmark programs (test_cuda_ops,
# test_cuda_model) and the programs the end-to-end GPU checks run (llm-train, llm-eval,
# llm-tokenize, llm-shard), built here for a GPU machine that has the driver but neither the
# Debian -dev packages nor, perhaps, nvcc: carry build/gpu there and tests/gpu/run.sh uses it.
#
# They are the Makefile's PORTABLE=1 flavour (see there: no OpenBLAS, the data libraries and
# the CUDA runtime static, cuBLASLt, NCCL and MPI opened at run time), so they need only the C
# and C++ runtimes, the NVIDIA driver and, once they use the GPU, libcublasLt.so.13 (the
# toolkit's, or the one a PyTorch wheel ships; run.sh adds those to LD_LIBRARY_PATH).
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
NVCC=${NVCC:-$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "build-portable: nvcc not found (set NVCC)" >&2; exit 1; }
P=build/portable O=build/gpu
make -j"${JOBS:-2}" PORTABLE=1 CUDA=1 NVCC="$NVCC" \
	$P/bin/llm-train $P/bin/llm-eval $P/bin/llm-tokenize $P/bin/llm-shard \
	$P/unit/test_cuda_ops $P/unit/test_cuda_model
rm -rf "$O" && mkdir -p "$O/unit" "$O/bin"
cp $P/bin/llm-train $P/bin/llm-eval $P/bin/llm-tokenize $P/bin/llm-shard "$O/bin/"
cp $P/unit/test_cuda_ops $P/unit/test_cuda_model "$O/unit/"
strip --strip-debug "$O"/bin/* # the working tree that travels to the GPU machine is limited
for t in "$O"/unit/* "$O"/bin/*; do
	echo "$t needs: $(readelf -d "$t" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | tr '\n' ' ')"
done
du -sh "$O"
