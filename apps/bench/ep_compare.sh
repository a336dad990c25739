#!/usr/bin/env bash
# Builds apps/bench/ep_rate.c unchanged with three MPI libraries and prints,
# for each number of pairs P, one markdown table of message rates (OSU
# mbw_mr style: windows of 64 nonblocking sends, a 0-byte ack per window):
#   minimpi   installed with `bazel run //:install` into a temporary prefix
#             (or --prefix), compiled with its mpicc, run with its mpiexec:
#             processes, threads, threads-dup, endpoints
#   MPICH     Debian's mpicc.mpich / mpirun.mpich: processes, threads,
#             threads-dup (no endpoints)
#   Open MPI  Debian's mpicc.openmpi / mpirun.openmpi: processes, threads,
#             threads-dup (no endpoints)
# Ratios compare numbers from this one run only.
#
# The modes (ep_rate.c's header has the details), P sender/receiver pairs:
#   processes    2P ranks, one pair per two ranks (rank i sends to i+P)
#   threads      2 ranks of P threads, all on MPI_COMM_WORLD, tag = pair
#   threads-dup  2 ranks of P threads, one MPI_Comm_dup per pair
#   endpoints    2 ranks of P threads, MPIX_Comm_create_endpoints(P): each
#                thread its own endpoint (a rank of its own) -- minimpi only
#
# Columns of each table (rates in M msgs/s = 1e6 messages per second, all
# pairs together: messages / the longest sender's time; higher is better):
#   size                     message size
#   minimpi processes .. Open MPI threads-dup   one column per (library, mode)
#   ep / processes           minimpi endpoints / minimpi processes: do
#                            endpoints give threads the rate of processes?
#   ep / best threads        minimpi endpoints / the better of MPICH threads
#                            and Open MPI threads (threads sharing one rank
#                            and communicator in the best other library)
# A cell reads n/a when the library cannot run the mode (MPICH and Open MPI
# have no endpoints; a library that grants less than MPI_THREAD_MULTIPLE
# cannot run the threaded modes), fail when the build or the run failed (a
# crash, a timeout or a data-check error; its stderr is shown), "-" when a
# ratio lacks a number.
#
#   usage: apps/bench/ep_compare.sh [--pairs "2 4"] [--sizes LIST]
#                                   [--windows N | --time S] [--quick]
#                                   [--bind-to none|core] [--timeout S]
#                                   [--prefix DIR] [--raw DIR]
#     --pairs     the values of P, one table each (default "2 4")
#     --sizes     message sizes, comma separated, K/M suffixes allowed
#                 (default 8,64,512,4096,16384,65536; quick 8,4096,65536)
#     --windows   measured windows per pair and size instead of a time budget
#     --time      seconds of measured windows per size (default 0.2; quick
#                 0.02)
#     --quick     few sizes, short runs: checks that it all works, measures
#                 little (about 40 s)
#     --bind-to   none (default) or core: pin each rank to a core (a rank's
#                 threads share it; Open MPI gets core:overload-allowed)
#     --timeout   limit for one run in seconds (default 120)
#     --prefix    use an existing minimpi installation instead of installing
#                 (for example ./install after `bazel run //:install -- install`)
#     --raw       keep every run's output (LIB_MODE_pP.txt/.err) in DIR
#   BAZEL         the bazel command (default: bazel)
# About a minute and a half on 2 cores. With fewer cores than 2P ranks (or
# threads) the modes oversubscribe the cores: each rate then includes how a
# library waits (MPICH 4.0.2's ch4 spins, so its processes column collapses
# to thousands of messages per second on 2 cores at P=2; Open MPI and
# minimpi yield), so compare quiet runs on a machine with 2P cores or more.
# Exits non-zero when a build or run failed (minimpi's endpoints included),
# or when minimpi reports one of its modes unavailable; the tables are
# printed all the same.
set -uo pipefail

repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)"
source_file="${repo}/apps/bench/ep_rate.c"
read -r -a bazel <<<"${BAZEL:-bazel}"

pairs_list="2 4"
sizes=""
windows=""
time_s=""
quick=0
bind_to=none
timeout_s=120
prefix=""
raw_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --pairs) pairs_list="$2"; shift 2 ;;
    --sizes) sizes="$2"; shift 2 ;;
    --windows) windows="$2"; shift 2 ;;
    --time) time_s="$2"; shift 2 ;;
    --quick) quick=1; shift ;;
    --bind-to) bind_to="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --prefix) prefix="$2"; shift 2 ;;
    --raw) raw_dir="$2"; shift 2 ;;
    *) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
case "${bind_to}" in core | none) ;; *) echo "--bind-to core|none" >&2; exit 2 ;; esac
for p in ${pairs_list}; do
  case "${p}" in '' | *[!0-9]*) echo "--pairs: whole numbers" >&2; exit 2 ;; esac
done

status=0
note() { echo "ep_compare: $*" >&2; }
# shellcheck source=apps/bench/bench_setup.sh
source "${repo}/apps/bench/bench_setup.sh"

# --- what runs ---------------------------------------------------------------
common=()
if [ "${quick}" = 1 ]; then
  common+=(--quick)
  [ -n "${sizes}" ] || sizes="8,4096,65536"
fi
[ -n "${sizes}" ] && common+=(--sizes "${sizes}")
[ -n "${windows}" ] && common+=(--windows "${windows}")
[ -n "${time_s}" ] && common+=(--time "${time_s}")
modes_minimpi="processes threads threads-dup endpoints"
modes_other="processes threads threads-dup"

install_minimpi || note "minimpi install failed; its columns will read fail"

build() {  # build LABEL COMPILER
  local label="$1" cc="$2"
  if ! command -v "${cc}" >/dev/null 2>&1; then
    note "${label}: ${cc} not found"
    return 1
  fi
  if ! "${cc}" -std=c11 -O2 -pthread -o "${work}/ep_rate_${label}" \
      "${source_file}" >"${raw_dir}/${label}.build.log" 2>&1; then
    tail -n 20 "${raw_dir}/${label}.build.log" >&2
    note "${label}: build failed"
    return 1
  fi
}

# states: one line per (library, mode, P): LABEL MODE P ok|fail|unavailable
states="${work}/states"
: >"${states}"

# run LABEL MODE P: one job, its output in raw_dir/LABEL_MODE_pP.txt.
run() {
  local label="$1" mode="$2" p="$3"
  local n=2 out="${raw_dir}/${label}_${mode}_p${p}"
  local -a launcher=()
  [ "${mode}" = processes ] && n=$((2 * p))
  case "${label}" in
    # No environment for minimpi: the rpath its wrapper added must find libmpi.
    minimpi) launcher=("${prefix}/bin/mpiexec" --bind-to "${bind_to}" -n "${n}") ;;
    mpich) launcher=(mpirun.mpich -bind-to "${bind_to}" -n "${n}") ;;
    # Open MPI refuses to start as root unless told twice that it is wanted,
    # and more ranks than cores unless told to oversubscribe.
    openmpi)
      local ompi_bind=none
      [ "${bind_to}" = core ] && ompi_bind=core:overload-allowed
      launcher=(mpirun.openmpi --allow-run-as-root --oversubscribe
        --bind-to "${ompi_bind}" -n "${n}") ;;
  esac
  note "running ${label} ${mode} P=${p}"
  # MPIEXEC_TIMEOUT: all three launchers end a job that outlives it;
  # timeout(1) is the backstop.
  local rc=0
  env MPIEXEC_TIMEOUT="${timeout_s}" \
    timeout --kill-after=20 "$((timeout_s + 30))" \
    "${launcher[@]}" "${work}/ep_rate_${label}" --mode "${mode}" \
    --pairs "${p}" "${common[@]}" >"${out}.txt" 2>"${out}.err" || rc=$?
  if [ "${rc}" != 0 ]; then
    tail -n 20 "${out}.err" >&2
    case "${rc}" in
      124 | 137) note "${label} ${mode} P=${p}: timed out" ;;
      *) note "${label} ${mode} P=${p}: run failed, exit ${rc} (a data check fails the run)" ;;
    esac
    echo "${label} ${mode} ${p} fail" >>"${states}"
    return 1
  fi
  if grep -q 'status=unavailable' "${out}.txt"; then
    note "${label} ${mode} P=${p}: $(grep -m1 -o 'reason=[^ ]*' "${out}.txt")"
    echo "${label} ${mode} ${p} unavailable" >>"${states}"
    # minimpi provides MULTIPLE and endpoints: not running a mode is a fault.
    [ "${label}" = minimpi ] && return 1
    return 0
  fi
  echo "${label} ${mode} ${p} ok" >>"${states}"
}

for label in minimpi mpich openmpi; do
  case "${label}" in
    minimpi) cc="${prefix}/bin/mpicc"; modes="${modes_minimpi}" ;;
    mpich) cc=mpicc.mpich; modes="${modes_other}" ;;
    openmpi) cc=mpicc.openmpi; modes="${modes_other}" ;;
  esac
  if ! build "${label}" "${cc}"; then
    status=1
    for p in ${pairs_list}; do
      for mode in ${modes}; do echo "${label} ${mode} ${p} fail" >>"${states}"; done
    done
    continue
  fi
  for p in ${pairs_list}; do
    for mode in ${modes}; do
      run "${label}" "${mode}" "${p}" || status=1
    done
  done
done

# --- the tables --------------------------------------------------------------
echo "Libraries:"
for label in minimpi mpich openmpi; do
  version="$(cat "${raw_dir}/${label}"_*_p*.txt 2>/dev/null |
    grep -m1 '^# library:' | sed 's/^# library: *//')"
  echo "- ${label}: ${version:-n/a (did not run)}"
done
settings="$(cat "${raw_dir}"/*_p*.txt 2>/dev/null | grep -m1 '^# mode=' |
  sed 's/^# mode=[^ ]* pairs=[^ ]* ranks=[^ ]* //')"
echo "Settings: ${settings:-n/a}, bind-to ${bind_to}, $(nproc) cores"
echo

for f in "${raw_dir}"/{minimpi,mpich,openmpi}_*_p*.txt; do
  [ -f "${f}" ] || continue
  base="$(basename "${f}" .txt)"
  awk -v lib="${base%%_*}" '/^mode=/ && / rate=/ { print "lib=" lib, $0 }' "${f}"
done | awk -v pairs_list="${pairs_list}" -v states="${states}" '
  {
    delete f
    for (i = 1; i <= NF; i++) { eq = index($i, "="); if (eq) f[substr($i, 1, eq - 1)] = substr($i, eq + 1) }
    rate[f["lib"], f["mode"], f["pairs"], f["size"]] = f["rate"]
    p = f["pairs"]; b = f["size"]
    if (!((p, b) in seen)) { seen[p, b] = 1; nsizes[p]++; sizes[p, nsizes[p]] = b + 0 }
  }
  function human(b) {
    if (b >= 1048576) return (b / 1048576) " MiB"
    if (b >= 1024) return (b / 1024) " KiB"
    return b " B"
  }
  # Never read rate[] without this test: reading an awk array entry creates it.
  function has(lib, mode, p, b) { return (lib SUBSEP mode SUBSEP p SUBSEP b) in rate }
  function get(lib, mode, p, b) { return has(lib, mode, p, b) ? rate[lib, mode, p, b] : "" }
  function cell(lib, mode, p, b,    s) {
    if (has(lib, mode, p, b)) return sprintf("%.3g", rate[lib, mode, p, b] / 1e6)
    s = state[lib, mode, p]
    return s == "fail" ? "fail" : "n/a"
  }
  function ratio(a, b) { return (a != "" && b != "" && b + 0 > 0) ? sprintf("%.2f", a / b) : "-" }
  END {
    while ((getline line < states) > 0) { split(line, w, " "); state[w[1], w[2], w[3]] = w[4] }
    ncol = split("minimpi processes|minimpi threads|minimpi threads-dup|minimpi endpoints|mpich processes|mpich threads|mpich threads-dup|openmpi processes|openmpi threads|openmpi threads-dup", col, "|")
    np = split(pairs_list, plist, " ")
    for (pi = 1; pi <= np; pi++) {
      p = plist[pi]
      printf "### P = %d pairs (M msgs/s, higher is better)\n\n", p
      printf "processes: %d ranks; threads, threads-dup, endpoints: 2 ranks of %d threads. Windows of 64 messages, a 0-byte ack per window; rate = all pairs'"'"' messages / the longest sender time.\n\n", 2 * p, p
      line = "| size |"; rule = "|---:|"
      for (c = 1; c <= ncol; c++) {
        split(col[c], lm, " ")
        line = line " " (lm[1] == "mpich" ? "MPICH" : lm[1] == "openmpi" ? "Open MPI" : lm[1]) " " lm[2] " |"
        rule = rule "---:|"
      }
      print line " ep / processes | ep / best threads |"
      print rule "---:|---:|"
      # Sizes seen at this P, ascending.
      n = nsizes[p] + 0
      for (i = 1; i <= n; i++) list[i] = sizes[p, i]
      for (i = 2; i <= n; i++) for (j = i; j > 1 && list[j - 1] > list[j]; j--) { t = list[j]; list[j] = list[j - 1]; list[j - 1] = t }
      if (n == 0) print "| (no data) |" 
      for (s = 1; s <= n; s++) {
        b = list[s]; line = "| " human(b) " |"
        for (c = 1; c <= ncol; c++) { split(col[c], lm, " "); line = line " " cell(lm[1], lm[2], p, b) " |" }
        ep = get("minimpi", "endpoints", p, b)
        best = get("mpich", "threads", p, b); o = get("openmpi", "threads", p, b)
        if (o != "" && (best == "" || o + 0 > best + 0)) best = o
        print line " " ratio(ep, get("minimpi", "processes", p, b)) " | " ratio(ep, best) " |"
      }
      print ""
    }
  }'

exit "${status}"
