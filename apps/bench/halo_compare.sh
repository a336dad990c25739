#!/usr/bin/env bash
# Builds apps/bench/halo.c unchanged with three MPI libraries, runs each with
# 2 ranks in one go, and prints one markdown table side by side: strided
# halos (derived datatypes through MPI_Sendrecv) in GB/s.
#   minimpi   installed with `bazel run //:install` into a temporary prefix,
#             compiled with its mpicc, run with its mpiexec
#   MPICH     Debian's mpicc.mpich / mpirun.mpich
#   Open MPI  Debian's mpicc.openmpi / mpirun.openmpi
# Ratios compare minimpi with the best of the other two, so only numbers from
# this one run are ever compared.
#
#   usage: apps/bench/halo_compare.sh [--max BYTES] [--bind-to core|none]
#                                     [--prefix DIR] [--raw DIR]
#     --max       largest halo (default 1048576 = 1 MiB)
#     --bind-to   pin each rank to a core in all three libraries (default
#                 core) or in none of them
#     --prefix    use an existing minimpi installation instead of installing
#     --raw       keep each library's raw output in DIR
#   BAZEL         the bazel command (default: bazel)
# Exits non-zero when a library failed to build, run or verify its data (its
# column then reads n/a).
set -uo pipefail

repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)"
source_file="${repo}/apps/bench/halo.c"
read -r -a bazel <<<"${BAZEL:-bazel}"

max_bytes=$((1 << 20))
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
note() { echo "halo_compare: $*" >&2; }
# shellcheck source=apps/bench/bench_setup.sh
source "${repo}/apps/bench/bench_setup.sh"

install_minimpi || note "minimpi install failed; its column will read n/a"
run_two_ranks_everywhere halo "${max_bytes}" || status=1

echo "Libraries:"
for label in minimpi mpich openmpi; do
  version="$(grep -m1 '^# library:' "${raw_dir}/${label}.txt" | sed 's/^# library: *//')"
  echo "- ${label}: ${version:-n/a (did not run)}"
done
echo

awk -v bind="${bind_to}" '
  FNR == 1 { lib = FILENAME ~ /minimpi/ ? 1 : (FILENAME ~ /mpich/ ? 2 : 3) }
  /^#/ || NF < 4 { next }
  {
    key = $1 " " $2
    if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    bw[lib, key] = $4
  }
  function human(b) {
    if (b >= 1048576) return (b / 1048576) " MiB"
    if (b >= 1024) return (b / 1024) " KiB"
    return b " B"
  }
  function cell(l, k) { return ((l, k) in bw) ? bw[l, k] : "n/a" }
  END {
    printf "Strided halo exchange (MPI_Sendrecv of a derived datatype each way at once), 2 ranks on one node, bind-to %s, one run, GB/s of halo per exchange (higher is better). Ratio = minimpi / best of MPICH and Open MPI: above 1 is better.\n\n", bind
    print "| shape | halo | minimpi | MPICH | Open MPI | ratio |"
    print "|---|---:|---:|---:|---:|---:|"
    for (i = 1; i <= n; i++) {
      key = order[i]
      split(key, parts, " ")
      best = ""
      for (l = 2; l <= 3; l++) {
        if ((l, key) in bw && (best == "" || bw[l, key] + 0 > best + 0)) best = bw[l, key]
      }
      ratio = ((1, key) in bw && best + 0 > 0) ? sprintf("%.2f", bw[1, key] / best) : "-"
      printf "| %s | %s | %s | %s | %s | %s |\n", parts[1], human(parts[2]),
        cell(1, key), cell(2, key), cell(3, key), ratio
    }
  }
' "${raw_dir}/minimpi.txt" "${raw_dir}/mpich.txt" "${raw_dir}/openmpi.txt"

exit "${status}"
