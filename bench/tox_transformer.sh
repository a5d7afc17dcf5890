#!/bin/sh
# llm-tox's second stage, a transformer, beside its fastText model: false-positive rate at
# recall 0.8 per language on the held-apart samples/tox/eval.jsonl (COLD test, zh; a part of
# Davidson et al., en), for rules + fastText (samples/tox/tox.bin) and rules + a tiny
# transformer. The transformer is pretrained here, for STEPS steps of 16 x 64 tokens, on the
# texts of the same training split as tox.bin (COLD train, the rest of Davidson; eval.jsonl's
# texts left out, samples/tox/prepare.py), then fine-tuned on its labels (llm-train classify).
#
#   bench/tox_transformer.sh [SRC_DIR] [STEPS] [FT_STEPS]   (default ../shared/data/tox 400 400)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
src=${1:-$top/../shared/data/tox}
steps=${2:-400}
ft=${3:-400}
bin=$top/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
python3 "$top/samples/tox/prepare.py" train "$src" "$top/samples/tox/eval.jsonl" "$tmp"
"$bin/llm-tokenize" train -q --vocab-size 4096 -o "$tmp/tok.json" "$tmp/train.jsonl"
"$bin/llm-tokenize" -q -t "$tmp/tok.json" "$tmp/train.jsonl" |
	"$bin/llm-shard" -q --val-fraction 0.02 --tokenizer "$tmp/tok.json" -o "$tmp/shards"
"$bin/llm-train" -q --data "$tmp/shards" --model tiny --batch 16 --seq-len 64 --steps "$steps" \
	--warmup 20 --lr 3e-3 --tokenizer "$tmp/tok.json" --run-dir "$tmp/run"
"$bin/llm-train" classify -q --init "$tmp/run" --batch 16 --seq-len 64 --steps "$ft" \
	--warmup 20 --lr 1e-3 --seed 1 -o "$tmp/clf" "$tmp/train.jsonl"
echo "== rules + fastText (samples/tox/tox.bin)"
"$bin/llm-tox" eval -q --min-recall 0.8 "$top/samples/tox/eval.jsonl"
echo "== rules + tiny transformer (pretrained $steps steps, fine-tuned $ft steps)"
"$bin/llm-tox" eval -q --threads 2 --model "$tmp/clf" --label 1 --min-recall 0.8 \
	"$top/samples/tox/eval.jsonl"
