#!/usr/bin/env bash
# Runs apps/bench/match_hotspot.c (gather and gatherv to one root, and a long
# unexpected queue) once per minimpi matching engine (MINIMPI_MATCH) and
# prints a markdown table: microseconds per operation for each engine and the
# ratio engine / ll (below 1: faster than the single-list baseline). Then,
# unless --no-stats, it runs colpnp and ll once more with
# MINIMPI_MATCH_STATS=1 and tabulates rank 0's queue traversals per search,
# which is what explains the times.
#
#   usage: apps/bench/match_compare.sh [--ranks N] [--engines "colpnp ll ..."]
#                                      [--args "PROGRAM ARGS"] [--median]
#                                      [--no-stats] [--timeout SECONDS]
#                                      [--prefix DIR] [--raw DIR]
#     --ranks    ranks per run (default 64, see below)
#     --engines  engines to run (default: all five); ratios need ll among them
#     --args     extra match_hotspot arguments, e.g. "--iterations 200"
#     --median   tabulate the median of the repetitions (default: the best)
#     --timeout  limit for one run, in seconds (default 600): a run that hangs
#                fails instead of stalling the comparison
#     --prefix   an existing minimpi installation (default: install one with
#                `bazel run //:install` into a temporary prefix)
#     --raw      keep every run's output and stderr in this directory
#   BAZEL        the bazel command (default: bazel)
#
# Why 64 ranks: a matching engine only matters when queues are long, and
# rank 0's queues grow with the rank count (the gather hot spot) and with the
# messages waiting (the unexpected queue, 8192 by default at any rank count).
# On the 2-core, 23 GB machine this was tuned on, 64 ranks (32 per core,
# oversubscribed) run reliably in about 5 s per engine and 20 s for ll; 128
# ranks also work but take about 100 s for ll and the gather times become
# mostly scheduling noise (milliseconds per call). Use more on bigger nodes.
#
# Exits non-zero when the build or any run fails, or a run finds wrong data
# (its column then reads n/a).
set -uo pipefail

repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)"
source_file="${repo}/apps/bench/match_hotspot.c"
read -r -a bazel <<<"${BAZEL:-bazel}"
ranks=64
engines="colpnp ll perpeer col+ll ll+pnp"
stats_engines="colpnp ll"
program_args=""
column=4 # of match_hotspot's output: 4 best, 5 median
timeout_s=600
prefix=""
raw_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --ranks) ranks="$2"; shift 2 ;;
    --engines) engines="$2"; shift 2 ;;
    --args) program_args="$2"; shift 2 ;;
    --median) column=5; shift ;;
    --no-stats) stats_engines=""; shift ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --prefix) prefix="$2"; shift 2 ;;
    --raw) raw_dir="$2"; shift 2 ;;
    *) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
status=0
note() { echo "match_compare: $*" >&2; }
# shellcheck source=apps/bench/bench_setup.sh
source "${repo}/apps/bench/bench_setup.sh"

install_minimpi || { note "minimpi install failed"; exit 1; }
program="${work}/match_hotspot"
"${prefix}/bin/mpicc" -O2 -o "${program}" "${source_file}" >"${raw_dir}/build.log" 2>&1 ||
  { cat "${raw_dir}/build.log" >&2; note "build failed"; exit 1; }

# A file name for an engine: '+' is fine in paths, but keep names plain.
file_name() { echo "${1//+/_}"; }

run() {  # run ENGINE STATS(0|1) OUTPUT_BASE
  local engine="$1" stats="$2" base="$3"
  # shellcheck disable=SC2086  # program_args is deliberately word-split
  if ! timeout -k 10 "${timeout_s}" "${prefix}/bin/mpiexec" -n "${ranks}" \
      -x MINIMPI_MATCH="${engine}" -x MINIMPI_MATCH_STATS="${stats}" \
      "${program}" ${program_args} >"${base}.txt" 2>"${base}.err"; then
    tail -n 20 "${base}.err" >&2
    note "${engine} at ${ranks} ranks: run failed, timed out or found wrong data"
    rm -f "${base}.txt"
    return 1
  fi
}

for engine in ${engines}; do
  note "running ${engine} at ${ranks} ranks"
  run "${engine}" 0 "${raw_dir}/$(file_name "${engine}")_${ranks}" || status=1
done

echo "- library: $(grep -h -m1 '^# library:' "${raw_dir}"/*_"${ranks}".txt 2>/dev/null | head -n 1 | sed 's/^# library: *//')"
grep -h -m2 -e '^# gather:' -e '^# unexpected' "${raw_dir}"/*_"${ranks}".txt 2>/dev/null |
  head -n 2 | sed 's/^# /- /'
echo
for engine in ${engines}; do
  f="${raw_dir}/$(file_name "${engine}")_${ranks}.txt"
  [ -f "${f}" ] && awk -v engine="${engine}" -v col="${column}" \
    '!/^#/ && NF == 5 { print engine, $1, $2, $(col) }' "${f}"
done | awk -v engines="${engines}" -v ranks="${ranks}" -v which="$([ "${column}" = 4 ] && echo best || echo median)" '
  { t[$1, $2, $3] = $4; key = $2 SUBSEP $3; if (!(key in seen)) { seen[key] = 1; order[++nrows] = key } }
  function human(b) { return b >= 1024 ? (b / 1024) " KiB" : b " B" }
  END {
    ne = split(engines, e, " ")
    printf "Microseconds per operation at %d ranks (%s of the repetitions; per collective for gather and gatherv, per receive for unexpected); ratio = engine / ll, below 1 is faster than ll.\n\n", ranks, which
    header = "| scenario | size |"; rule = "|---|---:|"
    for (i = 1; i <= ne; i++) { header = header " " e[i] " |"; rule = rule "---:|" }
    for (i = 1; i <= ne; i++) if (e[i] != "ll") { header = header " " e[i] "/ll |"; rule = rule "---:|" }
    print header; print rule
    for (r = 1; r <= nrows; r++) {
      split(order[r], k, SUBSEP)
      line = "| " k[1] " | " human(k[2]) " |"
      for (i = 1; i <= ne; i++) line = line " " (((e[i], k[1], k[2]) in t) ? t[e[i], k[1], k[2]] : "n/a") " |"
      base = (("ll", k[1], k[2]) in t) ? t["ll", k[1], k[2]] + 0 : 0
      for (i = 1; i <= ne; i++) {
        if (e[i] == "ll") continue
        have = (e[i], k[1], k[2]) in t
        line = line " " ((have && base > 0) ? sprintf("%.2f", t[e[i], k[1], k[2]] / base) : "-") " |"
      }
      print line
    }
  }'

if [ -n "${stats_engines}" ]; then
  echo
  echo "Rank 0's matching statistics over a whole run (all scenarios; MINIMPI_MATCH_STATS=1, a separate untimed run): traversals per search of the posted-receive (PRQ) and unexpected-message (UMQ) queues, and the longest each grew; point-to-point is the unexpected scenario, collective the gathers (and barriers)."
  echo
  echo "| engine | p2p PRQ trav/search | p2p UMQ trav/search | p2p UMQ longest | coll PRQ trav/search | coll UMQ trav/search | coll UMQ longest | search time (ms) |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  for engine in ${stats_engines}; do
    note "running ${engine} at ${ranks} ranks with MINIMPI_MATCH_STATS=1"
    base="${raw_dir}/$(file_name "${engine}")_${ranks}_stats"
    if ! run "${engine}" 1 "${base}"; then
      status=1
      echo "| ${engine} | n/a | n/a | n/a | n/a | n/a | n/a | n/a |"
      continue
    fi
    # Rank 0's block runs from its header to the next rank's; a rank prints
    # one "VCI v:" section per VCI it searched on, summed here.
    awk -v engine="${engine}" '
      /^minimpi: rank 0 matching statistics/ { inside = 1; next }
      /^minimpi: rank / { inside = 0 }
      !inside { next }
      /^  point-to-point:/ { kind = "p2p" } /^  collective:/ { kind = "coll" }
      /^    (PRQ|UMQ):/ {
        q = kind " " substr($1, 1, 3)
        searches[q] += $2; traversals[q] += $2 * $4; ms += $8
        if ($(NF) + 0 > longest[q]) longest[q] = $(NF) + 0
      }
      function per(q) { return searches[q] > 0 ? sprintf("%.1f", traversals[q] / searches[q]) : "0" }
      END {
        printf "| %s | %s | %s | %d | %s | %s | %d | %.1f |\n", engine, per("p2p PRQ"), per("p2p UMQ"),
          longest["p2p UMQ"], per("coll PRQ"), per("coll UMQ"), longest["coll UMQ"], ms
      }' "${base}.err"
  done
fi
exit "${status}"
