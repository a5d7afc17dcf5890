#!/bin/sh
test_description='llm-clean: the publication date of HTML pages into "published", used by --freshness'
. "$(dirname "$0")/../lib.sh"

body='<p>A sentence of the article that is long enough to be kept as its text.</p>'

test_expect_success 'OpenGraph, the URL path and Chinese text give "published" beside "date"' '
	printf "{\"format\": \"html\", \"date\": \"2024-03-01T00:00:00Z\", \"url\": \"https://e.com/a\", \"text\": \"<head><meta property=\\\\\"article:published_time\\\\\" content=\\\\\"2019-11-19T13:03:00Z\\\\\"></head><h1>T</h1>%s\"}\n" "$body" >in.jsonl &&
	printf "{\"format\": \"html\", \"url\": \"https://e.com/news/2021/06/30/story.html\", \"text\": \"<h1>T</h1>%s\"}\n" "$body" >>in.jsonl &&
	printf "{\"format\": \"html\", \"text\": \"<h1>\\\\u6807\\\\u9898</h1><span>\\\\u53d1\\\\u5e03\\\\u65f6\\\\u95f4\\\\uff1a2023-05-12 10:30</span>%s\"}\n" "$body" >>in.jsonl &&
	printf "{\"format\": \"html\", \"text\": \"<h1>T</h1>%s\"}\n" "$body" >>in.jsonl &&
	llm-clean -q --filters none in.jsonl >out.jsonl &&
	jq -r ".published // \"-\"" out.jsonl >got &&
	printf "2019-11-19\n2021-06-30\n2023-05-12\n-\n" >want &&
	test_cmp want got &&
	jq -e -s ".[0].published == \"2019-11-19\" and .[0].date == \"2024-03-01T00:00:00Z\"" out.jsonl
'

test_expect_success '--freshness weighs by "published" before the crawl date' '
	llm-clean -q --filters none --freshness --ref-year 2024 in.jsonl >w.jsonl &&
	jq -r ".weight" w.jsonl >got &&
	printf "0.166667\n0.25\n0.5\n1\n" >want &&
	test_cmp want got
'

test_expect_success 'a record that has "published" keeps it; text records get none' '
	printf "{\"format\": \"html\", \"published\": \"2001-02-03\", \"url\": \"https://e.com/2021/06/30/x\", \"text\": \"<h1>T</h1>%s\"}\n" "$body" >keep.jsonl &&
	printf "{\"text\": \"Published: 2020-01-01. %s\"}\n" "$body" >>keep.jsonl &&
	llm-clean -q --filters none keep.jsonl >out.jsonl &&
	jq -r ".published // \"-\"" out.jsonl >got &&
	printf "2001-02-03\n-\n" >want &&
	test_cmp want got
'

test_expect_success 'a WARC page gets its date from the page, its crawl date stays in "date"' '
	html="<html><head><script type=\"application/ld+json\">{\"datePublished\": \"2018-07-04T09:00:00+08:00\"}</script></head><body><h1>T</h1>$body</body></html>" &&
	len=$(printf "%s" "$html" | wc -c) &&
	http=$(printf "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s" "$len" "$html") &&
	blen=$(printf "%s" "$http" | wc -c) &&
	printf "WARC/1.0\r\nWARC-Type: response\r\nWARC-Date: 2024-05-06T07:08:09Z\r\nWARC-Target-URI: https://e.com/x\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: %d\r\n\r\n%s\r\n\r\n" "$blen" "$http" >p.warc &&
	llm-cat -q p.warc | llm-clean -q --filters none >out.jsonl &&
	jq -e ".published == \"2018-07-04\" and (.date | startswith(\"2024-05-06\"))" out.jsonl
'

test_done
