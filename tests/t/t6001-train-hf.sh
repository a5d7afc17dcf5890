#!/bin/sh
test_description='llm-train checkpoints load in transformers and give the same loss (optional)'
. "$(dirname "$0")/../lib.sh"

# A Python with torch and transformers: $HF_PYTHON, python3 or Debian's.
for p in ${HF_PYTHON:-} python3 /usr/bin/python3; do
	if "$p" -c 'import torch, transformers' 2>/dev/null; then
		HF_PY=$p
		test_set_prereq TRANSFORMERS
		break
	fi
done

test_expect_success TRANSFORMERS 'LlamaForCausalLM scores the val batches as llm-train did' '
	llm-train --smoke --run-dir smoke >/dev/null 2>&1 &&
	printf "%s" "{\"hidden_size\": 32, \"intermediate_size\": 64, \"num_hidden_layers\": 2,
		\"num_attention_heads\": 4, \"num_key_value_heads\": 1, \"vocab_size\": 61,
		\"tie_word_embeddings\": false, \"rope_theta\": 500000, \"max_position_embeddings\": 64}" \
		>cfg.json &&
	llm-train -q --data smoke/smoke-data --config cfg.json --batch 2 --seq-len 32 --steps 3 \
		--warmup 1 --lr 1e-2 --eval-every 3 --eval-batches 2 --run-dir r &&
	"$HF_PY" "$TOP/bench/hf_check.py" r >out && cat out &&
	grep "\"abs_diff\": " out
'

test_done
