#!/bin/sh
# bench/eval.sh — llm-eval throughput for the tiny and small presets on the samples: loss
# evaluation tokens/s (forward only), beside PyTorch on CPU running the same checkpoint and
# shapes (bench/eval_torch.py) when a Python with torch is found; generation tokens/s with and
# without the key-value cache. Never fails on a time.
#
#   sh bench/eval.sh                       EVAL_BENCH_THREADS (default: all cores),
#                                          EVAL_BENCH_PRESETS (default "tiny small")
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
PATH=$TOP/bin:$PATH
W=$TOP/build/bench/eval
THREADS=${EVAL_BENCH_THREADS:-$(nproc)}
PRESETS=${EVAL_BENCH_PRESETS:-tiny small}
B=8 T=256 NB=8
mkdir -p "$W"

# Data: a 4096-token BPE on 1 MB of three domains; their first 2 MB sharded, 10 % val.
if [ ! -f "$W/shards/manifest.json" ]; then
	for d in web books wiki; do head -c 1000000 "$TOP/samples/corpus/$d.jsonl" | sed '$d'; done \
		>"$W/tok-train.jsonl"
	llm-tokenize train -q --vocab-size 4096 -o "$W/tokenizer.json" "$W/tok-train.jsonl"
	for d in web books wiki; do head -c 2000000 "$TOP/samples/corpus/$d.jsonl" | sed '$d'; done |
		llm-tokenize -q -t "$W/tokenizer.json" |
		llm-shard -q -o "$W/shards" --val-fraction 0.1 --tokenizer "$W/tokenizer.json"
fi

field() { sed -n "s/.*\"$1\": \\([0-9.e+-]*\\).*/\\1/p"; }
PY=
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import torch' 2>/dev/null; then PY=$p; break; fi
done

echo "llm-eval loss: $NB batches of $B x $T tokens (trainer's val batches), $THREADS threads, fp32"
printf '%-6s %14s %14s %7s %12s %12s\n' preset 'llm-eval tok/s' 'pytorch tok/s' ratio \
	'gen tok/s' 'no-cache'
for preset in $PRESETS; do
	run=$W/run-$preset
	if [ ! -d "$run/ckpt/latest" ]; then
		llm-train -q --data "$W/shards" --model "$preset" --steps 1 --batch 2 --seq-len $T \
			--warmup 1 --eval-every 0 --run-dir "$run" --threads "$THREADS" --force
	fi
	# The same windows as the trainer's evaluation: --sampled with the batch shape above.
	llm-eval loss -q --ckpt "$run" --sampled $NB --batch $B --seq-len $T --threads "$THREADS" \
		--json "$W/loss-$preset.json" "$W/shards" >/dev/null
	s=$(field seconds <"$W/loss-$preset.json")
	ours=$(echo "$s" | awk -v n=$((NB * B * T)) '{ printf "%.0f", n / $1 }')
	peer=- ratio=-
	if [ -n "$PY" ]; then
		if "$PY" "$TOP/bench/eval_torch.py" "$run/ckpt/latest" --batch $B --seq-len $T \
			--batches $NB --threads "$THREADS" >"$W/torch-$preset.json"; then
			peer=$(field tokens_per_s <"$W/torch-$preset.json" | awk '{ printf "%.0f", $1 }')
			ratio=$(echo "$ours $peer" | awk '{ printf "%.2fx", $1 / $2 }')
		fi
	fi
	gen=
	for cache in "" --no-cache; do
		llm-eval generate -q --ckpt "$run" -t "$W/tokenizer.json" --prompt "The" \
			--temperature 0 --max-tokens 128 --threads "$THREADS" $cache \
			--json "$W/gen-$preset.json" >/dev/null
		gen="$gen $(awk '{
			n = split($0, a, "\"tokens\": \\["); split(a[2], b, "]"); k = split(b[1], c, ",")
			match($0, /"seconds": [0-9.e+-]+/); s = substr($0, RSTART + 11, RLENGTH - 11)
			printf "%.0f", k / s }' "$W/gen-$preset.json")"
	done
	# shellcheck disable=SC2086
	printf '%-6s %14s %14s %7s %12s %12s\n' "$preset" "$ours" "$peer" "$ratio" $gen
done
[ -n "$PY" ] || echo "(no Python with torch: PyTorch column skipped; apt-get install python3-torch)"
