#!/usr/bin/env bash
# The partitioned backends side by side: apps/bench/partitioned.c run with
# minimpi under MINIMPI_PART_BACKEND=native, persist, rma and auto, and
# compiled with Debian's MPICH (its own partitioned communication) as the
# peer, in one go, 2 ranks, one thread per partition. Prints two markdown
# tables: overhead (round time minus compute, us, lower is better) and
# perceived bandwidth (MB/s after the last MPI_Pready, higher is better),
# each with auto's ratio to the best of minimpi's three fixed backends
# (the issue's target: within 5%) and minimpi's best against MPICH.
# Open MPI 4.1 has no partitioned communication.
#
#   usage: apps/bench/part_backends.sh [--prefix DIR] [--raw DIR]
#                                      [--rounds R] [--repeat N]
#                                      [--split-nodes]
#     --prefix       an existing minimpi installation (default: install one)
#     --raw          keep the raw output in DIR
#     --rounds       measured rounds per point (default 30)
#     --repeat       runs of each library, interleaved; each point is the
#                    median of its runs (default 5: with a thread per
#                    partition on a 2-core machine single runs swing 2x)
#     --split-nodes  run minimpi with MINIMPI_NODE_SPLIT=2 (its two ranks on
#                    two pretend nodes: the path between nodes, where auto
#                    picks native); MPICH stays on one node
#   BAZEL          the bazel command (default: bazel)
set -uo pipefail

repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)"
source_file="${repo}/apps/bench/partitioned.c"
read -r -a bazel <<<"${BAZEL:-bazel}"
prefix=""
raw_dir=""
rounds=30
repeat=5
split=0
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="$2"; shift 2 ;;
    --raw) raw_dir="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --split-nodes) split=1; shift ;;
    *) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
note() { echo "part_backends: $*" >&2; }
# shellcheck source=apps/bench/bench_setup.sh
source "${repo}/apps/bench/bench_setup.sh"
install_minimpi || { note "minimpi install failed"; exit 1; }

status=0
"${prefix}/bin/mpicc" -O2 -o "${work}/part_minimpi" "${source_file}" -lpthread ||
  exit 1
have_mpich=1
mpicc.mpich -O2 -o "${work}/part_mpich" "${source_file}" -lpthread \
  >"${raw_dir}/mpich.build.log" 2>&1 || have_mpich=0

args=(--variant part --mode overhead,bandwidth --partitions 8,16
      --part-bytes 64,1024,16384,262144 --rounds "${rounds}" --no-baseline)
env_extra=()
[ "${split}" = 0 ] || env_extra=(MINIMPI_NODE_SPLIT=2)
for run in $(seq 1 "${repeat}"); do
  for backend in native persist rma auto; do
    note "run ${run}: minimpi ${backend}"
    env "${env_extra[@]}" MINIMPI_PART_BACKEND="${backend}" \
      timeout 600 "${prefix}/bin/mpiexec" -n 2 --bind-to core \
      "${work}/part_minimpi" "${args[@]}" >>"${raw_dir}/${backend}.txt" \
      2>>"${raw_dir}/${backend}.err" || { note "${backend} failed"; status=1; }
  done
  if [ "${have_mpich}" = 1 ]; then
    note "run ${run}: mpich"
    timeout 600 mpirun.mpich -n 2 -bind-to core "${work}/part_mpich" \
      "${args[@]}" >>"${raw_dir}/mpich.txt" 2>>"${raw_dir}/mpich.err" ||
      status=1
  fi
done
# Each point: the median of its runs.
for label in native persist rma auto mpich; do
  [ -f "${raw_dir}/${label}.txt" ] || continue
  python3 - "${raw_dir}/${label}.txt" >"${raw_dir}/${label}.median" <<'PY'
import re, statistics, sys
values, order = {}, []
for line in open(sys.argv[1]):
    if not line.startswith("variant="):
        continue
    fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
    key = (fields["mode"], fields["partitions"], fields["part_bytes"])
    if key not in values:
        values[key] = []
        order.append(key)
    values[key].append(float(fields["value"]))
for mode, partitions, part_bytes in order:
    median = statistics.median(values[(mode, partitions, part_bytes)])
    shown = f"{median:.2f}" if median < 100 else f"{median:.0f}"
    print(f"variant=part mode={mode} partitions={partitions} "
          f"part_bytes={part_bytes} value={shown}")
PY
done

awk -v pretend_nodes="${split}" -v runs="${repeat}" '
  FNR == 1 {
    n = split(FILENAME, path, "/"); lib = path[n]; sub(/\.median$/, "", lib)
  }
  /^variant=/ {
    delete f
    for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
    key = f["mode"] " " f["partitions"] " " f["part_bytes"]
    if (!(key in seen)) { seen[key] = 1; order[++count] = key }
    value[lib, key] = f["value"]
  }
  function cell(l, k) { return ((l, k) in value) ? value[l, k] : "n/a" }
  function table(mode, caption, lower_better,   i, k, parts, best, b, v, a, m, r1, r2) {
    print caption
    print ""
    print "| partitions | bytes each | native | persist | rma | auto | auto / best fixed | MPICH | minimpi best / MPICH |"
    print "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for (i = 1; i <= count; i++) {
      k = order[i]; split(k, parts, " ")
      if (parts[1] != mode) continue
      best = ""
      for (b = 1; b <= 3; b++) {
        v = cell(names[b], k)
        if (v == "n/a") continue
        if (best == "" || (lower_better ? v + 0 < best : v + 0 > best)) best = v + 0
      }
      a = cell("auto", k); m = cell("mpich", k)
      r1 = (a == "n/a" || best == "") ? "n/a" : sprintf("%.2f", lower_better ? best / a : a / best)
      r2 = (m == "n/a" || best == "") ? "n/a" : sprintf("%.2f", lower_better ? m / best : best / m)
      printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", parts[2], parts[3],
        cell("native", k), cell("persist", k), cell("rma", k), a, r1, m, r2
    }
    print ""
  }
  END {
    names[1] = "native"; names[2] = "persist"; names[3] = "rma"
    where = pretend_nodes ? "minimpi on two pretend nodes (MINIMPI_NODE_SPLIT=2: tcp between them), MPICH on one node" : "2 ranks on one node"
    table("overhead", "Partitioned overhead, " where ", one thread per partition, bind-to core, median of " runs " runs: round time minus compute, us (lower is better). auto / best fixed = best of native, persist, rma divided by auto (1.00: auto matched the best; the target is at least 0.95); minimpi best / MPICH: above 1 means minimpi is faster.", 1)
    table("bandwidth", "Perceived bandwidth, " where ": median of " runs " runs, MB/s after the last MPI_Pready (higher is better). auto / best fixed = auto divided by the best of native, persist, rma; minimpi best / MPICH: above 1 means minimpi is faster.", 0)
  }
' "${raw_dir}"/native.median "${raw_dir}"/persist.median \
  "${raw_dir}"/rma.median "${raw_dir}"/auto.median "${raw_dir}"/mpich.median \
  2>/dev/null
exit "${status}"
