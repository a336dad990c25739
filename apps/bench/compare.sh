#!/usr/bin/env bash
# Builds apps/bench/pingpong.c unchanged with three MPI libraries, runs each
# with 2 ranks in one go, and prints one markdown table side by side:
#   minimpi   installed with `bazel run //:install` into a temporary prefix,
#             compiled with its mpicc, run with its mpiexec
#   MPICH     Debian's mpicc.mpich / mpirun.mpich
#   Open MPI  Debian's mpicc.openmpi / mpirun.openmpi
# Ratios compare minimpi with the best of the other two, so only numbers from
# this one run are ever compared.
#
#   usage: apps/bench/compare.sh [--max BYTES] [--bind-to core|none]
#                                [--prefix DIR] [--raw DIR]
#     --max       largest message (default 67108864 = 64 MiB)
#     --bind-to   pin each rank to a core in all three libraries (default
#                 core) or in none of them
#     --prefix    use an existing minimpi installation instead of installing
#     --raw       keep each library's raw output in DIR
#   BAZEL         the bazel command (default: bazel), e.g. to add startup
#                 options
# Exits non-zero when a library failed to build, run or verify its data (its
# column then reads n/a).
set -uo pipefail

repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)"
source_file="${repo}/apps/bench/pingpong.c"
read -r -a bazel <<<"${BAZEL:-bazel}"

max_bytes=$((64 << 20))
bind_to=core
prefix=""
raw_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --max) max_bytes="$2"; shift 2 ;;
    --bind-to) bind_to="$2"; shift 2 ;;
    --prefix) prefix="$2"; shift 2 ;;
    --raw) raw_dir="$2"; shift 2 ;;
    *) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
case "${bind_to}" in core | none) ;; *) echo "--bind-to core|none" >&2; exit 2 ;; esac

status=0
note() { echo "compare: $*" >&2; }
# shellcheck source=apps/bench/bench_setup.sh
source "${repo}/apps/bench/bench_setup.sh"

install_minimpi || note "minimpi install failed; its column will read n/a"
run_two_ranks_everywhere pingpong "${max_bytes}" || status=1

# --- the table ---------------------------------------------------------------
echo "Libraries:"
for label in minimpi mpich openmpi; do
  version="$(grep -m1 '^# library:' "${raw_dir}/${label}.txt" | sed 's/^# library: *//; s/\t/ /g')"
  echo "- ${label}: ${version:-n/a (did not run)}"
done
echo

awk -v max="${max_bytes}" -v bind="${bind_to}" '
  # Column by file name, so an empty file (a failed run) keeps its place.
  FNR == 1 { lib = FILENAME ~ /minimpi/ ? 1 : (FILENAME ~ /mpich/ ? 2 : 3) }
  /^#/ || NF < 3 { next }
  { lat[lib, $1] = $2; bw[lib, $1] = $3; sizes[$1] = 1 }
  function human(b) {
    if (b >= 1048576) return (b / 1048576) " MiB"
    if (b >= 1024) return (b / 1024) " KiB"
    return b " B"
  }
  function cell(a, k) { return (k in a) ? a[k] : "n/a" }
  END {
    printf "Ping-pong, 2 ranks on one node, bind-to %s, one run. Latency is half a round trip in us (lower is better); bandwidth is size/latency in GB/s (higher is better). Ratio = minimpi / best of MPICH and Open MPI: below 1 is better for latency, above 1 is better for bandwidth.\n\n", bind
    print "| size | lat minimpi | lat MPICH | lat Open MPI | lat ratio | BW minimpi | BW MPICH | BW Open MPI | BW ratio |"
    print "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for (s = 0; s <= max; s = (s == 0 ? 1 : s * 2)) {
      if (!(s in sizes)) continue
      best_lat = ""
      for (l = 2; l <= 3; l++) {
        if ((l, s) in lat && (best_lat == "" || lat[l, s] + 0 < best_lat + 0)) best_lat = lat[l, s]
      }
      # Bandwidth is size / latency, so its ratio is the inverse latency
      # ratio; computed from the latencies, it keeps their precision.
      have = (1, s) in lat && best_lat + 0 > 0 && lat[1, s] + 0 > 0
      lr = have ? sprintf("%.2f", lat[1, s] / best_lat) : "-"
      br = (have && s > 0) ? sprintf("%.2f", best_lat / lat[1, s]) : "-"
      if (s == 0) { b1 = "-"; b2 = "-"; b3 = "-" }
      else { b1 = cell(bw, 1 SUBSEP s); b2 = cell(bw, 2 SUBSEP s); b3 = cell(bw, 3 SUBSEP s) }
      printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", human(s),
        cell(lat, 1 SUBSEP s), cell(lat, 2 SUBSEP s), cell(lat, 3 SUBSEP s), lr,
        b1, b2, b3, br
    }
  }
' "${raw_dir}/minimpi.txt" "${raw_dir}/mpich.txt" "${raw_dir}/openmpi.txt"

exit "${status}"
