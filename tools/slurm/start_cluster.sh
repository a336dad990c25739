#!/usr/bin/env bash
# Starts a simulated multi-node Slurm cluster on this one machine, for running
# minimpi jobs that span nodes (`srun -N 2 --mpi=pmix`):
#
#   - one network namespace per node (minimpi-node1, minimpi-node2, ...), each
#     with a veth pair onto a bridge (minimpi-br0) in the root namespace, and
#     addresses of a private range (10.213.0.0/24: the bridge has .1, node N
#     has .(10+N)); the root namespace's bridge address is where slurmctld
#     listens and where srun, run from the root namespace, gets its I/O
#     connections back from the nodes;
#   - one slurmd per node, inside its namespace and in a UTS namespace of its
#     own whose hostname is the node's name (node1, node2, ...), so programs
#     see the node they run on;
#   - one slurmctld and one private munged (own key and socket) in the root
#     namespace;
#   - everything else (configuration, state, spool, logs, per-node TmpFS) under
#     one directory, /run/minimpi-cluster, and ports of its own (6917/6918),
#     so it never meets the one-node CI Slurm of tools/slurm/start_slurm.sh
#     (/etc/slurm, 6817/6818, node "localhost"): both can run at once.
#
# Waits until every node is idle, then checks that `srun -N <nodes> hostname`
# prints every node's name and that `srun -N <nodes> --mpi=pmix true` works.
# Idempotent: run again with the cluster up, it only re-checks it (and starts
# whatever piece is missing); run with another node count, it stops the
# cluster and starts it again with the new count. tools/slurm/stop_cluster.sh
# removes all of it.
#
# Usage (as root): tools/slurm/start_cluster.sh [--nodes N]   (default 2)
# Environment:
#   CLUSTER_NODE_CPUS  CPUs each node advertises (default 8; more than the
#                      machine has, so 4-8 rank jobs fit on 2 cores)
#   CLUSTER_WAIT_S     seconds to wait for each step (default 60)
# Then: export SLURM_CONF=/run/minimpi-cluster/slurm.conf; srun -N 2 ...
set -euo pipefail

nodes=2
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) nodes="${2:?--nodes needs a number}"; shift 2 ;;
    --nodes=*) nodes="${1#--nodes=}"; shift ;;
    -h | --help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "start_cluster: unknown argument '$1' (usage: $0 [--nodes N])" >&2; exit 2 ;;
  esac
done
case "$nodes" in
  [1-9] | [1-9][0-9]) ;;
  *) echo "start_cluster: --nodes must be 1..99, got '$nodes'" >&2; exit 2 ;;
esac

here="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
# shellcheck source=tools/slurm/cluster_common.sh
. "${here}/cluster_common.sh"

node_cpus="${CLUSTER_NODE_CPUS:-8}"
wait_s="${CLUSTER_WAIT_S:-60}"

die() {
  echo "start_cluster: error: $*" >&2
  exit 1
}

show_logs() {
  local log
  for log in "${CLUSTER_DIR}"/log/*.log; do
    [ -f "$log" ] || continue
    echo "--- last lines of $log:" >&2
    tail -n 15 "$log" >&2
  done
}

# wait_for SECONDS DESCRIPTION COMMAND...: polls until COMMAND succeeds.
wait_for() {
  local seconds="$1" what="$2"
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      show_logs
      die "timed out after ${seconds}s waiting for ${what}"
    fi
    sleep 0.2
  done
}

[ "$(id -u)" -eq 0 ] || die "must run as root (it makes network namespaces and starts munged, slurmctld and slurmd)"
for tool in ip nsenter unshare munged munge unmunge slurmctld slurmd sinfo srun scontrol ss; do
  command -v "$tool" >/dev/null || die "'$tool' not found; run tools/install_deps.sh first"
done

# --- configuration: written first, so a change of node count (or of this
# script) is seen before anything starts, and the cluster is rebuilt on it.
cluster_node_names "$nodes" # sets node_names
new_conf="$(mktemp)"
trap 'rm -f "$new_conf"' EXIT
{
  cat <<CONF
# Simulated ${nodes}-node Slurm cluster for minimpi, written by
# tools/slurm/start_cluster.sh; removed by tools/slurm/stop_cluster.sh.
ClusterName=minimpi-cluster
# slurmctld runs in the root namespace and listens on the bridge's address.
SlurmctldHost=$(hostname -s)(${CLUSTER_BRIDGE_ADDR})
# Ports of its own: the one-node CI Slurm uses the defaults 6817/6818.
SlurmctldPort=${CLUSTER_CTLD_PORT}
SlurmdPort=${CLUSTER_SLURMD_PORT}
SlurmUser=root
SlurmdUser=root
# A private munged with its own key and socket (the one-node Slurm uses the
# system's munged).
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=${CLUSTER_MUNGE_SOCKET}
# No cgroups in containers: track processes by parent pid, no task binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
# Lets each node advertise more CPUs than the machine has.
SlurmdParameters=config_overrides
# Debian's plugstack.conf may load SPANK plugins the nodes lack.
PlugStackConfig=${CLUSTER_DIR}/plugstack.conf
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# A job that fails (a killed rank, MPI_Abort) is torn down within seconds:
# SIGKILL 2 s after SIGTERM instead of 30 s.
KillWait=2
StateSaveLocation=${CLUSTER_DIR}/state
SlurmctldPidFile=${CLUSTER_DIR}/run/slurmctld.pid
SlurmctldLogFile=${CLUSTER_DIR}/log/slurmctld.log
# Per node (%n): all nodes share this machine's file systems.
SlurmdSpoolDir=${CLUSTER_DIR}/spool/%n
SlurmdPidFile=${CLUSTER_DIR}/run/slurmd-%n.pid
SlurmdLogFile=${CLUSTER_DIR}/log/slurmd-%n.log
# Required for --mpi=pmix: its per-job directories live under TmpFS, and a
# shared /tmp makes the second node's slurmstepd fail ("pmixp_mkdir: Cannot
# create directory ... File exists").
TmpFS=${CLUSTER_DIR}/nodes/%n/tmp
SlurmctldTimeout=30
SlurmdTimeout=30
CONF
  for i in $(seq 1 "$nodes"); do
    echo "NodeName=${node_names[$((i - 1))]} NodeAddr=$(cluster_node_addr "$i") CPUs=${node_cpus} State=UNKNOWN"
  done
  echo "PartitionName=cluster Nodes=$(IFS=,; echo "${node_names[*]}") Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES"
} >"$new_conf"

if [ -f "${CLUSTER_CONF}" ] && ! cmp -s "$new_conf" "${CLUSTER_CONF}"; then
  echo "start_cluster: the configuration changed (node count or script): restarting the cluster"
  "${here}/stop_cluster.sh"
fi

# --- addresses: refuse a range this machine already routes elsewhere.
if ! ip link show "${CLUSTER_BRIDGE}" >/dev/null 2>&1; then
  if ip -4 route show | grep -v "dev ${CLUSTER_BRIDGE} " | grep -q "^${CLUSTER_SUBNET_PREFIX}\."; then
    die "this machine already has a route into ${CLUSTER_SUBNET}: $(ip -4 route show | grep "^${CLUSTER_SUBNET_PREFIX}\.")"
  fi
  if [ "$(ip -4 route get "${CLUSTER_BRIDGE_ADDR}" 2>/dev/null | grep -c ' dev lo ')" -ne 0 ] ||
    ip -4 addr show | grep -q "inet ${CLUSTER_SUBNET_PREFIX}\."; then
    die "an interface of this machine already has an address in ${CLUSTER_SUBNET}"
  fi
fi

mkdir -p "${CLUSTER_DIR}"/{munge,state,spool,run,log,nodes}
chmod 0755 "${CLUSTER_DIR}"
install -m 0644 "$new_conf" "${CLUSTER_CONF}"
: >"${CLUSTER_DIR}/plugstack.conf"

# --- network: the bridge in the root namespace, then one namespace per node.
if ! ip link show "${CLUSTER_BRIDGE}" >/dev/null 2>&1; then
  ip link add "${CLUSTER_BRIDGE}" type bridge
fi
ip addr replace "${CLUSTER_BRIDGE_ADDR}/24" dev "${CLUSTER_BRIDGE}"
ip link set "${CLUSTER_BRIDGE}" up
# Where br_netfilter is loaded, bridged frames pass the host's iptables
# FORWARD chain (Docker sets it to DROP): keep this bridge out of it.
if [ -w /proc/sys/net/bridge/bridge-nf-call-iptables ] && [ -w "/sys/class/net/${CLUSTER_BRIDGE}/bridge/nf_call_iptables" ]; then
  echo 0 >"/sys/class/net/${CLUSTER_BRIDGE}/bridge/nf_call_iptables" || true
fi

for i in $(seq 1 "$nodes"); do
  name="${node_names[$((i - 1))]}"
  ns="$(cluster_netns "$i")"
  host_if="$(cluster_host_veth "$i")"
  if ! [ -e "/run/netns/${ns}" ]; then
    ip netns add "$ns"
  fi
  if ! ip link show "$host_if" >/dev/null 2>&1; then
    # The node's end is created in its namespace directly and called eth0
    # there, as on a real node.
    ip link add "$host_if" type veth peer name eth0 netns "$ns"
  fi
  ip link set "$host_if" master "${CLUSTER_BRIDGE}"
  ip link set "$host_if" up
  ip -n "$ns" link set lo up
  ip -n "$ns" addr replace "$(cluster_node_addr "$i")/24" dev eth0
  ip -n "$ns" link set eth0 up
  mkdir -p "${CLUSTER_DIR}/nodes/${name}/tmp" "${CLUSTER_DIR}/spool/${name}"
  chmod 1777 "${CLUSTER_DIR}/nodes/${name}/tmp"
done

# --- munge: a private daemon and key, so the system's munged (the one-node
# Slurm's) is neither needed nor touched.
munge_works() { munge --socket="${CLUSTER_MUNGE_SOCKET}" -n </dev/null | unmunge --socket="${CLUSTER_MUNGE_SOCKET}" >/dev/null; }
if ! munge_works 2>/dev/null; then
  if ! [ -s "${CLUSTER_DIR}/munge/munge.key" ]; then
    (umask 077 && dd if=/dev/urandom of="${CLUSTER_DIR}/munge/munge.key" bs=1024 count=1 status=none)
  fi
  chmod 0700 "${CLUSTER_DIR}/munge"
  chmod 0400 "${CLUSTER_DIR}/munge/munge.key"
  # A stale pid file or socket of a daemon that died would stop a new one.
  rm -f "${CLUSTER_MUNGE_SOCKET}" "${CLUSTER_MUNGE_SOCKET}.lock" "${CLUSTER_DIR}/munge/munged.pid"
  # --force: start even where munged dislikes the permissions of a
  # container's file system.
  munged --force --socket="${CLUSTER_MUNGE_SOCKET}" \
    --key-file="${CLUSTER_DIR}/munge/munge.key" \
    --pid-file="${CLUSTER_DIR}/munge/munged.pid" \
    --log-file="${CLUSTER_DIR}/log/munged.log" \
    --seed-file="${CLUSTER_DIR}/munge/munged.seed" ||
    { show_logs; die "munged did not start"; }
  wait_for "$wait_s" "munged to answer" munge_works
fi

export SLURM_CONF="${CLUSTER_CONF}"

# --- slurmctld in the root namespace.
if ! cluster_pid_alive "${CLUSTER_DIR}/run/slurmctld.pid"; then
  # -i: ignore state of an earlier run (jobs, nodes) rather than recover it.
  slurmctld -i -f "${CLUSTER_CONF}" || { show_logs; die "slurmctld did not start"; }
fi
wait_for "$wait_s" "slurmctld to answer" scontrol ping

# --- one slurmd per node, in its network namespace and its own UTS namespace
# (hostname = node name). slurmd daemonizes; its pid file says where it went.
for i in $(seq 1 "$nodes"); do
  name="${node_names[$((i - 1))]}"
  ns="$(cluster_netns "$i")"
  if ! cluster_pid_alive "${CLUSTER_DIR}/run/slurmd-${name}.pid"; then
    nsenter --net="/run/netns/${ns}" unshare -u sh -c \
      "hostname ${name} && exec slurmd -f '${CLUSTER_CONF}' -N ${name}" ||
      { show_logs; die "slurmd of ${name} did not start"; }
  fi
done

node_state() { sinfo -h -n "$1" -o %t 2>/dev/null | head -n 1; }
for name in "${node_names[@]}"; do
  deadline=$((SECONDS + wait_s))
  until case "$(node_state "$name")" in idle* | mix* | alloc*) true ;; *) false ;; esac do
    case "$(node_state "$name")" in
      down* | drain* | drng*)
        # A node left down (e.g. its slurmd restarted) comes back once its
        # slurmd answers.
        scontrol update nodename="$name" state=resume >/dev/null 2>&1 || true
        ;;
    esac
    if [ "$SECONDS" -ge "$deadline" ]; then
      show_logs
      die "node ${name} is '$(node_state "$name")', not idle, after ${wait_s}s"
    fi
    sleep 0.2
  done
done

# --- checks: every node runs a task and answers with its own hostname (srun
# reaches slurmctld, and the nodes reach srun's I/O ports on the bridge), and
# the PMIx plugin starts on every node.
hosts="$(timeout "$wait_s" srun -N "$nodes" --ntasks-per-node=1 hostname 2>&1)" ||
  { echo "$hosts" >&2; show_logs; die "'srun -N ${nodes} hostname' failed"; }
for name in "${node_names[@]}"; do
  grep -qx "$name" <<<"$hosts" ||
    { show_logs; die "'srun -N ${nodes} hostname' printed '$(echo $hosts)', not ${name}"; }
done
if ! out="$(timeout "$wait_s" srun -N "$nodes" --ntasks-per-node=2 --mpi=pmix true 2>&1)"; then
  echo "$out" >&2
  show_logs
  die "'srun -N ${nodes} --mpi=pmix true' failed"
fi

cat <<USAGE
start_cluster: ${nodes}-node Slurm cluster is up: ${node_names[*]} (${node_cpus} CPUs each, $(cluster_node_addr 1)...; srun -N ${nodes} hostname and --mpi=pmix work)
  export SLURM_CONF=${CLUSTER_CONF}
  srun -N 2 --ntasks-per-node=2 --mpi=pmix ./prog     # 4 ranks, 2 per node
  salloc -N 2 mpiexec -n 4 ./prog                     # mpiexec hands off to srun
  ip netns exec $(cluster_netns 1) ss -tanp            # look inside node1
  tools/slurm/stop_cluster.sh                         # remove it all
USAGE
