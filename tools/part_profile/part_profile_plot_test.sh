#!/usr/bin/env bash
# Renders the sample profile and checks the charts: one SVG row group per
# user partition of the request drawn, the right default round (the last
# full one), the ASCII chart's rows, --request and errors on bad input.
#   usage: part_profile_plot_test.sh PLOT_SCRIPT SAMPLE_PROFILE
set -euo pipefail
plot="$1"
sample="$2"
out="${TEST_TMPDIR:-$(mktemp -d)}"
fail() { echo "FAIL: $*" >&2; exit 1; }

python3 "${plot}" "${sample}" -o "${out}/sample.svg"
python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' \
  "${out}/sample.svg" || fail "the SVG is not well-formed XML"
# The first send request of the sample has 8 partitions.
partitions="$(awk '$1 == "request" && $3 == "send" { print $5; exit }' "${sample}")"
rows="$(grep -c 'class="partition"' "${out}/sample.svg")"
[ "${rows}" = "${partitions}" ] || fail "${rows} partition rows, want ${partitions}"
# Every partition of a full round has all three phases.
for kind in compute waiting transfer; do
  n="$(grep -c "<rect class=\"${kind}\"" "${out}/sample.svg")"
  [ "${n}" = "${partitions}" ] || fail "${n} ${kind} bars, want ${partitions}"
done
grep -q 'round 2' "${out}/sample.svg" || fail "default round is not 2 (the last full one)"
grep -q '5 writes posted, 1.6 partitions per write' "${out}/sample.svg" ||
  fail "caption lacks the writes"
for label in compute waiting transfer microseconds; do
  grep -q "${label}" "${out}/sample.svg" || fail "no ${label} in legend or axis"
done

python3 "${plot}" "${sample}" --text >"${out}/sample.txt"
text_rows="$(grep -cE '^ +[0-9]+ \|' "${out}/sample.txt")"
[ "${text_rows}" = "${partitions}" ] || fail "${text_rows} text rows, want ${partitions}"

python3 "${plot}" "${sample}" --request 1 --round 0 -o "${out}/request1.svg"
[ "$(grep -c 'class="partition"' "${out}/request1.svg")" = 4 ] || fail "request 1 should have 4 rows"
python3 "${plot}" "${sample}" --from-us 990 --text >/dev/null || fail "--from-us"

# A receive request has no send rounds; a missing request is an error.
if python3 "${plot}" "${sample}" --request 2 >/dev/null 2>&1; then fail "request 2 (recv) drew"; fi
if python3 "${plot}" "${sample}" --request 9 >/dev/null 2>&1; then fail "request 9 drew"; fi
echo "PASS"
