#!/bin/sh
# The quality rules' word splitter (lib/text/words) on samples/corpus: MB of UTF-8 text per
# CPU second of splitting alone (bench/words_bench.c; texts in memory, best of 3 passes) on
# the English documents (spaCy's rules), the Chinese ones (zh, zh-Hant) with the rules (a Han
# character a word) and with the Chinese segmenter (jieba's words, as llm-clean splits
# Chinese), and all documents; beside spaCy's tokenizer, which datatrove counts words with
# (bench/words_spacy.py; pip install spacy jieba), on the same documents, with the ratio.
. "$(dirname "$0")/lib.sh"

cc -std=c11 -O2 -D_GNU_SOURCE -I"$TOP/lib" "$TOP/bench/words_bench.c" "$TOP/build/rel/libllm.a" \
	-lzstd -lz -llzma -lbz2 -lpcre2-8 -lutf8proc -lxxhash -larchive -lbrotlidec -ldivsufsort \
	-luchardet -lm -lpthread -ldl -o "$W/words_bench" ||
	{ echo "words: could not build bench/words_bench.c against build/rel/libllm.a"; exit 1; }
in=$W/words-all.jsonl
cat "$TOP"/samples/corpus/*.jsonl >"$in"

have_spacy=0
python3 -c 'import spacy, jieba' 2>/dev/null && have_spacy=1
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }
while read -r name peer args; do
	# shellcheck disable=SC2086
	ours=$("$W/words_bench" $args "$in") || exit 1
	line="words $name ($(field "$ours" docs) documents, $(field "$ours" bytes | awk '{printf "%.1f", $1 / 1e6}') MB):"
	line="$line $(field "$ours" mb_s) MB/s, $(field "$ours" words) words"
	if [ $have_spacy = 1 ] && [ "$peer" != - ]; then
		theirs=$(python3 "$TOP/bench/words_spacy.py" "$peer" "$in") || exit 1
		line="$line; spaCy $(field "$theirs" mb_s) MB/s, $(field "$theirs" words) words ($(echo \
			"$(field "$ours" mb_s) $(field "$theirs" mb_s)" | awk '{printf "%.0fx", $1 / $2}'))"
	fi
	echo "$line"
done <<'LIST'
en-rules en -l en
zh-rules - -l zh
zh-segmenter zh -l zh -z
all-rules - -r 3
LIST
[ $have_spacy = 1 ] || echo "words: spaCy or jieba not installed (pip install spacy jieba): no peer"
