#!/bin/sh
# tests/gpu/run.sh — everything a lent GPU machine should run, in one device call: build,
# `make check-gpu` (every CUDA op against the CPU op, GPU training and evaluation against the
# CPU, llm-train and llm-eval --device cuda end to end), and the benchmark: a ~124M-parameter
# LLaMA ("base" preset, vocab 32000) at sequence length 1024, tokens/s and MFU, beside PyTorch
# eager on the same GPU and shapes.
#
#   sh tests/gpu/run.sh            GPU_BUDGET_S (default 510: the whole script, build included,
#                                  inside a 9-minute call), GPU_BENCH_STEPS (default 20),
#                                  GPU_BENCH_BATCH (default 8), GPU_JOBS (default: all cores)
#
# Every phase runs under a timeout cut to what is left of the budget (keeping a reserve for
# the phases after it); a phase that no longer fits is reported as skipped, never run half.
# Logs and a summary go to $OUT (the device tool's result folder) when set, else build/gpu-run.
# Where the machine cannot build (no nvcc, or no -dev packages), run tests/gpu/build-portable.sh
# on one that can and carry build/gpu (about 17 MB); the script then runs those programs. MFU
# is against the GPU's dense bf16 tensor-core peak.
#
# A note on expectations: attention here is a scalar fp32 FlashAttention-style kernel (no
# tensor cores); its share of a 124M step at T = 1024 bounds MFU well below PyTorch's
# FlashAttention-2 path. The number this script prints is the measurement; nothing else is.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP" || exit 1
B=build/rel
LOG=${OUT:-$TOP/build/gpu-run}
mkdir -p "$LOG"
STEPS=${GPU_BENCH_STEPS:-20} BATCH=${GPU_BENCH_BATCH:-8} JOBS=${GPU_JOBS:-$(nproc)}
BUDGET=${GPU_BUDGET_S:-510}
exec 3>&1 >"$LOG/run.log.tmp" 2>&1 </dev/null || exit 1
trap 'mv "$LOG/run.log.tmp" "$LOG/run.log"; cat "$LOG/run.log" >&3' EXIT

START=$(date +%s)
say() { echo "== [$(($(date +%s) - START)) s] $*"; }
# limit CAP RESERVE: seconds the next phase may take (at most CAP, leaving RESERVE for later).
limit() {
	l=$((BUDGET - ($(date +%s) - START) - $2))
	[ $l -gt "$1" ] && l=$1
	echo $l
}
# run CAP RESERVE NAME cmd...: the command under that limit; 124 when it did not fit.
run() {
	t=$(limit "$1" "$2") name=$3
	shift 3
	if [ "$t" -lt 15 ]; then
		say "$name: skipped, out of time (budget ${BUDGET} s)"
		return 124
	fi
	timeout -k 5 "$t" "$@"
	rc=$?
	[ $rc -eq 124 ] && say "$name: stopped after its $t s"
	return $rc
}

say "$(date -u '+%Y-%m-%d %H:%M:%S') on $(hostname), budget ${BUDGET} s"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -n 4

# PyTorch's wheels ship the CUDA libraries; when the system has none, borrow them.
PY=
for p in python3 python; do
	if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import torch' 2>/dev/null; then PY=$p; break; fi
done
if [ -n "$PY" ]; then
	libs=$("$PY" -c 'import glob, os, site, torch
dirs = [os.path.join(os.path.dirname(torch.__file__), "lib")]
for s in site.getsitepackages():
    dirs += glob.glob(os.path.join(s, "nvidia", "*", "lib"))
print(":".join(d for d in dirs if os.path.isdir(d)))' 2>/dev/null)
	[ -n "$libs" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$libs"
	say "torch $("$PY" -c 'import torch; print(torch.__version__, torch.version.cuda)')"
fi

say "build"
have_nvcc=0
{ command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; } && have_nvcc=1
# The normal build needs the -dev headers; without them it would fail only after nvcc's
# minutes, so look first.
have_dev=0
printf '#include <zstd.h>\n#include <pcre2.h>\n#include <xxhash.h>\n' |
	${CC:-cc} -E -DPCRE2_CODE_UNIT_WIDTH=8 - >/dev/null 2>&1 && have_dev=1
if [ $have_nvcc = 1 ] && [ $have_dev = 1 ] &&
   run 240 150 build make -j"$JOBS" "$B/unit/test_cuda_ops" "$B/unit/test_cuda_model" \
	bin/llm-train bin/llm-eval bin/llm-tokenize bin/llm-shard >"$LOG/build.log" 2>&1; then
	tail -n 3 "$LOG/build.log"
	export PATH="$TOP/bin:$PATH"
elif [ -x build/gpu/unit/test_cuda_ops ]; then
	[ $have_nvcc = 1 ] && [ $have_dev = 1 ] && { tail -n 20 "$LOG/build.log"; say "build failed here"; }
	say "using the carried programs of tests/gpu/build-portable.sh (build/gpu)"
	B=build/gpu
	export PATH="$TOP/build/gpu/bin:$PATH"
else
	[ -f "$LOG/build.log" ] && tail -n 40 "$LOG/build.log"
	say "cannot build here (nvcc $have_nvcc, -dev headers $have_dev) and nothing carried: run"
	say "tests/gpu/build-portable.sh on a machine with nvcc and carry build/gpu"
	exit 1
fi
for t in "$B/unit/test_cuda_ops" "$B/unit/test_cuda_model"; do
	[ -x "$t" ] || { say "$t missing: nothing to run"; exit 1; }
	ldd "$t" | grep 'not found' && say "$t: missing libraries above"
done

say "check-gpu"
B=$B run 240 100 check-gpu sh tests/gpu/run-checks.sh >"$LOG/check-gpu.log" 2>&1
check_rc=$?
grep -v '^ok' "$LOG/check-gpu.log" | tail -n 60 # ends with the "N passed" line

say "benchmark: base preset, batch $BATCH x 1024 tokens, $STEPS steps (median)"
ours=$(run 100 60 bench-bf16 "$B/unit/test_cuda_model" --bench base "$BATCH" 1024 "$STEPS" bf16 none 2>&1 |
	tail -n 1)
echo "$ours" | tee "$LOG/bench-llmkit.json"
ffn=$(run 80 50 bench-ffn "$B/unit/test_cuda_model" --bench base "$BATCH" 1024 "$STEPS" bf16 ffn 2>&1 |
	tail -n 1)
echo "$ffn" | tee "$LOG/bench-llmkit-recompute-ffn.json"
peak=$(echo "$ours" | sed -n 's/.*"peak_tflops": \([0-9.]*\).*/\1/p')
if [ -n "$PY" ]; then
	peer=$(run 120 0 bench-pytorch "$PY" tests/gpu/torch_gpu.py --batch "$BATCH" --seq 1024 \
		--steps "$STEPS" --peak-tflops "${peak:-0}" 2>&1 | tail -n 1)
	echo "$peer" | tee "$LOG/bench-pytorch.json"
else
	peer=
	say "no python with torch: PyTorch column left out"
fi
field() { echo "$1" | sed -n "s/.*\"$2\": \"*\([^,\"}]*\).*/\1/p"; }
printf '%-22s %12s %10s %8s %10s\n' impl tokens/s step_s MFU mem_MB
for r in "$ours" "$ffn" "$peer"; do
	case $r in *skipped* | '') continue ;; *'"impl"'*) ;; *) continue ;; esac # no row
	name=$(field "$r" impl)
	[ "$(field "$r" recompute)" = ffn ] && name="$name (recompute ffn)"
	printf '%-22s %12s %10s %8s %10s\n' "$name" "$(field "$r" tokens_per_s)" \
		"$(field "$r" step_s)" "$(field "$r" mfu)" "$(field "$r" gpu_mem_mb)"
done
say "done"
exit $check_rc
