#!/usr/bin/env bash
# Builds apps/dslash/dslash.c unchanged with each MPI library, runs it in
# interleaved rounds on one node and across two simulated nodes, and prints
# one markdown table of the Dslash proxy's total time per iteration with
# per-round ratios (the partitioned and endpoints targets of issue 44):
#   minimpi   installed with `bazel run //:install` into a temporary prefix
#             (or --prefix), compiled with its mpicc: master, threads,
#             endpoints, partitioned
#   Open MPI  Debian's mpicc.openmpi / mpirun.openmpi: master, threads
#   MPICH     Debian's mpicc.mpich / mpirun.mpich (only when --libs names
#             it; one node only): master, threads
# A configuration is one:RxT (R ranks x T OpenMP threads per rank on one
# node) or two:RxT (R ranks across two nodes of the simulated Slurm cluster,
# R/2 per node). One node: minimpi's mpiexec --bind-to none, mpirun.openmpi
# --allow-run-as-root --oversubscribe --bind-to none, mpirun.mpich
# -bind-to none. Two nodes: srun -N 2 --ntasks-per-node=R/2 --mpi=pmix,
# with apps/bench/cluster_setup.sh's settings (Open MPI over TCP; yielding
# waits for more ranks than cores). The cluster: used when it answers,
# else started with tools/slurm/start_cluster.sh (and then stopped at the
# end); when it cannot be started (no root, no Slurm) the two-node rows
# are skipped with a note.
# Each run is one job of one (library, mode). A round runs every (library,
# mode) of a configuration once, in reverse order every other round, so
# that a slow moment of the machine falls on all of them alike. The table:
# per configuration and mode, the median over rounds of the total time (us
# per iteration) and the medians [min-max] of the per-round ratios of the
# total time to minimpi's master, Open MPI's master and Open MPI's threads
# modes (same round, same configuration); for minimpi's partitioned and
# endpoints modes the target (met: median ratio to minimpi master <= 1.05)
# and the medians of the per-round ratios of each phase (compute,
# pack+post, wait+unpack) to minimpi master's.
#
#   usage: apps/dslash/dslash_compare.sh [--quick] [--configs LIST]
#                                        [--rounds N] [--libs LIST]
#                                        [--lattice XxYxZxT] [--iters N]
#                                        [--warmup N] [--timeout S]
#                                        [--prefix DIR] [--raw DIR]
#     --quick      8x8x8x16, 3 iterations, 1 warm-up, 2 rounds unless
#                  given: checks that it all works, measures little
#     --configs    configurations (default "one:2x1 one:2x2 one:4x1
#                  two:2x1 two:2x2")
#     --rounds     rounds per configuration (default 7)
#     --libs       libraries (default "minimpi openmpi"; add mpich for
#                  its one-node rows)
#     --lattice    global lattice (default 16x16x16x16)
#     --iters      timed iterations per run (default 20)
#     --warmup     untimed iterations per run before them (default 2)
#     --timeout    limit for one run in seconds (default 600); a (library,
#                  mode) that reaches it is not run again in that
#                  configuration
#     --prefix     use an existing minimpi installation instead of installing
#     --raw        keep each run's raw output in DIR
#   BAZEL          the bazel command (default: bazel)
# Ranks and threads are not bound to cores (a rank's threads need several).
# With more threads than cores, as on a 2-core machine, the times measure
# the scheduler as much as the library: read the ratios, and compare only
# quiet runs. A run fails when it exits non-zero or its output does not end
# in PASS (the program checks every site against its serial reference).
# Exits non-zero when a library failed to build or a run failed; the table
# is printed all the same, the failures listed under it. The defaults make
# 210 jobs (5 configurations x 7 rounds x 6), roughly 10-15 minutes on 2
# cores (--quick: under 2 minutes).
set -uo pipefail

repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)"
source_file="${repo}/apps/dslash/dslash.c"
# shellcheck disable=SC2034  # bazel: read by bench_setup.sh's install_minimpi
read -r -a bazel <<<"${BAZEL:-bazel}"

usage() { sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
quick=0
configs="one:2x1 one:2x2 one:4x1 two:2x1 two:2x2"
rounds=""
libs="minimpi openmpi"
lattice=""
iters=""
warmup=""
timeout_s=600
prefix=""
raw_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --configs | --rounds | --libs | --lattice | --iters | --warmup | --timeout | --prefix | --raw)
      [ $# -ge 2 ] || usage
      case "$1" in
        --configs) configs="$2" ;;
        --rounds) rounds="$2" ;;
        --libs) libs="$2" ;;
        --lattice) lattice="$2" ;;
        --iters) iters="$2" ;;
        --warmup) warmup="$2" ;;
        --timeout) timeout_s="$2" ;;
        --prefix) prefix="$2" ;;
        --raw) raw_dir="$2" ;;
      esac
      shift 2 ;;
    *) usage ;;
  esac
done
if [ "${quick}" = 1 ]; then
  : "${lattice:=8x8x8x16}" "${iters:=3}" "${warmup:=1}" "${rounds:=2}"
else
  : "${lattice:=16x16x16x16}" "${iters:=20}" "${warmup:=2}" "${rounds:=7}"
fi
case "${rounds}${iters}${warmup}${timeout_s}" in
  '' | *[!0-9]*) echo "--rounds, --iters, --warmup, --timeout: whole numbers" >&2; exit 2 ;;
esac
if [ "${rounds}" -lt 1 ] || [ "${timeout_s}" -lt 1 ]; then
  echo "--rounds, --timeout: at least 1" >&2
  exit 2
fi
for lib in ${libs}; do
  case "${lib}" in minimpi | openmpi | mpich) ;;
    *) echo "--libs: minimpi, openmpi, mpich" >&2; exit 2 ;;
  esac
done
[ -n "${configs// /}" ] || { echo "--configs: at least one" >&2; exit 2; }
for config in ${configs}; do
  if ! [[ "${config}" =~ ^(one|two):([1-9][0-9]*)x([1-9][0-9]*)$ ]] ||
      { [ "${BASH_REMATCH[1]}" = two ] && [ $((BASH_REMATCH[2] % 2)) != 0 ]; }; then
    echo "--configs: one:RxT or two:RxT (R ranks x T threads; R even across two nodes), not ${config}" >&2
    exit 2
  fi
done

status=0
failures=()
# Where a failure's logs stay: under --raw; otherwise removed at the end.
logs_kept=1
[ -n "${raw_dir}" ] || logs_kept=0
note() { echo "dslash_compare: $*" >&2; }
# shellcheck source=apps/bench/bench_setup.sh
source "${repo}/apps/bench/bench_setup.sh"
# shellcheck source=apps/bench/cluster_setup.sh
source "${repo}/apps/bench/cluster_setup.sh"
# results: a line per passed run (see run_one); tried: "CONFIG LIB" for
# each library run in a configuration (the rows of the table).
results="${work}/results.txt"
tried="${work}/tried.txt"
: >"${results}"
: >"${tried}"

# log_hint FILE...: " (log: FILE, ...)" when --raw keeps them.
log_hint() {
  if [ "${logs_kept}" = 1 ]; then
    local IFS=,
    echo " (log: $*)" | sed 's/,/, /g'
  fi
}

# --- builds ------------------------------------------------------------------
if [[ " ${libs} " == *" minimpi "* ]] && ! install_minimpi; then
  note "minimpi install failed; its rows will be missing"
fi

build() {  # build LIB: ${work}/dslash_LIB
  local lib="$1" cc="mpicc.$1"
  [ "${lib}" = minimpi ] && cc="${prefix}/bin/mpicc"
  if ! command -v "${cc}" >/dev/null 2>&1; then
    note "${lib}: ${cc} not found"
    return 1
  fi
  if ! "${cc}" -std=c11 -O2 -fopenmp -o "${work}/dslash_${lib}" \
      "${source_file}" >"${raw_dir}/${lib}.build.log" 2>&1; then
    tail -n 20 "${raw_dir}/${lib}.build.log" >&2
    note "${lib}: build failed"
    return 1
  fi
}

built=""
for lib in ${libs}; do
  if build "${lib}"; then
    built="${built} ${lib}"
  else
    status=1
    failures+=("${lib}: build$(log_hint "${raw_dir}/${lib}.build.log")")
  fi
done

# --- the cluster ---------------------------------------------------------------
cluster=none
if [[ " ${configs}" == *" two:"* ]]; then
  if ensure_cluster; then
    cluster=up
  else
    note "no simulated cluster: the two-node rows are skipped"
  fi
fi

# --- runs --------------------------------------------------------------------
modes_of() {  # modes_of LIB
  case "$1" in
    minimpi) echo "master threads endpoints partitioned" ;;
    *) echo "master threads" ;;
  esac
}

# one_node_launcher LIB RANKS THREADS: sets the array launcher.
one_node_launcher() {
  local lib="$1" ranks="$2" threads="$3"
  case "${lib}" in
    # No other environment for minimpi: the rpath its wrapper added must
    # find libmpi.
    minimpi) launcher=("${prefix}/bin/mpiexec" --bind-to none -x OMP_NUM_THREADS -n "${ranks}") ;;
    mpich) launcher=(mpirun.mpich -bind-to none -genv OMP_NUM_THREADS "${threads}" -n "${ranks}") ;;
    # Open MPI refuses to start as root unless told twice that it is wanted,
    # and more ranks than cores unless told to oversubscribe.
    openmpi) launcher=(mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none
      -x OMP_NUM_THREADS -n "${ranks}") ;;
  esac
}

# run_one CONFIG LIB MODE ROUND: one job; its output in
# raw_dir/WHERE_RxT_LIB_MODE_rROUND.txt (.err: stderr; .txt renamed .failed
# when the run fails). A run that passes adds "CONFIG LIB MODE ROUND
# compute pack_post wait_unpack comm total" (us per iteration, the
# program's max over ranks) to the results. Returns 1 when it failed, 2
# when it ran into --timeout.
run_one() {
  local config="$1" lib="$2" mode="$3" round="$4"
  local where="${config%%:*}" shape="${config#*:}"
  local ranks="${shape%x*}" threads="${shape#*x}"
  local out="${raw_dir}/${where}_${shape}_${lib}_${mode}_r${round}"
  local label="${config} ${lib} ${mode} round ${round}"
  local -a args=(--mode "${mode}" --lattice "${lattice}" --iters "${iters}" --warmup "${warmup}")
  local rc=0 started="${SECONDS}" why=""
  note "${label}"
  if [ "${where}" = two ]; then
    local -a job_env
    cluster_job_env "${lib}" "${ranks}"
    cluster_srun "${label}" "${out}" "${timeout_s}" 2 $((ranks / 2)) \
      OMP_NUM_THREADS="${threads}" "${job_env[@]}" -- \
      "${work}/dslash_${lib}" "${args[@]}" || rc=$?
  else
    local -a launcher
    one_node_launcher "${lib}" "${ranks}" "${threads}"
    # MPIEXEC_TIMEOUT: all three launchers end a job that outlives it;
    # timeout(1) is the backstop.
    env MPIEXEC_TIMEOUT="${timeout_s}" OMP_NUM_THREADS="${threads}" \
      timeout --kill-after=20 "$((timeout_s + 30))" \
      "${launcher[@]}" "${work}/dslash_${lib}" "${args[@]}" \
      >"${out}.txt" 2>"${out}.err" || rc=$?
  fi
  local last row
  last="$(awk '{ sub(/[ \t\r]+$/, "") } NF { line = $0 } END { print line }' "${out}.txt")"
  row="$(awk -F '|' -v mode="${mode}" '
    NF == 8 { name = $2; gsub(/ /, "", name); if (name == mode) print $3 + 0, $4 + 0, $5 + 0, $6 + 0, $7 + 0 }' "${out}.txt")"
  if [ "${rc}" != 0 ]; then
    why="exit ${rc}"
    # The launchers end a job at MPIEXEC_TIMEOUT with an exit status of
    # their own; timeout(1) and srun's with 124 or 137.
    if [ $((SECONDS - started)) -ge "${timeout_s}" ] || [ "${rc}" = 124 ] || [ "${rc}" = 137 ]; then
      why="ran into --timeout ${timeout_s} s"
    fi
  elif [ "${last}" != PASS ]; then
    why="output does not end in PASS"
  elif [ -z "${row}" ]; then
    why="no timing row for ${mode}"
  fi
  if [ -z "${why}" ]; then
    echo "${config} ${lib} ${mode} ${round} ${row}" >>"${results}"
    return 0
  fi
  tail -n 10 "${out}.txt" "${out}.err" >&2
  note "${label}: failed (${why})"
  failures+=("${label}: ${why}$(log_hint "${out}.failed" "${out}.err")")
  mv -f "${out}.txt" "${out}.failed"
  [ "${why#ran into}" = "${why}" ] || return 2
  return 1
}

skipped=()
for config in ${configs}; do
  if [ "${config%%:*}" = two ] && [ "${cluster}" != up ]; then
    skipped+=("${config}: no simulated cluster (tools/slurm/start_cluster.sh could not start one)")
    continue
  fi
  variants=()
  for lib in ${built}; do
    if [ "${config%%:*}" = two ] && [ "${lib}" = mpich ]; then
      skipped+=("${config} mpich: one node only (not launched under srun here)")
      continue
    fi
    echo "${config} ${lib}" >>"${tried}"
    for mode in $(modes_of "${lib}"); do variants+=("${lib}:${mode}"); done
  done
  declare -A hung=()
  for ((round = 1; round <= rounds; round++)); do
    order=("${variants[@]}")
    if ((round % 2 == 0)); then
      order=()
      for ((i = ${#variants[@]} - 1; i >= 0; i--)); do order+=("${variants[i]}"); done
    fi
    for variant in "${order[@]}"; do
      if [ -n "${hung[${variant}]:-}" ]; then
        note "${config} ${variant/:/ } round ${round}: skipped (it ran into --timeout before)"
        failures+=("${config} ${variant/:/ } round ${round}: skipped (it ran into --timeout before)")
        continue
      fi
      rc=0
      run_one "${config}" "${variant%%:*}" "${variant#*:}" "${round}" || rc=$?
      [ "${rc}" = 0 ] || status=1
      [ "${rc}" = 2 ] && hung[${variant}]=1
    done
  done
  unset hung
done

# --- the table ---------------------------------------------------------------
echo "Libraries:"
for lib in ${libs}; do
  version="$(find "${raw_dir}" -maxdepth 1 -name "*_${lib}_*.txt" -exec grep -h -m1 '^# library:' {} + 2>/dev/null |
    head -n 1 | sed 's/^# library: *//')"
  echo "- ${lib}: ${version:-n/a (did not run)}"
done
minimpi_vars="$(env | grep '^MINIMPI_' | tr '\n' ' ')"
echo "- minimpi settings: ${minimpi_vars:-none}"
echo "- Launch on one node: minimpi mpiexec --bind-to none; mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none; mpirun.mpich -bind-to none"
if [ "${cluster}" = up ]; then
  echo "- Launch across two simulated nodes: srun -N 2 --ntasks-per-node=R/2 --mpi=pmix under SLURM_CONF=${CLUSTER_CONF} ($(srun --version 2>/dev/null)); minimpi's transport auto (shm inside a node, tcp between nodes)"
  cluster_settings
fi
echo "- Machine: ${cores} cores; ranks and threads unbound; $([ "${quick}" = 1 ] && echo "quick run" || echo "full run")"
echo

sort -k1,1 -k2,2 -k3,3 -k4,4n "${results}" |
  awk -v configs="${configs}" -v libs="${built}" -v rounds="${rounds}" \
      -v lattice="${lattice}" -v iters="${iters}" -v warmup="${warmup}" \
      -v tried_file="${tried}" '
  { key = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
    compute[key] = $5; pack[key] = $6; wait_[key] = $7; total[key] = $9 }
  # median of v[1..n] (sorts v)
  function median(v, n,    i, j, t) {
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  # per-round ratios of what[config, lib, mode, r] to what[config, blib,
  # bmode, r], over the rounds where both ran: n, and their median, min and
  # max in rmed, rmin, rmax.
  function ratios(what, config, lib, mode, blib, bmode,    r, a, b, x, y, v, n) {
    n = 0
    for (r = 1; r <= rounds; r++) {
      a = config SUBSEP lib SUBSEP mode SUBSEP r; b = config SUBSEP blib SUBSEP bmode SUBSEP r
      if (!(a in total) || !(b in total)) continue
      if (what == "total") { x = total[a]; y = total[b] }
      else if (what == "compute") { x = compute[a]; y = compute[b] }
      else if (what == "pack") { x = pack[a]; y = pack[b] }
      else { x = wait_[a]; y = wait_[b] }
      if (y <= 0) continue
      v[++n] = x / y
    }
    if (n == 0) return 0
    rmin = v[1]; rmax = v[1]
    for (r = 2; r <= n; r++) { if (v[r] < rmin) rmin = v[r]; if (v[r] > rmax) rmax = v[r] }
    rmed = median(v, n)
    return n
  }
  function ratio_cell(config, lib, mode, blib, bmode) {
    if (lib == blib && mode == bmode) return "(base)"
    if (!ratios("total", config, lib, mode, blib, bmode)) return "-"
    return sprintf("%.2f [%.2f-%.2f]", rmed, rmin, rmax)
  }
  function phase(what, config, mode) {
    return ratios(what, config, "minimpi", mode, "minimpi", "master") ? sprintf("%.2f", rmed) : "-"
  }
  BEGIN {
    names["minimpi"] = "minimpi"; names["openmpi"] = "Open MPI"; names["mpich"] = "MPICH"
    while ((getline line < tried_file) > 0) { split(line, w, " "); tried[w[1], w[2]] = 1 }
  }
  END {
    printf "Dslash proxy (apps/dslash/dslash.c), lattice %s, %d timed iterations after %d warm-up per run, %d rounds per configuration; one:RxT = R ranks x T OpenMP threads per rank on one node, two:RxT = R ranks on two simulated nodes (R/2 per node). Each run is one job of one (library, mode); a round runs each (library, mode) of a configuration once, in reverse order every other round. total = us per iteration (each rank'"'"'s mean, then the maximum over ranks), median over the rounds. Ratios: medians [min-max] over the rounds of the per-round ratio of the total to the named mode'"'"'s in the same round and configuration (below 1: faster). Target (minimpi partitioned and endpoints): met when the median ratio to minimpi master is at most 1.05. Phases: medians of the per-round ratios of compute, pack+post and wait+unpack to minimpi master'"'"'s.\n\n", lattice, iters, warmup, rounds
    print "| config | library | mode | rounds | total us | / minimpi master | / Open MPI master | / Open MPI threads | target | phases / minimpi master: compute, pack+post, wait+unpack |"
    print "|---|---|---|---:|---:|---:|---:|---:|---|---|"
    nc = split(configs, cfg, " "); nl = split(libs, lib, " ")
    for (c = 1; c <= nc; c++) for (l = 1; l <= nl; l++) {
      nm = split(lib[l] == "minimpi" ? "master threads endpoints partitioned" : "master threads", modes, " ")
      for (m = 1; m <= nm; m++) {
        # Skipped configurations and libraries (noted below the table) have
        # no row; a (library, mode) that failed every round reads fail.
        if (!((cfg[c] SUBSEP lib[l]) in tried)) continue
        k = cfg[c] SUBSEP lib[l] SUBSEP modes[m]
        n = 0
        for (r = 1; r <= rounds; r++) if ((k SUBSEP r) in total) v[++n] = total[k SUBSEP r]
        tot = n ? sprintf("%.1f", median(v, n)) : "fail"
        target = ""; phases = ""
        if (lib[l] == "minimpi" && (modes[m] == "partitioned" || modes[m] == "endpoints")) {
          target = ratios("total", cfg[c], "minimpi", modes[m], "minimpi", "master") ? (rmed <= 1.05 ? "met" : "missed") : "no number"
          phases = phase("compute", cfg[c], modes[m]) ", " phase("pack", cfg[c], modes[m]) ", " phase("wait", cfg[c], modes[m])
        }
        printf "| %s | %s | %s | %d/%d | %s | %s | %s | %s | %s | %s |\n", cfg[c], names[lib[l]], modes[m], n, rounds, tot,
          ratio_cell(cfg[c], lib[l], modes[m], "minimpi", "master"),
          ratio_cell(cfg[c], lib[l], modes[m], "openmpi", "master"),
          ratio_cell(cfg[c], lib[l], modes[m], "openmpi", "threads"), target, phases
      }
    }
  }'

if [ "${#skipped[@]}" -gt 0 ]; then
  echo
  echo "Skipped:"
  for s in "${skipped[@]}"; do echo "- ${s}"; done
fi
if [ "${#failures[@]}" -gt 0 ]; then
  echo
  echo "Failed:"
  for f in "${failures[@]}"; do echo "- ${f}"; done
fi
exit "${status}"
