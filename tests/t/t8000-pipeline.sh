#!/bin/sh
test_description='pipelines/Makefile: a reduced run end to end, reruns, option changes, Slurm arrays'
. "$(dirname "$0")/../lib.sh"

# A small corpus of every kind from samples/ (40 documents a domain, one HTML page, the WARC
# pair), a 4-question task, and private copies of the programs: the rerun tests look at dates.
mkdir -p raw/html raw/warc bin &&
for f in "$SAMPLES"/corpus/*.jsonl; do head -n 40 "$f" >raw/"${f##*/}"; done &&
cp "$SAMPLES"/corpus/html/maint-guide_first.en.html raw/html/ &&
cp "$SAMPLES"/corpus/warc/* raw/warc/ &&
head -n 4 "$SAMPLES"/eval/next-sentence.jsonl >task.jsonl &&
cp "$TOP"/bin/llm-* bin/ && ln -s "$TOP/samples" samples || exit 1
P="make -f $TOP/pipelines/Makefile CONFIG=$TOP/pipelines/test.mk BIN=$TRASH/bin"

test_expect_success 'the reduced pipeline runs from raw files to a report' '
	{ $P -j2 >log 2>&1 || { tail -n 40 log; false; }; } &&
	test -s out/report.html && test -s out/shards/manifest.json &&
	test -s out/eval/loss.json && test -s out/eval/choice.json &&
	test -s out/eval/generate-1.txt && test -s out/eval/generate-1.prompt &&
	test -L out/run/ckpt/latest -o -e out/run/ckpt/latest
'

test_expect_success 'every stage accounts for its records: in = out + rejected' '
	for f in out/*/*.stats.json; do
		jq -e ".records_in == .records_out + .records_rejected" $f >/dev/null ||
		{ echo "bad accounting in $f"; exit 1; }
	done
'

test_expect_success 'the tox stage follows the recipe: statutes are exempt, not dropped' '
	jq -e ".records_rejected == 0 and .records_out > 0" out/tox/legal.stats.json &&
	grep -q "\"tox_exempt\"" out/tox/legal.stats.json
'

# The one page is llm-report's: the pipeline's sections, then the run's, from the files the
# stages left (the counts below are those of the stats files and the manifest).
test_expect_success 'the report shows each stage, the loss curve and the validation' '
	grep -q "<h1>out: a model of [0-9]* parameters, 6 steps of 2 x 32 tokens</h1>" out/report.html &&
	grep -q "<h2>Documents per stage</h2>" out/report.html &&
	in=$(jq -s "map(.records_in) | add" out/clean/*.stats.json) &&
	kept=$(jq -s "map(.records_out) | add" out/clean/*.stats.json) &&
	grep -q "<tr><td>clean</td><td>11</td><td>$in</td><td>$kept</td>" out/report.html &&
	grep -q "<tr><td>shards</td><td>1</td>" out/report.html &&
	grep -q "Cleaning per domain and language" out/report.html &&
	grep -q "<td>books</td><td>en</td><td>40</td>" out/report.html &&
	grep -q "<td>zh</td>" out/report.html &&
	grep -q "<h2>Tokens per domain</h2>" out/report.html &&
	tr=$(jq ".domains.books.train_tokens" out/shards/manifest.json) &&
	grep -q "<tr><td>books</td><td>[0-9]*</td><td>$tr</td>" out/report.html &&
	grep -q "<polyline class=\"curve\" data-key=\"loss\"" out/report.html &&
	grep -q "<h2>Diagnosis</h2>" out/report.html &&
	grep -q "<h3>loss.json</h3>" out/report.html && grep -q "<th>bits_per_byte</th>" out/report.html &&
	grep -q "<h3>choice.json</h3>" out/report.html && grep -q "<th>chance</th>" out/report.html &&
	grep -q "<pre class=\"gen\"><b>The law shall</b>" out/report.html &&
	grep -q "Time per stage" out/report.html &&
	! grep -q "llmkit demo report" out/report.html
'

# A run of 11 raw files prints one line per stage, never one per file; the cluster step says
# what it found.
test_expect_success 'one line of totals per stage, the cluster step with its counts' '
	for st in cat clean dedup decon tox tokens noise; do
		test "$(grep -c "^pipeline: $st: 11 files, [0-9]* documents in, [0-9]* out" log)" = 1 ||
		{ echo "stage $st"; grep "^pipeline: $st" log; exit 1; }
	done &&
	in=$(jq -s "map(.records_in) | add" out/clean/*.stats.json) &&
	rej=$(jq -s "map(.records_rejected) | add" out/clean/*.stats.json) &&
	grep "^pipeline: clean: 11 files, $in documents in, [0-9]* out, $rej rejected (" log &&
	grep "^llm-dedup: [0-9]* documents in 11 shards: [0-9]* duplicates" log &&
	! grep -e "^pipeline: [a-z]* books" -e "^pipeline: clean news" log &&
	test "$(grep -c "^pipeline: " log)" -le 30
'

test_expect_success 'the run ends with what it kept, its tokens, its loss and the page' '
	grep "^llm-report: documents kept per domain: books [0-9]*, code [0-9]*" log &&
	grep "^llm-report: tokens: [0-9]* train, [0-9]* validation$" log &&
	grep "^llm-report: validation loss: [0-9.]* (perplexity [0-9.]*) at step 6$" log &&
	grep "^llm-report: report: out/report.html$" log
'

test_expect_success 'a second run has nothing to do' '
	$P -q
'

test_expect_success 'a touched raw file reruns its own chain and the global steps only' '
	touch raw/news.jsonl &&
	$P -n >plan 2>&1 &&
	grep -q "out/cat/news.jsonl" plan &&
	grep -q "stage.sh. dedup .cluster." plan &&
	test_must_fail grep -q "out/cat/books.jsonl" plan &&
	test_must_fail grep -q "llm-clean.*books" plan
'

test_expect_success 'changing one stage option reruns that stage for every file' '
	$P -n TOX_OPTS="--threshold 0.9" >plan 2>&1 &&
	grep -q "llm-tox.*books" plan && grep -q "llm-tox.*news" plan &&
	test_must_fail grep -q "llm-clean.*books" plan
'

test_expect_success 'the clean and tox stages take RECIPE, and another recipe reruns them' '
	cp "$TOP/recipes/default" my-recipe &&
	$P -n RECIPE=my-recipe >plan 2>&1 &&
	grep -q "llm-clean. -q --recipe .my-recipe. .*books" plan &&
	grep -q "llm-tox. -q --recipe .my-recipe. .*books" plan
'

test_expect_success 'a Slurm array task builds the file of its index' '
	rm -f out/cat/code.stats.json out/cat/code.jsonl &&
	SLURM_ARRAY_TASK_ID=1 CONFIG=$TOP/pipelines/test.mk \
		sh $TOP/pipelines/slurm-array.sh cat BIN=$TRASH/bin >log 2>&1 &&
	test "$($P -s list-cat | sed -n 2p)" = out/cat/code.stats.json &&
	test -s out/cat/code.jsonl
'

test_expect_success 'JSONL input is linked, not copied; what lies between stages is compressed' '
	test "$(readlink out/cat/books.jsonl)" = "$TRASH/raw/books.jsonl" &&
	test "$(readlink out/cat/html-maint-guide_first.en.jsonl)" = html-maint-guide_first.en.jsonl.zst &&
	for f in out/cat/html-*.jsonl.zst out/clean/books.jsonl.zst out/clean/news.rejects.jsonl.zst \
		out/dedup/books.jsonl.zst out/decon/books.jsonl.zst out/tox/books.jsonl.zst \
		out/tokens/books.tok.zst out/noise/books.tok.zst; do
		zstd -tq $f || { echo "$f is not zstd"; exit 1; }
	done &&
	test $(zstd -dc out/clean/news.rejects.jsonl.zst | wc -l) = $(jq .records_rejected out/clean/news.stats.json) &&
	test ! -e out/cat/books.jsonl.zst
'

test_expect_success 'Z= keeps the intermediate files plain' '
	$P -n Z= tokens >plan 2>&1 &&
	grep -q "llm-clean. .*-o .out/clean/books.jsonl. " plan &&
	grep -q "llm-tokenize. .*-o .out/tokens/books.tok. " plan
'

# pipelines/cat-jsonl.sh alone: a JSONL file that llm-cat changes is copied, compressed.
test_expect_success 'a JSONL file llm-cat must change gets a compressed copy' '
	mkdir -p cj && head -n 3 raw/news.jsonl >cj/good.jsonl &&
	{ cat cj/good.jsonl && echo "{not json" && head -n 1 raw/qa.jsonl; } >cj/bad.jsonl &&
	sh $TOP/pipelines/cat-jsonl.sh cj/good.jsonl cj/g.jsonl cj/g.jsonl.zst \
		llm-cat -q --stats cj/g.stats --rejects cj/g.rej &&
	test "$(readlink cj/g.jsonl)" = "$TRASH/cj/good.jsonl" && test ! -e cj/g.jsonl.zst &&
	gzip -n <cj/good.jsonl >cj/good.jsonl.gz &&
	sh $TOP/pipelines/cat-jsonl.sh cj/good.jsonl.gz cj/z.jsonl cj/z.jsonl.zst \
		llm-cat -q --stats cj/z.stats --rejects cj/z.rej &&
	test "$(readlink cj/z.jsonl)" = "$TRASH/cj/good.jsonl.gz" &&
	sh $TOP/pipelines/cat-jsonl.sh cj/bad.jsonl cj/b.jsonl cj/b.jsonl.zst \
		llm-cat -q --stats cj/b.stats --rejects cj/b.rej 2>err &&
	test "$(readlink cj/b.jsonl)" = b.jsonl.zst && test_line_count = 1 cj/b.rej &&
	test "$(zstd -dc cj/b.jsonl.zst | wc -l)" = 4 &&
	test_line_count = 1 err && test_grep "bad.jsonl:4" err &&
	sh $TOP/pipelines/cat-jsonl.sh cj/bad.jsonl cj/p.jsonl cj/p.jsonl \
		llm-cat -q --stats cj/p.stats --rejects cj/p.rej 2>/dev/null &&
	test ! -L cj/p.jsonl && test_line_count = 4 cj/p.jsonl &&
	sh $TOP/pipelines/cat-jsonl.sh cj/good.jsonl cj/p.jsonl cj/p.jsonl \
		llm-cat -q --stats cj/p.stats --rejects cj/p.rej &&
	test "$(readlink cj/p.jsonl)" = "$TRASH/cj/good.jsonl" &&
	zstd -q <cj/good.jsonl | head -c 40 >cj/broken.jsonl.zst &&
	test_must_fail sh $TOP/pipelines/cat-jsonl.sh cj/broken.jsonl.zst cj/x.jsonl cj/x.jsonl.zst \
		llm-cat -q --stats cj/x.stats --rejects cj/x.rej 2>err &&
	test_grep "broken.jsonl.zst" err && test ! -e cj/x.jsonl && test ! -e cj/x.jsonl.zst
'

test_expect_success 'V=1 shows each file of a stage, and the totals after them' '
	touch raw/news.jsonl &&
	$P V=1 clean-docs >vlog 2>&1 &&
	grep "^pipeline: cat news: done, 40 in, 40 out, " vlog &&
	grep "^pipeline: clean news: done, 40 in, [0-9]* out, " vlog &&
	! grep "^pipeline: clean books" vlog &&
	a=$(grep -n "^pipeline: clean news: done" vlog | cut -d: -f1) &&
	b=$(grep -n "^pipeline: clean: 11 files" vlog | cut -d: -f1) && test "$a" -lt "$b"
'

# A raw file that cannot be read used to leave cmp waiting for ever on the FIFO whose writer
# never opened it (the timeout only bounds the failure mode; the fixed script fails at once).
test_expect_success 'cat-jsonl.sh on a missing file fails at once, naming it, and leaves nothing' '
	mkdir -p cm &&
	test_must_fail timeout 120 sh $TOP/pipelines/cat-jsonl.sh cm/missing.jsonl cm/m.jsonl \
		cm/m.jsonl.zst llm-cat -q --stats cm/m.stats --rejects cm/m.rej 2>err &&
	test_grep "missing.jsonl" err &&
	test -z "$(ls -A cm)"
'

test_done
