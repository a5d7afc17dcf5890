#!/bin/sh
# llm-noise throughput on a realistic token stream: samples/corpus tokenized with GPT-2's
# tokenizer (11,516 documents, 10.5M tokens of English, Chinese, code and HTML) repeated 16
# times under new ids, about 350 MB and 168M tokens, made once and kept in build/bench.
# Three settings: pipelines/production.mk's (5% of the documents noised), every document
# noised (the per-token work), and every document noised with string confusions encoded by
# the tokenizer. Rates are MB/s and tokens/s of input, from wall time and from CPU time
# (user + system; the output is written to a file, as a pipeline does); the CPU figure holds
# on a busy machine.
. "$(dirname "$0")/lib.sh"

TOK=$TOP/tests/data/tokenize/hf_gpt2/tokenizer.json.zst
base=$W/noise-base.tok
in=$W/noise-input.tok
if [ ! -s "$in" ]; then
	cat "$TOP"/samples/corpus/*.jsonl | llm-tokenize -q -t "$TOK" -o "$base" - || exit 1
	python3 - "$base" "$in" <<-\EOF || exit 1
	import json, struct, sys
	src = open(sys.argv[1], "rb").read()
	recs, pos = [], 32
	while pos < len(src):
	    n, m = struct.unpack_from("<II", src, pos)
	    recs.append((json.loads(src[pos + 8:pos + 8 + m]), src[pos + 8 + m:pos + 8 + m + 2 * n]))
	    pos += 8 + m + 2 * n
	with open(sys.argv[2], "wb") as f:
	    f.write(src[:32])
	    for k in range(16):
	        for meta, toks in recs:
	            meta = dict(meta, id="%s/%d" % (meta.get("id", ""), k))
	            b = json.dumps(meta).encode()
	            f.write(struct.pack("<II", len(toks) // 2, len(b)) + b + toks)
	EOF
	rm -f "$base"
fi
size=$(stat -c %s "$in")
tokens=$(python3 -c '
import struct, sys
f = open(sys.argv[1], "rb"); f.seek(32); t = 0
while True:
    p = f.read(8)
    if len(p) < 8: break
    n, m = struct.unpack("<II", p); t += n; f.seek(m + 2 * n, 1)
print(t)' "$in")
echo "input: $(rate "$size" 1) MB token stream, $(($tokens / 1000000))M tokens (samples/corpus x 16, GPT-2 tokens)"
cat "$in" >/dev/null

# Homophones and common misspellings; pairs whose sides differ in token length are skipped.
conf=$W/noise-confusions.txt
printf '%s\t%s\n' " their" " there" " there" " their" " then" " than" " than" " then" \
	" affect" " effect" " effect" " affect" " to" " too" " lose" " loose" " the" " teh" \
	" your" " you're" " its" " it's" " were" " where" " quite" " quiet" >"$conf"

out=$W/noise-out.tok
# run NAME OPTIONS...: wall and CPU seconds (best of $REPEAT, default 3), as rates.
run() {
	name=$1
	shift
	noise() { llm-noise -q "$@" -o "$out" "$in" 2>/dev/null; }
	t_wall=$(seconds noise "$@")
	best=
	for _ in $(seq "${REPEAT:-3}"); do
		/usr/bin/time -o "$W/noise-time" -f "%U %S" llm-noise -q "$@" -o "$out" "$in" 2>/dev/null
		t=$(awk '{print $1 + $2}' "$W/noise-time")
		best=$(echo "$t ${best:-1e9}" | awk '{print ($1 < $2) ? $1 : $2}')
	done
	echo "$name: $(rate "$size" "$t_wall") MB/s, $(rate "$tokens" "$t_wall") M tokens/s;" \
		"CPU $best s: $(rate "$size" "$best") MB/s, $(rate "$tokens" "$best") M tokens/s per core"
}
run "production (--docs 0.05 --mask 0.03 --swap 0.15)" --docs 0.05 --mask 0.03 --mask-id 50256 --swap 0.15
run "every document (--docs 1 --mask 0.03 --swap 0.15)" --docs 1 --mask 0.03 --mask-id 50256 --swap 0.15
run "every document, confusions (--confuse 0.05)" --docs 1 --swap 0.15 --confuse 0.05 \
	--confusions "$conf" --tokenizer "$TOK"
rm -f "$out" "$W/noise-time"
