#!/bin/sh
test_description='llm-tox: the EXAMPLES of the man page run as written'
. "$(dirname "$0")/../lib.sh"

command -v fasttext >/dev/null 2>&1 && test_set_prereq FASTTEXT
ln -s "$SAMPLES" samples && ln -s "$TOP/tests" tests && ln -s "$TOP/recipes" recipes

# The .Dl lines of the EXAMPLES section, in order, with mdoc escapes undone.
sed -n '/^\.Sh EXAMPLES/,/^\.Sh /p' "$TOP/man/man1/llm-tox.1" |
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
	test -s clean.jsonl && test -s toxic.jsonl && test -s c4.jsonl && test -s tox.bin &&
	test $(($(wc -l <clean.jsonl) + $(wc -l <toxic.jsonl))) = 7620
'
test_done
