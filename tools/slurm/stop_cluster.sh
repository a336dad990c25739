#!/usr/bin/env bash
# Stops the simulated multi-node Slurm cluster of tools/slurm/start_cluster.sh
# and removes everything it made: every process inside the nodes' network
# namespaces (slurmd, slurmstepd and the jobs' tasks), slurmctld, the private
# munged, the namespaces (which takes their veth ends along), the host-side
# veths, the bridge, and /run/minimpi-cluster. Leaves the one-node Slurm
# (tools/slurm/start_slurm.sh) alone. Safe to run when nothing is up;
# exits non-zero only if something could not be removed.
set -euo pipefail

here="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source=tools/slurm/cluster_common.sh
. "${here}/cluster_common.sh"

[ "$(id -u)" -eq 0 ] || { echo "stop_cluster: must run as root" >&2; exit 1; }

# kill_and_wait PID...: SIGTERM, up to 5 s to exit, then SIGKILL.
kill_and_wait() {
  [ $# -gt 0 ] || return 0
  kill "$@" 2>/dev/null || true
  local _
  for _ in $(seq 50); do
    local alive=0 pid
    for pid in "$@"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" -eq 1 ] || return 0
    sleep 0.1
  done
  kill -9 "$@" 2>/dev/null || true
  sleep 0.2
}

# The nodes: whatever runs in a node's namespace belongs to the cluster
# (slurmd, its slurmstepds, the tasks of jobs). Namespaces are found by name,
# so nodes of an earlier, larger cluster go too.
namespaces=()
while read -r ns _; do
  case "$ns" in "${CLUSTER_NETNS_PREFIX}"[0-9]*) namespaces+=("$ns") ;; esac
done < <(ip netns list 2>/dev/null)
# All at once: slurmd takes seconds to exit on SIGTERM, and one wait for
# every node is faster than one per node.
node_pids=()
for ns in "${namespaces[@]}"; do
  # shellcheck disable=SC2207  # one pid per word
  node_pids+=($(ip netns pids "$ns" 2>/dev/null))
done
kill_and_wait "${node_pids[@]}"

# slurmctld and munged, by their pid files, after checking the pid is still
# the daemon (not a recycled pid).
daemon_pids=()
for entry in "slurmctld:${CLUSTER_DIR}/run/slurmctld.pid" "munged:${CLUSTER_DIR}/munge/munged.pid"; do
  comm="${entry%%:*}" pidfile="${entry#*:}"
  if cluster_pid_alive "$pidfile" && [ "$(cat "/proc/$(cat "$pidfile")/comm" 2>/dev/null)" = "$comm" ]; then
    daemon_pids+=("$(cat "$pidfile")")
  fi
done
kill_and_wait "${daemon_pids[@]}"

for ns in "${namespaces[@]}"; do
  ip netns delete "$ns"
done
# A veth whose namespace is gone is gone too; one left by a half-made node
# (namespace never created) is removed here.
while read -r link; do
  ip link delete "$link" 2>/dev/null || true
done < <(ip -o link show | sed -nE "s/^[0-9]+: (${CLUSTER_VETH_PREFIX}[0-9]+)[@:].*/\1/p")
if ip link show "${CLUSTER_BRIDGE}" >/dev/null 2>&1; then
  ip link delete "${CLUSTER_BRIDGE}"
fi
rm -rf "${CLUSTER_DIR}"

# Report anything left, so a caller (CI) sees it.
left=()
for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do
  case "$ns" in "${CLUSTER_NETNS_PREFIX}"[0-9]*) left+=("namespace $ns") ;; esac
done
ip link show "${CLUSTER_BRIDGE}" >/dev/null 2>&1 && left+=("bridge ${CLUSTER_BRIDGE}")
[ -e "${CLUSTER_DIR}" ] && left+=("${CLUSTER_DIR}")
if [ ${#left[@]} -gt 0 ]; then
  echo "stop_cluster: could not remove: ${left[*]}" >&2
  exit 1
fi
echo "stop_cluster: the simulated cluster is gone (daemons, jobs, namespaces, veths, bridge, ${CLUSTER_DIR})"
