#!/bin/sh
test_description='llm-tokenize train: the same tokenizer as ever when nothing is pruned; --memory spills,
prunes the rarest pieces and reports them exactly; --tmpdir'
. "$(dirname "$0")/../lib.sh"

C=$SAMPLES/corpus

# The GPT-2 pieces of every document, counted in Python (the regex module, else the pre-tokenizer
# of Hugging Face tokenizers), checked against the "train" member of a --stats file.
python3 -c 'import regex' 2>/dev/null && test_set_prereq PIECES
python3 -c 'import tokenizers' 2>/dev/null && test_set_prereq PIECES && test_set_prereq HF_TOKENIZERS
check_report() {
	python3 - "$@" <<-\EOF
	import collections, json, sys
	try:
	    import regex
	    pat = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
	    split = pat.findall
	    nbytes = lambda p: len(p.encode("utf-8", "surrogatepass"))
	except ImportError:
	    from tokenizers.pre_tokenizers import ByteLevel
	    bl = ByteLevel(add_prefix_space=False, use_regex=True)
	    split = lambda t: [p for p, _ in bl.pre_tokenize_str(t)]
	    nbytes = len  # byte-level pieces: one character per byte
	c = collections.Counter()
	for f in sys.argv[2:]:
	    for line in open(f, encoding="utf-8"):
	        c.update(split(json.loads(line)["text"]))
	st = json.load(open(sys.argv[1]))["train"]
	t = st["min_count"]
	want = (len(c), sum(c.values()), sum(v * nbytes(p) for p, v in c.items()),
	        sum(1 for v in c.values() if v < t), sum(v for v in c.values() if v < t),
	        sum(v * nbytes(p) for p, v in c.items() if v < t))
	got = (st["pieces"], st["occurrences"], st["bytes"], st["pruned_pieces"],
	       st["pruned_occurrences"], st["pruned_bytes"])
	assert got == want, (got, want)
	assert abs(st["pruned_fraction"] - want[4] / want[1]) < 1e-12
	print("pieces %d, pruned %d below %d" % (want[0], want[3], t))
	EOF
}
# same_texts A B: the two JSONL files hold the same "text" fields, line by line.
same_texts() {
	python3 -c '
import json, sys
t = lambda f: [json.loads(l)["text"] for l in open(f, encoding="utf-8")]
assert t(sys.argv[1]) == t(sys.argv[2])
' "$1" "$2"
}
# stat FILE KEY: a number of the "train" member.
stat() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["train"][sys.argv[2]])' "$1" "$2"; }

test_expect_success 'setup' '
	{ head -n 100 $C/wiki.jsonl; head -n 100 $C/qa.jsonl; head -n 100 $C/books.jsonl; } >docs.jsonl &&
	cat $C/*.jsonl >all.jsonl && mkdir tmp
'

# The digest of the tokenizer that llm-tokenize trained on these documents (GPT-2's pattern,
# the default then) before it had --memory: counting, spilling or pruning nothing must not
# change a byte.
test_expect_success 'nothing pruned: the same tokenizer as before --memory existed' '
	llm-tokenize train -q --pattern gpt2 --vocab-size 2000 -o tok.json docs.jsonl &&
	echo "da71750a88cdac31539a9b362b9f07dd6fec0eaa0a4aabab6c7504721804ab64  tok.json" >want &&
	sha256sum tok.json >got && test_cmp want got &&
	llm-tokenize train --pattern gpt2 --vocab-size 2000 --memory 1G --stats st.json -o tok1g.json docs.jsonl 2>err &&
	cmp tok.json tok1g.json &&
	test_grep "29595 distinct pieces, 849771 occurrences; none pruned" err &&
	test "$(stat st.json pruned_pieces) $(stat st.json runs) $(stat st.json min_count)" = "0 0 1"
'

test_expect_success '--memory 1M on all samples: spills, prunes, trains a loadable tokenizer' '
	llm-tokenize train --pattern gpt2 --memory 1M --tmpdir tmp --vocab-size 4000 --stats st1.json \
		-o small.json --tiktoken small.tiktoken all.jsonl 2>err &&
	test_grep "pruned [0-9]* pieces seen fewer than [0-9]* times ([0-9.]*% of occurrences, [0-9.]*% of bytes) to fit --memory; [0-9]* runs spilled" err &&
	test "$(stat st1.json runs)" -gt 1 &&
	test "$(stat st1.json pruned_pieces)" -gt 0 &&
	# the budget, passed by at most an eighth of one array (bpe_train.h)
	test "$(stat st1.json peak_memory)" -le $((1048576 * 9 / 8)) &&
	test -z "$(ls tmp)" &&
	llm-tokenize -q -t small.json docs.jsonl -o d.tok &&
	llm-tokenize decode -q -t small.json d.tok >back.jsonl &&
	same_texts docs.jsonl back.jsonl &&
	llm-tokenize -q -t small.tiktoken -e gpt2 --no-eos -f jsonl docs.jsonl >viatk &&
	llm-tokenize -q -t small.json --no-eos -f jsonl docs.jsonl >viahf && test_cmp viahf viatk
'

test_expect_success PIECES 'the pruning report is exact (pieces counted in Python)' '
	check_report st.json docs.jsonl &&
	llm-tokenize train -q --pattern gpt2 --memory 1M --vocab-size 2000 --stats st2.json -o tok2.json docs.jsonl &&
	test "$(stat st2.json runs)" -gt 0 && test "$(stat st2.json pruned_pieces)" -gt 0 &&
	check_report st2.json docs.jsonl &&
	llm-tokenize train -q --pattern gpt2 --memory 3M --vocab-size 2000 --stats st4.json -o tok4.json docs.jsonl &&
	test "$(stat st4.json runs)" = 0 && test "$(stat st4.json pruned_pieces)" -gt 0 &&
	check_report st4.json docs.jsonl
'

test_expect_success HF_TOKENIZERS 'Hugging Face tokenizers loads the pruned tokenizer and encodes identically' '
	llm-tokenize -q -t small.json --no-eos -f jsonl --meta id docs.jsonl >ours &&
	python3 - <<-\EOF
	import json
	from tokenizers import Tokenizer
	tk = Tokenizer.from_file("small.json")
	n = json.load(open("st1.json"))["train"]["vocab_size"]
	assert tk.get_vocab_size() == n, (tk.get_vocab_size(), n)
	for a, b in zip(open("docs.jsonl"), open("ours")):
	    text = json.loads(a)["text"]
	    assert tk.encode(text, add_special_tokens=False).ids == json.loads(b)["tokens"], text[:80]
	EOF
'

test_expect_success 'a budget the unlimited run fits in gives the unlimited tokenizer' '
	llm-tokenize train -q --memory 4G --vocab-size 4000 --stats stu.json -o unl.json all.jsonl &&
	test "$(stat stu.json pruned_pieces) $(stat stu.json runs)" = "0 0" &&
	peak=$(stat stu.json peak_memory) &&
	# an eighth more than the unlimited run held: the old estimate pruned here
	llm-tokenize train -q --memory $((peak / 1024 + peak / 8192 + 1))K --vocab-size 4000 \
		--stats stf.json -o fit.json all.jsonl &&
	test "$(stat stf.json pruned_pieces) $(stat stf.json retrains)" = "0 0" &&
	cmp unl.json fit.json
'

# Before, training stopped where the pieces kept had no pair left: 3043 tokens here. Now later
# rounds read every piece again from disk, encoded with the merges so far.
test_expect_success '--memory 1M reaches the vocabulary asked for, in rounds' '
	llm-tokenize train --pattern gpt2 --memory 1M --tmpdir tmp --vocab-size 5000 --stats str.json \
		-o rounds.json all.jsonl 2>err &&
	! test_grep "not 5000" err &&
	test "$(stat str.json vocab_size)" = 5000 &&
	test "$(stat str.json rounds)" -gt 1 &&
	test "$(stat str.json peak_memory)" -le $((1048576 * 9 / 8)) &&
	test -z "$(ls tmp)" &&
	llm-tokenize -q -t rounds.json docs.jsonl -o r.tok &&
	llm-tokenize decode -q -t rounds.json r.tok >rback.jsonl &&
	same_texts docs.jsonl rback.jsonl
'

# A budget that holds every piece but not all their pairs: the first round trains on all of
# them, so its merges are the unlimited run'"'"'s (exact_merges), and the later ones finish.
test_expect_success 'the merges before the first pruned round are those of the unlimited run' '
	llm-tokenize train -q --pattern gpt2 --vocab-size 2000 --memory 4M --stats stx.json -o tokx.json docs.jsonl &&
	test "$(stat stx.json pruned_pieces)" = 0 && test "$(stat stx.json rounds)" -gt 1 &&
	n=$(stat stx.json exact_merges) && test "$n" -gt 50 &&
	python3 - tok.json tokx.json "$n" <<-\EOF
	import json, sys
	a, b = (json.load(open(f))["model"]["merges"] for f in sys.argv[1:3])
	n = int(sys.argv[3])
	assert a[:n] == b[:n] and len(b) == len(a), (len(a), len(b))
	assert a != b  # the later rounds sample: not the unlimited tokenizer
	EOF
'

test_expect_success 'a larger budget prunes less' '
	llm-tokenize train -q --pattern gpt2 --memory 8M --vocab-size 4000 --stats st8.json -o tok8.json all.jsonl &&
	test "$(stat st8.json pruned_pieces)" -lt "$(stat st1.json pruned_pieces)" &&
	test "$(stat st8.json pruned_occurrences)" -lt "$(stat st1.json pruned_occurrences)"
'

test_expect_success 'bad --memory, unwritable --tmpdir' '
	test_must_fail --code=2 llm-tokenize train --memory 100K --vocab-size 300 -o x.json docs.jsonl 2>err &&
	test_grep "memory" err &&
	test_must_fail --code=2 llm-tokenize train --memory lots --vocab-size 300 -o x.json docs.jsonl 2>err &&
	test_must_fail llm-tokenize train -q --memory 1M --tmpdir "$PWD/none" --vocab-size 300 -o x.json all.jsonl 2>err &&
	test_grep "none" err && ! test -e x.json
'

test_expect_success 'named pre-tokenizers for Chinese: qwen, and deepseek as a Sequence of Splits' '
	llm-tokenize train -q --vocab-size 1000 --pattern deepseek -o ds.json docs.jsonl &&
	test "$(grep -o "\"type\": \"Split\"" ds.json | wc -l)" = 3 &&
	llm-tokenize train -q --vocab-size 1000 --pattern qwen -o qw.json docs.jsonl &&
	llm-tokenize -q -t ds.json docs.jsonl -o ds.tok &&
	llm-tokenize decode -q -t ds.json ds.tok >dsback.jsonl &&
	same_texts docs.jsonl dsback.jsonl &&
	test_must_fail --code=2 llm-tokenize -t ds.json --pattern deepseek docs.jsonl 2>err &&
	test_grep "only train takes it" err
'

test_expect_success HF_TOKENIZERS 'Hugging Face tokenizers encodes with the deepseek-pattern tokenizer identically' '
	llm-tokenize -q -t ds.json --no-eos -f jsonl --meta id docs.jsonl >dsours &&
	python3 $TOP/bench/tokenize_peers.py hfcheck --hf ds.json --docs docs.jsonl --ours dsours
'

test_expect_success 'the EXAMPLES of the man page: train within a memory budget' '
	llm-tokenize train -q --vocab-size 32000 --memory 4M --tmpdir tmp -o big.json all.jsonl &&
	grep -q "<|endoftext|>" big.json && test -z "$(ls tmp)"
'

test_done
