#!/bin/sh
# Main-text extraction: score (trafilatura's snippet evaluation) and MB of HTML per CPU second
# of llmkit beside trafilatura and resiliparse, in one run, on the 91 labelled pages of
# bench/html-eval (bench/html_eval.py; pip install trafilatura lxml_html_clean resiliparse).
# Then Debian's libgumbo: its HTML5 tree fed to llmkit's own decisions, scored and timed beside
# the tokenizer's tree (bench/html_gumbo.c; needs libgumbo-dev, skipped without it).
# Last, the second, independent measure: the 181 pages of the article-extraction-benchmark
# (shared/data, third-party, its own gold bodies), scored by its 4-word-shingle method beside
# trafilatura (bench/aeb_eval.py; AEB_DATA names the folder, skipped where it is absent).
. "$(dirname "$0")/lib.sh"

python3 "$TOP/bench/html_eval.py" --repeat "${REPEAT:-5}" || exit 1

if [ -e /usr/include/gumbo.h ]; then
	cc -O2 -std=c11 -D_GNU_SOURCE -I"$TOP/lib" -I"$TOP/lib/text" "$TOP/bench/html_gumbo.c" \
		"$TOP/build/rel/libllm.a" -lgumbo -lzstd -lz -llzma -lbz2 -lpcre2-8 -lutf8proc -lxxhash \
		-larchive -lbrotlidec -ldivsufsort -luchardet -lm -lpthread -ldl -o "$W/html_gumbo" || exit 1
	llm-cat -q "$TOP/bench/html-eval/pages.warc.gz" >"$W/html-pages.jsonl" &&
	"$W/html_gumbo" --repeat "${REPEAT:-5}" -o "$W/html-gumbo.jsonl" "$W/html-pages.jsonl" &&
	python3 "$TOP/bench/html_eval.py" --tools "" --texts "llmkit+gumbo=$W/html-gumbo.jsonl" | tail -n 1
else
	echo "libgumbo: not installed (apt-get install libgumbo-dev); skipped"
fi

python3 "$TOP/bench/aeb_eval.py" --repeat "${REPEAT:-3}" || exit 1
