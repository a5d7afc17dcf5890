#!/bin/sh
# tests/slurm-cluster.sh start|stop DIR — a private Slurm cluster on this machine, as root.
#
#   sh tests/slurm-cluster.sh start /tmp/c && export SLURM_CONF=/tmp/c/slurm.conf
#   sbatch --array=0-3 --wrap 'echo $SLURM_ARRAY_TASK_ID' ...
#   sh tests/slurm-cluster.sh stop /tmp/c
#
# Everything lives in DIR: the munge key and socket, slurm.conf, state and spool directories,
# pid files and logs, so the cluster touches nothing in /etc and several can run side by side.
# One munged, one slurmctld and NODES slurmd daemons (default 2, named n1, n2, ...) that share
# this host, each on its own port (free ports chosen at start) and with CPUS_PER_NODE CPUs
# (default 1). `start` returns when sinfo shows every node idle (a bounded poll, generous for
# a loaded machine: up to 300 s), and fails at once when a daemon has ended;
# `stop` ends each daemon by the pid in DIR/run/, waiting for it to exit, and never by name.
# Needs Debian's slurm-wlm, munge and libpmix-dev (srun --mpi=pmix loads libpmix.so).
set -eu
cmd=${1:?usage: slurm-cluster.sh start|stop DIR} S=${2:?usage: slurm-cluster.sh start|stop DIR}
: "${NODES:=2}" "${CPUS_PER_NODE:=1}"

# poll N CMD...: run CMD once a second until it succeeds, at most N times.
poll() {
	n=$1; shift
	while ! "$@"; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 1
	done
}

# stop_pid FILE: end the daemon whose pid FILE holds and wait (up to 30 s) until it is gone.
stop_pid() {
	[ -s "$1" ] || return 0
	pid=$(cat "$1")
	kill "$pid" 2>/dev/null || { rm -f "$1"; return 0; }
	if ! poll 30 sh -c "! kill -0 $pid 2>/dev/null"; then
		echo "slurm-cluster: pid $pid ($1) did not end on SIGTERM; killing it" >&2
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$1"
}

if [ "$cmd" = stop ]; then
	for f in "$S"/run/slurmd-*.pid; do stop_pid "$f"; done
	stop_pid "$S/run/slurmctld.pid"
	stop_pid "$S/run/munged.pid"
	exit 0
fi
[ "$cmd" = start ] || { echo "slurm-cluster: unknown command '$cmd'" >&2; exit 2; }

mkdir -p "$S/munge" "$S/run" "$S/log" "$S/state" "$S/spool"
S=$(cd "$S" && pwd)
chmod 700 "$S/munge"
head -c 1024 /dev/urandom >"$S/munge.key"
chmod 400 "$S/munge.key"
munged --key-file="$S/munge.key" --socket="$S/munge/munge.socket" --pid-file="$S/run/munged.pid" \
	--log-file="$S/log/munged.log" --seed-file="$S/munge/seed" --force

# Free ports now (the kernel's choice of an ephemeral port); one for the controller, one per node.
ports=$(python3 -c 'import socket, sys
ss = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))' $((NODES + 1)))
set -- $ports
host=$(hostname -s)
cat >"$S/slurm.conf" <<EOF
ClusterName=llmkit
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$1
AuthType=auth/munge
AuthInfo=socket=$S/munge/munge.socket
CryptoType=crypto/munge
SlurmUser=root
SlurmdUser=root
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool/%n
TmpFS=$S/tmp/%n
SlurmctldPidFile=$S/run/slurmctld.pid
SlurmdPidFile=$S/run/slurmd-%n.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd-%n.log
EOF
shift
nodes=
i=1
for port; do
	mkdir -p "$S/spool/n$i" "$S/tmp/n$i"
	echo "NodeName=n$i NodeHostname=$host NodeAddr=127.0.0.1 Port=$port CPUs=$CPUS_PER_NODE" >>"$S/slurm.conf"
	nodes=$nodes${nodes:+,}n$i
	i=$((i + 1))
done
echo "PartitionName=main Nodes=$nodes Default=YES MaxTime=INFINITE State=UP" >>"$S/slurm.conf"

export SLURM_CONF="$S/slurm.conf"
slurmctld -f "$SLURM_CONF"
for n in $(echo "$nodes" | tr , ' '); do slurmd -f "$SLURM_CONF" -N "$n"; done
# A daemon that has written its pid and ended will not come back: say so at once (a root
# without /sys/fs/cgroup, say, where slurmd ends as it starts) rather than poll for 300 s.
all_idle() {
	for f in "$S"/run/*.pid; do
		[ -s "$f" ] && ! kill -0 "$(cat "$f")" 2>/dev/null || continue
		echo "slurm-cluster: ${f##*/} names a daemon that has ended:" >&2
		tail -n 5 "$S"/log/*.log >&2
		exit 1
	done
	[ "$(sinfo -N -h -o %t 2>/dev/null | sort -u)" = idle ]
}
if ! poll 300 all_idle; then
	echo "slurm-cluster: the nodes are not idle after 300 s:" >&2
	sinfo -N 2>&1 | sed 's/^/slurm-cluster: /' >&2
	tail -n 5 "$S"/log/*.log >&2
	exit 1
fi
