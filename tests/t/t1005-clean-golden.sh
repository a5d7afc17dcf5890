#!/bin/sh
test_description='llm-clean: kept records, rejects and --stats on the samples are byte-identical to the committed expectation, with every shipped recipe'
. "$(dirname "$0")/../lib.sh"

# The expectation of each configuration, tests/data/clean/golden/NAME.expected, holds the
# SHA-256 of the three outputs (--stats without its "seconds") and, so that a failure shows
# what changed, every reject's id, reason and measured value. A change that is meant to change
# decisions regenerates them:
#   LLM_GOLDEN_WRITE=1 sh tests/t/t1005-clean-golden.sh
# and says why in its commit message; a speed change must not touch them.
C=$SAMPLES/corpus
G=$TESTDATA/clean/golden
# The Chinese sections of the recipes segment with jieba's dictionary: without it, words
# are characters and the decisions differ.
{ test -n "${LLM_ZHSEG_DICT:-}" || test -r /usr/lib/python3/dist-packages/jieba/dict.txt; } &&
	test_set_prereq ZHDICT

# summary NAME: the expectation of the outputs NAME.out, NAME.rej, NAME.stats
summary() {
	sed 's/"seconds": [0-9.e+-]*/"seconds": 0/' "$1.stats" >"$1.stats0" &&
	for f in out rej stats0; do
		printf '%s %s %s\n' "$f" "$(wc -l <"$1.$f" | tr -d " ")" "$(sha256sum <"$1.$f" | cut -d" " -f1)"
	done &&
	awk '{
		id = "?"; r = "?"; v = ""
		if (match($0, /"id": "[^"]*"/)) id = substr($0, RSTART + 7, RLENGTH - 8)
		if (match($0, /"reject_reason": "[^"]*"/)) r = substr($0, RSTART + 18, RLENGTH - 19)
		if (match($0, /"reject_value": [^,}]*/)) v = substr($0, RSTART + 16, RLENGTH - 16)
		print id "\t" r "\t" v
	}' "$1.rej"
}

# check NAME ARGS...: run llm-clean with ARGS on every sample file and compare
check() {
	name=$1 && shift &&
	llm-clean -q "$@" --rejects "$name.rej" --stats "$name.stats" "$C"/*.jsonl >"$name.out" &&
	summary "$name" >"$name.actual" &&
	if test -n "${LLM_GOLDEN_WRITE:-}"; then
		mkdir -p "$G" && cp "$name.actual" "$G/$name.expected"
	fi &&
	test_cmp "$G/$name.expected" "$name.actual"
}

for r in "$TOP"/recipes/*; do
	name=recipe-$(basename "$r")
	test_expect_success ZHDICT "recipes/$(basename "$r"): the same bytes as before" "
		check $name --recipe '$r'
	"
done

test_expect_success ZHDICT 'no recipe: the built-in filters and thresholds on every document, the same bytes' '
	check builtin
'

# Small batches: many of them, each read and written while the one before is cleaned.
test_expect_success ZHDICT 'the outputs do not depend on --threads or --batch' '
	llm-clean -q --threads 3 --batch 256K --recipe "$TOP/recipes/default" --rejects t3.rej --stats t3.stats \
		"$C"/*.jsonl >t3.out &&
	summary t3 >t3.actual &&
	test_cmp "$G/recipe-default.expected" t3.actual
'

test_expect_success 'every shipped recipe has its expectation' '
	for r in "$TOP"/recipes/*; do
		test -f "$G/recipe-$(basename "$r").expected" || { echo "no expectation for $r"; return 1; }
	done
'

test_done
