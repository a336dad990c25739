#!/usr/bin/env bash
# Does minimpi's default waiting cost anything on a quiet machine? Runs the
# same programs with the default policy and with MINIMPI_WAIT_POLICY=spin
# (poll until done, as MPICH and Open MPI wait), in interleaved rounds, and
# prints for every figure the median and range of the per-round ratios
# default / spin (time per call: at most 1.05 is "within 5%").
#
# The programs: OSU 7.2's osu_latency at 8 B (built from the tarball with
# minimpi's mpicc, never copied into the project) and apps/bench/
# coll_sequence.c (barrier, bcast, allreduce and alltoall at 8 B to 1 MiB,
# each call timed over many iterations right after the previous one).
#
#   usage: apps/bench/wait_compare.sh --prefix DIR [--rounds N]
#            [--osu TARBALL] [--scale S] [--quick]
#     --prefix  a minimpi installation (bazel run //:install -- DIR)
#     --rounds  interleaved rounds (default 7)
#     --osu     OSU 7.2's tarball (default ../shared/bench/ beside the repo)
#     --scale   coll_sequence's iteration scale (default 1)
#     --quick   1 round, few iterations: checks the script, not the figures
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
prefix=""
rounds=7
osu="${repo}/../shared/bench/osu-micro-benchmarks-7.2.tar.gz"
scale=1
quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --osu) osu="$2"; shift 2 ;;
    --scale) scale="$2"; shift 2 ;;
    --quick) quick=1; rounds=1; scale=0.05; shift ;;
    *) echo "wait_compare.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -n "${prefix}" ] || { echo "wait_compare.sh: --prefix DIR is required" >&2; exit 2; }
[ -x "${prefix}/bin/mpicc" ] || { echo "wait_compare.sh: no ${prefix}/bin/mpicc" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

# --- build -----------------------------------------------------------------
"${prefix}/bin/mpicc" -O2 -o "${work}/coll_sequence" "${repo}/apps/bench/coll_sequence.c"
have_osu=0
if [ -f "${osu}" ]; then
  tar xzf "${osu}" -C "${work}"
  src="${work}/osu-micro-benchmarks-7.2"
  (cd "${src}" && ./configure CC="${prefix}/bin/mpicc" CXX="${prefix}/bin/mpicxx" \
     >"${work}/configure.log" 2>&1)
  c="${src}/c"
  "${prefix}/bin/mpicc" -O2 -DHAVE_CONFIG_H -I"${c}/util" -I"${src}" \
    -o "${work}/osu_latency" "${c}/mpi/pt2pt/standard/osu_latency.c" \
    "${c}/util/osu_util.c" "${c}/util/osu_util_mpi.c" "${c}/util/osu_util_graph.c" \
    "${c}/util/osu_util_papi.c" "${c}/util/osu_util_validation.c" -lm 2>"${work}/osu_build.log"
  have_osu=1
else
  echo "# no OSU tarball at ${osu}: osu_latency skipped"
fi

# --- run -------------------------------------------------------------------
# One figure per line: "name value" (microseconds per call).
run_policy() {  # policy round
  local out="${work}/$1.$2"
  local env=()
  [ "$1" = spin ] && env=(MINIMPI_WAIT_POLICY=spin)
  if [ "${have_osu}" -eq 1 ]; then
    local iterations=()
    [ "${quick}" -eq 1 ] && iterations=(-i 200 -x 20)
    env "${env[@]}" "${prefix}/bin/mpiexec" -n 2 "${work}/osu_latency" -m 8:8 "${iterations[@]}" |
      awk '$1 == 8 { print "osu_latency_8B", $2 }' >"${out}"
  else
    : >"${out}"
  fi
  env "${env[@]}" "${prefix}/bin/mpiexec" -n 2 "${work}/coll_sequence" "${scale}" |
    awk '!/^#/ { print $1 "_" $2 "B", $3 }' >>"${out}"
}

for round in $(seq 1 "${rounds}"); do
  # Alternate which policy goes first, so neither always meets the
  # machine's state right after the other.
  if [ $((round % 2)) -eq 1 ]; then order="default spin"; else order="spin default"; fi
  for policy in ${order}; do run_policy "${policy}" "${round}"; done
  echo "# round ${round} of ${rounds} (${order}) done"
done

# --- report ----------------------------------------------------------------
echo
echo "| figure (us per call) | default, median | spin, median | default / spin: median of rounds | range | within 5% |"
echo "|---|---:|---:|---:|---:|---|"
for round in $(seq 1 "${rounds}"); do
  paste -d' ' "${work}/default.${round}" "${work}/spin.${round}" |
    awk -v r="${round}" '{ print $1, r, $2, $4 }'
done | awk -v quick="${quick}" '
  { if (!($1 in seen)) { seen[$1] = 1; name[++n] = $1 }
    d[$1] = d[$1] " " $3; s[$1] = s[$1] " " $4
    ratio[$1] = ratio[$1] " " ($4 > 0 ? $3 / $4 : 0) }
  function median(list,   a, k, i, j, t) {
    k = split(list, a, " ")
    for (i = 2; i <= k; i++) { t = a[i]; j = i - 1
      while (j >= 1 && a[j] + 0 > t + 0) { a[j + 1] = a[j]; j-- } a[j + 1] = t }
    return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
  function lo(list,   a, k, i, m) { k = split(list, a, " "); m = a[1]
    for (i = 2; i <= k; i++) if (a[i] + 0 < m + 0) m = a[i]; return m }
  function hi(list,   a, k, i, m) { k = split(list, a, " "); m = a[1]
    for (i = 2; i <= k; i++) if (a[i] + 0 > m + 0) m = a[i]; return m }
  END {
    bad = 0
    for (i = 1; i <= n; i++) {
      f = name[i]; m = median(ratio[f])
      verdict = quick ? "(quick: not a figure)" : (m <= 1.05 ? "yes" : "no")
      if (!quick && m > 1.05) bad++
      printf "| %s | %.3f | %.3f | %.2f | %.2f-%.2f | %s |\n", f, median(d[f]),
             median(s[f]), m, lo(ratio[f]), hi(ratio[f]), verdict
    }
    if (n == 0) { print "no figures were read"; exit 1 }
    if (!quick) printf "\n%d of %d figures within 5%% of spin (median of per-round ratios)\n", n - bad, n
    else print "\nQuick check passed: every figure read back for both policies"
  }'
