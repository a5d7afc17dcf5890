#!/bin/sh
test_description='llm-cat: every input becomes the JSONL document stream'
. "$(dirname "$0")/../lib.sh"

C=$SAMPLES/corpus

test_expect_success 'JSONL passes through byte for byte' '
	llm-cat -q $C/news.jsonl >out &&
	test_cmp $C/news.jsonl out
'

test_expect_success 'several files and stdin are concatenated in order' '
	head -n 3 $C/wiki.jsonl >a && head -n 2 $C/qa.jsonl >b &&
	cat a b >expect &&
	llm-cat -q a - <b >out &&
	test_cmp expect out
'

test_expect_success ZSTD,GZIP 'compression is detected from content, not names' '
	head -n 50 $C/books.jsonl >plain &&
	zstd -q -c plain >z.data && gzip -c plain >g.data &&
	{ xz -c plain >x.data 2>/dev/null || rm -f x.data; } &&
	llm-cat -q z.data >out1 && test_cmp plain out1 &&
	llm-cat -q g.data >out2 && test_cmp plain out2 &&
	cat z.data | llm-cat -q >out3 && test_cmp plain out3 &&
	{ ! test -s x.data || { llm-cat -q x.data >out4 && test_cmp plain out4; }; }
'

test_expect_success ZSTD 'output named .zst is compressed' '
	head -n 20 $C/legal.jsonl >plain &&
	llm-cat -q plain -o out.jsonl.zst &&
	zstd -q -d -c out.jsonl.zst >back && test_cmp plain back
'

test_expect_success 'empty input gives empty output' '
	: >empty && llm-cat -q empty >out && test_must_fail test -s out &&
	llm-cat -q </dev/null >out2 && test_must_fail test -s out2
'

test_expect_success 'missing id is added, stable across runs' '
	printf "{\"text\": \"hello\"}\n{\"text\": \"world\", \"id\": \"w1\"}\n" >in &&
	llm-cat -q in >out1 && llm-cat -q in >out2 && test_cmp out1 out2 &&
	jq -e -s ".[0].id | test(\"^[0-9a-f]{16}\$\")" out1 &&
	jq -e -s ".[1].id == \"w1\"" out1
'

# The ids of llmkit-formats(5): XXH3-64 of "NAME:OFFSET", NAME the input's path as given, or
# "stdin" (or --source) for standard input. The values are pinned: ids are stable across
# versions, and every later stage (the split, the noise, dedup's clusters) keys on them.
test_expect_success 'ids: one per input name and offset, pinned' '
	mkdir da db && printf "{\"text\": \"same\"}\n" >da/x.jsonl && printf "{\"text\": \"other\"}\n" >db/x.jsonl &&
	llm-cat -q da/x.jsonl db/x.jsonl | jq -r .id >ids &&
	printf "63ea17c3f1ce1837\ne27d86b8b18443d1\n" >expect && test_cmp expect ids &&
	llm-cat -q <da/x.jsonl | jq -r .id >ids &&
	echo 77559ab17b6f610f >expect && test_cmp expect ids &&
	llm-cat -q --source crawl <da/x.jsonl | jq -r .id >ids &&
	echo da7a8b2d2791a016 >expect && test_cmp expect ids
'

test_expect_success 'ids: one --source over several files still gives each file its own' '
	llm-cat -q --source crawl da/x.jsonl db/x.jsonl >out &&
	jq -r .id out | sort -u >ids && test_line_count = 2 ids &&
	jq -e -s "map(.source) == [\"crawl\", \"crawl\"]" out &&
	mkdir -p t1 t2 && printf "p\n" >t1/t.txt && printf "p\n" >t2/t.txt &&
	(cd t1 && tar cf ../t1.tar t.txt) && (cd t2 && tar cf ../t2.tar t.txt) &&
	llm-cat -q --source crawl t1/t.txt t2/t.txt t1.tar t2.tar | jq -r .id | sort -u >ids &&
	test_line_count = 4 ids
'

test_expect_success 'ids: runs on standard input are told apart by --source' '
	llm-cat -q --source run-1 <da/x.jsonl >r1 && llm-cat -q --source run-2 <db/x.jsonl >r2 &&
	test "$(jq -r .id r1)" != "$(jq -r .id r2)" &&
	llm-cat -q <da/x.jsonl >s1 && llm-cat -q <db/x.jsonl >s2 &&
	test "$(jq -r .id s1)" = "$(jq -r .id s2)"
'

test_expect_success 'stamps are added only where the field is missing' '
	printf "{\"text\": \"a\", \"domain\": \"web\"}\n{\"text\": \"b\"}\n" >in &&
	llm-cat -q --domain news --lang en in >out &&
	jq -r ".domain + \" \" + .lang" out >got &&
	printf "web en\nnews en\n" >expect && test_cmp expect got
'

test_expect_success 'no final newline and CRLF line ends' '
	printf "{\"id\":\"1\",\"text\":\"a\"}\r\n{\"id\":\"2\",\"text\":\"b\"}" >in &&
	llm-cat -q in >out &&
	printf "{\"id\":\"1\",\"text\":\"a\"}\n{\"id\":\"2\",\"text\":\"b\"}\n" >expect &&
	test_cmp expect out
'

test_expect_success 'bad JSON is rejected with file and line, nothing lost' '
	printf "{\"id\":\"1\",\"text\":\"a\"}\n{bad\n{\"id\":\"3\"}\n[1]\n{\"id\":\"5\",\"text\":\"e\"}\n" >in &&
	llm-cat --rejects rej.jsonl --stats stats.json in >out 2>err &&
	test_line_count = 2 out &&
	test_line_count = 3 rej.jsonl &&
	test_grep "llm-cat: in:2: bad JSON" err &&
	test_grep "llm-cat: in:3: missing field .text." err &&
	jq -e ".records_in == 5 and .records_out == 2 and .records_rejected == 3" stats.json &&
	jq -e ".rejected.bad_json == 2 and .rejected.no_text == 1" stats.json &&
	jq -r .reject_reason rej.jsonl >reasons &&
	printf "bad_json\nno_text\nbad_json\n" >expect && test_cmp expect reasons &&
	jq -e -s ".[1].id == \"3\" and .[0].line == 2 and .[0].raw == \"{bad\"" rej.jsonl &&
	jq -e -s ".[0].error == \"expected string key at byte 2\"" rej.jsonl
'

test_expect_success '--strict makes malformed input fatal' '
	printf "{\"text\":\"a\"}\n{bad\n" >in &&
	test_must_fail llm-cat -q --strict in >out 2>err &&
	test_grep "in:2: bad JSON" err
'

test_expect_success 'invalid UTF-8 inside strings is repaired and counted' '
	printf "{\"id\":\"1\",\"text\":\"a\\377b\"}\n" >in &&
	llm-cat --stats s.json in >out 2>/dev/null &&
	printf "{\"id\":\"1\",\"text\":\"a\\357\\277\\275b\"}\n" >expect &&
	test_cmp expect out &&
	jq -e ".counters.repaired_utf8 == 1" s.json
'

test_expect_success 'a line over --max-line is rejected with its size, the rest goes on' '
	{ printf "{\"text\":\""; head -c 5000 /dev/zero | tr "\\0" x; printf "\"}\n{\"id\":\"2\",\"text\":\"ok\"}\n"; } >in &&
	llm-cat --max-line 1K --rejects rej.jsonl in >out 2>err &&
	test_line_count = 1 out &&
	jq -e ".reject_reason == \"too_long\" and .bytes == 5011 and .line == 1" rej.jsonl &&
	test_grep "in:1: line of 5011 bytes is longer than --max-line" err
'

test_expect_success 'unreadable and missing files: message, exit 1, other files still read' '
	printf "{\"text\":\"a\"}\n" >ok.jsonl &&
	test_must_fail llm-cat -q nosuch.jsonl ok.jsonl >out 2>err &&
	test_grep "llm-cat: nosuch.jsonl: No such file or directory" err &&
	test_line_count = 1 out
'

test_expect_success NOT_ROOT 'permission denied is reported' '
	printf "{\"text\":\"a\"}\n" >locked && chmod 000 locked &&
	test_must_fail llm-cat -q locked 2>err && test_grep "Permission denied" err
'

test_expect_success 'a directory is reported' '
	mkdir d && test_must_fail llm-cat -q d 2>err && test_grep "llm-cat: d: Is a directory" err
'

test_expect_success 'bad flags and values exit 2' '
	test_must_fail --code=2 llm-cat --no-such-flag 2>err &&
	test_grep "Try .llm-cat --help." err &&
	test_must_fail --code=2 llm-cat --format nope </dev/null 2>err &&
	test_grep "invalid value for --format" err &&
	test_must_fail --code=2 llm-cat --max-line 12Q </dev/null
'

test_expect_success '--help and --version go to stdout and exit 0' '
	llm-cat --help >out && test_grep "^usage: llm-cat" out &&
	llm-cat --version >out && test_grep "llm-cat (llmkit)" out
'

test_expect_success 'a full disk is an error (exit 1 with a message)' '
	test_must_fail llm-cat -q $C/news.jsonl >/dev/full 2>err &&
	test_grep "write error" err &&
	test_must_fail llm-cat -q $C/news.jsonl -o /dev/full 2>err2 &&
	test_grep "No space left on device" err2
'

test_expect_success 'a closed pipe ends llm-cat silently' '
	{ llm-cat $C/books.jsonl 2>err; echo $? >rc; } | head -n 1 >/dev/null &&
	test "$(cat rc)" = 141 && test_must_fail test -s err
'

test_expect_success 'an interrupted -o leaves no file under the final name' '
	# A byte-count handshake, not a delay: once cat has pushed megabytes through the FIFO,
	# llm-cat is inside its loop, and it cannot finish while the FIFO stays open for writing.
	mkfifo in.fifo &&
	{ llm-cat -q -o final.jsonl in.fifo & } && pid=$! &&
	exec 3>in.fifo && cat $C/*.jsonl >&3 &&
	kill $pid && { wait $pid; test $? -gt 128; } && exec 3>&- &&
	test_must_fail test -e final.jsonl &&
	test -z "$(ls -A | grep tmp)"
'

test_expect_success 'text files: one document per file, per line, per paragraph' '
	printf "first para\nline two\n\n\nsecond\n" >t.txt &&
	llm-cat -q t.txt >whole && test_line_count = 1 whole &&
	jq -e ".text == \"first para\\nline two\\n\\n\\nsecond\\n\" and .format == \"text\" and .source == \"t.txt\"" whole &&
	llm-cat -q --lines t.txt >lines && test_line_count = 3 lines &&
	llm-cat -q --paragraphs t.txt >paras && test_line_count = 2 paras &&
	jq -r .text paras >got && printf "first para\nline two\nsecond\n" >expect && test_cmp expect got
'

test_expect_success 'HTML files stay HTML, marked format html' '
	llm-cat -q $C/html/maint-guide_first.en.html >out &&
	jq -e ".format == \"html\" and (.text | startswith(\"<\") or contains(\"<html\"))" out
'

test_expect_success 'binary files are rejected, not emitted' '
	printf "abc\0def" >bin.txt &&
	llm-cat --rejects rej.jsonl bin.txt >out 2>err &&
	test_must_fail test -s out && jq -e ".reject_reason == \"binary\"" rej.jsonl
'

test_expect_success 'WARC response records become HTML documents with url and date' '
	llm-cat -q $C/warc/whirlwind.warc.gz >out &&
	test_line_count = 1 out &&
	jq -e ".format == \"html\" and (.url | startswith(\"https://an.wikipedia.org/\")) and .date == \"2024-05-18T01:58:10Z\"" out
'

test_expect_success 'WET conversion records become text documents' '
	llm-cat -q $C/warc/whirlwind.warc.wet.gz >out &&
	jq -e ".format == \"text\" and (.text | contains(\"Escopete\"))" out
'

test_expect_success 'dolma WARC: every response record accounted for' '
	llm-cat --stats s.json --rejects rej.jsonl $TESTDATA/cat/dolma-sample-0000.warc.gz >out 2>/dev/null &&
	jq -e ".records_in == .records_out + .records_rejected" s.json &&
	test $(wc -l <out) -ge 20 &&
	jq -e -s "map(select(.url == null)) | length == 0" out
'

test_expect_success 'LF-only WET file (cc_net sample) reads by lines' '
	llm-cat -q $TESTDATA/cat/ccnet-sample.warc.txt >out &&
	test_line_count = 3 out &&
	jq -r .url out >urls && test_grep "sample_english" urls
'

test_expect_success PYTHON 'WARC responses that are not text, or not 2xx, are rejected with their url' '
	python3 - <<-\EOF &&
	def rec(uri, http):
	    h = ("WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: %s\r\n"
	         "Content-Type: application/http; msgtype=response\r\nContent-Length: %d\r\n\r\n"
	         % (uri, len(http))).encode()
	    return h + http + b"\r\n\r\n"
	open("t.warc", "wb").write(
	    rec("http://x/img", b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n\x89PNG") +
	    rec("http://x/gone", b"HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n\r\nno") +
	    rec("http://x/ok", b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>hello</p>"))
	EOF
	llm-cat --rejects rej.jsonl t.warc >out 2>err &&
	test_line_count = 1 out && jq -e ".url == \"http://x/ok\"" out &&
	jq -r "[.reject_reason, .url, (.content_type // .http_status)] | map(tostring) | join(\" \")" rej.jsonl >got &&
	printf "content_type http://x/img image/png\nhttp_status http://x/gone 404\n" >expect &&
	test_cmp expect got &&
	test_grep "t.warc:1: unsupported content type .image/png." err
'

test_expect_success 'a truncated WARC is an error naming the file' '
	gzip -dc $TESTDATA/cat/dolma-sample-0000.warc.gz | head -c 30000 >cut.warc &&
	test_must_fail llm-cat -q cut.warc >out 2>err &&
	test_grep "cut.warc:38: truncated WARC record: its length is 88099 bytes, the file ends after 28269" err &&
	sed -n 38p cut.warc | grep "^WARC/1.0"
'

test_expect_success 'tar and zip archives: each member a document' '
	mkdir m && printf "hello\n" >m/a.txt && cp $C/html/maint-guide_first.en.html m/b.html &&
	tar -czf m.tgz m && llm-cat -q m.tgz >out && test_line_count = 2 out &&
	jq -r ".source + \" \" + .format" out | sort >got &&
	printf "m/a.txt text\nm/b.html html\n" >expect && test_cmp expect got &&
	if command -v zip >/dev/null; then zip -qr m.zip m && llm-cat -q m.zip >z && test_line_count = 2 z; fi
'

test_expect_success 'records in = out + rejected over all samples' '
	llm-cat --stats s.json --rejects r.jsonl $C/*.jsonl $C/html/*.html $C/warc/* >out 2>/dev/null &&
	jq -e ".records_in == .records_out + .records_rejected and .records_in > 10000" s.json &&
	test $(wc -l <out) = $(jq .records_out s.json)
'

# The man page's examples and what they print: t0007.

test_done
