#!/usr/bin/env bash
# Faults across nodes, on the simulated cluster of tools/slurm/start_cluster.sh
# (2 nodes at least): a job of 4 ranks, 2 per node, whose rank 3 (on node2)
#   kill:  raises SIGKILL after MPI_Init and a barrier, while the others wait
#          in MPI_Recv and MPI_Barrier;
#   abort: calls MPI_Abort there instead.
# For each, two checks:
#   - the whole job ends promptly (within FAULTS_LIMIT_S, default 30 s),
#     non-zero, and the launcher's output names rank (task) 3 and node2;
#   - it leaves nothing behind on any node: no process of the job in any
#     node's namespace, no listening or established TCP socket that was not
#     there before the job (`ip netns exec NS ss -tanp`; slurmd's own are
#     left out), no new /dev/shm/minimpi-* segment. (memfds die with their
#     processes, so none can leak once the processes are gone.) Another job
#     running on the cluster at the same time would show up as leftovers:
#     run this alone (as CI does).
# Prints "PASS: ..." / "FAIL: ..." per check, then "N passed, N failed";
# exits non-zero if any failed.
#
# Usage: tests/cluster/faults.sh PROGRAM
#   PROGRAM  the rank_fails_late test program (bazel-bin/tests/rank_fails_late)
# Environment:
#   SLURM_CONF       default /run/minimpi-cluster/slurm.conf
#   FAULTS_LAUNCHER  how to start 4 ranks, 2 per node (word-split; default
#                    "srun --mpi=pmix --kill-on-bad-exit=1 -N 2
#                    --nodelist=node1,node2 --ntasks-per-node=2 -n 4"); e.g. to check this script
#                    with Open MPI inside an allocation:
#                    "mpirun.openmpi --allow-run-as-root --map-by ppr:2:node -np 4"
#   FAULTS_LIMIT_S   seconds a failing job may take to end (default 30)
set -euo pipefail

[ $# -eq 1 ] || { sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
program="$(readlink -f "$1")"
[ -x "$program" ] || { echo "faults: '$1' is not an executable" >&2; exit 2; }
export SLURM_CONF="${SLURM_CONF:-/run/minimpi-cluster/slurm.conf}"
# node1 and node2 by name: on a larger cluster rank 3 is still on node2.
launcher="${FAULTS_LAUNCHER:-srun --mpi=pmix --kill-on-bad-exit=1 -N 2 --nodelist=node1,node2 --ntasks-per-node=2 -n 4}"
limit_s="${FAULTS_LIMIT_S:-30}"
# After the job's end, how long its processes may take to go (Slurm's
# KillWait in start_cluster.sh is 2 s).
settle_s=15
victim_node=node2

here="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../../tools/slurm" && pwd -P)"
# shellcheck source=tools/slurm/cluster_common.sh
. "${here}/cluster_common.sh"
namespaces=()
while read -r ns _; do
  case "$ns" in "${CLUSTER_NETNS_PREFIX}"[0-9]*) namespaces+=("$ns") ;; esac
done < <(ip netns list)
[ ${#namespaces[@]} -ge 2 ] || { echo "faults: no simulated cluster of 2+ nodes is up (tools/slurm/start_cluster.sh)" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
pass() { passed=$((passed + 1)); echo "PASS: $1"; }
fail() { failed=$((failed + 1)); echo "FAIL: $1"; sed 's/^/    /' "$work/why" 2>/dev/null || true; }

# sockets NS: the listening and established TCP sockets in NS other than
# slurmd's, one "state local peer users" line each, sorted.
sockets() {
  ip netns exec "$1" ss -Htanp state listening state established 2>/dev/null |
    awk '$0 !~ /users:\(\("slurmd"/ { print $1, $4, $5, $6 }' | sort
}

# minimpi's named shared-memory segments, sorted.
# The library's segments (the tests' software verbs device keeps files of
# its own there: not the library's).
shm_segments() {
  find /dev/shm -maxdepth 1 -name 'minimpi-*' ! -name 'minimpi-softib-*' \
    -printf '%f\n' | sort
}

# What of the job is left, one line per thing, in $work/left.
leftovers() {
  : >"$work/left"
  local ns pid
  for ns in "${namespaces[@]}"; do
    for pid in $(ip netns pids "$ns"); do
      if [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$program" ]; then
        echo "$ns: process $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null))" >>"$work/left"
      fi
    done
    # Sockets that were not there before the job.
    sockets "$ns" | comm -13 "$work/sockets.$ns" - | sed "s/^/$ns: socket: /" >>"$work/left" || true
  done
  comm -13 "$work/shm.before" <(shm_segments) |
    sed 's/^/\/dev\/shm\//' >>"$work/left" || true
  [ ! -s "$work/left" ]
}

run_case() { # MODE
  local mode="$1"
  shm_segments >"$work/shm.before"
  local ns
  for ns in "${namespaces[@]}"; do sockets "$ns" >"$work/sockets.$ns"; done
  local start=$SECONDS status=0
  # shellcheck disable=SC2086  # the launcher is deliberately word-split
  timeout -k 5 "$limit_s" $launcher "$program" "$mode" 3 >"$work/out" 2>&1 || status=$?
  local took=$((SECONDS - start))
  sed 's/^/    | /' "$work/out"
  {
    echo "exit status ${status} after ${took}s (limit ${limit_s}s)"
    tail -n 20 "$work/out"
  } >"$work/why"
  local name="${mode}: rank 3 on ${victim_node} ends the job within ${limit_s}s, named"
  # The launcher's lines, not the program's own, must name the rank and node.
  if [ "$status" -ne 0 ] && [ "$took" -lt "$limit_s" ] &&
    grep -v '^rank_fails_late:' "$work/out" |
    grep -qE "${victim_node}.*(task|rank|process|proc) \[?3\]?([^0-9-]|$)|(task|rank) 3([^0-9-]).*${victim_node}"; then
    pass "$name (${took}s)"
  else
    fail "$name"
  fi
  name="${mode}: no process, socket or /dev/shm segment of the job left on any node"
  local deadline=$((SECONDS + settle_s))
  until leftovers; do
    [ "$SECONDS" -lt "$deadline" ] || break
    sleep 0.5
  done
  if leftovers; then
    pass "$name"
  else
    cp "$work/left" "$work/why"
    fail "$name"
  fi
}

run_case kill
run_case abort
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
