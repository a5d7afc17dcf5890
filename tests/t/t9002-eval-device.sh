#!/bin/sh
test_description='llm-eval --device and --precision: the CPU parts everywhere, GPU against CPU when a GPU answers'
. "$(dirname "$0")/../lib.sh"

OPENBLAS_NUM_THREADS=1
export OPENBLAS_NUM_THREADS

# A number field of llm-eval's JSON, its first occurrence ("all" comes before the domains),
# without jq: GPU machines may lack it.
num() { grep -o "\"$2\": [-0-9.e+]*" "$1" | head -n 1 | sed "s/.*: //"; }
# |a - b| <= tol * |b|
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; exit !(a != "" && d <= t * m) }'; }

test_expect_success 'setup: tokenizer, shards, a short training run, a task' '
	for d in books web wiki; do head -n 10 "$SAMPLES/corpus/$d.jsonl"; done >docs.jsonl &&
	llm-tokenize train -q --vocab-size 384 -o tok.json docs.jsonl &&
	llm-tokenize -q -t tok.json docs.jsonl |
		llm-shard -q --val-fraction 0.3 --tokenizer tok.json -o shards &&
	llm-train -q --data shards --model tiny --batch 4 --seq-len 32 --steps 6 --warmup 2 \
		--lr 3e-3 --eval-every 0 --ckpt-every 0 --run-dir run &&
	head -n 12 "$SAMPLES/eval/next-sentence.jsonl" >task.jsonl
'

test_expect_success 'help lists --device and --precision' '
	llm-eval --help >out &&
	grep -e "--device D" out && grep -e "--precision P" out
'

test_expect_success 'bad values and GPU-only options are usage errors' '
	test_must_fail --code=2 llm-eval loss --ckpt run --device gpu shards 2>err &&
	test_grep "device .gpu. is not cpu, cuda or auto" err &&
	test_must_fail --code=2 llm-eval loss --ckpt run --device cuda --precision fp8 shards 2>err &&
	test_grep "precision .fp8. is not fp32, bf16, fp16 or mixed" err &&
	test_must_fail --code=2 llm-eval loss --ckpt run --precision bf16 shards 2>err &&
	test_grep "needs --device cuda" err &&
	test_must_fail --code=2 llm-eval generate --ckpt run -t tok.json --prompt a --device cuda 2>err &&
	test_grep "generate runs on the CPU only" err
'

test_expect_success 'generate with --device auto runs on the CPU' '
	llm-eval generate -q --ckpt run -t tok.json --prompt "The" --max-tokens 4 --ids \
		--temperature 0 --device auto >a &&
	llm-eval generate -q --ckpt run -t tok.json --prompt "The" --max-tokens 4 --ids \
		--temperature 0 >b &&
	test_cmp b a
'

test_expect_success !GPU '--device cuda without a GPU is a runtime error that says why' '
	test_must_fail llm-eval loss --ckpt run --seq-len 32 --device cuda shards 2>err &&
	grep -e "no GPU found" -e "built without CUDA" err
'

test_expect_success !GPU '--device auto without a GPU gives the CPU numbers' '
	llm-eval loss -q --ckpt run -t tok.json --seq-len 32 --device auto --json auto.json shards >a &&
	llm-eval loss -q --ckpt run -t tok.json --seq-len 32 --json cpu.json shards >c &&
	test_cmp c a && grep "\"device\": \"cpu\", \"precision\": \"fp32\"" auto.json
'

# Stated tolerances (eval.h, test_cuda_model): fp32 1e-5 relative, bf16 2e-2.
test_expect_success GPU 'loss and bits per byte on the GPU equal the CPU (fp32 1e-5, bf16 2e-2)' '
	llm-eval loss -q --ckpt run -t tok.json --seq-len 32 --json cpu.json shards &&
	for p in fp32 bf16; do
		tol=1e-5; [ $p = bf16 ] && tol=2e-2
		llm-eval loss -q --ckpt run -t tok.json --seq-len 32 --device cuda --precision $p \
			--json $p.json shards || return 1
		grep "\"device\": \"cuda\", \"precision\": \"$p\"" $p.json || return 1
		test "$(num $p.json tokens)" = "$(num cpu.json tokens)" || return 1
		test "$(num $p.json bytes)" = "$(num cpu.json bytes)" || return 1
		for f in loss bits_per_byte; do
			echo "$p $f: gpu $(num $p.json $f), cpu $(num cpu.json $f)"
			near "$(num $p.json $f)" "$(num cpu.json $f)" $tol || return 1
		done
	done
'

test_expect_success GPU 'the trainer'"'"'s sampled batches and choice on the GPU' '
	llm-eval loss -q --ckpt run --sampled 2 --seed 1 --batch 4 --seq-len 32 --json s-cpu.json shards &&
	llm-eval loss -q --ckpt run --sampled 2 --seed 1 --batch 4 --seq-len 32 --device cuda \
		--json s-gpu.json shards &&
	near "$(num s-gpu.json loss)" "$(num s-cpu.json loss)" 1e-5 &&
	llm-eval choice -q --ckpt run -t tok.json --json c-cpu.json task.jsonl &&
	llm-eval choice -q --ckpt run -t tok.json --device cuda --json c-gpu.json task.jsonl &&
	test "$(num c-gpu.json items)" = 12 &&
	test "$(num c-gpu.json acc)" = "$(num c-cpu.json acc)" &&
	test "$(num c-gpu.json acc_norm)" = "$(num c-cpu.json acc_norm)"
'

test_done
