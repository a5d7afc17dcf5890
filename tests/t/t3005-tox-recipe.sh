#!/bin/sh
test_description='llm-tox --recipe: toxicity per domain and language; the statute case'
. "$(dirname "$0")/../lib.sh"

D=$TESTDATA/tox
S=$D/statutes.jsonl

test_expect_success 'the statute case: articles of the criminal law go without a recipe' '
	llm-tox -q --rejects rej $S >out &&
	jq -r "select(.domain == \"legal\") | .id" rej >legal &&
	test $(wc -l <legal) -ge 2 &&
	jq -r .id rej >all && grep -q comment all
'

test_expect_success 'with recipes/default every statute stays, and toxic comments still go' '
	llm-tox -q --recipe $TOP/recipes/default --rejects rej --stats st.json $S >out &&
	jq -r .domain out | sort -u >kept && echo legal >expect && test_cmp expect kept &&
	jq -r .id rej >gone && printf "comment1\ncomment2\n" >expect && test_cmp expect gone &&
	jq -e ".records_in == 8 and .records_out == 6" st.json &&
	grep -q "\"tox_exempt\"" st.json &&
	test $(($(wc -l <out) + $(wc -l <rej))) = 8
'

test_expect_success 'an exempt document is not scored: written as it came, in annotate mode too' '
	llm-tox -q --recipe $TOP/recipes/default $S >out &&
	grep "\"domain\": \"legal\"" $S >want && test_cmp want out &&
	llm-tox -q --mode annotate --recipe $TOP/recipes/default $S >ann &&
	grep "\"domain\": \"legal\"" ann >got && test_cmp want got &&
	jq -s -e "map(select(.domain == \"web\")) | length == 2 and all(.tox_score >= 0 and .tox_hits > 0)" ann &&
	printf "[domain legal]\ntox_words = no\n" >nowords &&
	llm-tox -q --mode annotate --recipe nowords $S >ann2 &&
	jq -s -e "map(select(.domain == \"legal\")) | length == 6 and
		all((.tox_score | type) == \"number\" and has(\"tox_hits\") == false)" ann2
'

test_expect_success 'tox_words = no: the model alone judges; tox_threshold sets its bar' '
	printf "[domain legal]\ntox_words = no\n" >nowords &&
	llm-tox -q --recipe nowords $S | jq -r "select(.domain == \"legal\") | .id" >got &&
	llm-tox -q --no-words $S | jq -r "select(.domain == \"legal\") | .id" >want &&
	test_cmp want got &&
	llm-tox -q --recipe nowords --rejects rej $S >/dev/null &&
	jq -r "select(.domain == \"legal\") | .reject_reason" rej | sort -u >why &&
	{ test_must_fail test -s why || { echo tox_model >expect && test_cmp expect why; }; } &&
	llm-tox -q --rejects rej0 $S >/dev/null &&
	jq -r "select(.domain == \"legal\") | .reject_reason" rej0 | grep -q tox_words &&
	printf "[domain legal]\ntox_words = no\ntox_threshold = 1\n" >high &&
	llm-tox -q --recipe high $S | jq -r "select(.domain == \"legal\") | .id" >got1 &&
	llm-tox -q --no-words --threshold 1 $S | jq -r "select(.domain == \"legal\") | .id" >want1 &&
	test_cmp want1 got1
'

test_expect_success '--threshold wins over the recipe where it is given' '
	printf "[default]\ntox_threshold = 0\n" >zero &&
	llm-tox -q --no-words --recipe zero $S >out0 && test_must_fail test -s out0 &&
	llm-tox -q --no-words --recipe zero --threshold 1 $S >out1 &&
	llm-tox -q --no-words --threshold 1 $S >ref1 && test_cmp ref1 out1 &&
	llm-tox -q --no-words --recipe zero --threshold zh=1 $S >outz && test_cmp ref1 outz &&
	llm-tox -q --no-words --recipe zero --threshold en=1 $S >oute && test_must_fail test -s oute
'

test_expect_success 'eval follows the recipe: exempt documents count as kept' '
	jq -c ". + {label: (if .domain == \"web\" then 1 else 0 end)}" $S >lab &&
	llm-tox eval --json --recipe $TOP/recipes/default lab >e.json &&
	jq -e "[.languages.zh.rows[] | select(.in_effect)][0] | .fp == 0 and .tp == 2" e.json &&
	llm-tox eval --json lab >e0.json &&
	jq -e "[.languages.zh.rows[] | select(.in_effect)][0] | .fp >= 2" e0.json
'

test_expect_success 'recipe errors: a bad file names its line; --recipe where it does not apply' '
	printf "[domain legal]\ntox_words = maybe\n" >bad &&
	test_must_fail --code=2 llm-tox --recipe bad </dev/null 2>err && test_grep "bad:2: tox_words" err &&
	test_must_fail --code=1 llm-tox --recipe nowhere </dev/null 2>err && test_grep "nowhere" err &&
	test_must_fail --code=2 llm-tox train --recipe nowords -o m.bin $S 2>err &&
	test_grep "filtering and eval" err
'
test_done
