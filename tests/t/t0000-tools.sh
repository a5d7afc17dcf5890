#!/bin/sh
test_description='every tool: --help matches its man page SYNOPSIS, --version, bad flags'
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
	test_expect_success "$n --version and a bad flag (exit 2)" "
		'$t' --version | grep -q '(llmkit)' &&
		test_must_fail --code=2 '$t' --no-such-option </dev/null 2>err &&
		grep -q 'Try .$n --help' err
	"
done

test_done
