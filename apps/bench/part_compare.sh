#!/usr/bin/env bash
# Builds apps/bench/partitioned.c unchanged with three MPI libraries, runs
# each with 2 ranks in one go, and prints markdown tables of partitioned
# communication (MPI_Psend_init / MPI_Pready) against one persistent send per
# partition and one send of the whole buffer after the last thread:
#   minimpi   installed with `bazel run //:install` into a temporary prefix,
#             compiled with its mpicc, run with its mpiexec: every aggregator
#             (MPI_Info minimpi_part_aggr), persistent, single
#   MPICH     Debian's mpicc.mpich / mpirun.mpich (4.0.2 has the MPI-4 API):
#             partitioned (the info key is ignored), persistent, single
#   Open MPI  Debian's mpicc.openmpi / mpirun.openmpi: 4.1 has no partitioned
#             API (MPI 3.1), so only its persistent and single columns
# Ratios compare numbers from this one run only.
#
# Tables:
#   (a) perceived bandwidth (MB/s after the last thread's MPI_Pready) and
#       early-bird fraction (data at the receiver when the laggard becomes
#       ready), 8 and 16 partitions, 1 KiB .. 16 MiB
#   (b) overhead (round time minus compute) relative to the same library's
#       single send
#   (c) 32 and 128 partitions of 8 B .. 4 KiB: each aggregator vs none
#   (d) writes per round of none, timer and adaptive (from minimpi's
#       MINIMPI_PART_PROFILE files of a separate, shorter run)
#   (e) the sweep3d-like two-rank wavefront, time per sweep
#
#   usage: apps/bench/part_compare.sh [--quick] [--aggregators "none size ..."]
#                                     [--compute-us C] [--rounds R]
#                                     [--bind-to core|none] [--timeout S]
#                                     [--prefix DIR] [--raw DIR]
#     --quick        a very short run (3 rounds, few sizes): checks that it
#                    all works, measures little
#     --aggregators  minimpi aggregators to run (default: all six)
#     --compute-us   compute time per round (default 1000; the laggard gets
#                    10% more, the others up to 2% noise)
#     --rounds       measured rounds per point (default 30, quick 3)
#     --bind-to      pin each rank to a core (default core) or not (none); a
#                    rank's threads share its core
#     --timeout      limit for one benchmark run in seconds (default 900)
#     --prefix       use an existing minimpi installation instead of installing
#     --raw          keep each library's raw output (and minimpi's profiles) in DIR
#   BAZEL            the bazel command (default: bazel)
# About three minutes on 2 cores (--quick: under one). On a shared machine,
# other processes' load shows up as millisecond rounds (a rank bound to a
# core waits out a whole scheduler slice): compare only quiet runs.
# Exits non-zero when a library failed to build, run or verify its data (its
# columns read n/a).
set -uo pipefail

repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)"
source_file="${repo}/apps/bench/partitioned.c"
read -r -a bazel <<<"${BAZEL:-bazel}"

quick=0
aggregators="none size table ploggp timer adaptive"
compute_us=1000
rounds=""
bind_to=core
timeout_s=900
prefix=""
raw_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --aggregators) aggregators="$2"; shift 2 ;;
    --compute-us) compute_us="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --bind-to) bind_to="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --prefix) prefix="$2"; shift 2 ;;
    --raw) raw_dir="$2"; shift 2 ;;
    *) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
case "${bind_to}" in core | none) ;; *) echo "--bind-to core|none" >&2; exit 2 ;; esac

status=0
note() { echo "part_compare: $*" >&2; }
# shellcheck source=apps/bench/bench_setup.sh
source "${repo}/apps/bench/bench_setup.sh"

# --- what runs ---------------------------------------------------------------
common=(--compute-us "${compute_us}")
[ -n "${rounds}" ] && common+=(--rounds "${rounds}")
if [ "${quick}" = 1 ]; then
  common+=(--quick)
  main_bytes="1K,64K,1M"
  small_part_bytes="64,4096"
  sweep_bytes="64K"
  writes_rounds=3
else
  main_bytes="1K:16M"
  small_part_bytes="8,64,512,4096"
  sweep_bytes="64K,1M"
  writes_rounds=10
fi
read -r -a aggr_words <<<"${aggregators}"
aggr_list="$(IFS=,; echo "${aggr_words[*]}")"
variants_minimpi="${aggr_list},persistent,single"
variants_mpich="part,persistent,single"
variants_openmpi="persistent,single"

install_minimpi || note "minimpi install failed; its columns will read n/a"

build() {  # build LABEL COMPILER
  local label="$1" cc="$2"
  if ! command -v "${cc}" >/dev/null 2>&1; then
    note "${label}: ${cc} not found"
    return 1
  fi
  if ! "${cc}" -O2 -pthread -o "${work}/partitioned_${label}" "${source_file}" \
      >"${raw_dir}/${label}.build.log" 2>&1; then
    tail -n 20 "${raw_dir}/${label}.build.log" >&2
    note "${label}: build failed"
    return 1
  fi
}

# run LABEL NAME [VAR=VALUE...] -- ARGS...: one 2-rank run, its output in
# raw_dir/LABEL_NAME.txt (removed when the run fails, so columns read n/a).
run() {
  local label="$1" name="$2"; shift 2
  local -a env_vars=() launcher=()
  while [ "$1" != "--" ]; do env_vars+=("$1"); shift; done
  shift
  two_rank_launcher "${label}"
  note "running ${label} ${name}"
  # MPIEXEC_TIMEOUT: all three launchers end a job that outlives it;
  # timeout(1) is the backstop.
  if ! env MPIEXEC_TIMEOUT="${timeout_s}" "${env_vars[@]}" \
      timeout --kill-after=20 "$((timeout_s + 30))" \
      "${launcher[@]}" "${work}/partitioned_${label}" "$@" \
      >"${raw_dir}/${label}_${name}.txt" 2>"${raw_dir}/${label}_${name}.err"; then
    tail -n 20 "${raw_dir}/${label}_${name}.err" >&2
    note "${label} ${name}: run failed (a data check fails the run)"
    rm -f "${raw_dir}/${label}_${name}.txt"
    return 1
  fi
}

built=""
build minimpi "${prefix}/bin/mpicc" && built="${built} minimpi" || status=1
build mpich mpicc.mpich && built="${built} mpich" || status=1
build openmpi mpicc.openmpi && built="${built} openmpi" || status=1

for label in ${built}; do
  case "${label}" in
    minimpi) variants="${variants_minimpi}"; small_variants="${aggr_list}" ;;
    mpich) variants="${variants_mpich}"; small_variants="part" ;;
    openmpi) variants="${variants_openmpi}"; small_variants="" ;;
  esac
  run "${label}" main -- "${common[@]}" --mode overhead,bandwidth,earlybird \
    --partitions 8,16 --bytes "${main_bytes}" --variant "${variants}" || status=1
  if [ -n "${small_variants}" ]; then
    run "${label}" small -- "${common[@]}" --mode overhead --partitions 32,128 \
      --part-bytes "${small_part_bytes}" --variant "${small_variants}" || status=1
  fi
  run "${label}" sweep -- "${common[@]}" --mode sweep --partitions 8,16 \
    --bytes "${sweep_bytes}" --variant "${variants}" || status=1
  if [ "${label}" = minimpi ]; then
    rm -f "${raw_dir}/profile".*
    run minimpi writes MINIMPI_PART_PROFILE="${raw_dir}/profile" -- \
      "${common[@]}" --rounds "${writes_rounds}" --no-baseline --mode overhead \
      --partitions 32,128 --part-bytes "${small_part_bytes}" \
      --variant none,timer,adaptive || status=1
  fi
done

# Writes per round from rank 0's (the sender's) profile: writes over starts
# of every send request with the same aggregator, partitions and bytes.
if [ -f "${raw_dir}/profile.0" ]; then
  awk '
    $1 == "request" && $3 == "send" { key[$2] = $9 " " $5 " " $7 }
    $1 == "start" { starts[$2]++ }
    $1 == "write" { writes[$2]++ }
    END {
      for (id in key) { s[key[id]] += starts[id]; w[key[id]] += writes[id] }
      for (k in s) {
        split(k, a, " ")
        if (s[k] > 0) printf "variant=%s mode=writes partitions=%s bytes=%s value=%.2f\n", a[1], a[2], a[3], w[k] / s[k]
      }
    }' "${raw_dir}/profile.0" >"${raw_dir}/minimpi_writes_profile.txt"
else
  : >"${raw_dir}/minimpi_writes_profile.txt"
  [ -f "${raw_dir}/minimpi_writes.txt" ] &&
    note "minimpi wrote no ${raw_dir}/profile.0; table (d) reads n/a"
fi

# --- the tables --------------------------------------------------------------
echo "Libraries:"
for label in minimpi mpich openmpi; do
  version="$(cat "${raw_dir}/${label}"_main.txt "${raw_dir}/${label}"_*.txt 2>/dev/null |
    grep -m1 '^# library:' | sed 's/^# library: *//')"
  echo "- ${label}: ${version:-n/a (did not run)}"
done
grep -m1 '^# compute_us' "${raw_dir}"/*_main.txt 2>/dev/null | head -n 1 | sed 's/^[^#]*# /Settings: /'
grep -m1 '^# clock' "${raw_dir}"/*_main.txt 2>/dev/null | head -n 1 | sed 's/^[^#]*# clock: /Clock: /'
echo

for f in "${raw_dir}"/{minimpi,mpich,openmpi}_{main,small,sweep,writes_profile}.txt; do
  [ -f "${f}" ] || continue
  base="$(basename "${f}" .txt)"
  awk -v lib="${base%%_*}" -v run="${base#*_}" '!/^#/ && NF { print "lib=" lib, "run=" run, $0 }' "${f}"
done | awk -v aggrs="${aggregators}" -v bind="${bind_to}" '
  {
    delete f
    for (i = 1; i <= NF; i++) { eq = index($i, "="); f[substr($i, 1, eq - 1)] = substr($i, eq + 1) }
    k = f["lib"] SUBSEP f["run"] SUBSEP f["variant"] SUBSEP f["mode"] SUBSEP f["partitions"] SUBSEP f["bytes"]
    val[k] = f["value"]; rat[k] = f["ratio"]; mx[k] = f["max"]
    sz = f["run"] SUBSEP f["partitions"]
    if (!((sz, f["bytes"]) in seen)) { seen[sz, f["bytes"]] = 1; nsizes[sz]++; sizes[sz, nsizes[sz]] = f["bytes"] + 0 }
  }
  function human(b) {
    if (b >= 1048576) return (b / 1048576) " MiB"
    if (b >= 1024) return (b / 1024) " KiB"
    return b " B"
  }
  # Sizes seen in RUN at P partitions, ascending, into list[1..n]; returns n.
  function sorted(run, p, list,    n, i, j, t) {
    n = nsizes[run SUBSEP p] + 0
    for (i = 1; i <= n; i++) list[i] = sizes[run, p, i]
    for (i = 2; i <= n; i++) for (j = i; j > 1 && list[j - 1] > list[j]; j--) { t = list[j]; list[j] = list[j - 1]; list[j - 1] = t }
    return n
  }
  function has(lib, run, v, mode, p, b) { return (lib SUBSEP run SUBSEP v SUBSEP mode SUBSEP p SUBSEP b) in val }
  # Never read val[] without has(): reading an awk array entry creates it.
  function get(lib, run, v, mode, p, b) { return has(lib, run, v, mode, p, b) ? val[lib, run, v, mode, p, b] : "" }
  function cell(lib, run, v, mode, p, b) { return has(lib, run, v, mode, p, b) ? get(lib, run, v, mode, p, b) : "n/a" }
  function rcell(lib, run, v, mode, p, b) {
    return has(lib, run, v, mode, p, b) && rat[lib, run, v, mode, p, b] != "" && rat[lib, run, v, mode, p, b] != "-" ? rat[lib, run, v, mode, p, b] : "n/a"
  }
  function ratio(a, b) { return (a != "" && b != "" && b + 0 > 0) ? sprintf("%.2f", a / b) : "-" }
  # The best minimpi aggregator at a point ("" if none ran): the largest
  # value when higher is better, else the smallest; sets best_name.
  function best(run, mode, p, b, higher,    i, v, x) {
    x = ""; best_name = ""
    for (i = 1; i <= na; i++) {
      v = aggr[i]
      if (!has("minimpi", run, v, mode, p, b)) continue
      if (x == "" || (higher ? get("minimpi", run, v, mode, p, b) + 0 > x + 0 : get("minimpi", run, v, mode, p, b) + 0 < x + 0)) {
        x = get("minimpi", run, v, mode, p, b); best_name = v
      }
    }
    return x
  }
  function head(cols,    n, i, parts, line, rule) {
    n = split(cols, parts, "|"); line = "|"; rule = "|"
    for (i = 1; i <= n; i++) { line = line " " parts[i] " |"; rule = rule (i <= 2 ? "---|" : "---:|") }
    print line; print rule
  }
  END {
    na = split(aggrs, aggr, " ")
    ah = ""; for (i = 1; i <= na; i++) ah = ah "|minimpi " aggr[i]

    print "## (a) Perceived bandwidth and early bird, 8 and 16 partitions\n"
    printf "Perceived bandwidth: bytes / (receiver completion - the last thread'"'"'s ready stamp), MB/s, median of the rounds; higher is better. 2 ranks on one node, bind-to %s, one run. minimpi columns are its aggregators (MPI_Info minimpi_part_aggr), then one persistent send per partition, then one single send after the last thread. Ratio: the best minimpi aggregator / MPICH partitioned.\n\n", bind
    for (pi = 8; pi <= 16; pi *= 2) {
      p = pi; n = sorted("main", p, list)
      if (n == 0) continue
      printf "### %d partitions: bandwidth (MB/s)\n\n", p
      head("P|size" ah "|minimpi persistent|minimpi single|MPICH part|MPICH persistent|MPICH single|Open MPI persistent|Open MPI single|best minimpi / MPICH part")
      for (s = 1; s <= n; s++) {
        b = list[s]; line = "| " p " | " human(b)
        for (i = 1; i <= na; i++) line = line " | " cell("minimpi", "main", aggr[i], "bandwidth", p, b)
        line = line " | " cell("minimpi", "main", "persistent", "bandwidth", p, b) " | " cell("minimpi", "main", "single", "bandwidth", p, b)
        line = line " | " cell("mpich", "main", "part", "bandwidth", p, b) " | " cell("mpich", "main", "persistent", "bandwidth", p, b) " | " cell("mpich", "main", "single", "bandwidth", p, b)
        line = line " | " cell("openmpi", "main", "persistent", "bandwidth", p, b) " | " cell("openmpi", "main", "single", "bandwidth", p, b)
        x = best("main", "bandwidth", p, b, 1); r = ratio(x, get("mpich", "main", "part", "bandwidth", p, b))
        print line " | " (r == "-" ? "-" : r " (" best_name ")") " |"
      }
      printf "\n### %d partitions: early bird (fraction of the data arrived when the laggard becomes ready)\n\n", p
      print "max: the share not owned by the laggard thread, the most any library can have delivered. A single send delivers nothing early (0 by construction; its column is left out)."
      print ""
      head("P|size|max" ah "|minimpi persistent|MPICH part|MPICH persistent|Open MPI persistent")
      for (s = 1; s <= n; s++) {
        b = list[s]; m = ""
        for (i = 1; i <= na && m == ""; i++) if (has("minimpi", "main", aggr[i], "earlybird", p, b)) m = mx["minimpi", "main", aggr[i], "earlybird", p, b]
        if (m == "" && has("mpich", "main", "part", "earlybird", p, b)) m = mx["mpich", "main", "part", "earlybird", p, b]
        if (m == "" && has("openmpi", "main", "persistent", "earlybird", p, b)) m = mx["openmpi", "main", "persistent", "earlybird", p, b]
        line = "| " p " | " human(b) " | " (m == "" ? "n/a" : m)
        for (i = 1; i <= na; i++) line = line " | " cell("minimpi", "main", aggr[i], "earlybird", p, b)
        line = line " | " cell("minimpi", "main", "persistent", "earlybird", p, b)
        line = line " | " cell("mpich", "main", "part", "earlybird", p, b) " | " cell("mpich", "main", "persistent", "earlybird", p, b)
        print line " | " cell("openmpi", "main", "persistent", "earlybird", p, b) " |"
      }
      print ""
    }

    print "## (b) Overhead vs a single send\n"
    print "Overhead = round time - scheduled compute (median, us), which includes one small-message latency (the receiver'"'"'s done token) for every variant alike. Each variant'"'"'s column is its overhead / the same library'"'"'s single send at the same point (below 1: communication hidden behind compute). The single columns give the absolute overhead; the last column compares absolute overheads across libraries.\n"
    head("P|size" ah "|minimpi persistent|MPICH part|MPICH persistent|Open MPI persistent|single us minimpi|single us MPICH|single us Open MPI|single minimpi / MPICH|best minimpi / MPICH part (us)")
    for (pi = 8; pi <= 16; pi *= 2) {
      p = pi; n = sorted("main", p, list)
      for (s = 1; s <= n; s++) {
        b = list[s]; line = "| " p " | " human(b)
        for (i = 1; i <= na; i++) line = line " | " rcell("minimpi", "main", aggr[i], "overhead", p, b)
        line = line " | " rcell("minimpi", "main", "persistent", "overhead", p, b)
        line = line " | " rcell("mpich", "main", "part", "overhead", p, b) " | " rcell("mpich", "main", "persistent", "overhead", p, b)
        line = line " | " rcell("openmpi", "main", "persistent", "overhead", p, b)
        line = line " | " cell("minimpi", "main", "single", "overhead", p, b) " | " cell("mpich", "main", "single", "overhead", p, b) " | " cell("openmpi", "main", "single", "overhead", p, b)
        line = line " | " ratio(get("minimpi", "main", "single", "overhead", p, b), get("mpich", "main", "single", "overhead", p, b))
        x = best("main", "overhead", p, b, 0); r = ratio(x, get("mpich", "main", "part", "overhead", p, b))
        print line " | " (r == "-" ? "-" : r " (" best_name ")") " |"
      }
    }
    print ""

    print "## (c) Many small partitions: each aggregator vs none\n"
    print "32 and 128 user partitions of 8 B .. 4 KiB each, overhead in us (median; lower is better). Aggregator columns: its overhead / none'"'"'s (below 1: aggregating pays). MPICH partitioned for reference, with its ratio to its own single send.\n"
    hc = "P|bytes per partition|none us"
    for (i = 1; i <= na; i++) if (aggr[i] != "none") hc = hc "|" aggr[i] " / none"
    head(hc "|MPICH part us|MPICH part / its single|none / MPICH part")
    for (pi = 32; pi <= 128; pi *= 4) {
      p = pi; n = sorted("small", p, list)
      for (s = 1; s <= n; s++) {
        b = list[s]; none = get("minimpi", "small", "none", "overhead", p, b)
        line = "| " p " | " human(b / p) " | " cell("minimpi", "small", "none", "overhead", p, b)
        for (i = 1; i <= na; i++) if (aggr[i] != "none") line = line " | " ratio(get("minimpi", "small", aggr[i], "overhead", p, b), none)
        line = line " | " cell("mpich", "small", "part", "overhead", p, b) " | " rcell("mpich", "small", "part", "overhead", p, b)
        print line " | " ratio(none, get("mpich", "small", "part", "overhead", p, b)) " |"
      }
    }
    print ""

    print "## (d) Writes per round: timer and adaptive vs none\n"
    print "RDMA writes (transport partitions) posted per round by the sender, from minimpi'"'"'s MINIMPI_PART_PROFILE files of a separate shorter run (MPICH and Open MPI expose nothing comparable). none posts one write per partition; fewer writes mean the aggregator merged ready partitions.\n"
    head("P|bytes per partition|none|timer|adaptive|timer / none|adaptive / none")
    for (pi = 32; pi <= 128; pi *= 4) {
      p = pi; n = sorted("writes_profile", p, list)
      if (n == 0) n = sorted("small", p, list)
      for (s = 1; s <= n; s++) {
        b = list[s]; none = get("minimpi", "writes_profile", "none", "writes", p, b)
        printf "| %d | %s | %s | %s | %s | %s | %s |\n", p, human(b / p), cell("minimpi", "writes_profile", "none", "writes", p, b),
          cell("minimpi", "writes_profile", "timer", "writes", p, b), cell("minimpi", "writes_profile", "adaptive", "writes", p, b),
          ratio(get("minimpi", "writes_profile", "timer", "writes", p, b), none), ratio(get("minimpi", "writes_profile", "adaptive", "writes", p, b), none)
      }
    }
    print ""

    print "## (e) sweep3d-like wavefront, 2 ranks\n"
    print "Time per sweep in us (median; lower is better): each rank computes its column of blocks (= partitions) in order, the downstream rank needs the upstream'"'"'s partition i before its block i; directions alternate. A library that delivers partitions as they are ready approaches C + C/blocks, a single send after the last block 2C. Ratio: best minimpi / MPICH part.\n"
    head("blocks|face" ah "|minimpi persistent|minimpi single|MPICH part|MPICH persistent|MPICH single|Open MPI persistent|Open MPI single|best minimpi / MPICH part")
    for (pi = 8; pi <= 16; pi *= 2) {
      p = pi; n = sorted("sweep", p, list)
      for (s = 1; s <= n; s++) {
        b = list[s]; line = "| " p " | " human(b)
        for (i = 1; i <= na; i++) line = line " | " cell("minimpi", "sweep", aggr[i], "sweep", p, b)
        line = line " | " cell("minimpi", "sweep", "persistent", "sweep", p, b) " | " cell("minimpi", "sweep", "single", "sweep", p, b)
        line = line " | " cell("mpich", "sweep", "part", "sweep", p, b) " | " cell("mpich", "sweep", "persistent", "sweep", p, b) " | " cell("mpich", "sweep", "single", "sweep", p, b)
        line = line " | " cell("openmpi", "sweep", "persistent", "sweep", p, b) " | " cell("openmpi", "sweep", "single", "sweep", p, b)
        x = best("sweep", "sweep", p, b, 0); r = ratio(x, get("mpich", "sweep", "part", "sweep", p, b))
        print line " | " (r == "-" ? "-" : r " (" best_name ")") " |"
      }
    }
  }'

exit "${status}"
