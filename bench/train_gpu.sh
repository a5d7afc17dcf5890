#!/bin/sh
# bench/train_gpu.sh — GPU training throughput (tokens/s, MFU) of the ~124M "base" preset at
# sequence length 1024, beside PyTorch eager on the same GPU (tests/gpu/torch_gpu.py), by way
# of tests/gpu/run.sh's benchmark part. Without a GPU it says so and exits 0; never fails on a
# time.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
t=$TOP/build/rel/unit/test_cuda_model
if [ ! -x "$t" ]; then
	echo "train_gpu: skipped (built without CUDA)"
	exit 0
fi
r=$("$t" --bench base "${GPU_BENCH_BATCH:-8}" 1024 "${GPU_BENCH_STEPS:-20}" bf16 2>&1 | tail -n 1)
case $r in
*skipped*) echo "train_gpu: skipped (no CUDA device)"; exit 0 ;;
esac
echo "llmkit:  $r"
peak=$(echo "$r" | sed -n 's/.*"peak_tflops": \([0-9.]*\).*/\1/p')
for p in python3 python; do
	if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import torch' 2>/dev/null; then
		echo "pytorch: $("$p" "$TOP/tests/gpu/torch_gpu.py" --batch "${GPU_BENCH_BATCH:-8}" \
			--seq 1024 --steps "${GPU_BENCH_STEPS:-20}" --peak-tflops "${peak:-0}" | tail -n 1)"
		exit 0
	fi
done
echo "(PyTorch not found: the peer column is left out)"
