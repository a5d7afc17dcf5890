#!/bin/sh
test_description='llm-score: transformer classifiers and regressors (LlamaForSequenceClassification directories) against a PyTorch reference'
. "$(dirname "$0")/../lib.sh"

# The reference is plain torch (bench/seqcls_torch.py: transformers' modeling semantics
# written out, as Debian's python3-torch 1.13 has no transformers beside it).
for p in ${TORCH_PYTHON:-} python3 /usr/bin/python3; do
	if "$p" -c 'import torch' 2>/dev/null; then
		TORCH_PY=$p
		test_set_prereq TORCH
		break
	fi
done
test_have_prereq TORCH || echo "# no Python with torch (apt-get install python3-torch): parity cases skipped"
REF=$TOP/bench/seqcls_torch.py

# The largest difference between the numbers of two files, value by value, within $3.
within() {
	paste -d' ' "$1" "$2" | awk -v tol="$3" '
		{ h = NF / 2; for (i = 1; i <= h; i++) { d = $i - $(i + h); if (d < 0) d = -d;
		  if (d > m) m = d; n++ } }
		END { printf "# %d values, largest difference %g\n", n, m; exit !(n > 0 && m <= tol) }'
}

# Short comments and long articles: batches of mixed lengths, documents cut at 128 tokens.
test_expect_success 'documents, a tokenizer and their tokens' '
	head -n 40 $SAMPLES/corpus/toxicity_sample.jsonl >docs.jsonl &&
	head -n 4 $SAMPLES/corpus/wiki.jsonl >>docs.jsonl &&
	head -n 4 $SAMPLES/corpus/qa.jsonl >>docs.jsonl &&
	llm-tokenize train -q --vocab-size 300 -o tok.json docs.jsonl &&
	llm-tokenize -q -t tok.json --format jsonl --no-eos docs.jsonl >ids.jsonl &&
	test_line_count = 48 ids.jsonl
'

# ref DIR: the reference's values in the order of the labels, one line per document
# llm DIR NAME: llm-score's, the same way
llm_values() {
	jq -r ".scores.s | if type == \"object\" then [.[]] else [.] end | map(tostring) | join(\" \")" "$1"
}
ref_values() {
	"$TORCH_PY" "$REF" logits "$1" ids.jsonl --batch 5 |
		jq -r "map(tostring) | join(\" \")"
}

test_expect_success TORCH 'regression logits equal the reference within 1e-5 (pad: end of text)' '
	mkdir reg && eos=$(jq -r ".added_tokens[0].id" tok.json) &&
	"$TORCH_PY" "$REF" make reg --vocab 300 --labels a,b,c --pad $eos --problem regression &&
	cp tok.json reg/tokenizer.json &&
	llm-score -q -m "s=reg:*" docs.jsonl >out.jsonl &&
	llm_values out.jsonl >llm.txt && ref_values reg >ref.txt &&
	test_line_count = 48 llm.txt && within llm.txt ref.txt 1e-5
'

# A pad that is a common token: documents that end in it are pooled on the token before,
# as transformers takes the rightmost token that is not the pad.
test_expect_success TORCH 'the pooled token is the rightmost non-pad one, as transformers takes it' '
	pad=$(jq -r ".tokens[-1]" ids.jsonl | sort | uniq -c | sort -rn | awk "NR == 1 { print \$2 }") &&
	test $(jq -r ".tokens[-1]" ids.jsonl | grep -c "^$pad\$") -ge 2 &&
	mkdir padded && "$TORCH_PY" "$REF" make padded --vocab 300 --labels a,b --pad $pad \
		--problem regression --seed 2 &&
	cp tok.json padded/tokenizer.json &&
	llm-score -q -m "s=padded:*" docs.jsonl >out.jsonl &&
	llm_values out.jsonl >llm.txt && ref_values padded >ref.txt && within llm.txt ref.txt 1e-5
'

test_expect_success TORCH 'without a pad token the last token is pooled' '
	mkdir nopad && "$TORCH_PY" "$REF" make nopad --vocab 300 --labels a,b --problem regression \
		--seed 3 &&
	cp tok.json nopad/tokenizer.json &&
	llm-score -q -m "s=nopad:*" docs.jsonl >out.jsonl &&
	llm_values out.jsonl >llm.txt && ref_values nopad >ref.txt && within llm.txt ref.txt 1e-5
'

# Probabilities: the softmax of the reference's logits (single label), their sigmoid (multi).
test_expect_success TORCH 'a classifier gives the softmax of its logits, a multi-label one their sigmoid' '
	mkdir cls multi && eos=$(jq -r ".added_tokens[0].id" tok.json) &&
	"$TORCH_PY" "$REF" make cls --vocab 300 --labels cc,hq,other --pad $eos --seed 4 &&
	"$TORCH_PY" "$REF" make multi --vocab 300 --labels hate,insult --pad $eos \
		--problem multi_label_classification --seed 4 &&
	cp tok.json cls/tokenizer.json && cp tok.json multi/tokenizer.json &&
	llm-score -q -m "s=cls:*" docs.jsonl >out.jsonl && llm_values out.jsonl >llm.txt &&
	ref_values cls | awk "{ m = \$1; for (i = 2; i <= NF; i++) if (\$i > m) m = \$i;
		s = 0; for (i = 1; i <= NF; i++) s += exp(\$i - m);
		for (i = 1; i <= NF; i++) printf \"%.9g%s\", exp(\$i - m) / s, i < NF ? \" \" : \"\n\" }" \
		>ref.txt &&
	within llm.txt ref.txt 1e-5 &&
	llm-score -q -m "s=multi:*" docs.jsonl >out.jsonl && llm_values out.jsonl >llm.txt &&
	ref_values multi | awk "{ for (i = 1; i <= NF; i++)
		printf \"%.9g%s\", 1 / (1 + exp(-\$i)), i < NF ? \" \" : \"\n\" }" >ref.txt &&
	within llm.txt ref.txt 1e-5
'

test_expect_success TORCH 'a label of the classifier is one score; the default label is hq' '
	llm-score -q -m s=cls docs.jsonl >hq.jsonl &&
	llm-score -q -m "s=cls:*" docs.jsonl | jq -r .scores.s.hq >all.txt &&
	jq -r .scores.s hq.jsonl >one.txt && test_cmp all.txt one.txt &&
	test_must_fail --code=2 llm-score -m s=multi docs.jsonl 2>err &&
	test_grep "has no label .hq. (its labels: hate, insult)" err
'

test_expect_success TORCH 'threads score as one thread does' '
	llm-score -q -m "s=cls:*" --threads 3 --batch 2k docs.jsonl >t3.jsonl &&
	llm-score -q -m "s=cls:*" docs.jsonl >t1.jsonl && test_cmp t1.jsonl t3.jsonl
'

test_expect_success TORCH 'a classifier without its tokenizer, or with a head of another shape, is refused' '
	mkdir notok && cp cls/config.json cls/model.safetensors notok/ &&
	test_must_fail --code=1 llm-score -m s=notok docs.jsonl 2>err &&
	test_grep "no tokenizer.json beside the model" err &&
	mkdir nohead && cp cls/config.json tok.json nohead/ && mv nohead/tok.json nohead/tokenizer.json &&
	cp padded/model.safetensors nohead/ &&
	test_must_fail --code=1 llm-score -m s=nohead docs.jsonl 2>err &&
	test_grep "tensor .score.weight. has another shape" err
'

test_done
