#!/bin/sh
# SentencePiece models: llm-tokenize beside the sentencepiece library (python3-sentencepiece,
# one thread), MB of text per CPU second with each one's load time taken off, on the ~10 MB of
# English and of Chinese that bench/tokenize.sh times (bench/tokenize_data.sh). Models: the shared KJV BPE (8k, byte fallback) and a BPE and a Unigram model of
# 8k pieces that spm_train makes of up to 2 MB of other sample text (English and Chinese). Every
# document's ids are checked against the library's. Skips with the reason when spm_train or
# the Python module is missing.
. "$(dirname "$0")/lib.sh"

D=$TOP/tests/data/tokenize
SPM_PY=
for py in python3 /usr/bin/python3; do
	"$py" -c 'import sentencepiece' 2>/dev/null && { SPM_PY=$py; break; }
done
if [ -z "$SPM_PY" ] || ! command -v spm_train >/dev/null 2>&1; then
	echo "skipped: SentencePiece models need spm_train and python3-sentencepiece"
	exit 0
fi
. "$TOP/bench/tokenize_data.sh"
# Training text: the documents of samples/corpus that the timed ones are not, 1.5 MB of
# English and 0.5 MB of Chinese.
if [ ! -s "$W/spm-train.txt" ]; then
	python3 - "$TOP/samples/corpus" "$W" <<-\PY
	import glob, json, sys
	src, out = sys.argv[1], sys.argv[2]
	held = set()
	for l in ("en", "zh"):
	    held |= {json.loads(x)["text"] for x in open(f"{out}/tok-{l}.jsonl", encoding="utf-8")}
	want, size, lines = {"en": 1.5e6, "zh": 0.5e6}, {"en": 0, "zh": 0}, []
	for f in sorted(glob.glob(src + "/*.jsonl")):
	    for line in open(f, encoding="utf-8"):
	        d = json.loads(line)
	        l = "zh" if str(d.get("lang", "")).startswith("zh") else d.get("lang")
	        if l in want and d["text"] not in held and size[l] < want[l]:
	            lines += [s for s in d["text"].split("\n") if s.strip()]
	            size[l] += len(d["text"].encode())
	open(f"{out}/spm-train.txt", "w", encoding="utf-8").write("\n".join(lines) + "\n")
	PY
fi
zstd -q -d -f -c "$D/spm_kjv_bpe8k.model.zst" >"$W/spm-kjv.model"
for t in bpe unigram; do
	[ -s "$W/spm-$t.model" ] || spm_train --input="$W/spm-train.txt" --model_prefix="$W/spm-$t" \
		--model_type=$t --vocab_size=8000 --byte_fallback=true --character_coverage=0.9995 \
		--num_threads=2 >"$W/spm-$t.log" 2>&1 || { echo "spm_train $t failed" >&2; exit 1; }
done
textbytes() { python3 -c 'import json,sys; print(sum(len(json.loads(l)["text"].encode()) for l in open(sys.argv[1])))' "$1"; }
cpu() {
	best=
	for _ in $(seq "${REPEAT:-3}"); do
		/usr/bin/time -o "$W/tok-time" -f "%U %S" "$@" >/dev/null 2>&1
		t=$(awk '{print $1 + $2}' "$W/tok-time")
		best=$(echo "$t ${best:-1e9}" | awk '{print ($1 < $2) ? $1 : $2}')
	done
	echo "$best"
}
: >"$W/spm-empty.jsonl"
for m in kjv bpe unigram; do
	for l in en zh; do
		docs=$W/tok-$l.jsonl
		llm-tokenize -q -t "$W/spm-$m.model" --no-eos -f jsonl --meta id "$docs" >"$W/spm-ours.jsonl"
		t=$(cpu llm-tokenize -q -t "$W/spm-$m.model" --no-eos "$docs" -o /dev/null)
		t0=$(cpu llm-tokenize -q -t "$W/spm-$m.model" --no-eos "$W/spm-empty.jsonl" -o /dev/null)
		st=$("$SPM_PY" "$TOP/bench/tokenize_spm.py" "$W/spm-$m.model" "$docs" "$W/spm-ours.jsonl") ||
			{ echo "spm $m $l: ids differ from sentencepiece: $st" >&2; exit 1; }
		s=$(echo "$st" | awk '$1 == "spm" {print $2}')
		b=$(textbytes "$docs")
		echo "$b $t $t0 $s" | awk -v m="$m" -v l="$l" '{o = $2 - $3; if (o <= 0) o = 1e-3;
			printf "spm %-7s %s: llm-tokenize %.1f MB/s, sentencepiece %.1f MB/s (%.2fx), ids identical\n",
			m, l, $1 / 1e6 / o, $1 / 1e6 / $4, $4 / o}'
	done
done
