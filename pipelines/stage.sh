#!/bin/sh
# pipelines/stage.sh STAGE NAME TIMES STATS COMMAND...
#
# Run one step of the pipeline with a line on stderr as it starts and one as it ends (documents
# in and out from the step's --stats file when it writes one, and the wall time), and record the
# wall time in TIMES/STAGE.NAME.time for the report. STATS is '-' for a step without one.
# With LLM_PIPELINE_QUIET=1 (a step of one file among many, without V=1) only a failure is
# told: the stage's totals come in one line once all its files are done.
# With LLM_RUSAGE set (bench/scale/run.sh), GNU time also records the step's CPU time and
# peak memory in TIMES/STAGE.NAME.rusage.
# The exit status is the command's.
stage=$1 name=$2 times=$3 stats=$4
shift 4
mkdir -p "$times" || exit 1
quiet=${LLM_PIPELINE_QUIET:-0}
[ "$quiet" = 1 ] || echo "pipeline: $stage $name: start" >&2
t0=$(date +%s.%N)
if [ -n "${LLM_RUSAGE:-}" ]; then
	# make bench-scale: wall, user and system seconds and peak RSS (KiB) of the step
	/usr/bin/time -f '%e %U %S %M' -o "$times/$stage.$name.rusage" "$@"
else
	"$@"
fi
rc=$?
t=$(echo "$(date +%s.%N) $t0" | awk '{printf "%.2f", $1 - $2}')
if [ "$rc" != 0 ]; then
	echo "pipeline: $stage $name: failed (exit $rc) after $t s" >&2
	exit "$rc"
fi
echo "$t" >"$times/$stage.$name.time"
docs=
if [ "$stats" != - ] && [ -s "$stats" ]; then
	# The summary's own counters, before any nested object (per domain, per language); the
	# stats file is one JSON object written by llm-*.
	docs=$(sed -n 's/^[^{]*{[^{]*"records_in": *\([0-9]*\), *"records_out": *\([0-9]*\).*/\1 in, \2 out, /p' "$stats" | head -n 1)
fi
[ "$quiet" = 1 ] || echo "pipeline: $stage $name: done, ${docs}$t s" >&2
