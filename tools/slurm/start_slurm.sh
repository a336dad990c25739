#!/usr/bin/env bash
# Starts a one-node Slurm on this machine (for CI and for trying
# `srun --mpi=pmix`): munged, a slurm.conf for a node called localhost that
# advertises more CPUs than it has (so 8-rank jobs fit on a small machine),
# slurmctld and slurmd. Waits until the node is idle and checks that
# `srun --mpi=pmix -n 2 true` works. Idempotent: running it again with the
# cluster up only re-checks it.
#
# Run as root after tools/install_deps.sh. Environment:
#   SLURM_NODE_CPUS  CPUs the node advertises (default 16)
#   SLURM_WAIT_S     seconds to wait for each step (default 60)
set -euo pipefail

node_cpus="${SLURM_NODE_CPUS:-16}"
wait_s="${SLURM_WAIT_S:-60}"
conf_dir=/etc/slurm
conf="${conf_dir}/slurm.conf"
log_dir=/var/log/slurm

die() {
  echo "start_slurm: error: $*" >&2
  exit 1
}

show_logs() {
  for log in "${log_dir}/slurmctld.log" "${log_dir}/slurmd.log"; do
    if [ -f "$log" ]; then
      echo "--- last lines of $log:" >&2
      tail -n 20 "$log" >&2
    fi
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
    sleep 0.5
  done
}

[ "$(id -u)" -eq 0 ] || die "must run as root (it starts munged, slurmctld and slurmd)"
for tool in munged munge unmunge slurmctld slurmd sinfo srun scontrol; do
  command -v "$tool" >/dev/null || die "'$tool' not found; run tools/install_deps.sh first"
done

# --- munge: Slurm authenticates every message with it.
munge_works() { munge -n </dev/null | unmunge >/dev/null; }
if ! munge_works 2>/dev/null; then
  [ -f /etc/munge/munge.key ] || die "/etc/munge/munge.key is missing (reinstall the munge package)"
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge /etc/munge/munge.key 2>/dev/null || true
  chmod 0700 /var/log/munge /var/lib/munge
  chmod 0755 /run/munge
  chmod 0400 /etc/munge/munge.key
  # --force: start even where munged dislikes the permissions of a
  # container's file system.
  if id munge >/dev/null 2>&1; then
    su -s /bin/sh munge -c "munged --force" 2>/dev/null || munged --force
  else
    munged --force
  fi
  wait_for "$wait_s" "munged to answer" munge_works
fi

# --- slurm.conf
mkdir -p "$conf_dir" "$log_dir" /var/spool/slurmctld /var/spool/slurmd
new_conf="$(mktemp)"
cat >"$new_conf" <<CONF
# One-node Slurm for minimpi's CI, written by tools/slurm/start_slurm.sh.
ClusterName=minimpi
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# No cgroups in containers: track processes by parent pid, no task binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
# Lets the node advertise more CPUs than it has, for oversubscribed tests.
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=${log_dir}/slurmctld.log
SlurmdLogFile=${log_dir}/slurmd.log
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=localhost NodeAddr=127.0.0.1 CPUs=${node_cpus} State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF

conf_changed=1
if [ -f "$conf" ] && cmp -s "$new_conf" "$conf"; then conf_changed=0; fi
if [ "$conf_changed" -eq 1 ]; then
  install -m 0644 "$new_conf" "$conf"
fi
rm -f "$new_conf"

# --- daemons
daemon_running() { # NAME PIDFILE
  [ -f "$2" ] && kill -0 "$(cat "$2")" 2>/dev/null
}
stop_daemon() { # NAME PIDFILE
  if daemon_running "$1" "$2"; then
    kill "$(cat "$2")"
    for _ in $(seq 40); do daemon_running "$1" "$2" || return 0; sleep 0.25; done
    kill -9 "$(cat "$2")" 2>/dev/null || true
  fi
}

if [ "$conf_changed" -eq 1 ]; then
  # The configuration changed under running daemons: restart them on it.
  stop_daemon slurmd /run/slurmd.pid
  stop_daemon slurmctld /run/slurmctld.pid
fi
if ! daemon_running slurmctld /run/slurmctld.pid; then
  slurmctld || { show_logs; die "slurmctld did not start"; }
fi
wait_for "$wait_s" "slurmctld to answer" scontrol ping
if ! daemon_running slurmd /run/slurmd.pid; then
  slurmd -N localhost || { show_logs; die "slurmd did not start"; }
fi

node_state() { sinfo -h -n localhost -o %t 2>/dev/null | head -n 1; }
node_usable() { case "$(node_state)" in idle* | mix* | alloc*) return 0 ;; *) return 1 ;; esac; }
deadline=$((SECONDS + wait_s))
until node_usable; do
  case "$(node_state)" in
    down* | drain* | drng*)
      # A node left down by an earlier run comes back once slurmd answers.
      scontrol update nodename=localhost state=resume >/dev/null 2>&1 || true
      ;;
  esac
  if [ "$SECONDS" -ge "$deadline" ]; then
    show_logs
    die "node localhost is '$(node_state)', not idle, after ${wait_s}s"
  fi
  sleep 0.5
done

# --- the check CI relies on: srun starts PMIx clients.
if ! timeout "$wait_s" srun --mpi=pmix -n 2 true; then
  show_logs
  die "'srun --mpi=pmix -n 2 true' failed"
fi
echo "start_slurm: one-node Slurm is up: node localhost ($(node_state), ${node_cpus} CPUs); srun --mpi=pmix works"
