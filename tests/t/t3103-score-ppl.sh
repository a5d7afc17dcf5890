#!/bin/sh
test_description='llm-score: perplexity under a language model (CCNet), its sketches and buckets'
. "$(dirname "$0")/../lib.sh"

# A tiny model trained for a few steps (as t7000): its perplexities differ by document.
test_expect_success 'setup: a tokenizer and a tiny trained run' '
	test_tiny_run &&
	test -f run/tokenizer.json
'

# One definition: llm-eval's rolling perplexity of the document alone.
test_expect_success 'a document'"'"'s perplexity is llm-eval loss --mode rolling'"'"'s of it alone' '
	awk "NR % 10 == 1" docs.jsonl >few.jsonl &&
	llm-score -q -m ppl=run few.jsonl >scored.jsonl &&
	test_line_count = 8 scored.jsonl &&
	jq -r .scores.ppl scored.jsonl >llm.txt &&
	i=0 && : >eval.txt &&
	while read -r line; do
		printf "%s\n" "$line" >one.jsonl &&
		llm-eval loss -q --ckpt run --mode rolling -t tok.json --json l.json one.jsonl &&
		jq -r .all.ppl l.json >>eval.txt || exit 1
	done <few.jsonl &&
	paste llm.txt eval.txt | awk "{ d = (\$1 - \$2) / \$2; if (d < 0) d = -d; if (d > m) m = d }
		END { printf \"# largest relative difference %g\n\", m; exit !(NR == 8 && m < 1e-6) }" &&
	sort -u llm.txt >u.txt && test_line_count = 8 u.txt
'

test_expect_success 'an empty text has no features: 0 and counted' '
	printf "%s\n" "{\"text\": \"\"}" "{\"text\": \"a b c\"}" >empty.jsonl &&
	llm-score -q -m ppl=run --stats st.json empty.jsonl >out.jsonl &&
	test "$(jq -r .scores.ppl out.jsonl | head -n 1)" = 0 &&
	jq -e ".domains.unknown.counters.no_features == 1" st.json >/dev/null
'

# Perplexities are values, not probabilities: sketched as such, bucketed 1..N by rank.
test_expect_success 'perplexity buckets: four sketches merged bucket as one over everything' '
	llm-score sketch -q -m ppl=run -o all.sketch docs.jsonl &&
	jq -e ".scores.ppl.kind == \"value\" and .scores.ppl.documents == 80" all.sketch &&
	split -l 20 docs.jsonl part. &&
	for f in part.a?; do llm-score sketch -q -m ppl=run -o $f.sketch $f || exit 1; done &&
	llm-score merge -q -o merged.sketch part.a?.sketch &&
	llm-score -q -m ppl=run --buckets 4 --sketch merged.sketch docs.jsonl >b.jsonl &&
	llm-score -q -m ppl=run --buckets 4 --sketch all.sketch docs.jsonl >whole.jsonl &&
	test_cmp whole.jsonl b.jsonl &&
	jq -r "[.scores.ppl, .bucket] | @tsv" b.jsonl | sort -g >sorted.tsv &&
	cut -f2 sorted.tsv | sort -c -n &&
	test "$(cut -f2 sorted.tsv | sort -u | tr "\n" " ")" = "1 2 3 4 "
'

# CCNet keeps the head: the lowest perplexities.
test_expect_success '--keep selects the lowest perplexities by their bucket' '
	llm-score -q -m ppl=run --buckets 4 --sketch merged.sketch --keep "bucket.ppl <= 1" \
		--stats st.json docs.jsonl >head.jsonl &&
	n=$(wc -l <head.jsonl) && test $n -ge 16 && test $n -le 24 &&
	jq -e ".records_in == .records_out + .records_rejected" st.json >/dev/null &&
	jq -r .scores.ppl head.jsonl | sort -g | tail -n 1 >max.txt &&
	jq -r ".scores.ppl" b.jsonl | sort -g | sed -n "$((n + 1))p" >next.txt &&
	awk -v a="$(cat max.txt)" -v b="$(cat next.txt)" "BEGIN { exit !(a <= b) }"
'

test_expect_success 'a probability score and a value score of one name do not merge' '
	printf "%s\n" "{\"text\": \"x\", \"scores\": {\"ppl\": 0.5}}" >p.jsonl &&
	llm-score sketch -q -o p.sketch p.jsonl &&
	test_must_fail --code=1 llm-score merge -o m.sketch all.sketch p.sketch 2>err &&
	test_grep "score .ppl. is sketched as a value, not a probability" err
'

test_done
