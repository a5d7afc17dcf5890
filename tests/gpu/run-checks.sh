#!/bin/sh
# tests/gpu/run-checks.sh — `make check-gpu`: every CUDA op against its CPU reference, then
# training and evaluation on the GPU against the CPU (tests/unit/test_cuda_ops.c,
# test_cuda_model.c), then llm-train and llm-eval --device cuda end to end (tests/t/t9001,
# t9002) with the programs first on PATH (bin/, or build/gpu/bin where run.sh put it).
#
# Prints each check's TAP lines and a last line "N passed, N failed, N skipped". Without a GPU
# (or without CUDA in the build) every check is reported as skipped, never passed; the exit
# status is 0 then, and 1 when any check failed. LLM_TEST_SEED repeats a run's random inputs.
set -u
: "${B:=build/rel}"
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP" || exit 1
export LLM_TOP="$TOP"
pass=0 fail=0 skip=0
count() { # count OUTPUT RC: add a program's TAP results to the totals
	p=$(echo "$1" | grep -c '^ok .*')
	s=$(echo "$1" | grep -c '^ok .*# skip')
	f=$(echo "$1" | grep -c '^not ok')
	if [ "$2" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - exited with status $2"
		f=1
	fi
	pass=$((pass + p - s)) skip=$((skip + s)) fail=$((fail + f))
}
for t in "$B/unit/test_cuda_ops" "$B/unit/test_cuda_model"; do
	if [ ! -x "$t" ]; then
		echo "# ${t##*/}: not built (no nvcc at build time): skipped"
		skip=$((skip + 1))
		continue
	fi
	out=$("$t" 2>&1)
	rc=$?
	echo "$out"
	count "$out" $rc
done
# The programs end to end, when the checks above ran on a GPU and the programs run here.
gpu=1
[ $pass -eq 0 ] && [ $fail -eq 0 ] && gpu=0
PATH=$TOP/bin:$PATH
for t in tests/t/t9001-train-device.sh tests/t/t9002-eval-device.sh; do
	if [ $gpu = 0 ]; then
		skip=$((skip + 1))
	elif llm-train --version >/dev/null 2>&1 && llm-eval --version >/dev/null 2>&1; then
		out=$(B=$B sh "$t" 2>&1)
		rc=$?
		echo "$out"
		count "$out" $rc
	else
		echo "# llm-train or llm-eval does not run here: ${t##*/} is skipped"
		skip=$((skip + 1))
	fi
done
if [ $pass -eq 0 ] && [ $fail -eq 0 ]; then
	echo "check-gpu: skipped (no CUDA device, or a build without CUDA)"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
