#!/usr/bin/env bash
# Builds apps/bench/rma.c unchanged with three MPI libraries, runs each with
# 2 ranks (rank 0 the origin, rank 1 the target), and prints three markdown
# tables side by side: one-sided latencies (fence and flush), bandwidth
# (windows of 64 puts or gets per flush) and atomic rates (accumulate,
# fetch-and-op, compare-and-swap).
#   minimpi   installed with `bazel run //:install` into a temporary prefix,
#             compiled with its mpicc, run with its mpiexec (with
#             MINIMPI_TRANSPORT=VALUE when --transport says so)
#   MPICH     Debian's mpicc.mpich / mpirun.mpich
#   Open MPI  Debian's mpicc.openmpi / mpirun.openmpi. Its default one-sided
#             component (osc rdma, over the vader BTL in 4.1) may crash (a
#             segfault in compare-and-swap); when the default run fails, it
#             runs again with OMPI_MCA_osc=ucx, then pt2pt, and the captions
#             say which one the numbers come from. An OMPI_MCA_osc in the
#             caller's environment is used as it is, with no fallback.
# Ratios compare minimpi with the best of the other two, so only numbers from
# this one run are ever compared; above 1 always means minimpi is better.
#
#   usage: apps/bench/rma_compare.sh [--max BYTES] [--bind-to core|none]
#                                    [--transport T] [--split-nodes]
#                                    [--timeout S]
#                                    [--prefix DIR] [--raw DIR]
#     --max        largest put/get (default 4194304 = 4 MiB)
#     --bind-to    pin each rank to a core in all three libraries (default
#                  core) or in none of them
#     --transport  run minimpi (only) with MINIMPI_TRANSPORT=T, e.g. tcp:
#                  its path between nodes, measured on one machine
#     --split-nodes  run minimpi (only) with MINIMPI_NODE_SPLIT=2: its two
#                  ranks then sit on two pretend nodes, so its windows are
#                  not mapped by the other rank and everything takes the
#                  network path (tcp, or what --transport says)
#     --timeout    limit for one run in seconds (default 300)
#     --prefix     use an existing minimpi installation instead of installing
#     --raw        keep each library's raw output in DIR
#   BAZEL          the bazel command (default: bazel)
# Under half a minute per library on 2 cores.
# Exits non-zero when a library failed to build, run or verify its data (its
# column then reads n/a); an Open MPI that ran with a fallback osc counts as
# having run.
set -uo pipefail

repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)"
source_file="${repo}/apps/bench/rma.c"
read -r -a bazel <<<"${BAZEL:-bazel}"

max_bytes=$((4 << 20))
bind_to=core
transport=""
split_nodes=0
timeout_s=300
prefix=""
raw_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --max) max_bytes="$2"; shift 2 ;;
    --bind-to) bind_to="$2"; shift 2 ;;
    --transport) transport="$2"; shift 2 ;;
    --split-nodes) split_nodes=1; shift ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --prefix) prefix="$2"; shift 2 ;;
    --raw) raw_dir="$2"; shift 2 ;;
    *) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
case "${bind_to}" in core | none) ;; *) echo "--bind-to core|none" >&2; exit 2 ;; esac

status=0
note() { echo "rma_compare: $*" >&2; }
# shellcheck source=apps/bench/bench_setup.sh
source "${repo}/apps/bench/bench_setup.sh"

install_minimpi || note "minimpi install failed; its column will read n/a"

build() {  # build LABEL COMPILER
  local label="$1" cc="$2"
  if ! command -v "${cc}" >/dev/null 2>&1; then
    note "${label}: ${cc} not found"
    return 1
  fi
  if ! "${cc}" -O2 -o "${work}/rma_${label}" "${source_file}" \
      >"${raw_dir}/${label}.build.log" 2>&1; then
    tail -n 20 "${raw_dir}/${label}.build.log" >&2
    note "${label}: build failed"
    return 1
  fi
}

# run LABEL NAME [VAR=VALUE...]: one 2-rank run of LABEL's build with those
# variables set for it alone, its output in raw_dir/NAME.txt and
# raw_dir/NAME.err (the .txt removed when the run fails, so columns read n/a).
run() {
  local label="$1" name="$2"; shift 2
  local -a launcher=()
  two_rank_launcher "${label}"
  note "running ${name}${*:+ with $*}"
  # MPIEXEC_TIMEOUT: all three launchers end a job that outlives it;
  # timeout(1) is the backstop.
  if ! env MPIEXEC_TIMEOUT="${timeout_s}" "$@" \
      timeout --kill-after=20 "$((timeout_s + 30))" \
      "${launcher[@]}" "${work}/rma_${label}" "${max_bytes}" \
      >"${raw_dir}/${name}.txt" 2>"${raw_dir}/${name}.err"; then
    tail -n 20 "${raw_dir}/${name}.err" >&2
    note "${name}: run failed (a crash, the time limit or a data check)"
    rm -f "${raw_dir}/${name}.txt"
    return 1
  fi
}

for label in minimpi mpich openmpi; do rm -f "${raw_dir}/${label}.txt"; done

minimpi_env=()
[ -z "${transport}" ] || minimpi_env+=("MINIMPI_TRANSPORT=${transport}")
[ "${split_nodes}" = 0 ] || minimpi_env+=("MINIMPI_NODE_SPLIT=2")
build minimpi "${prefix}/bin/mpicc" &&
  run minimpi minimpi "${minimpi_env[@]}" || status=1
build mpich mpicc.mpich && run mpich mpich || status=1

# Open MPI: the default osc first, then the fallbacks; the first that runs
# and verifies its data gives the column.
osc_used=""
osc_failed=""
if build openmpi mpicc.openmpi; then
  if [ -n "${OMPI_MCA_osc+set}" ]; then
    candidates=("${OMPI_MCA_osc}")
  else
    candidates=(default ucx pt2pt)
  fi
  for osc in "${candidates[@]}"; do
    if [ "${osc}" = default ]; then
      run openmpi openmpi-osc-default || { osc_failed="default (rdma)"; continue; }
    else
      run openmpi "openmpi-osc-${osc}" "OMPI_MCA_osc=${osc}" ||
        { osc_failed="${osc_failed:+${osc_failed}, }${osc}"; continue; }
    fi
    cp "${raw_dir}/openmpi-osc-${osc}.txt" "${raw_dir}/openmpi.txt"
    osc_used="${osc}"
    break
  done
  [ -n "${osc_used}" ] || { status=1; note "openmpi: no osc component ran"; }
else
  status=1
fi
for label in minimpi mpich openmpi; do
  [ -f "${raw_dir}/${label}.txt" ] || : >"${raw_dir}/${label}.txt"
done

# Why the default osc failed, in one line, from its launcher's message.
osc_why=""
if [ -f "${raw_dir}/openmpi-osc-default.err" ] && [ "${osc_failed#default}" != "${osc_failed}" ]; then
  osc_why="$(grep -m1 -E 'Signal: |exited on signal|MPI_ABORT|rma: ' \
    "${raw_dir}/openmpi-osc-default.err" | sed 's/^\[[^]]*\] *//')"
fi

echo "Libraries:"
for label in minimpi mpich openmpi; do
  version="$(grep -m1 '^# library:' "${raw_dir}/${label}.txt" | sed 's/^# library: *//')"
  echo "- ${label}: ${version:-n/a (did not run)}"
done
echo

setup="2 ranks on one node (rank 0 the origin, rank 1 the target, which waits in MPI_Barrier or the fences), bind-to ${bind_to}, one run, MPI_Win_allocate windows"
if [ -n "${transport}" ]; then
  setup="${setup}; minimpi with MINIMPI_TRANSPORT=${transport} (its ${transport} path, here between ranks of one machine; MPICH and Open MPI on their defaults)"
fi
if [ "${split_nodes}" = 1 ]; then
  setup="${setup}; minimpi with MINIMPI_NODE_SPLIT=2 (its ranks on two pretend nodes: no shared mapping, the network path between nodes, measured on one machine; MPICH and Open MPI on their defaults)"
fi
if [ -z "${osc_used}" ]; then
  setup="${setup}; Open MPI did not run (osc tried: ${osc_failed:-none})"
elif [ "${osc_used}" = default ]; then
  setup="${setup}; Open MPI with its default osc component"
elif [ -n "${osc_failed}" ]; then
  also="${osc_failed#default (rdma)}"
  setup="${setup}; Open MPI with OMPI_MCA_osc=${osc_used} (its default osc rdma failed in this benchmark${osc_why:+: ${osc_why}}${also:+; also failed: ${also#, }})"
else
  setup="${setup}; Open MPI with OMPI_MCA_osc=${osc_used} (from the caller's environment)"
fi

# table KIND: KIND lat (lower is better), bw or rate (higher is better).
table() {
  awk -v kind="$1" -v setup="${setup}" '
    /^#/ || NF < 4 { next }
    kind == "lat" && $4 != "us" { next }
    kind == "bw" && $4 != "MB/s" { next }
    kind == "rate" && $4 != "Mops/s" { next }
    {
      key = $1 " " $2
      if (!(key in seen)) { seen[key] = 1; order[++n] = key }
      v[lib, key] = $3
    }
    function human(b) {
      if (b >= 1048576) return (b / 1048576) " MiB"
      if (b >= 1024) return (b / 1024) " KiB"
      return b " B"
    }
    function cell(l, k) { return ((l, k) in v) ? v[l, k] : "n/a" }
    END {
      if (kind == "lat") {
        printf "One-sided latency, %s. us per operation (lower is better): *_fence is one MPI_Put/MPI_Get then MPI_Win_fence on both ranks (osu_put_latency -s fence), *_flush one MPI_Put/MPI_Get + MPI_Win_flush inside one MPI_Win_lock(MPI_LOCK_SHARED) epoch (-s flush). Ratio = best of MPICH and Open MPI / minimpi: above 1 means minimpi is faster.\n\n", setup
      } else if (kind == "bw") {
        printf "One-sided bandwidth, %s. MB/s (1 MB = 1e6 B, higher is better) of windows of 64 MPI_Put/MPI_Get then one MPI_Win_flush, in one MPI_Win_lock(MPI_LOCK_SHARED) epoch (osu_put_bw -s flush). Ratio = minimpi / best of MPICH and Open MPI: above 1 means minimpi is faster.\n\n", setup
      } else {
        printf "Atomic rates, %s. Millions of operations per second (higher is better), each operation followed by MPI_Win_flush in one MPI_Win_lock(MPI_LOCK_SHARED) epoch: acc_rate MPI_Accumulate(MPI_SUM) of one MPI_INT, fop_rate MPI_Fetch_and_op(MPI_SUM) of one MPI_LONG, cas_rate MPI_Compare_and_swap of one MPI_LONG. Ratio = minimpi / best of MPICH and Open MPI: above 1 means minimpi is faster.\n\n", setup
      }
      print "| test | size | minimpi | MPICH | Open MPI | ratio |"
      print "|---|---:|---:|---:|---:|---:|"
      for (i = 1; i <= n; i++) {
        key = order[i]
        split(key, parts, " ")
        best = ""
        for (l = 2; l <= 3; l++) {
          if (!((l, key) in v)) continue
          if (best == "" || (kind == "lat" ? v[l, key] + 0 < best + 0 : v[l, key] + 0 > best + 0)) best = v[l, key]
        }
        ratio = "-"
        if ((1, key) in v && best != "" && best + 0 > 0 && v[1, key] + 0 > 0) {
          ratio = sprintf("%.2f", kind == "lat" ? best / v[1, key] : v[1, key] / best)
        }
        printf "| %s | %s | %s | %s | %s | %s |\n", parts[1], human(parts[2]),
          cell(1, key), cell(2, key), cell(3, key), ratio
      }
      print ""
    }
  ' lib=1 "${raw_dir}/minimpi.txt" lib=2 "${raw_dir}/mpich.txt" lib=3 "${raw_dir}/openmpi.txt"
}

table lat
table bw
table rate

exit "${status}"
