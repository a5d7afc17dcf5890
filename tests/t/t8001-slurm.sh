#!/bin/sh
test_description='pipelines under a real Slurm: arrays per file, dependent merges, a failed task rerun, llm-train on 2 ranks'
. "$(dirname "$0")/../lib.sh"

# A private cluster (tests/slurm-cluster.sh: munged, slurmctld and two slurmd "nodes" on this
# host, everything under $TRASH/cluster) runs pipelines/slurm-submit.sh on the reduced corpus
# of t8000; the result must equal a local make run byte for byte. Training runs as 2 ranks
# under srun in the Slurm run and as one process with --accum 2 (the same global batch) in
# the local one, so equal checkpoints also show that the ranks add up to one process.
why=
[ "$(id -u)" = 0 ] || why="not root (the private slurmd runs jobs as root)"
for c in munged slurmctld slurmd sbatch srun squeue scontrol sinfo python3; do
	command -v $c >/dev/null 2>&1 || why="no $c here (make deps installs slurm-wlm, munge and libpmix-dev)"
done
# Slurm's PMIx plugin opens libpmix.so, which only the -dev package installs.
ls /usr/lib/*/pmix2/lib/libpmix.so >/dev/null 2>&1 ||
	why=${why:-"no libpmix.so for srun --mpi=pmix (make deps installs libpmix-dev)"}
[ "${HAVE_MPI:-0}" = 1 ] || why=${why:-"llm-train was built without MPI"}
# slurmd does not start without the cgroup file system (a bare container, a chroot).
[ -n "$(ls /sys/fs/cgroup 2>/dev/null)" ] ||
	why=${why:-"/sys/fs/cgroup is not mounted (slurmd needs it)"}

C=$TRASH/cluster
trap 'sh "$TOP/tests/slurm-cluster.sh" stop "$C" 2>/dev/null' EXIT
export SLURM_CONF=$C/slurm.conf
# The cluster starts before any test: when it does not come up, every test skips at once
# with the reason, where jobs submitted to it would wait for ever in sbatch --wait.
if [ -z "$why" ] && ! sh "$TOP/tests/slurm-cluster.sh" start "$C" >cluster.log 2>&1; then
	why="the private cluster did not start: $(grep -m 1 "^slurm-cluster:" cluster.log ||
		tail -n 1 cluster.log) ($TRASH/cluster.log)"
fi
if [ -z "$why" ]; then test_set_prereq SLURM; else echo "# skipping the Slurm tests: $why"; fi

# wait_jobs JOB...: wait until every one of the jobs (and array task) has ended, in any state,
# then print "NAME TASK STATE EXITCODE" for each job and array task ("-" for TASK outside
# arrays), sorted. The wait is Slurm's own: `sbatch --wait` of a job that depends on all of them
# with afterany returns once it has run, which is only after they all ended.
wait_jobs() {
	ids=$(echo "$@" | tr " " :)
	sbatch -Q --wait --dependency="afterany:$ids" -o /dev/null -J wait --wrap true ||
		{ echo "waiting for jobs $ids failed" >&2; squeue >&2; return 1; }
	for j; do scontrol -o show job "$j"; done | awk '{
		split("", f)
		for (i = 1; i <= NF; i++) { k = $i; sub(/=.*/, "", k); v = $i; sub(/^[^=]*=/, "", v); f[k] = v }
		print f["JobName"], ("ArrayTaskId" in f ? f["ArrayTaskId"] : "-"), f["JobState"], f["ExitCode"]
	}' | sort
}

# submit: the whole Slurm run from slurm/, its jobs ("STAGE JOBID") in jobs, their final
# states in states.
submit() {
	(cd slurm && CONFIG=$TRASH/slurm.mk FINAL_SBATCH="-N 2 -n 2" \
		sh "$TOP/pipelines/slurm-submit.sh" BIN=$TRASH/bin >../jobs) &&
	test_line_count = 6 jobs &&
	wait_jobs $(cut -d" " -f2 jobs) >states && cat states
}

# dates: the date of every file the first Slurm run made before its failure (cat, clean and
# dedup signatures of every file but late), one "NAME DATE" a line.
dates() {
	(cd slurm/out && find cat clean dedup -type f ! -name "late*" \( ! -path "dedup/*" -o -name "*.sig" \) \
		-exec stat -c "%n %y" {} + | sort)
}

# The corpus of t8000 in local/ and slurm/, with the same relative paths. late.jsonl.gz is a
# file that reaches the Slurm run broken and is repaired before the rerun.
setup() {
	mkdir -p "$1/raw/html" "$1/raw/warc" &&
	for f in "$SAMPLES"/corpus/*.jsonl; do head -n 40 "$f" >"$1/raw/${f##*/}"; done &&
	sed -n 41,80p "$SAMPLES/corpus/web.jsonl" | gzip -n >"$1/raw/late.jsonl.gz" &&
	cp "$SAMPLES"/corpus/html/maint-guide_first.en.html "$1/raw/html/" &&
	cp "$SAMPLES"/corpus/warc/* "$1/raw/warc/" &&
	head -n 4 "$SAMPLES"/eval/next-sentence.jsonl >"$1/task.jsonl"
}
mkdir -p bin && cp "$TOP"/bin/llm-* bin/ && ln -s "$TOP/samples" samples && setup local && setup slurm &&
mv slurm/raw/late.jsonl.gz late.jsonl.gz && printf "not gzip\n" | gzip -n | head -c 20 >slurm/raw/late.jsonl.gz &&
# One process with --accum 2 locally; 2 ranks of the same batch under srun in the Slurm run.
# The validation loss on 2 sampled batches, not the whole split, keeps the test short.
printf '%s\n' 'include $(TOP)/pipelines/test.mk' 'EVAL_OPTS += --sampled 2' >slurm.mk &&
cp slurm.mk local.mk && echo 'TRAIN_OPTS += --accum 2' >>local.mk &&
echo 'TRAIN_LAUNCH := env ASAN_OPTIONS=detect_leaks=0 srun --mpi=pmix' >>slurm.mk || exit 1
P="make -f $TOP/pipelines/Makefile BIN=$TRASH/bin"

test_expect_success SLURM 'a private cluster of two nodes is up' '
	test "$(sinfo -N -h -o "%N %t" | tr "\n" " ")" = "n1 idle n2 idle "
'

test_expect_success SLURM 'the local run, for reference' '
	{ (cd local && $P CONFIG=$TRASH/local.mk -j2 >log 2>&1) || { tail -n 30 local/log; false; }; }
'

test_expect_success SLURM 'a failed array task is visible and cancels the jobs after it' '
	submit &&
	(cd slurm && $P CONFIG=$TRASH/slurm.mk -s list-sign) >files &&
	late=$(($(grep -n /late.sig files | cut -d: -f1) - 1)) &&
	grep "^sign $late FAILED 2:0$" states &&
	test $(grep -c "^sign [0-9]* COMPLETED 0:0$" states) = $(($(wc -l <files) - 1)) &&
	for j in cluster tox tokenizer noise final; do grep "^$j .* CANCELLED " states || exit 1; done &&
	log=slurm/slurm-logs/sign-$(sed -n "s/^sign //p" jobs)-$late.out &&
	test_grep "llm-cat: .*late.jsonl.gz" $log &&
	test_grep "pipeline: cat late: failed" $log
'

test_expect_success SLURM 'submitting again redoes only the failed file, then the rest' '
	dates >before && late=$(($(grep -n /late.sig files | cut -d: -f1) - 1)) &&
	mv late.jsonl.gz slurm/raw/late.jsonl.gz &&
	submit &&
	test_must_fail grep -v " COMPLETED 0:0$" states &&
	dates >after && test_cmp before after && test_line_count -gt 20 after &&
	test -s slurm/out/dedup/late.sig &&
	grep "pipeline: cat late: done" slurm/slurm-logs/sign-$(sed -n "s/^sign //p" jobs)-$late.out &&
	for i in $(seq 0 $(($(wc -l <files) - 1))); do
		[ $i = $late ] || ! grep -q "pipeline: .*: start" slurm/slurm-logs/sign-$(sed -n "s/^sign //p" jobs)-$i.out ||
		exit 1
	done
'

test_expect_success SLURM 'the Slurm run equals the local run byte for byte' '
	for d in cat clean dedup decon tox tokenizer tokens noise shards; do
		diff -r -x "*.stats.json" -x ".clustered" local/out/$d slurm/out/$d || exit 1
	done &&
	jq -S "del(.seconds)" local/out/eval/loss.json >l && jq -S "del(.seconds)" slurm/out/eval/loss.json >s &&
	test_cmp l s &&
	test -s slurm/out/report.html
'

test_expect_success SLURM 'llm-train ran as 2 ranks under srun, with the single process loss' '
	grep "\"world_size\": 2" slurm/out/run/train.json &&
	grep "\"world_size\": 1" local/out/run/train.json &&
	sed -n "s/^{\"step\": \([0-9]*\), \"loss\": \([^,]*\),.*/\1 \2/p" local/out/run/metrics.jsonl >l &&
	sed -n "s/^{\"step\": \([0-9]*\), \"loss\": \([^,]*\),.*/\1 \2/p" slurm/out/run/metrics.jsonl >s &&
	test_line_count = 6 l && test_cmp l s &&
	cmp local/out/run/ckpt/latest/model.safetensors slurm/out/run/ckpt/latest/model.safetensors
'

test_expect_success SLURM 'stopping the cluster ends every daemon it started' '
	pids=$(cat "$C"/run/*.pid) && test -n "$pids" &&
	sh "$TOP/tests/slurm-cluster.sh" stop "$C" &&
	for p in $pids; do ! kill -0 $p 2>/dev/null || exit 1; done
'

test_done
