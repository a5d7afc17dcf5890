#!/bin/sh
# pipelines/slurm-array.sh — run one file of a per-file stage as a Slurm array task.
#
#   n=$(make -s -f pipelines/Makefile CONFIG=my.mk list-sign | wc -l)
#   sbatch --array=0-$((n - 1)) --export=ALL,CONFIG=my.mk \
#          --wrap "sh $PWD/pipelines/slurm-array.sh sign"
#
# Run it from the directory the configuration's paths are relative to. Task i builds the i-th
# target of `make list-STAGE` and whatever that file still needs before it. Submit it with
# --wrap and its full path: Slurm runs a copy of a batch script from its spool directory,
# where the Makefile beside this script is not. pipelines/slurm-submit.sh submits the whole
# run (the arrays, the global steps as dependent jobs). Outside Slurm, set
# SLURM_ARRAY_TASK_ID yourself to run one file.
set -eu
stage=${1:?usage: slurm-array.sh STAGE [make-variable=value ...]}
shift
: "${CONFIG:=pipelines/demo.mk}" "${SLURM_ARRAY_TASK_ID:?not a Slurm array task}"
mk=$(dirname "$0")/Makefile
[ -e "$mk" ] || { echo "slurm-array.sh: no $mk: submit this script by its path with sbatch --wrap \"sh /path/to/pipelines/slurm-array.sh $stage\"" >&2; exit 2; }
target=$(make -s -f "$mk" CONFIG="$CONFIG" "$@" "list-$stage" | sed -n "$((SLURM_ARRAY_TASK_ID + 1))p")
[ -n "$target" ] || { echo "slurm-array.sh: no file number $SLURM_ARRAY_TASK_ID in stage $stage" >&2; exit 2; }
# V=1: the task's log has the line of its own file (the stage's totals are the merge job's).
exec make -f "$mk" CONFIG="$CONFIG" V=1 "$@" "$target"
