#!/bin/sh
test_description='llm-clean: the EXAMPLES of the man page run'
. "$(dirname "$0")/../lib.sh"

# Each example line of llm-clean(1) that starts with llm-clean, run from the source root
# with its output redirected into the trash directory.
sed -n '/^\.Sh EXAMPLES/,/^\.Sh SEE ALSO/p' "$TOP/man/man1/llm-clean.1" |
	grep '^llm-clean ' >examples

test_expect_success 'the man page has examples' '
	test_line_count -ge 3 examples
'

i=0
while read -r line; do
	i=$((i + 1))
	test_expect_success JQ "example $i: $line" "
		(cd \"\$TOP\" && eval \"\$(echo '$line' | sed 's/ > [^ ]*\$//; s/--rejects [^ ]*/--rejects \$TRASH\\/rej.jsonl/')\" -q) >out &&
		test -s out && jq -e . out >/dev/null
	"
done <examples

test_done
