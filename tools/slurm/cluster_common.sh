# Names shared by start_cluster.sh and stop_cluster.sh (sourced, not run):
# everything the simulated cluster creates is named here, so stop_cluster.sh
# removes exactly that and nothing of the machine's or the one-node Slurm's.
# shellcheck shell=bash disable=SC2034  # the variables are for the sourcing scripts

# Configuration, state, spool, logs, munge key and socket, per-node TmpFS.
# Under /run: a tmpfs, so a reboot leaves nothing either.
CLUSTER_DIR=/run/minimpi-cluster
CLUSTER_CONF="${CLUSTER_DIR}/slurm.conf"
CLUSTER_MUNGE_SOCKET="${CLUSTER_DIR}/munge/munge.socket"
# Ports of its own (the one-node Slurm and most sites use 6817/6818).
CLUSTER_CTLD_PORT=6917
CLUSTER_SLURMD_PORT=6918
# A /24 private to minimpi; the bridge in the root namespace is .1, node N
# is .(10+N).
CLUSTER_SUBNET_PREFIX=10.213.0
CLUSTER_SUBNET="${CLUSTER_SUBNET_PREFIX}.0/24"
CLUSTER_BRIDGE_ADDR="${CLUSTER_SUBNET_PREFIX}.1"
# Interface names are at most 15 characters.
CLUSTER_BRIDGE=minimpi-br0
CLUSTER_NETNS_PREFIX=minimpi-node
CLUSTER_VETH_PREFIX=minimpi-veth

cluster_netns() { echo "${CLUSTER_NETNS_PREFIX}$1"; }
cluster_host_veth() { echo "${CLUSTER_VETH_PREFIX}$1"; }
cluster_node_addr() { echo "${CLUSTER_SUBNET_PREFIX}.$((10 + $1))"; }
# cluster_node_names N: sets the array node_names to node1..nodeN (names
# that cannot clash with the one-node Slurm's node, "localhost").
cluster_node_names() {
  node_names=()
  local i
  for i in $(seq 1 "$1"); do node_names+=("node$i"); done
}

# cluster_pid_alive PIDFILE: the daemon the pid file names is running.
cluster_pid_alive() {
  [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}
