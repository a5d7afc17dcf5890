#!/bin/sh
test_description='llm-clean --lang-model: lid.176.ftz gives the fasttext command'"'"'s labels and scores'
. "$(dirname "$0")/../lib.sh"

MODEL=$TESTDATA/tox/lid.176.ftz
command -v fasttext >/dev/null 2>&1 && test -f "$MODEL" && test_set_prereq FASTTEXT

test_expect_success FASTTEXT,JQ 'same label and probability as fasttext predict-prob' '
	head -n 400 $SAMPLES/corpus/news.jsonl | jq -c "{id, text: (.text | gsub(\"[\\n\\r\\t]\"; \" \"))}" >in &&
	jq -r .text in >lines &&
	fasttext predict-prob "$MODEL" lines 1 >ft &&
	llm-clean -q --filters none --normalize none --lang-model "$MODEL" in >out &&
	jq -r "[.lang, .lang_score] | @tsv" out >ours &&
	awk "{ sub(/^__label__/, \"\", \$1); p = \$2 > 1 ? 1 : \$2; printf \"%s\t%.4f\n\", \$1, p }" ft >theirs &&
	awk -F "\t" "NR == FNR { l[NR] = \$1; p[NR] = \$2; next }
		{ n++; if (\$1 != l[FNR]) { bad++; print \"label\", FNR, \$1, l[FNR] }
		  else if ((\$2 - p[FNR]) > 0.00011 || (p[FNR] - \$2) > 0.00011) { bad++; print \"prob\", FNR, \$2, p[FNR] } }
		END { print n, \"lines,\", bad + 0, \"differ\"; exit bad > 0 || n < 400 }" theirs ours
'

test_expect_success FASTTEXT,JQ '--lang with the model keeps the listed languages above the threshold' '
	head -n 400 $SAMPLES/corpus/news.jsonl >in &&
	llm-clean -q --filters none --lang-model "$MODEL" --lang en,zh --lang-threshold 0.5 --rejects rej in >out &&
	jq -s -e "all(.lang == \"en\" or .lang == \"zh\") and all(.lang_score >= 0.5)" out &&
	jq -s -e "length > 0" out &&
	test $(($(wc -l <out) + $(wc -l <rej))) = 400
'

test_expect_success 'a model that is not a fastText file is an error (exit 1)' '
	printf "not a model" >bad.ftz &&
	test_must_fail llm-clean -q --lang-model bad.ftz </dev/null 2>err &&
	test_grep "bad.ftz" err
'

test_done
