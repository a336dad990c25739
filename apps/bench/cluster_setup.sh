# shellcheck shell=bash disable=SC2154  # repo, work, note: set by the caller
# Sourced by the scripts that run jobs across the nodes of the simulated
# Slurm cluster (tools/slurm/start_cluster.sh): cluster_compare.sh and
# dslash_compare.sh, after bench_setup.sh; not run on its own.
# Expects: repo, work (bench_setup.sh's scratch directory) and a note
# function. Sets: the cluster's names (tools/slurm/cluster_common.sh:
# CLUSTER_CONF, CLUSTER_SUBNET, ...), cores, ompi_env and started_cluster,
# and replaces bench_setup.sh's EXIT trap with one that also stops a
# cluster that ensure_cluster started. Every srun here names the cluster's
# SLURM_CONF itself, so the caller's other launches see no Slurm setting.

# shellcheck source=tools/slurm/cluster_common.sh
. "${repo}/tools/slurm/cluster_common.sh"

cores="$(nproc)"
# Open MPI between the simulated nodes: TCP on the cluster's subnet, vader
# inside one node.
ompi_env=(OMPI_MCA_pml=ob1 "OMPI_MCA_btl=self,vader,tcp"
  OMPI_MCA_btl_tcp_if_include="${CLUSTER_SUBNET}")

started_cluster=0
# shellcheck disable=SC2317  # run by the EXIT trap
cluster_cleanup() {
  if [ "${started_cluster}" = 1 ]; then
    note "stopping the cluster this script started"
    "${repo}/tools/slurm/stop_cluster.sh" >"${work}/stop_cluster.log" 2>&1 ||
      tail -n 20 "${work}/stop_cluster.log" >&2
  fi
  rm -rf "${work}"
}
trap cluster_cleanup EXIT

cluster_answers() {
  SLURM_CONF="${CLUSTER_CONF}" timeout 30 srun -N 2 --mpi=pmix true >/dev/null 2>&1
}
# cluster_stamp: changes when the cluster is stopped or started again.
cluster_stamp() {
  echo "$(cat "${CLUSTER_DIR}/run/slurmctld.pid" 2>/dev/null) $(stat -c %Y "${CLUSTER_CONF}" 2>/dev/null)"
}

# ensure_cluster: uses a cluster that answers; starts one when there is
# none (started_cluster=1 then); waits up to a minute for one that exists
# but does not answer (being restarted, say) before repairing it with
# start_cluster.sh at its own node count, so a larger cluster stays as is.
ensure_cluster() {
  cluster_answers && return 0
  local fresh=0 nodes=2 deadline=$((SECONDS + 60))
  if [ -f "${CLUSTER_CONF}" ]; then
    note "the cluster does not answer; waiting up to 60 s"
    while [ "${SECONDS}" -lt "${deadline}" ]; do
      sleep 5
      cluster_answers && return 0
    done
    local n
    n="$(grep -o 'node[0-9]*' "${CLUSTER_CONF}" 2>/dev/null | sort -u | wc -l)"
    [ "${n}" -gt 2 ] && nodes="${n}"
  else
    fresh=1
  fi
  note "starting the cluster: tools/slurm/start_cluster.sh --nodes ${nodes}"
  if ! "${repo}/tools/slurm/start_cluster.sh" --nodes "${nodes}" >"${work}/start_cluster.log" 2>&1; then
    tail -n 30 "${work}/start_cluster.log" >&2
    note "could not start the cluster"
    return 1
  fi
  [ "${fresh}" = 1 ] && started_cluster=1
  return 0
}

# cluster_job_env LIB RANKS: sets the array job_env to the settings a job
# of RANKS ranks of LIB (minimpi or openmpi) gets across the nodes. Ranks
# that outnumber the machine's cores must not spin while they wait, and
# neither library can see it here: each takes its node's ranks from the
# launcher, and the simulated nodes share this machine's cores. So both
# get, for such jobs, what they choose themselves when they can see it:
# Open MPI what mpirun.openmpi --oversubscribe sets (yield when idle),
# minimpi what MINIMPI_WAIT_POLICY=auto picks when ranks outnumber cores
# (no spin, 50 us of yields, then sleep until the doorbell). Ranks are
# counted, not their threads: 2 ranks x 2 threads on 2 cores get nothing
# here, and each library has to notice the shared cores itself (minimpi's
# MPI_Parrived does, by the core's involuntary switches), as it would under
# any job manager. A setting the caller's environment already has wins.
# shellcheck disable=SC2034  # job_env is the caller's
cluster_job_env() {
  local lib="$1" ranks="$2"
  job_env=()
  if [ "${lib}" = openmpi ]; then
    job_env+=("${ompi_env[@]}")
    if [ "${ranks}" -gt "${cores}" ] && [ -z "${OMPI_MCA_mpi_yield_when_idle+set}" ]; then
      job_env+=(OMPI_MCA_mpi_yield_when_idle=1)
    fi
  elif [ "${lib}" = minimpi ] && [ "${ranks}" -gt "${cores}" ] &&
      [ -z "${MINIMPI_WAIT_SPIN_US+set}" ]; then
    job_env+=(MINIMPI_WAIT_SPIN_US=0 MINIMPI_WAIT_YIELD_US=50)
  fi
}

# cluster_settings: the lines the tables' header gives cluster_job_env's
# settings.
cluster_settings() {
  echo "- Open MPI settings under srun: ${ompi_env[*]}; OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1} for jobs of more than ${cores} ranks"
  echo "- minimpi, for srun jobs of more than ${cores} ranks: MINIMPI_WAIT_SPIN_US=${MINIMPI_WAIT_SPIN_US:-0} MINIMPI_WAIT_YIELD_US=${MINIMPI_WAIT_YIELD_US:-50} (what auto picks when it sees ranks outnumber cores; the simulated nodes hide it); ranks counted, not threads"
}

# cluster_srun LABEL OUT TIMEOUT NODES PER_NODE [VAR=VALUE...] -- PROGRAM
# ARGS...: one srun job of NODES x PER_NODE ranks under the cluster's
# SLURM_CONF and the VAR=VALUE settings, killed after TIMEOUT seconds; its
# stdout in OUT.txt, its stderr in OUT.err. A job that fails while the
# cluster went away or was started again (by someone else) is run once more
# once the cluster answers. Returns the job's exit status (124 or 137: it
# was killed at TIMEOUT).
cluster_srun() {
  local label="$1" out="$2" limit="$3" nodes="$4" per_node="$5"
  shift 5
  local -a env_vars=()
  while [ "$1" != "--" ]; do env_vars+=("$1"); shift; done
  shift
  local attempt rc stamp
  for attempt in 1 2; do
    stamp="$(cluster_stamp)"
    rc=0
    env SLURM_CONF="${CLUSTER_CONF}" "${env_vars[@]}" \
      timeout --kill-after=15 "${limit}" \
      srun -N "${nodes}" --ntasks-per-node="${per_node}" --mpi=pmix \
      --kill-on-bad-exit=1 "$@" >"${out}.txt" 2>"${out}.err" || rc=$?
    [ "${rc}" = 0 ] && break
    tail -n 8 "${out}.err" >&2
    case "${rc}" in
      124 | 137) note "${label}: timed out after ${limit} s" ;;
      *) note "${label}: failed, exit ${rc}" ;;
    esac
    [ "${attempt}" = 1 ] || break
    [ "$(cluster_stamp)" != "${stamp}" ] || ! cluster_answers || break
    note "${label}: the cluster went away or was restarted meanwhile; once more"
    ensure_cluster || break
  done
  return "${rc}"
}
