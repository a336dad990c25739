#!/usr/bin/env bash
# Builds apps/bench/collectives.c unchanged with minimpi (its installed
# mpicc, as compare.sh does), Debian's MPICH and Open MPI, runs each at 2, 4
# and 8 ranks in one go, and prints one markdown table per collective with
# the ratio minimpi / best of MPICH and Open MPI (below 1: minimpi faster).
#
#   usage: apps/bench/coll_compare.sh [--ranks "2 4 8"] [--max BYTES]
#                                     [--repeat N] [--libraries LIST]
#                                     [--prefix DIR] [--raw DIR]
#     --repeat  runs per library and rank count, interleaved (library after
#               library, then again); the table keeps each point's best
#               (default 1)
#     --libraries which to run, of "minimpi mpich openmpi" (the default);
#               e.g. leave MPICH out where ranks outnumber cores: its
#               busy-polling then takes minutes a run and it is never the
#               best peer there
#     --prefix  an existing minimpi installation (default: install one with
#               `bazel run //:install` into a temporary prefix)
#   BAZEL       the bazel command (default: bazel)
# Exits non-zero when a library failed to build, run or verify its data (its
# column then reads n/a).
set -uo pipefail

repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)"
source_file="${repo}/apps/bench/collectives.c"
read -r -a bazel <<<"${BAZEL:-bazel}"
ranks_list="2 4 8"
max_bytes=$((1 << 20))
prefix=""
raw_dir=""
repeat=1
libraries="minimpi mpich openmpi"
while [ $# -gt 0 ]; do
  case "$1" in
    --ranks) ranks_list="$2"; shift 2 ;;
    --max) max_bytes="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --libraries) libraries="$2"; shift 2 ;;
    --prefix) prefix="$2"; shift 2 ;;
    --raw) raw_dir="$2"; shift 2 ;;
    *) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
status=0
note() { echo "coll_compare: $*" >&2; }
# shellcheck source=apps/bench/bench_setup.sh
source "${repo}/apps/bench/bench_setup.sh"

install_minimpi || note "minimpi install failed; its column will read n/a"

build() {  # build LABEL COMPILER
  local label="$1" cc="$2"
  command -v "${cc}" >/dev/null 2>&1 || { note "${label}: ${cc} not found"; return 1; }
  "${cc}" -O2 -o "${work}/coll_${label}" "${source_file}" >"${raw_dir}/${label}.build.log" 2>&1 ||
    { cat "${raw_dir}/${label}.build.log" >&2; note "${label}: build failed"; return 1; }
}
run() {  # run LABEL RANKS TRY LAUNCHER...
  local label="$1" n="$2" try="$3"; shift 3
  note "running ${label} at ${n} ranks (run ${try} of ${repeat})"
  local out="${raw_dir}/${label}_${n}_${try}"
  if ! "$@" -n "${n}" "${work}/coll_${label}" "${max_bytes}" >"${out}.txt" \
      2>"${out}.err"; then
    tail -n 20 "${out}.err" >&2
    note "${label} at ${n} ranks: run failed (a data check fails the run)"
    rm -f "${out}.txt"
    return 1
  fi
}

built=""
wanted() { case " ${libraries} " in *" $1 "*) return 0 ;; esac; return 1; }
if wanted minimpi; then build minimpi "${prefix}/bin/mpicc" && built="${built} minimpi" || status=1; fi
if wanted mpich; then build mpich mpicc.mpich && built="${built} mpich" || status=1; fi
if wanted openmpi; then build openmpi mpicc.openmpi && built="${built} openmpi" || status=1; fi
for try in $(seq 1 "${repeat}"); do
  for n in ${ranks_list}; do
    for label in ${built}; do
      case "${label}" in
        minimpi) run minimpi "${n}" "${try}" "${prefix}/bin/mpiexec" || status=1 ;;
        mpich) run mpich "${n}" "${try}" mpirun.mpich || status=1 ;;
        # Open MPI refuses root and more ranks than cores unless told.
        openmpi) run openmpi "${n}" "${try}" mpirun.openmpi --allow-run-as-root --oversubscribe || status=1 ;;
      esac
    done
  done
done

echo "Libraries:"
for label in minimpi mpich openmpi; do
  version="$(cat "${raw_dir}/${label}"_*.txt 2>/dev/null | grep -m1 '^# library:' | sed 's/^# library: *//')"
  echo "- ${label}: ${version:-n/a (did not run)}"
done
echo
for label in minimpi mpich openmpi; do
  for n in ${ranks_list}; do
    for f in "${raw_dir}/${label}_${n}"_*.txt; do
      [ -f "${f}" ] && awk -v lib="${label}" -v n="${n}" '!/^#/ && NF == 3 { print lib, n, $1, $2, $3 }' "${f}"
    done
  done
done | awk -v ranks="${ranks_list}" -v repeat="${repeat}" '
  { k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
    if (!(k in lat) || $5 + 0 < lat[k] + 0) lat[k] = $5
    sizes[$3, $4] = 1; if (!($3 in seen)) { seen[$3] = 1; order[++ncoll] = $3 } }
  function human(b) { return b >= 1048576 ? (b / 1048576) " MiB" : (b >= 1024 ? (b / 1024) " KiB" : b " B") }
  function cell(k) { return (k in lat) ? lat[k] : "n/a" }
  END {
    nr = split(ranks, rk, " ")
    print "Latency in us per call (lower is better), best of 3 trials in each of " repeat " interleaved run(s) on one node; ratio = minimpi / best of MPICH and Open MPI (below 1: minimpi faster).\n"
    for (c = 1; c <= ncoll; c++) {
      coll = order[c]
      printf "### %s\n\n| ranks | size | minimpi | MPICH | Open MPI | ratio |\n|---:|---:|---:|---:|---:|---:|\n", coll
      for (r = 1; r <= nr; r++) {
        for (s = 0; s <= 1073741824; s = (s == 0 ? 8 : (s == 8 ? 16 : s * 4))) {
          if (!((coll, s) in sizes)) continue
          m = (("minimpi", rk[r], coll, s) in lat); best = ""
          if (("mpich", rk[r], coll, s) in lat) best = lat["mpich", rk[r], coll, s]
          if (("openmpi", rk[r], coll, s) in lat && (best == "" || lat["openmpi", rk[r], coll, s] + 0 < best + 0)) best = lat["openmpi", rk[r], coll, s]
          ratio = (m && best + 0 > 0) ? sprintf("%.2f", lat["minimpi", rk[r], coll, s] / best) : "-"
          if (ratio != "-") { nratio[rk[r]]++; ratios[rk[r], nratio[rk[r]]] = ratio + 0 }
          printf "| %d | %s | %s | %s | %s | %s |\n", rk[r], human(s), cell("minimpi" SUBSEP rk[r] SUBSEP coll SUBSEP s),
            cell("mpich" SUBSEP rk[r] SUBSEP coll SUBSEP s), cell("openmpi" SUBSEP rk[r] SUBSEP coll SUBSEP s), ratio
        }
      }
      print ""
    }
    print "### Summary\n\n| ranks | points | median ratio | points above 1 | worst |\n|---:|---:|---:|---:|---:|"
    for (r = 1; r <= nr; r++) {
      k = nratio[rk[r]]; if (k == 0) continue
      for (i = 1; i <= k; i++) v[i] = ratios[rk[r], i]
      for (i = 2; i <= k; i++) { x = v[i]; j = i - 1; while (j > 0 && v[j] > x) { v[j + 1] = v[j]; j-- }; v[j + 1] = x }
      median = (k % 2) ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
      above = 0; for (i = 1; i <= k; i++) if (v[i] > 1) above++
      printf "| %d | %d | %.2f | %d | %.2f |\n", rk[r], k, median, above, v[k]
    }
    print ""
  }'
exit "${status}"
