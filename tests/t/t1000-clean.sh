#!/bin/sh
test_description='llm-clean: filters, transformations and the command-line contract'
. "$(dirname "$0")/../lib.sh"

C=$SAMPLES/corpus
G=$TESTDATA/clean

# records in = out + rejected, from a --stats file
invariant() {
	jq -e '.records_in == .records_out + .records_rejected' "$1" >/dev/null
}

for f in length gopher-quality gopher-rep c4 fineweb; do
	test_expect_success JQ "golden decisions of --filters $f (English and Chinese)" "
		llm-clean -q --filters $f --rejects rej $G/golden.jsonl >out &&
		{ jq -r '.id + \" keep\"' out; jq -r '.id + \" \" + .reject_reason' rej; } | sort >got &&
		test_cmp $G/golden.$f.expected got
	"
done

test_expect_success JQ 'default pipeline on the samples: invariant, reasons, order kept' '
	cat $C/wiki.jsonl $C/qa.jsonl >in &&
	llm-clean -q --stats st.json --rejects rej in >out &&
	invariant st.json &&
	n_in=$(wc -l <in) && n_out=$(wc -l <out) && n_rej=$(wc -l <rej) &&
	test $n_in = $((n_out + n_rej)) &&
	jq -s -e "all(.reject_reason != null)" rej &&
	jq -r .id out >ids && jq -r .id in | grep -F -x -f ids >expect && test_cmp expect ids
'

test_expect_success JQ '--threads gives the same output in the same order' '
	cat $C/web.jsonl $C/legal.jsonl >in &&
	llm-clean -q in >one &&
	llm-clean -q --threads 3 --batch 64K in >three &&
	test_cmp one three
'

test_expect_success JQ 'cleaning a cleaned document changes nothing' '
	cat $C/wiki.jsonl >in &&
	llm-clean -q --filters none in >once &&
	llm-clean -q --filters none once >twice &&
	test_cmp once twice
'

test_expect_success JQ 'an untouched record is written byte for byte' '
	printf "{\"id\": 1, \"text\": \"plain text\", \"x\":[1, 2]}\n" >in &&
	llm-clean -q --filters none in >out &&
	test_cmp in out
'

test_expect_success JQ 'rejects carry the reason and the measured value' '
	llm-clean -q --filters gopher-quality --rejects rej $G/golden.jsonl >/dev/null &&
	jq -s -e "map(select(.id == \"en-hashes\"))[0] | .reject_reason == \"gopher_too_many_hashes\" and .reject_value > 0.1 and .reject_threshold == 0.1" rej
'

test_expect_success 'empty input gives empty output' '
	: >empty && llm-clean -q empty >out && test_must_fail test -s out
'

test_expect_success 'no final newline and CRLF line ends' '
	printf "{\"id\":\"1\",\"text\":\"a b\"}\r\n{\"id\":\"2\",\"text\":\"c d\"}" >in &&
	llm-clean -q --filters none in >out &&
	printf "{\"id\":\"1\",\"text\":\"a b\"}\n{\"id\":\"2\",\"text\":\"c d\"}\n" >expect &&
	test_cmp expect out
'

test_expect_success JQ 'bad JSON, invalid UTF-8 and a missing text are rejected, nothing lost' '
	printf "{\"text\":\"ok text\"}\nnot json\n{\"text\":\"bad \377 byte\"}\n{\"id\":3}\n{\"text\":5}\n" >in &&
	llm-clean --filters none --stats st.json --rejects rej in >out 2>err &&
	test_line_count = 1 out && test_line_count = 4 rej && invariant st.json &&
	test_grep "in:2: bad JSON" err &&
	jq -r .reject_reason rej >reasons &&
	printf "bad_json\nbad_json\nmissing_text\ntext_not_string\n" >expect && test_cmp expect reasons
'

test_expect_success JQ '--strict makes malformed input fatal' '
	printf "{\"text\":\"ok\"}\nnot json\n" >in &&
	test_must_fail llm-clean -q --strict --filters none in >out 2>err &&
	test_grep "in:2:" err
'

test_expect_success JQ 'a line over --max-line is rejected with its length' '
	awk "BEGIN { printf \"{\\\"text\\\": \\\"\"; for (i = 0; i < 5000; i++) printf \"word \"; print \"\\\"}\" }" >in &&
	printf "{\"text\":\"short one\"}\n" >>in &&
	llm-clean --filters none --max-line 4K --rejects rej --stats st.json in >out 2>err &&
	test_line_count = 1 out && invariant st.json &&
	jq -e ".reject_reason == \"line_too_long\" and .length > 4096" rej
'

test_expect_success NOT_ROOT 'an unreadable file is an error (exit 1), the others are read' '
	printf "{\"text\":\"x y\"}\n" >ok && printf "{}\n" >locked && chmod 000 locked &&
	test_must_fail llm-clean -q --filters none locked ok >out 2>err &&
	test_grep "locked" err && test_line_count = 1 out
'

test_expect_success 'a missing file is an error (exit 1)' '
	test_must_fail llm-clean -q nonexistent.jsonl >out 2>err &&
	test_grep "nonexistent.jsonl" err
'

test_expect_success 'bad flags and values are usage errors (exit 2)' '
	test_must_fail --code=2 llm-clean --bogus </dev/null 2>err &&
	test_must_fail --code=2 llm-clean --filters gopher,nope </dev/null 2>err &&
	test_grep "unknown filter" err &&
	test_must_fail --code=2 llm-clean --set no_such=1 </dev/null 2>err &&
	test_must_fail --code=2 llm-clean --normalize sideways </dev/null 2>err &&
	test_must_fail --code=2 llm-clean --lang-threshold 2 </dev/null 2>err
'

test_expect_success DEVFULL 'a full disk is an error (exit 1) with a message' '
	printf "{\"text\":\"a b c\"}\n" >in &&
	test_must_fail llm-clean -q --filters none in >/dev/full 2>err &&
	test_grep "llm-clean" err
'

test_expect_success JQ 'HTML records become text with their title' '
	printf "{\"id\":\"h\",\"format\":\"html\",\"text\":\"<html><head><title>A &amp; B</title><script>x()</script></head><body><p>One&nbsp;two.</p><p>Three.</p></body></html>\"}\n" >in &&
	llm-clean -q --filters none in >out &&
	jq -e ".text == \"One two.\nThree.\" and .title == \"A & B\" and .format == \"text\"" out
'

test_expect_success JQ 'PII and time masking' '
	printf "{\"text\":\"Mail a.b@example.org or call 13812345678 on 2023-12-01 at 14:30.\"}\n" >in &&
	llm-clean -q --filters none --mask-pii --mask-time --stats st.json in >out &&
	jq -e ".text == \"Mail <EMAIL> or call <PHONE> on [TIME] at [TIME].\"" out &&
	jq -e ".counters.pii_email == 1 and .counters.pii_phone == 1 and .counters.time_masked == 2" st.json &&
	llm-clean -q --filters none --mask-pii=email --pii-placeholder email=[E] in >out2 &&
	jq -e ".text | startswith(\"Mail [E] or call 13812345678\")" out2
'

test_expect_success JQ 'freshness weights from date and year' '
	printf "{\"text\":\"a\",\"date\":\"2024-03-01\"}\n{\"text\":\"b\",\"year\":2015}\n{\"text\":\"c\"}\n{\"text\":\"d\",\"year\":2030}\n" >in &&
	llm-clean -q --filters none --freshness --ref-year 2024 --default-weight 0.5 in >out &&
	jq -r .weight out >got &&
	printf "1\n0.1\n0.5\n1\n" >expect && test_cmp expect got
'

test_expect_success JQ 'built-in language id: --lang keeps the listed languages (zh: zh and zh-Hant)' '
	cat $C/wiki.jsonl >in &&
	llm-clean -q --filters none --lang zh --rejects rej in >out &&
	jq -r .lang out | sort -u >langs && printf "zh\nzh-Hant\n" >expect && test_cmp expect langs &&
	jq -s -e "map(select(.reject_reason == \"lang\")) | length >= 50" rej &&
	jq -s -e "all(.lang_score != null)" out
'

test_expect_success JQ 'drop patterns: documents and lines' '
	printf "{\"text\":\"keep this\\\\nsecret line here\\\\nand this\"}\n{\"text\":\"BUY NOW cheap\"}\n" >in &&
	printf "^secret\n" >lines && printf "(?i)buy now\n# a comment\n" >docs &&
	llm-clean -q --filters none --drop-line-pattern lines --drop-pattern docs --rejects rej in >out &&
	jq -e ".text == \"keep this\nand this\"" out &&
	jq -e ".reject_reason == \"drop_pattern\"" rej &&
	printf "(unclosed\n" >bad &&
	test_must_fail llm-clean -q --drop-pattern bad in >out 2>err && test_grep "bad:1" err
'

test_expect_success JQ '--set changes a threshold for every language' '
	llm-clean -q --filters gopher-quality --set min_doc_words=5 --rejects rej $G/golden.jsonl >out &&
	jq -s -e "map(select(.id == \"en-short\"))[0] | .reject_value == 4 and .reject_threshold == 5" rej
'

test_expect_success JQ 'stop words from a file' '
	llm-clean -q --filters gopher-quality --stop-words $SAMPLES/stopwords/zh.txt --rejects rej $G/golden.jsonl >out &&
	jq -r "select(.reject_reason == \"gopher_few_stop_words\") | .id" rej | grep -q "^en-keep$"
'

test_expect_success 'the usage line of --help is in the man page synopsis' '
	llm-clean --help >help && head -n 1 help | grep -q "^usage: llm-clean \[options\] \[file ...\]" &&
	grep -q "^\.Nm llm-clean" $TOP/man/man1/llm-clean.1
'

test_done
