#!/bin/sh
# llm-dedup --substring at two sizes of bench/scale/gen.py's corpus (SUBSTR_MB="25 100" by
# default; gen.py's 10% exact and 15% near copies, lines drawn from the samples): CPU seconds
# (user + system, best of $REPEAT, default 2), peak RSS (GNU time's %M) and temporary disk
# per byte of text, and the growth of the CPU time against n log n. BASE=path/to/llm-dedup
# runs an older binary on the same corpora beside it and checks that both outputs are the
# same bytes. Not in make bench (minutes); run it alone: sh bench/dedup-substr.sh.
. "$(dirname "$0")/lib.sh"
: "${SUBSTR_MB:=25 100}" "${REPEAT:=2}"
command -v /usr/bin/time >/dev/null || { echo "dedup-substr: needs GNU time (make deps)" >&2; exit 1; }

# run NAME BIN IN: best CPU seconds, peak RSS (KB) of the last run, stats in $W/substr-NAME.json
run() {
	best=
	for _ in $(seq "$REPEAT"); do
		/usr/bin/time -f "%U %S %M" -o "$W/substr.time" "$2" -q --substring \
			--tmpdir "$W" --stats "$W/substr-$1.json" "$3" >"$W/substr-$1.out" ||
			{ echo "dedup-substr: $2 failed" >&2; exit 1; }
		read -r u s m <"$W/substr.time"
		best=$(echo "$u $s ${best:-1e9}" | awk '{d=$1+$2; print (d<$3)?d:$3}')
	done
	echo "$best $m"
}
field() { sed -n "s/.*\"$1\": \([0-9]*\).*/\1/p" "$W/substr-$2.json"; }

printf '%-10s %8s %10s %10s %8s %8s %8s %8s\n' binary "MB text" "CPU s" "MB/CPU s" \
	"RSS B/B" "disk B/B" shards removed
rm -f "$W/substr-growth"
for mb in $SUBSTR_MB; do
	d=$W/substr-$mb
	if [ ! -s "$d/in.jsonl" ]; then
		rm -rf "$d" && mkdir -p "$d"
		python3 "$TOP/bench/scale/gen.py" "$TOP/samples/corpus" "$d" "$(echo "$mb" | awk '{print $1/1000}')" 1 \
			>/dev/null 2>"$d/gen.log" || { cat "$d/gen.log" >&2; exit 1; }
		cat "$d"/raw/*.jsonl >"$d/in.jsonl" && rm -rf "$d/raw"
	fi
	for b in llm-dedup ${BASE:+base}; do
		bin=$TOP/bin/llm-dedup
		[ "$b" = base ] && bin=$BASE
		read -r t rss <<-EOF
		$(run "$b" "$bin" "$d/in.jsonl")
		EOF
		tb=$(field text_bytes "$b")
		echo "$b $mb $tb $t" >>"$W/substr-growth"
		printf '%-10s %8.1f %10.2f %10.2f %8.2f %8.2f %8s %7.1f%%\n' "$b" "$(echo "$tb" | awk '{print $1/1e6}')" \
			"$t" "$(echo "$tb $t" | awk '{print $1/1e6/$2}')" \
			"$(echo "$rss $tb" | awk '{print $1*1024/$2}')" \
			"$(echo "$(field disk_bytes "$b") $tb" | awk '{print $1/$2}')" \
			"$(field shards "$b")" "$(echo "$(field removed_bytes "$b") $tb" | awk '{print 100*$1/$2}')"
	done
	[ -z "$BASE" ] || cmp -s "$W/substr-llm-dedup.out" "$W/substr-base.out" ||
		{ echo "dedup-substr: outputs differ at $mb MB" >&2; exit 1; }
	[ -z "$BASE" ] || echo "           outputs the same bytes"
done
# growth of the CPU time between the first and the last size, against n and n log n
for b in llm-dedup ${BASE:+base}; do
	grep "^$b " "$W/substr-growth" | awk 'NR == 1 {n0 = $3; t0 = $4} {n = $3; t = $4}
		END {if (n > n0) printf "%-10s CPU time grows %.2fx for %.2fx the text (n log n: %.2fx)\n",
			$1, t / t0, n / n0, n * log(n) / (n0 * log(n0))}'
done
rm -f "$W/substr-growth"
