#!/bin/sh
test_description='llm-tox: a transformer classifier as the second stage, on what the word lists pass'
. "$(dirname "$0")/../lib.sh"

test_expect_success 'setup: a tiny pretrained run and a classifier fine-tuned from it' '
	test_tiny_run &&
	jq -c "{text, lang, label: (if .label == 1 then \"toxic\" else \"clean\" end)}" \
		$SAMPLES/corpus/toxicity_sample.jsonl >tox.jsonl &&
	llm-train classify -q --init run --batch 8 --seq-len 48 --steps 6 --lr 1e-3 -o clf tox.jsonl
'

# The same probability llm-score gives; none where a word list fires first.
test_expect_success 'tox_score is the classifier'"'"'s probability of toxic, where the rules pass' '
	llm-tox -q --mode annotate --model clf tox.jsonl >ann.jsonl &&
	llm-score -q -m "s=clf:toxic" tox.jsonl >sc.jsonl &&
	test_line_count = 240 ann.jsonl &&
	jq -r "if .tox_score then .tox_score else \"-\" end" ann.jsonl >tox.txt &&
	jq -r ".scores.s * 10000 | round / 10000" sc.jsonl >score.txt &&
	paste tox.txt score.txt | awk "\$1 != \"-\" { d = \$1 - \$2; if (d < 0) d = -d; if (d > 1e-4) bad++; n++ }
		END { printf \"# %d scored\n\", n; exit !(n > 100 && !bad) }" &&
	llm-tox -q --mode annotate --no-model tox.jsonl | jq -r "(.tox_hits // 0) > 0" >fired.txt &&
	paste -d" " fired.txt tox.txt | awk "\$1 == \"true\" && \$2 != \"-\" { bad++ }
		\$1 == \"true\" { n++ } END { printf \"# %d fired on by the rules\n\", n; exit !(n > 0 && !bad) }"
'

test_expect_success 'the filter drops at the threshold; eval sweeps it' '
	llm-tox -q --model clf --threshold 0.5 --rejects rej.jsonl --stats st.json tox.jsonl >kept.jsonl &&
	jq -e ".records_in == .records_out + .records_rejected" st.json >/dev/null &&
	test "$(jq -r "select(.reject_reason == \"tox_model\") | .tox_score >= 0.5" rej.jsonl | sort -u)" = true &&
	llm-tox eval -q --model clf --json tox.jsonl >ev.json &&
	jq -e "[.. | objects | select(has(\"fpr\"))] | length > 5" ev.json >/dev/null
'

test_expect_success 'a directory that is no classifier of the label is refused' '
	test_must_fail llm-tox --model clf --label offensive tox.jsonl 2>err &&
	test_grep "not a classifier with a label .offensive." err &&
	test_must_fail llm-tox --model run tox.jsonl 2>err &&
	test_grep "not a classifier with a label .toxic." err
'

test_done
