#!/bin/sh
# llm-cat throughput: JSONL passthrough beside cat and zstd -dc on the same >=200 MB file,
# and WARC records/s on the dolma sample WARC files.
. "$(dirname "$0")/lib.sh"

big=$W/cat-big.jsonl
if [ ! -s "$big" ]; then
	for i in 1 2 3 4 5 6 7 8; do cat "$TOP"/samples/corpus/*.jsonl; done >"$big"
fi
[ -s "$big.zst" ] || zstd -q -T0 -3 "$big" -o "$big.zst"
size=$(stat -c %s "$big")
echo "input: $(rate "$size" 1) MB of JSONL ($(stat -c %s "$big.zst") bytes as .zst)"

t_cat=$(seconds cat "$big")
t_llm=$(seconds llm-cat -q "$big")
echo "uncompressed: cat $(rate "$size" "$t_cat") MB/s, llm-cat $(rate "$size" "$t_llm") MB/s" \
	"($(echo "$t_cat $t_llm" | awk '{printf "%.0f%%", 100*$1/$2}') of cat)"
t_zstd=$(seconds zstd -q -dc "$big.zst")
t_llmz=$(seconds llm-cat -q "$big.zst")
echo "zstd input:   zstd -dc $(rate "$size" "$t_zstd") MB/s, llm-cat $(rate "$size" "$t_llmz") MB/s" \
	"($(echo "$t_zstd $t_llmz" | awk '{printf "%.0f%%", 100*$1/$2}') of zstd -dc)"

warc=$W/cat-dolma.warc.gz
if [ ! -s "$warc" ]; then
	for i in $(seq 20); do cat "$TOP"/tests/data/cat/dolma-sample-0000.warc.gz; done >"$warc"
fi
recs=$(gzip -dc "$warc" | grep -c '^WARC/1')
t_warc=$(seconds llm-cat -q "$warc")
echo "WARC: $recs records ($(stat -c %s "$warc") bytes gzip) in ${t_warc}s:" \
	"$(echo "$recs $t_warc" | awk '{printf "%.0f", $1/$2}') records/s"
