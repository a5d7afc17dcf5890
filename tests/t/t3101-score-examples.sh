#!/bin/sh
test_description='llm-score: the EXAMPLES of the man page run as written'
. "$(dirname "$0")/../lib.sh"

command -v fasttext >/dev/null 2>&1 && test_set_prereq FASTTEXT
ln -s "$SAMPLES" samples

# The .Dl lines of the EXAMPLES section, in order, with mdoc escapes undone.
sed -n '/^\.Sh EXAMPLES/,/^\.Sh /p' "$TOP/man/man1/llm-score.1" |
	sed -n 's/^\.Dl //p' | sed 's/\\-/-/g' >examples
test_expect_success 'the man page has examples' 'test $(wc -l <examples) -ge 6'

i=0
while read -r cmd; do
	i=$((i + 1))
	case $cmd in *fasttext*) pre=FASTTEXT ;; *) pre= ;; esac
	if [ -n "$pre" ]; then
		test_expect_success $pre "example $i: $cmd" "$cmd"
	else
		test_expect_success "example $i: $cmd" "$cmd"
	fi
done <examples

test_expect_success 'the examples wrote what they say' '
	n=$(wc -l <samples/corpus/news.jsonl) &&
	test $(wc -l <scored.jsonl) = $n &&
	test $(($(wc -l <kept.jsonl) + $(wc -l <low.jsonl))) = $n &&
	jq -e ".scores.quality >= 0.5" kept.jsonl >/dev/null &&
	jq -e ".bucket >= 16" top.jsonl >/dev/null &&
	test $(wc -l <top.jsonl) -gt $((n / 8)) && test $(wc -l <top.jsonl) -lt $((n / 2))
'

test_expect_success FASTTEXT 'the fastText command printed the same probabilities' '
	jq -r .scores.both.hq scored.jsonl >ours &&
	awk "{ v = 0; for (i = 1; i < NF; i += 2) if (\$i == \"__label__hq\") v = \$(i + 1); print v }" \
		fasttext.txt >theirs &&
	paste ours theirs | awk "{ d = \$1 - \$2; if (d < 0) d = -d; if (d > 1e-5) exit 1 }"
'
test_done
