#!/bin/sh
# tests/gpu/run-checks.sh — `make check-gpu`: every CUDA op against its CPU reference, then
# training on the GPU against the CPU run (tests/unit/test_cuda_ops.c, test_cuda_model.c), then
# llm-train --device cuda end to end (tests/t/t9001).
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
for t in "$B/unit/test_cuda_ops" "$B/unit/test_cuda_model"; do
	if [ ! -x "$t" ]; then
		echo "# ${t##*/}: not built (no nvcc at build time): skipped"
		skip=$((skip + 1))
		continue
	fi
	out=$("$t" 2>&1)
	rc=$?
	echo "$out"
	p=$(echo "$out" | grep -c '^ok .*')
	s=$(echo "$out" | grep -c '^ok .*# skip')
	f=$(echo "$out" | grep -c '^not ok')
	if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - ${t##*/} exited with status $rc"
		f=1
	fi
	pass=$((pass + p - s)) skip=$((skip + s)) fail=$((fail + f))
done
# llm-train --device cuda end to end (tests/t/t9001), when the checks above ran on a GPU and
# the trainer runs on this machine.
if [ $pass -eq 0 ] && [ $fail -eq 0 ]; then
	skip=$((skip + 1))
elif [ -x bin/llm-train ] && bin/llm-train --version >/dev/null 2>&1; then
	out=$(B=$B sh tests/t/t9001-train-device.sh 2>&1)
	echo "$out"
	p=$(echo "$out" | grep -c '^ok .*')
	s=$(echo "$out" | grep -c '^ok .*# skip')
	f=$(echo "$out" | grep -c '^not ok')
	pass=$((pass + p - s)) skip=$((skip + s)) fail=$((fail + f))
else
	echo "# bin/llm-train does not run here: its end-to-end check is skipped"
	skip=$((skip + 1))
fi
if [ $pass -eq 0 ] && [ $fail -eq 0 ]; then
	echo "check-gpu: skipped (no CUDA device, or a build without CUDA)"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
