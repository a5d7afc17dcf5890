#!/bin/sh
# Rebuild the default toxicity model samples/tox/tox.bin from the labelled data (COLD train,
# Davidson et al.), and the held-apart evaluation set samples/tox/eval.jsonl when COLD's test
# split is at hand.
#
#   samples/tox/recipe.sh [SRC_DIR]     SRC_DIR holds cold/ and davidson/ (default ../shared/data/tox)
#
# SRC_DIR/cold/test.csv (thu-coai/COLDataset @ a0c55a94, COLDataset/test.csv) is needed only to
# rebuild eval.jsonl; without it the shipped eval.jsonl is kept, and training leaves out its
# texts either way. The model never sees eval.jsonl nor dev.jsonl (COLD dev + a tenth of
# Davidson), on which the settings below were chosen.
#
# One thread and a fixed seed make the model a function of the data: rerunning gives the same
# bytes. The last two commands print the per-language thresholds that meet the seed's
# false-positive target on the dev split, and the figures on the held-apart split.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
src=${1:-$top/../shared/data/tox}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
if [ -f "$src/cold/test.csv" ]; then
	python3 "$top/samples/tox/prepare.py" eval "$src" "$top/samples/tox/eval.jsonl"
fi
python3 "$top/samples/tox/prepare.py" train "$src" "$top/samples/tox/eval.jsonl" "$tmp"
"$top/bin/llm-tox" train -o "$top/samples/tox/tox.bin" --threads 1 --seed 1 \
	--zh-words --dim 8 --epoch 5 --lr 0.5 --word-ngrams 2 --bucket 100000 --min-count 3 --loss softmax \
	"$tmp/train.jsonl"
"$top/bin/llm-tox" eval --max-fpr 0.063 --min-recall 0.8 "$tmp/dev.jsonl"
"$top/bin/llm-tox" eval --max-fpr 0.063 --min-recall 0.8 "$top/samples/tox/eval.jsonl"
