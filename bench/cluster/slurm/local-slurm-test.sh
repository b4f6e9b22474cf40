#!/usr/bin/env bash
# The sharded sweep on a real Slurm: starts a single-node Slurm of its own (Debian's slurmctld,
# slurmd and munge), submits a 4-task array of a small simulated experiment and its merge job
# with submit.sh, waits for both with a bound, checks the merged files byte-identical to a
# single-process run of the same command line (but for the fields that describe the run), and
# stops the daemons.
#
# Nothing that exists is used, touched or stopped: munged runs with a key, socket, pid, seed and
# log file of its own; slurmctld and slurmd with a generated slurm.conf (this machine's CPUs and
# memory from `slurmd -C`), two free ports and every state, spool, pid and log file under one
# temporary directory (SLURM_CONF points the client commands at it). The daemons are stopped by
# the PIDs in their pid files, never by name, and the directory removed, on success, failure
# and SIGINT/SIGTERM alike.
#
# Usage: bench/cluster/slurm/local-slurm-test.sh LWBENCH
#   LWBENCH: a lwbench built with the simulator backend (--cfg lwsim).
# Or:    bench/cluster/slurm/local-slurm-test.sh LWBENCH --timing 1,2,4 -- SWEEP-ARGS
#   runs SWEEP-ARGS at each number of shards (the machine's CPUs divided among them, at least
#   one each) on the same local Slurm and prints the wall time from submission to the merged
#   files, as a Markdown table (docs/results.md's figures).
# Without Slurm or munge installed, or not as root, it prints "skipped: REASON" and exits 0;
# with LWLAB_REQUIRE_SLURM=1 (CI, .ci/run) that is a failure (exit 1) instead.
# LWLAB_SLURM_KEEP=1 keeps the temporary directory (its logs) for a post-mortem.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)

skip() {
  if [ "${LWLAB_REQUIRE_SLURM:-}" = 1 ]; then
    echo "FAILED: $* (LWLAB_REQUIRE_SLURM=1: a missing Slurm is a failure)" >&2
    exit 1
  fi
  echo "skipped: $*"
  exit 0
}

usage() {
  echo "usage: $0 LWBENCH (a --cfg lwsim build)" >&2
  echo "       $0 LWBENCH --timing N[,N...] -- SWEEP-ARGS   (wall time of SWEEP-ARGS at N shards)" >&2
  exit 2
}
[ $# -ge 1 ] || usage
lwbench=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
[ -x "$lwbench" ] || { echo "$0: $1 is not an executable file" >&2; exit 2; }
shift
timing=""
if [ $# -gt 0 ]; then
  [ "$1" = --timing ] && [ $# -ge 3 ] && [ "$3" = -- ] || usage
  timing=$2
  [[ "$timing" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || { echo "$0: invalid value for --timing: $timing" >&2; exit 2; }
  shift 3
fi
for c in slurmctld slurmd sbatch squeue scontrol scancel munged mungekey munge unmunge runuser; do
  command -v "$c" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin
  command -v "$c" >/dev/null 2>&1 ||
    skip "no $c (install: apt-get install --no-install-recommends slurmctld slurmd slurm-client munge)"
done
[ "$(id -u)" = 0 ] || skip "not root (slurmd runs jobs as their user and needs root)"
id munge >/dev/null 2>&1 || skip "no munge user (the munge package creates it)"
command -v python3 >/dev/null 2>&1 || skip "no python3 (compares meta.json)"

tmp=$(mktemp -d -t lwlab-slurm.XXXXXX)
chmod 0755 "$tmp"
stopped=0
stop_daemons() {
  [ "$stopped" = 0 ] || return 0
  stopped=1
  if [ -f "$tmp/slurm.conf" ]; then
    SLURM_CONF=$tmp/slurm.conf timeout 10 scancel --quiet --full --user=root 2>/dev/null || true
  fi
  # By the PIDs in their pid files, never by name; then wait (bounded) for each to exit.
  for pidfile in "$tmp/slurmd.pid" "$tmp/slurmctld.pid" "$tmp/munge/munged.pid"; do
    [ -s "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
}
cleanup() {
  local rc=$?
  stop_daemons
  if [ "${LWLAB_SLURM_KEEP:-}" = 1 ] || [ "$rc" != 0 ]; then
    if [ "$rc" != 0 ]; then
      for log in "$tmp"/slurmctld.log "$tmp"/slurmd.log "$tmp"/run/slurm-*.out; do
        [ -f "$log" ] && { echo "--- $log (last lines)"; tail -n 15 "$log"; }
      done >&2
    fi
    echo "kept $tmp" >&2
  else
    rm -rf "$tmp"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

t_start=$(date +%s.%N)
# munge: a key, socket and files of its own, run as the munge user.
install -d -o munge -g munge -m 0755 "$tmp/munge"
runuser -u munge -- mungekey --create --keyfile="$tmp/munge/munge.key" >/dev/null
socket=$tmp/munge/munge.socket
runuser -u munge -- munged --socket="$socket" --key-file="$tmp/munge/munge.key" \
  --pid-file="$tmp/munge/munged.pid" --seed-file="$tmp/munge/munged.seed" \
  --log-file="$tmp/munge/munged.log"
for _ in $(seq 50); do
  munge -S "$socket" -n 2>/dev/null | unmunge -S "$socket" >/dev/null 2>&1 && break
  sleep 0.1
done
munge -S "$socket" -n | unmunge -S "$socket" >/dev/null || { echo "munged did not start" >&2; exit 1; }

# Two free ports (bound and released at once).
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
hw=$(slurmd -C | head -n 1)
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$hw"; }
cpus=$(field CPUs)
cpus_total=$cpus
mem=$(( $(field RealMemory) * 9 / 10 ))
node=lwlabnode
# slurmctld serves only on the host SlurmctldHost names: this machine's own name, at 127.0.0.1.
host=$(hostname -s)
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/run"
cat >"$tmp/slurm.conf" <<CONF
ClusterName=lwlab
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$tmp/jobcomp.txt
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=lwlab Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
echo "CgroupPlugin=cgroup/v1" >"$tmp/cgroup.conf"
export SLURM_CONF=$tmp/slurm.conf
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF" -N "$node"
# Every client call is bounded: one that cannot reach slurmctld retries for a long time.
idle() { timeout 5 sinfo -h -N -o '%t' 2>/dev/null | grep -qx idle; }
deadline=$(( $(date +%s) + 30 ))
until idle; do
  [ "$(date +%s)" -lt "$deadline" ] || { echo "the node did not come up idle in 30 s" >&2; exit 1; }
  sleep 0.1
done
t_up=$(date +%s.%N)
echo "slurm up: node $node, $cpus CPUs, ports $ctld_port/$slurmd_port ($(python3 -c "print(round($t_up - $t_start, 1))") s)"

# Submits the sweep ("${sweep[@]}") as $1 shards of $2 CPUs each into $3 and waits, bounded by
# $4 seconds, for the array and the merge to leave the queue; checks the merge completed.
submit_and_wait() {
  local n=$1 cpus=$2 dir=$3 bound=$4 ids array merge deadline state
  ids=$(timeout 60 "$here/submit.sh" --lwbench "$lwbench" --dir "$dir" --shards "$n" \
    --cpus-per-task "$cpus" -- "${sweep[@]}")
  echo "$ids"
  array=$(awk '$1 == "shards" {print $2}' <<<"$ids")
  merge=$(awk '$1 == "merge" {print $2}' <<<"$ids")
  deadline=$(( $(date +%s) + bound ))
  while timeout 10 squeue -h -j "$array,$merge" 2>/dev/null | grep -q .; do
    [ "$(date +%s)" -lt "$deadline" ] ||
      { echo "jobs still queued after $bound s:" >&2; timeout 10 squeue >&2; exit 1; }
    sleep 0.2
  done
  for _ in $(seq 50); do
    state=$(grep -o "JobId=$merge .*JobState=[A-Z_]*" "$tmp/jobcomp.txt" 2>/dev/null |
      grep -o 'JobState=[A-Z_]*' || true)
    [ -n "$state" ] && break
    sleep 0.1
  done
  [ "$state" = "JobState=COMPLETED" ] || { echo "merge job $merge: ${state:-no record}" >&2; exit 1; }
}

if [ -n "$timing" ]; then
  sweep=("$@")
  echo "| shards | CPUs per shard | wall s, submit to merged |"
  echo "|---:|---:|---:|"
  for n in ${timing//,/ }; do
    cpus=$(( cpus_total / n )); [ "$cpus" -ge 1 ] || cpus=1
    t0=$(date +%s.%N)
    submit_and_wait "$n" "$cpus" "$tmp/timing-$n" 86400 >/dev/null
    t1=$(date +%s.%N)
    echo "| $n | $cpus | $(python3 -c "print(round($t1 - $t0, 1))") |"
  done
  exit 0
fi

# The sweep: a small simulated experiment, four shards.
sweep=(--experiment "$repo/bench/experiments/group-clear.toml" --engine sim --cores 16
  --threads 4,16 --trials 2 --duration 100us --warmup 50us --seed 5)
t_submit=$(date +%s.%N)
submit_and_wait 4 1 "$tmp/run" 240
t_done=$(date +%s.%N)
echo "array and merge done in $(python3 -c "print(round($t_done - $t_submit, 1))") s"

# The same command line in one process.
"$lwbench" "${sweep[@]}" --jobs 2 --out "$tmp/single" >/dev/null 2>"$tmp/single.err" ||
  { cat "$tmp/single.err" >&2; exit 1; }
merged=$tmp/run/merged
[ -f "$merged/experiment.md" ] || { echo "the merge wrote no experiment.md" >&2; exit 1; }
diff <(cd "$tmp/single" && ls) <(cd "$merged" && ls) || { echo "the merge wrote other files" >&2; exit 1; }
for f in $(cd "$tmp/single" && ls); do
  case "$f" in
    meta.json)
      python3 - "$tmp/single/$f" "$merged/$f" <<'PY'
import json, sys
run = ["command_line", "started_unix", "elapsed_s", "shards", "git_commit", "git_dirty", ("settings", "jobs"),
       ("sim", "real_s"), ("sim", "median_events_per_real_s")]
def result(path):
    m = json.load(open(path))
    for f in run:
        if isinstance(f, tuple):
            m[f[0]].pop(f[1], None)
        else:
            m.pop(f, None)
    return m
a, b = (result(p) for p in sys.argv[1:])
if a != b:
    sys.exit("meta.json differs beyond the fields that describe the run")
PY
      ;;
    summary.md | experiment.md)
      # Each echoes the command line on one line of its own.
      run_line='^(Command: `|- \*\*Command\*\*: `)'
      cmp <(grep -Ev "$run_line" "$tmp/single/$f") <(grep -Ev "$run_line" "$merged/$f") ||
        { echo "$f differs beyond its command line" >&2; exit 1; } ;;
    *) cmp "$tmp/single/$f" "$merged/$f" || { echo "$f differs" >&2; exit 1; } ;;
  esac
done
echo "ok: the merge of 4 Slurm array tasks wrote $(cd "$merged" && ls | wc -l) files, byte-identical to one process's (meta.json, summary.md and experiment.md but for the run's fields)"
