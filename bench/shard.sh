#!/bin/sh
# llm-shard throughput: shards written from a >= 1 GiB token stream, beside `cat > file` on the
# same bytes (the I/O limit) and `cat > file; sync file` (llm-shard fsyncs every shard before
# naming it, so its wall time includes the disk's and `cat + sync` is the like-for-like
# figure); CPU time (user + system) of both, which holds on a busy machine; a stream with
# noised inputs (llm-noise --docs 0.05, twice the bytes); then --verify and a Megatron
# export. The input is synthetic: random tokens of a 50257-token vocabulary in documents of
# 1 to 2000 tokens, made once and kept in build/bench.
. "$(dirname "$0")/lib.sh"

in=$W/shard-input.tok
if [ ! -s "$in" ]; then
	python3 - "$in" <<-\EOF || exit 1
	import json, os, random, struct, sys
	rng = random.Random(1)
	clear = bytes(b & 0x7f for b in range(256))   # high byte < 0x80: tokens < 32768 < vocab
	recs = []
	size = 0
	while size < 64 << 20:
	    n = rng.randrange(1, 2000)
	    toks = bytearray(os.urandom(2 * n))
	    toks[1::2] = toks[1::2].translate(clear)
	    meta = json.dumps({"id": "d%d" % len(recs), "domain": ("web", "news", "code")[len(recs) % 3]}).encode()
	    rec = struct.pack("<II", n, len(meta)) + meta + bytes(toks)
	    recs.append(rec)
	    size += len(rec)
	block = b"".join(recs)
	with open(sys.argv[1], "wb") as f:
	    f.write(b"LLMTOK01" + struct.pack("<IIIIQ", 1, 2, 50257, 0, 0))
	    for _ in range(16):   # 16 x 64 MiB: 1 GiB of records
	        f.write(block)
	EOF
fi
size=$(stat -c %s "$in")
echo "input: $(rate "$size" 1) MB token stream ($(($size / 2 / 1000000))M tokens)"
cat "$in" >/dev/null

# cpu PREP CMD...: user + system seconds of CMD, best of $REPEAT (default 3), each run after an
# untimed PREP (removing the last run's output, which costs the system time of a delete).
cpu() {
	prep=$1
	shift
	best=
	for _ in $(seq "${REPEAT:-3}"); do
		$prep
		/usr/bin/time -o "$W/shard-time" -f "%U %S" "$@" >/dev/null
		t=$(awk '{print $1 + $2}' "$W/shard-time")
		best=$(echo "$t ${best:-1e9}" | awk '{print ($1 < $2) ? $1 : $2}')
	done
	rm -f "$W/shard-time"
	echo "$best"
}
pct() { echo "$1 $2" | awk '{printf "%.0f%%", 100*$1/$2}'; }

out=$W/shard-out
cat_to_file() { cat "$in" >"$W/shard-cat.bin"; }
cat_sync() { cat "$in" >"$W/shard-cat.bin" && sync "$W/shard-cat.bin"; }
shard() { rm -rf "$out" && llm-shard -q -o "$out" --eos 50256 "$@"; }
no_cat() { rm -f "$W/shard-cat.bin"; }
no_out() { rm -rf "$out"; }
t_cat=$(seconds cat_to_file)
t_sync=$(seconds cat_sync)
c_cat=$(cpu no_cat sh -c 'exec cat "$1" >"$2"' sh "$in" "$W/shard-cat.bin")
no_cat
t_shard=$(seconds shard "$in")
c_shard=$(cpu no_out llm-shard -q -o "$out" --eos 50256 "$in")
echo "write: cat > file $(rate "$size" "$t_cat") MB/s, cat > file + sync $(rate "$size" "$t_sync") MB/s," \
	"llm-shard $(rate "$size" "$t_shard") MB/s ($(pct "$t_cat" "$t_shard") of cat," \
	"$(pct "$t_sync" "$t_shard") of cat + sync)"
echo "CPU time: cat > file $c_cat s, llm-shard $c_shard s" \
	"($(echo "$c_shard $c_cat" | awk '{printf "%.1f", $1/$2}') x cat)"
t_verify=$(seconds llm-shard --verify "$out/manifest.json")
echo "verify: $(rate "$size" "$t_verify") MB/s (every checksum and token range)"
megatron() { rm -rf "$W/shard-mg" && llm-shard -q --format megatron -o "$W/shard-mg" --eos 50256 "$in"; }
t_mg=$(seconds megatron)
echo "megatron export: $(rate "$size" "$t_mg") MB/s"
rm -rf "$W/shard-mg"

noised=$W/shard-noised.tok
[ -s "$noised" ] || llm-noise -q --docs 0.05 --swap 0.15 -o "$noised" "$in" || exit 1
nsize=$(stat -c %s "$noised")
t_noised=$(seconds shard "$noised")
c_noised=$(cpu no_out llm-shard -q -o "$out" --eos 50256 "$noised")
echo "noised inputs ($(rate "$nsize" 1) MB stream): llm-shard $(rate "$nsize" "$t_noised") MB/s," \
	"CPU time $c_noised s"
rm -rf "$out"
