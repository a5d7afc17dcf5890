#!/bin/sh
# bench/train.sh — llm-train beside PyTorch on CPU running the same architecture, shapes and
# optimizer (bench/train_torch.py, when a Python with torch is found), for each preset and
# thread count, in one run. Never fails on a time.
#
#   sh bench/train.sh        TRAIN_BENCH_STEPS (timed steps, default 6), TRAIN_BENCH_THREADS
#                            (default "1 2"), TRAIN_BENCH_PRESETS (default "tiny small medium"),
#                            TRAIN_BENCH_REPEAT (rounds, default 1)
#
# Two figures per side. Tokens per CPU second, the marginal cost of a step: every thread's CPU
# time, so that a thread spinning while it waits for work counts, and without start-up (llm-train:
# the CPU time of a run of 2 + STEPS steps less that of a run of 2; PyTorch: the median step's
# process CPU time). Tokens per second of wall clock: the median step (llm-train's first step,
# which pays for page faults and thread start-up, left out). MFU is llm-train's, against the
# sgemm peak it measures at start (llm-train(1)).
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
PATH=$TOP/bin:$PATH
W=$TOP/build/bench/train
STEPS=${TRAIN_BENCH_STEPS:-6}
THREADS=${TRAIN_BENCH_THREADS:-1 2}
PRESETS=${TRAIN_BENCH_PRESETS:-tiny small medium}
REPEAT=${TRAIN_BENCH_REPEAT:-1}
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
# cpu CMD...: run CMD, print the CPU seconds (user + system) it and its threads used.
cpu() {
	("$@"; times) | tail -n 1 | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, "m");
		s += a[1] * 60 + a[2] } print s }'
}
train() { # PRESET THREADS STEPS RUN
	rm -rf "$4"
	llm-train -q --data "$W/shards" --model "$1" --batch $B --seq-len $T --steps "$3" \
		--warmup 1 --eval-every 0 --ckpt-every 0 --keep 1 --threads "$2" --run-dir "$4"
}

PY=
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import torch' 2>/dev/null; then PY=$p; break; fi
done

echo "llm-train: batch $B x $T tokens, $STEPS timed steps, AdamW, fp32; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %3s %9s | %10s %10s %7s | %10s %10s %7s %6s\n' preset thr params \
	'llm tok/cpu' 'pt tok/cpu' ratio 'llm tok/s' 'pt tok/s' ratio MFU
for round in $(seq "$REPEAT"); do
	for preset in $PRESETS; do
		for th in $THREADS; do
			run=$W/run-$preset
			c0=$(cpu train "$preset" "$th" 2 "$run")
			c1=$(cpu train "$preset" "$th" $((2 + STEPS)) "$run")
			tpc=$(awk -v a="$c0" -v b="$c1" -v s="$STEPS" -v n=$((B * T)) \
				'BEGIN { print (b > a) ? s * n / (b - a) : 0 }')
			tps=$(grep '"loss"' "$run/metrics.jsonl" | sed 1d | field tokens_per_s | median)
			mfu=$(grep '"loss"' "$run/metrics.jsonl" | sed 1d | field mfu | median)
			params=$(sed -n 's/.*"parameters": \([0-9]*\).*/\1/p' "$run/train.json")
			ppc=- pps=- rc=- rw=-
			if [ -n "$PY" ]; then
				c=$run/config.json
				tied=0; grep -q '"tie_word_embeddings": true' "$c" && tied=1
				out=$("$PY" "$TOP/bench/train_torch.py" --vocab "$(cfg vocab_size "$c")" \
					--hidden "$(cfg hidden_size "$c")" --inter "$(cfg intermediate_size "$c")" \
					--layers "$(cfg num_hidden_layers "$c")" --heads "$(cfg num_attention_heads "$c")" \
					--kv-heads "$(cfg num_key_value_heads "$c")" --tied $tied --batch $B --seq $T \
					--steps "$STEPS" --threads "$th")
				ppc=$(echo "$out" | field tokens_per_cpu_s)
				pps=$(echo "$out" | field tokens_per_s)
				rc=$(awk -v a="$tpc" -v b="$ppc" 'BEGIN { printf "%.2fx", a / b }')
				rw=$(awk -v a="$tps" -v b="$pps" 'BEGIN { printf "%.2fx", a / b }')
				ppc=$(printf '%.0f' "$ppc")
				pps=$(printf '%.0f' "$pps")
			fi
			printf '%-6s %3s %9s | %10.0f %10s %7s | %10.0f %10s %7s %5.1f%%\n' "$preset" "$th" \
				"$params" "$tpc" "$ppc" "$rc" "$tps" "$pps" "$rw" \
				"$(awk -v m="$mfu" 'BEGIN { print m * 100 }')"
		done
	done
done
[ -n "$PY" ] || echo "(PyTorch not found: pip install torch, or apt-get install python3-torch)"
