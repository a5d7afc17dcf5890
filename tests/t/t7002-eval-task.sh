#!/bin/sh
test_description='llm-eval task: lm-evaluation-harness task YAML over local JSONL, its results JSON'
. "$(dirname "$0")/../lib.sh"

OPENBLAS_NUM_THREADS=1
export OPENBLAS_NUM_THREADS

python3 -c 'import lm_eval.tasks' 2>/dev/null && test_set_prereq LM_EVAL

test_expect_success JQ 'setup: a tiny trained run, a task in two spellings, a yes/no task' '
	for d in books legal qa web wiki; do
		jq -c "select(.lang == \"en\") | .text |= .[0:600]" "$SAMPLES/corpus/$d.jsonl" |
			head -n 6 || exit 1
	done >docs.jsonl &&
	llm-tokenize train -q --vocab-size 384 -o tok.json docs.jsonl &&
	llm-tokenize -q -t tok.json docs.jsonl >docs.tok &&
	llm-shard -q --val-fraction 0.25 --tokenizer tok.json -o shards docs.tok &&
	llm-train -q --data shards --model tiny --batch 4 --seq-len 32 --steps 4 --warmup 2 \
		--lr 3e-3 --eval-every 0 --ckpt-every 4 --keep 0 --tokenizer tok.json --run-dir run &&
	mkdir tasks &&
	head -n 24 "$SAMPLES/eval/next-sentence.jsonl" >tasks/ns.jsonl &&
	sed -n 25,40p "$SAMPLES/eval/next-sentence.jsonl" >tasks/ns-train.jsonl &&
	cat >tasks/ns.yaml <<-\EOF &&
	task: ns_local
	dataset_path: json
	dataset_name: null
	dataset_kwargs:
	  data_files:
	    test: tasks/ns.jsonl
	    train: tasks/ns-train.jsonl
	test_split: test
	output_type: multiple_choice
	doc_to_text: "{{context}}"
	doc_to_choice: "{{choices}}"
	doc_to_target: "{{gold}}"
	metric_list:
	  - metric: acc
	    aggregation: mean
	    higher_is_better: true
	  - metric: acc_norm
	metadata:
	  version: 1.0
	EOF
	jq -c "{q: .context, options: .choices, label: .gold}" tasks/ns.jsonl >tasks/ns2.jsonl &&
	cat >tasks/ns2.yaml <<-\EOF &&
	task: ns_renamed
	dataset_path: json
	dataset_kwargs: {data_files: {test: tasks/ns2.jsonl}}
	test_split: test
	output_type: multiple_choice
	doc_to_text: "Text: {{ q }}"
	doc_to_choice: options
	doc_to_target: label
	EOF
	jq -c "{question: (.context[0:80]), answer: (if .gold % 2 == 0 then \"yes\" else \"no\" end)}" \
		tasks/ns.jsonl >tasks/yn.jsonl &&
	cat >tasks/yn.yaml <<-\EOF
	task: yn_local
	dataset_path: json
	dataset_kwargs:
	  data_files:
	    validation: tasks/yn.jsonl
	validation_split: validation
	output_type: multiple_choice
	description: "Answer yes or no.\n\n"
	doc_to_text: "Question: {{question}}\nAnswer:"
	doc_to_choice: ["no", "yes"]
	doc_to_target: answer
	target_delimiter: " "
	fewshot_delimiter: "\n\n"
	num_fewshot: 3
	EOF
'

test_expect_success JQ 'a task scores as the same items through llm-eval choice' '
	llm-eval task -q --ckpt run --json r.json --log-samples s.jsonl tasks/ns.yaml >t.out &&
	jq -c "{context, choices, gold, domain}" tasks/ns.jsonl >items.jsonl &&
	llm-eval choice -q --ckpt run --json c.json --log-samples cs.jsonl items.jsonl >c.out &&
	test_cmp cs.jsonl s.jsonl &&
	test "$(jq ".results.ns_local[\"acc,none\"]" r.json)" = "$(jq .all.acc c.json)" &&
	test "$(jq ".results.ns_local[\"acc_norm_stderr,none\"]" r.json)" = \
		"$(jq .all.acc_norm_stderr c.json)" &&
	test "$(jq ".\"n-shot\".ns_local" r.json)" = 0 &&
	jq -e ".versions.ns_local == 1" r.json &&
	test "$(jq -r ".configs.ns_local.output_type" r.json)" = multiple_choice &&
	test "$(jq ".\"n-samples\".ns_local.original" r.json)" = 24 &&
	grep "^ns_local  *0  *24 " t.out
'

test_expect_success JQ 'templates with text, bare field names; several tasks in one run' '
	llm-eval task -q --ckpt run --json r2.json --log-samples s2.jsonl \
		tasks/ns.yaml tasks/ns2.yaml >t2.out &&
	test $(wc -l <t2.out) = 3 &&
	jq -r "select(.doc_id == 0) | .context" s2.jsonl | tail -n 1 >got &&
	printf "Text: %s\n" "$(jq -r "select(.doc_id == 0) | .context" s.jsonl)" >want &&
	test_cmp want got &&
	jq -e ".results.ns_renamed[\"acc,none\"] != null and .versions.ns_renamed == null" r2.json
'

test_expect_success JQ 'few-shot from the training split; description, choice list, target text' '
	llm-eval task -q --ckpt run --json r3.json --log-samples s3.jsonl tasks/yn.yaml >t3.out &&
	test "$(jq ".\"n-shot\".yn_local" r3.json)" = 3 &&
	jq -r "select(.doc_id == 0) | .context" s3.jsonl >ctx &&
	head -n 1 ctx >first && echo "Answer yes or no." >want && test_cmp want first &&
	test $(grep -c "^Answer: \(yes\|no\)$" ctx) = 3 &&
	test "$(jq -c "select(.doc_id == 0) | .choices" s3.jsonl)" = "[\"no\",\"yes\"]" &&
	jq -s -e "map(.gold) | sort | unique == [0, 1]" s3.jsonl &&
	llm-eval task -q --ckpt run --num-fewshot 0 --json r0.json tasks/yn.yaml >/dev/null &&
	test "$(jq ".\"n-shot\".yn_local" r0.json)" = 0
'

test_expect_success LM_EVAL,JQ 'lm-evaluation-harness builds the same prompts and continuations' '
	cat >lmeval_requests.py <<-\EOF &&
	import json, sys
	from lm_eval.tasks import TaskManager, get_task_dict
	name = sys.argv[2]
	task = get_task_dict([name], TaskManager(include_path=sys.argv[1]))[name]
	task.set_fewshot_seed(seed=1234)
	task.build_all_requests(rank=0, world_size=1)
	for i in sorted(task.instances, key=lambda i: (i.doc_id, i.idx)):
	    ctx, cont = i.arguments
	    print(json.dumps([i.doc_id, ctx, cont]))
	EOF
	for t in ns_local:s.jsonl ns_renamed:s2.jsonl yn_local:s3.jsonl; do
		python3 lmeval_requests.py tasks ${t%%:*} >want.${t%%:*} 2>py.err || { cat py.err; exit 1; }
		jq -c "select(.context | startswith(\"Text:\") == (\"${t%%:*}\" == \"ns_renamed\")) |
			.doc_id as \$d | .context as \$c | .choices[] | [\$d, \$c, (\" \" + .)]" \
			${t#*:} >got.${t%%:*} &&
		jq -c . want.${t%%:*} >want.n &&
		test_cmp want.n got.${t%%:*} || exit 1
	done
'

# exit 0 when a and b agree within rel (relative)
near() {
	awk -v a="$1" -v b="$2" -v r="$3" \
		'BEGIN { d = a - b; if (d < 0) d = -d; m = a < 0 ? -a : a; exit !(d <= r * m) }'
}

test_expect_success JQ 'loglikelihood_rolling: doc_to_target scored as loss --mode rolling does' '
	cat >tasks/roll.yaml <<-\EOF &&
	task: roll_local
	dataset_path: json
	data_files: {test: docs.jsonl}
	test_split: test
	output_type: loglikelihood_rolling
	doc_to_text: ""
	doc_to_target: "{{text}}"
	metric_list:
	  - metric: word_perplexity
	  - metric: byte_perplexity
	  - metric: bits_per_byte
	EOF
	llm-eval task -q --ckpt run --json rr.json tasks/roll.yaml >roll.out &&
	llm-eval loss -q --ckpt run --mode rolling --json rl.json docs.jsonl >/dev/null &&
	for m in bits_per_byte byte_perplexity word_perplexity; do
		near "$(jq ".results.roll_local[\"$m,none\"]" rr.json)" "$(jq .all.$m rl.json)" 1e-12 ||
			exit 1
	done &&
	test "$(jq -r ".results.roll_local[\"bits_per_byte_stderr,none\"]" rr.json)" = N/A &&
	test "$(jq ".\"n-samples\".roll_local.original" rr.json)" = "$(wc -l <docs.jsonl)" &&
	jq -e ".higher_is_better.roll_local.bits_per_byte == false" rr.json &&
	grep "^roll_local .* bits_per_byte " roll.out &&
	printf "task: x\ndataset_path: json\ndata_files: {test: docs.jsonl}\n" >r2.yaml &&
	printf "test_split: test\noutput_type: loglikelihood_rolling\ndoc_to_target: text\n" >>r2.yaml &&
	printf "metric_list: [{metric: acc}]\n" >>r2.yaml &&
	test_must_fail llm-eval task -q --ckpt run r2.yaml 2>err &&
	test_grep "metric acc is not one of loglikelihood_rolling" err
'

test_expect_success 'what the subset does not hold is refused with the YAML line' '
	printf "task: x\ndataset_path: json\ndata_files: a.jsonl\ndoc_to_text: \"{{ q | upper }}\"\n" \
		>bad1.yaml &&
	test_must_fail llm-eval task --ckpt run bad1.yaml 2>err &&
	test_grep "bad1.yaml:4: doc_to_text: only {{ field }}" err &&
	printf "task: x\ndataset_path: json\ndata_files: a.jsonl\nprocess_docs: !function u.p\n" \
		>bad2.yaml &&
	test_must_fail llm-eval task --ckpt run bad2.yaml 2>err &&
	test_grep "bad2.yaml:4: process_docs: not supported" err &&
	printf "task: x\ndataset_path: super_glue\n" >bad3.yaml &&
	test_must_fail llm-eval task --ckpt run bad3.yaml 2>err &&
	test_grep "bad3.yaml:2: dataset_path: only json" err &&
	printf "task: x\ndataset_path: json\ndata_files: {test: a.jsonl}\ntest_split: test\n" >bad4.yaml &&
	printf "doc_to_text: \"{%% if q %%}\"\n" >>bad4.yaml &&
	test_must_fail llm-eval task --ckpt run bad4.yaml 2>err &&
	test_grep "bad4.yaml:5: doc_to_text: Jinja statements" err &&
	test_must_fail --code=2 llm-eval task --ckpt run 2>err && test_grep "needs task YAML" err
'

test_done
