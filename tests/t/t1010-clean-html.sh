#!/bin/sh
test_description='llm-clean: HTML records, the text that was judged in rejects, counts per language'
. "$(dirname "$0")/../lib.sh"

# page TEXT: one JSONL record of HTML whose main text is TEXT, with a navigation bar
page() {
	printf '{"id": "%s", "format": "html", "text": "<html><head><title>T %s</title></head><body><nav><a href=/>Home</a> <a href=/a>About</a></nav><article><p>%s</p></article><footer>Copyright</footer></body></html>"}\n' "$1" "$1" "$2"
}

test_expect_success 'a dropped HTML record keeps its raw text and carries the judged text' '
	page short "Too short." >in.jsonl &&
	page long "$(printf "A sentence of the article that is long enough to be kept. %.0s" 1 2 3)" >>in.jsonl &&
	llm-clean --filters length --rejects rej.jsonl in.jsonl >out.jsonl 2>/dev/null &&
	test_line_count = 1 out.jsonl && test_line_count = 1 rej.jsonl &&
	jq -e ".reject_reason == \"too_short\" and .judged_text == \"Too short.\" and .judged_bytes == 10" rej.jsonl &&
	jq -e ".format == \"html\" and (.text | startswith(\"<html>\"))" rej.jsonl
'

test_expect_success '--judged-text SIZE keeps the first SIZE bytes, cut at a character, and the length' '
	printf "{\"format\": \"html\", \"text\": \"<p>\\u4e2d\\u6587\\u7684\\u6587\\u672c</p>\"}\n" >zh.jsonl &&
	llm-clean --filters length --judged-text 7 --rejects rej.jsonl zh.jsonl >out.jsonl 2>/dev/null &&
	jq -e ".judged_text == \"\\u4e2d\\u6587\" and .judged_bytes == 15" rej.jsonl &&
	llm-clean --filters length --judged-text 0 --rejects rej0.jsonl zh.jsonl >out.jsonl 2>/dev/null &&
	jq -e "has(\"judged_text\") or has(\"judged_bytes\") | not" rej0.jsonl &&
	test_must_fail --code=2 llm-clean --judged-text lots zh.jsonl 2>err
'

test_expect_success 'records that were not HTML carry no judged text' '
	printf "{\"text\": \"short\"}\n" >t.jsonl &&
	llm-clean --filters length --rejects rej.jsonl t.jsonl >out.jsonl 2>/dev/null &&
	jq -e ".reject_reason == \"too_short\" and (has(\"judged_text\") | not)" rej.jsonl
'

test_expect_success '--stats counts per language, given or detected' '
	long="$(printf "A sentence of the article that is long enough to be kept. %.0s" 1 2 3)" &&
	{ printf "{\"text\": \"%s\", \"lang\": \"en\"}\n" "$long";
	  printf "{\"text\": \"short\", \"lang\": \"en\"}\n";
	  printf "{\"text\": \"\\u8fd9\\u662f\\u4e00\\u4e2a\\u5f88\\u77ed\\u7684\\u53e5\\u5b50\\u3002\"}\n"; } >l.jsonl &&
	llm-clean -q --filters length --stats s.json l.jsonl >out.jsonl &&
	jq -e ".languages.en.records_in == 2 and .languages.en.records_out == 1 and .languages.en.rejected.too_short == 1" s.json &&
	jq -e ".languages.zh.records_in == 1 and .languages.zh.records_rejected == 1" s.json &&
	jq -e "[.languages[].records_in] | add == 3" s.json
'

test_expect_success 'llm-cat counts per language: the records'"'"' own or the stamped one' '
	printf "{\"text\": \"a\", \"lang\": \"fr\"}\n{\"text\": \"b\"}\n{\"x\": 1}\n" >in.jsonl &&
	llm-cat -q --lang de --stats s.json in.jsonl >out.jsonl &&
	jq -e ".languages.fr.records_out == 1 and .languages.de.records_out == 1 and .languages.de.records_rejected == 1" s.json
'

test_expect_success PYTHON 'a GBK page in a WARC comes out as Chinese main text with its title' '
	python3 - <<-\EOF &&
	body = ("<html><head><meta charset=gb2312><title>\u6807\u9898</title></head><body>"
	        "<div class=nav><a href=/>\u9996\u9875</a></div><div class=content><p>" +
	        "\u8fd9\u662f\u6b63\u6587\u7684\u4e00\u6bb5\u8bdd\uff0c\u8db3\u591f\u957f\u3002" * 4 +
	        "</p></div></body></html>").encode("gbk")
	http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + body
	h = b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://x/\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: %d\r\n\r\n" % len(http)
	open("gbk.warc", "wb").write(h + http + b"\r\n\r\n")
	EOF
	llm-cat -q gbk.warc | llm-clean -q --filters none >out.jsonl &&
	jq -e ".title == \"\\u6807\\u9898\" and .encoding == \"gb18030\" and .format == \"text\"" out.jsonl &&
	jq -e ".text | startswith(\"\\u8fd9\\u662f\\u6b63\\u6587\") and (contains(\"\\u9996\\u9875\") | not)" out.jsonl
'

test_done
