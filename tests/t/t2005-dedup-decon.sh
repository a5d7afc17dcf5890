#!/bin/sh
test_description='llm-dedup --decontaminate: documents quoting a benchmark item leave, with the item named'
. "$(dirname "$0")/../lib.sh"

C=$SAMPLES/corpus
TASK=$SAMPLES/eval/next-sentence.jsonl

# Planted contamination (bench/decon_plant.py): every item pasted whole, in part and with
# light edits into documents of domains the task was not drawn from (news, code), beside
# those documents left clean. A part shorter than 13 words cannot be found by 13-grams; an
# item whose n-grams are all those of an earlier item is reported as that one.
test_expect_success PYTHON 'setup' '
	cat $C/news.jsonl $C/code.jsonl >clean &&
	python3 $TOP/bench/decon_plant.py $TASK clean planted
'

test_expect_success PYTHON 'recall on planted items, no false positive on clean text' '
	llm-dedup -q --decontaminate $TASK --rejects rej --decon-report rep --stats st planted >out &&
	test $(( $(wc -l <out) + $(wc -l <rej) )) = $(wc -l <planted) &&
	jq -r "select(.id | startswith(\"clean-\")) | .id" rej >fp && test_must_fail test -s fp &&
	jq -r "select(.id | startswith(\"planted-\")) | .id" out >missed &&
	test_must_fail grep -q "^planted-whole-" missed &&
	test_must_fail grep -q "^planted-part-.*-\(1[3-9]\|[2-9][0-9]\)w$" missed &&
	test $(grep -c "^planted-edited-" missed) -le 4 &&
	jq -e ".decontamination.items == 200 and .decontamination.items_found >= 195" st >/dev/null &&
	test $(wc -l <rep) -ge 195 &&
	jq -s -e "map(.documents) | add >= 587" rep >/dev/null
'

test_expect_success PYTHON 'a rejected document names the items it quotes' '
	jq -c "select(.id == \"planted-whole-7-$(jq -s -r ".[7].context + \" \" + .[7].choices[.[7].gold] | split(\" \") | length" $TASK)w\") | [.reject_reason, .decon_items]" rej >got &&
	echo "[\"contaminated\",[\"$(sed -n 8p $TASK | jq -r .id)\"]]" >expect && test_cmp expect got
'

test_expect_success PYTHON '--annotate keeps the documents and lists the items' '
	llm-dedup -q --decontaminate $TASK --annotate planted >ann &&
	test_line_count = $(wc -l <planted) ann &&
	test $(jq -r "select(.decon_items) | .id" ann | wc -l) = $(wc -l <rej)
'

test_expect_success 'the demo corpus quotes its own task: every item is found' '
	cat $C/*.jsonl >corpus &&
	llm-dedup -q --decontaminate $SAMPLES/eval --stats st2 --rejects rej2 corpus >out2 &&
	jq -e ".decontamination.items_found == 200" st2 >/dev/null &&
	for src in $(jq -r .source $TASK | sort -u); do
		grep -q "\"id\": \"$src\"" rej2 || { echo "$src not found"; return 1; }
	done
'

test_expect_success 'Chinese items match by characters' '
	printf "{\"id\": \"zh-1\", \"text\": \"床前明月光疑是地上霜举头望明月低头思故乡\"}\n" >zh-task &&
	printf "%s\n" "{\"id\": \"a\", \"text\": \"他写道：疑是地上霜举头望明月低头思。\"}" \
		"{\"id\": \"b\", \"text\": \"他写道：是地上霜举头望明月低头思。\"}" >zh-docs &&
	llm-dedup -q --decontaminate zh-task --rejects zr zh-docs >zo &&
	test_grep "\"id\": \"a\".*\"decon_items\": \\[\"zh-1\"\\]" zr && test_grep "\"id\": \"b\"" zo
'

test_expect_success 'bad benchmark files and usage' '
	echo "{not json" >bad.jsonl &&
	test_must_fail llm-dedup -q --decontaminate bad.jsonl corpus >/dev/null 2>err &&
	test_grep "bad.jsonl:1: bad JSON" err &&
	test_must_fail llm-dedup -q --decontaminate missing.jsonl corpus >/dev/null 2>err &&
	test_grep "missing.jsonl" err &&
	test_must_fail --code=2 llm-dedup --decontaminate $TASK --index idx corpus &&
	test_must_fail --code=2 llm-dedup --decon-report r corpus
'

test_done
