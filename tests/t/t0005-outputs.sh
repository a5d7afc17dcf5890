#!/bin/sh
test_description='a run that fails publishes nothing: every tool keeps its previous -o, --rejects and --stats files'
. "$(dirname "$0")/../lib.sh"

C=$SAMPLES/corpus
TOK=$TESTDATA/tokenize/r50k_base.tiktoken.zst
TD=$TESTDATA/tox

# old FILE...: give each file a known previous content; kept FILE...: it is still there.
old() { for f in "$@"; do echo "previous $f" >"$f" || return 1; done; }
kept() {
	for f in "$@"; do
		echo "previous $f" | cmp -s - "$f" ||
			{ echo "kept: $f was replaced" >&2; return 1; }
	done
}
# No temporary file of ours is left in the directory.
no_tmp() { test -z "$(ls -A | grep llmtmp)"; }

test_expect_success ZSTD 'setup: documents, tokens, a labelled set, and each cut short' '
	{ head -n 60 $C/wiki.jsonl; head -n 60 $C/news.jsonl; } >docs.jsonl &&
	llm-tokenize -q -t $TOK docs.jsonl -o docs.tok &&
	zstd -q -c docs.jsonl >docs.zst && zstd -q -c docs.tok >tok.zst &&
	zstd -q -c $TD/train_small.jsonl >lab.zst &&
	for f in docs tok lab; do
		n=$(wc -c <$f.zst) && head -c $((n * 2 / 3)) $f.zst >cut-$f.zst || exit 1
	done
'

for t in "llm-cat" "llm-clean" "llm-dedup" "llm-tox" "llm-tokenize -t $TOK" \
         "llm-tokenize -t $TOK -f jsonl" "llm-tokenize train --vocab-size 300" \
         "llm-score -m q=$TD/ref_softmax.bin:toxic" "llm-score sketch -m q=$TD/ref_softmax.bin:toxic"; do
	test_expect_success ZSTD "$t: a cut input exits 1 and leaves -o as it was" "
		old F && test_must_fail $t -q cut-docs.zst -o F 2>err &&
		test_grep 'cut-docs.zst: truncated zstd stream' err &&
		kept F && no_tmp &&
		$t -q docs.zst -o F && test -s F && ! kept F 2>/dev/null
	"
done

test_expect_success ZSTD 'llm-noise: a cut stream exits 1 and leaves -o as it was' '
	old F && test_must_fail llm-noise -q --seed 1 cut-tok.zst -o F 2>err &&
	test_grep "cut-tok.zst" err && kept F && no_tmp &&
	llm-noise -q --seed 1 tok.zst -o F && llm-noise -q --seed 1 docs.tok | cmp - F
'

test_expect_success ZSTD 'llm-tox train: a cut labelled set leaves the previous model' '
	old model.bin &&
	test_must_fail llm-tox train -q --dim 4 --bucket 1000 -o model.bin cut-lab.zst 2>err &&
	kept model.bin && no_tmp &&
	llm-tox train -q --dim 4 --bucket 1000 -o model.bin lab.zst && ! kept model.bin 2>/dev/null
'

test_expect_success ZSTD 'llm-score train: a cut labelled set leaves the previous model' '
	old model.bin &&
	test_must_fail llm-score train -q --dim 4 --bucket 1000 -o model.bin --label-field label \
		cut-lab.zst 2>err &&
	test_grep "cut-lab.zst: truncated zstd stream" err && kept model.bin && no_tmp &&
	llm-score train -q --dim 4 --bucket 1000 -o model.bin --label-field label lab.zst &&
	! kept model.bin 2>/dev/null
'

test_expect_success ZSTD 'llm-shard exports: a cut stream publishes no export file' '
	mkdir -p ex && (cd ex && old train.bin) &&
	test_must_fail llm-shard -q --format raw --val-fraction 0 -o ex cut-tok.zst 2>err &&
	(cd ex && kept train.bin && no_tmp) &&
	llm-shard -q --format raw --val-fraction 0 -o ex tok.zst && (cd ex && ! kept train.bin 2>/dev/null)
'

test_expect_success ZSTD 'llm-shard --dump: a damaged shard late in the manifest leaves -o as it was' '
	llm-shard -q -o ds --shard-size 64K --val-fraction 0 --eos 50256 docs.tok &&
	last=$(llm-shard --info ds/manifest.json | awk "/^  train /{f=\$2} END{sub(\":\", \"\", f); print f}") &&
	printf "\377" | dd of="ds/$last" bs=1 seek=5000 conv=notrunc 2>/dev/null &&
	old F && test_must_fail llm-shard --dump ds/manifest.json -o F 2>err &&
	kept F && no_tmp
'

test_expect_success 'rejects and stats of a failed run are not published either' '
	old F R S.json && test_must_fail llm-clean -q cut-docs.zst -o F --rejects R --stats S.json &&
	kept F R S.json
'

test_expect_success 'a run whose --stats cannot be written publishes no -o' '
	old F && test_must_fail llm-clean -q docs.jsonl -o F --stats no/such/dir/s.json 2>err &&
	test_grep "no/such/dir" err && kept F
'

test_expect_success 'the same file given twice is a usage error, and nothing is written' '
	old F R &&
	test_must_fail --code=2 llm-cat -q docs.jsonl -o F --rejects F 2>err &&
	test_grep "name the same file" err &&
	test_must_fail --code=2 llm-clean -q docs.jsonl -o F --stats ./F 2>err &&
	test_must_fail --code=2 llm-dedup -q docs.jsonl -o F --rejects R --stats R 2>err &&
	test_must_fail --code=2 llm-tox -q docs.jsonl --stats - 2>err &&
	test_must_fail --code=2 llm-clean -q docs.jsonl --rejects F --stats F >F 2>err &&
	mkdir -p sub && test_must_fail --code=2 llm-noise -q docs.tok -o sub/../N --rejects N 2>err &&
	test_must_fail --code=2 llm-tokenize -q -t $TOK docs.jsonl -o T --stats T 2>err &&
	kept R && ! test -e N && ! test -e T &&
	llm-cat -q docs.jsonl -o F --rejects R --stats S2.json
'

test_expect_success 'a token stream is never written to a terminal' '
	if script -qc true /dev/null >/dev/null 2>&1; then
		script -qc "llm-tokenize -q -t $TOK docs.jsonl; echo rc=\$?" /dev/null >tty.out &&
		grep "rc=2" tty.out && grep "use -o" tty.out &&
		script -qc "llm-noise -q docs.tok; echo rc=\$?" /dev/null >tty.out && grep "rc=2" tty.out &&
		llm-shard -q -o d1 --val-fraction 0 --eos 50256 docs.tok &&
		script -qc "llm-shard --dump d1/manifest.json; echo rc=\$?" /dev/null >tty.out &&
		grep "rc=2" tty.out &&
		script -qc "llm-tokenize -q -t $TOK -f jsonl docs.jsonl | head -c 1; echo; echo rc=\$?" \
			/dev/null >tty.out && grep "rc=0" tty.out
	fi &&
	llm-tokenize -q -t $TOK docs.jsonl | cmp - docs.tok
'

test_done
