#!/bin/sh
# llm-tox word lists of any size: Chinese block lists of 10^3 to 10^6 rules (bench/tox_lists.py)
# on the Chinese documents of samples/corpus, beside one PCRE2 alternation of the same rules
# (bench/tox_pcre2.c). CPU time (user + system) and peak RSS; compiling the list is measured
# alone on an empty input, and the scan is the rest.
. "$(dirname "$0")/lib.sh"

zh=$W/tox-lists-zh.jsonl
txt=$W/tox-lists-zh.txt
[ -s "$zh" ] || cat "$TOP"/samples/corpus/*.jsonl | jq -c 'select(.lang == "zh" or .lang == "zh-Hant")' >"$zh"
[ -s "$txt" ] || jq -r '.text | gsub("\n"; " ")' "$zh" >"$txt"
sizes=${SIZES:-1000 10000 100000 1000000}
[ -s "$W/tox-list.1000000" ] || python3 "$TOP/bench/tox_lists.py" "$zh" "$TOP/samples/wordlists/zh" \
	"$W/tox-list" 1000 10000 100000 1000000
echo "input: $(wc -l <"$zh") Chinese documents, $(rate "$(stat -c %s "$txt")" 1) MB of text"
# cpu CMD...: "user+sys peak_kB" of one run
cpu() {
	/usr/bin/time -f "%U %S %M" -o "$W/tox-lists-time" "$@" >"$W/tox-lists-out" &&
	awk '{ printf "%.2f %d", $1 + $2, $3 }' "$W/tox-lists-time"
}
size=$(stat -c %s "$txt")
for n in $sizes; do
	list=$W/tox-list.$n
	set -- $(cpu llm-tox -q --no-model --zh-substrings --words "zh:$list" /dev/null)
	build=$1 rss=$2
	set -- $(cpu llm-tox -q --no-model --zh-substrings --mode annotate --words "zh:$list" "$zh")
	hits=$(jq -s 'map(.tox_hits) | add' "$W/tox-lists-out")
	scan=$(echo "$1 $build" | awk '{ d = $1 - $2; print (d > 0.01 ? d : 0.01) }')
	echo "llm-tox: $n rules: compile $build s, scan $scan s ($(rate "$size" "$scan") MB/s), peak RSS $(($2 / 1024)) MB, $hits hits"
done
if cc -O2 -o "$W/tox_pcre2" "$TOP/bench/tox_pcre2.c" -lpcre2-8 2>/dev/null; then
	for n in $sizes; do "$W/tox_pcre2" "$W/tox-list.$n" "$txt"; done
else
	echo "tox_pcre2: could not build (skipped)"
fi
