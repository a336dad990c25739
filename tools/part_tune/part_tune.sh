#!/usr/bin/env bash
# Builds a tuning table for minimpi's `table` partitioned aggregator on the
# machine it runs on. For each user partition count P and bytes per
# partition b it runs apps/bench/partitioned.c's overhead benchmark (2 ranks,
# round time minus compute) with every transport partition count K (the
# powers of two up to P) and channel count C (1, 2), forced through the
# MPI_Info keys minimpi_part_transport_partitions / minimpi_part_channels,
# and keeps the fastest (K, C); a tie within 2% goes to fewer transport
# partitions, then fewer channels (the same time for fewer resources).
#
# It writes OUTPUT in the format MINIMPI_PART_TABLE reads (mpi/part/
# aggregator.h): '#' comments saying when, where and how it was made, then
# one line per point:
#   user_partitions bytes_per_partition transport_partitions channels
#
#   usage: tools/part_tune/part_tune.sh [--quick] [--mpiexec "CMD ARGS"]
#            [--bench PATH] [--partitions "8 16 ..."] [--sizes "64 256 ..."]
#            [--rounds R] [--compute-us C] [--variant NAME] [--raw DIR] OUTPUT
#     --mpiexec     launcher, run as CMD ARGS -n 2 BENCH ... (default
#                   $MPIEXEC, else mpiexec), e.g. "PREFIX/bin/mpiexec
#                   --bind-to core" for minimpi or mpiexec.mpich
#     --bench       the partitioned benchmark binary built for that library
#                   (default $PART_BENCH, else bazel-bin/apps/bench/partitioned)
#     --partitions  user partition counts (default 8 16 32 64 128)
#     --sizes       bytes per partition (default 64 .. 1 MiB, powers of 4)
#     --rounds      measured rounds per point (default 10)
#     --compute-us  compute time per round (default 1000; the laggard gets
#                   10% more, as in the benchmark)
#     --variant     the aggregator the forced plans run under (default table;
#                   minimpi honours forced K and C whatever the scheme)
#     --raw         keep the benchmark's output per partition count in DIR
#     --quick       a tiny search (P 8 16, sizes 64 4096, K 1 and P, C 1,
#                   3 rounds): checks the plumbing, tunes nothing
# Libraries other than minimpi ignore the info keys, so every K and C is the
# same plan there: a run against MPICH checks the plumbing only.
# Exits non-zero when a benchmark run fails or measures nothing.
set -uo pipefail

usage() { sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)"
launcher="${MPIEXEC:-mpiexec}"
bench="${PART_BENCH:-${repo}/bazel-bin/apps/bench/partitioned}"
partitions="8 16 32 64 128"
sizes="64 256 1024 4096 16384 65536 262144 1048576"
channels="1 2"
rounds=10
compute_us=1000
variant=table
raw_dir=""
quick=0
output=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --mpiexec) launcher="$2"; shift 2 ;;
    --bench) bench="$2"; shift 2 ;;
    --partitions) partitions="$2"; shift 2 ;;
    --sizes) sizes="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --compute-us) compute_us="$2"; shift 2 ;;
    --variant) variant="$2"; shift 2 ;;
    --raw) raw_dir="$2"; shift 2 ;;
    -*) usage ;;
    *) [ -z "${output}" ] || usage; output="$1"; shift ;;
  esac
done
[ -n "${output}" ] || usage
if [ "${quick}" = 1 ]; then
  partitions="8 16"
  sizes="64 4096"
  channels="1"
  rounds=3
fi
read -r -a launcher_cmd <<<"${launcher}"
if [ ! -x "${bench}" ]; then
  echo "part_tune: no benchmark binary at ${bench} (--bench or PART_BENCH)" >&2
  exit 2
fi
command -v "${launcher_cmd[0]}" >/dev/null 2>&1 ||
  { echo "part_tune: launcher ${launcher_cmd[0]} not found (--mpiexec or MPIEXEC)" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
[ -n "${raw_dir}" ] || raw_dir="${work}"
mkdir -p "${raw_dir}"

status=0
results="${work}/results.txt"
: >"${results}"
commas() { local words; read -r -a words <<<"$1"; (IFS=,; echo "${words[*]}"); }
size_list="$(commas "${sizes}")"
channel_list="$(commas "${channels}")"
library=""
for p in ${partitions}; do
  ks=""
  if [ "${quick}" = 1 ]; then
    ks="1,${p}"
    [ "${p}" = 1 ] && ks="1"
  else
    for ((k = 1; k <= p; k *= 2)); do ks="${ks:+${ks},}${k}"; done
  fi
  echo "part_tune: ${p} partitions: K in {${ks}}, C in {${channel_list}}, sizes ${size_list}" >&2
  out="${raw_dir}/tune_${p}.txt"
  if ! "${launcher_cmd[@]}" -n 2 "${bench}" --mode overhead --no-baseline \
      --variant "${variant}" --partitions "${p}" --part-bytes "${size_list}" \
      --transport-partitions "${ks}" --channels "${channel_list}" \
      --rounds "${rounds}" --compute-us "${compute_us}" \
      >"${out}" 2>"${raw_dir}/tune_${p}.err"; then
    tail -n 20 "${raw_dir}/tune_${p}.err" >&2
    echo "part_tune: the run for ${p} partitions failed" >&2
    status=1
    continue
  fi
  [ -n "${library}" ] || library="$(grep -m1 '^# library:' "${out}" | sed 's/^# library: *//')"
  # P b K C overhead_us
  awk '!/^#/ && /mode=overhead/ {
         delete f
         for (i = 1; i <= NF; i++) { eq = index($i, "="); f[substr($i, 1, eq - 1)] = substr($i, eq + 1) }
         print f["partitions"], f["part_bytes"], f["tp"], f["ch"], f["value"]
       }' "${out}" >>"${results}"
done

if [ ! -s "${results}" ]; then
  echo "part_tune: nothing measured" >&2
  exit 1
fi

# Best per (P, b): the fastest, unless one with fewer transport partitions
# (then fewer channels) is within 2% of it.
table="$(sort -k1,1n -k2,2n -k3,3n -k4,4n "${results}" | awk '
  {
    key = $1 " " $2
    if (!(key in best)) order[++n] = key
    # Candidates arrive in K, then C order: keep the first within 2% of the
    # fastest so far, replacing it only when a later one is clearly faster.
    if (!(key in best) || $5 < 0.98 * best[key]) { best[key] = $5; choice[key] = $3 " " $4 }
  }
  END { for (i = 1; i <= n; i++) print order[i], choice[order[i]] }')"

table_name="$(basename -- "${output}")"
{
  echo "# minimpi partitioned tuning table for the table aggregator (MINIMPI_PART_TABLE=${table_name})"
  echo "# made $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(hostname) ($(nproc) cores, $(uname -sr)) by tools/part_tune/part_tune.sh$([ "${quick}" = 1 ] && echo ' --quick')"
  echo "# library: ${library:-unknown}"
  echo "# launcher: ${launcher}; benchmark: ${bench}"
  echo "# search: overhead mode (round time - compute), variant ${variant}, compute ${compute_us} us, ${rounds} rounds;"
  echo "#   partitions {${partitions}}, bytes per partition {${sizes}}, transport partitions powers of two up to P, channels {${channels}}"
  echo "# user_partitions bytes_per_partition transport_partitions channels"
  echo "${table}"
} >"${output}"
echo "part_tune: wrote $(echo "${table}" | wc -l) entries to ${output}" >&2
exit "${status}"
