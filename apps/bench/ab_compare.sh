#!/usr/bin/env bash
# Before and after: two minimpi installations (say main before a refactoring
# and the refactored tree, each installed with `bazel run //:install --
# PREFIX`) measured side by side, in interleaved rounds, to show that a
# change slowed no path (issue 45). Nothing but minimpi runs here.
#
# What each round measures, --repeat times (default 3) with each
# installation, the runs of a benchmark alternating between the two (odd
# rounds before first, even rounds after first); a round's figure of a side
# is the best of its runs (a descheduled run is only ever slower):
#   osu_latency 8 B     OSU 7.2, half round trip (us, lower is better)
#   osu_mbw_mr 8 B      OSU 7.2, message rate of one pair (M msgs/s, higher)
#   thread_rate 8 B     apps/bench/thread_rate.c: a worker pthread's rate
#                       (M msgs/s, higher)
#   collectives         apps/bench/collectives.c (what coll_compare.sh runs)
#                       at 2 and 4 ranks: barrier, and bcast, allreduce,
#                       allgather, alltoall at 8 B and 64 KiB (us per call,
#                       best of its 3 trials, lower is better)
#   pready_cost         apps/bench/pready_cost.c, 200 rounds: ns per
#                       MPI_Pready that posts nothing / posts a write, from 1
#                       and 2 threads, and an 8-byte MPI_Isend + MPI_Wait
#                       (ns, lower is better)
#   partitioned         apps/bench/partitioned.c --mode overhead (as
#                       part_compare.sh's small-partition table), 50 rounds:
#                       round time minus the 1 ms compute, 32 and 128
#                       partitions of 8 B and 4 KiB, the default aggregator
#                       ("part") and none (us, lower is better)
# A run whose threads outnumber the cores (collectives at 4 ranks,
# partitioned's 16 sender threads) swings 2-3x with how they share the
# cores: it is 3 runs (1 with --quick), the best kept.
# OSU and the apps/bench programs are built with each installation's own
# mpicc (the apps/bench sources of this tree for both, so both run the same
# benchmark code); every run is `mpiexec -n N ./prog` with no other flags.
#
# Why rounds: on these 2-vCPU machines the core-to-core cache-line round trip
# (../shared/bench/core_to_core.c, printed beside each round) moves between
# about 150 and 900 ns within minutes, and every small-message figure with
# it. So every comparison is made inside one round: the ratio after / before
# of that round's two runs. The summary gives, per figure, the median of the
# before figures and of the after figures, the median of the per-round
# ratios with their range and how many lie above 1, and a verdict: "same"
# when the median is within the noise band; else "slower" or "faster" (for
# a latency a ratio above 1 is slower, for a rate below 1 is) when at least
# 80 % of the rounds lie on the median's side of 1 (6 of 7), and
# "unsettled" when they do not (rerun with more rounds, or on a quieter
# host). The band: +-10 %, and +-25 % for the partitioned overhead (its
# rounds sleep through a millisecond of compute on 16 threads and wake as
# the scheduler lets them) and pready_cost's 8-byte MPI_Isend + MPI_Wait
# (two states, about 100 and 300 ns, with the core-to-core round trip);
# MPI_Pready's own cost and osu_latency measure those paths in the narrow
# band. Null runs (the same installation as before and after, 7 rounds)
# while others compiled on this host: the medians of osu_latency,
# osu_mbw_mr and the collectives stayed within 0.95-1.07, thread_rate's and
# the MPI_Pready figures' within 0.89-1.28 and the partitioned overhead's
# within 0.82-1.64 over four runs as the script grew; with this version's
# tries and rule every one of the 34 figures read "same" (7 m 52 s). A busy
# host makes unsettled verdicts and the odd false one: run it when the host
# is quiet, and rerun a surprising row. --band and --wide-band change the
# two bands.
#
#   usage: apps/bench/ab_compare.sh --before PREFIX --after PREFIX
#                                   [--rounds N] [--repeat K] [--quick]
#                                   [--only LIST]
#                                   [--band F] [--wide-band F]
#                                   [--osu TARBALL] [--timeout S] [--raw DIR]
#     --before, --after  the two minimpi installations (each has bin/mpicc,
#                bin/mpicxx and bin/mpiexec); the same one twice is a null
#                run, whose ratios show the noise
#     --rounds   interleaved rounds (default 7; fewer make a check, not a
#                figure, and the summary says so)
#     --repeat   runs of each benchmark per side and round, best kept
#                (default 3)
#     --quick    shorter runs (thread_rate 0.1 s, pready_cost 10 rounds,
#                partitioned 10 rounds, oversubscribed runs once), 1 round
#                and 1 run a side unless --rounds or --repeat says
#     --only     groups to run, of "osu coll pready part" (default all four)
#     --band     half-width of the "same" band, as a fraction (default 0.10)
#     --wide-band  the same for the partitioned overhead and pready_cost's
#                MPI_Isend + MPI_Wait (default 0.25)
#     --osu      OSU 7.2's tarball (default: bench/osu-micro-benchmarks-7.2
#                .tar.gz in the shared folder beside the repository)
#     --timeout  limit for one run in seconds (default 120)
#     --raw      keep the raw output in DIR: roundN.K/LABEL.BENCH.txt and .err
#                (round N, run K), the build logs, figures.tsv (round.run,
#                figure, size, label, value, kind) and rounds.tsv (round, c2c
#                start/end, seconds, order)
# Time on 2 cores: the builds under a minute (OSU configured twice), then
# about a minute a round; 7 rounds in about 8 minutes while others compiled
# on the host, well under 15; --quick --rounds 2: about a minute.
# Exits non-zero when a build or a run failed (its figure then reads n/a) or a
# run printed fewer figures than asked for; the failures are listed under the
# summary. A "slower" verdict is a finding, not a failure.
set -uo pipefail

repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)"
shared_bench="$(cd -- "${repo}/.." && pwd -P)/shared/bench"

# --- options -------------------------------------------------------------------
osu_tarball="${shared_bench}/osu-micro-benchmarks-7.2.tar.gz"
before_prefix=""
after_prefix=""
rounds=""
repeat=""
quick=0
groups="osu coll pready part"
band=0.10
wide_band=0.25
timeout_s=120
raw_dir=""
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
# The options that take a value, and the variable each one sets.
declare -A option_variable=(
  [--before]=before_prefix [--after]=after_prefix [--rounds]=rounds
  [--repeat]=repeat [--only]=groups [--band]=band [--wide-band]=wide_band
  [--osu]=osu_tarball [--timeout]=timeout_s [--raw]=raw_dir
)
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *)
      if [ -z "${option_variable[$1]:-}" ] || [ $# -lt 2 ]; then
        echo "ab_compare: unknown option, or no value after it: $1 (see --help)" >&2
        exit 2
      fi
      printf -v "${option_variable[$1]}" '%s' "$2"
      shift 2 ;;
  esac
done
note() { echo "ab_compare: $*" >&2; }
# Run lengths: --quick shortens the programs whose length is a setting.
thread_rate_args=()
pready_rounds=200
part_rounds=50
oversubscribed_tries=3
if ((quick)); then
  : "${rounds:=1}" "${repeat:=1}"
  thread_rate_args=(--time 0.1 --warmup 0.05)
  pready_rounds=10
  part_rounds=10
  oversubscribed_tries=1
fi
: "${rounds:=7}" "${repeat:=3}"
for n in "${rounds}" "${repeat}" "${timeout_s}"; do
  case "${n}" in '' | *[!0-9]*) note "not a number: '${n}'"; exit 2 ;; esac
done
for f in "${band}" "${wide_band}"; do
  case "${f}" in 0.[0-9]*) ;; *) note "a band is a fraction below 1, e.g. 0.10: '${f}'"; exit 2 ;; esac
done
if [ "${rounds}" -lt 1 ] || [ "${repeat}" -lt 1 ]; then note "need a round and a run"; exit 2; fi
if [ -z "${before_prefix}" ] || [ -z "${after_prefix}" ]; then
  note "need --before PREFIX and --after PREFIX (see --help)"
  exit 2
fi
for g in ${groups}; do
  case "${g}" in osu | coll | pready | part) ;; *) note "unknown group '${g}' (osu coll pready part)"; exit 2 ;; esac
done
# wants GROUP: GROUP is one of --only's.
wants() { case " ${groups} " in *" $1 "*) return 0 ;; esac; return 1; }
[ -f "${osu_tarball}" ] || ! wants osu || { note "no OSU tarball at ${osu_tarball} (--osu)"; exit 2; }

# What osu_setup.sh's functions read: OSU at 8 B, 2 ranks, its default
# iterations, no extra options.
# shellcheck disable=SC2034  # read by osu_setup.sh
{
  size_list=(8)
  min_size=8
  max_size=8
  ranks=2
  extra_args=()
  precision=""
  cores="$(nproc)"
}
bench_list=()
wants osu && bench_list=(osu_latency osu_mbw_mr thread_rate)
# What the collectives table keeps of collectives.c's output, and the
# partitioned points.
coll_ranks=(2 4)
coll_names="barrier bcast allreduce allgather alltoall"
coll_sizes="8 65536"
part_partitions="32,128"
part_bytes="8,4096"
part_variants="part,none"

prefix=""  # bench_setup.sh's install_minimpi is not used: both are given
# shellcheck source=apps/bench/bench_setup.sh
source "${repo}/apps/bench/bench_setup.sh"
# shellcheck source=apps/bench/osu_setup.sh
source "${repo}/apps/bench/osu_setup.sh"

status=0
failures=()  # one line per failed build or run, listed under the summary
fail() { failures+=("$*"); note "$*"; status=1; }

labels=(before after)
declare -A lib_name=([before]=before [after]=after)
declare -A prefix_of=([before]="${before_prefix}" [after]="${after_prefix}")
declare -A cc=() cxx=() mpiexec=()
declare -A built=()         # "label bench" -> 1 once that program is built
# shellcheck disable=SC2034  # osu_setup.sh's launch fills it (osu_latency_mt only)
declare -A no_finalize=()
for label in "${labels[@]}"; do
  p="${prefix_of[${label}]}"
  cc[${label}]="${p}/bin/mpicc"
  cxx[${label}]="${p}/bin/mpicxx"
  mpiexec[${label}]="${p}/bin/mpiexec"
  for tool in "${cc[${label}]}" "${cxx[${label}]}" "${mpiexec[${label}]}"; do
    [ -x "${tool}" ] || { note "--${label} ${p}: no ${tool##*/} in ${p}/bin"; exit 2; }
  done
done

# --- building ------------------------------------------------------------------
# unpack_osu, build_osu, build_thread_rate, build_program, build_core_to_core:
# apps/bench/osu_setup.sh.
programs=()
wants coll && programs+=(collectives)
wants pready && programs+=(pready_cost)
wants part && programs+=(partitioned)
[ "${#bench_list[@]}" = 0 ] || unpack_osu
for label in "${labels[@]}"; do
  if wants osu; then
    build_osu "${label}"
    build_thread_rate "${label}"
  fi
  for name in "${programs[@]}"; do build_program "${label}" "${name}"; done
done
build_core_to_core

# --- running -------------------------------------------------------------------
# A run is named ROUND.K (round, run): its raw output goes to roundROUND.K/,
# and figures.tsv's first column is ROUND.K, which the tables read as ROUND.

# run_osu ROUND.K LABEL BENCH: one OSU benchmark or thread_rate through
# osu_setup.sh's launch and record (figures.tsv).
# shellcheck disable=SC2317  # called through run_label
run_osu() {
  local r="$1" label="$2" b="$3" out="${raw_dir}/round${1}/${2}.${3}"
  [ -n "${built["${label} ${b}"]:-}" ] || return 0
  launch "${label}" "${b}" "${out}" && { record "${r}" "${label}" "${b}"; return; }
  tail -n 5 "${out}.err" >&2
  fail "round ${r}: ${label}'s ${b} failed, exit ${launch_rc}$([ "${launch_timed_out}" = 1 ] && echo ", past --timeout ${timeout_s} s") (round${r}/${label}.${b}.err)"
}

# run_program ROUND.K LABEL NAME RANKS TRY EXPECTED PARSER [ARGS...]: runs
# LABEL's build of apps/bench/NAME.c with RANKS ranks and ARGS (TRY, when not
# empty, numbers runs repeated within ROUND.K), and appends to figures.tsv
# what the awk program PARSER prints of its output, lines of "figure, size,
# value, kind" (tab separated; kind lat or ns, lower is better, or rate,
# higher is better). Fails when the run does or PARSER found fewer than
# EXPECTED figures.
# shellcheck disable=SC2317  # called through run_label
run_program() {
  local r="$1" label="$2" name="$3" n="$4" try="$5" expected="$6" parser="$7"
  shift 7
  local run="${label}.${name}_${n}${try:+.${try}}" rc=0 got
  local out="${raw_dir}/round${r}/${run}"
  [ -n "${built["${label} ${name}"]:-}" ] || return 0
  # MPIEXEC_TIMEOUT ends a job that outlives it; timeout(1) is the backstop.
  env MPIEXEC_TIMEOUT="${timeout_s}" timeout --kill-after=20 "$((timeout_s + 30))" \
    "${mpiexec[${label}]}" -n "${n}" "${work}/build-${label}/${name}" "$@" \
    >"${out}.txt" 2>"${out}.err" </dev/null || rc=$?
  if [ "${rc}" != 0 ]; then
    tail -n 5 "${out}.err" >&2
    fail "round ${r}: ${label}'s ${name} at ${n} ranks failed, exit ${rc} (round${r}/${run}.err)"
    return 1
  fi
  got="$(awk -v n="${n}" "${parser}" "${out}.txt" |
    awk -F'\t' -v r="${r}" -v label="${label}" 'NF == 4 { print r "\t" $1 "\t" $2 "\t" label "\t" $3 "\t" $4 }')"
  [ -z "${got}" ] || echo "${got}" >>"${raw_dir}/figures.tsv"
  if [ "$(grep -c . <<<"${got}")" -lt "${expected}" ]; then
    fail "round ${r}: ${label}'s ${name} at ${n} ranks printed $(grep -c . <<<"${got}") of ${expected} figures (round${r}/${run}.txt)"
    return 1
  fi
}

# The parsers: each program's lines to "figure, size, value, kind".
# shellcheck disable=SC2016  # awk programs: their $ are awk's
coll_parser='
  BEGIN { split("'"${coll_names}"'", c, " "); for (i in c) keep[c[i]] = 1
          split("'"${coll_sizes}"'", s, " "); for (i in s) size[s[i]] = 1 }
  !/^#/ && NF == 3 && ($1 in keep) && ($2 in size || $1 == "barrier") {
    printf "%s, %d ranks\t%s\t%s\tlat\n", $1, n, $2, $3 }'
# shellcheck disable=SC2016
pready_parser='
  { delete f; for (i = 1; i <= NF; i++) { e = index($i, "="); if (e) f[substr($i, 1, e - 1)] = substr($i, e + 1) } }
  ("what" in f) && ("ns_per_call" in f) {
    printf "%s, %s thread%s\t8\t%s\tns\n", f["what"], f["threads"], (f["threads"] > 1 ? "s" : ""), f["ns_per_call"] }'
# shellcheck disable=SC2016
part_parser='
  { delete f; for (i = 1; i <= NF; i++) { e = index($i, "="); if (e) f[substr($i, 1, e - 1)] = substr($i, e + 1) } }
  f["mode"] == "overhead" && ("value" in f) {
    printf "partitioned overhead, aggregator %s, %s partitions\t%s\t%s\tlat\n", f["variant"], f["partitions"], f["part_bytes"], f["value"] }'
# How many figures each run prints: barrier + the others at each size; the
# pready_cost lines; each partitioned point.
read -r -a coll_name_list <<<"${coll_names}"
read -r -a coll_size_list <<<"${coll_sizes}"
coll_want=$((1 + (${#coll_name_list[@]} - 1) * ${#coll_size_list[@]}))
pready_want=5
part_want=$(($(tr ',' '\n' <<<"${part_partitions}" | grep -c .) * $(tr ',' '\n' <<<"${part_bytes}" | grep -c .) * $(tr ',' '\n' <<<"${part_variants}" | grep -c .)))

# run_tried THREADS ROUND.K LABEL NAME RANKS EXPECTED PARSER [ARGS...]:
# run_program once, or, when the run's THREADS (ranks x threads a rank) are
# more than the cores, oversubscribed_tries times, numbered: such a run's
# times swing 2-3x with how its threads share the cores, and the tables keep
# each side's best.
# shellcheck disable=SC2317  # called through run_label
run_tried() {
  local threads="$1" t
  shift
  if [ "${threads}" -le "${cores}" ] || [ "${oversubscribed_tries}" = 1 ]; then
    run_program "$1" "$2" "$3" "$4" "" "${@:5}"
    return
  fi
  for ((t = 1; t <= oversubscribed_tries; t++)); do run_program "$1" "$2" "$3" "$4" "${t}" "${@:5}"; done
}

# run_label ROUND.K LABEL GROUP: LABEL's runs of GROUP's benchmarks.
# shellcheck disable=SC2317  # called through run_round
run_label() {
  local r="$1" label="$2" g="$3" b n
  case "${g}" in
    osu) for b in "${bench_list[@]}"; do run_osu "${r}" "${label}" "${b}"; done ;;
    coll)
      for n in "${coll_ranks[@]}"; do
        run_tried "${n}" "${r}" "${label}" collectives "${n}" "${coll_want}" "${coll_parser}" 65536
      done ;;
    pready) run_program "${r}" "${label}" pready_cost 2 "" "${pready_want}" "${pready_parser}" "${pready_rounds}" ;;
    # partitioned.c's sender runs min(partitions, 16) threads: 16 here.
    part)
      run_tried 17 "${r}" "${label}" partitioned 2 "${part_want}" "${part_parser}" \
        --mode overhead --partitions "${part_partitions}" --part-bytes "${part_bytes}" \
        --variant "${part_variants}" --rounds "${part_rounds}" --no-baseline ;;
  esac
}

# --- the tables ----------------------------------------------------------------
# tables MODE [ROUND]: reads figures.tsv, keeping each side's best run of a
# round. MODE round: ROUND's table, a row per figure with before, after and
# after / before. MODE summary: each side's median over the rounds, the
# median and range of the per-round ratios, and the verdict on that median.
tables() {
  awk -F'\t' -v mode="$1" -v round="${2:-0}" -v rounds="${rounds}" \
      -v band="${band}" -v wide_band="${wide_band}" '
    # Ascending insertion sort of a space-separated list into a[1..n].
    function sorted(list, a,    n, i, j, t) {
      n = split(list, a, " ")
      for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
      return n
    }
    function median(list,    a, n) { n = sorted(list, a); return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    function human(b) {
      if (b >= 1024 && b % 1024 == 0) return (b / 1024) " KiB"
      return b " B"
    }
    function unit(k) { return k == "rate" ? "M msgs/s" : (k == "ns" ? "ns" : "us") }
    function show(x, k) { return k == "rate" ? sprintf("%.4g", x / 1e6) : sprintf("%.3g", x) }
    # The noise band of figure F (see the header).
    function width(f) { return f ~ /^(partitioned overhead|isend_wait)/ ? wide_band : band }
    # after / before of round R; "" when either is missing.
    function ratio(r, f,    b) {
      if (!((r, f, "before") in v) || !((r, f, "after") in v) || v[r, f, "before"] + 0 <= 0) return ""
      return v[r, f, "after"] / v[r, f, "before"]
    }
    # The verdict on median ratio Q of figure kind K in band W, with UP of the
    # NR rounds above 1 and DOWN below: a median outside the band counts when
    # at least 80 % of the rounds lie on its side of 1, else it is unsettled
    # (more rounds, or a quieter host, will tell).
    function verdict(q, k, w, up, down, nr) {
      if (q >= 1 - w && q <= 1 + w) return "same"
      if ((q > 1 ? up : down) < 0.8 * nr) return "unsettled"
      return (k == "rate") == (q > 1) ? "faster" : "slower"
    }
    {
      f = $2 SUBSEP $3; r = int($1)
      if (!(f in kind)) { order[++nf] = f; kind[f] = $6; name[f] = $2; size[f] = $3 }
      # The best run: the higher rate, the lower time.
      if (!((r, f, $4) in v) || ($6 == "rate" ? $5 + 0 > v[r, f, $4] + 0 : $5 + 0 < v[r, f, $4] + 0)) v[r, f, $4] = $5
      seen[r] = 1
    }
    END {
      for (k in v) { split(k, key, SUBSEP); vals[key[2], key[3], key[4]] = vals[key[2], key[3], key[4]] " " v[k] }
      # The columns: the figure, its size and good side, then numbers.
      columns = mode == "round" ? "before|after|after / before" : "before, median|after, median|after / before, median of rounds|range|rounds above 1|band|verdict"
      n = split("figure|size|better|" columns, column, "|")
      for (i = 1; i <= n; i++) { line = line "| " column[i] " "; rule = rule (i == 1 || i == 3 || column[i] == "verdict" ? "|---" : "|---:") }
      print line "|"; print rule "|"
      for (i = 1; i <= nf; i++) {
        f = order[i]; k = kind[f]
        row = sprintf("| %s (%s) | %s | %s", name[f], unit(k), name[f] ~ /^barrier/ ? "-" : human(size[f]), k == "rate" ? "higher" : "lower")
        if (mode == "round") {
          q = ratio(round, f)
          printf "%s | %s | %s | %s |\n", row,
            ((round, f, "before") in v) ? show(v[round, f, "before"], k) : "n/a",
            ((round, f, "after") in v) ? show(v[round, f, "after"], k) : "n/a",
            q == "" ? "n/a" : sprintf("%.3f", q)
          continue
        }
        list = ""; nr = 0; up = 0; down = 0
        for (r in seen) { q = ratio(r, f); if (q != "") { list = list " " q; nr++; up += q > 1; down += q < 1 } }
        row = sprintf("%s | %s | %s", row,
          ((f, "before") in vals) ? show(median(vals[f, "before"]), k) : "n/a",
          ((f, "after") in vals) ? show(median(vals[f, "after"]), k) : "n/a")
        w = width(name[f])
        if (!nr) { printf "%s | n/a | n/a | 0 of 0 | +-%d %% | n/a |\n", row, w * 100 + 0.5; continue }
        m = median(list); sorted(list, a)
        printf "%s | %.3f | %.3f-%.3f | %d of %d | +-%d %% | %s%s |\n", row, m, a[1], a[nr], up, nr, w * 100 + 0.5,
          verdict(m, k, w, up, down, nr), rounds < 7 ? " (" rounds " round" (rounds > 1 ? "s" : "") ", not a figure)" : ""
      }
    }
  ' "${raw_dir}/figures.tsv"
}

# --- the rounds ----------------------------------------------------------------
: >"${raw_dir}/rounds.tsv"
: >"${raw_dir}/figures.tsv"
# version LABEL: the installation's library line and its libmpi's checksum, so
# a reader sees which builds were compared (the same checksum: a null run).
version() {
  local p="${prefix_of[$1]}" sum
  sum="$(sha256sum "${p}/lib/libmpi.so" 2>/dev/null | cut -c1-12)"
  echo "${p} ($("${p}/bin/minimpi_info" 2>/dev/null | head -n 1 | cut -d' ' -f1-2), libmpi.so sha256 ${sum:-n/a})"
}
echo "# minimpi before and after, $(date -u '+%Y-%m-%d %H:%M UTC'), ${cores} cores"
echo
echo "- before: $(version before)"
echo "- after: $(version after)"
echo
# run_round ROUND: each group's benchmarks, --repeat times a side, the sides
# alternating in the round's order.
# shellcheck disable=SC2317  # called through timed_round
run_round() {
  local g k label
  for g in ${groups}; do
    for ((k = 1; k <= repeat; k++)); do
      mkdir -p "${raw_dir}/round${1}.${k}"
      for label in "${order[@]}"; do run_label "${1}.${k}" "${label}" "${g}"; done
    done
  done
}

for ((r = 1; r <= rounds; r++)); do
  # Alternate which side runs first, so neither always runs on a warmer or
  # colder machine.
  if ((r % 2)); then order=(before after); else order=(after before); fi
  note "round ${r} of ${rounds} (${order[*]})"
  timed_round "${r}" "${order[*]}" run_round "${r}"
  echo "## Round ${r} of ${rounds}: core-to-core round trip ${c2c_start} ns at the start, ${c2c_end} ns at the end; ${order[0]} first; ${round_seconds} s"
  echo
  tables round "${r}" || { note "the round table's awk failed"; status=1; }
  echo
done

# --- the summary ---------------------------------------------------------------
c2c_range="$(core_to_core_range)"
echo "## Summary"
echo
caption="${rounds} interleaved round(s), before and after alternating which runs first, ${repeat} run(s) of each benchmark a side in each round, alternating sides, the best kept; each benchmark built with each installation's mpicc and launched with mpiexec -n N, no other flags"
((quick)) && caption="${caption}; --quick: thread_rate ${thread_rate_args[*]}, pready_cost ${pready_rounds} rounds, partitioned ${part_rounds} rounds"
[ "${rounds}" -ge 7 ] || caption="${caption}; fewer than 7 rounds: a check of the script, not a figure"
caption="${caption}; core-to-core round trip ${c2c_range} across the rounds. Before and after: the median of each side's figures over the rounds. Ratio: in each round, after / before; its median over the rounds, and its range. Verdict on the median ratio: same within the band, else slower (a latency or cost above 1, a rate below 1) or faster. Collectives: best of collectives.c's 3 trials; partitioned: bytes per partition, the round time minus the 1 ms compute."
echo "${caption}"
echo
tables summary || { note "the summary's awk failed"; status=1; }
[ -s "${raw_dir}/figures.tsv" ] || fail "no run printed a figure"
print_list "Failures (figures of those runs read n/a):" "${failures[@]}"
exit "${status}"
