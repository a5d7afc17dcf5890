#!/bin/sh
test_description='llm-report: the page and the diagnosis of a run directory, --watch of a live run'
. "$(dirname "$0")/../lib.sh"

# Tiny model on the smoke shards: a few steps in a second.
train() {
	llm-train -q --data data --config cfg.json --batch 2 --seq-len 32 --warmup 2 \
		--lr 1e-2 --eval-every 0 "$@"
}

# The points of the polylines of curve KEY in page FILE, all its pieces together.
points() {
	grep -o "<polyline class=\"curve\" data-key=\"$1\" [^>]*points=\"[^\"]*\"" "$2" |
		sed 's/.*points="//; s/"$//' | tr ' ' '\n' | grep -c ,
}

# Logged steps of a run (rows of metrics.jsonl; events are not steps).
steps() {
	grep -v '"event"' "$1/metrics.jsonl" | sed 's/^{"step": \([0-9]*\),.*/\1/' | sort -un | wc -l
}

test_expect_success 'setup: the smoke shards' '
	llm-train --smoke --run-dir smoke >out 2>err &&
	cp -r smoke/smoke-data data && cp smoke/smoke-config.json cfg.json
'

test_expect_success 'bad usage exits 2' '
	test_must_fail --code=2 llm-report 2>err && test_grep "run directory is required" err &&
	test_must_fail --code=2 llm-report smoke smoke 2>err &&
	test_must_fail --code=2 llm-report --watch 1 smoke 2>err && test_grep "give it with -o" err &&
	test_must_fail --code=2 llm-report --watch 1 -o x --diagnose smoke 2>err &&
	test_must_fail --code=2 llm-report --watch 0 -o x smoke 2>err &&
	test_must_fail --code=2 llm-report --max-points 1 smoke 2>err
'

test_expect_success 'a directory that holds no run: exit 1 (2 for --diagnose), naming it' '
	mkdir empty &&
	test_must_fail --code=1 llm-report empty >out 2>err && test_grep "empty" err &&
	test_must_fail --code=2 llm-report --diagnose empty 2>err &&
	test_must_fail --code=1 llm-report nowhere 2>err && test_grep "nowhere" err
'

test_expect_success 'the page: self-contained, one point per logged step' '
	train --steps 30 --run-dir r1 --eval-every 10 --eval-batches 2 --ckpt-every 15 &&
	llm-report -q -o r1.html r1 &&
	head -n 1 r1.html | grep -i "^<!doctype html>" &&
	! grep -i -e "<script" -e "<link" -e " src=" -e "url(" r1.html &&
	test "$(points loss r1.html)" = 30 && test "$(points smoothed_loss r1.html)" = 30 &&
	test "$(points lr r1.html)" = 30 && test "$(points val_loss r1.html)" = 3 &&
	for k in grad_norm update_ratio tokens_per_s mfu mem_mb; do
		test "$(points $k r1.html)" = 30 || { echo "$k"; exit 1; }
	done &&
	grep "step-0000015" r1.html && grep "step-0000030" r1.html &&
	grep "$(sed -n "s/.*\"manifest_hash\": \"\([0-9a-f]*\)\".*/\1/p" r1/train.json)" r1.html &&
	grep "no trainer running" r1.html && ! grep "http-equiv" r1.html
'

test_expect_success 'the page is the same bytes for the same run, on stdout or in a file' '
	llm-report -q r1 >again.html && cmp r1.html again.html
'

test_expect_success 'numbers in their shortest form that reads back, integers as written' '
	mkdir num && cp r1/metrics.jsonl num/ &&
	printf "{\"lr\": 0.00029999999999999997, \"beta1\": 0.90000000000000002, \"eps\": 1e-08, \"seed\": 12345678901234567891}\n" >num/train.json &&
	llm-report -q -o num.html num &&
	grep "<th>lr</th><td>0.0003</td>" num.html && grep "<th>beta1</th><td>0.9</td>" num.html &&
	grep "<th>eps</th><td>1e-08</td>" num.html &&
	grep "<th>seed</th><td>12345678901234567891</td>" num.html &&
	! grep -e 00029999 -e 90000000000000002 num.html
'

test_expect_success 'the title says what the run trained; --title replaces it' '
	grep "<h1>r1: a model of [0-9]* parameters, 30 steps of 2 x 32 tokens</h1>" r1.html &&
	llm-report -q --title "T <1>" r1 >t.html && grep "<h1>T &lt;1&gt;</h1>" t.html
'

test_expect_success 'multiple choice: the chance level beside the accuracy, from the items scored' '
	mkdir ev &&
	printf "{\"step\": 30, \"all\": {\"items\": 3, \"acc\": 0.5, \"acc_norm\": 0.5}, \"domains\": {\"books\": {\"items\": 2, \"acc\": 0.5, \"acc_norm\": 0.5}, \"qa\": {\"items\": 1, \"acc\": 1, \"acc_norm\": 1}}}\n" >ev/choice.json &&
	{
		echo "{\"domain\": \"books\", \"choices\": [\"a\", \"b\"]}" &&
		echo "{\"domain\": \"books\", \"choices\": [\"a\", \"b\", \"c\", \"d\"]}" &&
		echo "{\"domain\": \"qa\", \"choices\": [\"a\", \"b\", \"c\", \"d\", \"e\"]}"
	} >ev/choice.samples.jsonl &&
	llm-report -q --eval ev/choice.json -o ch.html r1 &&
	grep "<th>chance</th>" ch.html &&
	grep "<tr><td>books</td><td>2</td><td>0.5</td><td>0.5</td><td>0.375</td></tr>" ch.html &&
	grep "<tr><td>qa</td><td>1</td><td>1</td><td>1</td><td>0.2</td></tr>" ch.html &&
	grep "<tr class=\"all\"><td>all</td><td>3</td><td>0.5</td><td>0.5</td><td>0.3167</td></tr>" ch.html &&
	rm ev/choice.samples.jsonl && llm-report -q --eval ev/choice.json -o ch2.html r1 &&
	! grep "chance" ch2.html
'

test_expect_success 'a validation domain of one document is flagged' '
	printf "{\"all\": {\"documents\": 5, \"loss\": 3.5}, \"domains\": {\"books\": {\"documents\": 4, \"loss\": 3.4}, \"news\": {\"documents\": 1, \"loss\": 4.25}}}\n" >ev/loss.json &&
	llm-report -q --eval ev/loss.json -o one.html r1 &&
	grep "<tr class=\"warn\"><td>news (one document)</td>" one.html &&
	grep "<tr><td>books</td>" one.html &&
	grep "<p class=\"warn\">Validated on one document: news\." one.html
'

# A pipeline's output directory as pipelines/Makefile leaves it, by hand: two files through
# clean (one with a language under 2% of its domain), a manifest with a domain validated on
# one document, two generations, the times.
test_expect_success '--pipeline: the stages first, then the run; the summary at the end' '
	mkdir -p pipe/cat pipe/clean pipe/shards pipe/eval pipe/times &&
	echo "{\"records_in\": 60, \"records_out\": 60, \"records_rejected\": 0, \"rejected\": {}}" >pipe/cat/a.stats.json &&
	echo "{\"records_in\": 1, \"records_out\": 1, \"records_rejected\": 0, \"rejected\": {}}" >pipe/cat/b.stats.json &&
	echo "{\"records_in\": 60, \"records_out\": 50, \"records_rejected\": 10, \"rejected\": {\"too_short\": 7, \"gopher_few_alpha_words\": 3}, \"domain_langs\": {\"web\": {\"en\": {\"records_in\": 59, \"records_out\": 50, \"rejected\": {\"too_short\": 6, \"gopher_few_alpha_words\": 3}}, \"fr\": {\"records_in\": 1, \"records_out\": 0, \"rejected\": {\"too_short\": 1}}}}}" >pipe/clean/a.stats.json &&
	echo "{\"records_in\": 1, \"records_out\": 0, \"records_rejected\": 1, \"rejected\": {\"too_short\": 1}, \"domain_langs\": {\"books\": {\"en\": {\"records_in\": 1, \"records_out\": 0, \"rejected\": {\"too_short\": 1}}}}}" >pipe/clean/b.stats.json &&
	echo "{\"splits\": {\"train\": {\"documents\": 45, \"tokens\": 9000}, \"val\": {\"documents\": 5, \"tokens\": 800}}, \"domains\": {\"news\": {\"train_documents\": 5, \"train_tokens\": 900, \"val_documents\": 1, \"val_tokens\": 80}, \"web\": {\"train_documents\": 40, \"train_tokens\": 8100, \"val_documents\": 4, \"val_tokens\": 720}}}" >pipe/shards/manifest.json &&
	echo "The law shall" >pipe/eval/generate-1.prompt && echo " be <kept>" >pipe/eval/generate-1.txt &&
	echo "x" >pipe/eval/generate-10.prompt && echo " y" >pipe/eval/generate-10.txt &&
	echo " no prompt" >pipe/eval/generate-2.txt &&
	echo "{\"step\": 30, \"all\": {\"documents\": 5, \"loss\": 3.25, \"ppl\": 25.79}}" >pipe/eval/loss.json &&
	echo 1.5 >pipe/times/clean.a.time && echo 0.25 >pipe/times/clean.b.time && echo 2 >pipe/times/train.all.time &&
	llm-report --pipeline pipe --eval pipe/eval/loss.json -o pipe.html r1 2>err &&
	grep "<h1>pipe: a model of [0-9]* parameters, 30 steps of 2 x 32 tokens</h1>" pipe.html &&
	grep "<tr><td>cat</td><td>2</td><td>61</td><td>61</td><td>0</td><td class=\"why\">-</td></tr>" pipe.html &&
	grep "<tr><td>clean</td><td>2</td><td>61</td><td>50</td><td>11</td><td class=\"why\">too_short 8, gopher_few_alpha_words 3</td></tr>" pipe.html &&
	grep "<tr><td>web</td><td>en</td><td>59</td><td>50</td><td>84.7%</td>" pipe.html &&
	grep "<tr><td>web</td><td>other (1)</td><td>1</td><td>0</td><td>0.0%</td>" pipe.html &&
	grep "<tr><td>books</td><td>en</td><td>1</td><td>0</td>" pipe.html &&
	grep "<tr class=\"warn\"><td>news</td><td>5</td><td>900</td><td>1</td><td>80</td><td>0</td></tr>" pipe.html &&
	grep "<p class=\"warn\">Validated on one document: news\." pipe.html &&
	grep "<pre class=\"gen\"><b>The law shall</b> be &lt;kept&gt;" pipe.html &&
	grep "<pre class=\"gen\"><b><i>(the prompt was not recorded)</i> </b> no prompt" pipe.html &&
	grep -o "<h3>Prompt [0-9]*</h3>" pipe.html >order && printf "<h3>Prompt %s</h3>\n" 1 2 10 >want &&
	test_cmp want order &&
	grep "<tr><td>clean</td><td>1.8</td></tr>" pipe.html && grep "<tr><td>train</td><td>2.0</td></tr>" pipe.html &&
	grep "<h2 class=\"run\">The training run: r1</h2>" pipe.html &&
	sed -n "/id=\"stages\"/=;/id=\"curves\"/=" pipe.html >where && test "$(head -n 1 where)" -lt "$(tail -n 1 where)" &&
	test_grep "^llm-report: documents kept per domain: news 6, web 44$" err &&
	test_grep "^llm-report: tokens: 9000 train, 800 validation$" err &&
	test_grep "^llm-report: validation loss: 3.25 (perplexity 25.79) at step 30$" err &&
	test_grep "^llm-report: report: pipe.html$" err &&
	llm-report -q --pipeline pipe --eval pipe/eval/loss.json -o pipe2.html r1 2>err &&
	test ! -s err && cmp pipe.html pipe2.html
'

test_expect_success '--totals: one line of a stage over its files, nothing without stats' '
	llm-report --totals clean pipe >out &&
	echo "clean: 2 files, 61 documents in, 50 out, 11 rejected (too_short 8, gopher_few_alpha_words 3)" >want &&
	test_cmp want out &&
	llm-report --totals cat pipe >out && echo "cat: 2 files, 61 documents in, 61 out" >want &&
	test_cmp want out &&
	llm-report --totals tox pipe >out && test ! -s out &&
	test_must_fail --code=2 llm-report --totals bogus pipe 2>err && test_grep "unknown stage" err &&
	test_must_fail --code=2 llm-report --totals clean --pipeline pipe pipe 2>err
'

test_expect_success 'healthy runs: --diagnose finds nothing, exit 0' '
	llm-report -q --diagnose r1 >out && test ! -s out &&
	llm-report -q --diagnose smoke >out && test ! -s out
'

# falling N: metrics.jsonl of N steps of a steadily falling loss logged with 6 digits, as a
# long run's log is.
falling() {
	awk -v n="$1" 'BEGIN { for (s = 1; s <= n; s++)
		printf "{\"step\": %d, \"loss\": %.6f}\n", s, 3 + 5 * exp(-s / (n / 10)) }'
}

# A million such steps: the page and the diagnosis cost about 2 s of CPU; the limit of 40 s is
# met only by work linear (or n log n) in the steps (the stair search and the rolling medians
# were about n^2.8 on such a curve: hours). The rounding of the log is no stair.
test_expect_success 'a million falling steps: the page and the diagnosis in bounded CPU' '
	mkdir long && falling 1000000 >long/metrics.jsonl &&
	test_line_count = 1000000 long/metrics.jsonl &&
	( ulimit -t 40 && llm-report -q --diagnose -o long.html long >out ) &&
	test ! -s out && test "$(points loss long.html)" -le 8000
'

test_expect_success 'a non-finite step: divergence, with its batch, exit 1' '
	train --steps 30 --run-dir bad --inject-fault nan@20 2>train.err &&
	test_must_fail --code=1 llm-report -q --diagnose bad >out &&
	test_line_count = 1 out &&
	grep "^step 20: divergence: 1 step with a loss or gradient that is not finite" out &&
	grep "check: .*--skip-batches 19$" out &&
	llm-report -q -o bad.html bad && grep "divergence" bad.html &&
	grep "nonfinite_skipped" bad.html
'

test_expect_success '--diagnose -o also writes the page' '
	test_must_fail --code=1 llm-report -q --diagnose -o both.html bad >out &&
	test_line_count = 1 out && grep "divergence" both.html
'

test_expect_success 'a malformed line of metrics.jsonl: warned with FILE:LINE, the rest shown' '
	cp -r r1 torn && { head -n 3 r1/metrics.jsonl; echo "{\"step\": oops"; tail -n +4 r1/metrics.jsonl; } \
		>torn/metrics.jsonl &&
	llm-report -o torn.html torn 2>err &&
	test_grep "torn/metrics.jsonl:4: " err &&
	test "$(points loss torn.html)" = 30
'

test_expect_success 'a run of TensorBoard event files only' '
	mkdir tb && cp r1/events.out.tfevents.* tb/ &&
	llm-report -q -o tb.html tb && test "$(points loss tb.html)" = 30 &&
	llm-report -q --diagnose tb
'

test_expect_success 'what the run names is escaped: keys, tags, configuration' '
	mkdir esc &&
	printf "{\"step\": 1, \"loss\": 2, \"a\\\\\"<b>\": 1}\n{\"step\": 2, \"loss\": 1, \"a\\\\\"<b>\": 2}\n" \
		>esc/metrics.jsonl &&
	printf "{\"manifest_hash\": \"<script>alert(1)\", \"data\": \"</td><script>\"}\n" >esc/train.json &&
	llm-report -q -o esc.html esc &&
	! grep -e "<b>" -e "<script" esc.html && grep "a&quot;&lt;b&gt;" esc.html
'

test_expect_success DEVFULL 'write errors: exit 1 with a message' '
	test_must_fail --code=1 llm-report -o /dev/full r1 2>err && test_grep "/dev/full" err &&
	test_must_fail --code=2 llm-report --diagnose -o /dev/full bad 2>err
'

test_expect_success 'the man page examples run' '
	sed -n "/^\.Sh EXAMPLES/,/^\.Sh/p" "$TOP/man/man1/llm-report.1" |
		grep -e "^llm-train " -e "^llm-report " >examples &&
	test_line_count -ge 3 examples &&
	{ sh -e examples >out 2>err; test $? = 1; } &&
	grep "^step 20: divergence: " out && test -s run.html
'

test_expect_success MPI 'two data-parallel ranks: the loss of every rank logged and shown' '
	ASAN_OPTIONS=detect_leaks=0 mpirun --allow-run-as-root --oversubscribe -x ASAN_OPTIONS -np 2 sh -c \
		"llm-train -q --data data --config cfg.json --batch 2 --seq-len 32 --warmup 2 \
		 --lr 1e-2 --eval-every 0 --steps 6 --run-dir ranks" &&
	test "$(grep -c "\"loss_rank_1\": [0-9]" ranks/metrics.jsonl)" = 6 &&
	llm-report -q -o ranks.html ranks && test "$(points loss_rank_0 ranks.html)" = 6 &&
	llm-report -q --diagnose ranks
'

# --watch against a live llm-train, with no timing: the trainer is held just before it
# publishes its checkpoint of step 4 (tests/killat.c's pause, on the FIFO go), its lock held
# and steps 1-4 logged; the watcher's -v lines come through the FIFO watch.err.
if cc -shared -fPIC -o killat.so "$TOP/tests/killat.c" -ldl 2>/dev/null; then
	test_set_prereq KILLAT
fi
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
export ASAN_OPTIONS

# While the trainer is held: the page says so, and the watcher's first page has steps 1-4.
# The watcher must not hold the FIFO go open (fd 4): the trainer goes on at its close.
while_paused() {
	test ! -f train.rc && test "$(steps live)" = 4 &&
	llm-report -q -o paused.html live && grep "<td>training (pid [0-9]" paused.html &&
	test "$(points loss paused.html)" = 4 &&
	{ ( llm-report -v --watch 1 -o watch.html live 2>watch.err; echo $? >watch.rc ) 4>&- & } &&
	exec 3<watch.err &&
	read -r first <&3 && echo "$first" | grep "watch.html: step 4$" &&
	grep "<td>training (pid [0-9]" watch.html &&
	grep "http-equiv=\"refresh\" content=\"1\"" watch.html &&
	test "$(points loss watch.html)" = 4
}

test_expect_success KILLAT '--watch: live pages while the trainer runs, the last after it ends' '
	mkfifo go watch.err &&
	{ ( LD_PRELOAD=$TRASH/killat.so LLM_KILL_AT=pause:latest LLM_PAUSE_FIFO=go \
		llm-train -q --data data --config cfg.json --batch 2 --seq-len 32 --warmup 2 \
		--eval-every 0 --steps 8 --ckpt-every 4 --run-dir live; echo $? >train.rc; : <>go ) & } &&
	exec 4>go &&
	{ while_paused; ok=$?; exec 4>&-; cat <&3 >rest; exec 3<&-; wait; test $ok = 0; } &&
	test "$(cat train.rc)" = 0 && test "$(cat watch.rc)" = 0 &&
	tail -n 2 rest | grep "watch.html: step 8, no trainer: the last page" &&
	test "$(points loss watch.html)" = 8 && grep "no trainer running" watch.html &&
	! grep "http-equiv" watch.html && ! ls .watch.html* 2>/dev/null
'

# Held at its checkpoint of step 4, the trainer has written the page of step 2 (a step's page
# comes after its checkpoint).
test_expect_success KILLAT 'llm-train --report-every: the live page, then the last one' '
	mkfifo go2 &&
	{ ( LD_PRELOAD=$TRASH/killat.so LLM_KILL_AT=pause:latest LLM_PAUSE_FIFO=go2 \
		llm-train -q --data data --config cfg.json --batch 2 --seq-len 32 --warmup 2 \
		--eval-every 0 --steps 8 --ckpt-every 4 --report-every 2 --run-dir rep; \
		echo $? >rep.rc; : <>go2 ) & } &&
	exec 5>go2 &&
	{ test ! -f rep.rc && test "$(points loss rep/report.html)" = 2 &&
	  grep "<td>training (pid [0-9]" rep/report.html && grep "http-equiv=\"refresh\"" rep/report.html
	  ok=$?; exec 5>&-; wait; test $ok = 0; } &&
	test "$(cat rep.rc)" = 0 && test "$(points loss rep/report.html)" = 8 &&
	grep "no trainer running" rep/report.html && ! grep "http-equiv" rep/report.html
'

test_expect_success 'llm-train --report-every 0 writes no page' '
	train --steps 2 --report-every 0 --run-dir norep && test ! -e norep/report.html
'

# A real browser (Debian's chromium; skipped without it) renders the page, and its SVG has
# one point per logged step.
command -v chromium >/dev/null 2>&1 && test_set_prereq CHROMIUM
chrome() {
	HOME=$TRASH chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$TRASH/chrome" "$@" 2>/dev/null
}

test_expect_success CHROMIUM 'a headless browser renders the page from file://' '
	chrome --window-size=1200,3000 --screenshot="$TRASH/r1.png" "file://$TRASH/r1.html" &&
	test "$(od -A n -t x1 -N 8 r1.png | tr -d " ")" = 89504e470d0a1a0a &&
	chrome --dump-dom "file://$TRASH/r1.html" >dom.html &&
	grep "<svg" dom.html && test "$(points loss dom.html)" = "$(steps r1)"
'

test_done
