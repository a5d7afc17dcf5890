#!/bin/sh
# make bench: run every bench/*.sh (each prints its own MB/s or tokens/s lines).
# Benchmarks are measurements, never pass/fail tests. BENCH=name runs only bench/name.sh.
set -u
cd "$(dirname "$0")/.."
mkdir -p build/bench
status=0
for b in bench/*.sh; do
	n=${b##*/}; n=${n%.sh}
	[ "$n" = run ] && continue
	[ -n "${BENCH:-}" ] && [ "$BENCH" != "$n" ] && continue
	echo "== $n"
	sh "$b" || { echo "bench $n failed"; status=1; }
done
exit $status
