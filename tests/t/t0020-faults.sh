#!/bin/sh
test_description='faults: kill -9 at every step, signals, a full disk and hostile files leave the previous state intact'
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/lib-faults.sh"

# llm-dedup --index: t0021-faults-dedup.sh; llm-train: t6003-train-faults.sh.

C=$SAMPLES/corpus
TOK=$TESTDATA/tokenize/r50k_base.tiktoken.zst
[ "$(id -u)" = 0 ] && full_disk_setup 600k "$TRASH/full" && test_set_prereq FULLDISK

test_expect_success 'setup: documents, two token streams, a dataset of the first' '
	{ head -n 200 $C/wiki.jsonl; head -n 200 $C/news.jsonl; } >docs.jsonl &&
	head -n 50 $C/books.jsonl >other.jsonl &&
	llm-tokenize -q -t $TOK docs.jsonl -o docs.tok &&
	llm-tokenize -q -t $TOK other.jsonl -o other.tok &&
	test $(wc -c <docs.tok) -gt 500000 && test $(wc -c <other.tok) -gt 250000 &&
	llm-shard -q -o ds --val-fraction 0.1 --eos 50256 --shard-size 256K docs.tok &&
	llm-shard --dump ds/manifest.json >old.dump && test -s old.dump &&
	llm-shard -q -o fresh --val-fraction 0.1 --eos 50256 --shard-size 256K other.tok &&
	llm-shard --dump fresh/manifest.json >new.dump && ! cmp -s old.dump new.dump
'

# dataset_is DUMP: ds is a valid dataset holding DUMP's documents, and nothing else of ours.
dataset_is() {
	llm-shard --verify ds/manifest.json >/dev/null &&
	llm-shard --dump ds/manifest.json | cmp -s - "$1" &&
	test -z "$(ls ds | grep -v "^gen-[0-9]*$\|^manifest.json$")"
}
# After any interruption a rerun completes and leaves exactly one generation and the manifest.
rerun_cleans() {
	llm-shard -q -o ds --val-fraction 0.1 --eos 50256 --shard-size 256K other.tok &&
	dataset_is new.dump && test $(ls ds | wc -l) = 2 && no_tmp_left ds
}

# Every step of replacing a dataset, in order; up to the manifest's rename the old dataset is
# what a reader finds, after it the new one.
for step in shard-closed:1 shard-closed:3 shard-generation commit tmpfile-named shard-switched \
            shard-cleanup:1 shard-cleanup:4; do
	case $step in shard-switched|shard-cleanup*) want=new ;; *) want=old ;; esac
	test_expect_success "kill -9 of llm-shard at $step: the $want dataset is whole" "
		llm-shard -q -o ds --val-fraction 0.1 --eos 50256 --shard-size 256K docs.tok &&
		kill_at $step llm-shard -q -o ds --val-fraction 0.1 --eos 50256 --shard-size 256K \
			other.tok &&
		dataset_is $want.dump && rerun_cleans
	"
done

test_expect_success 'kill -9 of llm-shard while it reads: the old dataset is whole' '
	llm-shard -q -o ds --val-fraction 0.1 --eos 50256 --shard-size 256K docs.tok &&
	feed_and_kill KILL 200000 other.tok \
		llm-shard -q -o ds --val-fraction 0.1 --eos 50256 --shard-size 256K in.fifo &&
	dataset_is old.dump && rerun_cleans
'

test_expect_success 'a stream cut mid-record into a good dataset: exit 1, the old dataset is whole' '
	llm-shard -q -o ds --val-fraction 0.1 --eos 50256 --shard-size 256K docs.tok &&
	head -c 277777 other.tok >cut.tok &&
	test_must_fail llm-shard -q -o ds --val-fraction 0.1 --eos 50256 cut.tok 2>err &&
	test_grep "cut.tok: record" err && dataset_is old.dump && test $(ls ds | wc -l) = 2
'

for step in commit tmpfile-named; do
	test_expect_success "kill -9 of llm-tokenize -o at $step: the old output is whole" "
		cp docs.tok out.tok &&
		kill_at $step llm-tokenize -q -t $TOK other.jsonl -o out.tok &&
		cmp docs.tok out.tok &&
		llm-tokenize -q -t $TOK other.jsonl -o out.tok && cmp other.tok out.tok && no_tmp_left
	"
done

test_expect_success 'kill -9 of llm-tokenize -o mid-input: the old output is whole' '
	cp other.tok out.tok &&
	feed_and_kill KILL 200000 docs.jsonl llm-tokenize -q -t $TOK in.fifo -o out.tok &&
	cmp other.tok out.tok && no_tmp_left
'

# Named temporaries (file systems without O_TMPFILE) are what a kill -9 leaves behind; the
# next program writing in that directory removes them, and nobody else's.
test_expect_success 'a killed run'"'"'s named temporary is removed by the next run there' '
	mkdir -p st && cp docs.tok st/out.tok &&
	FAULT_EXTRA=no-o-tmpfile kill_at commit llm-tokenize -q -t $TOK other.jsonl -o st/out.tok &&
	ls -A st | grep "^\.out\.tok\.llmtmp\.[a-z0-9]\{12\}$" &&
	cmp docs.tok st/out.tok &&
	LLMKIT_FAULT=no-o-tmpfile llm-cat -q other.jsonl -o st/other.jsonl &&
	no_tmp_left st && cmp docs.tok st/out.tok
'

for sig in TERM INT HUP; do
	test_expect_success "SIG$sig removes the temporaries of every tool and keeps its old -o" "
		for t in 'llm-cat -q' 'llm-clean -q' 'llm-dedup -q' 'llm-tox -q' 'llm-tokenize -q -t $TOK' \
		         'llm-score -q -m q=$TESTDATA/tox/ref_softmax.bin:toxic'; do
			echo previous >out && cp out before &&
			LLMKIT_FAULT=no-o-tmpfile feed_and_kill $sig 300000 docs.jsonl \$t in.fifo -o out &&
			cmp before out && no_tmp_left || { echo \"tool: \$t\" >&2; exit 1; }
		done &&
		echo previous >out &&
		LLMKIT_FAULT=no-o-tmpfile feed_and_kill $sig 300000 docs.tok llm-noise -q in.fifo -o out &&
		cmp before out && no_tmp_left
	"
done

test_expect_success 'a symlink planted at the old temporary name is never written through' '
	echo "precious" >victim && cp victim victim.before &&
	sh -c "ln -s ../victim .out.jsonl.tmp.\$\$ && exec llm-cat -q docs.jsonl -o out.jsonl" &&
	cmp victim victim.before && test -f out.jsonl && ! test -L out.jsonl &&
	llm-cat -q docs.jsonl | cmp - out.jsonl &&
	sh -c "ln -s ../victim .manifest.json.tmp.\$\$ && exec llm-shard -q -o ds --eos 50256 other.tok" &&
	cmp victim victim.before && ! test -L ds/manifest.json && rm -f .*.tmp.*
'

test_expect_success 'a symlink named like a temporary is neither followed nor removed' '
	mkdir -p sl && ln -s ../victim sl/.x.llmtmp.abcdefghijkl &&
	llm-cat -q docs.jsonl -o sl/x && test -L sl/.x.llmtmp.abcdefghijkl && cmp victim victim.before
'

test_expect_success GZIP,PYTHON 'a damaged gzip input leaves the previous outputs whole' '
	python3 -c "
import gzip
raw = open(\"other.jsonl\", \"rb\").read()
z = bytearray(gzip.compress(raw, compresslevel=0, mtime=0))
z[z.index(raw[:64]) + 100] ^= 0x20
open(\"bad.jsonl.gz\", \"wb\").write(z)" &&
	llm-clean -q docs.jsonl -o good.jsonl && cp good.jsonl good.before &&
	test_must_fail llm-clean -q bad.jsonl.gz -o good.jsonl 2>err &&
	test_grep "bad.jsonl.gz: corrupt gzip stream" err && cmp good.before good.jsonl &&
	llm-shard -q -o ds --val-fraction 0.1 --eos 50256 --shard-size 256K docs.tok &&
	gzip -c other.tok | python3 -c "
import sys
z = bytearray(sys.stdin.buffer.read())
z[-6] ^= 1
sys.stdout.buffer.write(z)" >bad.tok.gz &&
	test_must_fail llm-shard -q -o ds --eos 50256 bad.tok.gz 2>err &&
	test_grep "corrupt gzip stream" err && dataset_is old.dump
'

test_expect_success PYTHON 'a manifest naming files outside its directory is refused by every reader' '
	python3 -c "
import json
m = json.load(open(\"ds/manifest.json\"))
m[\"shards\"][0][\"file\"] = \"../ds/\" + m[\"shards\"][0][\"file\"]
json.dump(m, open(\"ds/evil.json\", \"w\"))" &&
	test_must_fail llm-shard --verify ds/evil.json >out 2>err && test_grep "not a name inside" err &&
	test_must_fail llm-shard --dump ds/evil.json >out 2>err && test_grep "not a name inside" err &&
	test_must_fail llm-train -q --data ds/evil.json --steps 1 --run-dir evil-run 2>err &&
	test_grep "not a name inside" err && rm ds/evil.json
'

test_expect_success FULLDISK 'a full disk under every -o: exit 1, the previous file whole, no temporary' '
	{ cat docs.jsonl docs.jsonl; } >big.jsonl &&
	for t in "llm-cat -q" "llm-clean -q --filters none" "llm-dedup -q" "llm-tox -q" \
	         "llm-tokenize -q -f jsonl -t $TOK" "llm-score -q -m q=$TESTDATA/tox/ref_softmax.bin:toxic"; do
		echo previous >full/out && cp full/out before &&
		test_must_fail $t big.jsonl -o full/out 2>err &&
		test_grep "No space left on device" err && cmp before full/out && no_tmp_left full ||
			{ echo "tool: $t" >&2; exit 1; }
	done &&
	echo previous >full/out &&
	test_must_fail llm-cat -q big.jsonl --rejects full/out --stats full/s.json \
		-o /dev/null --max-line 100 2>err &&
	cmp before full/out && ! test -e full/s.json && no_tmp_left full
'

test_expect_success FULLDISK 'a full disk while llm-shard writes: the old dataset is whole' '
	head -n 5 other.jsonl | llm-tokenize -q -t $TOK -o small.tok &&
	llm-shard -q -o full/ds --val-fraction 0 --eos 50256 small.tok &&
	llm-shard --dump full/ds/manifest.json >small.dump &&
	test_must_fail llm-shard -q -o full/ds --val-fraction 0 --eos 50256 docs.tok 2>err &&
	test_grep "No space left on device" err &&
	llm-shard --verify full/ds/manifest.json >/dev/null &&
	llm-shard --dump full/ds/manifest.json | cmp - small.dump &&
	test $(ls full/ds | wc -l) = 2 && no_tmp_left full
'

test_done
