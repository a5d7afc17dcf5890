#!/bin/sh
# llm-tox throughput per core (CPU time): documents/s and MB/s for rules only, model only and
# rules + model on the sample corpus, and the model stage beside `fasttext predict-prob` on
# the same model and the same input lines (outputs compared byte for byte).
. "$(dirname "$0")/lib.sh"

corpus=$W/tox-corpus.jsonl
[ -s "$corpus" ] || cat "$TOP"/samples/corpus/*.jsonl "$TOP"/samples/tox/eval.jsonl >"$corpus"
size=$(stat -c %s "$corpus")
docs=$(wc -l <"$corpus")
echo "input: $docs documents, $(rate "$size" 1) MB of JSONL"
# CPU seconds (user + system) of one run: the per-core cost, whatever else the machine runs.
cpu() {
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f "%U %S" -o "$W/tox-time" "$@" >/dev/null && awk '{print $1 + $2}' "$W/tox-time"
	else
		seconds "$@"
	fi
}
per() { echo "$docs $size $1" | awk '{printf "%.0f docs/s, %.1f MB/s per core", $1/$3, $2/1e6/$3}'; }
t_r=$(cpu llm-tox -q --no-model "$corpus")
t_m=$(cpu llm-tox -q --no-words "$corpus")
t_rm=$(cpu llm-tox -q "$corpus")
echo "rules only:    $(per "$t_r")"
echo "model only:    $(per "$t_m")"
echo "rules + model: $(per "$t_rm")"

command -v fasttext >/dev/null 2>&1 || { echo "fasttext: not installed, no comparison"; exit 0; }
# The shipped model on the text it sees (normalized), and lid.176.ftz on raw lines.
lines=$W/tox-lines.txt
llm-tox normalize --zh-words "$corpus" >"$lines"
raw=$W/tox-raw.txt
jq -r '.text | gsub("\n"; " ")' "$corpus" >"$raw" 2>/dev/null || tr -d '\r' <"$lines" >"$raw"
for case in "tox.bin $TOP/samples/tox/tox.bin $lines 2" "lid.176.ftz $TOP/tests/data/tox/lid.176.ftz $raw 5"; do
	set -- $case
	name=$1 model=$2 in=$3 k=$4
	fasttext predict-prob "$model" "$in" "$k" >"$W/tox-ft.out"
	llm-tox predict -k "$k" "$model" "$in" >"$W/tox-llm.out"
	same=$(cmp -s "$W/tox-ft.out" "$W/tox-llm.out" && echo identical || echo DIFFERENT)
	t_ft=$(cpu fasttext predict-prob "$model" "$in" "$k")
	t_llm=$(cpu llm-tox predict -k "$k" "$model" "$in")
	n=$(wc -l <"$in") b=$(stat -c %s "$in")
	echo "$name k=$k on $n lines ($(rate "$b" 1) MB): fasttext $(echo "$n $t_ft" | awk '{printf "%.0f", $1/$2}') lines/s," \
		"llm-tox $(echo "$n $t_llm" | awk '{printf "%.0f", $1/$2}') lines/s" \
		"($(echo "$t_ft $t_llm" | awk '{printf "%.2fx", $1/$2}')), output $same"
done
