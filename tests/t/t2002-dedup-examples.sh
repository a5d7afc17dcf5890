#!/bin/sh
test_description='llm-dedup: the EXAMPLES of llm-dedup(1) run as written'
. "$(dirname "$0")/../lib.sh"

C=$SAMPLES/corpus

test_expect_success 'setup: the files the examples name' '
	cat $C/web.jsonl $C/news.jsonl >corpus.jsonl &&
	head -n 400 $C/qa.jsonl >a.jsonl && sed -n "300,700p" $C/qa.jsonl >b.jsonl &&
	head -n 1200 corpus.jsonl >2026-10.jsonl && tail -n +1000 corpus.jsonl >2026-11.jsonl &&
	split -l 1000 -d -a 1 --additional-suffix=.jsonl corpus.jsonl shard- &&
	head -n 20 $SAMPLES/eval/next-sentence.jsonl >task.jsonl &&
	awk "/^\\.Sh EXAMPLES/ { on = 1; next } /^\\.Sh / { on = 0 }
	     on && /^\\.Bd -literal/ { lit = 1; next } on && /^\\.Ed/ { lit = 0; next }
	     lit { print }" $TOP/man/man1/llm-dedup.1 >examples.sh &&
	test_line_count -ge 8 examples.sh
'

test_expect_success 'every example runs' '
	sh -e examples.sh 2>err &&
	test -s dedup.jsonl && test -s dups.jsonl && test -s out.jsonl &&
	test -s web.idx && test -s 2026-11.dedup.jsonl && test -s shard-0.dedup.jsonl &&
	test -s near.jsonl && test -s spans.jsonl && test -s train.jsonl
'

test_expect_success 'and they did what the text says' '
	n=$(wc -l <corpus.jsonl) && llm-dedup -q corpus.jsonl >kept &&
	test $(($(wc -l <kept) + $(wc -l <dups.jsonl))) = $n &&
	test_grep "dup_of" dups.jsonl &&
	cat shard-?.dedup.jsonl >staged && llm-dedup -q corpus.jsonl >single && test_cmp single staged &&
	llm-dedup -q 2026-10.jsonl 2026-11.jsonl >both &&
	cat 2026-10.dedup.jsonl 2026-11.dedup.jsonl >months && test_cmp both months &&
	test_grep "25 bands x 10 rows" err
'

test_done
