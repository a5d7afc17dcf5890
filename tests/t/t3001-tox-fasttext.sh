#!/bin/sh
test_description='llm-tox predict and train against the fastText command'
. "$(dirname "$0")/../lib.sh"

D=$TESTDATA/tox
command -v fasttext >/dev/null 2>&1 && test_set_prereq FASTTEXT

test_expect_success 'lid.176.ftz (quantized, hierarchical softmax) as fasttext predict-prob' '
	llm-tox predict $D/lid.176.ftz $D/lid_inputs.txt -k 3 >out &&
	test_cmp $D/lid_inputs.ref out
'

test_expect_success 'fastText-trained softmax .bin and quantized one-vs-all .ftz, committed outputs' '
	llm-tox predict -k 2 $D/ref_softmax.bin $D/ref_inputs.txt >a && test_cmp $D/ref_softmax.ref a &&
	llm-tox predict -k -1 --threshold 0.1 $D/ref_ova.ftz <$D/ref_inputs.txt >b &&
	test_cmp $D/ref_ova.ref b
'

test_expect_success 'predict: a line over --max-line is an error naming its file and line' '
	{ head -n 2 $D/ref_inputs.txt && printf "%02000d\n" 0; } >long.txt &&
	test_must_fail llm-tox predict --max-line 1K $D/ref_softmax.bin long.txt >out 2>err &&
	test_grep "^llm-tox: long.txt:3: line of 2000 bytes is longer than --max-line$" err
'

# Fresh models from the fasttext command, one per loss, and their quantized forms.
test_expect_success FASTTEXT 'models trained by fasttext now: every loss, quantized too' '
	llm-tox normalize $D/train_small.jsonl >text &&
	jq -r "if .label == 1 then \"__label__toxic\" else \"__label__clean\" end" $D/train_small.jsonl >labels &&
	paste -d " " labels text >train.txt &&
	cut -d " " -f 2- train.txt | head -n 200 >lines &&
	cat $D/lid_inputs.txt >>lines &&
	for loss in softmax ova hs ns; do
		fasttext supervised -input train.txt -output m_$loss -loss $loss -dim 6 -epoch 3 \
			-wordNgrams 2 -minn 1 -maxn 3 -bucket 3000 -thread 1 -verbose 0 &&
		fasttext predict-prob m_$loss.bin lines -1 >want &&
		llm-tox predict -k -1 m_$loss.bin lines >got &&
		test_cmp want got || exit 1
	done &&
	fasttext quantize -input train.txt -output m_softmax -qnorm -cutoff 500 -dsub 2 >/dev/null 2>&1 &&
	fasttext predict-prob m_softmax.ftz lines 2 0.2 >want &&
	llm-tox predict -k 2 --threshold 0.2 m_softmax.ftz lines >got &&
	test_cmp want got
'

test_expect_success FASTTEXT 'a quantized output layer (-qout, 300 labels)' '
	awk "{ printf \"__label__L%d %s\n\", NR % 300, \$0 }" $D/lid_inputs.txt $D/ref_inputs.txt \
		$D/ref_inputs.txt >many.txt &&
	fasttext supervised -input many.txt -output many -dim 4 -epoch 1 -minn 2 -maxn 2 \
		-bucket 2000 -thread 1 -verbose 0 &&
	fasttext quantize -input many.txt -output many -qnorm -qout -dsub 2 >/dev/null 2>&1 &&
	fasttext predict-prob many.ftz $D/ref_inputs.txt 5 >want &&
	llm-tox predict -k 5 many.ftz $D/ref_inputs.txt >got &&
	test_cmp want got
'

test_expect_success 'a model trained with --zh-words gets the words when it filters' '
	llm-tox train -q -o words.bin --zh-words --dim 8 --bucket 5000 $D/train_small.jsonl &&
	jq -c "select(.lang == \"zh\")" $SAMPLES/tox/eval.jsonl | head -n 40 >zh.jsonl &&
	llm-tox -q --no-words --model words.bin --mode annotate zh.jsonl | jq -r .tox_score >ours &&
	llm-tox normalize --zh-words zh.jsonl >wl &&
	llm-tox predict -k -1 words.bin wl |
		awk "{ for (i = 1; i < NF; i += 2) if (\$i == \"__label__toxic\") print (\$(i+1) > 1 ? 1 : \$(i+1)) }" >theirs &&
	paste ours theirs | awk "{ d = \$1 - \$2; if (d > 1e-4 || d < -1e-4) bad++ } END { exit bad > 0 }" &&
	llm-tox normalize zh.jsonl >cl && llm-tox predict -k -1 words.bin cl >nowords &&
	llm-tox predict -k -1 words.bin wl >withwords && test_must_fail cmp -s nowords withwords &&
	LLM_ZHSEG_DICT=/nonexistent/dict.txt test_must_fail llm-tox -q --no-words --model words.bin zh.jsonl 2>err &&
	test_grep "reads Chinese words" err
'

test_expect_success FASTTEXT 'a model trained by llm-tox predicts the same in fasttext' '
	llm-tox train -q -o ours.bin --dim 8 --bucket 5000 --minn 1 --maxn 3 $D/train_small.jsonl &&
	llm-tox normalize $SAMPLES/tox/eval.jsonl | head -n 500 >lines &&
	fasttext predict-prob ours.bin lines 2 >want &&
	llm-tox predict -k 2 ours.bin lines >got &&
	test_cmp want got &&
	fasttext predict-prob $SAMPLES/tox/tox.bin lines >want &&
	llm-tox predict $SAMPLES/tox/tox.bin lines >got &&
	test_cmp want got &&
	llm-tox train -q -o words.bin --zh-words --dim 8 --bucket 5000 $D/train_small.jsonl &&
	llm-tox normalize --zh-words $SAMPLES/tox/eval.jsonl | head -n 500 >wlines &&
	grep -q " __zhseg__ " wlines &&
	fasttext predict-prob words.bin wlines 2 >want &&
	llm-tox predict -k 2 words.bin wlines >got &&
	test_cmp want got &&
	fasttext predict-prob $SAMPLES/tox/tox.bin wlines >want &&
	llm-tox predict $SAMPLES/tox/tox.bin wlines >got &&
	test_cmp want got
'

test_expect_success 'predict: empty input, bad model, bad usage' '
	llm-tox predict $D/ref_softmax.bin </dev/null >out && test_must_fail test -s out &&
	echo junk >junk.bin &&
	test_must_fail llm-tox predict junk.bin </dev/null 2>err && grep "junk.bin" err &&
	test_must_fail --code=2 llm-tox predict </dev/null
'
test_done
