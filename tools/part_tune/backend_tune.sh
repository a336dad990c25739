#!/usr/bin/env bash
# Calibrates minimpi's `auto` partitioned backend on the machine it runs on.
# For partitions of 64 B .. 64 KiB (16 partitions, one thread each) it runs
# apps/bench/partitioned.c's perceived-bandwidth benchmark under the
# `persist` and `native` backends, interleaved, REPEAT times each, once with
# both ranks on one node and once on two pretend nodes
# (MINIMPI_NODE_SPLIT=2, the network path), and takes each point's median.
# For each place it keeps the largest size up to which persist's median beat
# native's at every size: requests whose partitions are at most that size go
# as messages, larger ones as writes with immediate.
#
# It writes OUTPUT in the format MINIMPI_PART_BACKEND_TABLE reads
# (mpi/part/partitioned.h): '#' comments saying when, where and how it was
# made and what it measured, then
#   on_node_persist_max BYTES
#   between_nodes_persist_max BYTES
# (0: native at every size).
#
#   usage: tools/part_tune/backend_tune.sh [--quick] [--mpiexec "CMD ARGS"]
#            [--bench PATH] [--repeat N] [--rounds R] OUTPUT
#     --mpiexec  launcher, run as CMD ARGS -n 2 BENCH ... (default $MPIEXEC,
#                else mpiexec), e.g. "PREFIX/bin/mpiexec --bind-to core"
#     --bench    the partitioned benchmark built against minimpi (default
#                $PART_BENCH, else bazel-bin/apps/bench/partitioned)
#     --repeat   runs per backend and place (default 5)
#     --rounds   measured rounds per point (default 20)
#     --quick    sizes 64 and 4096, 1 run of 3 rounds: checks the plumbing,
#                calibrates nothing
# Exits non-zero when a benchmark run fails or measures nothing.
set -uo pipefail

usage() { sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)"
launcher="${MPIEXEC:-mpiexec}"
bench="${PART_BENCH:-${repo}/bazel-bin/apps/bench/partitioned}"
sizes="64 256 1024 4096 16384 65536"
repeat=5
rounds=20
output=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) sizes="64 4096"; repeat=1; rounds=3; shift ;;
    --mpiexec) launcher="$2"; shift 2 ;;
    --bench) bench="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    -*) usage ;;
    *) [ -z "${output}" ] || usage; output="$1"; shift ;;
  esac
done
[ -n "${output}" ] || usage
read -r -a launch <<<"${launcher}"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

# run PLACE BACKEND: appends "size value" lines (MB/s) to work/PLACE.BACKEND
run() {
  local place="$1" backend="$2" split=1
  [ "${place}" = on_node ] || split=2
  MINIMPI_NODE_SPLIT="${split}" MINIMPI_PART_BACKEND="${backend}" \
    timeout 600 "${launch[@]}" -n 2 "${bench}" --variant part \
    --mode bandwidth --partitions 16 --part-bytes "${sizes// /,}" \
    --rounds "${rounds}" >"${work}/out" 2>&1 || {
      cat "${work}/out" >&2
      echo "backend_tune: the ${backend} run (${place}) failed" >&2
      exit 1
    }
  sed -n 's/^variant=part .* part_bytes=\([0-9]*\) .* value=\([0-9.]*\) .*/\1 \2/p' \
    "${work}/out" >>"${work}/${place}.${backend}"
}

for place in on_node between_nodes; do
  for _ in $(seq 1 "${repeat}"); do
    run "${place}" persist
    run "${place}" native
  done
done

# The largest size up to which persist's median beat native's at every
# size, and the medians, as comments.
python3 - "${work}" "${sizes}" "${output}" "${repeat}" "${rounds}" <<'PY'
import os, socket, statistics, sys, time
work, sizes, output, repeat, rounds = sys.argv[1:]
sizes = [int(s) for s in sizes.split()]
lines = [
    "# minimpi partitioned backend calibration (tools/part_tune/backend_tune.sh)",
    f"# made {time.strftime('%Y-%m-%d %H:%M:%S')} on {socket.gethostname()}, "
    f"{os.cpu_count()} CPUs; 16 partitions, one thread each, perceived "
    f"bandwidth, medians of {repeat} runs of {rounds} rounds",
]
for place in ("on_node", "between_nodes"):
    medians = {}
    for backend in ("persist", "native"):
        values = {}
        with open(os.path.join(work, f"{place}.{backend}")) as f:
            for line in f:
                size, value = line.split()
                values.setdefault(int(size), []).append(float(value))
        if not values:
            sys.exit(f"backend_tune: no {backend} measurements ({place})")
        medians[backend] = {s: statistics.median(v) for s, v in values.items()}
    limit = 0
    for size in sizes:
        if medians["persist"].get(size, 0) > medians["native"].get(size, 0):
            limit = size
        else:
            break
    for size in sizes:
        lines.append(f"# {place} {size} B: persist "
                     f"{medians['persist'].get(size, 0):.0f} MB/s, native "
                     f"{medians['native'].get(size, 0):.0f} MB/s")
    lines.append(f"{place}_persist_max {limit}")
with open(output, "w") as f:
    f.write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
