#!/bin/sh
test_description='llm-dedup --substring: repeated spans leave, the first occurrence stays'
. "$(dirname "$0")/../lib.sh"

C=$SAMPLES/corpus
P="This paragraph is the boilerplate that every page of the site carries at its end, word for word, a licence notice."

# The repeat is the longest common span: ". " and the paragraph, in both pages.
test_expect_success 'a span seen before leaves the later document, the first keeps it' '
	printf "%s\n" \
		"{\"id\": \"1\", \"text\": \"First page. $P\"}" \
		"{\"id\": \"2\", \"text\": \"Second page, other words. $P Its own end.\"}" \
		"{\"id\": \"3\", \"text\": \"$P\"}" \
		"{\"id\": \"4\", \"text\": \"Short and unique.\"}" >pages &&
	llm-dedup -q --substring --min-length 50 --rejects rej --stats st pages >out &&
	cat >expect <<-EOF &&
	{"id": "1", "text": "First page. $P"}
	{"id": "2", "text": "Second page, other words Its own end."}
	{"id": "4", "text": "Short and unique."}
	EOF
	test_cmp expect out &&
	test_grep "\"id\": \"3\".*\"reject_reason\": \"substring_dup\"" rej &&
	jq -e ".records_in == .records_out + .records_rejected and .dedup.removed_bytes > 0" st
'

test_expect_success '--annotate lists the spans and keeps every document' '
	llm-dedup -q --substring --min-length 50 --annotate pages >out &&
	test_line_count = 4 out &&
	sed -n 2p out | jq -c .dup_spans >spans && echo "[[24,140]]" >expect && test_cmp expect spans &&
	sed -n 1p out | jq -e "has(\"dup_spans\") | not"
'

test_expect_success 'the samples: records in = out + rejected, UTF-8 stays valid' '
	cat $C/web.jsonl $C/books.jsonl $C/wiki.jsonl >in &&
	llm-dedup -q --substring --rejects rej --stats st in >out &&
	test $(( $(wc -l <out) + $(wc -l <rej) )) = $(wc -l <in) &&
	jq -e ".dedup.removed_bytes > 0" st >/dev/null &&
	jq -r .text out >/dev/null
'

test_expect_success '--memory: many suffix array shards give the same output' '
	llm-dedup -q --substring --memory 1M --stats st2 in >out2 &&
	test_cmp out out2 &&
	jq -e ".dedup.shards > 2" st2 >/dev/null &&
	jq -e ".dedup.shards == 1" st >/dev/null
'

# 60 MB of address space holds the 12 MB of text but not one shard's suffix array of all of
# it (4 bytes per byte): the default budget must come from the limit and spill to shards.
test_expect_success 'the default --memory keeps within ulimit -v and gives the same output' '
	(ulimit -v 60000 && llm-dedup -q --substring --stats st5 in >out5) &&
	test_cmp out out5 &&
	jq -e ".dedup.shards > 1 and .dedup.memory_bytes < 60000 * 1024" st5 >/dev/null
'

test_expect_success 'a longer --min-length removes less' '
	llm-dedup -q --substring --min-length 400 --stats st3 in >out3 &&
	a=$(jq .dedup.removed_bytes st) && b=$(jq .dedup.removed_bytes st3) && test "$b" -lt "$a"
'

test_expect_success 'standard input works like a file' '
	llm-dedup -q --substring <in >out4 && test_cmp out out4
'

test_expect_success 'usage errors' '
	test_must_fail --code=2 llm-dedup --substring --index idx in &&
	test_must_fail --code=2 llm-dedup --substring --min-length 0 in &&
	test_must_fail --code=2 llm-dedup sign --substring -o x.sig in
'

test_done
