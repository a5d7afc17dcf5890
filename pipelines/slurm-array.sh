#!/bin/sh
# pipelines/slurm-array.sh — run one file of a per-file stage as a Slurm array task.
#
#   n=$(make -s -f pipelines/Makefile CONFIG=my.mk list-clean | wc -l)
#   sbatch --array=0-$((n - 1)) --export=ALL,CONFIG=my.mk pipelines/slurm-array.sh clean
#
# Run it from the directory the configuration's paths are relative to. Task i builds the i-th target of `make list-STAGE` (and whatever it still needs before it);
# the global steps (dedup cluster, tokenizer, shards, train) run afterwards as one job with
# `make -f pipelines/Makefile CONFIG=my.mk` (sbatch --dependency=afterok:ARRAYJOB).
# Outside Slurm, set SLURM_ARRAY_TASK_ID yourself to run one file.
set -eu
stage=${1:?usage: slurm-array.sh STAGE [make-variable=value ...]}
shift
: "${CONFIG:=pipelines/demo.mk}" "${SLURM_ARRAY_TASK_ID:?not a Slurm array task}"
mk=$(dirname "$0")/Makefile
target=$(make -s -f "$mk" CONFIG="$CONFIG" "$@" "list-$stage" | sed -n "$((SLURM_ARRAY_TASK_ID + 1))p")
[ -n "$target" ] || { echo "slurm-array.sh: no file number $SLURM_ARRAY_TASK_ID in stage $stage" >&2; exit 2; }
exec make -f "$mk" CONFIG="$CONFIG" "$@" "$target"
