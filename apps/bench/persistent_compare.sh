#!/usr/bin/env bash
# What does persistence buy? apps/bench/persistent_coll.c times MPI_Barrier,
# MPI_Bcast and MPI_Allreduce (8 B, 1 KiB, 64 KiB) per call in three forms,
# IMB-MPI4 style: persistent (MPI_*_init once, MPI_Start + MPI_Wait per
# call), nonblocking (MPI_I* + MPI_Wait) and blocking. Run for minimpi and
# Debian's MPICH 4.0 (which has the persistent collectives), at 2 and 4
# ranks, in interleaved rounds whose library order rotates; Open MPI 4.1
# has them only as MPIX_ calls, so it is skipped (as is any library whose
# compiler wrapper cannot build the program).
#
# Reported, per figure: each library's median time per call, and the
# median (with range) of two per-round ratios: minimpi persistent over
# minimpi nonblocking (below 1: persistence saves setup) and minimpi over
# MPICH in the same form.
#
#   usage: apps/bench/persistent_compare.sh --prefix DIR [--rounds N]
#            [--ranks "2 4"] [--scale S] [--libraries LIST] [--quick]
#     --prefix  a minimpi installation (bazel run //:install -- DIR)
#     --rounds  interleaved rounds (default 7)
#     --ranks   rank counts (default "2 4")
#     --scale   persistent_coll's iteration scale (default 1)
#     --libraries  which to run (default "minimpi mpich openmpi"; MPICH at
#               4 ranks on 2 cores polls through milliseconds per call)
#     --quick   1 round, 2 ranks, few iterations: checks the script, not
#               the figures
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
shared_bench="${repo}/../shared/bench"
prefix=""
rounds=7
ranks_list="2 4"
scale=1
libraries="minimpi mpich openmpi"
quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --ranks) ranks_list="$2"; shift 2 ;;
    --scale) scale="$2"; shift 2 ;;
    --libraries) libraries="$2"; shift 2 ;;
    --quick) quick=1; rounds=1; ranks_list=2; scale=0.02; shift ;;
    *) echo "persistent_compare.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -n "${prefix}" ] || { echo "persistent_compare.sh: --prefix DIR is required" >&2; exit 2; }
[ -x "${prefix}/bin/mpicc" ] || { echo "persistent_compare.sh: no ${prefix}/bin/mpicc" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

declare -A cc=([minimpi]="${prefix}/bin/mpicc" [mpich]=mpicc.mpich [openmpi]=mpicc.openmpi)
declare -A mpiexec=([minimpi]="${prefix}/bin/mpiexec" [mpich]=mpiexec.mpich [openmpi]=mpiexec.openmpi)
labels=()
for label in ${libraries}; do
  if ! command -v "${cc[${label}]}" >/dev/null 2>&1; then
    echo "# ${label}: no ${cc[${label}]}, skipped"
    continue
  fi
  if ! "${cc[${label}]}" -O2 -o "${work}/persistent_coll.${label}" \
       "${repo}/apps/bench/persistent_coll.c" 2>"${work}/build.${label}.log"; then
    echo "# ${label}: persistent_coll.c does not build (no MPI-4.0 persistent collectives), skipped"
    continue
  fi
  labels+=("${label}")
done
[ "${labels[0]:-}" = minimpi ] || { echo "persistent_compare.sh: minimpi did not build" >&2; exit 1; }

c2c="${work}/core_to_core"
have_c2c=0
if [ -f "${shared_bench}/core_to_core.c" ] &&
    cc -O2 -pthread "${shared_bench}/core_to_core.c" -o "${c2c}" 2>/dev/null; then
  have_c2c=1
fi

# --- run -------------------------------------------------------------------
# Each run appends "ranks collective bytes form us" lines to ${work}/LABEL.ROUND.
run_one() {  # label ranks round
  local label="$1" n="$2" round="$3"
  "${mpiexec[${label}]}" -n "${n}" "${work}/persistent_coll.${label}" "${scale}" |
    awk -v n="${n}" 'NF == 4 { print n, $1, $2, $3, $4 }' >>"${work}/${label}.${round}"
}

for round in $(seq 1 "${rounds}"); do
  # Rotate the order, so that no library always meets the machine's state
  # right after the same other one.
  order=("${labels[@]:$(( (round - 1) % ${#labels[@]} ))}" "${labels[@]:0:$(( (round - 1) % ${#labels[@]} ))}")
  trip="n/a"
  [ "${have_c2c}" -eq 0 ] || trip="$("${c2c}" 2>/dev/null | tail -1 || echo n/a)"
  for n in ${ranks_list}; do
    for label in "${order[@]}"; do run_one "${label}" "${n}" "${round}"; done
  done
  echo "# round ${round} of ${rounds} (${order[*]}) done; core-to-core: ${trip}"
done

# --- report ----------------------------------------------------------------
# All figures as "label round ranks collective bytes form us".
for label in "${labels[@]}"; do
  for round in $(seq 1 "${rounds}"); do
    awk -v l="${label}" -v r="${round}" '{ print l, r, $0 }' "${work}/${label}.${round}"
  done
done >"${work}/all"

has_mpich=0
for label in "${labels[@]}"; do [ "${label}" != mpich ] || has_mpich=1; done

echo
echo "| ranks | collective | bytes | form | minimpi us (median) | MPICH us (median) | minimpi persistent / nonblocking: median (range) | minimpi / MPICH: median (range) |"
echo "|---:|---|---:|---|---:|---:|---:|---:|"
awk -v rounds="${rounds}" -v has_mpich="${has_mpich}" -v quick="${quick}" '
  { key = $3 " " $4 " " $5 " " $6; v[$1, $2, key] = $7
    if (!(key in seen)) { seen[key] = 1; keys[++n] = key } }
  function median(list,   a, k, i, j, t) {
    k = split(list, a, " "); if (k == 0) return -1
    for (i = 2; i <= k; i++) { t = a[i]; j = i - 1
      while (j >= 1 && a[j] + 0 > t + 0) { a[j + 1] = a[j]; j-- } a[j + 1] = t }
    return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
  function lo(list,   a, k, i, m) { k = split(list, a, " "); m = a[1]
    for (i = 2; i <= k; i++) if (a[i] + 0 < m + 0) m = a[i]; return m }
  function hi(list,   a, k, i, m) { k = split(list, a, " "); m = a[1]
    for (i = 2; i <= k; i++) if (a[i] + 0 > m + 0) m = a[i]; return m }
  END {
    if (n == 0) { print "no figures were read"; exit 1 }
    for (i = 1; i <= n; i++) {
      key = keys[i]; split(key, f, " ")
      nb_key = f[1] " " f[2] " " f[3] " nonblocking"
      mine = ""; theirs = ""; own_ratio = ""; peer_ratio = ""
      for (r = 1; r <= rounds; r++) {
        if (!(("minimpi", r, key) in v)) continue
        m = v["minimpi", r, key]; mine = mine " " m
        if (f[4] == "persistent" && ("minimpi", r, nb_key) in v && v["minimpi", r, nb_key] > 0)
          own_ratio = own_ratio " " m / v["minimpi", r, nb_key]
        if (("mpich", r, key) in v) {
          p = v["mpich", r, key]; theirs = theirs " " p
          if (p > 0) peer_ratio = peer_ratio " " m / p
        }
      }
      own = own_ratio == "" ? "" : sprintf("%.2f (%.2f-%.2f)", median(own_ratio), lo(own_ratio), hi(own_ratio))
      peer = peer_ratio == "" ? (has_mpich ? "" : "skipped") : sprintf("%.2f (%.2f-%.2f)", median(peer_ratio), lo(peer_ratio), hi(peer_ratio))
      printf "| %s | %s | %s | %s | %.2f | %s | %s | %s |\n", f[1], f[2], f[3], f[4], median(mine),
             theirs == "" ? "" : sprintf("%.2f", median(theirs)), own, peer
    }
    if (quick) print "\nQuick check passed: every form of every collective read back"
  }' "${work}/all"
