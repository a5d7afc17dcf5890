# pipelines/demo.mk — the demo run on samples/ (make demo). Every option of every stage is
# here; see pipelines/production.mk for a configuration sized for a real corpus.

RAW     := samples/corpus
OUT     := demo
SEED    := 1

# The cleaning per domain and language (llmkit-recipe(5)); CLEAN_OPTS adds to it.
RECIPE         := recipes/default
CAT_OPTS       :=
CLEAN_OPTS     := --freshness --ref-year 2026
DEDUP_OPTS     := --minhash --threshold 0.8
DEDUP_INDEX    :=
# Documents that quote the evaluation task leave before training (llm-dedup
# --decontaminate: 13-word n-grams); the task was made from this corpus, so this matters.
DECON_SETS     := samples/eval/next-sentence.jsonl
DECON_OPTS     :=
# llm-tox's thresholds and exemptions per domain and language come from RECIPE (tox,
# tox_words, tox_threshold); a --threshold here would win over the recipe's.
TOX_OPTS       :=
# A domain tokenizer trained on the cleaned samples (TOKENIZER := file to use a given one).
# Size the model with the vocabulary: the presets' widths suit a few thousand tokens; with a
# 150k-token tokenizer (Qwen2.5's) tiny is 20M parameters, 19.4M of them the embedding that
# is also its output layer, and each step costs 16 times the products. Give such a
# vocabulary a wider model (--config FILE in place of --model tiny in TRAIN_OPTS) or train
# a smaller tokenizer here (TOKENIZER_OPTS);
# llm-train's start line says the vocabulary's share (llm-train(1), Sizing).
TOKENIZER      :=
TOKENIZER_OPTS := --vocab-size 4096
TOKENIZE_OPTS  := --eos
NOISE_OPTS     := --docs 0.05 --swap 0.15 --mask 0
SHARD_OPTS     := --val-fraction 0.02 --shard-size 64M
TRAIN_OPTS     := --model tiny --steps 600 --batch 8 --seq-len 128 --lr 1e-3 --warmup 50 \
                  --eval-every 100 --eval-batches 4 --ckpt-every 200 --keep 3
EVAL_OPTS      :=
# A multiple-choice task and prompts to generate from; either left empty skips its stage.
EVAL_TASK      := samples/eval/next-sentence.jsonl
EVAL_PROMPTS   := pipelines/demo-prompts.txt
GENERATE_OPTS  := --max-tokens 48 --temperature 0.8 --top-k 40
