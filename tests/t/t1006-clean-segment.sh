#!/bin/sh
test_description='llm-clean --segment: the kept text as words (jieba'"'"'s segmentation)'
. "$(dirname "$0")/../lib.sh"

# ZHSEG: jq, and Debian's jieba dictionary (python3-jieba, which make deps installs)
unset LLM_ZHSEG_DICT LLMKIT_DATA
command -v jq >/dev/null 2>&1 && test -r /usr/lib/python3/dist-packages/jieba/dict.txt &&
	test_set_prereq ZHSEG

test_expect_success ZHSEG 'words as jieba.lcut gives them, lines kept, spaces dropped' '
	printf "{\"id\": 1, \"text\": \"他来到了网易杭研大厦，iPhone 15售价999美元。\\\\n  第二行\\\\t结束\"}\n" >in &&
	llm-clean -q --filters none --normalize none --segment --stats st.json in >out &&
	jq -r .words out >got &&
	printf "他 来到 了 网易 杭研 大厦 ， iPhone 15 售价 999 美元 。\n第二行 结束\n" >expect &&
	test_cmp expect got &&
	jq -e ".counters.words == 15" st.json >/dev/null &&
	jq -r .text out >text && jq -r .text in >text.in && test_cmp text.in text
'

test_expect_success ZHSEG '--segment=FIELD names the field; naming the text field replaces it' '
	llm-clean -q --filters none --normalize none --segment=zh_words in >out &&
	jq -e "has(\"zh_words\") and (has(\"words\") | not)" out >/dev/null &&
	llm-clean -q --filters none --normalize none --segment=text in >out &&
	jq -r .text out | head -n 1 >got &&
	echo "他 来到 了 网易 杭研 大厦 ， iPhone 15 售价 999 美元 。" >expect && test_cmp expect got
'

test_expect_success ZHSEG 'rejected records get no words; in = out + rejected; threads agree' '
	llm-clean -q --segment --stats st.json --rejects rej $SAMPLES/corpus/news.jsonl >out &&
	jq -e ".records_in == .records_out + .records_rejected" st.json >/dev/null &&
	jq -s -e "all(has(\"words\"))" out >/dev/null &&
	jq -s -e "all(has(\"words\") | not)" rej >/dev/null &&
	llm-clean -q --segment --threads 3 --batch 64k $SAMPLES/corpus/news.jsonl >out3 &&
	test_cmp out out3
'

test_expect_success ZHSEG '$LLM_ZHSEG_DICT chooses the dictionary' '
	printf "AB 1\nA 1\nB 1\nBC 1\nC 1\n" >dict.txt &&
	echo "{\"text\": \"ABCABC CBA\"}" >abc &&
	LLM_ZHSEG_DICT=$TRASH/dict.txt llm-clean -q --filters none --segment abc >out &&
	test "$(jq -r .words out)" = "AB C AB C CBA"
'

test_expect_success '--segment with no dictionary: exit 1, and what to do' '
	echo "{\"text\": \"中文\"}" >zh &&
	test_must_fail --code=1 env LLM_ZHSEG_DICT=/nonexistent/dict.txt llm-clean --segment zh 2>err &&
	test_grep "/nonexistent/dict.txt" err &&
	printf "中国 x\n" >bad.txt &&
	test_must_fail --code=1 env LLM_ZHSEG_DICT=$TRASH/bad.txt llm-clean --segment zh 2>err &&
	test_grep "bad.txt:1: expected" err
'

test_expect_success 'an empty --segment field name is a usage error' '
	test_must_fail --code=2 llm-clean --segment= zh 2>err &&
	test_grep "segment" err
'

test_done
