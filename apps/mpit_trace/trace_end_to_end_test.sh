#!/usr/bin/env bash
# mpit_trace end to end: tests/mpit_queue_depth.c (built against libmpi.so)
# runs under the launcher on 2 ranks. Rank 0's trace must show, on the
# communicator MPI_Comm_dup made (comm 2: world is 0, the split 1), an
# unexpected queue of exactly 25 (sampled, its watermark, and enqueued minus
# dequeued), 25 enqueued and 25 dequeued events, none on the split
# communicator, and 3 rounds x 8 partitions arrived on its receive request;
# the summary on stderr says the same, and the plotter draws it.
# Then the partitioned benchmark (apps/bench/partitioned.c, unmodified, 4
# sender threads marking partitions ready at once): on the receiver the
# events' user partitions equal the request's part_partitions_arrived, and
# every round arrived whole.
#   usage: trace_end_to_end_test.sh MPIEXEC LAUNCHER LIBRARY PROGRAM PLOT
#                                   PARTITIONED_BENCHMARK
set -euo pipefail
mpiexec="$1"
launcher="$2"
library="$3"
program="$4"
plot="$5"
benchmark="$6"
out="${TEST_TMPDIR:-$(mktemp -d)}"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_line() {  # FILE LINE
  grep -qxF "$2" "$1" || { cat "$1" >&2; fail "no line '$2' in $1"; }
}

MPIT_TRACE_LIB="$(cd -- "$(dirname -- "${library}")" && pwd)/$(basename -- "${library}")"
export MPIT_TRACE_LIB
timeout --kill-after=5 120 "${launcher}" -o "${out}/trace" -i 200 -- \
  "${mpiexec}" -n 2 "${program}" >"${out}/run.log" 2>&1 ||
  { cat "${out}/run.log"; fail "the traced program failed"; }
cat "${out}/run.log"
grep -q '^mpit_queue_depth: 25 unexpected messages' "${out}/run.log" ||
  fail "the program did not finish its checks"
for rank in 0 1; do
  [ -s "${out}/trace/mpit_trace.${rank}" ] || fail "no trace of rank ${rank}"
done
trace="${out}/trace/mpit_trace.0"
expect_line "${trace}" "rank 0 size 2 interval_us 200"
expect_line "${trace}" "comm 0 size 2 from MPI_COMM_WORLD parent -"
expect_line "${trace}" "comm 1 size 1 from MPI_Comm_split parent 0"
expect_line "${trace}" "comm 2 size 2 from MPI_Comm_dup parent 0"
expect_line "${trace}" "request 0 MPI_Precv_init partitions 8 comm 2"
for event in unexp_message_enqueued unexp_message_dequeued partition_arrived; do
  grep -q "^event_type ${event} " "${trace}" || fail "the library offers no ${event}"
done

python3 "${plot}" "${out}/trace" --rank 0 --summary >"${out}/summary.txt"
cat "${out}/summary.txt"
expect_line "${out}/summary.txt" "rank 0 comm 2 peak unexpected_recvq_length 25"
expect_line "${out}/summary.txt" "rank 0 comm 2 peak unexpected_queue_from_events 25"
expect_line "${out}/summary.txt" "rank 0 comm 2 events unexp_message_enqueued 25"
expect_line "${out}/summary.txt" "rank 0 comm 2 events unexp_message_dequeued 25"
# Every partition of every round arrived, whatever the aggregation: the
# events' user partitions cover 0..7 in each of the 3 rounds, and the
# request's counter says 24.
expect_line "${out}/summary.txt" "rank 0 request 0 user_partitions_arrived 24"
expect_line "${out}/summary.txt" "rank 0 request 0 rounds_complete 3"
if grep -q '^pvar part_partitions_arrived ' "${trace}"; then
  expect_line "${out}/summary.txt" "rank 0 request 0 last part_partitions_arrived 24"
fi
# A watermark, where the library has one, saw the same peak.
if grep -q '^pvar unexpected_recvq_length_hwm ' "${trace}"; then
  expect_line "${out}/summary.txt" "rank 0 comm 2 peak unexpected_recvq_length_hwm 25"
fi
# Nothing was unexpected on the split communicator, which carried nothing
# (MPI_COMM_WORLD carries the barriers, whose messages may arrive early).
if grep -E '^rank 0 comm 1 (peak unexpected_recvq_length|events unexp_message_enqueued) [1-9]' \
    "${out}/summary.txt"; then
  fail "unexpected messages on a communicator that carried none"
fi
# The summary on stderr names the peak and the arrivals.
grep -qE '^mpit_trace: rank 0 comm 2 \(.*\):.* peak unexpected_recvq_length 25( |$)' "${out}/run.log" ||
  fail "stderr summary lacks comm 2's peak"
grep -qE '^mpit_trace: rank 0 request 0 \(.*\):.* partition_arrived [1-9][0-9]*( |$)' "${out}/run.log" ||
  fail "stderr summary lacks the request's arrivals"
if grep -q '^pvar part_partitions_arrived ' "${trace}"; then
  grep -qE '^mpit_trace: rank 0 request 0 \(.*\):.* part_partitions_arrived 24( |$)' "${out}/run.log" ||
    fail "stderr summary lacks the request's part_partitions_arrived 24"
fi

python3 "${plot}" "${out}/trace" --rank 0 --comm 2 --text >"${out}/chart.txt"
grep -qE '^ +25 \|' "${out}/chart.txt" || { cat "${out}/chart.txt"; fail "chart's top row is not 25"; }
python3 "${plot}" "${out}/trace" -o "${out}/trace.svg"
python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "${out}/trace.svg"

timeout --kill-after=5 120 "${launcher}" -o "${out}/part" -- \
  "${mpiexec}" -n 2 "${benchmark}" --mode overhead --variant part \
  --partitions 16 --threads 4 --bytes 64K --rounds 5 --compute-us 100 \
  --no-baseline >"${out}/part.log" 2>&1 ||
  { cat "${out}/part.log"; fail "the traced benchmark failed"; }
python3 "${plot}" "${out}/part" --rank 1 --summary >"${out}/part_summary.txt"
cat "${out}/part_summary.txt"
# The receiver's request: events and the variable count the same partitions,
# a whole number of rounds of 16, and every round complete.
arrived="$(awk '$5 == "user_partitions_arrived" { print $6 }' "${out}/part_summary.txt")"
rounds="$(awk '$5 == "rounds_complete" { print $6 }' "${out}/part_summary.txt")"
counted="$(awk '$6 == "part_partitions_arrived" { print $7 }' "${out}/part_summary.txt")"
if [ -z "${arrived}" ] || [ "${arrived}" -eq 0 ]; then fail "no partition arrived at rank 1"; fi
[ "${arrived}" = "${counted}" ] ||
  fail "events report ${arrived} partitions, the variable ${counted}"
[ "$((rounds * 16))" = "${arrived}" ] ||
  fail "${arrived} partitions arrived, but only ${rounds} whole rounds of 16"
echo "PASS"
