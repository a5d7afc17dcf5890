#!/bin/sh
# Compressed input and output (lib/core/codec): llm-cat decoding each format beside the
# format's own tool decoding to /dev/null (gzip -dc, xz -dc, bzip2 -dc, zstd -dc), and
# llm-cat -o NAME.FMT beside the tool compressing at the same level. The figure is CPU time
# (user + system, best of $REPEAT, default 3), which holds on a busy machine; llm-cat also
# parses every line as JSON, so its ratio is an upper bound on what decoding costs it.
# OLD=path/to/an/earlier/llm-cat adds that binary's decoding times (the libarchive reader).
. "$(dirname "$0")/lib.sh"

big=$W/codec.jsonl
if [ ! -s "$big" ]; then
	for i in 1 2 3 4; do cat "$TOP"/samples/corpus/*.jsonl; done >"$big"
fi
size=$(stat -c %s "$big")
for f in gz xz bz2 zst; do
	[ -s "$big.$f" ] && continue
	case $f in
	gz) gzip -c "$big" ;; xz) xz -c "$big" ;; bz2) bzip2 -c "$big" ;; zst) zstd -q -c "$big" ;;
	esac >"$big.$f"
done
echo "input: $(rate "$size" 1) MB of JSONL"

# cpu CMD...: user + system seconds of CMD (stdout to /dev/null), best of $REPEAT.
cpu() {
	best=
	for _ in $(seq "${REPEAT:-3}"); do
		/usr/bin/time -o "$W/codec.time" -f '%U %S' "$@" >/dev/null 2>&1
		best=$(echo "$(tail -n 1 "$W/codec.time") ${best:-1e9}" | awk '{d=$1+$2; print (d<$3)?d:$3}')
	done
	echo "$best"
}
ratio() { echo "$1 $2" | awk '{printf "%.2f", $2/$1}'; }

for f in gz xz bz2 zst; do
	case $f in gz) ref="gzip -dc" ;; xz) ref="xz -dc" ;; bz2) ref="bzip2 -dc" ;; zst) ref="zstd -q -dc" ;; esac
	t_ref=$(cpu $ref "$big.$f")
	t_llm=$(cpu llm-cat -q "$big.$f")
	line="decode $f: $ref ${t_ref}s, llm-cat ${t_llm}s CPU ($(ratio "$t_ref" "$t_llm")x)"
	if [ -n "${OLD:-}" ]; then
		t_old=$(cpu "$OLD" -q "$big.$f")
		line="$line, earlier llm-cat ${t_old}s"
	fi
	echo "$line"
done
t_plain=$(cpu llm-cat -q "$big")
echo "no compression: llm-cat ${t_plain}s CPU (JSON parsing and output alone)"

for f in gz xz bz2 zst; do
	case $f in gz) ref="gzip -6 -c" ;; xz) ref="xz -6 -c" ;; bz2) ref="bzip2 -9 -c" ;; zst) ref="zstd -q -3 -c" ;; esac
	t_ref=$(cpu $ref "$big")
	t_llm=$(cpu llm-cat -q "$big" -o "$W/codec-out.jsonl.$f")
	echo "encode $f: $ref ${t_ref}s, llm-cat -o x.$f ${t_llm}s CPU ($(ratio "$t_ref" "$t_llm")x)"
done
rm -f "$W"/codec-out.jsonl.*
