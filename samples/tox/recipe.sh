#!/bin/sh
# Rebuild the default toxicity model samples/tox/tox.bin and the held-out set
# samples/tox/eval.jsonl from the labelled data (COLD train/dev, Davidson et al.).
#
#   samples/tox/recipe.sh [SRC_DIR]     SRC_DIR holds cold/ and davidson/ (default ../shared/data/tox)
#
# One thread and a fixed seed make the model a function of the data: rerunning gives the same
# bytes. The settings trade a little F1 for a 1 MB model (see NOTICE.md for the numbers).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
src=${1:-$top/../shared/data/tox}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
python3 "$top/samples/tox/prepare.py" "$src" "$tmp"
cp "$tmp/eval.jsonl" "$top/samples/tox/eval.jsonl"
"$top/bin/llm-tox" train -o "$top/samples/tox/tox.bin" --threads 1 --seed 1 \
	--dim 8 --epoch 5 --lr 0.5 --word-ngrams 2 --bucket 20000 --min-count 5 --loss softmax \
	"$tmp/train.jsonl"
"$top/bin/llm-tox" eval --model "$top/samples/tox/tox.bin" "$top/samples/tox/eval.jsonl"
