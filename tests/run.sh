#!/bin/sh
# tests/run.sh — run the whole suite and print "N passed, N failed[, N skipped]" last.
#
# Test programs: unit tests ($B/unit/test_*), shell tests (tests/t/t*.sh), fuzz corpus replay
# (and a short libFuzzer run where available), man page lint. Every program speaks TAP; a
# program that fails without reporting a failing test counts as one failure. Programs run in
# parallel (JOBS, default the number of cores); each log is in build/test-logs/ (TEST_LOGS). Each program
# runs at most TEST_TIMEOUT seconds (default 900, generous for a loaded machine; 0 for no
# limit): one that hangs is ended with its process group and counts as a failure that names
# it, instead of stopping the suite.
set -u
: "${B:=build/rel}" "${JOBS:=$(nproc 2>/dev/null || echo 2)}" "${FUZZ_CHECK_SECONDS:=8}"
: "${TEST_TIMEOUT:=900}"
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 1
LOGS=${TEST_LOGS:-build/test-logs}
export B TOP LLM_TOP=$TOP FUZZ_CHECK_SECONDS TEST_TIMEOUT

# bounded CMD...: CMD under TEST_TIMEOUT: SIGTERM to its process group when the time is up,
# SIGKILL 30 s later if it is still there (timeout exits 124 then). timeout puts CMD in a
# process group of its own, which the terminal's Ctrl-C does not reach: a signal to this
# shell is passed on to timeout, which passes it on to the whole group.
bounded() {
	if [ "$TEST_TIMEOUT" = 0 ] || ! command -v timeout >/dev/null 2>&1; then
		"$@"
		return
	fi
	timeout -k 30 "$TEST_TIMEOUT" "$@" &
	b_pid=$!
	trap 'kill -TERM $b_pid 2>/dev/null' HUP INT TERM
	# wait returns early when a trapped signal arrives; the program is still to be reaped then
	while :; do
		wait $b_pid
		b_rc=$?
		kill -0 $b_pid 2>/dev/null || break
	done
	trap - HUP INT TERM
	return $b_rc
}

if [ "${1:-}" = --one ]; then
	# One program: run it, TAP to its log.
	prog=$2 name=$3 log=$LOGS/$3.log
	start=$(date +%s)
	case $prog in
	*.sh) bounded sh "$prog" >"$log" 2>&1 ;;
	fuzz-replay:*)
		t=${prog#fuzz-replay:}; n=${t##*/}; n=${n%-replay}
		if bounded "$t" "tests/fuzz/corpus/$n" >"$log.out" 2>&1; then
			echo "ok 1 - replay corpus of $n ($(tail -n 1 "$log.out"))" >"$log"
		else
			{ echo "not ok 1 - replay corpus of $n"; sed 's/^/# /' "$log.out" | tail -n 30; } >"$log"
		fi ;;
	fuzz-run:*)
		t=${prog#fuzz-run:}; n=${t##*/}; c=build/fuzz/corpus/$n
		mkdir -p "$c"
		# A fixed seed keeps the check reproducible; `make fuzz` explores at random for longer.
		if bounded "$t" -seed=1 -max_total_time="$FUZZ_CHECK_SECONDS" -timeout=10 -rss_limit_mb=2048 \
			-print_final_stats=0 "$c" "tests/fuzz/corpus/$n" >"$log.out" 2>&1; then
			echo "ok 1 - libFuzzer $n for ${FUZZ_CHECK_SECONDS}s" >"$log"
		else
			{ echo "not ok 1 - libFuzzer $n (crash input saved by libFuzzer in $TOP)"; \
			  sed 's/^/# /' "$log.out" | tail -n 40; } >"$log"
		fi ;;
	man-lint)
		i=0; : >"$log"
		for m in man/man1/*.1 man/man5/*.5; do
			[ -e "$m" ] || continue
			i=$((i + 1))
			w=$(groff -mdoc -ww -z "$m" 2>&1)
			if [ -z "$w" ]; then echo "ok $i - groff -mdoc -ww $m" >>"$log"
			else { echo "not ok $i - groff -mdoc -ww $m"; echo "$w" | sed 's/^/# /'; } >>"$log"; fi
		done
		echo "1..$i" >>"$log" ;;
	*) bounded "$prog" >"$log" 2>&1 ;;
	esac
	rc=$?
	[ "$TEST_TIMEOUT" != 0 ] && [ $rc = 124 ] &&
		echo "not ok - $name: still running after TEST_TIMEOUT=$TEST_TIMEOUT s, ended" >>"$log"
	echo $rc >"$log.rc"
	echo $(( $(date +%s) - start )) >"$log.time"
	exit 0
fi

# How long each program took last time (build/test-times, "SECONDS NAME"), kept across runs.
TIMES=build/test-times
if [ -d "$LOGS" ]; then
	for f in "$LOGS"/*.log.time; do
		[ -e "$f" ] && n=${f##*/} && echo "$(cat "$f") ${n%.log.time}"
	done >"$TIMES.new"
	cat "$TIMES" 2>/dev/null >>"$TIMES.new" # the newest time of each program wins
	awk '!seen[$2]++' "$TIMES.new" >"$TIMES"
	rm -f "$TIMES.new"
fi
rm -rf "$LOGS" && mkdir -p "$LOGS" || exit 1
list=$LOGS/.list
: >"$list" || exit 1
for t in "$B"/unit/test_*; do [ -x "$t" ] && echo "$t ${t##*/}" >>"$list"; done
for t in tests/t/t*.sh; do [ -e "$t" ] && n=${t##*/} && echo "$t ${n%.sh}" >>"$list"; done
for t in "$B"/fuzz/*-replay; do [ -x "$t" ] && n=${t##*/} && echo "fuzz-replay:$t $n" >>"$list"; done
if [ "${HAVE_LIBFUZZER:-0}" = 1 ] && [ "${SAN:-0}" != 1 ]; then
	for t in build/fuzz/bin/fuzz_*; do [ -x "$t" ] && echo "fuzz-run:$t ${t##*/}-libfuzzer" >>"$list"; done
fi
echo "man-lint man-lint" >>"$list"

# The slowest start first, so that the last to finish is a short one; a program not timed
# yet counts as slow. The summary below stays in the list's (alphabetical) order.
awk 'NR == FNR { secs[$2] = $1; next } { print ($2 in secs ? secs[$2] : 1e9), $0 }' \
	"$TIMES" "$list" 2>/dev/null | sort -s -k1,1nr | cut -d" " -f2- >"$list.run" ||
	cp "$list" "$list.run"
[ -s "$list.run" ] || cp "$list" "$list.run"
# xargs gives up at once, without waiting for the others, when a program dies of a signal:
# then the logs of the programs still running are not results, and the run fails as a whole.
stopped=0
xargs -P "$JOBS" -L 1 sh tests/run.sh --one <"$list.run" || stopped=1

pass=0 fail=0 skip=0
while read -r prog name; do
	log=$LOGS/$name.log
	rc=$(cat "$log.rc" 2>/dev/null || echo 99)
	p=$(grep -c '^ok ' "$log" 2>/dev/null); s=$(grep -c '^ok .*# skip' "$log" 2>/dev/null)
	f=$(grep -c '^not ok ' "$log" 2>/dev/null)
	p=$((p - s))
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; fi
	if [ $((p + s + f)) = 0 ]; then f=1; echo "# $name ran no test" >>"$log"; fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	if [ "$f" = 0 ]; then
		printf 'PASS %-40s %4d ok %3d skipped %4ss\n' "$name" "$p" "$s" "$(cat "$log.time")"
	else
		printf 'FAIL %-40s %4d ok %3d failed (rc %s) — %s\n' "$name" "$p" "$f" "$rc" "$log"
		grep -A 30 '^not ok' "$log" | head -n 60 | sed 's/^/    /'
		[ "$rc" != 0 ] && ! grep -q '^not ok' "$log" && tail -n 20 "$log" | sed 's/^/    /'
	fi
done <"$list"
if [ "$stopped" = 1 ]; then
	echo "tests/run.sh: a test program was killed by a signal and xargs stopped early;" \
		"programs still running were counted from unfinished logs: rerun the suite" >&2
	fail=$((fail + 1))
fi
if [ $((pass + fail)) = 0 ]; then
	echo "tests/run.sh: no test ran" >&2
	fail=1
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
