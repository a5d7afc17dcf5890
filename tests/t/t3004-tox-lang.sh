#!/bin/sh
test_description='llm-tox: thresholds and word densities by language; eval --max-fpr / --min-recall'
. "$(dirname "$0")/../lib.sh"

E=$SAMPLES/tox/eval.jsonl

test_expect_success 'filter: each language at its own threshold' '
	llm-tox -q --no-words --threshold 0.5 $E | jq -r "select(.lang == \"zh\") | .id" >zh05 &&
	llm-tox -q --no-words --threshold 0.99 $E | jq -r "select(.lang == \"en\") | .id" >en99 &&
	llm-tox -q --no-words --threshold 0.99,zh=0.5 $E | jq -r .id >mixed &&
	sort zh05 en99 >expect && sort mixed >got && test_cmp expect got &&
	test $(wc -l <zh05) -gt 0 && test $(wc -l <en99) -gt 0 &&
	llm-tox -q --no-words --threshold zh=0.5,0.99 $E | jq -r .id | sort >got2 &&
	test_cmp expect got2
'

test_expect_success 'the primary subtag chooses, in any case; other languages take the default' '
	printf "%s\n" "{\"lang\": \"zh-Hant\", \"text\": \"x\"}" "{\"lang\": \"ZH_cn\", \"text\": \"x\"}" \
		"{\"lang\": \"fr\", \"text\": \"x\"}" "{\"text\": \"x\"}" >in &&
	llm-tox -q --no-words --mode annotate in | jq -e ".tox_score < 1" >/dev/null &&
	llm-tox -q --no-words --threshold 1,zh=0 in | jq -r ".lang // \"none\"" >got &&
	printf "fr\nnone\n" >expect && test_cmp expect got &&
	llm-tox -q --no-words --threshold zh=1,0 in | jq -r .lang >got &&
	printf "zh-Hant\nZH_cn\n" >expect && test_cmp expect got
'

test_expect_success 'words per 1k by language' '
	llm-tox -q --no-model --words-per-1k 1000,en=0 --rejects rej $E >out &&
	jq -r .lang rej | sort -u >langs && echo en >expect && test_cmp expect langs &&
	llm-tox -q --no-model --words-per-1k 0 --rejects rej0 $E >/dev/null &&
	jq -r "select(.lang == \"en\") | .id" rej0 >a && jq -r .id rej >b && test_cmp a b
'

test_expect_success 'eval marks the threshold in effect per language, mixed for all' '
	llm-tox eval --threshold 0.85,zh=0.9 $E >table &&
	grep "^zh    words|model    0.9\*" table && grep "^en    words|model   0.85\*" table &&
	grep "^all   words|model  mixed\*" table &&
	test $(grep -c "\*" table) = 4 &&
	llm-tox eval --json --threshold 0.85,zh=0.9 $E >e.json &&
	jq -e ".languages.zh.threshold == 0.9 and .languages.en.threshold == 0.85 and .languages.all.threshold == null" e.json
'

test_expect_success 'eval --max-fpr: per language, the rate is met and the printed --threshold reproduces it' '
	llm-tox eval --json --max-fpr 0.08 $E >t.json &&
	jq -e ".targets[0].max_fpr == 0.08 and .targets[0].met" t.json &&
	jq -e "[.targets[0].languages[] | .row.fpr <= 0.08] | all" t.json &&
	spec=$(jq -r ".targets[0].threshold_spec" t.json) &&
	case $spec in 0.85,en=*,zh=*) ;; *) echo "spec $spec"; false ;; esac &&
	llm-tox eval --json --threshold "$spec" --thresholds 0.5 $E >r.json &&
	for l in all en zh; do
		jq -c ".targets[0].languages.$l.row | [.tp, .fp, .tn, .fn]" t.json >a &&
		jq -c "[.languages.$l.rows[] | select(.in_effect)][0] | [.tp, .fp, .tn, .fn]" r.json >b &&
		test_cmp a b || return 1
	done
'

test_expect_success 'a lower threshold would pass the rate (the threshold is the lowest that meets it)' '
	llm-tox eval --json --no-words --max-fpr 0.05 $E >t.json &&
	zh=$(jq -r ".targets[0].languages.zh.threshold" t.json) &&
	lower=$(echo "$zh" | awk "{ printf \"%.4f\", \$1 - 0.002 }") &&
	llm-tox eval --json --no-words --threshold "zh=$lower" --thresholds 0.5 $E >r.json &&
	jq -e "[.languages.zh.rows[] | select(.in_effect)][0].fpr > 0.05" r.json
'

test_expect_success 'eval --min-recall: recall is met; text form prints the option to use' '
	llm-tox eval --min-recall 0.8 --no-words $E >table &&
	head -n 1 table | grep "target" &&
	grep "^zh    model       recall>=0.8  yes" table && grep "^en    model       recall>=0.8  yes" table &&
	grep "^--threshold 0.85,en=.*,zh=" table &&
	llm-tox eval --json --min-recall 0.8 --no-words $E >t.json &&
	jq -e "[.targets[0].languages[] | .row.recall >= 0.8] | all" t.json &&
	llm-tox eval --json --min-recall 0.8 --max-fpr 0.1 $E | jq -e ".targets | length == 2"
'

test_expect_success 'a target the model cannot meet says so' '
	llm-tox eval --json --max-fpr 0.01 $E >t.json &&
	jq -e ".targets[0].met == false" t.json &&
	jq -e "[.targets[0].languages[] | select(.met == false)] | length > 0" t.json &&
	llm-tox eval --max-fpr 0.01 $E | grep "met where the table says yes"
'

test_expect_success 'usage errors: exit 2 with the option named' '
	test_must_fail --code=2 llm-tox --threshold zh=2 </dev/null 2>err && grep -- "--threshold: .2." err &&
	test_must_fail --code=2 llm-tox --threshold zh </dev/null 2>err && grep -- "--threshold" err &&
	test_must_fail --code=2 llm-tox --threshold "z h=0.5" </dev/null 2>err && grep "language tag" err &&
	test_must_fail --code=2 llm-tox --words-per-1k en=-1 </dev/null 2>err && grep -- "--words-per-1k" err &&
	test_must_fail --code=2 llm-tox predict --threshold zh=0.5 x 2>err && grep "one value" err &&
	test_must_fail --code=2 llm-tox --max-fpr 0.1 </dev/null 2>err && grep "options of eval" err &&
	test_must_fail --code=2 llm-tox eval --no-model --max-fpr 0.1 </dev/null 2>err && grep "need the model" err &&
	test_must_fail --code=2 llm-tox eval --min-recall 1.5 </dev/null 2>err && grep -- "--min-recall" err
'
test_done
