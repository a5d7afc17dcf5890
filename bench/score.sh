#!/bin/sh
# llm-score throughput per core (CPU time, one thread): MB of document text scored per CPU
# second by a DCLM-style fastText bigram classifier (trained here: curated wiki and qa
# against web pages), beside `fasttext predict-prob` on the same model and the same texts
# as lines; the probabilities compared (largest difference). BENCH_DIM (default 100,
# fastText's) and BENCH_BUCKET (default 200000) size the model.
. "$(dirname "$0")/lib.sh"

dim=${BENCH_DIM:-100}
bucket=${BENCH_BUCKET:-200000}
corpus=$W/score-corpus.jsonl
[ -s "$corpus" ] || cat "$TOP"/samples/corpus/*.jsonl >"$corpus"
model=$W/score-quality-$dim-$bucket.bin
[ -s "$model" ] || llm-score train -q -o "$model" --dim "$dim" --bucket "$bucket" \
	--positive "$TOP/samples/corpus/wiki.jsonl" --positive "$TOP/samples/corpus/qa.jsonl" \
	--negative "$TOP/samples/corpus/web.jsonl" || exit 1
docs=$(wc -l <"$corpus")
if command -v jq >/dev/null 2>&1; then
	text=$(jq -j '.text | utf8bytelength | tostring + "\n"' "$corpus" | awk '{ s += $1 } END { print s }')
else
	text=$(stat -c %s "$corpus")
fi
echo "input: $docs documents, $(rate "$text" 1) MB of text; model dim $dim, bucket $bucket, word bigrams"

# CPU seconds (user + system) of one run: the per-core cost, whatever else the machine runs.
cpu() {
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f "%U %S" -o "$W/score-time" "$@" >/dev/null && awk '{print $1 + $2}' "$W/score-time"
	else
		seconds "$@"
	fi
}
# Loading the model is a fixed cost, small beside a shard of gigabytes but not beside the
# samples: each rate is also given without it (the CPU time of a run on empty input).
per() {
	echo "$text $docs $1 $2" | awk '{printf "%.1f MB of text per CPU second (%.0f docs/s); " \
		"%.1f MB/s without loading the model (%.2f s)", $1/1e6/$3, $2/$3, $1/1e6/($3-$4), $4}'
}
: >"$W/score-empty"
t_llm=$(cpu llm-score -q -m quality="$model" "$corpus")
l_llm=$(cpu llm-score -q -m quality="$model" "$W/score-empty")
echo "llm-score:             $(per "$t_llm" "$l_llm")"

command -v fasttext >/dev/null 2>&1 || { echo "fasttext: not installed, no comparison"; exit 0; }
command -v jq >/dev/null 2>&1 || { echo "jq: not installed, no comparison"; exit 0; }
lines=$W/score-lines.txt
# fastText reads one line per document: the newlines of a text are spaces.
jq -r '.text | explode | map(if . == 10 then 32 else . end) | implode' "$corpus" >"$lines"
t_ft=$(cpu fasttext predict-prob "$model" "$lines" -1)
l_ft=$(cpu fasttext predict-prob "$model" "$W/score-empty" -1)
echo "fasttext predict-prob: $(per "$t_ft" "$l_ft")"
fasttext predict-prob "$model" "$lines" -1 |
	awk '{ v = 0; for (i = 1; i < NF; i += 2) if ($i == "__label__hq") v = $(i + 1); print v }' >"$W/score-ft.txt"
llm-score -q -m quality="$model" "$corpus" | jq -r .scores.quality >"$W/score-llm.txt"
paste "$W/score-llm.txt" "$W/score-ft.txt" | awk -v a="$t_ft" -v b="$t_llm" '
	{ d = $1 - $2; if (d < 0) d = -d; if (d > m) m = d; n++ }
	END { printf "llm-score / fasttext: %.2fx; %d documents, largest difference %g\n", a / b, n, m }'
