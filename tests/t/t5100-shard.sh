#!/bin/sh
test_description='llm-shard: round trip, split, truncation, corruption, atomicity, exports'
. "$(dirname "$0")/../lib.sh"

TS="python3 $TESTDATA/shard/tokstream.py"
GPT2=$TESTDATA/tokenize/hf_gpt2/tokenizer.json.zst
[ -f "$GPT2" ] && [ -x "$TOP/bin/llm-tokenize" ] && test_set_prereq TOKENIZE

test_expect_success PYTHON 'setup: token streams (half the documents end with EOS)' '
	$TS gen --docs 2000 --eos 50256 >corpus.tok &&
	$TS gen --docs 3000 --eos 50256 --lenscale web:100,news:1000,code:300 --seed 2 >mixed.tok &&
	$TS gen --docs 500 --eos 50256 --noised --seed 3 >noised.tok
'

test_expect_success PYTHON 'round trip: --dump gives back the stream byte for byte' '
	llm-shard -o rt --val-fraction 0 --eos 50256 corpus.tok &&
	test -f rt/gen-1/train-00000.bin && test -f rt/manifest.json && ! test -e rt/gen-1/val-00000.bin &&
	llm-shard --dump rt/manifest.json >back.tok &&
	cmp corpus.tok back.tok &&
	llm-shard --dump rt/gen-1/train-00000.bin >back2.tok &&
	cmp corpus.tok back2.tok
'

test_expect_success PYTHON 'round trip of noised inputs, and to JSONL' '
	llm-shard -o rn --val-fraction 0 --eos 50256 noised.tok &&
	llm-shard --dump -o back.tok rn/manifest.json &&
	cmp noised.tok back.tok &&
	llm-shard --dump --format jsonl rn/manifest.json >back.jsonl &&
	$TS json noised.tok >want.json &&
	python3 - <<-\EOF
	import json
	for w, g in zip(open("want.json"), open("back.jsonl")):
	    w, g = json.loads(w), json.loads(g)
	    meta = json.loads(w["meta"])
	    assert g["tokens"] == w["tokens"] and g["inputs"] == w["inputs"]
	    assert all(g[k] == v for k, v in meta.items())
	EOF
'

test_expect_success PYTHON 'shards hold each document once, ending in EOS; rotation by size' '
	llm-shard -o small --val-fraction 0 --eos 50256 --shard-size 64K corpus.tok &&
	ls small/gen-1/train-*.bin >list && test_line_count -gt 5 list &&
	for f in small/gen-1/train-*.bin; do test $(wc -c <$f) -le 65536 || exit 1; done &&
	llm-shard --dump small/manifest.json >back.tok &&
	cmp corpus.tok back.tok &&
	llm-shard --verify small/manifest.json >ok.txt &&
	test_line_count = $(wc -l <list) ok.txt &&
	python3 - <<-\EOF
	import glob, struct
	for f in glob.glob("small/gen-1/train-*.bin"):
	    d = open(f, "rb").read()
	    docs, ntok = struct.unpack_from("<QQ", d, 32)
	    toff = struct.unpack_from("<Q", d, 64 + 8)[0]
	    ooff = struct.unpack_from("<Q", d, 96 + 8)[0]
	    offs = struct.unpack_from("<%dQ" % (docs + 1), d, ooff)
	    for e in offs[1:]:
	        assert struct.unpack_from("<H", d, toff + 2 * (e - 1))[0] == 50256
	EOF
'

test_expect_success PYTHON 'split by document id: deterministic, disjoint, order independent' '
	llm-shard -o s1 --val-fraction 0.3 --eos 50256 corpus.tok &&
	llm-shard -o s2 --val-fraction 0.3 --eos 50256 corpus.tok &&
	cmp s1/gen-1/train-00000.bin s2/gen-1/train-00000.bin && cmp s1/gen-1/val-00000.bin s2/gen-1/val-00000.bin &&
	$TS reverse corpus.tok >rev.tok &&
	llm-shard -o s3 --val-fraction 0.3 --eos 50256 --shard-size 32K rev.tok &&
	for d in s1 s3; do
		for sp in train val; do
			llm-shard --dump --format jsonl $d/gen-1/$sp-*.bin | sed "s/.*\"id\": \"\([^\"]*\)\".*/\1/" |
				sort >$d.$sp || exit 1
		done
	done &&
	test_cmp s1.val s3.val && test_cmp s1.train s3.train &&
	test -z "$(comm -12 s1.train s1.val)" &&
	test $(cat s1.train s1.val | wc -l) = 2000 &&
	n=$(wc -l <s1.val) && test $n -gt 520 && test $n -lt 680 &&
	llm-shard -o s4 --val-fraction 0.3 --seed 1 --eos 50256 corpus.tok &&
	! cmp -s s1/gen-1/val-00000.bin s4/gen-1/val-00000.bin
'

test_expect_success PYTHON 'a flipped byte is reported with its section and shard (exit 1)' '
	cp -r rt bad &&
	off=$(llm-shard --info bad/gen-1/train-00000.bin | awk "/section meta /{print \$4}") &&
	printf "X" | dd of=bad/gen-1/train-00000.bin bs=1 seek=$((off + 10)) conv=notrunc 2>/dev/null &&
	test_must_fail llm-shard --verify bad/gen-1/train-00000.bin >out 2>err &&
	grep "bad/gen-1/train-00000.bin: section .meta.: checksum mismatch" err &&
	test_must_fail llm-shard --verify bad/manifest.json >out 2>err &&
	grep "bad/gen-1/train-00000.bin: section .meta.: checksum mismatch" err &&
	cp rt/gen-1/train-00000.bin bad/gen-1/ &&
	printf "\377" | dd of=bad/gen-1/train-00000.bin bs=1 seek=5000 conv=notrunc 2>/dev/null &&
	test_must_fail llm-shard --verify bad/manifest.json >out 2>err &&
	grep "section .tokens.: checksum mismatch" err &&
	cp rt/gen-1/train-00000.bin bad/gen-1/ &&
	printf "\377" | dd of=bad/gen-1/train-00000.bin bs=1 seek=17 conv=notrunc 2>/dev/null &&
	test_must_fail llm-shard --info bad/gen-1/train-00000.bin >out 2>err &&
	grep "bad/gen-1/train-00000.bin: header: checksum mismatch" err
'

test_expect_success PYTHON 'a valid shard that is not the one in the manifest is caught' '
	cp -r s1 swap && cp swap/gen-1/val-00000.bin swap/gen-1/train-00000.bin &&
	llm-shard --verify swap/gen-1/train-00000.bin &&
	test_must_fail llm-shard --verify swap/manifest.json >out 2>err &&
	grep "swap/gen-1/train-00000.bin: differs from its manifest" err
'

test_expect_success PYTHON '--verify checks every field of the manifest against the shards' '
	llm-shard -q -o vf --val-fraction 0.2 --eos 50256 corpus.tok &&
	llm-shard --verify vf/manifest.json >/dev/null &&
	bad() { # bad NAME PYTHON-EXPR-ON-m MESSAGE
		python3 -c "import json; m = json.load(open(\"vf/manifest.json\")); $2; json.dump(m, open(\"vf/$1.json\", \"w\"))" &&
		test_must_fail llm-shard --verify vf/$1.json >out 2>err &&
		test_grep "$3" err || { echo "case $1" >&2; return 1; }
	} &&
	bad vocab "m[\"vocab_size\"] = 50258" "differs from its manifest: vocab_size" &&
	bad width "m[\"token_width\"] = 4" "differs from its manifest: token_width" &&
	bad version "m[\"version\"] = 2" "manifest version 2" &&
	bad tokenizer "m[\"tokenizer_id\"] = \"0000000000001235\"" "differs from its manifest: tokenizer_id" &&
	bad eos "m[\"eos_id\"] = 7" "differs from its manifest: eos_id" &&
	bad noised "m[\"noised\"] = True" "differs from its manifest: noised" &&
	bad bytes "m[\"shards\"][0][\"bytes\"] += 1" "differs from its manifest: size in bytes" &&
	bad twice "m[\"shards\"].append(dict(m[\"shards\"][0]))" "listed twice" &&
	bad split "m[\"splits\"][\"val\"][\"documents\"] += 1" "val split.s documents or tokens are not the sum over its shards" &&
	bad domain "d = next(iter(m[\"domains\"].values())); d[\"train_tokens\"] += 1" "sum over its domains" &&
	bad abs "m[\"shards\"][0][\"file\"] = \"/etc/passwd\"" "is not a name inside the manifest.s directory" &&
	bad up "m[\"shards\"][0][\"file\"] = \"../../etc/passwd\"" "is not a name inside" &&
	bad mid "m[\"shards\"][0][\"file\"] = \"gen-1/../../x.bin\"" "is not a name inside" &&
	bad empty "m[\"shards\"][0][\"file\"] = \"gen-1//train-00000.bin\"" "is not a name inside"
'

test_expect_success PYTHON 'killed llm-shard leaves no shard or manifest under its final name' '
	# A byte-count handshake, not a delay: once cat has pushed the stream through the FIFO,
	# llm-shard has read it, and it cannot finish while the FIFO stays open for writing.
	$TS head corpus.tok 1500 >part.tok &&
	for sig in KILL TERM INT HUP; do
		rm -rf k fifo && mkdir k && mkfifo fifo &&
		{ llm-shard -o k --val-fraction 0 --eos 50256 fifo 2>/dev/null & } && pid=$! &&
		exec 3>fifo && cat part.tok >&3 &&
		kill -$sig $pid && { wait $pid; test $? -gt 128; } && exec 3>&- &&
		! test -e k/manifest.json && test -z "$(ls -A k | grep -v "^gen-1$")" &&
		test -z "$(find k -name "*.bin" -o -name "*llmtmp*")" || exit 1
	done &&
	llm-shard -q -o k --val-fraction 0 --eos 50256 part.tok &&
	printf "gen-1\nmanifest.json\n" >want.ls && ls -A k >got.ls && test_cmp want.ls got.ls
'

test_expect_success PYTHON 'truncation from a first pass, a spooled pipe and saved sketches agree' '
	llm-shard -o t1 --val-fraction 0 --eos 50256 --truncate-quantile 0.9 --stats t1.json mixed.tok &&
	cat mixed.tok | llm-shard -o t2 --val-fraction 0 --eos 50256 --truncate-quantile 0.9 &&
	$TS sketch mixed.tok 0.005 >sk.json &&
	llm-shard -o t3 --val-fraction 0 --eos 50256 --truncate-quantile 0.9 --sketches sk.json \
		<mixed.tok &&
	printf "gen-1\nmanifest.json\n" >want.ls && ls -A t2 >got.ls && test_cmp want.ls got.ls &&
	for d in t1 t2 t3; do llm-shard --info $d/manifest.json | grep "cut at" >$d.cut || exit 1; done &&
	test_line_count = 3 t1.cut && test_cmp t1.cut t2.cut && test_cmp t1.cut t3.cut &&
	cmp t1/gen-1/train-00000.bin t3/gen-1/train-00000.bin &&
	llm-shard --dump --format jsonl t1/manifest.json >cut.jsonl &&
	$TS json mixed.tok >full.json &&
	python3 - <<-\EOF
	import json, math
	st = json.load(open("t1.json"))
	cut = st["truncate_at"]
	lens = {}
	for l in open("full.json"):
	    r = json.loads(l)
	    lens.setdefault(json.loads(r["meta"])["domain"], []).append(len(r["tokens"]))
	ntrunc = 0
	for dom, v in lens.items():
	    v.sort()
	    exact = v[math.ceil(0.9 * len(v)) - 1]
	    assert abs(cut[dom] - exact) <= 0.005 * exact + 1, (dom, cut[dom], exact)
	    over = sum(x > cut[dom] for x in v)
	    assert st["domains"][dom]["counters"]["truncated"] == over
	    assert st["domains"][dom]["counters"]["truncated_tokens"] == sum(x - cut[dom] for x in v if x > cut[dom])
	    ntrunc += over
	assert cut["web"] < cut["code"] < cut["news"], cut
	assert st["counters"]["truncated"] == ntrunc
	for w, g in zip(open("full.json"), open("cut.jsonl")):
	    w, g = json.loads(w), json.loads(g)
	    c = cut[g["domain"]]
	    assert g["tokens"] == w["tokens"][:c], g["id"]
	EOF
'

test_expect_success TOKENIZE 'after llm-tokenize: its saved sketches cut where a first pass cuts' '
	{ head -n 100 "$SAMPLES/corpus/wiki.jsonl"; head -n 100 "$SAMPLES/corpus/news.jsonl"; } >docs.jsonl &&
	llm-tokenize -q -t "$GPT2" --stats tok-stats.json -o docs.tok docs.jsonl &&
	llm-shard -q -o k1 --tokenizer "$GPT2" --truncate-quantile 0.9 --sketches tok-stats.json docs.tok &&
	llm-shard -q -o k2 --tokenizer "$GPT2" --truncate-quantile 0.9 docs.tok &&
	llm-shard --info k1/manifest.json | grep "cut at" >k1.cut && test_line_count = 2 k1.cut &&
	llm-shard --info k2/manifest.json | grep "cut at" >k2.cut && test_cmp k1.cut k2.cut &&
	cmp k1/gen-1/train-00000.bin k2/gen-1/train-00000.bin &&
	grep "\"eos_id\": 50256" k1/manifest.json
'

test_expect_success PYTHON 'exports match Megatron, llm.c and nanoGPT layouts' '
	llm-shard -o ref --val-fraction 0.2 --eos 50256 corpus.tok &&
	llm-shard --dump --format jsonl ref/gen-1/train-00000.bin >ref.train &&
	llm-shard --dump --format jsonl ref/gen-1/val-00000.bin >ref.val &&
	python3 - <<-\EOF &&
	import json
	for sp in ("train", "val"):
	    with open("want." + sp, "w") as out, open("ref." + sp) as f:
	        for l in f:
	            t = json.loads(l)["tokens"]
	            out.write(json.dumps(t if t[-1:] == [50256] else t + [50256]) + "\n")
	EOF
	llm-shard --format megatron -o mg --val-fraction 0.2 --eos 50256 corpus.tok &&
	ls mg >files && printf "train.bin\ntrain.idx\nval.bin\nval.idx\n" >want && test_cmp want files &&
	$TS megatron mg/train >got.train && test_cmp want.train got.train &&
	$TS megatron mg/val >got.val && test_cmp want.val got.val &&
	llm-shard --format llmc -o lc --val-fraction 0.2 --eos 50256 corpus.tok &&
	$TS llmc lc/train_000000.bin >got &&
	python3 -c "import json; print(json.dumps([t for l in open(\"want.train\") for t in json.loads(l)]))" >flat &&
	test_cmp flat got &&
	llm-shard --format raw -o raw --val-fraction 0.2 --eos 50256 noised.tok 2>err &&
	grep "noised inputs are not exported" err &&
	test $(($(wc -c <raw/train.bin) + $(wc -c <raw/val.bin))) -gt 0 &&
	llm-shard --format llmc -o lc2 --shard-size 64K --val-fraction 0 --eos 50256 corpus.tok &&
	ls lc2/train_*.bin >l && test_line_count -gt 5 l &&
	# the 1024-byte header counts against --shard-size: no file over 64 KiB
	for f in lc2/train_*.bin; do test $(wc -c <"$f") -le 65536 || return 1; done
'

test_expect_success PYTHON,NO_SAN 'memory does not grow with the input (ASan quarantine would)' '
	$TS repeat corpus.tok 15 >x15.tok && $TS repeat corpus.tok 60 >x60.tok &&
	python3 - <<-\EOF
	import resource, subprocess
	def peak(f):
	    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
	    subprocess.run(["llm-shard", "-q", "-o", "mem-" + f, "--eos", "50256",
	                    "--shard-size", "4M", "--truncate-quantile", "0.99", f], check=True)
	    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before
	small, _ = peak("x15.tok")     # 11 MB of input
	large, _ = peak("x60.tok")     # 43 MB of input
	# ru_maxrss of children is the largest child so far: the large run may not exceed the
	# small one by more than a few MB of allocator noise
	assert large < small + 4096, (small, large)
	EOF
'

test_expect_success PYTHON 'a stream without records is an error: no dataset of nothing' '
	$TS gen --docs 0 >empty.tok &&
	test_must_fail llm-shard -o e empty.tok 2>err &&
	test_grep "no documents in the input" err &&
	! test -e e/manifest.json && test -z "$(ls -A e)" &&
	test_must_fail llm-shard -o e --format raw empty.tok 2>err && test -z "$(ls -A e)" &&
	llm-shard -q -o e --val-fraction 0 --eos 50256 corpus.tok &&
	test_must_fail llm-shard -o e empty.tok 2>err && llm-shard --verify e/manifest.json >/dev/null
'

test_expect_success PYTHON 'a truncated stream exits 1 naming the record and writes no manifest' '
	head -c 100000 corpus.tok >cut.tok &&
	test_must_fail llm-shard -o tr --val-fraction 0 cut.tok 2>err &&
	grep "cut.tok: record [0-9]* at byte [0-9]*" err &&
	! test -e tr/manifest.json && test -z "$(ls -A tr)"
'

test_expect_success PYTHON 'a rerun replaces the dataset whole: no stale shard, the old one kept on failure' '
	llm-shard -q -o re --val-fraction 0 --eos 50256 --shard-size 32K corpus.tok &&
	llm-shard --dump re/manifest.json | cmp - corpus.tok &&
	$TS head corpus.tok 100 >few.tok &&
	test_must_fail llm-shard -q -o re --val-fraction 0 --eos 50256 cut.tok &&
	llm-shard --verify re/manifest.json >/dev/null && llm-shard --dump re/manifest.json | cmp - corpus.tok &&
	printf "gen-1\nmanifest.json\n" >want.ls && ls -A re >got.ls && test_cmp want.ls got.ls &&
	llm-shard -q -o re --val-fraction 0 --eos 50256 --shard-size 32K few.tok &&
	llm-shard --dump re/manifest.json | cmp - few.tok &&
	printf "gen-2\nmanifest.json\n" >want.ls && ls -A re >got.ls && test_cmp want.ls got.ls &&
	llm-shard --info re/manifest.json | grep "^  train gen-2/train-00000.bin:"
'

test_expect_success PYTHON 'a dataset of the flat layout is replaced, its shards removed, others kept' '
	mkdir flatds && cp rt/gen-1/train-00000.bin flatds/ && cp rt/gen-1/train-00000.bin flatds/train-00007.bin &&
	sed "s#gen-1/train-00000.bin#train-00000.bin#" rt/manifest.json >flatds/manifest.json &&
	llm-shard --verify flatds/manifest.json >/dev/null &&
	echo mine >flatds/notes.txt && echo "not a shard" >flatds/val-00001.bin &&
	llm-shard -q -o flatds --val-fraction 0 --eos 50256 few.tok &&
	printf "gen-1\nmanifest.json\nnotes.txt\nval-00001.bin\n" >want.ls && ls -A flatds >got.ls &&
	test_cmp want.ls got.ls && llm-shard --dump flatds/manifest.json | cmp - few.tok
'

test_expect_success PYTHON 'a dataset being written is locked: a second writer exits 1' '
	llm-shard -q -o lk --val-fraction 0 --eos 50256 few.tok &&
	test_must_fail flock lk llm-shard -q -o lk --val-fraction 0 --eos 50256 corpus.tok 2>err &&
	test_grep "lk: another llm-shard is writing this dataset" err &&
	llm-shard --dump lk/manifest.json | cmp - few.tok
'

test_expect_success PYTHON 'records in = out, per-domain counts in --stats and the manifest' '
	llm-shard -o st --val-fraction 0.1 --eos 50256 --stats stats.json corpus.tok &&
	python3 - <<-\EOF
	import json
	s = json.load(open("stats.json")); m = json.load(open("st/manifest.json"))
	assert s["records_in"] == s["records_out"] == 2000 and s["records_rejected"] == 0
	assert s["counters"]["val"] == m["splits"]["val"]["documents"]
	assert sum(d["train_documents"] + d["val_documents"] for d in m["domains"].values()) == 2000
	assert sum(x["tokens"] for x in m["shards"]) == sum(m["splits"][k]["tokens"] for k in m["splits"])
	assert m["eos_id"] == 50256 and m["tokenizer_id"] == "0000000000001234"
	assert m["commands"][0].startswith("llm-shard -o st")
	EOF
'

test_expect_success PYTHON 'bytes in --stats are the records as stored, noised inputs included' '
	llm-shard -o sb --stats plain.json corpus.tok &&
	llm-shard -o sn --stats noised.json noised.tok &&
	llm-shard -o sm --format megatron --stats mg.json noised.tok 2>/dev/null &&
	python3 - <<-\EOF
	import json, os
	for stats, tok in (("plain.json", "corpus.tok"), ("noised.json", "noised.tok"), ("mg.json", "noised.tok")):
	    s = json.load(open(stats))
	    assert s["bytes_in"] == s["bytes_out"] == os.path.getsize(tok) - 32, (stats, s["bytes_in"])
	EOF
'

test_expect_success PYTHON 'a bad record is rejected with its reason and tokens: in = out + rejected' '
	$TS gen --docs 40 --eos 50256 --seed 5 --noised >good.tok &&
	$TS setmeta good.tok 3 "not json" >bad1.tok &&
	$TS setmeta bad1.tok 7 "{\"id\": \"x7\", \"domain\": \"web\", \"weight\": \"heavy\"}" >bad.tok &&
	llm-shard -o rj --eos 50256 --rejects rej.jsonl --stats rj.json bad.tok 2>err &&
	test_grep "^llm-shard: bad.tok:4: metadata is not a JSON object$" err &&
	test_grep "^llm-shard: bad.tok:8: \"weight\" is not a finite number$" err &&
	$TS json bad.tok >bad.json &&
	python3 - <<-\EOF
	import json
	s = json.load(open("rj.json"))
	assert (s["records_in"], s["records_out"], s["records_rejected"]) == (40, 38, 2), s
	assert s["rejected"] == {"bad_meta": 1, "bad_weight": 1}, s["rejected"]
	recs = [json.loads(l) for l in open("bad.json")]
	rej = [json.loads(l) for l in open("rej.jsonl")]
	assert len(rej) == 2
	a, b = rej
	assert a["reject_reason"] == "bad_meta" and a["raw"] == "not json"
	assert (a["source"], a["line"]) == ("bad.tok", 4)
	assert a["tokens"] == recs[3]["tokens"] and a["inputs"] == recs[3]["inputs"]
	assert b["reject_reason"] == "bad_weight" and b["id"] == "x7" and b["weight"] == "heavy"
	assert b["tokens"] == recs[7]["tokens"] and b["inputs"] == recs[7]["inputs"]
	m = json.load(open("rj/manifest.json"))
	assert sum(v["documents"] for v in m["splits"].values()) == 38
	EOF
'

test_expect_success PYTHON '--strict stops at the first bad record (exit 1), the old dataset stays' '
	llm-shard -q -o st --eos 50256 good.tok &&
	llm-shard --dump st/manifest.json >before.tok &&
	test_must_fail llm-shard -q -o st --eos 50256 --strict good.tok bad.tok good.tok 2>err &&
	test_grep "^llm-shard: bad.tok:4: metadata is not a JSON object$" err &&
	test_must_fail grep -q "bad.tok:8" err &&
	llm-shard --dump st/manifest.json | cmp - before.tok &&
	test_must_fail llm-shard -q -o sx --format raw --eos 50256 --strict bad.tok 2>err &&
	test_grep "bad.tok:4: metadata is not a JSON object" err &&
	test_must_fail test -e sx/train.bin &&
	llm-shard -q -o ok --eos 50256 --strict good.tok
'

test_expect_success 'usage errors (exit 2)' '
	test_must_fail --code=2 llm-shard </dev/null 2>err && grep "\-o DIR is required" err &&
	test_must_fail --code=2 llm-shard -o x --format parquet </dev/null &&
	test_must_fail --code=2 llm-shard --info </dev/null &&
	test_must_fail --code=2 llm-shard --verify --format jsonl x </dev/null &&
	test_must_fail --code=2 llm-shard -o x --sketches s.json </dev/null &&
	test_must_fail --code=2 llm-shard -o x --val-fraction 1.5 </dev/null &&
	test_must_fail --code=2 llm-shard -o x --shard-size 1K </dev/null &&
	test_must_fail --code=2 llm-shard --verify --strict x 2>err && test_grep "are for writing" err &&
	test_must_fail --code=2 llm-shard --info --rejects r.jsonl x
'

test_expect_success 'runtime errors (exit 1): missing, unreadable, not a shard, full disk' '
	test_must_fail llm-shard --info nosuch.bin 2>err && grep "nosuch.bin" err &&
	: >zero.tok && test_must_fail llm-shard -o z zero.tok 2>err &&
	grep "zero.tok: empty or truncated token stream header" err &&
	echo "{}" >m.json && test_must_fail llm-shard --verify m.json 2>err &&
	grep "m.json: not an llmkit shard manifest" err
'

test_expect_success PYTHON 'dump to a full disk (exit 1)' '
	test_must_fail llm-shard --dump -o /dev/full rt/manifest.json 2>err && grep "/dev/full" err
'

test_expect_success NOT_ROOT,PYTHON 'an unreadable input (exit 1)' '
	cp corpus.tok locked.tok && chmod 000 locked.tok &&
	test_must_fail llm-shard -o u locked.tok 2>err && grep "locked.tok" err
'

test_expect_success PYTHON 'the EXAMPLES of llm-shard(1)' '
	$TS sketch corpus.tok 0.005 >tokenize-stats.json &&
	rm -rf shards megatron llmc &&
	llm-shard -o shards --eos 50256 corpus.tok &&
	llm-shard -o shards --eos 50256 --truncate-quantile 0.995 \
	    --sketches tokenize-stats.json corpus.tok &&
	llm-shard --verify shards/manifest.json &&
	llm-shard --info shards/manifest.json &&
	llm-shard --dump --format jsonl shards/manifest.json >docs.jsonl &&
	llm-shard --format megatron -o megatron --eos 50256 corpus.tok &&
	llm-shard --format llmc -o llmc --eos 50256 corpus.tok &&
	test_line_count = 2000 docs.jsonl
'

test_done
