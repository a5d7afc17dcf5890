#!/bin/sh
test_description='llm-train --device, --precision, --recompute, --zero1: the parts that need no GPU'
. "$(dirname "$0")/../lib.sh"

train() {
	llm-train -q --data data --config cfg.json --batch 2 --seq-len 16 --steps 3 --warmup 1 \
		--eval-every 0 --ckpt-every 0 "$@"
}
losses() { sed -n 's/^{"step": \([0-9]*\), "loss": \([^,]*\),.*/\1 \2/p' "$1"; }

test_expect_success 'setup: the smoke shards' '
	llm-train --smoke --run-dir smoke >/dev/null 2>&1 &&
	cp -r smoke/smoke-data data && cp smoke/smoke-config.json cfg.json
'

test_expect_success 'help lists the device options' '
	llm-train --help >out &&
	grep -e "--device D" out && grep -e "--precision P" out && grep -e "--recompute R" out &&
	grep -e "--zero1" out
'

test_expect_success 'bad values are usage errors naming the choices' '
	test_must_fail --code=2 train --device gpu 2>err &&
	test_grep "device .gpu. is not cpu, cuda or auto" err &&
	test_must_fail --code=2 train --precision fp8 2>err &&
	test_grep "precision .fp8. is not fp32, bf16, fp16 or mixed" err &&
	test_must_fail --code=2 train --recompute some 2>err &&
	test_grep "recompute .some. is not none, ffn or all" err
'

test_expect_success 'GPU-only options on the CPU are usage errors' '
	test_must_fail --code=2 train --precision bf16 2>err && test_grep "need --device cuda" err &&
	test_must_fail --code=2 train --recompute ffn 2>err && test_grep "need --device cuda" err &&
	test_must_fail --code=2 train --zero1 2>err && test_grep "need --device cuda" err &&
	train --run-dir fp32 --precision fp32
'

test_expect_success !GPU '--device cuda without a GPU is a runtime error' '
	test_must_fail train --device cuda --run-dir nogpu 2>err &&
	grep -e "no GPU found" -e "built without CUDA" err
'

test_expect_success !GPU '--device auto without a GPU trains on the CPU, loss for loss' '
	train --device auto --run-dir auto && train --device cpu --run-dir cpu &&
	losses auto/metrics.jsonl >a && losses cpu/metrics.jsonl >c &&
	test_line_count = 3 a && test_cmp c a
'

test_expect_success GPU '--device cuda trains and checkpoints in every precision' '
	for p in fp32 bf16 fp16 mixed; do
		train --device cuda --precision $p --run-dir gpu-$p --ckpt-every 3 || return 1
		test -f gpu-$p/ckpt/latest/model.safetensors || return 1
	done
'

test_done
