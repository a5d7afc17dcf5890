#!/bin/sh
test_description='llm-clean --recipe: sections and precedence, --explain, --set, the shipped recipe per domain'
. "$(dirname "$0")/../lib.sh"

C=$SAMPLES/corpus
G=$TESTDATA/clean
R=$TOP/recipes/default
# jieba's dictionary (Debian's python3-jieba, or $LLM_ZHSEG_DICT) for Chinese words
{ test -n "${LLM_ZHSEG_DICT:-}" || test -r /usr/lib/python3/dist-packages/jieba/dict.txt; } &&
	test_set_prereq ZHDICT

# block HEADER <explain: the lines of one (domain, lang) block of --explain
block() {
	awk -v h="$1" 'index($0, h) == 1 { on = 1 } on && NF == 0 { exit } on' ex
}

# keep DOMAIN: percentage of the domain's sample documents the default recipe keeps
keep() {
	llm-clean -q --recipe "$R" --rejects "rej-$1" "$C/$1.jsonl" >"out-$1" &&
	echo "$(wc -l <"out-$1") $(wc -l <"$C/$1.jsonl")" | awk '{ printf "%d\n", 100 * $1 / $2 }'
}

test_expect_success 'a recipe: precedence default < lang < longer lang < domain < domain and lang' '
	cat >r <<-\EOF &&
	# a comment
	[domain web lang zh]
	min_chars = 5          # most specific
	[default]
	min_chars = 1
	max_chars = 1000
	[lang zh-Hant]
	min_chars = 3
	[lang zh]
	min_chars = 2
	min_words = 7
	[domain web]
	min_chars = 4
	EOF
	llm-clean --recipe r --explain >ex &&
	block "domain web, lang zh:" | grep -q "min_chars = 5  # \[domain web lang zh\]" &&
	block "domain web, lang zh-Hant:" | grep -q "min_chars = 5  # \[domain web lang zh\]" &&
	block "domain *, lang zh-Hant:" | grep -q "min_chars = 3  # \[lang zh-Hant\]" &&
	block "domain *, lang zh:" | grep -q "min_chars = 2  # \[lang zh\]" &&
	block "domain web, lang *:" | grep -q "min_chars = 4  # \[domain web\]" &&
	block "domain *, lang *:" | grep -q "min_chars = 1  # \[default\]" &&
	block "domain web, lang zh:" | grep -q "min_words = 7  # \[lang zh\]" &&
	block "domain web, lang zh:" | grep -q "max_chars = 1000  # \[default\]"
'

test_expect_success JQ 'the precedence decides per record, and --set wins over every section' '
	printf "%s\n" \
		"{\"id\":\"a\",\"domain\":\"web\",\"lang\":\"zh\",\"text\":\"1234\"}" \
		"{\"id\":\"b\",\"domain\":\"web\",\"lang\":\"zh\",\"text\":\"12345\"}" \
		"{\"id\":\"c\",\"lang\":\"zh-Hant\",\"text\":\"12\"}" \
		"{\"id\":\"d\",\"lang\":\"zh-Hant\",\"text\":\"123\"}" \
		"{\"id\":\"e\",\"domain\":\"news\",\"lang\":\"en\",\"text\":\"1\"}" >in &&
	llm-clean -q --recipe r --filters length --set min_words=0 --rejects rej in >out &&
	jq -r .id out | tr "\n" " " >kept && printf "b d e " >expect && test_cmp expect kept &&
	llm-clean -q --recipe r --filters length --set min_words=0 --set min_chars=1 in >out &&
	test_line_count = 5 out
'

test_expect_success JQ 'filters += and -= change the inherited set' '
	cat >r2 <<-\EOF &&
	[default]
	filters = length c4
	[domain code]
	filters -= c4
	filters += code
	EOF
	llm-clean --recipe r2 --explain >ex &&
	block "domain code, lang *:" | grep -q "filters = length code  # \[domain code\]" &&
	block "domain *, lang *:" | grep -q "filters = length c4  # \[default\]"
'

test_expect_success 'recipe errors name the file and line, and the closest key or filter' '
	printf "[default]\nmin_char = 5\n" >bad1 &&
	test_must_fail --code=2 llm-clean --recipe bad1 </dev/null 2>err &&
	test_grep "bad1:2: unknown key .min_char. (did you mean .min_chars.?)" err &&
	printf "[default]\nfilters = length gopher-qualty\n" >bad2 &&
	test_must_fail --code=2 llm-clean --recipe bad2 </dev/null 2>err &&
	test_grep "bad2:2: unknown filter .gopher-qualty. (did you mean .gopher-quality.?)" err &&
	printf "min_chars = 5\n" >bad3 &&
	test_must_fail --code=2 llm-clean --recipe bad3 </dev/null 2>err && test_grep "bad3:1:" err &&
	printf "[domain]\n" >bad4 &&
	test_must_fail --code=2 llm-clean --recipe bad4 </dev/null 2>err && test_grep "bad4:1: section" err &&
	printf "[lang en]\nmin_chars += 5\n" >bad5 &&
	test_must_fail --code=2 llm-clean --recipe bad5 </dev/null 2>err && test_grep "bad5:2: .min_chars. takes" err &&
	printf "[lang en]\ntox_threshold = 2\n" >bad6 &&
	test_must_fail --code=2 llm-clean --recipe bad6 </dev/null 2>err && test_grep "bad6:2: tox_threshold" err &&
	test_must_fail llm-clean --recipe no-such-recipe </dev/null 2>err && test_grep "no-such-recipe" err &&
	i=0 && : >bad7 && while [ $i -lt 65 ]; do printf "[domain d%d]\nmin_chars = 1\n" $i >>bad7; i=$((i + 1)); done &&
	test_must_fail --code=2 llm-clean --recipe bad7 </dev/null 2>err && test_grep "bad7:129: more than 64 sections" err
'

# A typo of 75 for 0.75 would reject every document: a value outside its parameter's
# bounds is a usage error naming the parameter, the bounds and where the value came from.
test_expect_success 'a parameter outside its bounds is refused, from a recipe or --set' '
	printf "[default]\nmin_chars = 5\n\n[lang zh]\nmin_alpha_words_ratio = 80\n" >big &&
	test_must_fail --code=2 llm-clean --recipe big </dev/null 2>err &&
	test_grep "big:5: min_alpha_words_ratio: 80 is outside \[0, 1\] (a fraction)" err &&
	test_must_fail --code=2 llm-clean --set min_alpha_words_ratio=7 </dev/null 2>err &&
	test_grep "^llm-clean: --set: min_alpha_words_ratio: 7 is outside \[0, 1\]" err &&
	test_must_fail --code=2 llm-clean --set dup_line_frac=-0.1 </dev/null 2>err &&
	test_grep "dup_line_frac: -0.1 is outside \[0, 1\]" err &&
	test_must_fail --code=2 llm-clean --set min_words=-1 </dev/null 2>err &&
	test_grep "min_words: -1 is below 0 (words)" err &&
	test_must_fail --code=2 llm-clean --set code_max_lines=3e9 </dev/null 2>err &&
	test_grep "code_max_lines: 3e9 is over 2147483647" err &&
	test_must_fail --code=2 llm-clean --set c4_min_sentences=2.5 </dev/null 2>err &&
	test_grep "c4_min_sentences: expected a whole number" err &&
	printf "{\"text\":\"four more words\"}\n" >in &&
	llm-clean -q --filters gopher-quality --set min_alpha_words_ratio=1 --set min_doc_words=0 \
		--set min_stop_words=0 --set max_symbol_word_ratio=80 in >out &&
	test_line_count = 1 out &&
	llm-clean -q --filters gopher-quality --set min_alpha_words_ratio=off --set min_doc_words=off \
		--set min_stop_words=0 in >out &&
	test_line_count = 1 out
'

test_expect_success 'an unknown --set name gives the closest name, or the valid names' '
	test_must_fail --code=2 llm-clean --set dup_line_fracc=0.3 </dev/null 2>err &&
	test_grep "unknown threshold .dup_line_fracc. (did you mean .dup_line_frac.?)" err &&
	test_must_fail --code=2 llm-clean --set zzz=1 </dev/null 2>err &&
	test_grep "unknown threshold .zzz. (thresholds: min_chars, max_chars," err &&
	test_must_fail --code=2 llm-clean --set min_chars=abc </dev/null 2>err &&
	test_grep "min_chars: expected a number" err
'

test_expect_success '--explain of the shipped recipe: every section and its sources' '
	llm-clean --recipe "$R" --explain >ex &&
	grep -q "^domain code, lang zh: \[default\] \[lang zh\] \[domain code\]$" ex &&
	block "domain *, lang zh:" | grep -q "filters = length gopher-rep gopher-quality fineweb cwt" &&
	block "domain books, lang *:" | grep -q "filters = length encoding gopher-rep" &&
	block "domain code, lang *:" | grep -q "tox = no  # \[domain code\]" &&
	block "domain *, lang zh:" | grep -q "dup_line_frac = 0.287  # built-in"
'

test_expect_success 'every number of the shipped recipe says where it comes from' '
	{ grep -E "^[a-z_0-9]+ *= *[0-9.]+ *$" "$R" >bare || true; } &&
	test ! -s bare
'

for d in books legal wiki qa news; do
	test_expect_success "recipes/default keeps at least 90% of the $d samples" "
		k=\$(keep $d) && echo \"$d: \$k%\" && test \$k -ge 90
	"
done

test_expect_success JQ 'recipes/default: code meets only the code rules, and most of it is kept' '
	k=$(keep code) && test $k -ge 50 &&
	jq -r .reject_reason rej-code | sort -u >reasons &&
	test_must_fail grep -v "^code_\|^too_\|^encoding_" reasons
'

test_expect_success JQ 'recipes/default: Chinese web pages meet FineWeb-2 and ChineseWebText rules, not C4' '
	llm-clean -q --recipe "$R" --rejects rej "$C/web.jsonl" >out &&
	jq -r "select(.lang == \"zh\") | .reject_reason" rej | sort -u >reasons &&
	test_must_fail grep "^c4_" reasons &&
	grep -q "^cwt_" reasons
'

test_expect_success JQ 'the statute list: full-width punctuation and every item kept' '
	llm-clean -q --recipe "$R" $G/statute.jsonl >out &&
	jq -r .text $G/statute.jsonl >expect && jq -r .text out >got && test_cmp expect got &&
	llm-clean -q --filters c4 --set c4_min_sentences=0 $G/statute.jsonl >web &&
	jq -r .text web | grep -E "^（(一|二|三|四|五)）" >items &&
	test_line_count = 8 items &&
	grep -q "^（五）死刑。$" items && grep -q "^（一）管制；$" items
'

test_expect_success JQ 'punctuation folding is an explicit step' '
	llm-clean -q --filters none --normalize default,width-punct $G/statute.jsonl >out &&
	jq -r .text out | grep -q "^(一)管制;$" &&
	llm-clean -q --filters none $G/statute.jsonl >out &&
	jq -r .text out | grep -q "^（一）管制；$"
'

test_expect_success JQ 'without a lang field the script detector picks the section: zh-Hant' '
	cat >r3 <<-\EOF &&
	[lang zh-Hant]
	filters = none
	[lang zh]
	filters = length
	min_chars = 1000
	EOF
	printf "{\"id\":\"t\",\"text\":\"這是一個關於臺灣歷史的說明，我們會學習很多東西。\"}\n{\"id\":\"s\",\"text\":\"这是一个关于历史的说明，我们会学习很多东西。\"}\n" >in &&
	llm-clean -q --recipe r3 --rejects rej in >out &&
	jq -r .id out >kept && echo t >expect && test_cmp expect kept &&
	llm-clean -q --filters none --detect-lang in >out &&
	jq -r .lang out | tr "\n" " " >langs && printf "zh-Hant zh " >expect && test_cmp expect langs
'

test_expect_success JQ,ZHDICT 'Chinese words come from the segmenter, or are characters with segment = no' '
	printf "{\"id\":\"x\",\"lang\":\"zh\",\"text\":\"%s\"}\n" \
		"中华人民共和国是工人阶级领导的、以工农联盟为基础的人民民主专政的社会主义国家。社会主义制度是中华人民共和国的根本制度。中国共产党领导是中国特色社会主义最本质的特征。禁止任何组织或者个人破坏社会主义制度。" >in &&
	llm-clean -q --filters gopher-quality --rejects rej in >out &&
	test_line_count = 0 out &&
	jq -e ".reject_reason == \"gopher_short_doc\" and .reject_value == 40" rej &&
	printf "[lang zh]\nsegment = no\n" >noseg &&
	llm-clean -q --recipe noseg --filters gopher-quality in >out &&
	test_line_count = 1 out &&
	llm-clean --recipe noseg --explain >ex &&
	block "domain *, lang zh:" | grep -q "segment = no  # \[lang zh\]"
'

test_expect_success 'a dictionary that cannot be read: one warning, Chinese words are characters' '
	LLM_ZHSEG_DICT=/nonexistent/dict.txt llm-clean --filters gopher-quality in >out 2>err &&
	test_line_count = 1 out &&
	test $(grep -c "Chinese words are single characters" err) = 1
'

test_expect_success 'the man page lists every filter step, reason and threshold of --list-filters' '
	llm-clean --list-filters >list &&
	{ awk "/^[a-z]/ { print \$1 }" list;
	  sed -n "s/^  reasons: //p" list | tr " " "\n";
	  sed -n "s/^  counts lines: //p" list;
	  sed -n "s/^  \([a-z_0-9]*\) = .*/\1/p" list; } | sort -u >names &&
	test $(wc -l <names) -gt 80 &&
	while read -r n; do
		grep -q -- "$n" "$TOP/man/man1/llm-clean.1" || { echo "not in llm-clean(1): $n"; exit 1; }
	done <names
'

# The reasons are written in two places: the rules in quality.c give them, the step table in
# filter.c lists them (--list-filters, the statistics, the man page). Every literal a rule
# passes to fail(), and every entry of its n-gram reason tables, must be listed, and nothing
# listed that no rule gives.
test_expect_success 'every reason a rule in quality.c gives is listed by --list-filters, and only those' '
	llm-clean --list-filters >list &&
	sed -n "s/^  reasons: //p" list | tr " " "\n" | sort -u >listed &&
	Q="$TOP/lib/text/quality.c" &&
	{ grep -o "fail(v, \"[a-z0-9_]*\"" "$Q" | sed "s/^fail(v, \"//; s/\"\$//" &&
	  sed -n "/static const char \*const names\[[0-9]*\] = {/,/}/p" "$Q" |
		grep -o "\"[a-z0-9_]*\"" | tr -d "\""; } | sort -u >given &&
	test $(wc -l <given) -ge 40 &&
	test_cmp given listed
'

# A threshold a section sets to the built-in value of its language is a second copy that
# nothing keeps equal: the shipped [lang zh] says only what differs from the Mandarin column.
python3 -c "import yaml" 2>/dev/null && test_set_prereq PYYAML
test_expect_success PYYAML 'lib/text/fineweb2.h is what scripts/fineweb2-langs.py writes from the shipped configs' '
	python3 "$TOP/scripts/fineweb2-langs.py" >fw2.h &&
	test_cmp "$TOP/lib/text/fineweb2.h" fw2.h &&
	ls "$TOP"/lib/text/fineweb2/*.yml | wc -l >n && test $(cat n) -ge 15
'

test_expect_success 'each language gets its FineWeb-2 settings; others are lang_not_configured unless a recipe names them' '
	t="Im Jahr 1900 wurde die Stadt von den Bauern mit einer Mauer umgeben und der Markt war voll." &&
	for i in 1 2 3 4 5 6; do printf "%s " "$t"; done >de.txt &&
	for l in de deu_Latn en sv; do
		printf "{\"id\":\"%s\",\"lang\":\"%s\",\"text\":\"%s\"}\n" "$l" "$l" "$(cat de.txt)"
	done >langs.jsonl &&
	llm-clean -q --filters gopher-quality --rejects rej.jsonl langs.jsonl >out.jsonl &&
	jq -r .id out.jsonl >kept && printf "de\ndeu_Latn\n" >expect && test_cmp expect kept &&
	jq -r "[.id, .reject_reason] | @tsv" rej.jsonl >reasons &&
	printf "en\tgopher_few_stop_words\nsv\tlang_not_configured\n" >expect && test_cmp expect reasons &&
	llm-clean -q --filters gopher-quality --set reject_unconfigured_lang=no --rejects rej2.jsonl \
		langs.jsonl >/dev/null &&
	jq -r "[.id, .reject_reason] | @tsv" rej2.jsonl >reasons &&
	printf "en\tgopher_few_stop_words\nsv\tgopher_few_stop_words\n" >expect && test_cmp expect reasons &&
	printf "[default]\nfilters = gopher-quality\n[lang sv]\nmin_stop_words = 0\n" >sv.recipe &&
	llm-clean -q --recipe sv.recipe langs.jsonl | jq -r .id >kept &&
	printf "de\ndeu_Latn\nsv\n" >expect && test_cmp expect kept &&
	llm-clean --recipe sv.recipe --explain --lang sv 2>&1 | grep -q "lang sv"
'

test_expect_success 'the shipped [lang zh] restates no built-in Mandarin default' '
	llm-clean --list-filters >list &&
	# "name = en (ar 0.304, zh 0.287, ...)" or "name = en (FineWeb-2 languages: v)"
	awk "/^  [a-z_0-9]+ = / {
		v = \$3
		if (match(\$0, /FineWeb-2 languages: [^)]*/)) v = substr(\$0, RSTART + 21, RLENGTH - 21)
		else if (match(\$0, /[(,] zh [^,)]*/)) v = substr(\$0, RSTART + 5, RLENGTH - 5)
		print \$1, v
	}" list >zh &&
	grep -q "^dup_line_frac 0.287\$" zh && grep -q "^dup_para_frac 0\$" zh &&
	test $(wc -l <zh) -gt 40 &&
	sed -n "/^\[lang zh\]/,/^\[/p" "$R" | sed -n "s/^\([a-z_0-9]*\) *= *\([^ #]*\).*/\1 \2/p" >set &&
	test -s set &&
	while read -r k v; do
		d=$(sed -n "s/^$k //p" zh) &&
		{ test -z "$d" || test "$d" != "$v" || { echo "$k = $v is the built-in value"; exit 1; }; }
	done <set
'

test_done
