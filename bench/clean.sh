#!/bin/sh
# llm-clean: MB/s of text per core (CPU seconds of one process) for the default filter set and
# other step sets on samples/corpus, --threads wall-clock scaling with the output order checked,
# and datatrove's FineWeb-order filter pipeline beside llm-clean on the same English documents
# (bench/clean_datatrove.py; pip install datatrove spacy), with the ratio.
#   CLEAN_SETS="web-zh web-en" REPEAT=5 sh bench/clean.sh
# runs only the per-set recipes/default part, for the sets named (see the list below).
. "$(dirname "$0")/lib.sh"

in=$W/clean-all.jsonl
cat "$TOP"/samples/corpus/*.jsonl >"$in"
textbytes() {
	python3 -c 'import json,sys; print(sum(len(json.loads(l).get("text","").encode()) for l in open(sys.argv[1])))' "$1" 2>/dev/null ||
		stat -c %s "$1"
}
tb=$(textbytes "$in")
docs=$(wc -l <"$in")
echo "input: $docs documents, $(rate "$tb" 1) MB of text (samples/corpus)"

# cpu CMD...: best user+system seconds of $REPEAT runs into $W/cpu, every run's into $W/cpus
cpu() {
	best=
	: >"$W/cpus"
	for _ in $(seq "${REPEAT:-3}"); do
		/usr/bin/time -f "%U %S" -o "$W/time" "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; return 1; }
		read -r u s <"$W/time"
		echo "$u $s" | awk '{d=$1+$2; if (d < 0.001) d = 0.001; print d}' >>"$W/cpus"
		best=$(echo "$u $s ${best:-1e9}" | awk '{d=$1+$2; if (d < 0.001) d = 0.001; print (d<$3)?d:$3}')
	done
	echo "$best" >"$W/cpu"
}
rate1() { echo "$1 $2" | awk '{printf "%.1f", $1/1e6/$2}'; }
# spread BYTES: the median MB/s of the runs in $W/cpus and their range, "12.1 (10.7-13.4)"
spread() {
	sort -g "$W/cpus" | awk -v b="$1" '{r[NR] = b / 1e6 / $1}
		END { m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
			printf "%.1f (%.1f-%.1f)", m, r[NR], r[1] }'
}

if [ -z "${CLEAN_SETS:-}" ]; then
printf '%-44s %10s %10s\n' "steps" "MB/s/core" "docs/s"
while read -r name args; do
	# shellcheck disable=SC2086
	cpu llm-clean -q $args "$in" && read -r t <"$W/cpu"
	printf '%-44s %10s %10s\n' "$name" "$(rate1 "$tb" "$t")" "$(echo "$docs $t" | awk '{printf "%.0f", $1/$2}')"
done <<'LIST'
parse+write --filters none --normalize none
normalise --filters none
default(length,gopher-rep,gopher-quality,c4,fineweb) --filters default
default+pii+time --mask-pii --mask-time
default+builtin-lid --detect-lang
LIST
fi

# recipes/default, one thread, per kind of document: each set is repeated up to about 20 MB
# of text so that the CPU time is well above the timer's 10 ms resolution. "passing": the
# records that recipes/default keeps (as they were read); "English passing": those of them
# that are English web pages, the worst case, where every rule of the recipe runs.
R=$TOP/recipes/default
llm-clean -q --recipe "$R" "$in" >"$W/clean-kept.jsonl"
python3 - "$TOP/samples/corpus" "$W/clean-kept.jsonl" "$W" <<'PY' >"$W/clean-sets" || exit 1
import glob, json, os, sys
corpus, kept, out = sys.argv[1:4]
keep = {json.loads(l)["id"] for l in open(kept, encoding="utf-8")}
sets = {k: [] for k in ("all", "web-en", "web-zh", "books", "code", "passing", "passing-en")}
for path in sorted(glob.glob(os.path.join(corpus, "*.jsonl"))):
    base = os.path.basename(path)[:-6]
    for line in open(path, encoding="utf-8"):
        d = json.loads(line)
        lang, ok = d.get("lang", ""), d["id"] in keep
        sets["all"].append(line)
        if base == "web" and lang == "en":
            sets["web-en"].append(line)
            if ok:
                sets["passing-en"].append(line)
        if base == "web" and lang == "zh":
            sets["web-zh"].append(line)
        if base in ("books", "code"):
            sets[base].append(line)
        if ok:
            sets["passing"].append(line)
for name, lines in sets.items():
    tb = sum(len(json.loads(l).get("text", "").encode()) for l in lines)
    k = max(1, -(-20_000_000 // max(tb, 1)))
    with open(os.path.join(out, "clean-set-%s.jsonl" % name), "w", encoding="utf-8") as f:
        for _ in range(k):
            f.writelines(lines)
    print(name, len(lines) * k, tb * k)
PY
printf '%-44s %10s %10s  %s\n' "recipes/default, --threads 1" "MB/s/core" "docs/s" "median (range) of ${REPEAT:-3}"
while read -r name nd sb; do
	case " ${CLEAN_SETS:-$name} " in *" $name "*) ;; *) continue ;; esac
	f=$W/clean-set-$name.jsonl
	cpu llm-clean -q --threads 1 --recipe "$R" "$f" && read -r t <"$W/cpu"
	printf '%-44s %10s %10s  %s\n' "$name ($nd docs)" "$(rate1 "$sb" "$t")" \
		"$(echo "$nd $t" | awk '{printf "%.0f", $1/$2}')" "$(spread "$sb")"
done <"$W/clean-sets"
[ -z "${CLEAN_SETS:-}" ] || exit 0

# threads. On a shared machine wall-clock time says little, so scaling is measured as CPU
# time: the total must stay that of one thread (no work added by threading), the cleaning
# threads must share it evenly, and the main thread (reading, writing; it overlaps the
# cleaning) must hold little of it. On k free cores the speedup is then at most k and at most
# total CPU / the busiest thread's CPU. Per-thread shares come from perf's task-clock samples, when perf is
# there; the wall-clock rate is printed beside, for an idle machine.
f=$W/clean-set-all.jsonl
sb=$(awk '$1 == "all" { print $3 }' "$W/clean-sets")
llm-clean -q --recipe "$R" "$f" >"$W/clean-t1.jsonl"
for n in 1 2 4; do
	cpu llm-clean -q --threads $n --recipe "$R" "$f" && read -r t <"$W/cpu"
	wall=$(seconds llm-clean -q --threads $n --recipe "$R" "$f")
	llm-clean -q --threads $n --recipe "$R" "$f" >"$W/clean-tn.jsonl"
	same=$(cmp -s "$W/clean-t1.jsonl" "$W/clean-tn.jsonl" && echo "same output" || echo "OUTPUT DIFFERS")
	shares=
	if [ "$n" -gt 1 ] && command -v perf >/dev/null 2>&1 &&
		perf record -q -e task-clock -o "$W/clean.perf" llm-clean -q --threads $n --recipe "$R" "$f" \
			>/dev/null 2>&1; then
		# per thread, in the order they started: the first is the main thread (the process id)
		shares=$(perf report -i "$W/clean.perf" --sort pid --stdio 2>/dev/null |
			awk '/%/ { sub("%", "", $1); split($2, a, ":"); print $1, a[1] }' |
			sort -k2,2n | awk -v k="$n" 'NR == 1 { main = $1; next } { w = w " " $1; if ($1 > max) max = $1 }
				END { if (max > 0) { b = 100 / max; if (b > k) b = k
					printf "CPU of the main thread %.1f%%, of the cleaning threads%s %%: at most %.2fx on %d free cores", main, w, b, k } }')
	fi
	echo "--threads $n: $(rate1 "$sb" "$t") MB per CPU second, $(rate1 "$sb" "$wall") MB/s wall ($same, $(nproc) cores)${shares:+; $shares}"
done

# HTML to text on the sample pages
html=$W/clean-html.jsonl
for f in "$TOP"/samples/corpus/html/*.html; do
	python3 -c 'import json,sys; print(json.dumps({"id": sys.argv[1], "format": "html", "text": open(sys.argv[1], encoding="utf-8").read()}))' "$f"
done >"$html" 2>/dev/null
if [ -s "$html" ]; then
	hb=$(stat -c %s "$html")
	big=$W/clean-html-x50.jsonl
	for _ in $(seq 50); do cat "$html"; done >"$big"
	cpu llm-clean -q --filters none "$big" && read -r t <"$W/cpu"
	echo "HTML to text: $(rate1 $((hb * 50)) "$t") MB/s of HTML per core"
fi

# datatrove beside, on the same English documents
sub=$W/clean-en-sub.jsonl
out=$(python3 "$TOP/bench/clean_datatrove.py" --pipeline "$sub" --mb 2 2>/dev/null | tail -n 1)
case $out in
text_bytes*)
	set -- $out
	sb=$2 dt=$8
	cpu llm-clean -q --normalize none "$sub" && read -r t <"$W/cpu"
	echo "datatrove GopherRep+GopherQuality+C4+FineWeb: $(echo "$sb $dt" | awk '{printf "%.3f", $1/1e6/$2}') MB/s per core;" \
		"llm-clean same filters $(rate1 "$sb" "$t") MB/s per core:" \
		"$(echo "$dt $t" | awk '{printf "%.0f", $1/$2}')x faster"
	;;
*) echo "datatrove: not installed (pip install datatrove spacy); skipped" ;;
esac
