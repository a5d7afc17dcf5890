#!/bin/sh
test_description='llm-tokenize: reference ids, token stream, decode, threads, rejects, stats'
. "$(dirname "$0")/../lib.sh"

D=$TESTDATA/tokenize
CL=$D/r50k_base.tiktoken.zst
C=$SAMPLES/corpus

# The token stream header: magic, version 1, width, vocab size (little-endian u32s).
header_of() { od -A n -t x1 -N 20 "$1" | tr -d ' \n'; }

for enc in r50k_base cl100k_base o200k_base; do
	test_expect_success JQ "$enc: the tool gives tiktoken's ids for the 61 reference strings" "
		jq -c '{text}' $D/vectors_$enc.jsonl >in.jsonl &&
		jq -c .ids $D/vectors_$enc.jsonl >want &&
		llm-tokenize -q -t $D/$enc.tiktoken.zst --special allow --no-eos -f jsonl in.jsonl |
			jq -c .tokens >got &&
		test_cmp want got &&
		jq -c .ids_ordinary $D/vectors_$enc.jsonl >want2 &&
		llm-tokenize -q -t $D/$enc.tiktoken.zst --no-eos -f jsonl in.jsonl | jq -c .tokens >got2 &&
		test_cmp want2 got2
	"
done

test_expect_success JQ 'tokenizer.json and vocab.json + merges.txt give the same ids as r50k' '
	jq -c "{text}" $D/vectors_r50k_base.jsonl >in.jsonl &&
	llm-tokenize -q -t $D/r50k_base.tiktoken.zst --special allow -f jsonl in.jsonl >a &&
	llm-tokenize -q -t $D/hf_gpt2/tokenizer.json.zst --special allow -f jsonl in.jsonl >b &&
	llm-tokenize -q -t $D/hf_gpt2/vocab.json.zst --merges $D/hf_gpt2/merges.txt.zst \
		--special allow -f jsonl in.jsonl >c &&
	test_cmp a b && test_cmp a c
'

test_expect_success 'setup: 300 documents of several domains' '
	{ head -n 100 $C/wiki.jsonl; head -n 100 $C/qa.jsonl; head -n 100 $C/books.jsonl; } >docs.jsonl
'

test_expect_success JQ 'token stream: header, records, decode gives the documents back' '
	llm-tokenize -q -t $CL docs.jsonl -o docs.tok &&
	test "$(header_of docs.tok)" = "4c4c4d544f4b3031010000000200000051c40000" &&
	llm-tokenize decode -q -t $CL docs.tok >back.jsonl &&
	jq -c "{id, domain, text}" docs.jsonl >want &&
	jq -c "{id, domain, text}" back.jsonl >got &&
	test_cmp want got
'

test_expect_success JQ 'JSONL output ends every document with <|endoftext|> and decodes back' '
	llm-tokenize -q -t $CL -f jsonl docs.jsonl >docs.tokens.jsonl &&
	test "$(jq -c ".tokens[-1]" docs.tokens.jsonl | sort -u)" = 50256 &&
	llm-tokenize decode -q -t $CL docs.tokens.jsonl >back2.jsonl &&
	jq -c "{id, text}" docs.jsonl >want && jq -c "{id, text}" back2.jsonl >got && test_cmp want got &&
	llm-tokenize decode -q -t $CL <docs.tokens.jsonl >back3.jsonl && test_cmp back2.jsonl back3.jsonl
'

test_expect_success 'decode reads a token stream from standard input' '
	llm-tokenize decode -q -t $CL <docs.tok >back4.jsonl && test_cmp back.jsonl back4.jsonl
'

test_expect_success '--threads 3 writes exactly what one thread writes' '
	cat docs.jsonl docs.jsonl docs.jsonl >many.jsonl &&
	llm-tokenize -q -t $CL many.jsonl -o one.tok &&
	llm-tokenize -q -t $CL --threads 3 many.jsonl -o three.tok &&
	cmp one.tok three.tok
'

# Many batches in flight (1024 lines each, a ring of four per thread), several files, and
# bad records among them: every thread count writes the same stream, rejects and warnings,
# each warning naming the file and line of its record.
test_expect_success '--threads 2, 3 and 8 on many batches of several files: same output, rejects, warnings' '
	cat $C/qa.jsonl $C/news.jsonl >f1.jsonl &&
	{ head -n 1000 $C/wiki.jsonl; echo "{\"text\": 1}"; head -n 10 $C/news.jsonl; } >f2.jsonl &&
	{ echo "not json"; head -n 300 $C/web.jsonl; echo "{\"id\": \"x\"}"; } >f3.jsonl &&
	llm-tokenize -t $CL --rejects r1.jsonl f1.jsonl f2.jsonl f3.jsonl -o s1.tok 2>e1 &&
	grep "f2.jsonl:1001:" e1 && grep "f3.jsonl:1:" e1 && grep "f3.jsonl:302:" e1 &&
	test "$(wc -l <r1.jsonl)" = 3 &&
	for t in 2 3 8; do
		llm-tokenize -t $CL --threads $t --rejects r$t.jsonl f1.jsonl f2.jsonl f3.jsonl \
			-o s$t.tok 2>e$t &&
		cmp s1.tok s$t.tok && test_cmp r1.jsonl r$t.jsonl &&
		grep -v "^llm-tokenize: [0-9]" e1 >w1 && grep -v "^llm-tokenize: [0-9]" e$t >w$t &&
		test_cmp w1 w$t || return 1
	done
'

test_expect_success JQ '--stats: CPU seconds of loading, of this thread and of each worker' '
	llm-tokenize -q -t $CL --threads 3 --stats t3.json docs.jsonl -o /dev/null &&
	jq -e ".threads.worker_cpu_seconds | length == 3" t3.json &&
	jq -e ".threads.load_cpu_seconds > 0 and .threads.main_cpu_seconds >= 0" t3.json &&
	jq -e ".threads.load_pool_cpu_seconds > 0" t3.json &&
	jq -e "[.threads.worker_cpu_seconds[] | select(. > 0)] | length >= 1" t3.json &&
	llm-tokenize -q -t $CL --stats t1.json docs.jsonl -o /dev/null &&
	jq -e ".threads.worker_cpu_seconds | length == 1 and .[0] > 0" t1.json &&
	jq -e ".threads.load_pool_cpu_seconds == 0" t1.json
'

test_expect_success 'empty input: a header and no record; JSONL: nothing' '
	: >empty &&
	llm-tokenize -q -t $CL empty -o e.tok && test "$(wc -c <e.tok)" = 32 &&
	llm-tokenize -q -t $CL -f jsonl <empty >e.jsonl && test_must_fail test -s e.jsonl
'

test_expect_success 'no final newline and CRLF line ends read the same' '
	printf "{\"text\": \"a b\"}\r\n{\"text\": \"c\"}" >crlf.jsonl &&
	printf "{\"text\": \"a b\"}\n{\"text\": \"c\"}\n" >lf.jsonl &&
	llm-tokenize -q -t $CL -f jsonl crlf.jsonl >x && llm-tokenize -q -t $CL -f jsonl lf.jsonl >y &&
	test_cmp x y && test_line_count = 2 x
'

test_expect_success JQ 'bad records are rejected with a reason; in = out + rejected' '
	{ head -n 5 docs.jsonl; echo "not json"; printf "{\"text\": \"\\377\"}\n";
	  echo "{\"id\": 1}"; echo "{\"text\": 5}"; echo "{\"text\": \"x <|endoftext|> y\"}"; } >mixed.jsonl &&
	llm-tokenize -q -t $CL --special error --rejects rej.jsonl --stats st.json mixed.jsonl -o m.tok &&
	test "$(jq .records_in st.json)" = 10 && test "$(jq .records_out st.json)" = 5 &&
	test "$(jq .records_rejected st.json)" = 5 &&
	jq -r .reject_reason rej.jsonl | sort >reasons &&
	printf "bad_json\nbad_json\nno_text\nno_text\nspecial_token\n" >want && test_cmp want reasons
'

test_expect_success '--strict makes a bad record fatal (exit 1)' '
	test_must_fail llm-tokenize -q -t $CL --strict mixed.jsonl -o s.tok 2>err &&
	test_grep "mixed.jsonl:6:" err && test_must_fail test -e s.tok
'

test_expect_success '--strict stops without breaking the count of records' '
	test_must_fail llm-tokenize -t $CL --strict mixed.jsonl -o s.tok 2>err &&
	test_must_fail test_grep "internal error" err
'

# (a+)+b backtracks exponentially on a run of a's without a b: 40 of them are far beyond
# PCRE2's match limit (10 million), and the alternatives split every other text.
BACKTRACK='(a+)+b|\S+|\s+'
test_expect_success JQ 'a document beyond the pre-tokenizer match limit is rejected; the run goes on' '
	{ head -n 3 docs.jsonl; printf "{\"id\": \"bt\", \"text\": \"x %040d y\"}\n" 0 | tr 0 a;
	  head -n 5 docs.jsonl | tail -n 2; } >bt.jsonl &&
	grep -v "\"bt\"" bt.jsonl >good.jsonl &&
	for t in 1 2; do
		llm-tokenize -t $CL --pattern "$BACKTRACK" --threads $t --rejects btrej$t.jsonl \
			--stats btst.json -f jsonl bt.jsonl >bt$t.out 2>bterr || return 1
		test "$(jq .records_in btst.json)" = 6 && test "$(jq .records_out btst.json)" = 5 &&
		test "$(jq .records_rejected btst.json)" = 1 || return 1
	done &&
	test_grep "bt.jsonl:4: pre-tokenizer: match limit exceeded" bterr &&
	test "$(jq -r "[.id, .reject_reason] | join(\" \")" btrej1.jsonl)" = "bt pretokenizer_limit" &&
	test_cmp btrej1.jsonl btrej2.jsonl && test_cmp bt1.out bt2.out &&
	llm-tokenize -q -t $CL --pattern "$BACKTRACK" -f jsonl good.jsonl >want &&
	test_cmp want bt1.out
'

test_expect_success '--strict stops at a document beyond the match limit (exit 1)' '
	test_must_fail llm-tokenize -q -t $CL --pattern "$BACKTRACK" --strict bt.jsonl -o bts.tok \
		2>err &&
	test_grep "bt.jsonl:4: pre-tokenizer: match limit exceeded" err &&
	test_must_fail test -e bts.tok
'

test_expect_success JQ 'decode: a token outside the vocabulary rejects its record, the rest decode' '
	printf "%s\n" "{\"id\":\"a\",\"tokens\":[31373]}" "{\"id\":\"b\",\"tokens\":[31373,99999999]}" \
		"{\"id\":\"c\",\"tokens\":[995]}" >oov.jsonl &&
	llm-tokenize decode -t $CL --rejects oovrej.jsonl oov.jsonl >oovout 2>err &&
	test "$(jq -r .id oovout | tr "\n" " ")" = "a c " &&
	test "$(jq -r "[.id, .reject_reason] | join(\" \")" oovrej.jsonl)" = "b bad_token" &&
	test_grep "oov.jsonl:2: token 99999999 is not in the vocabulary" err &&
	test_must_fail test_grep "internal error" err &&
	test_must_fail llm-tokenize decode -q -t $CL --strict oov.jsonl >/dev/null 2>err &&
	test_grep "oov.jsonl:2:" err && test_must_fail test_grep "internal error" err
'

test_expect_success JQ 'decode: a token stream record with a foreign id is rejected with its tokens' '
	printf "%s\n" "{\"id\":\"a\",\"text\":\"hello\"}" "{\"id\":\"b\",\"text\":\"\u4e2d\u6587\u5b57\u7b26\"}" >o2.jsonl &&
	llm-tokenize -q -t $D/o200k_base.tiktoken.zst --no-eos o2.jsonl -o o2.tok &&
	llm-tokenize decode -q -t $CL --rejects o2rej.jsonl --stats o2st.json o2.tok >o2out &&
	test "$(jq -r .id o2out)" = a &&
	llm-tokenize -q -t $D/o200k_base.tiktoken.zst --no-eos -f jsonl o2.jsonl | tail -n 1 | jq -c .tokens >want &&
	jq -c .tokens o2rej.jsonl >got && test_cmp want got &&
	test "$(jq -r "[.id, .reject_reason] | join(\" \")" o2rej.jsonl)" = "b bad_token" &&
	test "$(jq .records_in o2st.json) $(jq .records_rejected o2st.json)" = "2 1"
'

test_expect_success JQ 'decode: a line over --max-line is rejected as too_long, in a file and on stdin' '
	{ head -n 1 oov.jsonl && printf "{\"id\":\"long\",\"tokens\":[%s995]}\n" "$(printf "31373,%.0s" $(seq 300))" &&
	  tail -n 1 oov.jsonl; } >dlong.jsonl &&
	llm-tokenize decode -t $CL --max-line 1K --rejects drej.jsonl dlong.jsonl >dout 2>err &&
	test "$(jq -r .id dout | tr "\n" " ")" = "a c " &&
	test "$(jq -r .reject_reason drej.jsonl)" = too_long &&
	test_grep "dlong.jsonl:2: line over --max-line" err &&
	llm-tokenize decode -q -t $CL --max-line 1K <dlong.jsonl >dout2 && test_cmp dout dout2 &&
	test_must_fail llm-tokenize decode -q -t $CL --strict --max-line 1K <dlong.jsonl >/dev/null 2>err &&
	test_grep "^llm-tokenize: <stdin>:2: line over --max-line$" err
'

test_expect_success 'a rank file with a 2 MB token loads in linear time' '
	python3 -c "
import base64
with open(\"long.tiktoken\", \"w\") as f:
    for i in range(256):
        f.write(base64.b64encode(bytes([i])).decode() + \" %d\\n\" % i)
    f.write(base64.b64encode(b\"ab\" * (1 << 20)).decode() + \" 256\\n\")
" &&
	echo "{\"text\": \"abab\"}" >ab.jsonl &&
	# Quadratic loading took minutes of CPU here; linear takes a fraction of a second.
	(ulimit -t 30 && llm-tokenize -q -t long.tiktoken --pattern gpt2 --no-eos -f jsonl ab.jsonl >ab.out) &&
	test_grep "\[97, 98, 97, 98\]" ab.out
'

test_expect_success 'a bad line of merges.txt is reported in merges.txt, not vocab.json' '
	zstd -q -d -c $D/hf_gpt2/vocab.json.zst >vocab.json &&
	printf "#version: 0.2\n\304\240 t\nh e x\n" >merges.txt &&
	test_must_fail llm-tokenize -t vocab.json --merges merges.txt docs.jsonl 2>err &&
	test_grep "merges.txt:3: expected" err &&
	printf "#version: 0.2\n\304\240 t\nzzzq e\n" >merges2.txt &&
	test_must_fail llm-tokenize -t vocab.json --merges merges2.txt docs.jsonl 2>err &&
	test_grep "^llm-tokenize: merges2.txt:3: merge 2 .zzzq e. is not in the vocabulary$" err
'

test_expect_success JQ '--special allow and ignore' '
	echo "{\"text\": \"x<|endoftext|>\"}" >sp.jsonl &&
	llm-tokenize -q -t $CL --special allow --no-eos -f jsonl sp.jsonl | jq -c .tokens >a &&
	echo "[87,50256]" >want && test_cmp want a &&
	llm-tokenize -q -t $CL --no-eos -f jsonl sp.jsonl | jq -c ".tokens | length" >b &&
	test "$(cat b)" -gt 2
'

test_expect_success JQ 'a line over --max-line is rejected as too_long' '
	{ head -n 2 docs.jsonl; head -n 1 $C/legal.jsonl; } >long.jsonl &&
	llm-tokenize -q -t $CL --max-line 64K --rejects rej2.jsonl long.jsonl -f jsonl >o &&
	test_line_count = 2 o && test "$(jq -r .reject_reason rej2.jsonl)" = too_long
'

test_expect_success JQ '--stats: per-domain tokens, quantiles and mergeable length sketches' '
	llm-tokenize -q -t $CL --stats st2.json docs.jsonl -o d.tok &&
	test "$(jq ".tokens.wiki.documents" st2.json)" = 100 &&
	jq -e ".tokens.qa.length.p50 <= .tokens.qa.length.p99 and .tokens.qa.length.p99 <= .tokens.qa.length.max" st2.json &&
	jq -e ".tokens.books.bytes_per_token > 1" st2.json &&
	test "$(jq ".length_sketches.wiki.count" st2.json)" = 100 &&
	test "$(jq ".length_sketches.wiki.type" st2.json)" = "\"ddsketch\""
'

test_expect_success 'unreadable input: exit 1 with the file named' '
	test_must_fail llm-tokenize -q -t $CL no-such-file.jsonl -o x.tok 2>err &&
	test_grep "no-such-file.jsonl" err
'

test_expect_success 'bad tokenizer, bad flag values: exit 1 and exit 2' '
	echo "garbage" >bad.tiktoken &&
	test_must_fail llm-tokenize -t bad.tiktoken -e cl100k docs.jsonl 2>err && test_grep "bad.tiktoken:1:" err &&
	test_must_fail --code=2 llm-tokenize -t $CL --special maybe docs.jsonl 2>err &&
	test_must_fail --code=2 llm-tokenize -t $CL --format csv docs.jsonl 2>err &&
	test_must_fail --code=2 llm-tokenize docs.jsonl 2>err &&
	test_must_fail --code=2 llm-tokenize --bogus 2>err &&
	test_must_fail llm-tokenize -t $CL --bos docs.jsonl 2>err && test_grep "beginning-of-text" err
'

test_expect_success 'output to a full disk: exit 1 with a message' '
	test_must_fail llm-tokenize -q -t $CL docs.jsonl -o /dev/full 2>err && test -s err
'

test_expect_success 'train: deterministic, loadable, decodes back' '
	llm-tokenize train -q --vocab-size 1000 --special "<|endoftext|>" --special "<|pad|>" \
		--pattern gpt2 -o tok1.json --tiktoken tok1.tiktoken docs.jsonl &&
	llm-tokenize train -q --vocab-size 1000 --special "<|endoftext|>" --special "<|pad|>" \
		--pattern gpt2 -o tok2.json docs.jsonl &&
	cmp tok1.json tok2.json &&
	llm-tokenize -q -t tok1.json docs.jsonl -o t.tok &&
	test "$(header_of t.tok)" = "4c4c4d544f4b30310100000002000000e8030000" &&
	llm-tokenize decode -q -t tok1.json t.tok | cut -c1-200 >a &&
	llm-tokenize decode -q -t tok1.json t.tok >back.jsonl &&
	jq -c "{text}" docs.jsonl >want && jq -c "{text}" back.jsonl >got && test_cmp want got &&
	llm-tokenize -q -t tok1.tiktoken -e gpt2 --no-eos -f jsonl docs.jsonl >viatk &&
	llm-tokenize -q -t tok1.json --no-eos -f jsonl docs.jsonl >viahf && test_cmp viahf viatk
'

test_expect_success 'train: no documents is an error, and no tokenizer is written' '
	test_must_fail llm-tokenize train --vocab-size 300 -o none.json empty 2>err &&
	test_grep "no documents to train on" err && test_must_fail test -e none.json &&
	echo "not json" >bad1.jsonl &&
	test_must_fail llm-tokenize train --vocab-size 300 -o none.json bad1.jsonl 2>err &&
	test_must_fail test -e none.json
'

test_expect_success 'train: fewer merges possible than asked is a warning' '
	head -n 3 docs.jsonl >three.jsonl &&
	llm-tokenize train --vocab-size 100000 -o few.json three.jsonl 2>err &&
	test_grep "tokens, not 100000: no more pairs are seen 2 times" err
'

test_expect_success 'train with a named pattern writes a Split pre-tokenizer; the default is o200k' '
	llm-tokenize train -q --vocab-size 600 --pattern cl100k -o tok3.json docs.jsonl &&
	llm-tokenize train -q --vocab-size 600 -o tokd.json docs.jsonl &&
	llm-tokenize train -q --vocab-size 600 --pattern o200k -o toko.json docs.jsonl &&
	cmp tokd.json toko.json &&
	grep -q "\"Split\"" tok3.json &&
	llm-tokenize -q -t tok3.json -f jsonl docs.jsonl >/dev/null
'

test_expect_success 'the EXAMPLES of the man page run' '
	zstd -q -d -c $D/cl100k_base.tiktoken.zst >cl100k_base.tiktoken &&
	zstd -q -d -c $D/hf_gpt2/tokenizer.json.zst >tokenizer.json &&
	llm-tokenize -q -t cl100k_base.tiktoken --threads 4 docs.jsonl -o docs.tok &&
	llm-tokenize -q -t tokenizer.json --no-eos -f jsonl docs.jsonl >ex2 && test_line_count = 300 ex2 &&
	llm-tokenize decode -q -t cl100k_base.tiktoken docs.tok >ex3 && test_line_count = 300 ex3 &&
	llm-tokenize train -q --vocab-size 32000 --special "<|endoftext|>" --special "<|pad|>" -o tok.json docs.jsonl &&
	grep -q "<|pad|>" tok.json
'

python3 -c 'import tokenizers' 2>/dev/null && test_set_prereq HF_TOKENIZERS
python3 -c 'import tiktoken' 2>/dev/null && test_set_prereq TIKTOKEN

test_expect_success HF_TOKENIZERS 'Hugging Face tokenizers loads the trained file and encodes identically' '
	llm-tokenize -q -t tok1.json --no-eos -f jsonl --meta id docs.jsonl >ours &&
	llm-tokenize -q -t tok3.json --no-eos -f jsonl --meta id docs.jsonl >ours3 &&
	python3 - <<-\EOF
	import json
	from tokenizers import Tokenizer
	for tok, ours in (("tok1.json", "ours"), ("tok3.json", "ours3")):
	    tk = Tokenizer.from_file(tok)
	    for a, b in zip(open("docs.jsonl"), open(ours)):
	        text = json.loads(a)["text"]
	        assert tk.encode(text, add_special_tokens=False).ids == json.loads(b)["tokens"], (tok, text[:80])
	EOF
'

test_expect_success TIKTOKEN,ZSTD 'tiktoken agrees on 300 sample documents (r50k, cl100k, o200k)' '
	for e in r50k_base cl100k_base o200k_base; do
		llm-tokenize -q -t $D/$e.tiktoken.zst --no-eos -f jsonl --meta id docs.jsonl >ours.$e &&
		zstd -q -d -c $D/$e.tiktoken.zst >$e.tiktoken &&
		python3 $TOP/bench/tokenize_peers.py check --ranks $e.tiktoken --encoding $e \
			--docs docs.jsonl --ours ours.$e || exit 1
	done
'

test_done
