#!/usr/bin/env bash
# Builds apps/bench/loaded.c unchanged with three MPI libraries and runs its
# kernels (rate, pingpong, halo) while the machine has other work, to show
# what each library's way of waiting (spin, yield, sleep) costs when ranks
# share the cores:
#   minimpi   installed with `bazel run //:install` into a temporary prefix
#             (or --prefix), compiled with its mpicc, run with its mpiexec
#   MPICH     Debian's mpicc.mpich / mpiexec.mpich
#   Open MPI  Debian's mpicc.openmpi / mpiexec.openmpi (shared memory only:
#             --mca btl self,vader)
# Each library is launched with its defaults, binding included (Open MPI
# and minimpi bind ranks that fit the cores; MPICH does not); --bind none
# unbinds all three, to see how they fare with the scheduler alone.
#
# Scenarios (load processes start before a scenario's runs and are killed
# after them; an exit, even on ^C, kills them all):
#   alone      2 ranks, nothing beside them
#   busy1      2 ranks beside one process that spins (never sleeps)
#   busy2      2 ranks beside two spinning processes
#   compilers  2 ranks beside two loops that run `cc -O2 -c` on a generated
#              C file again and again: processes that sleep and wake, as a
#              build or a test runner does
#   oversub    4 ranks on the machine, nothing beside: rate and pingpong in
#              two pairs, halo on a 2x2 grid (ranks outnumber cores when the
#              machine has fewer than 4)
#   threads    2 ranks, each with --threads compute threads of its own
#              (loaded.c --compute-threads): threads outnumber cores
#
# Every (scenario, kernel) runs R rounds (default 7), the three libraries
# interleaved in each, in the order minimpi, MPICH, Open MPI rotated left by
# round-1, so slow drift in the machine's other work hits all three alike
# and no library always runs first. Libraries are compared within a round
# only: each round gives minimpi's ratio to MPICH and to that round's best
# peer, and the tables report the median of those per-round ratios with
# their range, never one library's best run against another's (on these
# machines the host moves the vCPUs about, and a best-of-N across libraries
# measures the host). Each run measures for --time seconds of wall time
# (loaded.c stops on rank 0's clock, so a slow library does fewer
# iterations, not a longer run) and is wrapped in timeout(1): a job still
# running after --timeout seconds is killed and counts as a hang.
#
# Output: one markdown table per kernel. Rows: scenarios. Columns: the
# median over rounds of each library, with the range over rounds in
# brackets, then minimpi / MPICH and minimpi / best peer: in each round
# minimpi against MPICH's run and against the better of MPICH's and Open
# MPI's runs of that round, the median of those per-round ratios and their
# range in brackets. Ratios are oriented so that above 1 means minimpi is
# better: for rate (Mmsg/s, higher is better) minimpi's rate / the peer's;
# for pingpong and halo (microseconds, lower is better) the peer's time /
# minimpi's. A round where minimpi has no figure gives no ratio; one where a
# peer hung or failed compares with the peer that ran; a ratio cell says "k
# of R rounds" when fewer than all rounds gave one. A library's cell reads
# hang when every round timed out, fail when every round failed (a crash or
# a data-check error: its stderr is shown), and a median with "k hang" or
# "k fail" when only some rounds did.
#
#   usage: apps/bench/load_compare.sh [--rounds R] [--scenarios LIST]
#                                     [--kernels LIST] [--time S]
#                                     [--threads N] [--timeout S] [--quick]
#                                     [--bind default|none]
#                                     [-x VAR=VALUE]... [--prefix DIR]
#                                     [--raw DIR]
#     --rounds     rounds per (scenario, kernel) (default 7; quick 2)
#     --scenarios  comma- or space-separated, from alone, busy1, busy2,
#                  compilers, oversub, threads (default: all, that order)
#     --kernels    comma- or space-separated, from rate, pingpong, halo
#                  (default: all)
#     --time       measured seconds per run (default 2; quick 0.3)
#     --threads    compute threads per rank in the threads scenario
#                  (default 2)
#     --timeout    seconds before a run counts as a hang (default 30)
#     --quick      fewer rounds, shorter runs: checks that it all works
#                  (under 2 minutes on 2 cores)
#     -x VAR=VALUE set VAR for minimpi's runs only (repeatable), to compare
#                  minimpi's own settings, e.g. -x MINIMPI_NUM_VCIS=1
#     --prefix     use an existing minimpi installation instead of installing
#     --raw        keep every run's output (SCENARIO_KERNEL_LIB_rN.txt/.err)
#                  and the results list in DIR
#   BAZEL         the bazel command (default: bazel)
# The default run takes about 16 minutes on 2 cores. Exits non-zero when a
# build failed, a run failed (crash or data check) or a minimpi run hung;
# the tables are printed all the same. A peer's hang is a measurement.
set -euo pipefail

repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)"
source_file="${repo}/apps/bench/loaded.c"
# shellcheck disable=SC2034  # bazel: read by bench_setup.sh's install_minimpi
read -r -a bazel <<<"${BAZEL:-bazel}"

all_scenarios="alone busy1 busy2 compilers oversub threads"
all_kernels="rate pingpong halo"
rounds=""
scenarios="${all_scenarios}"
kernels="${all_kernels}"
time_s=""
threads=2
unbind=()  # each library binds as it does by default (--bind)
timeout_s=30
quick=0
minimpi_env=()
prefix=""
raw_dir=""

usage() { sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

# check_words LIST ALLOWED: every word of LIST is a word of ALLOWED.
check_words() {
  local word
  for word in $1; do
    case " $2 " in *" ${word} "*) ;; *) echo "unknown: ${word} (from: $2)" >&2; exit 2 ;; esac
  done
}

while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --scenarios) scenarios="${2//,/ }"; shift 2 ;;
    --kernels) kernels="${2//,/ }"; shift 2 ;;
    --time) time_s="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    # Each library's own binding (the default: Open MPI and minimpi bind
    # ranks that fit the cores, MPICH does not), or none for all.
    --bind) case "$2" in
              default) unbind=() ;;
              none) unbind=(--bind-to none) ;;
              *) echo "load_compare.sh: --bind default|none" >&2; exit 2 ;;
            esac; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --quick) quick=1; shift ;;
    -x)
      case "$2" in [A-Za-z_]*=*) minimpi_env+=("$2") ;; *) echo "-x VAR=VALUE" >&2; exit 2 ;; esac
      shift 2 ;;
    --prefix) prefix="$2"; shift 2 ;;
    --raw) raw_dir="$2"; shift 2 ;;
    *) usage ;;
  esac
done
[ -n "${rounds}" ] || rounds=$((quick ? 2 : 7))
[ -n "${time_s}" ] || time_s=$([ "${quick}" = 1 ] && echo 0.3 || echo 2)
check_words "${scenarios}" "${all_scenarios}"
check_words "${kernels}" "${all_kernels}"
for number in "${rounds}" "${threads}" "${timeout_s}"; do
  case "${number}" in '' | *[!0-9]*) echo "--rounds, --threads, --timeout: whole numbers" >&2; exit 2 ;; esac
done

status=0
note() { echo "load_compare: $*" >&2; }
# shellcheck source=apps/bench/bench_setup.sh
source "${repo}/apps/bench/bench_setup.sh"

# --- load beside the job ---------------------------------------------------
# Each load is a process group of its own (setsid), so killing the group
# also ends the compiler a loop is running at that moment.
load_pids=()

start_load() {  # start_load SCENARIO
  local i
  case "$1" in
    busy1 | busy2)
      for ((i = 0; i < ${1#busy}; i++)); do
        setsid bash -c 'while :; do :; done' </dev/null >/dev/null 2>&1 &
        load_pids+=("$!")
      done ;;
    compilers)
      write_compile_unit "${work}/load_unit.c"
      for i in 1 2; do
        setsid bash -c 'while :; do cc -O2 -c -o "$1" "$2" || exit 1; done' \
          _ "${work}/load_unit_${i}.o" "${work}/load_unit.c" \
          </dev/null >/dev/null 2>"${work}/load_${i}.err" &
        load_pids+=("$!")
      done ;;
  esac
  # Let the load get going (the first compiles) before measuring.
  [ "${#load_pids[@]}" = 0 ] || sleep 1
}

stop_load() {
  local pid
  for pid in ${load_pids[@]+"${load_pids[@]}"}; do
    kill -TERM -- "-${pid}" 2>/dev/null || kill -TERM "${pid}" 2>/dev/null || true
  done
  for pid in ${load_pids[@]+"${load_pids[@]}"}; do wait "${pid}" 2>/dev/null || true; done
  load_pids=()
}

# A C file that keeps `cc -O2` busy for a few tenths of a second: many small
# loop functions, so the compiler optimizes rather than parses.
write_compile_unit() {
  local i
  {
    for ((i = 0; i < 60; i++)); do
      cat <<EOF
double f${i}(double* a, int n) {
  double s = 0;
  for (int i = 1; i < n - 1; i++) { a[i] = 0.5 * (a[i - 1] + a[i + 1]) * ${i}.0; s += a[i] * a[i]; }
  for (int i = 0; i < n; i += 2) s -= a[i] / (1.0 + i);
  return s;
}
EOF
    done
  } >"$1"
}

# bench_setup.sh's trap removes the scratch directory; the load goes first.
trap 'stop_load; rm -rf "${work}"' EXIT
trap 'exit 130' INT TERM HUP

# --- builds ----------------------------------------------------------------
install_minimpi || note "minimpi install failed; its column will read fail"
labels="minimpi mpich openmpi"
built=""
for label in ${labels}; do
  case "${label}" in
    minimpi) cc="${prefix}/bin/mpicc" ;;
    mpich) cc=mpicc.mpich ;;
    openmpi) cc=mpicc.openmpi ;;
  esac
  if ! command -v "${cc}" >/dev/null 2>&1; then
    note "${label}: ${cc} not found"
    status=1
  elif ! "${cc}" -std=c11 -O2 -pthread -o "${work}/loaded_${label}" \
      "${source_file}" >"${raw_dir}/${label}.build.log" 2>&1; then
    tail -n 20 "${raw_dir}/${label}.build.log" >&2
    note "${label}: build failed"
    status=1
  else
    built+=" ${label}"
  fi
done

# --- runs ------------------------------------------------------------------
# results: one line per run: SCENARIO KERNEL LABEL ROUND ok VALUE | hang | fail
results="${raw_dir}/results.txt"
: >"${results}"

ranks_of() { [ "$1" = oversub ] && echo 4 || echo 2; }

run_one() {  # run_one SCENARIO KERNEL LABEL ROUND
  local scenario="$1" kernel="$2" label="$3" round="$4"
  local n out="${raw_dir}/${1}_${2}_${3}_r${4}" rc=0 value
  local -a launcher args=("${kernel}" --time "${time_s}")
  n="$(ranks_of "${scenario}")"
  [ "${scenario}" = threads ] && args+=(--compute-threads "${threads}")
  case "${label}" in
    # No library path for minimpi: the rpath its wrapper added finds libmpi.
    minimpi) launcher=(env ${minimpi_env[@]+"${minimpi_env[@]}"}
      "${prefix}/bin/mpiexec" ${unbind[@]+"${unbind[@]}"} -n "${n}") ;;
    mpich) launcher=(mpiexec.mpich ${unbind[@]+"-bind-to" "none"} -n "${n}") ;;
    # Open MPI refuses to start as root unless told twice that it is wanted,
    # and more ranks than cores unless told to oversubscribe.
    openmpi) launcher=(mpiexec.openmpi --allow-run-as-root --oversubscribe
      --mca btl "self,vader" ${unbind[@]+"${unbind[@]}"} -n "${n}") ;;
  esac
  if [[ " ${built} " != *" ${label} "* ]]; then
    echo "${scenario} ${kernel} ${label} ${round} fail" >>"${results}"
    return
  fi
  # timeout(1) signals its whole process group, the launcher's ranks too.
  timeout --kill-after=5 "${timeout_s}" "${launcher[@]}" \
    "${work}/loaded_${label}" "${args[@]}" \
    </dev/null >"${out}.txt" 2>"${out}.err" || rc=$?
  value="$(awk '/^loaded / { for (i = 1; i <= NF; i++) if ($i ~ /^value=/) print substr($i, 7) }' "${out}.txt")"
  if [ "${rc}" = 124 ] || [ "${rc}" = 137 ]; then
    note "${scenario} ${kernel} ${label} round ${round}: no result after ${timeout_s} s (hang)"
    echo "${scenario} ${kernel} ${label} ${round} hang" >>"${results}"
    [ "${label}" != minimpi ] || status=1
  elif [ "${rc}" != 0 ] || [ -z "${value}" ]; then
    tail -n 20 "${out}.err" >&2
    note "${scenario} ${kernel} ${label} round ${round}: failed, exit ${rc} (a data check fails the run)"
    echo "${scenario} ${kernel} ${label} ${round} fail" >>"${results}"
    status=1
  else
    echo "${scenario} ${kernel} ${label} ${round} ok ${value}" >>"${results}"
  fi
}

# The 1-minute load average as each scenario begins, before its own load:
# what else the machine was doing (the alone row is only as quiet as this).
machine_load=""
for scenario in ${scenarios}; do
  note "scenario ${scenario}"
  machine_load+="${machine_load:+, }${scenario} $(cut -d ' ' -f 1 /proc/loadavg 2>/dev/null || echo '?')"
  start_load "${scenario}"
  for ((round = 1; round <= rounds; round++)); do
    # Rotate the order each round, so that no library always runs first.
    read -r -a order <<<"${labels}"
    shift_by=$(((round - 1) % ${#order[@]}))
    order=("${order[@]:shift_by}" "${order[@]:0:shift_by}")
    for kernel in ${kernels}; do
      for label in "${order[@]}"; do
        run_one "${scenario}" "${kernel}" "${label}" "${round}"
      done
    done
  done
  # A compile loop that died (no compiler, say) left a quieter machine.
  if [ "${scenario}" = compilers ] && [ -s "${work}/load_1.err" ]; then
    note "compilers: a compile loop failed: $(head -n 3 "${work}/load_1.err")"
  fi
  stop_load
done

# --- the tables ------------------------------------------------------------
echo "Libraries:"
for label in ${labels}; do
  version="$(cat "${raw_dir}"/*_"${label}"_r*.txt 2>/dev/null |
    grep -m1 '^# library:' | sed 's/^# library: *//' || true)"
  echo "- ${label}: ${version:-n/a (did not run)}"
done
extra="none"
[ "${#minimpi_env[@]}" = 0 ] || extra="${minimpi_env[*]}"
echo "Settings: ${rounds} interleaved rounds (order rotated each round), ${time_s} s per run, timeout ${timeout_s} s, binding: $([ ${#unbind[@]} -eq 0 ] && echo "each library's default" || echo none), $(nproc) cores; threads scenario: ${threads} compute threads per rank; minimpi environment: ${extra}"
echo "Load average as each scenario began (before its own load): ${machine_load}"
echo

awk -v scenarios="${scenarios}" -v kernels="${kernels}" -v threads="${threads}" -v rounds="${rounds}" '
  {
    key = $1 SUBSEP $2 SUBSEP $3
    if ($5 == "ok") { n[key]++; v[key, n[key]] = $6 + 0; in_round[key, $4] = $6 + 0 }
    else bad[key, $5]++
  }
  function sort(key, m,    i, j, t) {
    for (i = 1; i <= m; i++) s[i] = v[key, i]
    for (i = 2; i <= m; i++) for (j = i; j > 1 && s[j - 1] > s[j]; j--) { t = s[j]; s[j] = s[j - 1]; s[j - 1] = t }
  }
  function median(key,    m) {
    m = n[key] + 0
    if (m == 0) return ""
    sort(key, m)
    return m % 2 ? s[(m + 1) / 2] : (s[m / 2] + s[m / 2 + 1]) / 2
  }
  function fmt(x) { return x >= 100 ? sprintf("%.0f", x) : sprintf("%.3g", x) }
  function cell(key,    m, med, text, h, f) {
    m = n[key] + 0; h = bad[key, "hang"] + 0; f = bad[key, "fail"] + 0
    if (m == 0) return h ? "hang" : (f ? "fail" : "n/a")
    med = median(key)
    text = fmt(med)
    if (m > 1) text = text " (" fmt(s[1]) "-" fmt(s[m]) ")"
    if (h) text = text ", " h " hang"
    if (f) text = text ", " f " fail"
    return text
  }
  # Above 1: minimpi better, whichever way the unit points. Two significant
  # digits below 0.1, where a collapse puts it.
  function fmt_ratio(r) {
    return r < 0.1 ? sprintf("%.2g", r) : (r >= 10 ? sprintf("%.0f", r) : sprintf("%.2f", r))
  }
  # per_round(SC, KERNEL, PEERS): the median of the per-round ratios of minimpi
  # to the best of PEERS ("mpich" or "mpich openmpi") in each round, with
  # their range; "-" when no round has both.
  function per_round(sc, kernel, peers,    np, p, r, i, j, k, m, t, mine, best, o, q, text) {
    np = split(peers, p, " "); k = 0
    for (r = 1; r <= rounds; r++) {
      if (!((sc SUBSEP kernel SUBSEP "minimpi", r) in in_round)) continue
      mine = in_round[sc SUBSEP kernel SUBSEP "minimpi", r]; best = ""
      for (i = 1; i <= np; i++) {
        if (!((sc SUBSEP kernel SUBSEP p[i], r) in in_round)) continue
        o = in_round[sc SUBSEP kernel SUBSEP p[i], r]
        if (best == "" || (higher ? o > best : o < best)) best = o
      }
      if (best == "" || mine <= 0 || best <= 0) continue
      q[++k] = higher ? mine / best : best / mine
    }
    if (k == 0) return "-"
    for (i = 2; i <= k; i++) for (j = i; j > 1 && q[j - 1] > q[j]; j--) { t = q[j]; q[j] = q[j - 1]; q[j - 1] = t }
    m = k % 2 ? q[(k + 1) / 2] : (q[k / 2] + q[k / 2 + 1]) / 2
    text = fmt_ratio(m)
    if (k > 1) text = text " (" fmt_ratio(q[1]) "-" fmt_ratio(q[k]) ")"
    if (k < rounds) text = text ", " k " of " rounds " rounds"
    return text
  }
  function label(sc) {
    if (sc == "oversub") return "oversub (4 ranks)"
    if (sc == "threads") return "threads (2 ranks x " threads ")"
    return sc
  }
  END {
    nk = split(kernels, klist, " ")
    ns = split(scenarios, slist, " ")
    for (k = 1; k <= nk; k++) {
      kernel = klist[k]
      higher = kernel == "rate"
      if (kernel == "rate")
        print "### rate: million 8-byte messages/s, all pairs together (higher is better); ratios = minimpi / peer in each round, their median (range), above 1: minimpi better"
      else if (kernel == "pingpong")
        print "### pingpong: 8-byte half round trip in us, median of batches (lower is better); ratios = peer / minimpi in each round, their median (range), above 1: minimpi better"
      else
        print "### halo: us per step, 2-D periodic halo of 1 KiB faces plus a Jacobi sweep (lower is better); ratios = peer / minimpi in each round, their median (range), above 1: minimpi better"
      print ""
      print "| scenario | minimpi | MPICH | Open MPI | minimpi / MPICH | minimpi / best peer |"
      print "|---|---:|---:|---:|---:|---:|"
      for (i = 1; i <= ns; i++) {
        sc = slist[i]
        printf "| %s | %s | %s | %s | %s | %s |\n", label(sc),
          cell(sc SUBSEP kernel SUBSEP "minimpi"), cell(sc SUBSEP kernel SUBSEP "mpich"),
          cell(sc SUBSEP kernel SUBSEP "openmpi"), per_round(sc, kernel, "mpich"),
          per_round(sc, kernel, "mpich openmpi")
      }
      print ""
    }
  }
' "${results}"

exit "${status}"
