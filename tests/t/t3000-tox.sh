#!/bin/sh
test_description='llm-tox: word-list rules, the model stage, the document stream contract'
. "$(dirname "$0")/../lib.sh"

D=$TESTDATA/tox

test_expect_success 'rules, English: whole words, case-insensitive, lists by language' '
	llm-tox -q --no-model --mode annotate $D/rules_en.jsonl >out &&
	test_cmp $D/rules_en.expect out
'

test_expect_success 'rules, Chinese: entries hit whole words of the segmentation; single characters ignored by default' '
	llm-tox -q --no-model --mode annotate $D/rules_zh.jsonl >out &&
	test_cmp $D/rules_zh.expect out &&
	llm-tox -q --no-model --mode annotate --cjk-min-chars 1 $D/rules_zh.jsonl >out1 &&
	jq -r "select(.id == \"zh2\") | .tox_hits" out1 >got &&
	echo 0 >expect && test_cmp expect got
'

test_expect_success 'rules, Chinese: --zh-substrings matches inside words (成人 in 成人教育, 组成人员)' '
	llm-tox -q --no-model --mode annotate --zh-substrings $D/rules_zh.jsonl >sub &&
	jq -r "select(.tox_hits != 0) | .id" sub >got &&
	printf "zh1\nzh3\nzh4\nzh6\nzh7\n" >expect && test_cmp expect got &&
	llm-tox -q --no-model --mode annotate --zh-substrings --cjk-min-chars 1 $D/rules_zh.jsonl |
		jq -r "select(.id == \"zh2\") | .tox_hits" >got &&
	echo 2 >expect && test_cmp expect got
'

test_expect_success 'rules: a "*" lifts the word boundary on its side' '
	printf "%s\n" "*成人*" "class*" >mine &&
	printf "%s\n" "{\"lang\": \"zh\", \"text\": \"组成人员\"}" \
		"{\"lang\": \"en\", \"text\": \"classes and a class\"}" >in &&
	llm-tox -q --no-model --mode annotate --words mine in | jq -r .tox_hits >got &&
	printf "1\n2\n" >expect && test_cmp expect got
'

test_expect_success 'a list of your own for a language: --add-words beside the defaults, --words instead' '
	echo "公园" >mine &&
	llm-tox -q --no-model --mode annotate --add-words zh:mine $D/rules_zh.jsonl |
		jq -r "select(.id == \"zh1\" or .id == \"zh5\") | .tox_hits" >got &&
	printf "1\n1\n" >expect && test_cmp expect got &&
	llm-tox -q --no-model --mode annotate --words zh:mine $D/rules_zh.jsonl |
		jq -r "select(.id == \"zh1\" or .id == \"zh5\") | .tox_hits" >got &&
	printf "0\n1\n" >expect && test_cmp expect got
'

test_expect_success 'without the segmenter dictionary: an error that names the way out' '
	LLM_ZHSEG_DICT=/nonexistent/dict.txt test_must_fail llm-tox -q --no-model $D/rules_zh.jsonl 2>err &&
	test_grep "zh-substrings" err &&
	LLM_ZHSEG_DICT=/nonexistent/dict.txt llm-tox -q --no-model --zh-substrings $D/rules_zh.jsonl >out &&
	jq -r .id out >got && printf "zh2\nzh5\n" >expect && test_cmp expect got
'

test_expect_success 'filter: dropped documents go to rejects with reason and counts' '
	llm-tox -q --no-model --rejects rej.jsonl $D/rules_en.jsonl >out &&
	jq -r .id out >kept && printf "en1\nen3\nen6\nen8\n" >expect && test_cmp expect kept &&
	jq -r "[.id, .reject_reason, .tox_hits] | @tsv" rej.jsonl >got &&
	printf "en2\ttox_words\t2\nen4\ttox_words\t1\nen5\ttox_words\t1\nen7\ttox_words\t1\nen9\ttox_words\t1\nen10\ttox_words\t3\nen11\ttox_words\t3\n" >expect &&
	test_cmp expect got
'

test_expect_success 'density: one hit in a long page stays unless --words-per-1k 0 (the C4 rule)' '
	grep "\"en6\"" $D/rules_en.jsonl >long &&
	llm-tox -q --no-model long >out && test_line_count = 1 out &&
	llm-tox -q --no-model --words-per-1k 0 long >out0 && test_line_count = 0 out0
'

test_expect_success 'a language without a list gets only the lists bound to no language' '
	printf "{\"lang\": \"it\", \"text\": \"pro e con\"}\n" >it.jsonl &&
	llm-tox -q --no-model --mode annotate it.jsonl | jq -r .tox_hits >got &&
	echo 0 >expect && test_cmp expect got &&
	echo con >mine.txt &&
	llm-tox -q --no-model --mode annotate --words fr:$SAMPLES/wordlists/fr --words mine.txt it.jsonl |
		jq -r .tox_hits >got && echo 1 >expect && test_cmp expect got
'

test_expect_success 'the 2016 C4 English list loads and is used alone with --words' '
	llm-tox -q --no-model --mode annotate --words $SAMPLES/wordlists/en_c4_25e679f $D/rules_en.jsonl >out &&
	jq -r "select(.id == \"en7\") | .tox_hits" out >got && echo 0 >expect && test_cmp expect got
'

test_expect_success 'model stage: tox_score on every document, reasons split words/model' '
	llm-tox -q --mode annotate $SAMPLES/tox/eval.jsonl >ann &&
	test_line_count = 7620 ann &&
	jq -e "(.tox_score | type) == \"number\" and .tox_score >= 0 and .tox_score <= 1" ann >/dev/null &&
	llm-tox --rejects rej.jsonl --stats stats.json $SAMPLES/tox/eval.jsonl >out 2>err &&
	n_out=$(wc -l <out) && n_rej=$(wc -l <rej.jsonl) &&
	test $((n_out + n_rej)) = 7620 &&
	jq -e ".records_in == 7620" stats.json &&
	jq -r .reject_reason rej.jsonl | sort -u >reasons &&
	printf "tox_model\ntox_words\n" >expect && test_cmp expect reasons &&
	grep "tox_model" err
'

test_expect_success 'threshold: a lower threshold never keeps more' '
	llm-tox -q --no-words --threshold 0.5 $SAMPLES/tox/eval.jsonl >a &&
	llm-tox -q --no-words --threshold 0.95 $SAMPLES/tox/eval.jsonl >b &&
	test $(wc -l <a) -lt $(wc -l <b)
'

test_expect_success 'annotate keeps everything and the same scores as filter' '
	head -n 50 $SAMPLES/tox/eval.jsonl >in &&
	llm-tox -q --mode annotate in >ann && test_line_count = 50 ann &&
	llm-tox -q --rejects rej in >kept &&
	cat kept rej | jq -r "[.id, .tox_score] | @tsv" | sort >a &&
	jq -r "[.id, .tox_score] | @tsv" ann | sort >b && test_cmp a b
'

test_expect_success 'threads and batches: the same output, in input order' '
	cat $SAMPLES/tox/eval.jsonl $D/rules_en.jsonl >in &&
	llm-tox -q --rejects rej1 in >out1 &&
	llm-tox -q --threads 3 --rejects rej3 in >out3 &&
	test_cmp out1 out3 && test_cmp rej1 rej3 &&
	test $(($(wc -l <out1) + $(wc -l <rej1))) = 7631
'

test_expect_success 'several inputs: messages name the right file and line' '
	printf "{\"text\": \"fine\"}\n" >a.jsonl &&
	printf "{\"text\": \"fine\"}\n{broken\n" >b.jsonl &&
	llm-tox -q --rejects rej a.jsonl b.jsonl >out 2>err &&
	grep "b.jsonl:2:" err && test_line_count = 2 out &&
	jq -e ".source == \"b.jsonl\" and .line == 2" rej
'

test_expect_success 'empty input, no final newline, CRLF' '
	: >empty && llm-tox -q empty >out && test_must_fail test -s out &&
	printf "{\"text\": \"hello there\"}\r\n{\"text\": \"fine day\"}" >crlf &&
	llm-tox -q --mode annotate crlf >out && test_line_count = 2 out &&
	jq -e ".tox_hits == 0" out >/dev/null
'

test_expect_success 'malformed records are rejected with their reason, nothing lost' '
	printf "{\"text\": \"ok text\"}\nnot json\n{\"id\": 1}\n{\"text\": \"bad \377 byte\"}\n" >bad &&
	llm-tox -q --rejects rej bad >out 2>err &&
	test_line_count = 1 out && test_line_count = 3 rej &&
	jq -r .reject_reason rej | sort >got &&
	printf "bad_json\nbad_json\nno_text\n" >expect && test_cmp expect got &&
	grep "bad:2:" err &&
	test_must_fail llm-tox -q --strict bad >/dev/null 2>err2 && grep "bad:2:" err2
'

test_expect_success 'a line over --max-line is rejected as too_long' '
	awk "BEGIN { printf \"{\\\"text\\\": \\\"\"; for (i = 0; i < 3000; i++) printf \"abcd \"; print \"\\\"}\" }" >huge &&
	echo "{\"text\": \"short\"}" >>huge &&
	llm-tox -q --max-line 1K --rejects rej huge >out &&
	test_line_count = 1 out && jq -e ".reject_reason == \"too_long\"" rej
'

test_expect_success NOT_ROOT 'unreadable input: exit 1 with the file named' '
	echo "{\"text\": \"x\"}" >locked && chmod 000 locked &&
	test_must_fail llm-tox -q locked 2>err && grep "locked" err
'

test_expect_success 'missing input file: exit 1 with the file named' '
	test_must_fail llm-tox -q no-such-file.jsonl 2>err && grep "no-such-file.jsonl" err
'

test_expect_success 'bad values and flags: exit 2' '
	test_must_fail --code=2 llm-tox --threshold 2 </dev/null 2>err && grep "threshold" err &&
	test_must_fail --code=2 llm-tox --mode drop </dev/null &&
	test_must_fail --code=2 llm-tox --no-words --no-model </dev/null &&
	test_must_fail --code=2 llm-tox --bogus </dev/null
'

test_expect_success 'bad model or word list: exit 1 with the file named' '
	echo "not a model" >fake.bin &&
	test_must_fail llm-tox --model fake.bin </dev/null 2>err && grep "fake.bin" err &&
	test_must_fail llm-tox --model $D/lid.176.ftz </dev/null 2>err && grep "no label .toxic." err &&
	test_must_fail llm-tox --words nowhere.txt </dev/null 2>err && grep "nowhere.txt" err
'

test_expect_success 'output to /dev/full: exit 1 with a message' '
	test_must_fail llm-tox -q --no-model -o /dev/full $D/rules_en.jsonl 2>err &&
	grep -i "space\|full\|error" err
'
test_done
