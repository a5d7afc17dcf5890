#!/bin/sh
# pipelines/slurm-submit.sh — submit a whole pipeline run to Slurm: one array job per
# per-file stage, one dependent job per global step.
#
#   CONFIG=my.mk sh pipelines/slurm-submit.sh [SBATCH-OPTION...] [VARIABLE=value...]
#
# Run it from the directory the configuration's paths are relative to. It submits, each job
# waiting for the one before (--dependency=afterok, --kill-on-invalid-dep=yes):
#
#   sign       array, task i: file i's cat, clean and dedup signature
#   cluster    the global dedup step (make dedup-cluster)
#   tox        array, task i: file i's dedup apply, decontamination and tox
#   tokenizer  the tokenizer training (nothing to do when the configuration names one)
#   noise      array, task i: file i's tokens and noise
#   final      shards, training, evaluation, report (make)
#
# and prints one line per job, "STAGE JOBID". Options starting with '-' go to every sbatch
# (--partition, --time, --cpus-per-task, ...); VARIABLE=value arguments go to every make, each
# as one word whatever it holds (TRAIN_OPTS="--steps 10 --lr 1e-3", a value with ; or quotes),
# quoted into each job's command line.
# The final job gets FINAL_SBATCH as well (say "-N 2 -n 2" with TRAIN_LAUNCH="srun --mpi=pmix"
# in the configuration, for data-parallel training). Logs: $LOGS (default slurm-logs/),
# STAGE-ARRAYJOB-TASK.out and STAGE-JOB.out. A failed task fails its array and cancels every
# later job; submitting again redoes only what is missing or out of date (make's file dates
# and option stamps), so only the failed files rerun.
set -eu
: "${CONFIG:?slurm-submit.sh: set CONFIG to the pipeline configuration}" "${LOGS:=slurm-logs}"
: "${FINAL_SBATCH:=}"
here=$(cd "$(dirname "$0")" && pwd)

# q WORD: WORD quoted for sh, whatever it holds.
q() {
	printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}

# The sbatch options and the make variables, each kept one word: quoted into strings that
# the local commands (eval) and each job's --wrap line (its shell) split back the same way.
sbatch_opts= make_vars=
for a; do
	case $a in
	-*) sbatch_opts="$sbatch_opts $(q "$a")" ;;
	*=*) make_vars="$make_vars $(q "$a")" ;;
	*) echo "slurm-submit.sh: '$a' is neither an sbatch option nor VARIABLE=value" >&2; exit 2 ;;
	esac
done
P="make -f $(q "$here/Makefile") $(q "CONFIG=$CONFIG")$make_vars"
mkdir -p "$LOGS"
exec 3>&1

# submit NAME AFTER SBATCH-ARGS...: one sbatch, its job id on stdout.
submit() {
	name=$1 after=$2
	shift 2
	id=$(eval 'sbatch --parsable --kill-on-invalid-dep=yes --export=ALL,CONFIG="$CONFIG" -J "$name" \
		${after:+--dependency=afterok:$after}' "$sbatch_opts" '"$@"')
	id=${id%%;*}
	echo "$name $id" >&3
	echo "$id"
}

# array STAGE AFTER: one task per file of the stage (make list-STAGE).
array() {
	n=$(eval "$P -s list-$1" | wc -l)
	[ "$n" -gt 0 ] || { echo "slurm-submit.sh: stage $1 has no files" >&2; exit 1; }
	submit "$1" "$2" --array=0-$((n - 1)) -o "$LOGS/%x-%A-%a.out" \
		--wrap "sh $(q "$here/slurm-array.sh") $1$make_vars"
}

# global NAME AFTER TARGET [SBATCH-ARGS...]: one job that makes TARGET.
global() {
	name=$1 after=$2 target=$3
	shift 3
	submit "$name" "$after" -o "$LOGS/%x-%j.out" "$@" --wrap "$P $target"
}

a=$(array sign "")
b=$(global cluster "$a" dedup-cluster)
c=$(array tox "$b")
d=$(global tokenizer "$c" tokenizer)
e=$(array noise "$d")
global final "$e" all $FINAL_SBATCH >/dev/null
