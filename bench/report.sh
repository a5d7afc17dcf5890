#!/bin/sh
# llm-report: CPU time (user + system, best of $REPEAT) of the page and the diagnosis of a long
# run, 100,000 logged steps of 18 curves (metrics.jsonl about 45 MB), beside what a person
# would otherwise run on it: TensorBoard's EventAccumulator loading the same scalars from the
# run's event file (reading only: no chart is drawn), and Python's json reading metrics.jsonl.
# The run is synthetic (a noisy falling loss, a cosine learning rate), made once in
# build/bench; its event file is written by TensorBoard's own writer. Skips the TensorBoard
# figure without it (pip install tensorboard).
#
# First, how the cost grows with the run: 10^4, 10^5 and 10^6 steps of a steadily falling loss
# logged with 6 digits (SCALE="10000 100000 1000000"), the page and the diagnosis together; the
# CPU per 10^5 steps stays flat when the work is linear in the steps (it was about n^2.8).
. "$(dirname "$0")/lib.sh"

run=$W/report-run
tb=$W/report-tb
STEPS=${STEPS:-100000}
if [ ! -s "$run/metrics.jsonl" ]; then
	rm -rf "$run" "$tb" && mkdir -p "$run" "$tb" &&
	python3 - "$run" "$tb" "$STEPS" <<-\EOF || exit 1
	import json, math, os, random, sys
	run, tb, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
	rng = random.Random(1)
	keys = ["loss", "smoothed_loss", "lr", "grad_norm", "clip_factor", "param_norm",
	        "update_ratio", "loss_scale", "tokens", "tokens_per_s", "mfu", "longest_seq",
	        "batch_id", "mem_mb", "step_s", "nonfinite_steps", "spikes", "rollbacks"]
	rows, sm = [], None
	with open(os.path.join(run, "metrics.jsonl"), "w") as f:
	    for s in range(1, steps + 1):
	        loss = 3 + 5 * math.exp(-s / (steps / 10)) + 0.05 * rng.gauss(0, 1)
	        sm = loss if sm is None else 0.99 * sm + 0.01 * loss
	        v = [loss, sm, 1e-4 + 4.5e-4 * (1 + math.cos(math.pi * s / steps)),
	             0.8 + 0.1 * rng.gauss(0, 1), 1.0, 40 + s / steps, 1e-3 * rng.random(), 1,
	             s * 8192, 50000 + 1000 * rng.gauss(0, 1), 0.4, 2048, s - 1, 9000, 0.16, 0, 0, 0]
	        rows.append(v)
	        f.write(json.dumps(dict([("step", s)] + list(zip(keys, v)))) + "\n")
	with open(os.path.join(run, "train.json"), "w") as f:
	    json.dump({"steps": steps, "batch": 8, "seq_len": 1024, "accum": 1, "clip": 1.0}, f)
	try:
	    from tensorboard.compat.proto.event_pb2 import Event
	    from tensorboard.compat.proto.summary_pb2 import Summary
	    from tensorboard.summary.writer.event_file_writer import EventFileWriter
	except ImportError:
	    sys.exit(0)
	w = EventFileWriter(tb)
	for s, v in enumerate(rows, 1):
	    w.add_event(Event(step=s, wall_time=1.8e9 + s, summary=Summary(value=[
	        Summary.Value(tag="train/" + k, simple_value=x) for k, x in zip(keys, v)])))
	w.close()
	EOF
fi
echo "input: $STEPS steps x 18 curves, metrics.jsonl $(rate "$(stat -c %s "$run/metrics.jsonl")" 1) MB"

# cpu CMD...: user + system seconds of CMD, best of $REPEAT (default 3); its peak RSS in $W/rss.
cpu() {
	best=
	for _ in $(seq "${REPEAT:-3}"); do
		/usr/bin/time -o "$W/report-time" -f "%U %S %M" "$@" >/dev/null 2>&1 || return 1
		t=$(awk '{print $1 + $2}' "$W/report-time")
		best=$(echo "$t ${best:-1e9}" | awk '{print ($1 < $2) ? $1 : $2}')
	done
	awk '{print $3}' "$W/report-time" >"$W/rss"
	echo "$best"
}
ratio() { echo "$1 $2" | awk '{printf "%.1f", $1 / $2}'; }

for n in ${SCALE:-10000 100000 1000000}; do
	d=$W/report-falling-$n
	if [ ! -s "$d/metrics.jsonl" ]; then
		mkdir -p "$d" && awk -v n="$n" 'BEGIN { for (s = 1; s <= n; s++)
			printf "{\"step\": %d, \"loss\": %.6f}\n", s, 3 + 5 * exp(-s / (n / 10)) }' \
			>"$d/metrics.jsonl" || exit 1
	fi
	t=$(cpu llm-report -q -o "$W/report-falling.html" "$d") || exit 1
	echo "falling loss, $n steps: $t s CPU ($(echo "$t $n" | awk '{printf "%.3f", $1 / $2 * 1e5}')" \
		"s per 10^5 steps), $(cat "$W/rss") KiB peak"
done
rm -f "$W/report-falling.html"

page=$(cpu llm-report -q -o "$W/report.html" "$run") || exit 1
echo "llm-report (page and diagnosis, metrics.jsonl): $page s CPU, $(cat "$W/rss") KiB peak," \
	"page $(stat -c %s "$W/report.html") bytes"
diag=$(cpu llm-report -q --diagnose "$run")
echo "llm-report --diagnose: ${diag:-(found something)} s CPU"
pyjson=$(cpu python3 -c 'import json, sys
for line in open(sys.argv[1]): json.loads(line)' "$run/metrics.jsonl")
echo "python3 json.loads of metrics.jsonl (reading only): $pyjson s CPU ($(ratio "$pyjson" "$page")x llm-report)"
if ls "$tb"/events.out.tfevents.* >/dev/null 2>&1; then
	own=$(cpu llm-report -q -o "$W/report-tb.html" "$tb")
	echo "llm-report from the event file: $own s CPU, $(cat "$W/rss") KiB peak"
	acc=$(cpu python3 -c 'import sys
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
EventAccumulator(sys.argv[1], size_guidance={"scalars": 0}).Reload()' "$tb")
	echo "TensorBoard $(python3 -c 'import tensorboard; print(tensorboard.__version__)') EventAccumulator.Reload (reading only): $acc s CPU," \
		"$(cat "$W/rss") KiB peak ($(ratio "$acc" "$own")x llm-report)"
else
	echo "TensorBoard: not installed (pip install tensorboard), skipped"
fi
rm -f "$W/report-time" "$W/rss"
