#!/bin/sh
test_description='llm-cat: pages and text files in any encoding become UTF-8 documents'
. "$(dirname "$0")/../lib.sh"

# $TESTDATA/cat/enc/ENC.txt is UTF-8 text that iconv encodes losslessly as ENC (its iconv
# name); label ENC is the label a page would declare, canon the name llm-cat records for it.
canon() {
	case $1 in
	CP874) echo windows-874 ;;
	CP125?) echo "windows-${1#CP}" ;;
	ISO-8859-9) echo windows-1254 ;; # the WHATWG standard decodes latin5 as windows-1254
	*) echo "$1" | tr A-Z a-z ;;
	esac
}
label() {
	case $1 in
	CP874|CP125?) canon "$1" ;;
	*) echo "$1" | tr A-Z a-z ;;
	esac
}
ENCODINGS=$(cd "$TESTDATA/cat/enc" && ls *.txt | sed 's/\.txt$//')

# page ENC LABEL-MARKUP: an HTML page around the sample, in UTF-8 (the expected text)
page() {
	printf '<!DOCTYPE html>\n<html><head>%s<title>t</title></head>\n<body><p>\n' "$2"
	cat "$TESTDATA/cat/enc/$1.txt"
	printf '</p></body></html>\n'
}

test_expect_success 'every sample encoding is detected in an undeclared text file' '
	for e in $ENCODINGS; do
		iconv -f UTF-8 -t $e "$TESTDATA/cat/enc/$e.txt" >$e.txt &&
		llm-cat -q $e.txt >out.jsonl &&
		jq -j .text out.jsonl >got &&
		test_cmp "$TESTDATA/cat/enc/$e.txt" got &&
		jq -e ".encoding != \"utf-8\" and .encoding != null" out.jsonl >/dev/null ||
		{ echo "detection failed for $e: $(jq -r .encoding out.jsonl)"; exit 1; }
	done
'

test_expect_success 'every sample encoding decodes by <meta charset>' '
	for e in $ENCODINGS; do
		page $e "<meta charset=\"$(label $e)\">" >expect &&
		iconv -f UTF-8 -t $e expect >$e.html &&
		llm-cat -q $e.html >out.jsonl &&
		jq -j .text out.jsonl >got &&
		test_cmp expect got &&
		jq -e ".encoding == \"$(canon $e)\" and .format == \"html\"" out.jsonl >/dev/null ||
		{ echo "meta failed for $e: $(jq -r .encoding out.jsonl)"; exit 1; }
	done
'

test_expect_success 'http-equiv Content-Type, in any case and quoting' '
	page CP1251 "<META HTTP-EQUIV=Content-Type CONTENT='\''text/html; charset=Windows-1251'\''>" >expect &&
	iconv -f UTF-8 -t CP1251 expect >p.html &&
	llm-cat -q p.html >out.jsonl &&
	jq -j .text out.jsonl >got && test_cmp expect got &&
	jq -e ".encoding == \"windows-1251\"" out.jsonl
'

test_expect_success 'a <meta> after the head, or in a comment, is not a declaration' '
	printf "<html><head><!-- <meta charset=koi8-r> --></head><body><meta charset=koi8-r><p>" >expect &&
	cat $TESTDATA/cat/enc/CP1251.txt >>expect &&
	iconv -f UTF-8 -t CP1251 expect >p.html &&
	llm-cat -q p.html >out.jsonl &&
	jq -e ".encoding == \"windows-1251\"" out.jsonl
'

test_expect_success PYTHON 'the HTTP Content-Type charset of a WARC response wins over <meta>' '
	for e in GB18030 BIG5 SHIFT_JIS EUC-KR CP1250 KOI8-R; do
		page $e "<meta charset=\"windows-1252\">" >expect &&
		iconv -f UTF-8 -t $e expect >body &&
		python3 - $e body <<-\EOF &&
		import sys
		enc, body = sys.argv[1], open(sys.argv[2], "rb").read()
		http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=\"%s\"\r\n\r\n" % enc.encode() + body
		h = b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://x/\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: %d\r\n\r\n" % len(http)
		open("t.warc", "wb").write(h + http + b"\r\n\r\n")
		EOF
		llm-cat -q t.warc >out.jsonl &&
		jq -j .text out.jsonl >got &&
		test_cmp expect got || { echo "header failed for $e"; exit 1; }
	done
'

test_expect_success 'gb2312 and GBK labels decode as GB18030, which has every character' '
	printf "<meta charset=gb2312><p>\344\270\255\346\226\207 \360\240\200\200 \342\202\254 \343\220\200</p>\n" >expect &&
	iconv -f UTF-8 -t GB18030 expect >gb.html &&
	llm-cat -q gb.html >out.jsonl &&
	jq -j .text out.jsonl >got && test_cmp expect got &&
	jq -e ".encoding == \"gb18030\"" out.jsonl &&
	sed "s/gb2312/GBK/" gb.html >gbk.html && llm-cat -q gbk.html >out2.jsonl &&
	jq -e ".encoding == \"gb18030\"" out2.jsonl
'

test_expect_success 'a byte order mark wins over the labels' '
	printf "\357\273\277<meta charset=gbk><p>\344\270\255\346\226\207</p>" >bom8.html &&
	llm-cat -q bom8.html >out.jsonl &&
	jq -e ".encoding == \"utf-8\" and .text == \"<meta charset=gbk><p>\\u4e2d\\u6587</p>\"" out.jsonl &&
	printf "<p>\344\270\255\346\226\207 text</p>" >u.html &&
	{ printf "\377\376"; iconv -f UTF-8 -t UTF-16LE u.html; } >le.html &&
	{ printf "\376\377"; iconv -f UTF-8 -t UTF-16BE u.html; } >be.html &&
	llm-cat -q le.html be.html >out.jsonl &&
	jq -r "[.encoding, .text] | join(\" \")" out.jsonl >got &&
	printf "utf-16le <p>\344\270\255\346\226\207 text</p>\nutf-16be <p>\344\270\255\346\226\207 text</p>\n" >expect &&
	test_cmp expect got
'

test_expect_success 'a legacy label on UTF-8 bytes is overruled; one stray byte is no reason to leave UTF-8' '
	printf "<meta charset=iso-8859-1><p>caf\303\251 cr\303\250me br\303\273l\303\251e na\303\257ve</p>" >stale.html &&
	llm-cat -q stale.html >out.jsonl &&
	jq -e ".encoding == \"utf-8\" and (.text | contains(\"caf\\u00e9 cr\\u00e8me\"))" out.jsonl &&
	printf "\344\270\255\346\226\207\347\232\204\346\226\207\346\234\254\344\270\255\346\226\207\347\232\204\346\226\207\346\234\254 \223quoted\224\n" >mixed.txt &&
	llm-cat --stats s.json mixed.txt >out.jsonl 2>/dev/null &&
	jq -e ".encoding == \"utf-8\" and (.text | startswith(\"\\u4e2d\\u6587\"))" out.jsonl &&
	jq -e ".counters.repaired_utf8 == 2" s.json
'

test_expect_success '--encoding NAME forces the decoding, --encoding auto is the default' '
	iconv -f UTF-8 -t CP1251 $TESTDATA/cat/enc/CP1251.txt >ru.txt &&
	llm-cat -q --encoding koi8-r ru.txt >forced.jsonl &&
	jq -e ".encoding == \"koi8-r\"" forced.jsonl &&
	jq -j .text forced.jsonl >got && iconv -f KOI8-R -t UTF-8 ru.txt >expect && test_cmp expect got &&
	llm-cat -q --encoding auto ru.txt >auto.jsonl && jq -e ".encoding == \"windows-1251\"" auto.jsonl &&
	llm-cat -q --encoding CP1251 ru.txt >cp.jsonl && jq -e ".encoding == \"windows-1251\"" cp.jsonl &&
	llm-cat -q --encoding IBM852 ru.txt >ibm.jsonl && jq -e ".encoding == \"ibm852\"" ibm.jsonl &&
	test_must_fail --code=2 llm-cat --encoding no-such-code ru.txt 2>err &&
	test_grep "llm-cat: --encoding: unknown encoding .no-such-code." err
'

test_expect_success '--lines and --paragraphs decide the encoding once per file' '
	iconv -f UTF-8 -t CP1250 $TESTDATA/cat/enc/CP1250.txt >cs.txt &&
	llm-cat -q --lines cs.txt >lines.jsonl &&
	jq -r .text lines.jsonl >got && test_cmp $TESTDATA/cat/enc/CP1250.txt got &&
	jq -e -s "all(.encoding == \"windows-1250\")" lines.jsonl
'

test_expect_success 'archive members are decoded like files' '
	mkdir m && page BIG5 "<meta charset=big5>" >expect &&
	iconv -f UTF-8 -t BIG5 expect >m/p.html &&
	iconv -f UTF-8 -t EUC-KR $TESTDATA/cat/enc/EUC-KR.txt >m/k.txt &&
	tar -cf m.tar m && llm-cat -q m.tar >out.jsonl &&
	jq -r "[.source, .encoding] | join(\" \")" out.jsonl | sort >got &&
	printf "m/k.txt euc-kr\nm/p.html big5\n" >expect2 && test_cmp expect2 got &&
	jq -j "select(.source == \"m/p.html\") | .text" out.jsonl >got && test_cmp expect got
'

test_expect_success 'the summary counts the documents per source encoding' '
	iconv -f UTF-8 -t GB18030 $TESTDATA/cat/enc/GB18030.txt >a.txt &&
	iconv -f UTF-8 -t BIG5 $TESTDATA/cat/enc/BIG5.txt >b.txt &&
	printf "plain\n" >c.txt &&
	llm-cat -q --stats s.json a.txt b.txt c.txt >out.jsonl &&
	jq -e ".counters.encoding_gb18030 == 1 and .counters.encoding_big5 == 1 and .counters[\"encoding_utf-8\"] == null" s.json
'

test_expect_success 'JSONL is UTF-8 by definition: records get no encoding field' '
	printf "{\"text\": \"a\"}\n" >in.jsonl && llm-cat -q in.jsonl >out.jsonl &&
	jq -e "has(\"encoding\") | not" out.jsonl
'

test_done
