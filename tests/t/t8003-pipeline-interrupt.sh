#!/bin/sh
test_description='pipelines/Makefile: interrupted in each stage, make again: the uninterrupted run'
. "$(dirname "$0")/../lib.sh"

# The reduced run of t8000 on two JSONL files and an HTML page; the uninterrupted run is ref/.
# Each case starts from a copy of ref/out without one stage and those after it, and runs make
# until a program of that stage is about to publish an output of the second file
# (tests/killat.c's pause: it waits on a FIFO just before that rename, so the signal always
# lands inside the stage, never by timing); then it sends SIGINT (Ctrl-C) or SIGKILL to
# make's whole process group and runs make again: the shards, the trained model, its losses,
# the evaluation and every stage's document counts must be ref's.
mkdir -p raw/html &&
head -n 30 "$SAMPLES/corpus/books.jsonl" >raw/books.jsonl &&
head -n 30 "$SAMPLES/corpus/news.jsonl" >raw/news.jsonl &&
cp "$SAMPLES/corpus/html/maint-guide_first.en.html" raw/html/page.html &&
head -n 4 "$SAMPLES/eval/next-sentence.jsonl" >task.jsonl &&
printf '%s\n' 'include $(TOP)/pipelines/test.mk' 'EVAL_OPTS += --sampled 2' >t.mk || exit 1
P="make -f $TOP/pipelines/Makefile CONFIG=$TRASH/t.mk BIN=$TOP/bin"
KILLAT_ENV="LD_PRELOAD=$TRASH/killat.so \
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
if cc -shared -fPIC -o killat.so "$TOP/tests/killat.c" -ldl 2>/dev/null; then
	test_set_prereq KILLAT
fi

# workdir DIR: a directory with the corpus, by links.
workdir() {
	mkdir -p "$1" && ln -s ../raw "$1/raw" && ln -s ../task.jsonl "$1/task.jsonl"
}
# counts DIR: every stage's stats file with its documents in and out, one per line.
counts() {
	(cd "$1/out" && for f in */*.stats.json shards.stats.json; do
		printf "%s %s\n" "$f" "$(jq -c "[.records_in, .records_out]" "$f")" || return 1
	done)
}
# shards DIR: each shard of DIR's manifest with its documents, tokens and checksums.
shards() {
	jq -S "[.shards[] | [.file, .documents, .tokens, .checksums]]" "$1/out/shards/manifest.json"
}
# Every step of a run once, "STEP LOSS".
losses() { sed -n 's/^{"step": \([0-9]*\), "loss": \([^,]*\),.*/\1 \2/p' "$1"; }
# like_ref DIR: DIR's shards, run and evaluation are ref's.
like_ref() {
	shards ref >ref.shards && shards "$1" >"$1.shards" && test_cmp ref.shards "$1.shards" &&
	counts ref >ref.counts && counts "$1" >"$1.counts" && test_cmp ref.counts "$1.counts" &&
	test -e "$1/out/run/pipeline.done" &&
	test "$(readlink "$1/out/run/ckpt/latest")" = step-0000006 &&
	losses ref/out/run/metrics.jsonl >ref.losses && losses "$1/out/run/metrics.jsonl" >"$1.losses" &&
	test_line_count = 6 "$1.losses" && test_cmp ref.losses "$1.losses" &&
	cmp ref/out/run/ckpt/step-0000006/model.safetensors \
		"$1/out/run/ckpt/step-0000006/model.safetensors" &&
	jq -S "del(.seconds)" ref/out/eval/loss.json >ref.eval &&
	jq -S "del(.seconds)" "$1/out/eval/loss.json" >"$1.eval" && test_cmp ref.eval "$1.eval" &&
	test -s "$1/out/report.html"
}
# The stages' directories in the order they run.
STAGES="cat clean dedup decon tox tokenizer tokens noise shards run eval"
# interrupt SIG STAGE NAME: in a copy of ref without STAGE and the stages after it, run make
# in a process group of its own with every program pausing just before its first rename to a
# name holding NAME; once one is there, send SIG to the group, check that make did not finish,
# run make again and compare with ref.
interrupt() {
	d=$(printf %s "$3" | tr -c "a-zA-Z0-9" _)$1 &&
	workdir "$d" && cp -a ref/out "$d/" &&
	gone=$(echo "$STAGES" | sed "s/.*\<$2\>/$2/") &&
	(cd "$d/out" && rm -rf $gone report.html) &&
	case " $gone " in *" shards "*) rm -f "$d/out/shards.stats.json";; esac &&
	test ! -e "$d/out/$2" && mkfifo "$d.go" &&
	{ (cd "$d" && env --default-signal=INT $KILLAT_ENV LLM_KILL_AT="pause:$3" \
		LLM_PAUSE_FIFO="$TRASH/$d.go" setsid sh -c 'echo $$ >"$0.pg"; exec '"$P"' >"$0.log" 2>&1' \
		"$TRASH/$d"; echo $? >"$TRASH/$d.rc") & } &&
	exec 4>"$d.go" && { kill -"$1" -"$(cat "$d.pg")"; ok=$?; } && exec 4>&- && wait &&
	test $ok = 0 && test "$(cat "$d.rc")" != 0 && test ! -e "$d/out/report.html" &&
	{ (cd "$d" && $P >"../$d.2.log" 2>&1) || { tail -n 20 "$d.2.log"; false; }; } &&
	like_ref "$d"
}

test_expect_success 'the uninterrupted run' '
	workdir ref &&
	{ (cd ref && $P >../ref.log 2>&1) || { tail -n 30 ref.log; false; }; } &&
	test -e ref/out/run/pipeline.done && test -s ref/out/report.html &&
	test -s ref/out/dedup/news.rm && test -s ref/out/decon/news.jsonl.zst
'

# STAGE (its directory) and the name of an output of its second file (or its global step's).
while read -r stage name sig; do
	test_expect_success KILLAT "$sig inside $stage ($name), then make" "
		interrupt $sig $stage '$name'
	"
done <<'EOF'
cat cat/news.stats.json INT
clean clean/news.jsonl KILL
clean clean/news.stats.json INT
dedup dedup/news.sig INT
dedup dedup/news.rm KILL
dedup dedup/news.jsonl INT
decon decon/news.jsonl KILL
tox tox/news.jsonl INT
tokenizer tokenizer/tokenizer.json KILL
tokens tokens/news.tok INT
noise noise/news.tok KILL
shards shards/manifest.json INT
run ckpt/step-0000003 KILL
eval eval/loss.json INT
EOF

test_done
