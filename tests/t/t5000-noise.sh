#!/bin/sh
test_description='llm-noise: noised inputs beside clean labels, rates, determinism, confusions'
. "$(dirname "$0")/../lib.sh"

TS="python3 $TESTDATA/shard/tokstream.py"
GPT2=$TESTDATA/tokenize/hf_gpt2/tokenizer.json.zst
[ -f "$GPT2" ] && test_set_prereq GPT2

test_expect_success PYTHON 'setup: a token stream of 2000 documents' '
	$TS gen --docs 2000 --eos 50256 >corpus.tok &&
	$TS json corpus.tok >corpus.json && test_line_count = 2000 corpus.json
'

test_expect_success PYTHON 'labels unchanged, inputs added, metadata kept' '
	llm-noise --docs 0.5 --mask-id 3 corpus.tok >noised.tok &&
	$TS json noised.tok >noised.json &&
	python3 - <<-\EOF
	import json
	a = [json.loads(l) for l in open("corpus.json")]
	b = [json.loads(l) for l in open("noised.json")]
	assert len(a) == len(b)
	changed = 0
	for x, y in zip(a, b):
	    assert x["meta"] == y["meta"] and x["tokens"] == y["tokens"], x["meta"]
	    assert x["inputs"] is None and len(y["inputs"]) == len(y["tokens"])
	    changed += y["inputs"] != y["tokens"]
	assert 800 < changed < 1000, changed
	EOF
'

test_expect_success PYTHON 'rates within 6 standard deviations of the flags' '
	llm-noise --docs 0.4 --mask 0.05 --mask-id 3 --swap 0.1 --stats st.json \
		corpus.tok >n.tok &&
	python3 - <<-\EOF
	import json, math
	c = json.load(open("st.json"))["counters"]
	def near(hits, n, p, what):
	    sd = math.sqrt(p * (1 - p) / n)
	    assert abs(hits / n - p) <= 6 * sd, (what, hits, n, p)
	near(c["docs_noised"], 2000, 0.4, "docs")
	near(c["masked"], c["tokens_in_noised_docs"], 0.05, "mask")
	# swap draws: every position with a right neighbour that is not the second of a swap
	draws = c["tokens_in_noised_docs"] - c["docs_noised"] - c["swapped"]
	near(c["swapped"], draws, 0.1, "swap")
	assert c["tokens"] == sum(len(json.loads(l)["tokens"]) for l in open("corpus.json"))
	EOF
'

test_expect_success PYTHON 'deterministic: same output twice, same noise per document in any order' '
	llm-noise --docs 0.5 --mask-id 3 --seed 7 corpus.tok >a.tok &&
	llm-noise --docs 0.5 --mask-id 3 --seed 7 corpus.tok >b.tok &&
	cmp a.tok b.tok &&
	$TS reverse corpus.tok >rev.tok &&
	llm-noise --docs 0.5 --mask-id 3 --seed 7 rev.tok >r.tok &&
	$TS json a.tok | sort >a.json && $TS json r.tok | sort >r.json &&
	test_cmp a.json r.json &&
	llm-noise --docs 0.5 --mask-id 3 --seed 8 corpus.tok >c.tok &&
	! cmp -s a.tok c.tok
'

test_expect_success PYTHON 'documents without ids are keyed by their tokens' '
	$TS gen --docs 300 --no-ids >noid.tok &&
	$TS reverse noid.tok >noid-rev.tok &&
	llm-noise --docs 0.5 --mask-id 3 noid.tok >x.tok &&
	llm-noise --docs 0.5 --mask-id 3 noid-rev.tok >y.tok &&
	$TS json x.tok | sort >x.json && $TS json y.tok | sort >y.json &&
	test_cmp x.json y.json
'

test_expect_success PYTHON 'confusions as token ids: longest first, as a unit, left to right' '
	$TS gen --docs 200 --vocab 20 --maxlen 60 >small.tok &&
	printf "# homophones\n5 6\t7 8\n5\t9\n\n11\t12 13\n" >pairs.txt &&
	llm-noise --docs 1 --swap 0 --confuse 1 --confusions pairs.txt --stats cs.json \
		small.tok >conf.tok 2>err &&
	grep "1 pairs skipped" err &&
	$TS json small.tok >s.json && $TS json conf.tok >c.json &&
	python3 - <<-\EOF
	import json
	total = 0
	for x, y in zip(open("s.json"), open("c.json")):
	    lab, inp = json.loads(x)["tokens"], json.loads(y)["inputs"]
	    want, i = [], 0
	    while i < len(lab):
	        if lab[i:i + 2] == [5, 6]:
	            want += [7, 8]; i += 2; total += 1
	        elif lab[i] == 5:
	            want.append(9); i += 1; total += 1
	        else:
	            want.append(lab[i]); i += 1
	    assert inp == want, (lab, inp, want)
	assert json.load(open("cs.json"))["counters"]["confused"] == total > 0
	EOF
'

test_expect_success GPT2,PYTHON 'confusions as strings, encoded with the tokenizer' '
	$TS gen --docs 50 --vocab 50257 --tid 0 --plant 511 >g.tok &&
	printf " their\t there\n" >words.txt &&
	llm-noise --docs 1 --swap 0 --confuse 1 --confusions words.txt --tokenizer "$GPT2" \
		g.tok >gn.tok 2>err &&
	! grep skipped err &&
	$TS json gn.tok >gn.json &&
	python3 - <<-\EOF &&
	import json
	for l in open("gn.json"):
	    r = json.loads(l)  # GPT-2: " their" is 511, " there" is 612
	    assert r["tokens"][0] == 511 and r["inputs"][0] == 612, r["inputs"][:3]
	EOF
	$TS gen --docs 5 --tid 99 >other.tok &&
	test_must_fail llm-noise --confusions words.txt --tokenizer "$GPT2" other.tok >/dev/null 2>err &&
	grep "another tokenizer" err
'

test_expect_success PYTHON 'noising a noised stream starts from its inputs' '
	$TS gen --docs 100 --noised >pre.tok &&
	llm-noise --docs 0 pre.tok >same.tok &&
	cmp pre.tok same.tok
'

test_expect_success PYTHON 'a stream with no records gives a noised header only' '
	$TS gen --docs 0 >empty.tok &&
	llm-noise empty.tok >out.tok &&
	test $(wc -c <out.tok) = 32 &&
	test $(od -An -tu4 -j20 -N4 out.tok | tr -d " ") = 1
'

test_expect_success 'an empty file is not a token stream (exit 1)' '
	: >zero.tok &&
	test_must_fail llm-noise zero.tok >out 2>err &&
	grep "zero.tok: empty or truncated token stream header" err
'

test_expect_success PYTHON 'a truncated stream is an error naming record and offset' '
	head -c 5000 corpus.tok >cut.tok &&
	test_must_fail llm-noise --mask-id 3 cut.tok >out 2>err &&
	grep "cut.tok: record [0-9]* at byte [0-9]*: unexpected end of data" err
'

test_expect_success 'usage errors (exit 2)' '
	test_must_fail --code=2 llm-noise --mask 0.1 </dev/null 2>err &&
	grep "needs --mask-id" err &&
	test_must_fail --code=2 llm-noise --docs 2 </dev/null &&
	test_must_fail --code=2 llm-noise --tokenizer x </dev/null
'

test_expect_success PYTHON 'ids outside the vocabulary and bad confusion files (exit 1)' '
	test_must_fail llm-noise --mask-id 60000 corpus.tok >/dev/null 2>err &&
	grep "mask-id 60000 is not below the vocab size" err &&
	printf "1 2 3\n" >bad.txt &&
	test_must_fail llm-noise --confusions bad.txt corpus.tok >/dev/null 2>err &&
	grep "bad.txt:1: no tab" err &&
	printf "1\tx\n" >bad2.txt &&
	test_must_fail llm-noise --confusions bad2.txt corpus.tok >/dev/null 2>err &&
	grep "bad2.txt:1: not token ids" err
'

test_expect_success PYTHON 'a record whose metadata is not JSON is rejected with its tokens' '
	$TS head corpus.tok 30 >few.tok &&
	$TS setmeta few.tok 5 "{broken" >badm.tok &&
	llm-noise --docs 1 --rejects rej.jsonl --stats st.json -o out.tok badm.tok 2>err &&
	test_grep "^llm-noise: badm.tok:6: metadata is not a JSON object$" err &&
	$TS json badm.tok >badm.json &&
	$TS json out.tok >out.json &&
	test_line_count = 29 out.json &&
	python3 - <<-\EOF
	import json
	s = json.load(open("st.json"))
	assert (s["records_in"], s["records_out"], s["records_rejected"]) == (30, 29, 1), s
	assert s["rejected"] == {"bad_meta": 1}, s["rejected"]
	(r,) = [json.loads(l) for l in open("rej.jsonl")]
	src = [json.loads(l) for l in open("badm.json")]
	assert r["reject_reason"] == "bad_meta" and r["raw"] == "{broken"
	assert (r["source"], r["line"]) == ("badm.tok", 6) and r["tokens"] == src[5]["tokens"]
	out = [json.loads(l)["meta"] for l in open("out.json")]
	assert out == [x["meta"] for i, x in enumerate(src) if i != 5]
	EOF
'

test_expect_success PYTHON '--strict stops at the first bad record (exit 1), nothing written' '
	test_must_fail llm-noise --strict -o strict.tok few.tok badm.tok few.tok 2>err &&
	test_grep "^llm-noise: badm.tok:6: metadata is not a JSON object$" err &&
	test_must_fail test -e strict.tok &&
	llm-noise --strict -o strict.tok few.tok
'

test_expect_success NOT_ROOT,PYTHON 'an unreadable file (exit 1)' '
	cp corpus.tok locked.tok && chmod 000 locked.tok &&
	test_must_fail llm-noise locked.tok >/dev/null 2>err &&
	grep "locked.tok" err
'

test_expect_success PYTHON 'output to a full disk (exit 1)' '
	test_must_fail llm-noise --mask-id 3 -o /dev/full corpus.tok 2>err &&
	grep "/dev/full" err
'

test_expect_success PYTHON 'the EXAMPLES of llm-noise(1)' '
	printf "5 6\t7 8\n" >pairs.txt &&
	llm-noise --mask-id 50256 --seed 1 -o noised.tok corpus.tok &&
	llm-noise --docs 1 --swap 0 --confuse 0.5 --confusions pairs.txt corpus.tok >noised.tok &&
	llm-noise --mask-id 50256 corpus.tok | llm-shard -o shards --eos 50256 &&
	llm-shard --verify shards/manifest.json
'

test_done
