# bench/lib.sh — helpers for benchmark scripts: timing and MB/s.
TOP=$(cd "$(dirname "$0")/.." && pwd)
PATH=$TOP/bin:$PATH
W=$TOP/build/bench
mkdir -p "$W"

now() { date +%s.%N; }
# seconds CMD...: run CMD with output to /dev/null, print elapsed seconds (best of $REPEAT, default 3).
seconds() {
	best=
	for _ in $(seq "${REPEAT:-3}"); do
		t0=$(now); "$@" >/dev/null; t1=$(now)
		best=$(echo "$t0 $t1 ${best:-1e9}" | awk '{d=$2-$1; print (d<$3)?d:$3}')
	done
	echo "$best"
}
# rate BYTES SECONDS -> MB/s
rate() { echo "$1 $2" | awk '{printf "%.0f", $1/1e6/$2}'; }
