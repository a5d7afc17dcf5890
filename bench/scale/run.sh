#!/bin/sh
# bench/scale/run.sh — the data pipeline on generated corpora of several sizes
# (make bench-scale SCALE_GB="0.5 1 2"; not part of make check: it takes hours at 2 GB).
#
# For each size: bench/scale/gen.py writes 16 JSONL files with 10% exact and 15% near
# duplicates and the truth of what each document copies; pipelines/Makefile runs up to the
# shards with production.mk-style settings (a fixed tokenizer, as production.mk has, trained
# once on the samples), make -j$SCALE_JOBS; bench/scale/figures.py prints, per stage, wall
# and CPU time, MB of raw input per CPU second, peak RSS and disk, the dedup cluster step's
# bytes per document and recall against the truth. Then one table over the sizes: memory
# should stay flat and time grow linearly. Work files: $SCALE_DIR (build/bench-scale).
set -eu
cd "$(dirname "$0")/../.."
TOP=$(pwd)
: "${SCALE_GB:=0.5 1 2}" "${SCALE_DIR:=$TOP/build/bench-scale}" "${SCALE_JOBS:=2}" "${SEED:=1}"
command -v /usr/bin/time >/dev/null || { echo "bench-scale: needs GNU time (make deps)" >&2; exit 1; }
mkdir -p "$SCALE_DIR"
tok=$SCALE_DIR/tokenizer.json
if [ ! -s "$tok" ]; then
	/usr/bin/time -f "tokenizer (samples, once): %e s wall, %U s user, %M KiB" \
		bin/llm-tokenize train -q --vocab-size 8192 -o "$tok" samples/corpus/*.jsonl
fi
for gb in $SCALE_GB; do
	W=$SCALE_DIR/$gb
	if [ ! -s "$W/truth.tsv" ]; then
		rm -rf "$W" && mkdir -p "$W"
		python3 bench/scale/gen.py samples/corpus "$W" "$gb" "$SEED"
	fi
	rm -rf "$W/out" "$W/tmp" && mkdir -p "$W/tmp"
	cat >"$W/scale.mk" <<EOF
# production.mk's settings for the stages up to the shards, sized for this machine.
RAW     := $W/raw
OUT     := $W/out
SEED    := $SEED
RECIPE         := $TOP/recipes/default
CAT_OPTS       := --max-line 256M
CLEAN_OPTS     := --mask-pii --freshness --ref-year 2026 --lang en,zh
DEDUP_OPTS     := --minhash --preset datatrove --memory 1G --tmpdir $W/tmp
DEDUP_INDEX    :=
DECON_SETS     := $TOP/samples/eval/next-sentence.jsonl
DECON_OPTS     := --memory 1G --tmpdir $W/tmp
TOX_OPTS       := --threshold 0.85
TOKENIZER      := $tok
TOKENIZER_OPTS :=
TOKENIZE_OPTS  := --eos
NOISE_OPTS     := --docs 0.05 --mask 0.03 --mask-id 3 --swap 0.15
SHARD_OPTS     := --val-fraction 0.005 --shard-size 1G --truncate-quantile 0.995
EOF
	echo "bench-scale: $gb GB: make -j$SCALE_JOBS shards" >&2
	LLM_RUSAGE=1 /usr/bin/time -f "%e %U %S %M" -o "$W/total.time" \
		make -s -f pipelines/Makefile CONFIG="$W/scale.mk" -j"$SCALE_JOBS" shards 2>"$W/make.log" ||
		{ tail -n 20 "$W/make.log" >&2; exit 1; }
	python3 bench/scale/figures.py "$W"
done
python3 bench/scale/figures.py --compare $(for gb in $SCALE_GB; do echo "$SCALE_DIR/$gb"; done)
