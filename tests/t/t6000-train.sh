#!/bin/sh
test_description='llm-train: options, smoke loop, logs, checkpoints, exact resume'
. "$(dirname "$0")/../lib.sh"

# Loss per step from metrics.jsonl ("STEP LOSS"), the last line of each step winning (a
# rolled-back step is logged again when it is redone).
losses() {
	sed -n 's/^{"step": \([0-9]*\), "loss": \([^,]*\),.*/\1 \2/p' "$1" |
	awk '{ l[$1] = $2 } END { for (s in l) print s, l[s] }' | sort -n
}

# Tiny model on the smoke shards: fast enough for a few steps per test.
train() {
	llm-train -q --data data --config cfg.json --batch 2 --seq-len 32 --warmup 2 \
		--lr 1e-2 --eval-every 0 "$@"
}

test_expect_success 'help and version' '
	llm-train --help >out && grep "^usage: llm-train --data MANIFEST" out &&
	llm-train --version
'

test_expect_success 'bad usage exits 2' '
	test_must_fail --code=2 llm-train --bogus 2>err &&
	test_must_fail --code=2 llm-train 2>err && test_grep "data is required" err &&
	test_must_fail --code=2 llm-train --data x --on-spike never 2>err &&
	test_must_fail --code=2 llm-train --data x --plateau 5,0.05 2>err &&
	test_must_fail --code=2 llm-train --data x --batch 0 2>err &&
	test_must_fail --code=2 llm-train --data x --inject-fault nan 2>err &&
	test_must_fail --code=2 llm-train --data x --skip-batches 1,x 2>err
'

test_expect_success 'missing manifest is a runtime error naming it' '
	test_must_fail llm-train --data nowhere/manifest.json 2>err &&
	test_grep "nowhere/manifest.json" err
'

test_expect_success 'presets and their parameter counts' '
	llm-train --list-models --vocab 32000 >out &&
	grep "^tiny " out && grep "^1b .* 1100048384$" out
'

test_expect_success 'the man page examples that need no shards run' '
	sed -n "/^\.Sh EXAMPLES/,/^\.Sh/p" "$TOP/man/man1/llm-train.1" |
		grep -e "^llm-train --smoke" -e "^llm-train --list-models" >examples &&
	test_line_count = 2 examples &&
	sh -e examples >out 2>err && grep "^compare: identical$" out && grep "^small " out
'

test_expect_success 'smoke loop: load, train, eval, checkpoint, resume, compare' '
	llm-train --smoke --run-dir smoke >out 2>err &&
	grep "^  model.layers.1.mlp.down_proj.weight  *F32 \[32, 64\]$" out &&
	grep "^compare: identical$" out &&
	cp -r smoke/smoke-data data && cp smoke/smoke-config.json cfg.json
'

test_expect_success JQ 'the start line says how much of the model is the vocabulary, and warns when most is' '
	llm-train --data data --config cfg.json --steps 1 --batch 2 --seq-len 32 --run-dir v1 2>err &&
	grep -q "vocab 61: .* parameters, [0-9]*% of them the vocabulary.s;" err &&
	test_must_fail grep -q "output layer" err &&
	jq ".vocab_size = 60000" cfg.json >big.json &&
	llm-train --data data --config big.json --steps 1 --batch 2 --seq-len 32 --run-dir v2 2>err &&
	grep -q "vocab 60000: 3.86M parameters, 100% of them the vocabulary.s;" err &&
	grep -q "the output layer over 60000 tokens is 99% of each step.s products" err
'

test_expect_success 'training lowers the loss and writes the run directory' '
	train --steps 12 --run-dir r1 --eval-every 6 --eval-batches 2 --layer-norms &&
	losses r1/metrics.jsonl >l && test_line_count = 12 l &&
	first=$(head -n 1 l | cut -d" " -f2) && last=$(tail -n 1 l | cut -d" " -f2) &&
	awk -v a="$first" -v b="$last" "BEGIN { exit !(b < a) }" &&
	for k in smoothed_loss lr grad_norm param_norm update_ratio tokens_per_s mfu longest_seq \
		batch_id mem_mb grad_norm_layer_1; do
		grep -q "\"$k\": " r1/metrics.jsonl || { echo "no $k"; exit 1; }
	done &&
	grep "\"step\": 6, .*\"val_loss\": [0-9]" r1/metrics.jsonl &&
	grep "^llm_train_loss [0-9]" r1/metrics.prom &&
	test -s r1/events.out.tfevents.* &&
	grep "\"manifest_hash\": \"[0-9a-f]\{16\}\"" r1/train.json &&
	cmp data/manifest.json r1/data-manifest.json &&
	grep "\"model_type\": \"llama\"" r1/config.json &&
	test "$(readlink r1/ckpt/latest)" = step-0000012 &&
	for f in config.json model.safetensors optimizer.safetensors state.json; do
		test -s r1/ckpt/step-0000012/$f || exit 1
	done
'

test_expect_success 'resume continues bit for bit: 2N straight = N + resume N' '
	train --steps 8 --run-dir straight --ckpt-every 4 &&
	train --steps 4 --run-dir split --ckpt-every 4 --decay-steps 8 &&
	train --steps 8 --run-dir split --ckpt-every 4 --resume &&
	losses straight/metrics.jsonl >a && losses split/metrics.jsonl >b &&
	test_line_count = 8 a && test_cmp a b &&
	cmp straight/ckpt/step-0000008/model.safetensors split/ckpt/step-0000008/model.safetensors &&
	cmp straight/ckpt/step-0000008/optimizer.safetensors split/ckpt/step-0000008/optimizer.safetensors
'

test_expect_success 'resume refuses other batch shapes' '
	test_must_fail --code=2 train --steps 10 --run-dir split --resume --batch 3 2>err &&
	test_grep "same --batch" err
'

test_expect_success 'a corrupt checkpoint or shard is an error naming the file' '
	cp -r split bad && printf "garbage" >bad/ckpt/step-0000008/model.safetensors &&
	test_must_fail train --steps 10 --run-dir bad --resume 2>err &&
	test_grep "model.safetensors" err &&
	cp -r data baddata && printf "x" | dd of=baddata/train-00000.bin bs=1 seek=5000 conv=notrunc \
		2>/dev/null &&
	test_must_fail llm-train -q --data baddata --config cfg.json --steps 1 --run-dir bd 2>err &&
	test_grep "train-00000.bin" err &&
	printf "%s" "{\"hidden_size\": 32, \"intermediate_size\": 64, \"num_hidden_layers\": 1,
		\"num_attention_heads\": 4, \"vocab_size\": 50}" >small-vocab.json &&
	test_must_fail llm-train -q --data data --config small-vocab.json --steps 1 --run-dir sv \
		2>err && test_grep "vocabulary of 50" err
'

test_expect_success 'keep-last-N and light checkpoints' '
	train --steps 9 --run-dir k --ckpt-every 3 --keep 2 --light-every 2 &&
	ls k/ckpt >dirs &&
	printf "latest\nmodel-0000004\nmodel-0000008\nstep-0000006\nstep-0000009\n" >expect &&
	test_cmp expect dirs && ! test -e k/ckpt/model-0000008/optimizer.safetensors &&
	test -s k/ckpt/model-0000008/model.safetensors
'

test_expect_success 'non-finite gradients: the step is skipped and counted' '
	train --steps 5 --run-dir nf --inject-fault nan@3 2>err &&
	grep "\"step\": 3, \"event\": \"nonfinite_skipped\"" nf/metrics.jsonl &&
	grep "\"step\": 5, .*\"nonfinite_steps\": 1," nf/metrics.jsonl &&
	grep "\"adam_t\": 4," nf/ckpt/step-0000005/state.json && test_grep "non-finite" err
'

test_expect_success 'spike rollback restores the checkpoint and skips the batch' '
	train --steps 8 --run-dir rb --ckpt-every 2 --spike-warmup 1 --on-spike rollback \
		--inject-fault spike@5 2>err &&
	grep "\"step\": 5, \"event\": \"rollback\", \"batches\": \[4\], .*\"to_step\": 4" \
		rb/metrics.jsonl &&
	grep "\"skip_batches\": \[4\]" rb/ckpt/step-0000008/state.json &&
	train --steps 8 --run-dir ref --ckpt-every 2 --skip-batches 4 &&
	losses rb/metrics.jsonl >a && losses ref/metrics.jsonl >b && test_cmp a b
'

test_expect_success 'spike skip leaves the weights alone for that step' '
	train --steps 4 --run-dir sk --spike-warmup 1 --on-spike skip --inject-fault spike@3 &&
	grep "\"step\": 3, \"event\": \"spike\"" sk/metrics.jsonl &&
	grep "\"skipped_steps\": 1," sk/ckpt/step-0000004/state.json
'

test_expect_success 'train.json and metrics.prom: the shortest number that reads back, integers exact' '
	train --steps 2 --warmup 4 --lr 3e-4 --weight-decay 0.1 --run-dir fmt &&
	grep "^  \"lr\": 0.0003,$" fmt/train.json && grep "^  \"weight_decay\": 0.1,$" fmt/train.json &&
	grep "^  \"beta2\": 0.95,$" fmt/train.json && grep "^  \"warmup\": 4,$" fmt/train.json &&
	grep "^llm_train_lr 0.00015$" fmt/metrics.prom && grep "^llm_train_tokens 128$" fmt/metrics.prom &&
	grep "^llm_train_step 2$" fmt/metrics.prom
'

test_expect_success 'plateau: two evaluations above the best halve the learning rate' '
	train --steps 6 --run-dir pl --lr 0.3 --eval-every 1 --eval-batches 2 --plateau 2,0,0.5 &&
	grep "\"step\": 3, \"event\": \"plateau\", \"lr_factor\": 0.5}" pl/metrics.jsonl &&
	last=$(sed -n "s/.*\"event\": \"plateau\", \"lr_factor\": \([0-9.]*\)}/\1/p" \
		pl/metrics.jsonl | tail -n 1) &&
	grep "\"lr_factor\": $last," pl/ckpt/step-0000006/state.json
'

test_expect_success 'mix and weighted sampling' '
	train --steps 2 --run-dir mx --mix web=0.7,code=0.3 --weighted &&
	grep "\"mix\": \"web=0.7,code=0.3\"" mx/train.json &&
	test_must_fail --code=2 train --steps 2 --run-dir mx2 --mix web=1,books=1 2>err &&
	test_grep "books" err &&
	test_must_fail --code=2 train --steps 2 --run-dir mx3 --mix web 2>err
'

test_expect_success 'preset model on the shards vocabulary' '
	llm-train -q --data data --model tiny --batch 1 --seq-len 16 --steps 1 --run-dir p \
		--eval-every 0 &&
	grep "\"vocab_size\": 61," p/config.json
'

test_expect_success MPI 'two MPI ranks equal one process with the same global batch' '
	train --steps 4 --run-dir one --accum 2 &&
	# Open MPI keeps a few allocations until exit: not ours to report under SAN=1.
	ASAN_OPTIONS=detect_leaks=0 mpirun --allow-run-as-root --oversubscribe -x ASAN_OPTIONS -np 2 sh -c \
		"llm-train -q --data data --config cfg.json --batch 2 --seq-len 32 --warmup 2 \
		 --lr 1e-2 --eval-every 2 --eval-batches 2 --steps 4 --run-dir two" &&
	losses one/metrics.jsonl >a && losses two/metrics.jsonl >b &&
	test_line_count = 4 a && test_cmp a b &&
	grep "\"world_size\": 2" two/train.json &&
	cmp one/ckpt/step-0000004/model.safetensors two/ckpt/step-0000004/model.safetensors
'

test_done
