#!/bin/sh
test_description='llm-eval as lm-evaluation-harness scores: rolling documents, standard errors, samples, checkpoints as HF directories'
. "$(dirname "$0")/../lib.sh"

OPENBLAS_NUM_THREADS=1
export OPENBLAS_NUM_THREADS

# Python packages, each a prerequisite named after it: a test that needs one is skipped,
# naming it, where it is not installed.
python3 -c 'import lm_eval.utils' 2>/dev/null && test_set_prereq LM_EVAL
python3 -c 'import transformers' 2>/dev/null && test_set_prereq TRANSFORMERS

# nats of a JSON sums object: loss x tokens
nats() { jq -r "$1 | .loss * .tokens" "$2"; }
sum() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.17g\n", a + b }'; }
# exit 0 when a and b agree within rel (relative)
near() { awk -v a="$1" -v b="$2" -v r="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; m = a < 0 ? -a : a; exit !(d <= r * m) }'; }

test_expect_success JQ 'setup: a tokenizer and a tiny trained run that keeps it' '
	for d in books legal qa web wiki; do
		jq -c "select(.lang == \"en\") | .text |= .[0:600]" "$SAMPLES/corpus/$d.jsonl" |
			head -n 6 || exit 1
	done >docs.jsonl &&
	llm-tokenize train -q --vocab-size 384 -o tok.json docs.jsonl &&
	llm-tokenize -q -t tok.json docs.jsonl >docs.tok &&
	llm-shard -q --val-fraction 0.25 --tokenizer tok.json -o shards docs.tok &&
	llm-train -q --data shards --model tiny --batch 4 --seq-len 32 --steps 4 --warmup 2 \
		--lr 3e-3 --eval-every 0 --ckpt-every 4 --keep 0 --tokenizer tok.json --run-dir run &&
	test -d run/ckpt/step-0000004
'

test_expect_success JQ 'rolling: each document alone, no end-of-text, every token once' '
	llm-eval loss -q --ckpt run --mode rolling --seq-len 32 --json r.json docs.jsonl >r.out &&
	llm-eval loss -q --ckpt run --seq-len 32 --json s.json docs.jsonl >/dev/null &&
	test "$(jq -r .mode r.json)" = rolling && test "$(jq -r .mode s.json)" = stream &&
	test "$(jq -r .seq_len r.json)" = 32 &&
	docs=$(jq -r .all.documents r.json) && test "$docs" = 30 &&
	test "$(jq -r .all.tokens r.json)" = $(($(jq -r .all.tokens s.json) - docs)) &&
	test "$(jq -r .all.bytes r.json)" = "$(jq -j .text docs.jsonl | wc -c)" &&
	head -n 1 r.out | grep "bits/byte  byte_ppl    word_ppl$" &&
	jq -e ".all | .word_perplexity > .byte_perplexity and .byte_perplexity > 1" r.json &&
	jq -e ".all | (.byte_perplexity | log) / 2 - .bits_per_byte * (2 | log) / 2 | fabs < 1e-9" r.json
'

test_expect_success PYTHON,JQ 'rolling: words as lm-evaluation-harness counts them' '
	cat >words.py <<-\EOF &&
	import json, re, sys
	print(sum(len(re.split(r"\s+", json.loads(l)["text"])) for l in open(sys.argv[1], encoding="utf-8")))
	EOF
	printf "%s\n" "{\"text\": \" two\\u00a0words \"}" "{\"text\": \"\"}" \
		"{\"text\": \"a\\u2028b\\u200bc\\n\"}" >>docs.jsonl &&
	llm-eval loss -q --ckpt run --mode rolling --seq-len 32 --json w.json docs.jsonl >/dev/null &&
	test "$(jq -r .all.words w.json)" = "$(python3 words.py docs.jsonl)" &&
	test "$(jq -r .all.documents w.json)" = 33
'

test_expect_success JQ 'rolling: a document scores the same alone or among others; windows matter' '
	sed -n 1p docs.jsonl | jq -c ".domain = \"x\"" >a.jsonl &&
	sed -n 2p docs.jsonl | jq -c ".domain = \"x\"" >b.jsonl &&
	cat a.jsonl b.jsonl >ab.jsonl &&
	for f in a b ab; do
		llm-eval loss -q --ckpt run --mode rolling --seq-len 32 --json $f.json $f.jsonl >/dev/null ||
			exit 1
	done &&
	near "$(nats .all ab.json)" "$(sum "$(nats .all a.json)" "$(nats .all b.json)")" 1e-6 &&
	llm-eval loss -q --ckpt run --seq-len 32 --json sab.json ab.jsonl >/dev/null &&
	llm-eval loss -q --ckpt run --seq-len 32 --json sa.json a.jsonl >/dev/null &&
	llm-eval loss -q --ckpt run --seq-len 32 --json sb.json b.jsonl >/dev/null &&
	! near "$(nats .all sab.json)" "$(sum "$(nats .all sa.json)" "$(nats .all sb.json)")" 1e-6 &&
	llm-eval loss -q --ckpt run --mode rolling --json big.json a.jsonl >/dev/null &&
	test "$(jq -r .seq_len big.json)" = "$(jq -r .max_position_embeddings run/ckpt/latest/config.json)" &&
	test "$(jq -r .all.tokens big.json)" = "$(jq -r .all.tokens a.json)" &&
	! near "$(nats .all big.json)" "$(nats .all a.json)" 1e-6
'

test_expect_success JQ 'rolling: whatever the batch' '
	llm-eval loss -q --ckpt run --mode rolling --seq-len 32 --batch 1 docs.jsonl >b1.out &&
	llm-eval loss -q --ckpt run --mode rolling --seq-len 32 --batch 5 docs.jsonl >b5.out &&
	test_cmp b1.out b5.out
'

test_expect_success LM_EVAL,JQ 'rolling: the windows of lm-evaluation-harness predict the same tokens' '
	cat >windows.py <<-\EOF &&
	import json, sys
	from lm_eval.utils import get_rolling_token_windows, make_disjoint_window
	L, prefix = int(sys.argv[2]), int(sys.argv[3])
	n = 0
	for line in open(sys.argv[1]):
	    toks = json.loads(line)["tokens"]
	    for ctx, cont in map(make_disjoint_window, get_rolling_token_windows(toks, prefix, L, 1)):
	        n += len(cont)
	print(n)
	EOF
	llm-tokenize -q -t tok.json --format jsonl docs.jsonl | jq -c ".tokens |= .[:-1]" >ids.jsonl &&
	test "$(python3 windows.py ids.jsonl 32 "$(jq -r .eos_token_id run/ckpt/latest/config.json)")" = "$(jq -r .all.tokens w.json)"
'

test_expect_success PYTHON,JQ 'choice: standard errors as mean_stderr, every item in --log-samples' '
	head -n 60 "$SAMPLES/eval/next-sentence.jsonl" >task.jsonl &&
	llm-eval choice -q --ckpt run --log-samples samples.jsonl --json c.json task.jsonl >c.out &&
	test_line_count = 60 samples.jsonl &&
	cat >check.py <<-\EOF &&
	import json, math, statistics, sys
	res = json.load(open(sys.argv[1]))
	items = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
	task = [json.loads(l) for l in open(sys.argv[3], encoding="utf-8")]
	def stderr(xs):  # lm-evaluation-harness: sample_stddev(arr) / sqrt(len(arr))
	    return statistics.stdev(xs) / math.sqrt(len(xs))
	for dom, want in [("all", res["all"])] + list(res["domains"].items()):
	    got = [s for s in items if dom in ("all", s["domain"])]
	    assert len(got) == want["items"], dom
	    for m in ("acc", "acc_norm"):
	        xs = [s[m] for s in got]
	        assert abs(sum(xs) / len(xs) - want[m]) < 1e-12, (dom, m)
	        assert abs(stderr(xs) - want[m + "_stderr"]) < 1e-12, (dom, m, stderr(xs), want[m + "_stderr"])
	for s in items:
	    t = task[s["doc_id"]]
	    assert s["choices"] == t["choices"] and s["gold"] == t["gold"] and s["context"] == t["context"]
	    ll = s["loglikelihoods"]
	    assert s["pred"] == ll.index(max(ll))
	    norm = [l / len(c) for l, c in zip(ll, s["choices"])]
	    assert s["pred_norm"] == norm.index(max(norm))
	    assert s["chars"] == [len(c) for c in s["choices"]]
	    assert all(n > 0 for n in s["tokens"]) and all(l < 0 for l in ll)
	    assert s["acc"] == (s["pred"] == s["gold"]) and s["acc_norm"] == (s["pred_norm"] == s["gold"])
	print("ok", len(items))
	EOF
	python3 check.py c.json samples.jsonl task.jsonl &&
	grep "^domain  *items  *acc  *stderr  *acc_norm  *stderr$" c.out
'

test_expect_success JQ 'choice --log-samples: rejected items leave their place; a failed run writes none' '
	{ head -n 2 task.jsonl && echo "{bad" && sed -n 3p task.jsonl; } >t4.jsonl &&
	llm-eval choice -q --ckpt run --rejects rej.jsonl --log-samples s4.jsonl t4.jsonl >/dev/null &&
	test "$(jq -r .doc_id s4.jsonl | tr "\n" " ")" = "0 1 3 " &&
	test "$(jq -c .loglikelihoods s4.jsonl | sed -n 3p)" = "$(jq -c .loglikelihoods samples.jsonl | sed -n 3p)" &&
	test_must_fail llm-eval choice --ckpt run --log-samples s5.jsonl t4.jsonl >/dev/null 2>err &&
	! test -e s5.jsonl &&
	test_must_fail --code=2 llm-eval choice --ckpt run --log-samples x.json --json x.json t4.jsonl 2>err &&
	test_grep "same file" err &&
	test_must_fail --code=2 llm-eval choice --ckpt run --log-samples - t4.jsonl 2>err
'

# Overwrite float ELEMENT of the first tensor of a safetensors file with BYTES (printf escapes).
poke() {
	hl=$(od -An -tu8 -N8 "$1" | tr -d " ") &&
	printf "$3" | dd of="$1" bs=1 seek=$((8 + hl + 4 * $2)) conv=notrunc 2>/dev/null
}

test_expect_success 'NaN or infinite weights: loss, choice and generate refuse the checkpoint' '
	cp -r run nan && poke nan/ckpt/step-0000004/model.safetensors 100 "\377\377\377\377" &&
	test_must_fail llm-eval loss --ckpt nan docs.jsonl >out 2>err &&
	test_grep "nan/ckpt/latest/model.safetensors: .model.embed_tokens.weight. holds a non-finite value at element 100" err &&
	! test -s out &&
	test_must_fail llm-eval generate --ckpt nan --prompt "The" >out 2>err &&
	test_grep "nan/ckpt/latest/model.safetensors: .* non-finite value" err &&
	test_must_fail llm-eval choice --ckpt nan task.jsonl >out 2>err &&
	test_grep "nan/ckpt/latest/model.safetensors: .* non-finite value" err &&
	mkdir inf && cp run/ckpt/latest/config.json run/ckpt/latest/model.safetensors inf/ &&
	poke inf/model.safetensors 7 "\000\000\200\177" &&
	test_must_fail llm-eval loss --ckpt inf -t tok.json docs.jsonl 2>err &&
	test_grep "inf/model.safetensors: .* non-finite value at element 7" err &&
	poke inf/model.safetensors 7 "\000\000\200\077" &&
	llm-eval loss -q --ckpt inf -t tok.json docs.jsonl >/dev/null
'

test_expect_success JQ 'every checkpoint is a whole Hugging Face model directory' '
	for d in run/ckpt/step-0000004 run; do
		test_cmp tok.json $d/tokenizer.json &&
		jq -e ".tokenizer_class == \"PreTrainedTokenizerFast\" and .bos_token == null and
			.eos_token == \"<|endoftext|>\" and .pad_token == .eos_token and
			.add_bos_token == false and .add_eos_token == false and
			.model_max_length == 512" $d/tokenizer_config.json || exit 1
	done &&
	eos=$(jq -r .eos_token_id run/ckpt/latest/config.json) &&
	jq -e ".eos_token_id == $eos and .pad_token_id == $eos and .bos_token_id == null" \
		run/ckpt/latest/generation_config.json &&
	llm-train -q --data shards --model tiny --batch 4 --seq-len 32 --steps 2 --warmup 1 \
		--eval-every 0 --ckpt-every 100 --run-dir notok &&
	test -f notok/ckpt/step-0000002/generation_config.json &&
	! test -e notok/ckpt/step-0000002/tokenizer.json &&
	! test -e notok/ckpt/step-0000002/tokenizer_config.json && ! test -e notok/tokenizer_config.json
'

test_expect_success TRANSFORMERS,JQ 'AutoTokenizer.from_pretrained(checkpoint) gives llm-tokenize'"'"'s ids' '
	cat >hftok.py <<-\EOF &&
	import json, sys
	from transformers import AutoTokenizer
	tok = AutoTokenizer.from_pretrained(sys.argv[1])
	cfg = json.load(open(sys.argv[1] + "/config.json"))
	assert tok.bos_token_id is None and tok.eos_token_id == cfg["eos_token_id"], (tok.bos_token_id, tok.eos_token_id)
	assert tok.pad_token_id == tok.eos_token_id
	for line in open(sys.argv[2], encoding="utf-8"):
	    print(json.dumps(tok(json.loads(line)["text"])["input_ids"] + [tok.eos_token_id]))
	EOF
	python3 hftok.py run/ckpt/step-0000004 docs.jsonl >hf.ids 2>err &&
	llm-tokenize -q -t tok.json --format jsonl docs.jsonl | jq -c .tokens >want.ids &&
	jq -c . hf.ids >got.ids && test_cmp want.ids got.ids &&
	test_line_count = 33 got.ids
'

test_expect_success JQ 'few-shot: examples from the task, never the item itself; a description' '
	head -n 3 task.jsonl >t3.jsonl &&
	llm-eval choice -q --ckpt run --num-fewshot 2 --log-samples f3.jsonl t3.jsonl >/dev/null &&
	for i in 0 1 2; do
		ctx=$(jq -r "select(.doc_id == $i) | .context" f3.jsonl) &&
		for j in 0 1 2; do
			ex=$(sed -n "$((j + 1))p" t3.jsonl | jq -r ".context + \" \" + .choices[.gold]") &&
			n=$(printf "%s\n" "$ctx" | grep -cxF "$ex"; :) &&
			if test $i = $j; then test $n = 0; else test $n = 1; fi || exit 1
		done
	done &&
	llm-eval choice -q --ckpt run --num-fewshot 0 --log-samples z.jsonl t3.jsonl >/dev/null &&
	test "$(jq -c .context z.jsonl)" = "$(jq -c .context t3.jsonl)" &&
	llm-eval choice -q --ckpt run --description "Q: " --log-samples d.jsonl t3.jsonl >/dev/null &&
	test "$(jq -r .context d.jsonl | head -n 1)" = "Q: $(jq -r .context t3.jsonl | head -n 1)" &&
	llm-eval choice -q --ckpt run --num-fewshot 3 --fewshot-from t3.jsonl \
		--log-samples o.jsonl t3.jsonl >/dev/null &&
	test "$(jq -r .context o.jsonl | grep -c .)" = $((3 * 4)) &&
	test_must_fail llm-eval choice --ckpt run --num-fewshot 3 t3.jsonl >/dev/null 2>err &&
	test_grep "t3.jsonl:1: 3 few-shot examples (and the item itself) from a pool of 3" err &&
	test_must_fail --code=2 llm-eval choice --ckpt run --num-fewshot 1 <t3.jsonl 2>err &&
	test_grep "needs --fewshot-from" err &&
	echo "{bad" >badpool.jsonl &&
	test_must_fail llm-eval choice --ckpt run --num-fewshot 1 --fewshot-from badpool.jsonl \
		t3.jsonl 2>err &&
	test_grep "badpool.jsonl:1: " err
'

test_expect_success LM_EVAL,JQ 'few-shot prompts are byte for byte lm-evaluation-harness'"'"'s' '
	cat >fewshot.py <<-\EOF &&
	import json, sys
	from lm_eval.api.samplers import ContextSampler
	from lm_eval.api.utils import Message
	docs = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
	pool = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
	n, seed, desc = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
	sampler = ContextSampler(pool, rnd=seed)
	for doc in docs:
	    # ConfigurableTask.fewshot_context without a chat template: the description as a
	    # system message (no delimiter), build_qa_turn of each example (the question and the
	    # target delimiter, the answer c[gold] and the few-shot delimiter), then the question
	    msgs = [Message("system", desc)] if desc else []
	    ex = sampler.sample(n=n, eval_doc=doc if sys.argv[1] == sys.argv[2] else None)
	    for e in ex:
	        msgs += [Message("user", e["context"], " "),
	                 Message("assistant", e["choices"][e["gold"]], "\n\n")]
	    msgs.append(Message("user", doc["context"], ""))
	    print(json.dumps("".join(m.to_text() for m in msgs)))
	EOF
	llm-eval choice -q --ckpt run --num-fewshot 5 --description "Which follows?
" \
		--log-samples f5.jsonl task.jsonl >/dev/null &&
	python3 fewshot.py task.jsonl task.jsonl 5 1234 "Which follows?
" >want &&
	jq -c .context f5.jsonl >got && jq -c . want >want.n && test_cmp want.n got &&
	head -n 8 task.jsonl >pool.jsonl &&
	llm-eval choice -q --ckpt run --num-fewshot 7 --seed 99 --fewshot-from pool.jsonl \
		--log-samples f7.jsonl task.jsonl >/dev/null &&
	python3 fewshot.py task.jsonl pool.jsonl 7 99 "" >want &&
	jq -c .context f7.jsonl >got && jq -c . want >want.n && test_cmp want.n got
'

test_expect_success 'rolling: usage errors' '
	test_must_fail --code=2 llm-eval loss --ckpt run --mode rolling shards 2>err &&
	test_grep "rolling scores JSONL documents: shards" err &&
	test_must_fail --code=2 llm-eval loss --ckpt run --mode rolling --no-prefix docs.jsonl 2>err &&
	test_grep "needs a prefix token" err &&
	test_must_fail --code=2 llm-eval loss --ckpt run --mode rolling --sampled 2 shards 2>err &&
	test_must_fail --code=2 llm-eval loss --ckpt run --mode sliding docs.jsonl 2>err
'

test_done
