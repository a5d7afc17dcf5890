# tests/lib-faults.sh — helpers of the fault-injection suite. Source it after tests/lib.sh.
#
# The suite interrupts programs at chosen points and checks what is left: the previous state
# intact, nothing half-written under a final name, and (where a program resumes) the
# interrupted run resumed equal to an uninterrupted one. Nothing here waits on a clock:
#   - kill_at: the program kills itself (SIGKILL) at a named step, through LLMKIT_FAULT
#     (lib/core/fault.h; the steps are the llm_fault_point calls in lib/ and tools/);
#   - feed_and_kill: the program reads a FIFO; once a byte count of input has gone through,
#     it is inside its loop and cannot finish while the FIFO stays open, so a signal sent
#     then always lands mid-run;
#   - tests/killat.c, a preload library: the program dies by SIGKILL once a byte count has
#     gone to files of a given name (a file cut mid-write), or at a given rename;
#   - FULLDISK: a small tmpfs (root only; the prerequisite is missing otherwise).
#
# Where the cases are: t0020-faults.sh (the data tools: llm-shard, llm-tokenize, every -o,
# temporaries, hostile inputs), t0021-faults-dedup.sh (llm-dedup --index killed while it
# saves the index, alone and in the pipeline, then rerun), and t6003-train-faults.sh
# (llm-train: kill -9 at each checkpoint step, resume equal to the uninterrupted run).

# kill_at POINT[:N] CMD...: run CMD asking it to die by SIGKILL the Nth time (default 1) it
# reaches POINT; fails unless it did.
kill_at() {
	ka_point=$1
	shift
	LLMKIT_FAULT="kill:$ka_point${FAULT_EXTRA:+,$FAULT_EXTRA}" "$@" 2>/dev/null
	ka_rc=$?
	[ $ka_rc = 137 ] || { echo "kill_at $ka_point: '$*' exited $ka_rc, not by SIGKILL" >&2; return 1; }
}

# feed_and_kill SIG BYTES FILE CMD...: CMD reads the FIFO in.fifo (name it in CMD); write the
# first BYTES of FILE into it (more than a pipe holds, so CMD has read some), send SIG, and
# check that CMD died of a signal.
feed_and_kill() {
	fk_sig=$1 fk_bytes=$2 fk_file=$3
	shift 3
	rm -f in.fifo && mkfifo in.fifo || return 1
	"$@" 2>/dev/null &
	fk_pid=$!
	exec 3>in.fifo
	head -c "$fk_bytes" "$fk_file" >&3
	fk_fed=$?
	kill -"$fk_sig" $fk_pid
	wait $fk_pid
	fk_rc=$?
	exec 3>&-
	rm -f in.fifo
	[ $fk_fed = 0 ] || { echo "feed_and_kill: '$*' stopped reading early" >&2; return 1; }
	[ $fk_rc -gt 128 ] || { echo "feed_and_kill: '$*' exited $fk_rc, not by a signal" >&2; return 1; }
}

# No temporary file of ours is left under DIR (default .).
no_tmp_left() {
	[ -z "$(find "${1:-.}" -name '*.llmtmp.*' 2>/dev/null)" ] ||
		{ echo "temporaries left:" >&2; find "${1:-.}" -name '*.llmtmp.*' >&2; return 1; }
}

# A fingerprint of a directory's regular files (names and contents), for "left as it was".
tree_sum() {
	(cd "$1" && find . -type f | LC_ALL=C sort | while read -r f; do
		printf '%s ' "$f" && cksum <"$f"
	done)
}

# FULLDISK: a tmpfs of $1 bytes mounted at $2, unmounted when the script ends.
full_disk_setup() {
	mkdir -p "$2" && mount -t tmpfs -o "size=$1" llmkit-test "$2" 2>/dev/null || return 1
	FAULT_MOUNTS="$FAULT_MOUNTS $2"
	trap 'for m in $FAULT_MOUNTS; do umount "$m"; done' EXIT
}
