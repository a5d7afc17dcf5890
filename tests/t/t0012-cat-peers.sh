#!/bin/sh
test_description='llm-cat: datatrove and Dolma JSONL, their nested fields read as llmkit fields'
. "$(dirname "$0")/../lib.sh"

# datatrove-layout.jsonl: datatrove's JsonlWriter layout ({"text", "id", "metadata": {...}});
# its records: 1 metadata.domain "web"; 2 metadata.domain "news" under a top-level "domain"
# "web" and "lang" "en-GB"; 3 metadata.domain not a string; 4 metadata not an object, no id.
# The Dolma file: three documents of Dolma's own tests (id, text, source, added, created,
# metadata with url and language). tests/data/cat/NOTICE.md says where both come from.
DT=$TESTDATA/cat/datatrove-layout.jsonl
DOLMA=$TESTDATA/cat/dolma-cc_en_head-0091.head3.jsonl.gz

test_expect_success PYTHON 'datatrove: metadata.domain, .language, .url, .date become llmkit fields' '
	llm-cat -q --stats st.json "$DT" >out.jsonl &&
	python3 - "$DT" <<-\EOF
	import json, sys
	src = [json.loads(l) for l in open(sys.argv[1])]
	out = [json.loads(l) for l in open("out.jsonl")]
	assert len(out) == 4
	for s, o in zip(src, out):
	    # every member kept, in order and unchanged; llmkit fields added after them
	    assert list(o)[:len(s)] == list(s) and all(o[k] == s[k] for k in s), o
	m = src[0]["metadata"]
	assert [out[0].get(k) for k in ("domain", "lang", "url", "date")] == ["web", "en", m["url"], m["date"]]
	# top-level fields win over nested ones
	assert (out[1]["domain"], out[1]["lang"]) == ("web", "en-GB")
	assert out[1]["url"] == src[1]["metadata"]["url"]
	# only strings are taken: no domain from a number, nothing from a metadata string
	assert "domain" not in out[2] and out[2]["lang"] == "en"
	assert set(out[3]) == {"text", "metadata", "id"}
	s = json.load(open("st.json"))
	assert {d: v["records_in"] for d, v in s["domains"].items()} == {"web": 2, "unknown": 2}, s["domains"]
	assert s["languages"]["en"]["records_in"] == 2 and s["languages"]["en-GB"]["records_in"] == 1
	EOF
'

test_expect_success PYTHON 'datatrove: --domain and --lang stamp only what neither level has' '
	llm-cat -q --domain books --lang de "$DT" >stamped.jsonl &&
	python3 - <<-\EOF
	import json
	out = [json.loads(l) for l in open("stamped.jsonl")]
	assert [o["domain"] for o in out] == ["web", "web", "books", "books"], out
	assert [o["lang"] for o in out] == ["en", "en-GB", "en", "de"]
	EOF
'

test_expect_success PYTHON 'Dolma: created is the date, metadata.url and .language are read, ids kept' '
	llm-cat -q "$DOLMA" >dolma.jsonl &&
	gzip -dc "$DOLMA" >dolma-in.jsonl &&
	python3 - <<-\EOF
	import json
	src = [json.loads(l) for l in open("dolma-in.jsonl")]
	out = [json.loads(l) for l in open("dolma.jsonl")]
	assert len(out) == len(src) == 3
	for s, o in zip(src, out):
	    assert all(o[k] == s[k] for k in s) and o["id"] == s["id"] and o["source"] == "common-crawl"
	    assert (o["lang"], o["url"], o["date"]) == (s["metadata"]["language"], s["metadata"]["url"], s["created"])
	    assert "domain" not in o and set(o) - set(s) == {"lang", "url", "date"}
	EOF
'

test_expect_success 'a record already in llmkit fields passes through byte for byte' '
	printf "{\"text\": \"x\", \"id\": \"a\", \"date\": \"2020\", \"metadata\": {\"date\": \"1999\"}, \"created\": \"1998\"}\n" >own.jsonl &&
	llm-cat -q own.jsonl >own.out &&
	test_cmp own.jsonl own.out
'

test_expect_success PYTHON 'llm-clean judges datatrove documents by their own domain' '
	llm-cat -q "$DT" | llm-clean -q --stats clean.json >/dev/null &&
	python3 -c "import json; d = json.load(open(\"clean.json\"))[\"domains\"]; assert d[\"web\"][\"records_in\"] == 2, d"
'

test_done
