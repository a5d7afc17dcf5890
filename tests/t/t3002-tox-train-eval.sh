#!/bin/sh
test_description='llm-tox train and eval: round trip, reproducibility, metrics on the shipped data'
. "$(dirname "$0")/../lib.sh"

D=$TESTDATA/tox

test_expect_success 'train -> filter round trip: the model learns its training set' '
	llm-tox train -q -o m.bin --dim 8 --bucket 5000 --epoch 10 $D/train_small.jsonl &&
	llm-tox eval --no-words --model m.bin --thresholds 0.5 --json $D/train_small.jsonl >e.json &&
	jq -e ".languages.all.rows[0].f1 > 0.9" e.json &&
	llm-tox -q --no-words --model m.bin --mode annotate $D/train_small.jsonl >ann &&
	test_line_count = 800 ann
'

test_expect_success 'one thread and a seed: the same model bytes; other seeds differ' '
	llm-tox train -q -o a.bin --dim 8 --bucket 5000 --seed 7 $D/train_small.jsonl &&
	llm-tox train -q -o b.bin --dim 8 --bucket 5000 --seed 7 $D/train_small.jsonl &&
	cmp a.bin b.bin &&
	llm-tox train -q -o c.bin --dim 8 --bucket 5000 --seed 8 $D/train_small.jsonl &&
	test_must_fail cmp -s a.bin c.bin
'

test_expect_success 'several threads, one-vs-all and hierarchical softmax train too' '
	llm-tox train -q -o t.bin --threads 2 --dim 8 --bucket 5000 $D/train_small.jsonl &&
	llm-tox train -q -o o.bin --loss ova --dim 8 --bucket 5000 --minn 2 --maxn 3 $D/train_small.jsonl &&
	llm-tox train -q -o h.bin --loss hs --dim 8 --bucket 5000 $D/train_small.jsonl &&
	for m in t o h; do
		llm-tox -q --no-words --model $m.bin --mode annotate $D/train_small.jsonl >ann &&
		test_line_count = 800 ann || exit 1
	done
'

test_expect_success 'train: usage and data errors' '
	test_must_fail --code=2 llm-tox train $D/train_small.jsonl 2>err && grep -- "-o" err &&
	echo "{\"text\": \"no label here\"}" >nolabel &&
	test_must_fail llm-tox train -q -o x.bin nolabel 2>err && grep "no labelled example" err &&
	test_must_fail llm-tox train -q --strict -o x.bin nolabel 2>err && grep "nolabel:1:" err &&
	test_must_fail --code=2 llm-tox train -o x.bin --minn 5 --maxn 3 nolabel
'

test_expect_success 'eval on the shipped data: table and JSON agree' '
	llm-tox eval $SAMPLES/tox/eval.jsonl >table &&
	head -n 1 table | grep "prec" && grep "^zh " table && grep "^en " table &&
	llm-tox eval --json $SAMPLES/tox/eval.jsonl >e.json &&
	jq -e ".records == 7620 and .languages.zh.records == 5323 and .languages.en.records == 2297" e.json &&
	jq -r ".languages.all.rows[] | select(.in_effect) | [.stage, .threshold, .fpr] | @tsv" e.json >fpr &&
	grep "^all   words|model   0.85\*" table | awk "{ print \$2 \"\t\" 0.85 \"\t\" \$NF }" >fpr2 &&
	awk -F"\t" "{ printf \"%s\t%s\t%.3f\n\", \$1, \$2, \$3 }" fpr >fpr1 && test_cmp fpr1 fpr2
'

test_expect_success 'eval: counts add up and lower thresholds raise recall' '
	llm-tox eval --json $SAMPLES/tox/eval.jsonl >e.json &&
	jq -e "[.languages[] | .rows[] | (.tp + .fp + .tn + .fn)] | unique | length == 3" e.json &&
	jq -e "[.languages.all.rows[] | select(.stage == \"model\") | .recall] | . == (sort | reverse)" e.json
'

test_expect_success JQ 'eval of the shipped model on its held-out set (golden)' '
	llm-tox eval --json $SAMPLES/tox/eval.jsonl | jq . >e.json &&
	test_cmp $D/eval.expect.json e.json
'
test_done
