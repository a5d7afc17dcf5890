#!/bin/sh
test_description='llm-train classify: a classifier fine-tuned from a pretrained run, as a LlamaForSequenceClassification directory llm-score loads'
. "$(dirname "$0")/../lib.sh"

for p in ${TORCH_PYTHON:-} python3 /usr/bin/python3; do
	if "$p" -c 'import torch' 2>/dev/null; then
		TORCH_PY=$p
		test_set_prereq TORCH
		break
	fi
done
test_have_prereq TORCH || echo "# no Python with torch (apt-get install python3-torch): parity case skipped"

test_expect_success 'setup: a tiny pretrained run and labelled comments' '
	test_tiny_run &&
	jq -c "{text, label: .label_name}" $SAMPLES/corpus/toxicity_sample.jsonl >tox.jsonl &&
	printf "%s\n" "{\"text\": \"no label\"}" >>tox.jsonl
'

# English pages against Chinese comments: a task a tiny model learns in a few steps.
test_expect_success 'fine-tuning learns the labels' '
	(jq -c "{text, label: \"en\"}" docs.jsonl | head -n 60 &&
	 jq -c "{text, label: \"zh\"}" $SAMPLES/corpus/toxicity_sample.jsonl | head -n 60) >lang.jsonl &&
	llm-train classify -v --init run --batch 8 --seq-len 32 --steps 20 --warmup 2 --lr 1e-3 \
		-o lang lang.jsonl 2>err &&
	sed -n "s/.*loss \([0-9.]*\) at the first, \([0-9.]*\) at the last.*/\1 \2/p" err >loss.txt &&
	test_line_count = 1 loss.txt && awk "{ exit !(\$2 < \$1 / 10) }" loss.txt &&
	llm-score -q -m l=lang:en lang.jsonl | jq -r "[.label, .scores.l] | @tsv" |
		awk "{ c += ((\$2 >= 0.5) == (\$1 == \"en\")); n++ } END { exit !(n == 120 && c == n) }"
'

test_expect_success 'the directory: config, weights and tokenizer' '
	llm-train classify -v --init run --batch 8 --seq-len 48 --steps 10 --warmup 3 --lr 1e-3 \
		-o clf tox.jsonl 2>err &&
	test_grep "240 documents (1 skipped), 2 classes" err &&
	test_grep "no label in field .label." err &&
	test -f clf/tokenizer.json && test -f clf/tokenizer_config.json &&
	jq -e ".architectures == [\"LlamaForSequenceClassification\"] and
		.id2label == {\"0\": \"offensive\", \"1\": \"safe\"} and .num_labels == 2 and
		.problem_type == \"single_label_classification\" and
		.pad_token_id == 383" clf/config.json >/dev/null
'

# transformers' LlamaForSequenceClassification state dict: the decoder's model.* and
# score.weight, no lm_head (read from the safetensors header with the standard library).
test_expect_success 'the directory holds exactly the keys transformers expects' '
	python3 -c "
import json, struct, sys
f = open(\"clf/model.safetensors\", \"rb\")
n = struct.unpack(\"<Q\", f.read(8))[0]
keys = sorted(k for k in json.loads(f.read(n)) if k != \"__metadata__\")
c = json.load(open(\"clf/config.json\"))
want = [\"model.embed_tokens.weight\", \"model.norm.weight\", \"score.weight\"]
for i in range(c[\"num_hidden_layers\"]):
    for t in (\"input_layernorm\", \"post_attention_layernorm\", \"self_attn.q_proj\",
              \"self_attn.k_proj\", \"self_attn.v_proj\", \"self_attn.o_proj\",
              \"mlp.gate_proj\", \"mlp.up_proj\", \"mlp.down_proj\"):
        want.append(\"model.layers.%d.%s.weight\" % (i, t))
missing, unexpected = sorted(set(want) - set(keys)), sorted(set(keys) - set(want))
print(\"# missing\", missing, \"unexpected\", unexpected)
sys.exit(1 if missing or unexpected else 0)
"
'

test_expect_success 'llm-score loads it; its probabilities sum to one' '
	llm-score -q -m "tox=clf:*" tox.jsonl >scored.jsonl &&
	test_line_count = 241 scored.jsonl &&
	jq -e ".scores.tox | (.offensive + .safe - 1 | fabs) < 1e-6" scored.jsonl | sort -u >ok.txt &&
	echo true >want.txt && test_cmp want.txt ok.txt
'

test_expect_success TORCH 'its logits are the PyTorch reference'"'"'s' '
	head -n 40 tox.jsonl >few.jsonl &&
	llm-tokenize -q -t clf/tokenizer.json --format jsonl --no-eos few.jsonl >ids.jsonl &&
	"$TORCH_PY" "$TOP/bench/seqcls_torch.py" logits clf ids.jsonl --batch 7 |
		awk -F"[][, ]+" "{ m = \$2 > \$3 ? \$2 : \$3; a = exp(\$2 - m); b = exp(\$3 - m);
			printf \"%.9g %.9g\n\", a / (a + b), b / (a + b) }" >ref.txt &&
	llm-score -q -m "tox=clf:*" few.jsonl | jq -r "[.scores.tox.offensive, .scores.tox.safe] |
		map(tostring) | join(\" \")" >llm.txt &&
	paste -d" " llm.txt ref.txt | awk "{ for (i = 1; i <= 2; i++) { d = \$i - \$(i + 2);
		if (d < 0) d = -d; if (d > m) m = d } }
		END { printf \"# largest difference %g\n\", m; exit !(NR == 40 && m <= 1e-5) }"
'

test_expect_success 'a regression learns a number; the options are checked' '
	jq -c "{text, label: (.text | length)}" $SAMPLES/corpus/toxicity_sample.jsonl >len.jsonl &&
	llm-train classify -q --init run --problem regression --batch 8 --seq-len 32 --steps 4 \
		--lr 1e-4 -o reg len.jsonl &&
	jq -e ".problem_type == \"regression\" and .num_labels == 1" reg/config.json &&
	llm-score -q -m len=reg len.jsonl | jq -e ".scores.len | type == \"number\"" >/dev/null &&
	test_must_fail --code=2 llm-train classify --init run tox.jsonl 2>err &&
	test_grep "classify needs --init CKPT and -o DIR" err &&
	test_must_fail --code=2 llm-train --data shards -o x 2>err &&
	test_grep "are options of classify" err &&
	test_must_fail --code=1 llm-train classify -q --init run --labels safe -o one tox.jsonl 2>err &&
	test_grep "a classifier needs two" err
'

test_done
