#!/bin/sh
test_description='every tool: --help matches its man page SYNOPSIS, every option of its table is in its man page, --version, bad flags, bash completion'
. "$(dirname "$0")/../lib.sh"

# SYNOPSIS of a man page as one line of words.
synopsis() {
	groff -mdoc -Tutf8 -P-c -P-b -P-u "$1" 2>/dev/null |
	awk '/^SYNOPSIS/ {on=1; next} /^[A-Z]/ {on=0} on' | tr -s ' \n\t' '   '
}

# Usage lines of --help (the first paragraph), one per line, words normalised.
usage_lines() {
	"$1" --help | awk 'NF == 0 {exit} {print}' |
	sed -e 's/^usage: *//' -e 's/^ *//' | tr -s ' \t' '  '
}

for t in "$TOP"/bin/llm-*; do
	[ -x "$t" ] || continue
	n=${t##*/}
	fn=_$(echo "$n" | tr - _)
	test_expect_success "$n has a man page that lints clean" "
		test -f '$TOP/man/man1/$n.1' &&
		test -z \"\$(groff -mdoc -ww -z '$TOP/man/man1/$n.1' 2>&1)\"
	"
	test_expect_success "$n --help usage lines appear in its SYNOPSIS" "
		'$t' --help >help && head -n 1 help | grep '^usage: $n' &&
		synopsis '$TOP/man/man1/$n.1' >syn && test -s syn &&
		usage_lines '$t' >lines &&
		while read -r l; do
			grep -F -- \"\$l\" syn >/dev/null || { echo \"not in SYNOPSIS: \$l\"; cat syn; exit 1; }
		done <lines
	"
	test_expect_success "$n: every option of its table is in its man page" "
		'$t' --list-options >opts && test -s opts &&
		groff -mdoc -Tutf8 -P-c -P-b -P-u '$TOP/man/man1/$n.1' >man 2>/dev/null &&
		awk -F'\t' '/^-/ { print \$1 }' opts >names && test -s names &&
		while read -r o; do
			grep -E -- \"(^|[^-[:alnum:]])\$o([^-[:alnum:]]|\\\$)\" man >/dev/null ||
			{ echo \"\$o is not in man/man1/$n.1\"; exit 1; }
		done <names
	"
	test_expect_success "$n: bash completion from its option table" "
		sh '$TOP/mk/completion.sh' '$t' >compl &&
		bash -c '. ./compl && COMP_WORDS=($n --he) && COMP_CWORD=1 && $fn &&
			echo \"\${COMPREPLY[*]}\"' >got &&
		echo --help >want && test_cmp want got
	"
	test_expect_success "$n --version and a bad flag (exit 2)" "
		'$t' --version | grep -q '(llmkit)' &&
		test_must_fail --code=2 '$t' --no-such-option </dev/null 2>err &&
		grep -q 'Try .$n --help' err
	"
done

test_expect_success 'completion offers subcommands first, values of an option, files after one' '
	sh "$TOP/mk/completion.sh" "$TOP/bin/llm-eval" >compl &&
	bash -c ". ./compl && COMP_WORDS=(llm-eval ge) && COMP_CWORD=1 && _llm_eval &&
		echo \${COMPREPLY[*]}" >got &&
	echo generate >want && test_cmp want got &&
	sh "$TOP/mk/completion.sh" "$TOP/bin/llm-cat" >compl &&
	bash -c ". ./compl && COMP_WORDS=(llm-cat -f wa) && COMP_CWORD=2 && _llm_cat &&
		echo \${COMPREPLY[*]}" >got &&
	echo warc >want && test_cmp want got &&
	bash -c ". ./compl && COMP_WORDS=(llm-cat -o o) && COMP_CWORD=2 && _llm_cat &&
		echo \${#COMPREPLY[*]}" >got &&
	echo 0 >want && test_cmp want got &&
	test_grep "^complete -o default -F _llm_cat llm-cat$" compl
'

test_expect_success 'a tool refuses a common option it has no use for' '
	test_must_fail --code=2 llm-report --rejects x -o out run </dev/null 2>err &&
	test_grep "unrecognized option" err && test ! -e x &&
	test_must_fail --code=2 llm-train --stats x 2>err
'

test_expect_success '--help comes from the table: every option once, common ones included' '
	llm-noise --help >help && llm-noise --list-options >opts &&
	for o in $(awk -F"\t" "/^--/ { print \$1 }" opts); do
		test $(grep -c -- "$o\b" help) -ge 1 || { echo "$o not in --help"; exit 1; }
	done &&
	test_grep "^  -o, --output FILE" help && test_grep "^      --stats FILE" help &&
	test_grep "^      --rejects FILE" help && test_grep "^      --strict" help &&
	llm-report --help >help && ! grep -- --rejects help
'

test_expect_success 'llm-eval: --stats writes the results, --json is the same' '
	llm-eval --list-options >opts && test_grep "^--stats	FILE" opts && test_grep "^--json	FILE" opts &&
	llm-eval --help >help && test_grep "stats FILE" help
'

test_done
