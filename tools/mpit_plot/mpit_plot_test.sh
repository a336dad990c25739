#!/usr/bin/env bash
# Draws the sample trace and checks what the charts and the summary say:
# the dup'd communicator's unexpected queue peaks at 25 (sampled and from
# its events), 25 enqueued and 25 dequeued, 24 partitions arrived; the text
# chart's rows, the SVG's panels, the filters, and errors on bad input.
#   usage: mpit_plot_test.sh PLOT_SCRIPT SAMPLE_TRACE
set -euo pipefail
plot="$1"
sample="$2"
out="${TEST_TMPDIR:-$(mktemp -d)}"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_line() {  # FILE LINE
  grep -qxF "$2" "$1" || { cat "$1" >&2; fail "no line '$2' in $1"; }
}

python3 "${plot}" "${sample}" --summary >"${out}/summary.txt"
expect_line "${out}/summary.txt" "rank 0 comm 2 peak unexpected_recvq_length 25"
expect_line "${out}/summary.txt" "rank 0 comm 2 peak unexpected_recvq_length_hwm 25"
expect_line "${out}/summary.txt" "rank 0 comm 2 peak unexpected_queue_from_events 25"
expect_line "${out}/summary.txt" "rank 0 comm 2 events unexp_message_enqueued 25"
expect_line "${out}/summary.txt" "rank 0 comm 2 events unexp_message_dequeued 25"
expect_line "${out}/summary.txt" "rank 0 comm 2 last unexpected_recvq_match_attempts 25"
expect_line "${out}/summary.txt" "rank 0 comm 1 peak unexpected_recvq_length 0"
# Two transport partitions of 4 user partitions each per round, 3 rounds.
expect_line "${out}/summary.txt" "rank 0 request 0 events partition_arrived 6"
expect_line "${out}/summary.txt" "rank 0 request 0 user_partitions_arrived 24"
expect_line "${out}/summary.txt" "rank 0 request 0 rounds_complete 3"
expect_line "${out}/summary.txt" "rank 0 request 0 last part_partitions_arrived 24"

# Text: the queue chart of comm 2 is 8 rows high (25 scaled to --height 8),
# its top row labelled 25; the request's arrival row counts 24 user
# partitions in all, in six slices of 4.
python3 "${plot}" "${sample}" --text --comm 2 --var unexpected_recvq_length \
  --columns 50 >"${out}/queue.txt"
grep -q '^rank 0 comm 2 (size 2 from MPI_Comm_dup parent 0): unexpected_recvq_length, peak 25$' \
  "${out}/queue.txt" || fail "no title for comm 2's queue"
rows="$(awk '/: unexpected_recvq_length, peak/ { on = 1; next } on && /^ +\+/ { exit } on { n++ } END { print n }' "${out}/queue.txt")"
[ "${rows}" = 8 ] || fail "${rows} chart rows, want 8"
grep -qE '^ +25 \|' "${out}/queue.txt" || fail "top row not labelled 25"
python3 "${plot}" "${sample}" --text --columns 50 >"${out}/all.txt"
arrived="$(grep -A1 ': 6 partition_arrived, 24 partitions$' "${out}/all.txt" | tail -n 1 |
  awk '{ for (i = 1; i <= length($0); i++) s += substr($0, i, 1) + 0 } END { print s }')"
[ "${arrived}" = 24 ] || fail "the arrival row sums to ${arrived}, want 24"
grep -q '^rank 0 request 0 at its end: part_partitions_arrived 24$' "${out}/all.txt" ||
  fail "no final values of the request's variables"
grep -q 'comm 1 .*unexpected_recvq_length, peak 0$' "${out}/all.txt" ||
  fail "an idle communicator is not listed with peak 0"

# SVG: well-formed; one panel per non-zero queue series of comm 2 (posted,
# unexpected, its watermark, the events' level) and one for the request.
python3 "${plot}" "${sample}" -o "${out}/trace.svg"
python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' \
  "${out}/trace.svg" || fail "the SVG is not well-formed XML"
[ "$(grep -c 'class="queue"' "${out}/trace.svg")" = 4 ] || fail "want 4 queue panels"
[ "$(grep -c 'class="arrival"' "${out}/trace.svg")" = 6 ] || fail "want 6 arrival ticks"

# A directory of traces reads every mpit_trace.<rank>.
mkdir -p "${out}/dir"
cp "${sample}" "${out}/dir/mpit_trace.0"
sed 's/^rank 0 /rank 1 /' "${sample}" >"${out}/dir/mpit_trace.1"
[ "$(python3 "${plot}" "${out}/dir" --summary | grep -c 'user_partitions_arrived 24$')" = 2 ] ||
  fail "a directory's two ranks were not both read"
python3 "${plot}" "${out}/dir" --rank 1 --summary | grep -q '^rank 1 ' || fail "--rank 1"

# Messages queued before the tool listened (dequeued, never seen enqueued)
# lift the events' level: two removed means two were there.
{
  echo "rank 0 size 2 interval_us 0"
  echo "comm 0 size 2 from MPI_COMM_WORLD parent -"
  echo "event 5.0 unexp_message_enqueued comm 0 1 0 8 3 0"
  echo "event 6.0 unexp_message_dequeued comm 0 1 0 8 2 0"
  echo "event 7.0 unexp_message_dequeued comm 0 1 1 8 1 0"
  echo "event 8.0 unexp_message_dequeued comm 0 1 2 8 0 0"
} >"${out}/early"
python3 "${plot}" "${out}/early" --summary >"${out}/early.txt"
expect_line "${out}/early.txt" "rank 0 comm 0 peak unexpected_queue_from_events 3"

# Bad input is an error, not a chart.
if python3 "${plot}" "${out}/missing" >/dev/null 2>&1; then fail "a missing file drew"; fi
echo "sample 1 2 3" >"${out}/bad"
if python3 "${plot}" "${out}/bad" >/dev/null 2>&1; then fail "a file without a rank line drew"; fi
if python3 "${plot}" "${sample}" --rank 5 >/dev/null 2>&1; then fail "--rank 5 drew"; fi
echo "PASS"
