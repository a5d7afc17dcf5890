#!/bin/sh
test_description='every checked example of the man pages prints what its page says'
. "$(dirname "$0")/../lib.sh"

# The pages show commands as "$ command" in a literal display, followed by what they print
# (tests/man-examples.awk). Each display runs, its commands in order, in a directory of its
# page where samples/, recipes/ and tests/ are the tree's; its output must equal the page's
# text, except that a line the page ends with "..." only has to start with what precedes it
# (timings, paths of the machine). Reading the manual is then reading what the tools do.

# match EXPECTED ACTUAL: line by line, "..." at the end of an expected line a wildcard
match() {
	awk 'NR == FNR { want[++n] = $0; next }
	{ got[++m] = $0 }
	END {
		bad = (n != m)
		for (i = 1; i <= n && i <= m && !bad; i++) {
			w = want[i]
			if (w ~ /\.\.\.$/) {
				w = substr(w, 1, length(w) - 3)
				bad = substr(got[i], 1, length(w)) != w
			} else
				bad = got[i] != w
		}
		if (bad) {
			print "expected:"; for (i = 1; i <= n; i++) print "  " want[i]
			print "got:"; for (i = 1; i <= m; i++) print "  " got[i]
		}
		exit bad
	}' "$1" "$2"
}

test_expect_success 'the example extractor finds commands and their output' '
	cat >page.1 <<-\EOT &&
	.Sh DESCRIPTION
	.Bd -literal
	$ not an example
	.Ed
	.Sh EXAMPLES
	.Bd -literal -offset indent
	$ echo a \e
	    b
	a b
	$ echo x\&y \-z
	xy -z
	.Ed
	.Bd -literal
	prose only
	.Ed
	.Sh SEE ALSO
	EOT
	mkdir ex && awk -v dir=ex -f "$TOP/tests/man-examples.awk" page.1 >list &&
	test_line_count = 1 list &&
	test -f ex/1.sh && test ! -f ex/2.sh &&
	(cd ex && sh 1.sh) >out 2>&1 && match ex/1.expected out
'

test_expect_success 'a wrong output fails, "..." matches a tail' '
	printf "llm-x: 3 in, 2 out\\n" >want && printf "llm-x: 3 in, 1 out\\n" >got &&
	test_must_fail match want got >/dev/null &&
	printf "llm-x: 3 in, 2 out...\\n" >want && printf "llm-x: 3 in, 2 out; 0.1 s\\n" >got &&
	match want got
'

for page in "$TOP"/man/man1/*.1 "$TOP"/man/man5/*.5; do
	name=$(basename "$page")
	dir=$TRASH/$name
	mkdir -p "$dir" && for d in samples recipes tests; do ln -s "$TOP/$d" "$dir/$d"; done
	awk -v dir="$dir" -f "$TOP/tests/man-examples.awk" "$page" >"$dir/list" || exit 1
	while IFS="	" read -r n first; do
		first=$(printf "%s" "$first" | tr -d "\\\\" | cut -c1-72)
		test_expect_success JQ "$name: \$ $first" "
			(cd '$dir' && sh -e $n.sh) >'$dir/$n.out' 2>&1 &&
			match '$dir/$n.expected' '$dir/$n.out'
		"
	done <"$dir/list"
done

test_done
