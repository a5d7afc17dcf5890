#!/bin/sh
test_description='llm-tokenize train --superbpe: a second stage of merges across spaces (SuperBPE),
within --memory; Hugging Face tokenizers loads the tokenizer and encodes held-apart text identically'
. "$(dirname "$0")/../lib.sh"

C=$SAMPLES/corpus
python3 -c 'import tokenizers' 2>/dev/null && test_set_prereq HF_TOKENIZERS ||
	say "# HF tokenizers is not installed (pip install tokenizers): its checks are skipped"
stat() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["train"][sys.argv[2]])' "$1" "$2"; }
# hf_same TOKENIZER: HF tokenizers encodes and decodes the held-apart documents as we do.
hf_same() {
	llm-tokenize -q -t "$1" --no-eos -f jsonl --meta id held.jsonl >ours.jsonl &&
	llm-tokenize decode -q -t "$1" ours.jsonl >dec.jsonl &&
	python3 "$TOP/bench/tokenize_peers.py" hfcheck --hf "$1" --docs held.jsonl --ours ours.jsonl \
		--decoded dec.jsonl
}

test_expect_success 'setup: English and Chinese to train on, other documents held apart' '
	for f in wiki qa books legal web; do head -n 150 $C/$f.jsonl; done >train.jsonl &&
	# from each file past those lines, the first 10 documents in English and 10 in Chinese
	python3 - $C/wiki.jsonl $C/qa.jsonl $C/books.jsonl $C/web.jsonl >held.jsonl <<-\EOF &&
	import json, sys
	for f in sys.argv[1:]:
	    n = {"en": 0, "zh": 0}
	    for i, line in enumerate(open(f, encoding="utf-8")):
	        lang = json.loads(line)["lang"][:2]
	        if i >= 150 and n.get(lang, 10) < 10:
	            n[lang] += 1
	            sys.stdout.write(line)
	EOF
	grep "\"lang\": \"en\"" held.jsonl >held-en.jsonl &&
	test "$(wc -l <held.jsonl)" -ge 60 && test "$(wc -l <held-en.jsonl)" -ge 20 && mkdir tmp
'

test_expect_success 'the second stage learns tokens that span words' '
	llm-tokenize train -q --vocab-size 3000 --superbpe 2000 --stats st.json -o sb.json train.jsonl &&
	test "$(stat st.json vocab_size)" = 3000 &&
	test "$(stat st.json superbpe_from)" = $((2000 - 256)) &&
	# the pre-tokenizer of the second stage, alone
	grep -q "p{N}{1,3}| ?" sb.json && ! grep -q "p{L}+" sb.json &&
	python3 - sb.json <<-\EOF
	import json, re, sys
	merges = json.load(open(sys.argv[1]))["model"]["merges"]
	# a letter, then a space (G with a dot above in byte-level characters): a token that
	# runs on past the end of a word, which the first stage never makes
	cross = lambda m: re.search("[A-Za-z]\u0120", m.replace(" ", "")) is not None
	n = 2000 - 256
	a, b = sum(map(cross, merges[:n])), sum(map(cross, merges[n:]))
	print("merges across a space: %d of the first stage, %d of the second" % (a, b))
	assert a == 0 and b > 50, (a, b)
	EOF
'

test_expect_success 'the SuperBPE tokenizer gives the documents back' '
	llm-tokenize -q -t sb.json held.jsonl -o h.tok &&
	llm-tokenize decode -q -t sb.json h.tok >back.jsonl &&
	python3 -c "
import json, sys
t = lambda f: [json.loads(l)[\"text\"] for l in open(f, encoding=\"utf-8\")]
assert t(\"held.jsonl\") == t(\"back.jsonl\")
"
'

test_expect_success HF_TOKENIZERS 'Hugging Face tokenizers loads it and encodes held-apart text identically' '
	hf_same sb.json
'

# What SuperBPE is for: on English, words that recur together become one token. (Chinese has
# no spaces to cross: there the stages differ little, and the second has fewer tokens to use.)
test_expect_success JQ 'fewer tokens than ordinary BPE at the same vocabulary on held-apart English' '
	llm-tokenize train -q --vocab-size 3000 -o bpe.json train.jsonl &&
	llm-tokenize -q -t bpe.json --no-eos -f jsonl held-en.jsonl >b.jsonl &&
	llm-tokenize -q -t sb.json --no-eos -f jsonl held-en.jsonl >s.jsonl &&
	b=$(jq -s "map(.tokens | length) | add" b.jsonl) && s=$(jq -s "map(.tokens | length) | add" s.jsonl) &&
	echo "held-apart English: $b tokens with BPE, $s with SuperBPE" &&
	test "$s" -lt "$b"
'

test_expect_success 'a budget that holds it all gives the same tokenizer' '
	llm-tokenize train -q --vocab-size 3000 --superbpe 2000 --memory 1G -o sb1g.json train.jsonl &&
	cmp sb.json sb1g.json
'

test_expect_success '--memory 1M: both stages in rounds within the budget, to the full vocabulary' '
	llm-tokenize train --vocab-size 3000 --superbpe 2000 --memory 1M --tmpdir tmp --stats stm.json \
		-o sbm.json train.jsonl 2>err &&
	! test_grep "not 3000" err &&
	test "$(stat stm.json vocab_size)" = 3000 && test "$(stat stm.json runs)" -gt 0 &&
	test "$(stat stm.json peak_memory)" -le $((1048576 * 9 / 8)) &&
	test -z "$(ls tmp)"
'

test_expect_success HF_TOKENIZERS 'Hugging Face tokenizers encodes with the budgeted one identically' '
	hf_same sbm.json
'

test_expect_success 'bad --superbpe' '
	test_must_fail --code=2 llm-tokenize train --vocab-size 3000 --superbpe 100 -o x.json train.jsonl 2>err &&
	test_grep "superbpe" err && ! test -e x.json
'

test_done
