# pipelines/test.mk — the reduced pipeline that `make check` runs (tests/t/t8000-pipeline.sh):
# a few hundred documents of every kind, a small tokenizer, a few training steps. Paths are
# relative to the directory it runs in, where the test lays out raw/ and task.jsonl.
RAW     := raw
OUT     := out
SEED    := 1

# The cleaning per domain and language, as the demo.
RECIPE         := $(TOP)/recipes/default
CAT_OPTS       :=
CLEAN_OPTS     := --freshness --ref-year 2026
DEDUP_OPTS     := --minhash --threshold 0.8
DEDUP_INDEX    :=
# Documents that quote the evaluation task leave before training (llm-dedup
# --decontaminate: 13-word n-grams); the task was made from this corpus, so this matters.
DECON_SETS     := task.jsonl
DECON_OPTS     :=
# llm-tox's thresholds and exemptions per domain and language come from RECIPE (tox,
# tox_words, tox_threshold); a --threshold here would win over the recipe's.
TOX_OPTS       :=
TOKENIZER      :=
TOKENIZER_OPTS := --vocab-size 512
TOKENIZE_OPTS  := --eos
NOISE_OPTS     := --docs 0.1 --swap 0.15 --mask 0
SHARD_OPTS     := --val-fraction 0.25 --shard-size 1M
TRAIN_OPTS     := --model tiny --steps 6 --batch 2 --seq-len 32 --lr 1e-3 --warmup 2 \
                  --eval-every 3 --eval-batches 2 --ckpt-every 3
EVAL_OPTS      := --seq-len 32
EVAL_TASK      := task.jsonl
EVAL_PROMPTS   := $(TOP)/pipelines/demo-prompts.txt
GENERATE_OPTS  := --max-tokens 8 --temperature 0
