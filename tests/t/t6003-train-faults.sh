#!/bin/sh
test_description='llm-train when things go wrong: signals, kill -9, a busy or used run directory, hostile links, NaN weights, no data'
. "$(dirname "$0")/../lib.sh"

# Every step of a run once, "STEP LOSS"; a step logged twice fails the comparison.
losses() { sed -n 's/^{"step": \([0-9]*\), "loss": \([^,]*\),.*/\1 \2/p' "$1"; }

train() {
	llm-train -q --data data --config cfg.json --batch 2 --seq-len 32 --warmup 2 --lr 1e-2 \
		--eval-every 4 --eval-batches 2 --ckpt-every 4 --keep 0 "$@"
}

# Run llm-train in the background, held just before its N-th metrics.prom is renamed into
# place (killat's pause): `paused DIR N ARGS...`. The test's `exec 4>DIR.go` returns once it is
# held there, so no step races past a signal; `exec 4>&-` lets it go on. Its pid is in DIR.pid,
# its exit status in DIR.rc, its stderr in DIR.err.
paused() {
	d=$1 n=$2 && shift 2 && mkfifo "$d.go" || return 1
	{ ( LD_PRELOAD=$TRASH/killat.so LLM_KILL_AT=pause:metrics.prom@$n LLM_PAUSE_FIFO=$d.go \
	    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
	    sh -c 'echo $$ >"$0.pid"; exec llm-train --data data --config cfg.json --batch 2 \
		--seq-len 32 --warmup 2 --lr 1e-2 --eval-every 0 --log-every 1 --run-dir "$0" "$@" \
		2>"$0.err"' "$d" "$@"; echo $? >"$d.rc"; : <>"$d.go" ) & }
}

test_expect_success 'setup: shards, a model, and the uninterrupted run' '
	llm-train --smoke --run-dir smoke >/dev/null 2>&1 &&
	cp -r smoke/smoke-data data && cp smoke/smoke-config.json cfg.json &&
	train --steps 12 --run-dir ref && losses ref/metrics.jsonl >ref.losses &&
	test_line_count = 12 ref.losses &&
	train --steps 40 --decay-steps 40 --ckpt-every 100 --run-dir ref40 &&
	losses ref40/metrics.jsonl >ref40.losses
'

if cc -shared -fPIC -o killat.so "$TOP/tests/killat.c" -ldl 2>/dev/null; then
	test_set_prereq KILLAT
fi

# Killed at POINT (tests/killat.c), then resumed: the run equals the uninterrupted one, step
# for step, and its final weights are the same bytes.
killed_then_resumed() {
	dir=$1 point=$2 &&
	( LD_PRELOAD=$TRASH/killat.so LLM_KILL_AT=$point &&
	  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 &&
	  export LD_PRELOAD LLM_KILL_AT ASAN_OPTIONS &&
	  train --steps 12 --run-dir "$dir"; echo $? >"$dir.rc" ) &&
	test "$(cat "$dir.rc")" = 137 &&
	latest=$(readlink "$dir/ckpt/latest") &&
	for f in config.json model.safetensors optimizer.safetensors state.json; do
		test -s "$dir/ckpt/$latest/$f" || return 1
	done &&
	train --steps 12 --run-dir "$dir" --resume &&
	losses "$dir/metrics.jsonl" >"$dir.losses" && test_cmp ref.losses "$dir.losses" &&
	cmp ref/ckpt/step-0000012/model.safetensors "$dir/ckpt/step-0000012/model.safetensors" &&
	cmp ref/ckpt/step-0000012/optimizer.safetensors "$dir/ckpt/step-0000012/optimizer.safetensors" &&
	! ls -a "$dir/ckpt" | grep "\.tmp\."
}

test_expect_success KILLAT 'kill -9 mid-step, a TensorBoard record half written' '
	size=$(cat ref/events.out.tfevents.* | wc -c) &&
	killed_then_resumed k1 "write:tfevents:$((size / 2 + 7))" &&
	test "$(readlink k1/ckpt/latest)" = step-0000012
'

test_expect_success KILLAT 'kill -9 while a checkpoint is written: the previous one is resumed' '
	size=$(wc -c <ref/ckpt/step-0000004/optimizer.safetensors) &&
	killed_then_resumed k2 "write:optimizer.safetensors:$((size + 5000))"
'

test_expect_success KILLAT 'kill -9 before a complete checkpoint is renamed into place' '
	killed_then_resumed k3 "rename:ckpt/step-0000008"
'

test_expect_success KILLAT 'kill -9 after the checkpoint, before latest points at it' '
	killed_then_resumed k4 "rename:latest@2"
'

test_expect_success KILLAT 'SIGUSR1: the step finishes, a checkpoint is written, --resume continues exactly' '
	paused s1 3 --steps 40 --decay-steps 40 --ckpt-every 100 &&
	exec 4>s1.go && { kill -USR1 "$(cat s1.pid)"; ok=$?; } && exec 4>&- && wait && test $ok = 0 &&
	test "$(cat s1.rc)" = $((128 + 10)) &&
	step=$(sed -n "s/.*stopped after step \([0-9]*\);.*/\1/p" s1.err) &&
	test -n "$step" && test "$step" -ge 3 && test "$step" -lt 40 &&
	test "$(readlink s1/ckpt/latest)" = "$(printf "step-%07d" "$step")" &&
	grep "User defined signal 1: stopped after step $step; checkpoint s1/ckpt/step-" s1.err &&
	train --steps 40 --decay-steps 40 --ckpt-every 100 --eval-every 0 --run-dir s1 --resume &&
	losses s1/metrics.jsonl >s1.losses && test_cmp ref40.losses s1.losses &&
	cmp ref40/ckpt/step-0000040/model.safetensors s1/ckpt/step-0000040/model.safetensors
'

test_expect_success KILLAT 'a second signal stops at once, without a checkpoint' '
	paused s2 2 --steps 40 --ckpt-every 100 &&
	exec 4>s2.go && pid=$(cat s2.pid) &&
	{ kill -STOP "$pid" && kill -TERM "$pid" && kill -INT "$pid" && kill -CONT "$pid"; ok=$?; } &&
	exec 4>&- && wait && test $ok = 0 &&
	rc=$(cat s2.rc) && { test "$rc" = 130 || test "$rc" = 143; } &&
	! test -e s2/ckpt/latest && ! grep "stopped after" s2.err
'

test_expect_success KILLAT 'a second llm-train on a run directory in use exits 1 naming the holder' '
	paused busy 2 --steps 40 --ckpt-every 100 &&
	exec 4>busy.go && pid=$(cat busy.pid) &&
	{ test_must_fail train --steps 4 --run-dir busy --resume 2>err &&
	  test_must_fail train --steps 4 --run-dir busy --force 2>err2; ok=$?; } &&
	exec 4>&- && wait && test $ok = 0 && test "$(cat busy.rc)" = 0 &&
	test_grep "busy: another llm-train is training in it (pid $pid on " err &&
	test_grep "another llm-train" err2 &&
	losses busy/metrics.jsonl >busy.losses && test_cmp ref40.losses busy.losses
'

test_expect_success 'a run directory holding a run is refused without --resume or --force' '
	test_must_fail --code=2 train --steps 2 --run-dir ref 2>err &&
	test_grep "ref holds another run (train.json): --resume continues it, --force replaces it" err &&
	cmp ref.losses ref.losses && losses ref/metrics.jsonl >again && test_cmp ref.losses again
'

test_expect_success '--force replaces the run, and its removal never follows a link' '
	cp -r ref forced && mkdir victim && echo keep >victim/precious &&
	ln -s ../../victim forced/ckpt/step-0000099 &&
	ln -s ../../victim "forced/ckpt/.step-0000007.tmp.12345" &&
	echo mine >forced/notes.txt &&
	train --steps 4 --run-dir forced --force &&
	test "$(cat victim/precious)" = keep && test "$(cat forced/notes.txt)" = mine &&
	ls forced/ckpt >dirs && printf "latest\nstep-0000004\n" >expect && test_cmp expect dirs &&
	losses forced/metrics.jsonl >forced.losses && test_line_count = 4 forced.losses
'

test_expect_success 'pruning and stale-temporary cleanup never follow a link out of the run' '
	cp -r ref links && mkdir victim2 && echo keep >victim2/precious &&
	ln -s ../../victim2 links/ckpt/step-0000001 &&
	ln -s ../../victim2 "links/ckpt/.step-0000013.tmp.999" &&
	train --steps 16 --run-dir links --resume --keep 2 &&
	test "$(cat victim2/precious)" = keep &&
	ls -a links/ckpt >dirs && printf ".\n..\nlatest\nstep-0000012\nstep-0000016\n" >expect &&
	test_cmp expect dirs
'

# The trainer's shell waits on a FIFO before it becomes llm-train (same pid), while a link is
# planted at the name of its metrics.prom temporary.
test_expect_success 'the metrics.prom temporary is never written through a link' '
	echo keep >precious3 && mkdir plink && mkfifo plink.gate &&
	{ ( sh -c '"'"'echo $$ >plink.pid; read x <plink.gate; exec llm-train -q --data data \
		--config cfg.json --batch 2 --seq-len 32 --warmup 2 --lr 1e-2 --eval-every 0 \
		--log-every 1 --steps 4 --ckpt-every 100 --run-dir plink'"'"'; \
	  echo $? >plink.rc ) & } && exec 5>plink.gate &&
	{ ln -s ../precious3 "plink/.metrics.prom.tmp.$(cat plink.pid)"; ok=$?; } &&
	echo go >&5 && exec 5>&- && wait && test $ok = 0 && test "$(cat plink.rc)" = 0 &&
	test "$(cat precious3)" = keep && grep "^llm_train_step 4$" plink/metrics.prom &&
	! ls -a plink | grep "\.metrics\.prom\.tmp"
'

test_expect_success 'NaN weights in a checkpoint are refused at load' '
	cp -r ref nan && f=nan/ckpt/step-0000012/model.safetensors &&
	hl=$(od -An -tu8 -N8 "$f" | tr -d " ") &&
	printf "\377\377\377\377" | dd of="$f" bs=1 seek=$((8 + hl)) conv=notrunc 2>/dev/null &&
	test_must_fail train --steps 16 --run-dir nan --resume 2>err &&
	test_grep "ckpt/latest/model.safetensors: .model.embed_tokens.weight. holds a non-finite value at element 0" err
'

test_expect_success '--max-skips: steps skipped in a row stop the run with exit 1' '
	test_must_fail train --steps 8 --run-dir ms --max-skips 1 --inject-fault nan@3 2>err &&
	test_grep "step 3: 1 steps in a row skipped" err &&
	losses ms/metrics.jsonl >ms.losses && test_line_count = 2 ms.losses
'

test_expect_success 'no training data: exit 1 naming the manifest' '
	head -n 20 "$SAMPLES/corpus/web.jsonl" >docs.jsonl &&
	llm-tokenize train -q --vocab-size 300 -o tok.json docs.jsonl &&
	llm-tokenize -q -t tok.json docs.jsonl >docs.tok &&
	llm-shard -q --val-fraction 1 --tokenizer tok.json -o allval docs.tok &&
	test_must_fail llm-train -q --data allval --model tiny --steps 2 --run-dir nodata 2>err &&
	test_grep "allval/manifest.json: no documents in the train split" err &&
	! test -e nodata/train.json
'

test_done
