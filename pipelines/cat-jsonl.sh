#!/bin/sh
# pipelines/cat-jsonl.sh RAW DATA COMPRESSED LLM-CAT-COMMAND...
#
# The cat stage of a JSONL raw file (plain, zstd or gzip: every tool reads them) without a copy. LLM-CAT-COMMAND (llm-cat with its
# options, --stats and --rejects, and no input or output) runs on RAW, writing to stdout, and
# its output is compared with RAW's content as it streams. When they are equal (valid JSONL
# that needs no conversion: the usual case), DATA becomes a symbolic link to RAW and nothing
# is written. Otherwise llm-cat runs again writing COMPRESSED (DATA.zst, say), and DATA
# becomes a link to that (COMPRESSED may be DATA itself). The exit status is llm-cat's.
set -u
raw=$1 data=$2 copy=$3
shift 3
dir=$(dirname "$data")
case $raw in
/*) abs=$raw ;;
*) abs=$(pwd)/$raw ;;
esac
case $raw in
*.zst) unpack="zstd -dcq" ;;
*.gz) unpack="gzip -dc" ;;
*) unpack=cat ;;
esac
tmp=$(mktemp -d "$dir/.cat.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# A signal (Ctrl-C in make) ends the script through the EXIT trap, which removes the temporaries.
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
mkfifo "$tmp/raw" || exit 1
# The FIFO is opened before RAW: cmp blocks until a writer opens it, so a RAW that cannot be
# read must still open (and close) it, or cmp would wait for ever. llm-cat's pass below then
# says what is wrong with RAW.
{ $unpack <"$raw"; } >"$tmp/raw" 2>/dev/null &
# This pass only compares: its messages would be repeated by the pass that writes the copy.
{ "$@" "$raw" 2>/dev/null; echo $? >"$tmp/rc"; } | cmp -s - "$tmp/raw"
same=$?
# cmp stops at the first difference; the writers then end on SIGPIPE.
wait
rc=$(cat "$tmp/rc")
# DATA is published by rename, a link to RAW or to the compressed copy.
if [ "$rc" = 0 ] && [ "$same" = 0 ]; then
	ln -s "$abs" "$tmp/link" && mv -f "$tmp/link" "$data" || exit
	[ "$copy" = "$data" ] || rm -f "$copy"
	exit
fi
"$@" "$raw" -o "$copy" || { rc=$?; rm -f "$copy"; exit "$rc"; }
# COMPRESSED may be DATA itself (a pipeline that keeps its files plain): then no link.
[ "$copy" = "$data" ] || { ln -s "$(basename "$copy")" "$tmp/link" && mv -f "$tmp/link" "$data"; }
