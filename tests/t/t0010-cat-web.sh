#!/bin/sh
test_description='llm-cat: web archives (WARC, ARC) and the HTTP messages in them'
. "$(dirname "$0")/../lib.sh"

# mkwarc.py OUT SPEC...: a WARC file of response records. Each SPEC is a Python expression
# evaluating to (uri, http_bytes) or (uri, http_bytes, extra_warc_headers).
cat >mkwarc.py <<\EOF
import sys, gzip, zlib
def http(body, *headers, status=b"200 OK"):
    h = b"HTTP/1.1 " + status + b"\r\n" + b"".join(x + b"\r\n" for x in headers)
    return h + b"\r\n" + body
def rec(uri, msg, extra=b""):
    h = (b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: " + uri.encode() +
         b"\r\nContent-Type: application/http; msgtype=response\r\n" + extra +
         b"Content-Length: %d\r\n\r\n" % len(msg))
    return h + msg + b"\r\n\r\n"
out = open(sys.argv[1], "wb")
for spec in sys.argv[2:]:
    out.write(rec(*eval(spec)))
EOF

P='<html><body><p>'
Q='</p></body></html>'

test_expect_success PYTHON 'gzip, deflate, br and zstd bodies are decoded' '
	python3 mkwarc.py t.warc \
	  "(\"http://x/gz\", http(gzip.compress(b\"$P gzip body $Q\"), b\"Content-Encoding: gzip\"))" \
	  "(\"http://x/xgz\", http(gzip.compress(b\"$P x-gzip body $Q\"), b\"Content-Encoding: x-gzip\"))" \
	  "(\"http://x/zlib\", http(zlib.compress(b\"$P deflate body $Q\"), b\"Content-Encoding: deflate\"))" \
	  "(\"http://x/raw\", http(zlib.compress(b\"$P raw deflate body $Q\")[2:-4], b\"Content-Encoding: deflate\"))" \
	  "(\"http://x/br\", http(bytes.fromhex(\"1b7802202c0e78d3e89471534f3a37fa2ac9c6e81ac4470c4ef10855995cbba4b1bd718c231d88ef65c471221e3c64253e621a5ea29176dafef9150274148ad31700e6d83000\"), b\"Content-Encoding: br\"))" \
	  "(\"http://x/zstd\", http(bytes.fromhex(\"28b52ffd0458f101003c68746d6c3e3c626f64793e3c703e5a73746420626f64793a206465636f6465642066726f6d207a7374642e3c2f703e3c2f626f64793e3c2f68746d6c3e6c4214d2\"), b\"Content-Encoding: zstd\"))" \
	  "(\"http://x/two\", http(zlib.compress(gzip.compress(b\"$P two codings $Q\")), b\"Content-Encoding: gzip, deflate\"))" \
	  "(\"http://x/chunked-gz\", http(b\"%x\\r\\n\" % len(gzip.compress(b\"$P chunked gzip $Q\")) + gzip.compress(b\"$P chunked gzip $Q\") + b\"\\r\\n0\\r\\n\\r\\n\", b\"Transfer-Encoding: chunked\", b\"Content-Encoding: gzip\"))" \
	  &&
	llm-cat --rejects rej.jsonl t.warc >out 2>err &&
	test_must_fail test -s rej.jsonl &&
	jq -r ".text" out >got &&
	cat >expect <<-EOF &&
	$P gzip body $Q
	$P x-gzip body $Q
	$P deflate body $Q
	$P raw deflate body $Q
	<html><body><p>$(python3 -c "print(\"Brotli body, decoded from br. \" * 20, end=\"\")")</p></body></html>
	<html><body><p>Zstd body: decoded from zstd.</p></body></html>
	$P two codings $Q
	$P chunked gzip $Q
	EOF
	test_cmp expect got
'

test_expect_success PYTHON 'a body stored decoded under a Content-Encoding header is kept' '
	python3 mkwarc.py t.warc \
	  "(\"http://x/a\", http(b\"$P plain under gzip $Q\", b\"Content-Encoding: gzip\"))" \
	  "(\"http://x/b\", http(b\"$P plain under br $Q\", b\"Content-Encoding: br\"))" &&
	llm-cat -q t.warc >out &&
	jq -r .text out >got &&
	printf "%s\n" "$P plain under gzip $Q" "$P plain under br $Q" >expect &&
	test_cmp expect got
'

test_expect_success PYTHON 'corrupt or unknown codings are rejected with url and reason' '
	python3 mkwarc.py t.warc \
	  "(\"http://x/corrupt\", http(gzip.compress(b\"<p>\" * 1000)[:12] + b\"\\xff\\xff\\xff\" + gzip.compress(b\"<p>\" * 1000)[15:], b\"Content-Encoding: gzip\"))" \
	  "(\"http://x/lzw\", http(b\"\\x1f\\x9d\\x90abc\", b\"Content-Encoding: compress\"))" \
	  "(\"http://x/ok\", http(b\"$P fine $Q\"))" &&
	llm-cat --rejects rej.jsonl --stats s.json t.warc >out 2>err &&
	test_line_count = 1 out &&
	jq -r "[.reject_reason, .url] | join(\" \")" rej.jsonl >got &&
	printf "bad_http http://x/corrupt\ncontent_encoding http://x/lzw\n" >expect &&
	test_cmp expect got &&
	jq -e "select(.url == \"http://x/lzw\") | .content_encoding == \"compress\"" rej.jsonl &&
	test_grep "t.warc:1: response for .http://x/corrupt.: corrupt gzip data" err &&
	test_grep "t.warc:[0-9]*: response for .http://x/lzw.: unsupported Content-Encoding .compress." err &&
	jq -e ".records_in == 3 and .records_out == 1 and .rejected.bad_http == 1 and .rejected.content_encoding == 1" s.json
'

test_expect_success PYTHON 'a decompression bomb stops at --max-line' '
	python3 mkwarc.py t.warc \
	  "(\"http://x/bomb\", http(gzip.compress(b\"<p>\" + b\"a\" * (8 << 20)), b\"Content-Encoding: gzip\"))" \
	  "(\"http://x/ok\", http(b\"$P fine $Q\"))" &&
	llm-cat --max-line 1M --rejects rej.jsonl t.warc >out 2>err &&
	test_line_count = 1 out &&
	jq -e ".reject_reason == \"too_long\" and .url == \"http://x/bomb\"" rej.jsonl &&
	test_grep "decoded body longer than 1048576 bytes" err
'

test_expect_success PYTHON 'chunked bodies: extensions and a missing last chunk are fine' '
	python3 mkwarc.py t.warc \
	  "(\"http://x/a\", http(b\"5;name=v\\r\\n<p>ab\\r\\n6\\r\\ncd</p>\\r\\n0\\r\\nX-Trailer: 1\\r\\n\\r\\n\", b\"Transfer-Encoding: chunked\"))" \
	  "(\"http://x/b\", http(b\"5\\r\\n<p>ef\\r\\n4\\r\\n</p>\\r\\n\", b\"Transfer-Encoding: chunked\"))" &&
	llm-cat -q t.warc >out &&
	jq -r .text out >got && printf "<p>abcd</p>\n<p>ef</p>\n" >expect && test_cmp expect got
'

test_expect_success PYTHON 'bad chunk sizes are bad_http rejects, not empty or framed text' '
	python3 mkwarc.py t.warc \
	  "(\"http://x/invalid\", http(b\"zz\\r\\n<p>text</p>\\r\\n0\\r\\n\\r\\n\", b\"Transfer-Encoding: chunked\"))" \
	  "(\"http://x/huge\", http(b\"ffffffffffffffffff\\r\\n<p>text</p>\\r\\n0\\r\\n\\r\\n\", b\"Transfer-Encoding: chunked\"))" \
	  "(\"http://x/past\", http(b\"400\\r\\n<p>text</p>\\r\\n0\\r\\n\\r\\n\", b\"Transfer-Encoding: chunked\"))" \
	  "(\"http://x/cut\", http(b\"400\\r\\n<p>cut by the crawler</p>\", b\"Transfer-Encoding: chunked\"), b\"WARC-Truncated: length\\r\\n\")" &&
	llm-cat --rejects rej.jsonl t.warc >out 2>err &&
	jq -r "[.reject_reason, .url] | join(\" \")" rej.jsonl >got &&
	printf "bad_http http://x/invalid\nbad_http http://x/huge\nbad_http http://x/past\n" >expect &&
	test_cmp expect got &&
	test_grep "t.warc:1: response for .http://x/invalid.: invalid chunk size .zz. at byte 0 of the body" err &&
	test_grep "response for .http://x/huge.: chunk size .ffffffffffffffffff. is too large" err &&
	test_grep "response for .http://x/past.: chunk of 1024 bytes at byte 5 runs past the end" err &&
	test_line_count = 1 out && jq -e ".url == \"http://x/cut\" and .text == \"<p>cut by the crawler</p>\"" out
'

test_expect_success PYTHON 'a Content-Length beyond 64 bits or past the end names file and line' '
	python3 mkwarc.py t.warc "(\"http://x/ok\", http(b\"$P fine $Q\"))" &&
	cp t.warc u.warc &&
	printf "WARC/1.0\r\nWARC-Type: response\r\nContent-Length: 100000000000000000000\r\n\r\nabc" >>t.warc &&
	printf "WARC/1.0\r\nWARC-Type: response\r\nContent-Length: 99999999999\r\n\r\nabc" >>u.warc &&
	test_must_fail llm-cat -q t.warc >out 2>err &&
	test_grep "llm-cat: t.warc:13: bad Content-Length .100000000000000000000." err &&
	test_line_count = 1 out &&
	test_must_fail llm-cat -q u.warc >out 2>err &&
	test_grep "llm-cat: u.warc:11: truncated WARC record: its length is 99999999999 bytes, the file ends after 3" err
'

test_expect_success 'WARC/1.0 angle brackets are removed; wget'"'"'s metadata:// resources are no documents' '
	llm-cat -q $TESTDATA/cat/dolma-sample-0000.warc.gz >out &&
	jq -e -s "length > 10 and all(.url | startswith(\"https://\") and (endswith(\">\") | not))" out &&
	test_must_fail grep -q "metadata://" out
'

test_expect_success PYTHON 'messages name the line of the record, counting lines inside blocks' '
	python3 mkwarc.py t.warc \
	  "(\"http://x/a\", http(b\"<p>one\\ntwo\\nthree</p>\"))" \
	  "(\"http://x/b\", http(b\"<p>x</p>\", status=b\"404 Not Found\"))" &&
	llm-cat -q t.warc >out 2>err &&
	test_grep "t.warc:13: HTTP status 404" err &&
	sed -n 13p t.warc | grep "^WARC/1.0"
'

# An ARC v1 file as the Internet Archive wrote them, and a v2 header line.
cat >mkarc.py <<\EOF
import sys, gzip
def arc(url, date, ctype, block, v2=False):
    if v2:
        head = "%s 1.2.3.4 %s %s 200 - - 0 f.arc %d\n" % (url, date, ctype, len(block))
    else:
        head = "%s 1.2.3.4 %s %s %d\n" % (url, date, ctype, len(block))
    return head.encode() + block + b"\n"
desc = b"1 0 Test\nURL IP-address Archive-date Content-type Archive-length\n\n"
recs = [
    arc("filedesc://test.arc", "19961104142103", "text/plain", desc),
    arc("http://www.example.edu:80/index.html", "19961104142103", "text/html",
        b"HTTP/1.0 200 Document follows\r\nContent-Type: text/html\r\n\r\n<html><body><p>An old page.</p></body></html>"),
    arc("http://www.example.edu:80/gone.html", "19961104142104", "text/html",
        b"HTTP/1.0 404 Not found\r\nContent-Type: text/html\r\n\r\n<p>gone</p>"),
    arc("http://www.example.edu:80/img.gif", "19961104142105", "image/gif",
        b"HTTP/1.0 200 OK\r\nContent-Type: image/gif\r\n\r\nGIF89a\0\0"),
    arc("http://www.example.edu:80/v2.html", "20010203040506", "text/html",
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>A version 2 record.</p>", v2=True),
]
open(sys.argv[1], "wb").write(b"".join(recs))
open(sys.argv[1] + ".gz", "wb").write(b"".join(gzip.compress(r) for r in recs))
EOF

test_expect_success PYTHON 'ARC files are read as records, not as one text of headers' '
	python3 mkarc.py t.arc &&
	llm-cat --rejects rej.jsonl --stats s.json t.arc >out 2>err &&
	jq -r "[.url, .date, .format, .text] | join(\" \")" out >got &&
	cat >expect <<-\EOF &&
	http://www.example.edu:80/index.html 1996-11-04T14:21:03Z html <html><body><p>An old page.</p></body></html>
	http://www.example.edu:80/v2.html 2001-02-03T04:05:06Z html <p>A version 2 record.</p>
	EOF
	test_cmp expect got &&
	jq -r "[.reject_reason, .url] | join(\" \")" rej.jsonl >got &&
	printf "http_status http://www.example.edu:80/gone.html\ncontent_type http://www.example.edu:80/img.gif\n" >expect &&
	test_cmp expect got &&
	jq -e ".records_in == 4 and .counters.warc_records_without_document == 1" s.json
'

test_expect_success PYTHON 'ARC: gzip per record, detected from content whatever the name' '
	python3 mkarc.py t.arc && cp t.arc.gz crawl.data &&
	llm-cat -q t.arc >plain &&
	llm-cat -q t.arc.gz >gz && llm-cat -q crawl.data >data &&
	jq -r .text plain >a && jq -r .text gz >b && jq -r .text data >c &&
	test_cmp a b && test_cmp a c && test_line_count = 2 a
'

test_expect_success 'a broken ARC header is an error with file and line' '
	printf "filedesc://x.arc 0 19960101000000 text/plain 3\nabc\nnot an arc header\n" >bad.arc &&
	test_must_fail llm-cat -q bad.arc >out 2>err &&
	test_grep "llm-cat: bad.arc:3: expected an ARC record header" err
'

test_expect_success PYTHON 'bytes_in counts input bytes, bytes_out the output' '
	printf "{\"id\":\"1\",\"text\":\"a\"}\n\n{\"text\":\"bb\"}\r\n" >in.jsonl &&
	llm-cat -q --stats s.json in.jsonl >out &&
	jq -e ".bytes_in == $(wc -c <in.jsonl) and .bytes_out == $(wc -c <out)" s.json &&
	test $(wc -c <out) != $(wc -c <in.jsonl) &&
	python3 mkwarc.py t.warc "(\"http://x/a\", http(b\"<p>a</p>\"))" "(\"http://x/b\", http(b\"<p>b</p>\"))" &&
	llm-cat -q --stats w.json t.warc >out &&
	jq -e ".bytes_in == $(wc -c <t.warc) - 8 and .bytes_out == $(wc -c <out)" w.json
'

test_done
