#!/bin/bash
# A one-node SLURM cluster on localhost for tests/slurm/test_slurm.sh: munged, slurmctld and slurmd
# (Debian's slurm-wlm and munge) with their own key, socket, ports, state and logs under DIR, so
# nothing of a system installation is touched. Needs root (slurmd runs jobs as their user).
#   slurm_cluster.sh start DIR   → writes DIR/slurm.conf, starts the daemons, waits until the node
#                                 is idle; prints `export SLURM_CONF=…`. Exits non-zero, with the
#                                 daemons' logs, when anything cannot start.
#   slurm_cluster.sh stop DIR    → stops the daemons it started (their pid files in DIR).
set -u
cmd=${1:?start|stop}; dir=${2:?DIR}
mkdir -p "$dir"; dir=$(cd "$dir" && pwd)

fail() {
  echo "slurm_cluster: $*" >&2
  for f in "$dir"/munged.log "$dir"/slurmctld.log "$dir"/slurmd.log; do
    [ -f "$f" ] && { echo "---- $f (last lines)" >&2; tail -n 30 "$f" >&2; }
  done
  exit 1
}

stop() {
  for d in slurmd slurmctld munged; do
    [ -f "$dir/$d.pid" ] || continue
    pid=$(cat "$dir/$d.pid")
    # Only a process that is still the daemon started here (its command line names DIR's files).
    if [ -n "$pid" ] && tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$dir"; then
      kill "$pid" 2>/dev/null
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null
    fi
    rm -f "$dir/$d.pid"
  done
}

if [ "$cmd" = stop ]; then stop; exit 0; fi
[ "$cmd" = start ] || fail "unknown command $cmd (start|stop)"
[ "$(id -u)" = 0 ] || fail "must run as root (slurmd and munged need it); CI runs as root"
for b in munged mungekey slurmctld slurmd sbatch sinfo; do
  command -v "$b" >/dev/null || [ -x "/usr/sbin/$b" ] || fail "$b not found: apt-get install slurm-wlm munge (scripts/bootstrap)"
done
export PATH="$PATH:/usr/sbin"
host=$(hostname -s)
base=$(( 20000 + ($$ % 20000) ))
mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
chmod 700 "$dir/munge"
rm -f "$dir"/*.log

mungekey --create --keyfile="$dir/munge/munge.key" --force 2>"$dir/munged.log" || fail "mungekey failed"
chmod 400 "$dir/munge/munge.key"
munged --force --socket="$dir/munge/munge.sock" --key-file="$dir/munge/munge.key" \
  --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/munge.seed" \
  || fail "munged did not start"
for _ in $(seq 50); do [ -S "$dir/munge/munge.sock" ] && break; sleep 0.1; done
[ -S "$dir/munge/munge.sock" ] || fail "munged made no socket"

cat > "$dir/slurm.conf" <<CONF
ClusterName=edmtest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$base
SlurmdPort=$((base + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=edm Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF" -i || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" || fail "slurmd did not start"
for _ in $(seq 150); do
  state=$(sinfo -h -N -o '%T' 2>/dev/null | head -n1)
  [ "$state" = idle ] && break
  sleep 0.2
done
[ "${state:-}" = idle ] || fail "the node did not become idle (state '${state:-none}')"
echo "export SLURM_CONF=$SLURM_CONF"
