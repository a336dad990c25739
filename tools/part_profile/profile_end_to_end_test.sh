#!/usr/bin/env bash
# MINIMPI_PART_PROFILE end to end: a short run of the partitioned benchmark
# writes one profile file per rank, the sender's names its request and every
# round's start, readies and writes, and the plotter draws it (SVG with one
# row per partition, and the text chart).
#   usage: profile_end_to_end_test.sh MPIEXEC BENCHMARK PLOT_SCRIPT
set -euo pipefail
mpiexec="$1"
bench="$2"
plot="$3"
out="${TEST_TMPDIR:-$(mktemp -d)}"
fail() { echo "FAIL: $*" >&2; exit 1; }

MINIMPI_PART_PROFILE="${out}/profile" timeout --kill-after=5 120 \
  "${mpiexec}" -n 2 "${bench}" --mode overhead --partitions 8 --bytes 4096 \
  --rounds 4 --variant timer --compute-us 200 --laggard-us 100 \
  >"${out}/bench.log" 2>&1 || { cat "${out}/bench.log"; fail "benchmark failed"; }
profile="${out}/profile.0"
[ -s "${profile}" ] || fail "no ${profile}"
grep -q '^request [0-9]* send partitions 8 ' "${profile}" || fail "no request line"
for event in start ready write done; do
  grep -q "^${event} " "${profile}" || fail "no ${event} events"
done
python3 "${plot}" "${profile}" -o "${out}/round.svg"
rows="$(grep -c 'class="partition"' "${out}/round.svg")"
[ "${rows}" = 8 ] || fail "${rows} partition rows, want 8"
python3 "${plot}" "${profile}" --text >"${out}/round.txt"
[ -s "${out}/round.txt" ] || fail "empty text chart"
echo "PASS: $(grep -c '^write ' "${profile}") writes profiled, chart drawn"
