#!/usr/bin/env bash
# A benchmark users would trust (issue 41): OSU Micro-Benchmarks 7.2, as
# released, and a worker-thread rate loop, built with each library's own
# wrappers and run as a user runs them, in interleaved rounds, every
# comparison made inside one round:
#   minimpi   installed with `bazel run //:install` into a temporary prefix
#             (or --prefix); its mpicc/mpicxx, its mpiexec
#   MPICH     Debian's mpicc.mpich/mpicxx.mpich, mpiexec.mpich
#   Open MPI  Debian's mpicc.openmpi/mpicxx.openmpi, mpiexec.openmpi (as
#             root, with OMPI_ALLOW_RUN_AS_ROOT=1 and ..._CONFIRM=1)
# A peer whose wrappers or launcher are not installed is skipped, and the
# output says so; its column reads "skipped".
#
# Why rounds: on these 2-vCPU machines the host moves the vCPUs about, and
# the core-to-core cache-line round trip (../shared/bench/core_to_core.c)
# swings between about 150 and 900 ns within minutes; every small-message
# figure of every library moves with it. A best run of one library against
# the best run of another compares two states of the host. So each round
# runs every library once (order minimpi, MPICH, Open MPI rotated left by
# round-1, benchmark by benchmark), the core-to-core round trip is measured
# at the start (and end) of each round, minimpi is compared with that
# round's best peer only, and the summary gives the median of those
# per-round ratios with their range. A target is met only when the median
# meets it.
#
# The benchmarks (default: all six):
#   osu_latency     ping-pong, half round trip (us, lower is better)
#   osu_bw          window of nonblocking sends (MB/s, higher is better)
#   osu_bibw        the same both ways at once (MB/s, higher is better)
#   osu_mbw_mr      message rate of one pair (the Messages/s column, shown
#                   in M msgs/s, higher is better)
#   osu_latency_mt  osu_latency with 2 threads per rank (OSU's -t 2:2: two
#                   sender threads, two receiver threads)
#   thread_rate     apps/bench/thread_rate.c: an MPI_THREAD_MULTIPLE program
#                   whose worker pthread sends windows of 64 MPI_Isend of 8 B,
#                   MPI_Waitall, a one-byte ack (M msgs/s, higher is
#                   better; 8 B only; about 0.5 s timed per run)
# Any other C MPI benchmark of OSU (e.g. osu_put_latency) may be named with
# --bench; for a one-sided benchmark whose run fails with Open MPI's default
# osc component, the run is repeated with OMPI_MCA_osc=ucx, then pt2pt, and
# the first that runs is kept for its later rounds (an OMPI_MCA_osc in the
# caller's environment is used as it is).
# Every run is `mpiexec -n RANKS ./prog` with no binding or other flags (each library binds as it does by default) and
# OSU's defaults (OSU runs -m MIN:MAX of --sizes; osu_latency_mt adds -t
# 2:2). OSU is built once per library, out of tree in a scratch directory,
# only the benchmarks asked for.
#
# Output (stdout, markdown): after each round, that round's table: for each
# benchmark and size, each library's figure, the best peer, and the ratio
# minimpi / best peer. The ratio is minimpi's figure over the best peer's
# in every row, so its good side follows the unit: latency rows (lower is
# better) want it at or below 1, bandwidth and rate rows (higher is better)
# at or above 1; the "better" column says which. At the end, the summary:
# each library's median figure over the rounds, the median of the per-round
# ratios with their range, and issue 41's targets where one applies, met or
# missed on the median:
#   osu_mbw_mr 8 B    >= 1.2 (rate at least 1.2x the best peer's)
#   thread_rate 8 B   >= 1.0
#   osu_latency 8 B   <= 1.0 (latency no higher than the best peer's)
#
#   usage: apps/bench/osu_compare.sh [--quick] [--rounds N] [--bench LIST]
#                                    [--sizes LIST] [--osu TARBALL]
#                                    [--prefix DIR] [--ranks N]
#                                    [--args "OSU OPTIONS"] [--precision D]
#                                    [--timeout S] [--raw DIR]
#     --quick    for CI: checks that the command works, not the figures: 1
#                round, size 8 only, OSU with -i 20 -x 5, thread_rate for
#                0.05 s (an explicit --rounds, --sizes or --args wins). It
#                passes when every installed library built and ran every
#                benchmark and every figure was read back
#     --rounds   interleaved rounds (default 7; fewer make a check, not a
#                figure, and the output says so)
#     --bench    benchmarks, space separated (default "osu_latency osu_bw
#                osu_bibw osu_mbw_mr osu_latency_mt thread_rate")
#     --sizes    message sizes in bytes for the tables (default
#                "8 1048576"); OSU runs -m MIN:MAX, its powers of two from
#                the smallest, so each size must be the smallest times 2^k
#     --osu      OSU 7.2's tarball (default: bench/osu-micro-benchmarks-7.2
#                .tar.gz in the shared folder beside the repository)
#     --prefix   an existing minimpi installation instead of installing one
#     --ranks    ranks per OSU run (default 2; Open MPI gets --oversubscribe
#                when that is more than the cores); thread_rate always 2
#     --args     more OSU options for every OSU run, e.g. "-i 2000"
#     --precision  decimals OSU prints (default: its own, 2), through
#                CPPFLAGS=-DFLOAT_PRECISION=D, which OSU's osu_util.h
#                defines only when unset (OSU's code is unchanged)
#     --timeout  limit for one run in seconds (default 120)
#     --raw      keep the raw output in DIR: roundN/LIB.BENCH.txt and .err,
#                the build logs, figures.tsv (round, bench, size, library,
#                figure, kind) and rounds.tsv (round, c2c start/end, seconds,
#                order)
#   BAZEL        the bazel command (default: bazel)
# Time on 2 cores: the builds 30-70 s (plus the install, when bazel has to
# build), then about 40 s a round for the default six, plus --timeout for
# each run that outlives it (in a trial round on a busy machine Open MPI's
# osu_latency_mt took 3 ms an 8-byte iteration and ran past 120 s); --quick
# 40-75 s with --prefix.
# Exits non-zero when minimpi or an installed peer failed to build, a run
# failed (its figure then reads n/a), or a run printed no figure for a size
# asked for; the failures are listed under the summary. A skipped peer is
# not a failure.
set -uo pipefail

repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)"
# shellcheck disable=SC2034  # bazel: read by bench_setup.sh's install_minimpi
read -r -a bazel <<<"${BAZEL:-bazel}"
shared_bench="$(cd -- "${repo}/.." && pwd -P)/shared/bench"

# --- options -------------------------------------------------------------------
osu_tarball="${shared_bench}/osu-micro-benchmarks-7.2.tar.gz"
benches="osu_latency osu_bw osu_bibw osu_mbw_mr osu_latency_mt thread_rate"
quick=0
sizes=""      # "" until the options are read: --quick changes the defaults
rounds=""
osu_args=""
osu_args_set=0
ranks=2
precision=""
timeout_s=120
prefix=""
raw_dir=""
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --osu) osu_tarball="$2"; shift 2 ;;
    --bench) benches="$2"; shift 2 ;;
    --sizes) sizes="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --ranks) ranks="$2"; shift 2 ;;
    --args) osu_args="$2"; osu_args_set=1; shift 2 ;;
    --precision) precision="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --prefix) prefix="$2"; shift 2 ;;
    --raw) raw_dir="$2"; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "osu_compare: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
# --quick: one short round at 8 B; enough iterations to print a figure.
thread_rate_args=()
if ((quick)); then
  : "${rounds:=1}" "${sizes:=8}"
  ((osu_args_set)) || osu_args="-i 20 -x 5"
  thread_rate_args=(--time 0.05 --warmup 0.02)
fi
: "${rounds:=7}" "${sizes:=8 1048576}"

note() { echo "osu_compare: $*" >&2; }
# has BENCH: BENCH is one of the benchmarks of this run.
has() { case " ${benches} " in *" $1 "*) return 0 ;; esac; return 1; }
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

# The sizes OSU's -m MIN:MAX visits: MIN, 2 MIN, 4 MIN, ... up to MAX; every
# size asked for must be one of them, or OSU would print no figure for it.
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
# shellcheck source=apps/bench/osu_setup.sh
source "${repo}/apps/bench/osu_setup.sh"

status=0
failures=()  # one line per failed build or run, listed under the summary
timeouts=()  # one line per peer run that ran out of time, listed likewise
fail() { failures+=("$*"); note "$*"; status=1; }

all_labels=(minimpi mpich openmpi)
declare -A lib_name=([minimpi]=minimpi [mpich]=MPICH [openmpi]="Open MPI")
declare -A skipped=()  # label -> why it was left out (not installed)
declare -A built=()    # "label bench" -> 1 once that program is built

# --- the libraries -------------------------------------------------------------
install_minimpi || note "minimpi install failed"
declare -A cc=([minimpi]="${prefix}/bin/mpicc" [mpich]=mpicc.mpich [openmpi]=mpicc.openmpi)
declare -A cxx=([minimpi]="${prefix}/bin/mpicxx" [mpich]=mpicxx.mpich [openmpi]=mpicxx.openmpi)
declare -A mpiexec=([minimpi]="${prefix}/bin/mpiexec" [mpich]=mpiexec.mpich [openmpi]=mpiexec.openmpi)

# A peer with a wrapper or launcher missing is not installed here: skip it and
# say so (a user without MPICH still gets minimpi against Open MPI). minimpi
# missing is a failure: it is what the command measures.
labels=()
for label in "${all_labels[@]}"; do
  missing=""
  for tool in "${cc[${label}]}" "${cxx[${label}]}" "${mpiexec[${label}]}"; do
    command -v "${tool}" >/dev/null 2>&1 || missing="${missing}${missing:+, }${tool}"
  done
  if [ -z "${missing}" ]; then
    labels+=("${label}")
  elif [ "${label}" = minimpi ]; then
    fail "minimpi: no installation (${missing} not found)"
  else
    skipped[${label}]="not installed (${missing} not found)"
    note "${lib_name[${label}]}: skipped, ${skipped[${label}]}"
  fi
done
[ "${labels[0]:-}" = minimpi ] || { note "nothing to compare without minimpi"; exit 1; }

# --- building ------------------------------------------------------------------
# unpack_osu, build_osu, build_thread_rate, build_core_to_core, launch and
# record: apps/bench/osu_setup.sh.
unpack_osu

for label in "${labels[@]}"; do
  build_osu "${label}"
  if has thread_rate; then build_thread_rate "${label}"; fi
done

# The machine's state, measured at the start and end of every round.
build_core_to_core

# --- running -------------------------------------------------------------------
cores="$(nproc)"
as_root=()
[ "$(id -u)" != 0 ] || as_root=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)

declare -A osc=()        # one-sided benchmark -> the osc Open MPI runs it with
declare -A osc_failed=()  # one-sided benchmark -> the osc components that failed
declare -A osc_why=()    # one-sided benchmark -> the default's failure, one line
declare -A no_finalize=()  # label -> 1 when its launcher failed an osu_latency_mt that printed

# run_one ROUND LABEL BENCH: LABEL's run of BENCH in ROUND, with Open MPI's
# osc fallback for one-sided benchmarks; the figures go to figures.tsv.
# shellcheck disable=SC2317  # called through run_round
run_one() {
  local r="$1" label="$2" b="$3" o
  local out="${raw_dir}/round${r}/${label}.${b}"
  [ -n "${built["${label} ${b}"]:-}" ] || return 0
  if [ "${label}" = openmpi ] && [ "${bench_dir[${b}]:-}" = c/mpi/one-sided ] &&
      [ -z "${OMPI_MCA_osc+set}" ]; then
    local -a candidates=(default ucx pt2pt)
    [ -z "${osc[${b}]:-}" ] || candidates=("${osc[${b}]}")
    for o in "${candidates[@]}"; do
      if [ "${o}" = default ]; then
        launch openmpi "${b}" "${out}" "${as_root[@]}" &&
          { osc[${b}]=default; record "${r}" "${label}" "${b}"; return; }
        osc_why[${b}]="$(grep -m1 -E 'Signal: |exited on signal|MPI_ABORT|error' \
          "${out}.err" | sed 's/^\[[^]]*\] *//')"
      else
        launch openmpi "${b}" "${out}" "${as_root[@]}" "OMPI_MCA_osc=${o}" &&
          { osc[${b}]="${o}"; record "${r}" "${label}" "${b}"; return; }
      fi
      cp "${out}.err" "${out}.osc-${o}.err"
      case " ${osc_failed[${b}]:-} " in *" ${o} "*) ;; *) osc_failed[${b}]="${osc_failed[${b}]:-}${osc_failed[${b}]:+ }${o}" ;; esac
      note "round ${r}: Open MPI's ${b} failed with osc ${o}"
    done
  else
    local -a env_vars=()
    [ "${label}" != openmpi ] || env_vars=("${as_root[@]}")
    launch "${label}" "${b}" "${out}" "${env_vars[@]}" &&
      { record "${r}" "${label}" "${b}"; return; }
  fi
  # Kept for a look (with --raw), out of the way of the tables.
  mv -f "${out}.txt" "${out}.failed.txt" 2>/dev/null
  # A peer that runs out of time is a measurement (threads that spin, more
  # of them than cores: MPICH's and Open MPI's osu_latency_mt can take
  # milliseconds an iteration here): listed, its figure
  # n/a, that round compared with the other peer; not a failure of the
  # command. minimpi running out of time is one, and so is any in --quick,
  # whose runs are a few iterations long.
  if [ "${launch_timed_out}" = 1 ] && [ "${label}" != minimpi ] && ((!quick)); then
    timeouts+=("round ${r}: ${lib_name[${label}]}'s ${b} ran past --timeout ${timeout_s} s (round${r}/${label}.${b}.err)")
    note "${timeouts[-1]}"
    return
  fi
  tail -n 5 "${out}.err" >&2
  fail "round ${r}: ${lib_name[${label}]}'s ${b} failed, exit ${launch_rc}$([ "${launch_timed_out}" = 1 ] && echo ", past --timeout ${timeout_s} s") (round${r}/${label}.${b}.err, .failed.txt)"
}


# --- the tables ----------------------------------------------------------------
# tables MODE [ROUND]: reads figures.tsv. MODE round: ROUND's table, a row
# per benchmark and size with each library's figure and minimpi / that
# round's best peer. MODE summary: each library's median over the rounds,
# the median and range of the per-round ratios, and the targets.
tables() {
  awk -F'\t' -v mode="$1" -v round="${2:-0}" -v benches="${benches}" \
      -v sizes="${sizes}" -v dec="${precision:-2}" -v rounds="${rounds}" \
      -v skip_mpich="${skipped[mpich]:+skipped}" -v skip_openmpi="${skipped[openmpi]:+skipped}" '
    function sort(list, a,    n, i, j, t) {
      n = split(list, a, " ")
      for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
      return n
    }
    function median(list,    a, n) {
      n = sort(list, a)
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    function human(b) {
      if (b >= 1048576 && b % 1048576 == 0) return (b / 1048576) " MiB"
      if (b >= 1024 && b % 1024 == 0) return (b / 1024) " KiB"
      return b " B"
    }
    function unit(k) { return k == "lat" ? "us" : (k == "rate" ? "M msgs/s" : "MB/s") }
    # Rates print in millions of messages a second, 4 significant digits
    # (a 1 MiB rate is a few thousandths); OSU figures as OSU prints them.
    function show(x, k) { return k == "rate" ? sprintf("%.4g", x / 1e6) : sprintf("%." dec "f", x) }
    function better(k) { return k == "lat" ? "lower" : "higher" }
    # Issue 41 targets on the median ratio, "" where none applies.
    function target(b, s) {
      if (b == "osu_mbw_mr" && s == 8) return ">= 1.2"
      if (b == "thread_rate" && s == 8) return ">= 1.0"
      if (b == "osu_latency" && s == 8) return "<= 1.0"
      return ""
    }
    function missing(lib) {
      if (lib == "mpich" && skip_mpich != "") return "skipped"
      if (lib == "openmpi" && skip_openmpi != "") return "skipped"
      return "n/a"
    }
    # best(R, B, S): the better peer figure of round R, its library in
    # best_lib; "" when no peer has one.
    function best(r, b, s,    k, o) {
      k = kind[b]; best_lib = ""
      if ((r, b, s, "mpich") in v) best_lib = "mpich"
      if ((r, b, s, "openmpi") in v) {
        o = v[r, b, s, "openmpi"]
        if (best_lib == "" || (k == "lat" ? o + 0 < v[r, b, s, best_lib] + 0 : o + 0 > v[r, b, s, best_lib] + 0)) best_lib = "openmpi"
      }
      return best_lib == "" ? "" : v[r, b, s, best_lib]
    }
    function ratio(r, b, s,    p) {
      p = best(r, b, s)
      if (p == "" || p + 0 <= 0 || !((r, b, s, "minimpi") in v)) return ""
      return v[r, b, s, "minimpi"] / p
    }
    {
      v[$1, $2, $3, $4] = $5; kind[$2] = $6; seen[$1] = 1
      vals[$2, $3, $4] = vals[$2, $3, $4] " " $5
    }
    END {
      nb = split(benches, B, " ")
      split("minimpi mpich openmpi", L, " ")
      if (mode == "round") {
        print "| benchmark | size | better | minimpi | MPICH | Open MPI | best peer | minimpi / best peer |"
        print "|---|---:|---|---:|---:|---:|---|---:|"
      } else {
        print "| benchmark | size | better | minimpi | MPICH | Open MPI | ratio, median of rounds | range | rounds | issue 41 target | |"
        print "|---|---:|---|---:|---:|---:|---:|---:|---:|---|---|"
      }
      for (i = 1; i <= nb; i++) {
        # thread_rate measures 8 B only, whatever --sizes says.
        ns = split(B[i] == "thread_rate" ? "8" : sizes, S, " ")
        for (j = 1; j <= ns; j++) {
          b = B[i]; s = S[j]
          k = (b in kind) ? kind[b] : (b == "thread_rate" || b == "osu_mbw_mr" ? "rate" : (b ~ /latency/ ? "lat" : "bw"))
          name = b " (" unit(k) ")"
          if (mode == "round") {
            row = sprintf("| %s | %s | %s", name, human(s), better(k))
            for (l = 1; l <= 3; l++)
              row = row " | " (((round, b, s, L[l]) in v) ? show(v[round, b, s, L[l]], k) : missing(L[l]))
            q = ratio(round, b, s)
            printf "%s | %s | %s |\n", row, (best_lib == "mpich" ? "MPICH" : (best_lib == "openmpi" ? "Open MPI" : "-")),
              (q == "" ? "n/a" : sprintf("%.2f", q))
            continue
          }
          row = sprintf("| %s | %s | %s", name, human(s), better(k))
          for (l = 1; l <= 3; l++)
            row = row " | " (((b, s, L[l]) in vals) ? show(median(vals[b, s, L[l]]), k) : missing(L[l]))
          list = ""; nr = 0
          for (r in seen) { q = ratio(r, b, s); if (q != "") { list = list " " q; nr++ } }
          t = target(b, s); verdict = "-"
          if (nr) {
            m = median(list); sort(list, a)
            if (t != "") {
              ok = (substr(t, 1, 2) == ">=") ? m >= substr(t, 4) + 0 : m <= substr(t, 4) + 0
              verdict = (ok ? "met" : "missed") (rounds < 7 ? " (" rounds " round" (rounds > 1 ? "s" : "") ", not a figure)" : "")
            }
            printf "%s | %.2f | %.2f-%.2f | %d | %s | %s |\n", row, m, a[1], a[nr], nr, (t == "" ? "-" : t), verdict
          } else {
            printf "%s | n/a | n/a | 0 | %s | %s |\n", row, (t == "" ? "-" : t), (t == "" ? "-" : "n/a")
          }
        }
      }
    }
  ' "${raw_dir}/figures.tsv"
}

# --- the rounds ----------------------------------------------------------------
# run_round ROUND: every benchmark, each library in the round's order.
# shellcheck disable=SC2317  # called through timed_round
run_round() {
  local b label
  for b in "${bench_list[@]}"; do
    for label in "${order[@]}"; do run_one "$1" "${label}" "${b}"; done
  done
}

: >"${raw_dir}/rounds.tsv"
: >"${raw_dir}/figures.tsv"
echo "# OSU Micro-Benchmarks 7.2 and thread_rate: minimpi against MPICH and Open MPI, $(date -u '+%Y-%m-%d %H:%M UTC'), ${cores} cores"
echo
for label in mpich openmpi; do
  [ -z "${skipped[${label}]:-}" ] || echo "${lib_name[${label}]}: skipped, ${skipped[${label}]}."
done
[ "${#skipped[@]}" = 0 ] || echo
for ((r = 1; r <= rounds; r++)); do
  mkdir -p "${raw_dir}/round${r}"
  # Rotate the order so that no library always runs first (or after the same
  # neighbour).
  shift_by=$(((r - 1) % ${#labels[@]}))
  order=("${labels[@]:shift_by}" "${labels[@]:0:shift_by}")
  note "round ${r} of ${rounds} (${order[*]})"
  timed_round "${r}" "${order[*]}" run_round "${r}"
  names=""
  for label in "${order[@]}"; do names="${names}${names:+, }${lib_name[${label}]}"; done
  echo "## Round ${r} of ${rounds}: core-to-core round trip ${c2c_start} ns at the start, ${c2c_end} ns at the end; order ${names}; ${round_seconds} s"
  echo
  tables round "${r}" || { note "the round table's awk failed"; status=1; }
  echo
done

# --- the summary ---------------------------------------------------------------
# OSU's window and synchronization for one-sided benchmarks, as it printed
# them, grouped by setting: "MPI_Win_allocate + MPI_Win_flush (osu_put_bw)".
one_sided="$(for b in "${osu_benches[@]}"; do
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
for b in "${osu_benches[@]}"; do
  [ -n "${osc_failed[${b}]:-}" ] || continue
  osc_note="${osc_note}${osc_note:+; }${b}: Open MPI's osc ${osc_failed[${b}]// /, } failed${osc_why[${b}]:+ (${osc_why[${b}]})}, ${osc[${b}]:+figures with osc ${osc[${b}]}}${osc[${b}]:-no osc ran}"
done
if [ -n "${OMPI_MCA_osc+set}" ]; then
  osc_note="Open MPI with OMPI_MCA_osc=${OMPI_MCA_osc} (from the caller's environment)"
elif [ -z "${osc_note}" ] && [ -n "${one_sided}" ]; then
  osc_note="Open MPI with its default osc component"
fi
c2c_range="$(core_to_core_range)"

echo "## Summary"
echo
caption="${rounds} interleaved round(s), order rotated each round; ${ranks} ranks on one node"
if has thread_rate && [ "${ranks}" != 2 ]; then caption="${caption} (thread_rate: 2)"; fi
caption="${caption}, each library launched with its defaults (mpiexec -n N, no binding or other flags: Open MPI and minimpi then bind ranks that fit the cores, MPICH does not)"
if [ "${#osu_benches[@]}" -gt 0 ]; then
  caption="${caption}; OSU built with each library's own wrappers${precision:+ (CPPFLAGS=-DFLOAT_PRECISION=${precision})}, run with -m ${min_size}:${max_size}${osu_args:+ ${osu_args}}"
  has osu_latency_mt && caption="${caption} (osu_latency_mt also -t 2:2)"
fi
has thread_rate && caption="${caption}; thread_rate built with each library's mpicc${thread_rate_args[*]:+, run with ${thread_rate_args[*]}}"
if [ "${#no_finalize[@]}" -gt 0 ]; then
  flagged=""
  for label in "${labels[@]}"; do
    [ -z "${no_finalize[${label}]:-}" ] || flagged="${flagged}${flagged:+, }${lib_name[${label}]}"
  done
  caption="${caption}; OSU 7.2's osu_latency_mt ends without MPI_Finalize, and the launcher of ${flagged} failed such a job after it had printed every figure: those runs count as run"
fi
[ -z "${one_sided}" ] || caption="${caption}; OSU's one-sided window and synchronization: ${one_sided}"
[ -z "${osc_note}" ] || caption="${caption}; ${osc_note}"
for label in mpich openmpi; do
  [ -z "${skipped[${label}]:-}" ] || caption="${caption}; ${lib_name[${label}]} skipped: ${skipped[${label}]}"
done
[ "${rounds}" -ge 7 ] ||
  caption="${caption}; fewer than 7 rounds: a check of the script, not a figure"
caption="${caption}; core-to-core round trip ${c2c_range} across the rounds. Library columns: the median of each library's figures over the rounds. Ratio: in each round, minimpi's figure / that round's best peer's (the lower latency, the higher bandwidth or rate); its median over the rounds, and its range. Latency rows (better: lower) want the ratio at or below 1; bandwidth and rate rows (better: higher) at or above 1. A target is met when the median meets it."
echo "${caption}"
echo
tables summary || { note "the summary's awk failed"; status=1; }

print_list "Peer runs past the time limit (figures n/a; those rounds compare with the other peer):" \
  "${timeouts[@]}"
if ! print_list "Failures (figures of those runs read n/a):" "${failures[@]}" && ((quick)); then
  echo
  echo "Quick check passed: ${#labels[@]} librar$([ "${#labels[@]}" = 1 ] && echo y || echo ies) (${labels[*]}) built and ran ${#bench_list[@]} benchmark(s) each, and every figure was read back; a quick run's figures are not measurements."
fi
exit "${status}"
