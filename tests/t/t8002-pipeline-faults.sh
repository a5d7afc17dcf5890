#!/bin/sh
test_description='pipelines/Makefile when things go wrong: training interrupted, hostile file names, two makes at once, dry runs'
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/lib-faults.sh"

# The reduced run of t8000 on three JSONL files, one of them with a name that is a command
# to sh (z`id>PWNED`.jsonl) and an HTML page whose name has quotes, & and <. The uninterrupted
# run is ref/; each interruption test works on a copy of ref/out without its training, eval
# and report (the raw files and the task are shared, by links), so only those stages run.
mkdir -p raw/html bin &&
head -n 40 "$SAMPLES/corpus/books.jsonl" >raw/books.jsonl &&
head -n 40 "$SAMPLES/corpus/news.jsonl" >raw/news.jsonl &&
head -n 40 "$SAMPLES/corpus/qa.jsonl" >'raw/z`id>PWNED`.jsonl' &&
cp "$SAMPLES/corpus/html/maint-guide_first.en.html" "raw/html/it's\"q\"&<b>.html" &&
head -n 4 "$SAMPLES/eval/next-sentence.jsonl" >task.jsonl &&
cp "$TOP"/bin/llm-* bin/ && ln -s "$TOP/samples" samples &&
# The validation loss on 2 sampled batches, not the whole split, keeps the test short; other.mk
# changes the training (a longer warmup).
printf '%s\n' 'include $(TOP)/pipelines/test.mk' 'EVAL_OPTS += --sampled 2' >t.mk &&
printf '%s\n' "include $TRASH/t.mk" 'TRAIN_OPTS += --warmup 3' >other.mk || exit 1
P="make -f $TOP/pipelines/Makefile CONFIG=$TRASH/t.mk BIN=$TRASH/bin"
KILLAT_ENV="LD_PRELOAD=$TRASH/killat.so ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
if cc -shared -fPIC -o killat.so "$TOP/tests/killat.c" -ldl 2>/dev/null; then
	test_set_prereq KILLAT
fi

# workdir DIR: a directory with the corpus, by links.
workdir() {
	mkdir -p "$1" && ln -s ../raw "$1/raw" && ln -s ../task.jsonl "$1/task.jsonl"
}
# untrained DIR: a work directory holding ref's stages up to the shards.
untrained() {
	workdir "$1" && cp -a ref/out "$1/" &&
	rm -rf "$1/out/run" "$1/out/run.old" "$1/out/eval" "$1/out/run.html" "$1/out/report.html" &&
	(cd "$1" && $P -q shards)
}
# Every step of a run once, "STEP LOSS".
losses() { sed -n 's/^{"step": \([0-9]*\), "loss": \([^,]*\),.*/\1 \2/p' "$1"; }
# like_ref DIR: DIR's run trained to its last step with the losses, weights and validation
# loss of ref's uninterrupted run.
like_ref() {
	test -e "$1/out/run/pipeline.done" &&
	test "$(readlink "$1/out/run/ckpt/latest")" = step-0000006 &&
	losses ref/out/run/metrics.jsonl >ref.losses && losses "$1/out/run/metrics.jsonl" >"$1.losses" &&
	test_line_count = 6 "$1.losses" && test_cmp ref.losses "$1.losses" &&
	cmp ref/out/run/ckpt/step-0000006/model.safetensors "$1/out/run/ckpt/step-0000006/model.safetensors" &&
	jq -S "del(.seconds)" ref/out/eval/loss.json >ref.eval &&
	jq -S "del(.seconds)" "$1/out/eval/loss.json" >"$1.eval" && test_cmp ref.eval "$1.eval" &&
	test -s "$1/out/report.html"
}
# in_group DIR NAME ENV...: run $P in DIR in a process group of its own (its id in NAME.pg,
# its exit status in NAME.rc, its output in NAME.log), in the background, with ENV set. The
# shell starts a background command with SIGINT ignored; env gives it back its default, so
# that a SIGINT to the group is a Ctrl-C to make and every program under it.
in_group() {
	d=$1 n=$2 && shift 2 &&
	{ (cd "$d" && env --default-signal=INT "$@" setsid sh -c 'echo $$ >"$0.pg"; exec '"$P"' >"$0.log" 2>&1' \
		"$TRASH/$n"; echo $? >"$TRASH/$n.rc") & }
}

test_expect_success 'names with a backquoted command, quotes, & and < are names in every stage' '
	workdir ref &&
	{ (cd ref && $P -j2 >../ref.log 2>&1) || { tail -n 30 ref.log; false; }; } &&
	test -z "$(find . -name PWNED)" &&
	test -s "ref/out/tox/z\`id>PWNED\`.jsonl.zst" &&
	test -s "ref/out/noise/html-it'"'"'s\"q\"&<b>.tok.zst" &&
	test "$(jq .records_out "ref/out/cat/z\`id>PWNED\`.stats.json")" = 40 &&
	test -e ref/out/run/pipeline.done && test -s ref/out/report.html &&
	(cd ref && $P -q)
'

test_expect_success 'a raw name make cannot take stops the run before any stage, naming it' '
	for n in "a b" "a:b" "a#b" "a%b" "a\$b" "a;b" "a=b" "a(b)" "a*b" "a\\b" "$(printf "a\tb")"; do
		rm -rf bad && mkdir -p bad/raw && ln -s ../task.jsonl bad/task.jsonl &&
		cp raw/books.jsonl bad/raw/ && cp raw/news.jsonl "bad/raw/$n.jsonl" &&
		{ (cd bad && test_must_fail --code=2 $P) 2>err || exit 1; } &&
		test_grep "pipelines/Makefile: raw/.*\.jsonl: make cannot take a file name" err &&
		test_line_count = 1 err && test ! -e bad/out || { echo "name \"$n\""; exit 1; }
	done &&
	rm -rf bad && mkdir -p bad/raw/html && cp raw/books.jsonl bad/raw/ && touch "bad/raw/html/x y.html" &&
	(cd bad && test_must_fail --code=2 $P list-cat) 2>err &&
	test_grep "raw/html/x y.html: make cannot take" err
'

# A dry run once wrote the option stamps it read: the next plain make then reran every stage
# after the one whose option the dry run had changed.
test_expect_success 'make -n and make -q with other options change nothing' '
	tree_sum ref/out >before &&
	(cd ref && $P -n TOX_OPTS="--threshold 0.9" >../plan 2>&1) &&
	grep -q "llm-tox. -q .* --threshold 0.9 .*books" plan &&
	(cd ref && test_must_fail $P -q TRAIN_OPTS="--model tiny --steps 7" SEED=2) &&
	tree_sum ref/out >after && test_cmp before after &&
	(cd ref && $P -q)
'

test_expect_success KILLAT 'Ctrl-C while it trains, then make: the run resumes to its last step' '
	untrained int && mkfifo int.go &&
	in_group int int $KILLAT_ENV LLM_KILL_AT=pause:ckpt/step-0000003 LLM_PAUSE_FIFO=$TRASH/int.go &&
	exec 4>int.go && { kill -INT -$(cat int.pg); ok=$?; } && exec 4>&- && wait &&
	test $ok = 0 && test "$(cat int.rc)" != 0 &&
	test_grep "stopped after step 3" int.log &&
	flock -n int/out/.lock true && flock -n int/out/run/train.lock true &&
	test ! -e int/out/run/pipeline.done && test ! -e int/out/eval/loss.json &&
	test "$(readlink int/out/run/ckpt/latest)" = step-0000003 &&
	(cd int && $P >../int2.log 2>&1) &&
	test_grep "resuming the interrupted run from ckpt/step-0000003" int2.log &&
	like_ref int
'

test_expect_success KILLAT 'kill -9 of the whole make while it trains, then make' '
	untrained k9 && mkfifo k9.go &&
	in_group k9 k9 $KILLAT_ENV LLM_KILL_AT=pause:ckpt/step-0000006 LLM_PAUSE_FIFO=$TRASH/k9.go &&
	exec 4>k9.go && { kill -KILL -$(cat k9.pg); ok=$?; } && exec 4>&- && wait &&
	test $ok = 0 && test "$(cat k9.rc)" = 137 &&
	test "$(readlink k9/out/run/ckpt/latest)" = step-0000003 &&
	(cd k9 && $P >../k9-2.log 2>&1) &&
	test_grep "resuming the interrupted run from ckpt/step-0000003" k9-2.log &&
	like_ref k9
'

test_expect_success KILLAT 'kill -9 of llm-train alone, then make' '
	untrained kt &&
	(cd kt && env $KILLAT_ENV LLM_KILL_AT=rename:ckpt/step-0000006 $P >../kt.log 2>&1; echo $? >../kt.rc) &&
	test "$(cat kt.rc)" = 2 && test_grep "pipeline: train all: failed (exit 137)" kt.log &&
	test ! -e kt/out/run/pipeline.done &&
	(cd kt && $P >../kt2.log 2>&1) &&
	like_ref kt
'

test_expect_success 'other training options start a new run and keep the old one aside' '
	untrained new && (cd new && $P >../new.log 2>&1) && like_ref new &&
	(cd new && $P CONFIG=$TRASH/other.mk >../new2.log 2>&1) &&
	test_grep "previous one is kept in out/run.old" new2.log &&
	cmp ref/out/run/ckpt/step-0000006/model.safetensors new/out/run.old/ckpt/step-0000006/model.safetensors &&
	test -e new/out/run/pipeline.done && test -e new/out/run.old/pipeline.done &&
	! cmp -s ref/out/run/ckpt/step-0000006/model.safetensors new/out/run/ckpt/step-0000006/model.safetensors &&
	(cd new && $P -q CONFIG=$TRASH/other.mk)
'

# The locks are held by the test itself: flock on a descriptor of this shell, released by
# closing it.
test_expect_success 'a make on a work directory in use fails at once and changes nothing' '
	tree_sum new/out >before &&
	exec 9>new/out/.lock && flock -n 9 &&
	(cd new && test_must_fail --code=2 $P >../busy.log 2>&1) &&
	(cd new && test_must_fail --code=2 $P out/cat/books.stats.json >>../busy.log 2>&1) &&
	test_grep "out is in use by another make of this pipeline" busy.log &&
	flock -s -n 9 && (cd new && $P out/cat/books.stats.json) &&
	(cd new && test_must_fail --code=2 $P train >/dev/null 2>&1) &&
	(cd new && $P -s list-cat >/dev/null) &&
	exec 9>&- &&
	tree_sum new/out >after && test_cmp before after
'

test_expect_success 'a run directory whose trainer holds train.lock is never replaced' '
	tree_sum new/out/run >before && tree_sum new/out/run.old >before.old &&
	exec 9<new/out/run/train.lock && flock -n 9 &&
	(cd new && test_must_fail --code=2 $P >../held.log 2>&1) &&
	exec 9<&- &&
	test_grep "train.sh: out/run: a trainer holds out/run/train.lock: not replaced" held.log &&
	exec 9<new/out/run/train.lock && flock -n 9 &&
	(cd new && test_must_fail --code=2 $P clean-stage STAGE=run 2>../held.log) &&
	exec 9<&- &&
	test_grep "a trainer holds out/run/train.lock: not removed" held.log &&
	tree_sum new/out/run >after && test_cmp before after &&
	tree_sum new/out/run.old >after.old && test_cmp before.old after.old
'

test_expect_success 'an empty EVAL_TASK skips the multiple-choice stage' '
	(cd new && $P CONFIG=$TRASH/other.mk EVAL_TASK= >../noeval.log 2>&1) &&
	test ! -e new/out/eval/choice.json && test -s new/out/eval/loss.json &&
	! grep -q "<h3>choice.json</h3>" new/out/report.html && ! grep -q "nan" new/out/report.html &&
	(cd new && $P -q CONFIG=$TRASH/other.mk EVAL_TASK=)
'

# An ARC file (the Internet Archive's format before WARC), gzip per record.
test_expect_success 'ARC files under warc/ go through the cat stage' '
	workdir arc && rm arc/raw && mkdir -p arc/raw/warc &&
	printf "1 0 Test\nURL IP-address Archive-date Content-type Archive-length\n\n" >d.body &&
	printf "HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n<html><body><p>An old page.</p></body></html>" >h.body &&
	{ { printf "filedesc://old.arc 0.0.0.0 19961104142103 text/plain %d\n" $(wc -c <d.body) &&
	    cat d.body && echo; } | gzip -n &&
	  { printf "http://www.example.edu:80/index.html 1.2.3.4 19961104142103 text/html %d\n" $(wc -c <h.body) &&
	    cat h.body && echo; } | gzip -n; } >arc/raw/warc/old.arc.gz &&
	(cd arc && $P -s list-cat >../list && $P out/cat/warc-old-arc-gz.stats.json >../arc.log 2>&1) &&
	test "$(cat list)" = out/cat/warc-old-arc-gz.stats.json &&
	jq -e ".records_out == 1" arc/out/cat/warc-old-arc-gz.stats.json &&
	zstd -dc arc/out/cat/warc-old-arc-gz.jsonl.zst | jq -e ".url == \"http://www.example.edu:80/index.html\""
'

# slurm-submit.sh with a fake sbatch, which records its arguments and each job's --wrap
# line, and a fake make, which records its arguments (and lists one file for list-*).
test_expect_success 'slurm-submit.sh passes VARIABLE=value and sbatch options intact' '
	mkdir -p fake sub &&
	cat >fake/sbatch <<-\EOF &&
	#!/bin/sh
	n=$(($(cat "$FAKE/n" 2>/dev/null || echo 0) + 1)) && echo $n >"$FAKE/n"
	printf "%s\n" "$@" >"$FAKE/sbatch.$n"
	while [ $# -gt 0 ]; do [ "$1" != --wrap ] || printf "%s\n" "$2" >"$FAKE/wrap.$n"; shift; done
	echo $((1000 + n))
	EOF
	cat >fake/make <<-\EOF &&
	#!/bin/sh
	for a; do case $a in list-*) echo out/cat/x.stats.json; exit 0 ;; esac; done
	{ printf "%s\n" "$@"; echo "--"; } >>"$FAKE/make.log"
	EOF
	chmod +x fake/sbatch fake/make &&
	(cd sub && FAKE=$TRASH/fake PATH=$TRASH/fake:$PATH CONFIG=c.mk sh "$TOP/pipelines/slurm-submit.sh" \
		"--comment=a b" "SEED=1;id>PWNED" "TRAIN_OPTS=--steps 7 --lr \"1e-3\" '\''x'\''" >../jobs) &&
	test_line_count = 6 jobs && grep -x -- "--comment=a b" fake/sbatch.1 &&
	for w in fake/wrap.*; do
		(cd sub && FAKE=$TRASH/fake PATH=$TRASH/fake:$PATH CONFIG=c.mk SLURM_ARRAY_TASK_ID=0 \
			sh -c "$(cat ../$w)") || exit 1
	done &&
	test -z "$(find . -name PWNED)" &&
	test $(grep -c -x "SEED=1;id>PWNED" fake/make.log) = 6 &&
	test $(grep -c -x "TRAIN_OPTS=--steps 7 --lr \"1e-3\" '\''x'\''" fake/make.log) = 6
'

test_done
