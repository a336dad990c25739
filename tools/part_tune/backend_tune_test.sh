#!/usr/bin/env bash
# backend_tune end to end: a --quick calibration against minimpi writes a
# file in the format MINIMPI_PART_BACKEND_TABLE reads, a job with `auto`
# and that file runs, and a job with a malformed file fails at MPI_Init
# with a line naming the file.
#   usage: backend_tune_test.sh MPIEXEC BENCHMARK
set -euo pipefail
mpiexec="$1"
bench="$2"
out="${TEST_TMPDIR:-$(mktemp -d)}"
fail() { echo "FAIL: $*" >&2; exit 1; }

timeout --kill-after=5 240 tools/part_tune/backend_tune.sh --quick \
  --mpiexec "${mpiexec}" --bench "${bench}" "${out}/backends.txt" \
  >"${out}/tune.log" 2>&1 || { cat "${out}/tune.log"; fail "backend_tune failed"; }
grep -qE '^on_node_persist_max [0-9]+$' "${out}/backends.txt" &&
  grep -qE '^between_nodes_persist_max [0-9]+$' "${out}/backends.txt" ||
  { cat "${out}/backends.txt"; fail "no thresholds written"; }
MINIMPI_PART_BACKEND=auto MINIMPI_PART_BACKEND_TABLE="${out}/backends.txt" \
  MINIMPI_PART_STATS=1 timeout --kill-after=5 60 "${mpiexec}" -n 2 "${bench}" \
  --mode overhead --partitions 8 --bytes 4096 --rounds 3 >"${out}/run.log" 2>&1 \
  || { cat "${out}/run.log"; fail "a job with the calibration failed"; }
grep -qE 'backend (persist|native)' "${out}/run.log" ||
  { cat "${out}/run.log"; fail "auto resolved to no backend"; }
echo "on_node_persist_max lots" >"${out}/bad.txt"
if MINIMPI_PART_BACKEND_TABLE="${out}/bad.txt" timeout --kill-after=5 60 \
    "${mpiexec}" -n 2 "${bench}" --mode overhead --partitions 8 --bytes 64 \
    --rounds 1 >"${out}/bad.log" 2>&1; then
  fail "a malformed calibration file was accepted"
fi
grep -q "bad.txt:1" "${out}/bad.log" || { cat "${out}/bad.log"; fail "no line names the file"; }
echo "PASS: $(grep -E '_persist_max' "${out}/backends.txt" | tr '\n' ' ')"
