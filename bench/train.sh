#!/bin/sh
# bench/train.sh — llm-train throughput (tokens/s) and model FLOP utilisation for the tiny and
# small presets on the samples, beside PyTorch on CPU running the same architecture and shapes
# (bench/train_torch.py) when a Python with torch is found. Never fails on a time.
#
#   sh bench/train.sh                      TRAIN_BENCH_STEPS (default 6), TRAIN_BENCH_THREADS
#                                          (default: all cores), TRAIN_BENCH_PRESETS
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
PATH=$TOP/bin:$PATH
W=$TOP/build/bench/train
STEPS=${TRAIN_BENCH_STEPS:-6}
THREADS=${TRAIN_BENCH_THREADS:-$(nproc)}
PRESETS=${TRAIN_BENCH_PRESETS:-tiny small}
B=8 T=256
mkdir -p "$W"

# Data: a 4096-token BPE trained on 1 MB of each domain, then all four domains sharded.
if [ ! -f "$W/shards/manifest.json" ]; then
	for d in web books code wiki; do head -c 1000000 "$TOP/samples/corpus/$d.jsonl" | sed '$d'; done \
		>"$W/tok-train.jsonl"
	llm-tokenize train -q --vocab-size 4096 -o "$W/tokenizer.json" "$W/tok-train.jsonl"
	cat "$TOP"/samples/corpus/web.jsonl "$TOP"/samples/corpus/books.jsonl \
	    "$TOP"/samples/corpus/code.jsonl "$TOP"/samples/corpus/wiki.jsonl |
		llm-tokenize -q -t "$W/tokenizer.json" |
		llm-shard -q -o "$W/shards" --val-fraction 0.02 --tokenizer "$W/tokenizer.json"
fi

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print 0 }'; }
field() { sed -n "s/.*\"$1\": \\([0-9.e+-]*\\).*/\\1/p"; }
cfg() { sed -n "s/.*\"$1\": \\([0-9]*\\).*/\\1/p" "$2"; }

PY=
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import torch' 2>/dev/null; then PY=$p; break; fi
done

echo "llm-train: batch $B x $T tokens, $STEPS steps, $THREADS threads, AdamW, fp32 (median step)"
printf '%-6s %12s %14s %8s %16s %8s\n' preset params 'llm-train tok/s' MFU 'pytorch tok/s' ratio
for preset in $PRESETS; do
	run=$W/run-$preset
	rm -rf "$run"
	llm-train -q --data "$W/shards" --model "$preset" --batch $B --seq-len $T --steps "$STEPS" \
		--warmup 1 --eval-every 0 --ckpt-every 0 --keep 1 --threads "$THREADS" --run-dir "$run"
	# the first step pays for page faults and thread start-up
	tps=$(grep '"loss"' "$run/metrics.jsonl" | sed 1d | field tokens_per_s | median)
	mfu=$(grep '"loss"' "$run/metrics.jsonl" | sed 1d | field mfu | median)
	params=$(sed -n 's/.*"parameters": \([0-9]*\).*/\1/p' "$run/train.json")
	peer=- ratio=-
	if [ -n "$PY" ]; then
		c=$run/config.json
		tied=0; grep -q '"tie_word_embeddings": true' "$c" && tied=1
		peer=$("$PY" "$TOP/bench/train_torch.py" --vocab "$(cfg vocab_size "$c")" \
			--hidden "$(cfg hidden_size "$c")" --inter "$(cfg intermediate_size "$c")" \
			--layers "$(cfg num_hidden_layers "$c")" --heads "$(cfg num_attention_heads "$c")" \
			--kv-heads "$(cfg num_key_value_heads "$c")" --tied $tied --batch $B --seq $T \
			--steps "$STEPS" --threads "$THREADS" | field tokens_per_s)
		ratio=$(awk -v a="$tps" -v b="$peer" 'BEGIN { printf "%.2fx", a / b }')
		peer=$(printf '%.0f' "$peer")
	fi
	printf '%-6s %12s %14.0f %7.1f%% %16s %8s\n' "$preset" "$params" "$tps" \
		"$(awk -v m="$mfu" 'BEGIN { print m * 100 }')" "$peer" "$ratio"
done
[ -n "$PY" ] || echo "(PyTorch not found: pip install torch, or apt-get install python3-torch)"
