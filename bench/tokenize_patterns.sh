#!/bin/sh
# Pre-tokenizers for training on mixed Chinese and English: for each named pattern, train a
# VOCAB-token (default 32000) tokenizer with llm-tokenize train on the samples' zh and en
# documents less every tenth, and report characters per token on those held-out tenths, zh
# and en apart (more is better: fewer tokens for the same text). The default of
# `llm-tokenize train` was picked from these figures (man llm-tokenize).
. "$(dirname "$0")/lib.sh"

VOCAB=${VOCAB:-32000}
python3 - "$TOP/samples/corpus" "$W" <<-\PY
import glob, json, sys
src, out = sys.argv[1], sys.argv[2]
train = open(f"{out}/pat-train.jsonl", "w", encoding="utf-8")
held = {l: open(f"{out}/pat-held-{l}.jsonl", "w", encoding="utf-8") for l in ("zh", "en")}
n = 0
for f in sorted(glob.glob(src + "/*.jsonl")):
    for line in open(f, encoding="utf-8"):
        d = json.loads(line)
        lang = "zh" if str(d.get("lang", "")).startswith("zh") else d.get("lang")
        if lang not in held:
            continue
        n += 1
        (held[lang] if n % 10 == 0 else train).write(json.dumps({"text": d["text"]}, ensure_ascii=False) + "\n")
PY
# chars_per_token TOKENIZER LANG: characters of the held-out text per token
chars_per_token() {
	llm-tokenize -q -t "$1" --no-eos -f jsonl "$W/pat-held-$2.jsonl" -o "$W/pat-ids.jsonl" &&
	python3 - "$W/pat-held-$2.jsonl" "$W/pat-ids.jsonl" <<-\PY
	import json, sys
	c = sum(len(json.loads(l)["text"]) for l in open(sys.argv[1], encoding="utf-8"))
	t = sum(len(json.loads(l)["tokens"]) for l in open(sys.argv[2]))
	print("%.3f" % (c / t))
	PY
}
echo "train $VOCAB tokens on $(wc -c <"$W/pat-train.jsonl") bytes of zh+en JSONL; characters per token on held-out text"
for p in gpt2 cl100k o200k llama3 qwen qwen3.5 deepseek; do
	/usr/bin/time -o "$W/pat-time" -f "%U %S %M" llm-tokenize train -q --vocab-size "$VOCAB" \
		--pattern "$p" -o "$W/pat-$p.json" "$W/pat-train.jsonl" || { echo "$p: train failed"; continue; }
	echo "$p: zh $(chars_per_token "$W/pat-$p.json" zh), en $(chars_per_token "$W/pat-$p.json" en)" \
		"(train $(awk '{printf "%.1f s CPU, %.0f MB peak", $1 + $2, $3 / 1024}' "$W/pat-time"))"
done
