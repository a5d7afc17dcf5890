#!/bin/sh
# The Chinese word segmenter (lib/text/zhseg) beside jieba (pip install jieba), on the
# Chinese documents of samples/corpus (lang zh and zh-Hant, all domains, about 10 MB):
# MB/s of UTF-8 text per core from CPU time (segmentation alone, the dictionary loaded
# before timing on both sides, same dict.txt), and the agreement of the tokens with
# jieba.lcut's (the share of jieba's tokens that zhseg produces with the same byte span;
# bench/zhseg_jieba.py defines it). Then the same on all of samples/corpus.
. "$(dirname "$0")/lib.sh"

DICT=${LLM_ZHSEG_DICT:-/usr/lib/python3/dist-packages/jieba/dict.txt}
[ -r "$DICT" ] || { echo "zhseg: no jieba dictionary $DICT (install python3-jieba; skipped)"; exit 0; }
cc -std=c11 -O2 -D_GNU_SOURCE -I"$TOP/lib" "$TOP/bench/zhseg_bench.c" "$TOP/build/rel/libllm.a" \
	-lzstd -lpcre2-8 -lxxhash -larchive -lm -lpthread -o "$W/zhseg_bench" ||
	{ echo "zhseg: could not build bench/zhseg_bench.c against build/rel/libllm.a"; exit 1; }

if [ ! -s "$W/zhseg-zh.jsonl" ]; then
	python3 - "$TOP/samples/corpus" "$W/zhseg-zh.jsonl" <<-\PY
	import glob, json, sys
	with open(sys.argv[2], "w", encoding="utf-8") as out:
	    for f in sorted(glob.glob(sys.argv[1] + "/*.jsonl")):
	        for line in open(f, encoding="utf-8"):
	            if str(json.loads(line).get("lang", "")).startswith("zh"):
	                out.write(line)
	PY
fi
cat "$TOP"/samples/corpus/*.jsonl >"$W/zhseg-all.jsonl"

have_jieba=0
python3 -c 'import jieba' 2>/dev/null && have_jieba=1
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }
for set in zh all; do
	f=$W/zhseg-$set.jsonl
	ours=$("$W/zhseg_bench" -d "$DICT" "$f") || exit 1
	mb=$(field "$ours" bytes | awk '{printf "%.1f", $1 / 1e6}')
	line="zhseg $set ($mb MB, $(field "$ours" docs) documents): zhseg $(field "$ours" mb_s) MB/s (load $(field "$ours" load_s)s)"
	if [ $have_jieba = 1 ]; then
		peer=$(python3 "$TOP/bench/zhseg_jieba.py" bench "$DICT" "$f") || exit 1
		line="$line, jieba $(field "$peer" mb_s) MB/s ($(echo "$(field "$ours" mb_s) $(field "$peer" mb_s)" | awk '{printf "%.0fx", $1 / $2}'))"
	fi
	echo "$line"
	if [ $have_jieba = 1 ]; then
		"$W/zhseg_bench" -d "$DICT" -s "$f" >"$W/zhseg-$set.spans" || exit 1
		a=$(python3 "$TOP/bench/zhseg_jieba.py" agree "$DICT" "$W/zhseg-$set.spans" "$f") || exit 1
		echo "zhseg $set agreement with jieba: $(field "$a" common) of $(field "$a" jieba_tokens) jieba tokens" \
			"(recall $(field "$a" recall), precision $(field "$a" precision); without white space" \
			"$(field "$a" recall_nonspace) / $(field "$a" precision_nonspace));" \
			"$(field "$a" docs_identical) of $(field "$a" docs) documents identical"
	fi
done
[ $have_jieba = 1 ] || echo "zhseg: jieba not installed (pip install jieba): no peer"
