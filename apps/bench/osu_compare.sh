#!/usr/bin/env bash
# Runs OSU Micro-Benchmarks 7.2, as released, against three MPI libraries in
# interleaved rounds, and prints one markdown table: each library's median
# over the rounds, and the median (with its range) of the per-round ratios of
# minimpi to that round's best peer, met or missed against "no worse than the
# best peer". Why rounds: this machine's small-message figures move 3-4x
# within minutes as the host places its vCPUs, so libraries are compared
# within a round only, never best against best.
#   minimpi   installed with `bazel run //:install` into a temporary prefix
#             (or --prefix), OSU built with its mpicc/mpicxx, run with its
#             mpiexec
#   MPICH     Debian's mpicc.mpich/mpicxx.mpich, mpirun.mpich
#   Open MPI  Debian's mpicc.openmpi/mpicxx.openmpi, mpirun.openmpi (as
#             root, with OMPI_ALLOW_RUN_AS_ROOT=1 and ..._CONFIRM=1). For a
#             one-sided benchmark whose run fails with the default osc
#             component, the run is repeated with OMPI_MCA_osc=ucx, then
#             pt2pt, and the first that runs is kept for that benchmark's
#             later rounds; the caption says so. An OMPI_MCA_osc in the
#             caller's environment is used as it is, with no fallback.
# OSU is built once per library, out of tree in a scratch directory, only the
# benchmarks asked for (configure CC=... CXX=..., then make of those targets
# in their directories). Every run is launched as a user would: `mpiexec -n
# RANKS ./osu_x -m MIN:MAX`, no binding flags, OSU's defaults otherwise (its
# one-sided default, MPI_Win_allocate and MPI_Win_flush, is read from its
# output and printed in the caption). In round r (from 1) the libraries run
# in the order minimpi, MPICH, Open MPI rotated left by r-1, benchmark by
# benchmark, so no library always runs first. The core-to-core cache-line
# round trip (../shared/bench/core_to_core.c) is measured before and after
# each round and printed beside it.
#
#   usage: apps/bench/osu_compare.sh [--osu TARBALL] [--bench "B1 B2 ..."]
#                                    [--sizes "S1 S2 ..."] [--rounds N]
#                                    [--ranks N] [--args "OSU OPTIONS"]
#                                    [--precision D]
#                                    [--timeout S] [--prefix DIR] [--raw DIR]
#     --osu      OSU 7.2's tarball (default: bench/osu-micro-benchmarks-7.2
#                .tar.gz in the shared folder beside the repository)
#     --bench    benchmarks, any of OSU's C MPI programs (default:
#                "osu_put_latency osu_get_latency osu_acc_latency
#                osu_put_bw osu_get_bw")
#     --sizes    message sizes in bytes for the table (default "8 1048576");
#                each run covers -m MIN:MAX, OSU's powers of two from the
#                smallest, so each size must be the smallest times 2^k
#     --rounds   interleaved rounds (default 7; fewer make a check, not a
#                figure, and the caption says so)
#     --ranks    ranks per run (default 2; Open MPI gets --oversubscribe
#                when that is more than the cores)
#     --args     more OSU options for every run, e.g. "-s fence" or "-i 2000"
#     --precision  decimals OSU prints (default: its own, 2). OSU's code is
#                unchanged: configure gets CPPFLAGS=-DFLOAT_PRECISION=D, the
#                macro osu_util.h defines only when unset. One-sided 8-byte
#                latencies near 0.1 us carry one or two digits at 2 decimals
#     --timeout  limit for one run in seconds (default 120)
#     --prefix   use an existing minimpi installation instead of installing
#     --raw      keep the raw output in DIR: roundN/LIB.BENCH.txt and .err,
#                the build logs, figures.tsv (round, bench, size, library,
#                figure) and rounds.tsv (round, c2c before/after, seconds)
#   BAZEL        the bazel command (default: bazel)
# One round of the five default benchmarks takes 10-35 s on 2 cores (fifteen
# launches: 10 s on a quiet machine, 33 s beside a compile); the three OSU
# builds take about half a minute more, the install what bazel needs.
# Exits non-zero when a library failed to build or a run failed (that
# round's figure then reads n/a and the failure is listed under the table);
# an Open MPI run that needed a fallback osc counts as having run.
set -uo pipefail

repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)"
# shellcheck disable=SC2034  # bazel: read by bench_setup.sh's install_minimpi
read -r -a bazel <<<"${BAZEL:-bazel}"
shared_bench="$(cd -- "${repo}/.." && pwd -P)/shared/bench"

osu_tarball="${shared_bench}/osu-micro-benchmarks-7.2.tar.gz"
benches="osu_put_latency osu_get_latency osu_acc_latency osu_put_bw osu_get_bw"
sizes="8 1048576"
rounds=7
ranks=2
osu_args=""
precision=""
timeout_s=120
prefix=""
raw_dir=""
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --osu) osu_tarball="$2"; shift 2 ;;
    --bench) benches="$2"; shift 2 ;;
    --sizes) sizes="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --ranks) ranks="$2"; shift 2 ;;
    --args) osu_args="$2"; shift 2 ;;
    --precision) precision="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --prefix) prefix="$2"; shift 2 ;;
    --raw) raw_dir="$2"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "osu_compare: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

note() { echo "osu_compare: $*" >&2; }
read -r -a bench_list <<<"${benches}"
read -r -a size_list <<<"${sizes}"
read -r -a extra_args <<<"${osu_args}"
for n in "${rounds}" "${ranks}" "${timeout_s}" ${precision:+"${precision}"} "${size_list[@]}"; do
  case "${n}" in '' | *[!0-9]*) note "not a number: '${n}'"; exit 2 ;; esac
done
if [ "${#bench_list[@]}" = 0 ] || [ "${#size_list[@]}" = 0 ] || [ "${rounds}" -lt 1 ]; then
  note "need a benchmark, a size and a round"
  exit 2
fi
[ -f "${osu_tarball}" ] || { note "no OSU tarball at ${osu_tarball} (--osu)"; exit 2; }

# The sizes OSU's -m MIN:MAX will visit: MIN, 2 MIN, 4 MIN, ... up to MAX.
min_size="${size_list[0]}"
max_size="${size_list[0]}"
for s in "${size_list[@]}"; do
  [ "${s}" -ge "${min_size}" ] || min_size="${s}"
  [ "${s}" -le "${max_size}" ] || max_size="${s}"
done
for s in "${size_list[@]}"; do
  v="${min_size}"
  while [ "${v}" -lt "${s}" ] && [ "${v}" -gt 0 ]; do v=$((v * 2)); done
  [ "${v}" = "${s}" ] ||
    { note "size ${s} is not ${min_size} times a power of two: OSU would skip it"; exit 2; }
done

# shellcheck source=apps/bench/bench_setup.sh
source "${repo}/apps/bench/bench_setup.sh"

status=0
failures=()  # one line per failed build or run, listed under the table
fail() { failures+=("$*"); note "$*"; status=1; }

labels=(minimpi mpich openmpi)
declare -A lib_name=([minimpi]=minimpi [mpich]=MPICH [openmpi]="Open MPI")
declare -A built=()

install_minimpi || note "minimpi install failed; its column will read n/a"
declare -A cc=([minimpi]="${prefix}/bin/mpicc" [mpich]=mpicc.mpich [openmpi]=mpicc.openmpi)
declare -A cxx=([minimpi]="${prefix}/bin/mpicxx" [mpich]=mpicxx.mpich [openmpi]=mpicxx.openmpi)

# Where each benchmark's Makefile lives in OSU's tree (c/mpi/one-sided, ...).
tar xzf "${osu_tarball}" -C "${work}" || { note "cannot unpack ${osu_tarball}"; exit 2; }
osu_src="$(find "${work}" -maxdepth 1 -type d -name 'osu-micro-benchmarks-*' | head -n 1)"
[ -n "${osu_src}" ] || { note "no osu-micro-benchmarks-* folder in ${osu_tarball}"; exit 2; }
declare -A bench_dir=()
for b in "${bench_list[@]}"; do
  am="$(grep -l -E "^${b}_SOURCES" -r "${osu_src}/c/mpi" --include=Makefile.am | head -n 1)"
  [ -n "${am}" ] || { note "no benchmark ${b} in OSU's c/mpi"; exit 2; }
  d="${am#"${osu_src}/"}"
  bench_dir[${b}]="${d%/Makefile.am}"
done

# build LABEL: configure OSU in work/build-LABEL with LABEL's wrappers and
# make the benchmarks asked for, directory by directory.
build() {
  local label="$1" d b
  local log="${raw_dir}/${label}.build.log"
  local -a dirs=() targets
  if ! command -v "${cc[${label}]}" >/dev/null 2>&1 ||
      ! command -v "${cxx[${label}]}" >/dev/null 2>&1; then
    fail "${label}: ${cc[${label}]} or ${cxx[${label}]} not found"
    return 1
  fi
  note "building OSU with ${label}'s wrappers"
  mkdir -p "${work}/build-${label}"
  local -a flags=()
  [ -z "${precision}" ] || flags=(CPPFLAGS="-DFLOAT_PRECISION=${precision}")
  if ! (cd "${work}/build-${label}" &&
      "${osu_src}/configure" CC="${cc[${label}]}" CXX="${cxx[${label}]}" "${flags[@]}") \
      >"${log}" 2>&1; then
    tail -n 20 "${log}" >&2
    fail "${label}: OSU's configure failed (${log##*/})"
    return 1
  fi
  for b in "${bench_list[@]}"; do
    case " ${dirs[*]} " in *" ${bench_dir[${b}]} "*) ;; *) dirs+=("${bench_dir[${b}]}") ;; esac
  done
  for d in "${dirs[@]}"; do
    targets=()
    for b in "${bench_list[@]}"; do
      [ "${bench_dir[${b}]}" != "${d}" ] || targets+=("${b}")
    done
    if ! make -C "${work}/build-${label}/${d}" -j2 "${targets[@]}" >>"${log}" 2>&1; then
      tail -n 20 "${log}" >&2
      fail "${label}: building ${targets[*]} failed (${log##*/})"
      return 1
    fi
  done
  built[${label}]=1
}

for label in "${labels[@]}"; do
  if [ "${label}" = minimpi ] && [ ! -x "${prefix}/bin/mpicc" ]; then
    fail "minimpi: no installation (${prefix}/bin/mpicc missing)"
    continue
  fi
  build "${label}"
done

c2c="${work}/core_to_core"
if ! cc -O2 -pthread "${shared_bench}/core_to_core.c" -o "${c2c}" 2>"${work}/c2c.log"; then
  note "core_to_core.c did not build; its column will read n/a"
  c2c=""
fi
core_to_core() {
  local out=""
  [ -z "${c2c}" ] || out="$("${c2c}" 2>/dev/null | awk '/round trip/ { print $4 }')"
  echo "${out:-n/a}"
}

cores="$(nproc)"
as_root=()
[ "$(id -u)" != 0 ] || as_root=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
ompi_extra=()
[ "${ranks}" -le "${cores}" ] || ompi_extra=(--oversubscribe)

declare -A osc=()        # one-sided benchmark -> the osc Open MPI runs it with
declare -A osc_failed=()  # one-sided benchmark -> the osc components that failed
declare -A osc_why=()    # one-sided benchmark -> the default's failure, one line

# launch LABEL BENCH OUT [VAR=VALUE...]: one run, stdout to OUT.txt, stderr to
# OUT.err. Fails when the launcher does or OSU printed no figure.
launch() {
  local label="$1" b="$2" out="$3"; shift 3
  local -a launcher
  case "${label}" in
    minimpi) launcher=("${prefix}/bin/mpiexec" -n "${ranks}") ;;
    mpich) launcher=(mpirun.mpich -n "${ranks}") ;;
    openmpi) launcher=(mpirun.openmpi "${ompi_extra[@]}" -n "${ranks}") ;;
  esac
  # MPIEXEC_TIMEOUT: all three launchers end a job that outlives it;
  # timeout(1) is the backstop.
  env MPIEXEC_TIMEOUT="${timeout_s}" "$@" \
    timeout --kill-after=20 "$((timeout_s + 30))" \
    "${launcher[@]}" "${work}/build-${label}/${bench_dir[${b}]}/${b}" \
    -m "${min_size}:${max_size}" "${extra_args[@]}" \
    >"${out}.txt" 2>"${out}.err" &&
    grep -q -E '^[0-9]+[[:space:]]+[0-9.]+' "${out}.txt"
}

# run_one ROUND LABEL BENCH: LABEL's run of BENCH in ROUND, with Open MPI's
# osc fallback for one-sided benchmarks.
run_one() {
  local r="$1" label="$2" b="$3" dir="${raw_dir}/round${1}" o
  local out="${dir}/${label}.${b}"
  [ -n "${built[${label}]:-}" ] || return 0
  if [ "${label}" = openmpi ] && [ "${bench_dir[${b}]}" = c/mpi/one-sided ] &&
      [ -z "${OMPI_MCA_osc+set}" ]; then
    local -a candidates=(default ucx pt2pt)
    [ -z "${osc[${b}]:-}" ] || candidates=("${osc[${b}]}")
    for o in "${candidates[@]}"; do
      if [ "${o}" = default ]; then
        launch openmpi "${b}" "${out}" "${as_root[@]}" && { osc[${b}]=default; return 0; }
        osc_why[${b}]="$(grep -m1 -E 'Signal: |exited on signal|MPI_ABORT|error' \
          "${out}.err" | sed 's/^\[[^]]*\] *//')"
      else
        launch openmpi "${b}" "${out}" "${as_root[@]}" "OMPI_MCA_osc=${o}" &&
          { osc[${b}]="${o}"; return 0; }
      fi
      cp "${out}.err" "${out}.osc-${o}.err"
      case " ${osc_failed[${b}]:-} " in *" ${o} "*) ;; *) osc_failed[${b}]="${osc_failed[${b}]:-}${osc_failed[${b}]:+ }${o}" ;; esac
      note "round ${r}: Open MPI's ${b} failed with osc ${o}"
    done
  else
    local -a env_vars=()
    [ "${label}" != openmpi ] || env_vars=("${as_root[@]}")
    launch "${label}" "${b}" "${out}" "${env_vars[@]}" && return 0
  fi
  tail -n 5 "${out}.err" >&2
  rm -f "${out}.txt"
  fail "round ${r}: ${lib_name[${label}]}'s ${b} failed (round${r}/${label}.${b}.err)"
}

: >"${raw_dir}/rounds.tsv"
for ((r = 1; r <= rounds; r++)); do
  mkdir -p "${raw_dir}/round${r}"
  shift_by=$(((r - 1) % 3))
  order=("${labels[@]:shift_by}" "${labels[@]:0:shift_by}")
  note "round ${r} of ${rounds} (${order[*]})"
  start="${SECONDS}"
  before="$(core_to_core)"
  for b in "${bench_list[@]}"; do
    for label in "${order[@]}"; do run_one "${r}" "${label}" "${b}"; done
  done
  after="$(core_to_core)"
  printf '%s\t%s\t%s\t%s\t%s\n' "${r}" "${before}" "${after}" \
    "$((SECONDS - start))" "${order[*]}" >>"${raw_dir}/rounds.tsv"
  note "round ${r}: c2c ${before} -> ${after} ns, $((SECONDS - start)) s"
done

# figures.tsv: round, benchmark, size, library, figure, kind (lat: lower is
# better; bw: higher is better, from OSU's "# Size" header).
: >"${raw_dir}/figures.tsv"
for ((r = 1; r <= rounds; r++)); do
  for b in "${bench_list[@]}"; do
    for label in "${labels[@]}"; do
      f="${raw_dir}/round${r}/${label}.${b}.txt"
      [ -f "${f}" ] || continue
      awk -v r="${r}" -v b="${b}" -v lib="${label}" -v sizes="${sizes}" '
        BEGIN { n = split(sizes, s, " "); for (i = 1; i <= n; i++) want[s[i]] = 1 }
        /^# Size/ { kind = ($0 ~ /Latency|\(us\)/) ? "lat" : "bw" }
        /^#/ { next }
        NF >= 2 && ($1 in want) && $2 ~ /^[0-9.]+$/ {
          printf "%s\t%s\t%s\t%s\t%s\t%s\n", r, b, $1, lib, $2, kind
        }
      ' "${f}" >>"${raw_dir}/figures.tsv"
    done
  done
done

echo "Rounds (core-to-core cache-line round trip before and after each, ns):"
echo
echo "| round | order | c2c before | c2c after | seconds |"
echo "|---:|---|---:|---:|---:|"
awk -F'\t' '{ printf "| %s | %s | %s | %s | %s |\n", $1, $5, $2, $3, $4 }' \
  "${raw_dir}/rounds.tsv"
echo

# OSU's window and synchronization, as it printed them, grouped by setting:
# "MPI_Win_allocate + MPI_Win_flush (osu_put_latency, osu_get_bw)".
one_sided="$(for b in "${bench_list[@]}"; do
    cat "${raw_dir}"/round*/*."${b}".txt 2>/dev/null |
      awk -F': *' -v b="${b}" '
        /^# Window creation:/ { w[$2] = 1 }
        /^# Synchronization:/ { s[$2] = 1 }
        END {
          for (k in w) ws = ws (ws != "" ? "/" : "") k
          for (k in s) ss = ss (ss != "" ? "/" : "") k
          if (ws != "") printf "%s + %s\t%s\n", ws, ss, b
        }'
  done | awk -F'\t' '
    !($1 in set) { order[++n] = $1 }
    { set[$1] = set[$1] (set[$1] != "" ? ", " : "") $2 }
    END { for (i = 1; i <= n; i++) printf "%s%s (%s)", (i > 1 ? "; " : ""), order[i], set[order[i]] }')"
osc_note=""
for b in "${bench_list[@]}"; do
  [ -n "${osc_failed[${b}]:-}" ] || continue
  osc_note="${osc_note}${osc_note:+; }${b}: Open MPI's osc ${osc_failed[${b}]// /, } failed${osc_why[${b}]:+ (${osc_why[${b}]})}, ${osc[${b}]:+figures with osc ${osc[${b}]}}${osc[${b}]:-no osc ran}"
done
if [ -n "${OMPI_MCA_osc+set}" ]; then
  osc_note="Open MPI with OMPI_MCA_osc=${OMPI_MCA_osc} (from the caller's environment)"
elif [ -z "${osc_note}" ] && [ -n "${one_sided}" ]; then
  osc_note="Open MPI with its default osc component"
fi
c2c_range="$(awk -F'\t' '{ for (i = 2; i <= 3; i++) if ($i != "n/a") {
    if (lo == "" || $i + 0 < lo) lo = $i + 0; if (hi == "" || $i + 0 > hi) hi = $i + 0 } }
  END { if (lo != "") printf "%.0f-%.0f ns", lo, hi; else print "n/a" }' "${raw_dir}/rounds.tsv")"

caption="OSU Micro-Benchmarks 7.2, ${rounds} interleaved round(s) (order rotated each round), ${ranks} ranks on one node, each library launched with its defaults (mpiexec -n ${ranks}, no binding), OSU built with each library's own wrappers${precision:+ (CPPFLAGS=-DFLOAT_PRECISION=${precision}: ${precision} decimals)} and run with -m ${min_size}:${max_size}${osu_args:+ ${osu_args}}"
[ -z "${one_sided}" ] || caption="${caption}; OSU's default window and synchronization: ${one_sided}"
[ -z "${osc_note}" ] || caption="${caption}; ${osc_note}"
[ "${rounds}" -ge 7 ] ||
  caption="${caption}; fewer than 7 rounds: a check of the script, not a figure"
caption="${caption}; core-to-core round trip ${c2c_range} across the rounds. Figures are medians over the rounds (us for latency, MB/s = 1e6 B/s for bandwidth). Ratio: in each round minimpi against that round's best peer (latency: best peer / minimpi; bandwidth: minimpi / best peer), so above 1 means minimpi is better; the median of those ratios, their range, and how many rounds gave one. Met: median ratio >= 1.0 (no worse than the best peer)."
echo "${caption}"
echo

awk -F'\t' -v benches="${benches}" -v sizes="${sizes}" -v dec="${precision:-2}" '
  function median(list, n,    a, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  function human(b) {
    if (b >= 1048576 && b % 1048576 == 0) return (b / 1048576) " MiB"
    if (b >= 1024 && b % 1024 == 0) return (b / 1024) " KiB"
    return b " B"
  }
  function fig(b, s, l) { return ((b, s, l) in vals) ? sprintf("%." dec "f", median(vals[b, s, l])) : "n/a" }
  {
    v[$1, $2, $3, $4] = $5; kind[$2] = $6; rs[$1] = 1
    vals[$2, $3, $4] = vals[$2, $3, $4] " " $5
  }
  END {
    print "| benchmark | size | minimpi | MPICH | Open MPI | ratio (median) | ratio range | rounds | no worse than the best peer |"
    print "|---|---:|---:|---:|---:|---:|---:|---:|---|"
    nb = split(benches, B, " "); ns = split(sizes, S, " ")
    for (i = 1; i <= nb; i++) for (j = 1; j <= ns; j++) {
      b = B[i]; s = S[j]; k = kind[b]; ratios = ""; nr = 0; lo = ""; hi = ""
      for (r in rs) {
        if (!((r, b, s, "minimpi") in v) || v[r, b, s, "minimpi"] + 0 <= 0) continue
        best = ""
        if ((r, b, s, "mpich") in v) best = v[r, b, s, "mpich"]
        if ((r, b, s, "openmpi") in v) {
          o = v[r, b, s, "openmpi"]
          if (best == "" || (k == "lat" ? o + 0 < best + 0 : o + 0 > best + 0)) best = o
        }
        if (best == "" || best + 0 <= 0) continue
        q = (k == "lat") ? best / v[r, b, s, "minimpi"] : v[r, b, s, "minimpi"] / best
        ratios = ratios " " q; nr++
        if (lo == "" || q < lo) lo = q
        if (hi == "" || q > hi) hi = q
      }
      unit = (k == "lat") ? "us" : (k == "bw" ? "MB/s" : "")
      if (nr) {
        m = median(ratios)
        printf "| %s%s | %s | %s | %s | %s | %.2f | %.2f-%.2f | %d | %s |\n", b, unit ? " (" unit ")" : "", human(s),
          fig(b, s, "minimpi"), fig(b, s, "mpich"), fig(b, s, "openmpi"), m, lo, hi, nr, (m >= 1.0 ? "met" : "missed")
      } else {
        printf "| %s%s | %s | %s | %s | %s | n/a | n/a | 0 | n/a |\n", b, unit ? " (" unit ")" : "", human(s),
          fig(b, s, "minimpi"), fig(b, s, "mpich"), fig(b, s, "openmpi")
      }
    }
  }
' "${raw_dir}/figures.tsv" || { note "the table's awk failed"; status=1; }

if [ "${#failures[@]}" -gt 0 ]; then
  echo
  echo "Failures (figures of those runs read n/a):"
  for f in "${failures[@]}"; do echo "- ${f}"; done
fi
exit "${status}"
