#!/usr/bin/env bash
# Builds apps/dslash/dslash.c unchanged with three MPI libraries, runs it at
# each rank count, and prints one markdown table of the Dslash proxy's
# communication and total time per iteration (the columns of Table I of
# Sridharan, Dinan and Kalamkar, SC14):
#   minimpi   installed with `bazel run //:install` into a temporary prefix
#             (or --prefix), compiled with its mpicc, run with its mpiexec:
#             master, threads, endpoints, partitioned
#   MPICH     Debian's mpicc.mpich / mpirun.mpich: master, threads
#   Open MPI  Debian's mpicc.openmpi / mpirun.openmpi: master, threads
# Ratios compare a mode with the master mode of the same library at the same
# rank count, from this one run.
#
#   usage: apps/dslash/dslash_compare.sh [--quick] [--ranks "2 4"]
#                                        [--threads T] [--lattice XxYxZxT]
#                                        [--iters N] [--warmup N]
#                                        [--timeout S] [--prefix DIR]
#                                        [--raw DIR]
#     --quick      8x8x8x16, 3 iterations, 1 warm-up unless given: checks
#                  that it all works, measures little
#     --ranks      rank counts (default "2 4")
#     --threads    OpenMP threads per rank (default 4)
#     --lattice    global lattice (default 16x16x16x16)
#     --iters      timed iterations per mode (default 20)
#     --warmup     untimed iterations per mode before them (default 2)
#     --timeout    limit for one run in seconds (default 600)
#     --prefix     use an existing minimpi installation instead of installing
#     --raw        keep each run's raw output in DIR
#   BAZEL          the bazel command (default: bazel)
# Ranks and threads are not bound to cores (a rank's threads need several).
# With more threads than cores, as on a 2-core machine, the times measure
# the scheduler as much as the library: compare only quiet runs.
# Exits non-zero when a library failed to build or a run failed (a result
# that differs from the program's serial reference fails the run); its rows
# are then missing and the failure is listed under the table.
set -uo pipefail

repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)"
source_file="${repo}/apps/dslash/dslash.c"
read -r -a bazel <<<"${BAZEL:-bazel}"

quick=0
ranks_list="2 4"
threads=4
lattice=""
iters=""
warmup=""
timeout_s=600
prefix=""
raw_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --ranks) ranks_list="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --lattice) lattice="$2"; shift 2 ;;
    --iters) iters="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --prefix) prefix="$2"; shift 2 ;;
    --raw) raw_dir="$2"; shift 2 ;;
    *) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
if [ "${quick}" = 1 ]; then
  : "${lattice:=8x8x8x16}" "${iters:=3}" "${warmup:=1}"
else
  : "${lattice:=16x16x16x16}" "${iters:=20}" "${warmup:=2}"
fi

status=0
failures=()
note() { echo "dslash_compare: $*" >&2; }
# shellcheck source=apps/bench/bench_setup.sh
source "${repo}/apps/bench/bench_setup.sh"

install_minimpi || note "minimpi install failed; its rows will be missing"

build() {  # build LABEL COMPILER
  local label="$1" cc="$2"
  if ! command -v "${cc}" >/dev/null 2>&1; then
    note "${label}: ${cc} not found"
    return 1
  fi
  if ! "${cc}" -std=c11 -O2 -fopenmp -o "${work}/dslash_${label}" \
      "${source_file}" >"${raw_dir}/${label}.build.log" 2>&1; then
    tail -n 20 "${raw_dir}/${label}.build.log" >&2
    note "${label}: build failed"
    return 1
  fi
}

# run LABEL RANKS MODES: one run, its output in raw_dir/LABEL_RANKS.txt
# (removed when the run fails).
run() {
  local label="$1" ranks="$2" modes="$3"
  local out="${raw_dir}/${label}_${ranks}.txt"
  local -a launcher=()
  case "${label}" in
    # No other environment for minimpi: the rpath its wrapper added must
    # find libmpi.
    minimpi) launcher=("${prefix}/bin/mpiexec" --bind-to none -x OMP_NUM_THREADS -n "${ranks}") ;;
    mpich) launcher=(mpirun.mpich -bind-to none -genv OMP_NUM_THREADS "${threads}" -n "${ranks}") ;;
    # Open MPI refuses to start as root unless told twice that it is wanted,
    # and more ranks than cores unless told to oversubscribe.
    openmpi) launcher=(mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none
      -x OMP_NUM_THREADS -n "${ranks}") ;;
  esac
  note "running ${label} at ${ranks} ranks (${modes})"
  # MPIEXEC_TIMEOUT: all three launchers end a job that outlives it;
  # timeout(1) is the backstop.
  if ! env MPIEXEC_TIMEOUT="${timeout_s}" OMP_NUM_THREADS="${threads}" \
      timeout --kill-after=20 "$((timeout_s + 30))" \
      "${launcher[@]}" "${work}/dslash_${label}" --mode "${modes}" \
      --lattice "${lattice}" --iters "${iters}" --warmup "${warmup}" \
      >"${out}" 2>"${raw_dir}/${label}_${ranks}.err"; then
    tail -n 20 "${out}" "${raw_dir}/${label}_${ranks}.err" >&2
    note "${label} at ${ranks} ranks: run failed"
    failures+=("${label} at ${ranks} ranks (log: ${raw_dir}/${label}_${ranks}.*)")
    mv "${out}" "${out%.txt}.failed"
    return 1
  fi
}

built=""
for label in minimpi mpich openmpi; do
  case "${label}" in
    minimpi) cc="${prefix}/bin/mpicc" ;;
    *) cc="mpicc.${label}" ;;
  esac
  if build "${label}" "${cc}"; then
    built="${built} ${label}"
  else
    status=1
    failures+=("${label}: build (log: ${raw_dir}/${label}.build.log)")
  fi
done

for ranks in ${ranks_list}; do
  for label in ${built}; do
    case "${label}" in
      minimpi) modes=all ;;
      *) modes=master,threads ;;
    esac
    run "${label}" "${ranks}" "${modes}" || status=1
  done
done

# --- the table ---------------------------------------------------------------
echo "Libraries:"
for label in minimpi mpich openmpi; do
  version="$(cat "${raw_dir}/${label}"_*.txt 2>/dev/null | grep -m1 '^# library:' |
    sed 's/^# library: *//')"
  echo "- ${label}: ${version:-n/a (did not run)}"
done
echo

# Rows of the program's table: "| mode | compute | pack_post | wait_unpack |
# comm | total |", times in us per iteration, max over ranks.
for label in minimpi mpich openmpi; do
  for ranks in ${ranks_list}; do
    f="${raw_dir}/${label}_${ranks}.txt"
    [ -f "${f}" ] || continue
    awk -v lib="${label}" -v ranks="${ranks}" -F '|' '
      NF == 8 && $2 !~ /mode|---/ {
        gsub(/ /, "", $2)
        print lib, ranks, $2, $6 + 0, $7 + 0
      }' "${f}"
  done
done | awk -v lattice="${lattice}" -v threads="${threads}" -v iters="${iters}" '
  { key = $1 SUBSEP $2 SUBSEP $3; comm[key] = $4; total[key] = $5; seen_ranks[$2] = 1 }
  function ratio(a, b) { return b > 0 ? sprintf("%.2f", a / b) : "-" }
  END {
    printf "Dslash proxy, lattice %s, %d OpenMP threads per rank, %d timed iterations, ranks and threads unbound, one run. Times in us per iteration (each rank'"'"'s mean, then the maximum over ranks); comm = pack+post + wait+unpack, total = all four phases (the columns are maxima taken separately). Ratios: the mode / the master mode of the same library at the same rank count (below 1: faster than master).\n\n", lattice, threads, iters
    print "| mode | library | ranks | comm_us | total_us | comm / master | total / master |"
    print "|---|---|---:|---:|---:|---:|---:|"
    nm = split("master threads endpoints partitioned", modes, " ")
    nl = split("minimpi mpich openmpi", libs, " ")
    n = 0
    for (r in seen_ranks) rank_list[++n] = r + 0
    for (i = 2; i <= n; i++) for (j = i; j > 1 && rank_list[j - 1] > rank_list[j]; j--) { t = rank_list[j]; rank_list[j] = rank_list[j - 1]; rank_list[j - 1] = t }
    for (i = 1; i <= n; i++) {
      for (m = 1; m <= nm; m++) {
        for (l = 1; l <= nl; l++) {
          key = libs[l] SUBSEP rank_list[i] SUBSEP modes[m]
          if (!(key in comm)) continue
          base = libs[l] SUBSEP rank_list[i] SUBSEP "master"
          rc = (base in comm) ? ratio(comm[key], comm[base]) : "-"
          rt = (base in total) ? ratio(total[key], total[base]) : "-"
          printf "| %s | %s | %d | %.1f | %.1f | %s | %s |\n", modes[m], libs[l], rank_list[i], comm[key], total[key], rc, rt
        }
      }
    }
  }'

if [ "${#failures[@]}" -gt 0 ]; then
  echo
  echo "Failed:"
  for f in "${failures[@]}"; do echo "- ${f}"; done
fi
exit "${status}"
