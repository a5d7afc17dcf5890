#!/bin/sh
test_description='llm-dedup: exact, MinHash-LSH, SimHash and line dedup; golden cases'
. "$(dirname "$0")/../lib.sh"

C=$SAMPLES/corpus
G=$TESTDATA/dedup

# Survivors of data-juicer's own unit tests, with the parameters those tests use
# (tests/data/dedup/NOTICE.md): 256 permutations at Jaccard 0.7, window 5; SimHash
# window 6, distance 4, 6 blocks; punctuation removed and lower-cased (our default).
test_expect_success 'data-juicer minhash golden: English' '
	llm-dedup -q --num-perm 256 --threshold 0.7 --units word $G/minhash_english.input.jsonl >out &&
	test_cmp $G/minhash_english.expected.jsonl out
'

test_expect_success 'data-juicer minhash golden: Chinese, characters forced and auto' '
	llm-dedup -q --num-perm 256 --threshold 0.7 --units char $G/minhash_chinese.input.jsonl >out &&
	test_cmp $G/minhash_chinese.expected.jsonl out &&
	llm-dedup -q --num-perm 256 --threshold 0.7 $G/minhash_chinese.input.jsonl >out2 &&
	test_cmp $G/minhash_chinese.expected.jsonl out2
'

test_expect_success 'data-juicer simhash golden: English and Chinese' '
	llm-dedup -q --simhash --ngram 6 --hamming 4 --blocks 6 --units word \
		$G/simhash_english.input.jsonl >out &&
	test_cmp $G/simhash_english.expected.jsonl out &&
	llm-dedup -q --simhash --ngram 6 --hamming 4 --blocks 6 --units char \
		$G/simhash_chinese.input.jsonl >out2 &&
	test_cmp $G/simhash_chinese.expected.jsonl out2
'

test_expect_success 'simhash punctuation case: the near duplicate goes, short sentences stay' '
	llm-dedup -q --simhash --ngram 6 --hamming 4 --blocks 6 \
		$G/simhash_punctuation.input.jsonl >out &&
	test_cmp $G/simhash_punctuation.llmkit.jsonl out &&
	test_line_count = 4 out
'

test_expect_success 'threshold choice is datasketch'"'"'s and is printed' '
	llm-dedup --num-perm 256 --threshold 0.7 </dev/null >out 2>err &&
	test_grep "256 permutations, 25 bands x 10 rows" err &&
	llm-dedup --num-perm 128 --threshold 0.5 </dev/null 2>err2 &&
	test_grep "128 permutations, 25 bands x 5 rows" err2 &&
	llm-dedup --preset datatrove </dev/null 2>err3 &&
	test_grep "112 permutations, 14 bands x 8 rows, 64-bit" err3 &&
	llm-dedup --preset nemo </dev/null 2>err4 &&
	test_grep "260 permutations, 20 bands x 13 rows.*24-char shingles" err4
'

cat >docs.jsonl <<'EOF'
{"id": "a", "text": "The quick brown fox jumps over the lazy dog near the river bank today."}
{"id": "b", "text": "Completely different words about the weather in spring and autumn."}
{"id": "c", "text": "the quick brown fox jumps over the lazy dog, near the river bank today!"}
{"id": "d", "text": "THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG NEAR THE RIVER BANK TODAY"}
{"id": "e", "text": "Completely  different words about the weather in spring and autumn."}
EOF

test_expect_success 'exact: normalisation levels decide what is equal' '
	llm-dedup -q --exact --normalize none --rejects r0 docs.jsonl >out0 &&
	test_line_count = 5 out0 &&
	llm-dedup -q --exact --normalize space --rejects r1 docs.jsonl >out1 &&
	test_line_count = 4 out1 && test_grep "\"id\": \"e\".*\"dup_of\": \"b\"" r1 &&
	llm-dedup -q --exact --rejects r2 docs.jsonl >out2 &&
	test_line_count = 2 out2 &&
	test_grep "\"id\": \"c\".*\"reject_reason\": \"duplicate\", \"dup_of\": \"a\"" r2 &&
	test_grep "\"id\": \"d\".*\"dup_of\": \"a\"" r2
'

test_expect_success 'annotate keeps everything and names clusters' '
	llm-dedup -q --exact --annotate docs.jsonl >out &&
	test_line_count = 5 out &&
	test_grep "\"id\": \"a\".*\"dup_cluster\": \"a\"}" out &&
	test_grep "\"id\": \"d\".*\"dup_cluster\": \"a\", \"dup_of\": \"a\"}" out &&
	! grep "\"id\": \"b\".*dup_of" out
'

test_expect_success 'without an id, dup_of names file and line' '
	printf "{\"text\": \"same\"}\n{\"text\": \"other\"}\n{\"text\": \"same\"}\n" >noid &&
	llm-dedup -q --exact --rejects rej noid >out &&
	test_grep "\"dup_of\": \"noid:1\"" rej
'

test_expect_success 'samples: records in = out + rejected, for every method' '
	cat $C/web.jsonl $C/news.jsonl $C/qa.jsonl >in &&
	n=$(wc -l <in) &&
	for m in --exact --minhash --simhash "--minhash --verify" --lines; do
		llm-dedup -q $m --rejects rej in >out || return 1
		o=$(wc -l <out) && r=$(wc -l <rej) &&
		test $((o + r)) = $n || { echo "$m: $o + $r != $n"; return 1; }
		test $r -gt 0 || { echo "$m removed nothing"; return 1; }
	done
'

test_expect_success 'near duplicates go, exact duplicates are a subset, verify removes fewer' '
	llm-dedup -q --exact in >ex && llm-dedup -q in >mh && llm-dedup -q --verify in >vf &&
	test $(wc -l <mh) -le $(wc -l <ex) && test $(wc -l <vf) -ge $(wc -l <mh) &&
	llm-dedup -q mh >again && test_cmp mh again
'

test_expect_success 'every dup_of names a survivor that comes earlier' '
	llm-dedup -q --rejects rej in >out &&
	sed -n "s/.*\"dup_of\": \"\\([^\"]*\\)\".*/\\1/p" rej | sort -u >named &&
	sed -n "s/^{\"id\": \"\\([^\"]*\\)\".*/\\1/p" out | sort -u >kept &&
	test -s named && comm -23 named kept >missing && test_must_fail test -s missing
'

test_expect_success 'standard input gives the same result as a file' '
	llm-dedup -q --rejects r1 in >o1 && llm-dedup -q --rejects r2 <in >o2 &&
	test_cmp o1 o2 && test_cmp r1 r2
'

test_expect_success 'signing on several threads changes nothing' '
	for m in --minhash --exact --simhash --verify; do
		llm-dedup -q $m --rejects r1 in >o1 && llm-dedup -q $m --threads 3 --rejects r3 in >o3 &&
		test_cmp o1 o3 && test_cmp r1 r3 || return 1
	done &&
	llm-dedup sign -q -o s1.sig in && llm-dedup sign -q --threads 2 -o s2.sig in && cmp s1.sig s2.sig
'

test_expect_success 'same input, same flags: same bytes' '
	llm-dedup -q --simhash in >s1 && llm-dedup -q --simhash in >s2 && test_cmp s1 s2
'

test_expect_success 'lines: boilerplate lines leave, the rest of the page stays' '
	printf "%s\n" \
		"{\"id\": \"1\", \"text\": \"Menu Home About\\nFirst article body here.\\nCopyright 2024 Example\"}" \
		"{\"id\": \"2\", \"text\": \"Menu Home About\\nSecond article, other words.\\nCopyright 2024 Example\"}" \
		"{\"id\": \"3\", \"text\": \"Menu Home About\\nCopyright 2025 Example\"}" >pages &&
	llm-dedup -q --lines --rejects rej pages >out &&
	cat >expect <<-\EOF &&
	{"id": "1", "text": "First article body here."}
	{"id": "2", "text": "Second article, other words."}
	EOF
	test_cmp expect out &&
	test_grep "\"id\": \"3\".*\"reject_reason\": \"duplicate\"" rej &&
	llm-dedup -q --lines --line-max 3 pages >out3 && test_cmp pages out3
'

test_expect_success 'lines: past --memory a Bloom filter counts, states its rate, misses nothing' '
	cat $SAMPLES/corpus/web.jsonl $SAMPLES/corpus/news.jsonl >big &&
	llm-dedup -q --lines --stats s1 big >l1 &&
	llm-dedup --lines --memory 256K --stats s2 big >l2 2>err &&
	test_grep "Bloom filter of 262144 bytes.*false-positive rate at most" err &&
	grep -q "\"bloom_false_positive_rate\": 0}" s1 &&
	! grep -q "\"bloom_false_positive_rate\": 0}" s2 &&
	n1=$(sed -n "s/.*\"lines_dropped\": \([0-9]*\).*/\1/p" s1) &&
	n2=$(sed -n "s/.*\"lines_dropped\": \([0-9]*\).*/\1/p" s2) &&
	d=$(sed -n "s/.*\"distinct_lines\": \([0-9]*\).*/\1/p" s2) &&
	test "$n2" -ge "$n1" && test $(( (n2 - n1) * 100 )) -le "$d" &&
	llm-dedup --lines --memory 64K big >/dev/null 2>err &&
	test_grep "raise --memory" err
'

test_expect_success 'empty input, and a last line without newline' '
	llm-dedup -q </dev/null >out && test_must_fail test -s out &&
	printf "{\"text\": \"x y\"}\n{\"text\": \"x y\"}" >nonl &&
	llm-dedup -q --exact nonl >out2 && test_line_count = 1 out2
'

test_expect_success 'CRLF input reads like LF input' '
	sed "s/\$/\r/" docs.jsonl >crlf &&
	llm-dedup -q --exact crlf >o1 && llm-dedup -q --exact docs.jsonl >o2 && test_cmp o2 o1
'

test_expect_success 'bad JSON, invalid UTF-8, missing text and huge lines are rejected, not lost' '
	{ printf "{\"text\": \"ok\"}\n" && printf "{\"text\": \"bad \\377 byte\"}\n" &&
	  printf "not json\n" && printf "{\"title\": \"no text\"}\n" &&
	  printf "{\"text\": \"%s\"}\n" "$(printf "%0300d" 0)" ; } >mixed &&
	llm-dedup -q --max-line 200 --rejects rej mixed >out 2>err &&
	test_line_count = 1 out && test_line_count = 4 rej &&
	test_grep "\"reject_reason\": \"bad_json\"" rej && test_grep "\"no_text\"" rej &&
	test_grep "\"too_long\"" rej && test_grep "mixed:2: bad JSON" err &&
	test_must_fail llm-dedup -q --strict mixed >/dev/null
'

test_expect_success 'a line over --max-line on standard input is too long in both passes' '
	# Its head is all standard input keeps for the second pass (1024 bytes): with a
	# --max-line above that, the second pass must still reject it as too long, and with
	# its real length.
	{ printf "{\"text\": \"one two three\"}\n" &&
	  printf "{\"text\": \"%s\"}\n" "$(printf "%05000d" 0)" &&
	  printf "{\"text\": \"four five six\"}\n" ; } >long &&
	for m in --minhash --exact --lines --substring
	do
		llm-dedup -q $m --max-line 2000 --rejects rej <long >out 2>err &&
		test_line_count = 2 out && test_line_count = 1 rej &&
		test_grep "\"reject_reason\": \"too_long\"" rej &&
		test_grep "\"length\": 5012" rej || return 1
	done
'

test_expect_success NOT_ROOT 'an unreadable file fails with its name' '
	cp docs.jsonl locked && chmod 000 locked &&
	test_must_fail llm-dedup -q locked >out 2>err && test_grep "locked" err
'

test_expect_success 'bad flags and values exit 2' '
	test_must_fail --code=2 llm-dedup --no-such-flag </dev/null &&
	test_must_fail --code=2 llm-dedup --bands 20 --rows 20 </dev/null &&
	test_must_fail --code=2 llm-dedup --threshold 0.7 --bands 4 </dev/null &&
	test_must_fail --code=2 llm-dedup --simhash --hamming 6 --blocks 6 </dev/null &&
	test_must_fail --code=2 llm-dedup --preset nope </dev/null &&
	test_must_fail --code=2 llm-dedup --verify --exact </dev/null &&
	test_must_fail --code=2 llm-dedup --lines --annotate </dev/null
'

test_expect_success 'a full disk is an error' '
	{ test_must_fail llm-dedup -q --exact docs.jsonl -o /dev/full 2>err ||
	  test_must_fail llm-dedup -q --exact docs.jsonl >/dev/full 2>err; } &&
	test -s err
'

test_expect_success '--help usage lines are in the man page SYNOPSIS' '
	llm-dedup --help >help &&
	grep "^ *llm-dedup\|^usage: llm-dedup" help | sed "s/^usage: //; s/^ *//" >uses &&
	test_line_count = 5 uses &&
	while read -r prog sub rest; do
		case $sub in sign|cluster|apply) grep "^\\.Nm $sub\\|^\\.Cm $sub" $TOP/man/man1/llm-dedup.1 >/dev/null || return 1 ;; esac
	done <uses
'

test_expect_success 'stats report method, memory per document and the invariant' '
	llm-dedup -q --stats st.json in >/dev/null &&
	test_grep "\"memory_bytes_per_document\"" st.json &&
	test_grep "14 bands x 8 rows" st.json
'

test_done
