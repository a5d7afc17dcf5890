# pipelines/production.mk — an example configuration for a real corpus (copy and edit).
#
#   make -f pipelines/Makefile CONFIG=pipelines/production.mk -j 32
#
# RAW holds the crawl: *.jsonl[.zst|.gz] shards, html/*.html, warc/*.warc.gz. Each raw file
# runs through cat, clean, dedup-sign, dedup-apply, tox, tokens and noise on its own, so -j N
# (or GNU parallel, or a Slurm array: see pipelines/README.md) spreads them over cores and hosts.

RAW     := /data/crawl/2026-11
OUT     := /data/runs/2026-11
SEED    := 20261130

# The cleaning per domain and language (llmkit-recipe(5)): copy recipes/default and edit
# it for your data; `llm-clean --recipe FILE --explain` shows what each document gets.
RECIPE         := recipes/default
CAT_OPTS       := --max-line 256M
CLEAN_OPTS     := --html --mask-pii --freshness --lang en,zh --lang-model /data/models/lid.176.ftz
# The index remembers every earlier month: new data is deduplicated against all of it.
# The cluster step sees every document; past --memory its buckets go to sorted runs in
# --tmpdir (about 336 bytes per document of disk with 14 bands), same result.
DEDUP_OPTS     := --minhash --preset datatrove --memory 64G --tmpdir /data/tmp
DEDUP_INDEX    := /data/runs/dedup-web.idx
# Benchmarks the model will be evaluated on: documents quoting them leave (13-word n-grams).
DECON_SETS     := /data/eval
DECON_OPTS     := --memory 8G --tmpdir /data/tmp
# llm-tox's thresholds and exemptions per domain and language come from RECIPE (tox,
# tox_words, tox_threshold); a --threshold here would win over the recipe's.
TOX_OPTS       :=
# Keep one tokenizer for every run of a model family (training a new one each month would
# change the ids); set TOKENIZER and leave TOKENIZER_OPTS for the first run only.
TOKENIZER      := /data/tokenizers/web-zh-en-64k.json
TOKENIZER_OPTS := --vocab-size 65536 --memory 64G --tmpdir /data/tmp
TOKENIZE_OPTS  := --eos --threads 8
NOISE_OPTS     := --docs 0.05 --mask 0.03 --mask-id 3 --swap 0.15
SHARD_OPTS     := --val-fraction 0.005 --shard-size 1G --truncate-quantile 0.995
TRAIN_OPTS     := --config /data/configs/llama-1b.json --steps 200000 --batch 16 --seq-len 2048 \
                  --accum 8 --lr 3e-4 --warmup 2000 --eval-every 1000 --ckpt-every 1000 \
                  --light-every 250 --keep 5 --on-spike rollback
EVAL_OPTS      :=
EVAL_TASK      := /data/eval/hellaswag-llmkit.jsonl
EVAL_PROMPTS   := /data/eval/prompts.txt
GENERATE_OPTS  := --max-tokens 128 --temperature 0.7 --top-p 0.9
