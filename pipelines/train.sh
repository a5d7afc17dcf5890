#!/bin/sh
# pipelines/train.sh RUN FILE... -- COMMAND...
#
# The training stage of pipelines/Makefile: COMMAND (llm-train, after its launcher, with every
# option but --run-dir, --resume and --force) trains in the run directory RUN to its last
# step, and RUN/pipeline.done is written only then (llm-train exits 0 only when every step is
# done: a signal, a failure or a kill leave no marker), so an interrupted run is never taken
# as finished.
#
# The run's identity is the content of the FILEs (the option stamp, the manifest, the
# tokenizer, llm-train itself), recorded in RUN/pipeline.id as the run starts:
#   - same identity, finished:        nothing to train (the marker's date moves, for make);
#   - same identity, a checkpoint:    llm-train --resume continues from ckpt/latest to the end,
#                                     with the losses and weights of a run never stopped;
#   - same identity, no checkpoint:   the run starts again in RUN (--force: nothing to keep);
#   - another identity, or none:      a new run; the old one is kept aside as RUN.old (the one
#                                     kept there before is removed), never deleted first.
# A run directory whose train.lock a trainer holds is never moved or removed: that is an
# error (exit 1). The exit status is COMMAND's.
set -u
run=$1
shift
dir=$(dirname "$run")
mkdir -p "$dir" || exit 1
id=$(mktemp "$dir/.train-id.XXXXXX") || exit 1
trap 'rm -f "$id"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	printf '%s %s\n' "$(cksum <"$1")" "$1" >>"$id" || exit 1
	shift
done
[ $# -gt 1 ] || { echo "train.sh: usage: train.sh RUN FILE... -- COMMAND..." >&2; exit 2; }
shift

# busy DIR: a trainer holds DIR/train.lock (llm-train's flock(2), which flock(1) shares).
busy() {
	[ -e "$1/train.lock" ] && ! flock -n "$1/train.lock" true
}

if [ -d "$run" ] && cmp -s "$id" "$run/pipeline.id"; then
	if [ -e "$run/pipeline.done" ]; then
		touch "$run/pipeline.done"
		exit
	fi
	if [ -e "$run/ckpt/latest" ]; then
		latest=$(readlink "$run/ckpt/latest")
		echo "train.sh: $run: resuming the interrupted run from ckpt/$latest" >&2
		"$@" --run-dir "$run" --resume || exit
	else
		"$@" --run-dir "$run" --force || exit
	fi
	touch "$run/pipeline.done"
	exit
fi

for d in "$run" "$run.old"; do
	if [ -d "$d" ] && busy "$d"; then
		echo "train.sh: $d: a trainer holds $d/train.lock: not replaced" >&2
		exit 1
	fi
done
if [ -d "$run" ]; then
	rm -rf "$run.old" && mv -T "$run" "$run.old" || exit 1
	echo "train.sh: $run: a new run; the previous one is kept in $run.old" >&2
fi
mkdir -p "$run" && mv -f "$id" "$run/pipeline.id" || exit 1
"$@" --run-dir "$run" || exit
touch "$run/pipeline.done"
