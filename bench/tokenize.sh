#!/bin/sh
# llm-tokenize throughput: MB/s of text per thread on ~10 MB of English and ~10 MB of Chinese
# from samples/corpus, for r50k, cl100k and o200k, beside tiktoken (ranks read from the same
# local files) and, for GPT-2's tokenizer.json, Hugging Face tokenizers, when they are
# installed (pip install tiktoken tokenizers). Rates come from CPU time with the tokenizer's
# load time taken off, so they compare encoding work even on a busy machine. Then --threads
# scaling, and training a 32k vocabulary beside HF's BPE trainer.
. "$(dirname "$0")/lib.sh"

D=$TOP/tests/data/tokenize
PEERS="python3 $TOP/bench/tokenize_peers.py"

# ~10 MB of text per language (lang en / zh*), documents in corpus order.
if [ ! -s "$W/tok-en.jsonl" ] || [ ! -s "$W/tok-zh.jsonl" ]; then
	python3 - "$TOP/samples/corpus" "$W" <<-\PY
	import glob, json, sys
	src, out = sys.argv[1], sys.argv[2]
	sel = {"en": [], "zh": []}
	size = {"en": 0, "zh": 0}
	for f in sorted(glob.glob(src + "/*.jsonl")):
	    for line in open(f, encoding="utf-8"):
	        d = json.loads(line)
	        l = "zh" if str(d.get("lang", "")).startswith("zh") else d.get("lang")
	        if l in sel and size[l] < 10e6:
	            sel[l].append(line)
	            size[l] += len(d["text"].encode())
	for l in sel:
	    open(f"{out}/tok-{l}.jsonl", "w", encoding="utf-8").writelines(sel[l])
	PY
fi
textbytes() { python3 -c 'import json,sys; print(sum(len(json.loads(l)["text"].encode()) for l in open(sys.argv[1])))' "$1"; }
# cpu CMD...: user+system seconds of CMD, best of $REPEAT (default 3).
cpu() {
	best=
	for _ in $(seq "${REPEAT:-3}"); do
		/usr/bin/time -o "$W/tok-time" -f "%U %S" "$@" >/dev/null 2>&1
		t=$(awk '{print $1 + $2}' "$W/tok-time")
		best=$(echo "$t ${best:-1e9}" | awk '{print ($1 < $2) ? $1 : $2}')
	done
	echo "$best"
}
: >"$W/tok-empty.jsonl"
for l in en zh; do eval "bytes_$l=$(textbytes "$W/tok-$l.jsonl")"; done
echo "input: $(rate "$bytes_en" 1) MB English, $(rate "$bytes_zh" 1) MB Chinese (text bytes)"

for e in r50k_base cl100k_base o200k_base; do
	[ -s "$W/$e.tiktoken" ] || zstd -q -d -c "$D/$e.tiktoken.zst" >"$W/$e.tiktoken"
	load=$(cpu llm-tokenize -q -t "$W/$e.tiktoken" "$W/tok-empty.jsonl" -o /dev/null)
	for l in en zh; do
		eval "b=\$bytes_$l"
		t=$(cpu llm-tokenize -q -t "$W/$e.tiktoken" "$W/tok-$l.jsonl" -o /dev/null)
		ours=$(echo "$b $t $load" | awk '{printf "%.1f", $1 / 1e6 / ($2 - $3)}')
		hf=
		[ "$e" = r50k_base ] && { [ -s "$W/gpt2.json" ] || zstd -q -d -c "$D/hf_gpt2/tokenizer.json.zst" >"$W/gpt2.json"; hf="--hf $W/gpt2.json"; }
		peers=$($PEERS bench --ranks "$W/$e.tiktoken" --encoding "$e" --docs "$W/tok-$l.jsonl" $hf 2>/dev/null)
		line="$e $l: llm-tokenize $ours MB/s (load ${load}s)"
		tk=$(echo "$peers" | awk '$1 == "tiktoken" && $2 + 0 > 0 {print $2}')
		[ -n "$tk" ] && line="$line, tiktoken $tk MB/s ($(echo "$ours $tk" | awk '{printf "%.1fx", $1 / $2}'))"
		h=$(echo "$peers" | awk '$1 == "hf" && $2 + 0 > 0 {print $2}')
		[ -n "$h" ] && line="$line, HF tokenizers $h MB/s ($(echo "$ours $h" | awk '{printf "%.1fx", $1 / $2}'))"
		echo "$line"
	done
done

# Thread scaling (wall clock; meaningful only on an otherwise idle machine).
cat "$W/tok-en.jsonl" "$W/tok-zh.jsonl" >"$W/tok-mix.jsonl"
b=$((bytes_en + bytes_zh))
t1=$(seconds llm-tokenize -q -t "$W/cl100k_base.tiktoken" "$W/tok-mix.jsonl" -o /dev/null)
n=$(nproc)
tn=$(seconds llm-tokenize -q -t "$W/cl100k_base.tiktoken" --threads "$n" "$W/tok-mix.jsonl" -o /dev/null)
echo "cl100k threads: 1 thread $(rate "$b" "$t1") MB/s, $n threads $(rate "$b" "$tn") MB/s (wall clock)"

# Training a 32k vocabulary on the English + Chinese sample.
tt=$(REPEAT=1 seconds llm-tokenize train -q --vocab-size 32000 -o "$W/tok-trained.json" "$W/tok-mix.jsonl")
line="train 32k on $(rate "$b" 1) MB: llm-tokenize ${tt}s"
ht=$($PEERS train --docs "$W/tok-mix.jsonl" --vocab-size 32000 --out "$W/tok-hf-trained.json" 2>/dev/null |
	awk '$1 == "hf-train" && $2 + 0 > 0 {print $2}')
[ -n "$ht" ] && line="$line, HF BpeTrainer ${ht}s ($(echo "$ht $tt" | awk '{printf "%.1fx", $1 / $2}'))"
echo "$line"

# Training within --memory: wall time, peak resident size, and what was pruned to fit, on
# all of samples/corpus (its CJK and code runs make many long, unique pieces).
cat "$TOP"/samples/corpus/*.jsonl >"$W/tok-all.jsonl"
for m in default 64M 16M 4M; do
	a=
	[ "$m" = default ] || a="--memory $m"
	# shellcheck disable=SC2086
	/usr/bin/time -o "$W/tok-time" -f "%e %M" llm-tokenize train -q $a --vocab-size 32000 \
		--stats "$W/tok-train.json" -o "$W/tok-trained-m.json" "$W/tok-all.jsonl" 2>/dev/null ||
		{ echo "failed: train --memory $m" >&2; continue; }
	python3 - "$W/tok-train.json" "$m" "$(cat "$W/tok-time")" <<-\PY
	import json, sys
	t = json.load(open(sys.argv[1]))["train"]
	wall, rss = sys.argv[3].split()
	print("train 32k on samples/corpus, --memory %s: %.1fs, peak RSS %.1f MB, %d tokens, pruned "
	      "%d of %d pieces (%.1f%% of occurrences, %.1f%% of bytes), %d runs on disk"
	      % (sys.argv[2], float(wall), int(rss) / 1024, t["vocab_size"], t["pruned_pieces"],
	         t["pieces"], 100 * t["pruned_fraction"], 100 * t["pruned_bytes_fraction"], t["runs"]))
	PY
done
