#!/bin/sh
test_description='lib/ layers: includes follow lib/README.md, file names and test numbers are unique, DESIGN sections exist'
. "$(dirname "$0")/../lib.sh"

# The rule of lib/README.md: which layers each layer may include.
allowed() {
	case $1 in
	core) echo "" ;;
	text) echo "core" ;;
	dedup|tok|tox) echo "core text" ;;
	data) echo "core tok" ;;
	model) echo "core tok data" ;;
	*) echo "?" ;;
	esac
}

# Print "FILE: include" for every include of a lib/ header that breaks the rule.
check_layers() {
	for f in "$TOP"/lib/*/*.[ch]; do
		layer=$(basename "$(dirname "$f")")
		ok=$(allowed "$layer")
		sed -n 's/^#[ ]*include "\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
			case $inc in
			*/*) l=${inc%%/*}
			     test "$l" = "$layer" && { echo "${f#$TOP/}: $inc (same layer: include by name)"; continue; }
			     case " $ok " in *" $l "*) test -f "$TOP/lib/$inc" || echo "${f#$TOP/}: $inc (no such header)" ;;
			     *) echo "${f#$TOP/}: $inc (layer $layer may not include $l)" ;; esac ;;
			*.pb-c.h) # generated at build time from the .proto beside the source
			     test -f "$(dirname "$f")/${inc%.pb-c.h}.proto" ||
			     echo "${f#$TOP/}: $inc (no ${inc%.pb-c.h}.proto in $layer/)" ;;
			*) test -f "$(dirname "$f")/$inc" || echo "${f#$TOP/}: $inc (not in $layer/)" ;;
			esac
		done
	done
}

test_expect_success 'every layer is in the rule and in lib/README.md' '
	for d in "$TOP"/lib/*/; do
		l=$(basename "$d") &&
		test "$(allowed "$l")" != "?" &&
		grep -q "^| \`$l/\`" "$TOP/lib/README.md" || { echo "layer $l"; return 1; }
	done
'

test_expect_success 'includes follow the layer rule' '
	check_layers >bad && cat bad && test_must_fail test -s bad
'

test_expect_success 'the rule check finds a breach' '
	mkdir -p fake/lib/core fake/lib/model && echo "int x;" >fake/lib/model/m.h &&
	printf "#include \"model/m.h\"\n" >fake/lib/core/c.c &&
	(TOP=$TRASH/fake check_layers) >bad && test_grep "layer core may not include model" bad
'

test_expect_success 'every lib module is in the module map' '
	for f in "$TOP"/lib/*/*.h; do
		m=${f#$TOP/lib/}; m=${m%.h};
		grep -q "^| \`$m\`" "$TOP/lib/README.md" || { echo "module $m"; return 1; }
	done
'

test_expect_success 'file names are unique across the tree' '
	(cd "$TOP" && git ls-files lib tools tests kernels bench scripts 2>/dev/null) |
		grep -E "\.(c|h|cu|cuh|py)$" | sed "s|.*/||" | sort | uniq -d >dups &&
	test_must_fail test -s dups
'

# A test is named by its number in the logs and by hand ("run t1003"): two scripts with one
# number are two tests under one name.
test_expect_success 'shell test numbers are unique' '
	ls "$TOP"/tests/t | sed -n "s/^\(t[0-9][0-9]*\)-.*\.sh\$/\1/p" | sort | uniq -d >dupnums &&
	test $(ls "$TOP"/tests/t | grep -c "^t[0-9]*-.*\.sh\$") -gt 20 &&
	{ test_must_fail test -s dupnums || { cat dupnums; false; }; }
'

# Comments cite DESIGN.md by section ("DESIGN §4"): each must name one that exists.
test_expect_success 'every "DESIGN §N" in the tree names a section of DESIGN.md' '
	(cd "$TOP" && grep -rho "DESIGN §[0-9][0-9]*" lib tools tests kernels CONTRIBUTING.md README.md) |
		sort -u >cited &&
	test -s cited &&
	while read -r d n; do
		grep -q "^## ${n#§}\. " "$TOP/DESIGN.md" || { echo "no section $n in DESIGN.md"; exit 1; }
	done <cited
'

test_done
