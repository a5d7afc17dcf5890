#!/bin/sh
# llm-dedup: MB/s of text per core for signatures alone (sign) and for whole runs, peak RSS
# and engine memory per document, for each method on samples/corpus; beside datasketch and
# datatrove's MinHash stages on a subset when they are installed
# (pip install datasketch datatrove xxhash); then precision and recall of MinHash-LSH at
# Jaccard 0.8 against brute force (bench/dedup_pr.c); --substring and --decontaminate; recall
# on near-duplicate pairs of known character 5-gram Jaccard (bench/dedup_recall.py).
# Times are CPU seconds (user + system) of one process, so the rates are per core and do
# not depend on what else the machine runs.
. "$(dirname "$0")/lib.sh"

in=$W/dedup-all.jsonl
cat "$TOP"/samples/corpus/*.jsonl >"$in"
sub=$W/dedup-sub.jsonl
head -n 300 "$TOP"/samples/corpus/web.jsonl >"$sub"

# rate with one decimal, for the slow peers
rate1() { echo "$1 $2" | awk '{printf "%.2f", $1/1e6/$2}'; }

# text bytes (the peers count the same): python when present, else the JSONL size
textbytes() {
	python3 -c 'import json,sys; print(sum(len(json.loads(l).get("text","").encode()) for l in open(sys.argv[1])))' "$1" 2>/dev/null ||
		stat -c %s "$1"
}
tb=$(textbytes "$in")
tsub=$(textbytes "$sub")
echo "input: $(wc -l <"$in") documents, $(rate "$tb" 1) MB of text (samples/corpus); peer subset $(rate "$tsub" 1) MB"

# cpu CMD...: best user+system seconds of $REPEAT runs, peak RSS (KB) of the last, to $W/cpu
cpu() {
	best=
	for _ in $(seq "${REPEAT:-3}"); do
		/usr/bin/time -f "%U %S %M" -o "$W/time" "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; return 1; }
		read -r cpu_u cpu_s cpu_m <"$W/time"
		best=$(echo "$cpu_u $cpu_s ${best:-1e9}" | awk '{d=$1+$2; if (d < 0.001) d = 0.001; print (d<$3)?d:$3}')
	done
	echo "$best $cpu_m" >"$W/cpu"
}

printf '%-22s %12s %12s %10s %10s\n' method "sign MB/s" "run MB/s" "peak RSS" "B/doc"
for m in "--minhash" "--preset datatrove" "--minhash --verify" "--exact" "--simhash" "--lines"; do
	s=-
	case $m in --lines) ;; *)
		cpu llm-dedup sign -q $m -o "$W/dedup.sig" "$in" && read -r t _ <"$W/cpu" && s=$(rate "$tb" "$t") ;;
	esac
	cpu llm-dedup -q $m --stats "$W/dedup-stats.json" "$in" && read -r t rss <"$W/cpu"
	bpd=$(sed -n 's/.*"memory_bytes_per_document": \([0-9.]*\).*/\1/p' "$W/dedup-stats.json")
	printf '%-22s %12s %12s %8sMB %10s\n' "$m" "$s" "$(rate "$tb" "$t")" "$((rss / 1024))" "${bpd:--}"
done

# bounded memory: the same runs with the buckets in sorted runs on disk (same output)
for m in "--minhash" "--exact" "--simhash"; do
	cpu llm-dedup -q $m --memory 256K --stats "$W/dedup-stats.json" "$in" && read -r t rss <"$W/cpu"
	bpd=$(sed -n 's/.*"memory_bytes_per_document": \([0-9.]*\).*/\1/p' "$W/dedup-stats.json")
	runs=$(sed -n 's/.*"sorted_runs": \([0-9]*\).*/\1/p' "$W/dedup-stats.json")
	printf '%-22s %12s %12s %8sMB %10s  (%s sorted runs)\n' "$m --memory 256K" - "$(rate "$tb" "$t")" \
		"$((rss / 1024))" "${bpd:--}" "$runs"
done
cpu llm-dedup -q --lines --memory 2M --stats "$W/dedup-stats.json" "$in" && read -r t rss <"$W/cpu"
fp=$(sed -n 's/.*"bloom_false_positive_rate": \([0-9.e-]*\).*/\1/p' "$W/dedup-stats.json")
printf '%-22s %12s %12s %8sMB %10s  (Bloom false-positive rate <= %s)\n' "--lines --memory 2M" - \
	"$(rate "$tb" "$t")" "$((rss / 1024))" - "$fp"

# exact substrings (suffix arrays) and decontamination against samples/eval
for m in "--substring" "--substring --memory 4M" "--decontaminate $TOP/samples/eval"; do
	cpu llm-dedup -q $m --stats "$W/dedup-stats.json" "$in" && read -r t rss <"$W/cpu"
	case $m in
	--substring*) note=$(sed -n 's/.*"removed_bytes": \([0-9]*\), "shards": \([0-9]*\).*/\1 bytes removed, \2 shards/p' "$W/dedup-stats.json") ;;
	*) note=$(sed -n 's/.*"items_found": \([0-9]*\).*"documents_contaminated": \([0-9]*\).*/\1 of 200 items found in \2 documents/p' "$W/dedup-stats.json"); m="--decontaminate samples/eval" ;;
	esac
	printf '%-22s %12s %12s %8sMB %10s  (%s)\n' "$m" - "$(rate "$tb" "$t")" "$((rss / 1024))" - "$note"
done
echo "deduplicate-text-datasets (the reference of --substring): Rust, its crates come from crates.io, which this machine cannot reach: not built (skipped)"

# scale-out stages over 8 shards (sign of each, cluster, apply of each)
split -n l/8 -d "$in" "$W/dedup-shard."
t0=$(now)
for s in "$W"/dedup-shard.0?; do llm-dedup sign -q -o "$s.sig" "$s"; done
llm-dedup cluster -q "$W"/dedup-shard.0?.sig
for s in "$W"/dedup-shard.0?; do llm-dedup apply -q --removals "$s.rm" "$s" >/dev/null; done
t1=$(now)
echo "stages, 8 shards one after another: $(echo "$t0 $t1" | awk '{printf "%.2f", $2-$1}') s wall"

# peers on the subset, llm-dedup on the same subset for the ratio
cpu llm-dedup sign -q -o "$W/dedup.sig" "$sub" && read -r ts _ <"$W/cpu"
cpu llm-dedup -q "$sub" && read -r tr _ <"$W/cpu"
cpu llm-dedup -q --preset datatrove "$sub" && read -r tdt _ <"$W/cpu"
echo "subset: llm-dedup sign $(rate "$tsub" "$ts") MB/s, run $(rate "$tsub" "$tr") MB/s, --preset datatrove run $(rate "$tsub" "$tdt") MB/s"
peer() {
	out=$(python3 "$TOP/bench/dedup_peers.py" "$@" 2>/dev/null)
	rc=$?
	if [ $rc = 3 ] || [ -z "$out" ]; then echo "$1: not installed (skipped)"; return; fi
	echo "$out" | while read -r line; do
		name=$(echo "$line" | sed 's/.*"peer": "\([^"]*\)".*/\1/')
		secs=$(echo "$line" | sed 's/.*"seconds": \([0-9.]*\).*/\1/')
		rss=$(echo "$line" | sed 's/.*"peak_rss_kb": \([0-9]*\).*/\1/')
		case $name in *signature) mine=$ts ;; datatrove-run) mine=$tdt ;; *) mine=$tr ;; esac
		echo "$name: $(rate1 "$tsub" "$secs") MB/s, peak RSS $((rss / 1024)) MB;" \
			"llm-dedup is $(echo "$secs $mine" | awk '{printf "%.0f", $1/$2}')x faster"
	done
}
if command -v python3 >/dev/null 2>&1; then
	peer datasketch "$sub"
	peer datatrove-sig "$sub"
	peer datatrove-run "$W/dedup-datatrove" "$sub"
fi

# precision and recall at Jaccard 0.8 against brute force
if cc -std=c11 -O2 -D_GNU_SOURCE -I"$TOP/lib" "$TOP/bench/dedup_pr.c" "$TOP/build/rel/libllm.a" \
	-lzstd -lz -llzma -lbz2 -lpcre2-8 -lutf8proc -lxxhash -larchive -lbrotlidec -ldivsufsort \
	-luchardet -lm -lpthread -ldl -o "$W/dedup_pr" 2>/dev/null; then
	echo "precision/recall at Jaccard 0.8 (--threshold 0.8, then --verify, then the default 14 x 8):"
	for o in "" "-v" "-b 14 -r 8"; do "$W/dedup_pr" -t 0.8 $o "$TOP"/samples/corpus/*.jsonl; done
else
	echo "dedup_pr: could not build against build/rel/libllm.a (skipped)"
fi

# recall and precision on near-duplicate pairs of known character 5-gram Jaccard
# (bench/dedup_recall.py): the plain 0.8 threshold, --verify, and the options llm-dedup(1)
# recommends for that use
if command -v python3 >/dev/null 2>&1; then
	echo "near-duplicate pairs, character 5-gram Jaccard >= 0.8:"
	for o in "--threshold 0.8" "--verify" "--num-perm 100 --bands 20 --rows 5 --verify"; do
		python3 "$TOP/bench/dedup_recall.py" llm-dedup "$W/dedup-recall" "$TOP"/samples/corpus/web.jsonl \
			"$TOP"/samples/corpus/news.jsonl "$TOP"/samples/corpus/wiki.jsonl \
			"$TOP"/samples/corpus/books.jsonl "$TOP"/samples/corpus/qa.jsonl -- --units char --ngram 5 $o
	done
fi
