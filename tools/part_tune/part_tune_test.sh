#!/usr/bin/env bash
# part_tune end to end: a --quick search against minimpi writes a table in
# the format the table aggregator reads, and a job started with
# MINIMPI_PART_TABLE set to it runs (MPI_Init refuses a table it cannot read).
#   usage: part_tune_test.sh MPIEXEC BENCHMARK
set -euo pipefail
mpiexec="$1"
bench="$2"
out="${TEST_TMPDIR:-$(mktemp -d)}"
fail() { echo "FAIL: $*" >&2; exit 1; }

timeout --kill-after=5 240 tools/part_tune/part_tune.sh --quick \
  --mpiexec "${mpiexec}" --bench "${bench}" "${out}/table.txt" \
  >"${out}/tune.log" 2>&1 || { cat "${out}/tune.log"; fail "part_tune failed"; }
entries="$(grep -cE '^[0-9]+ [0-9]+ [0-9]+ [0-9]+$' "${out}/table.txt" || true)"
[ "${entries}" -ge 2 ] || { cat "${out}/table.txt"; fail "${entries} table lines"; }
MINIMPI_PART_TABLE="${out}/table.txt" timeout --kill-after=5 60 \
  "${mpiexec}" -n 2 "${bench}" --mode overhead --partitions 8 --bytes 4096 \
  --rounds 3 --variant table >"${out}/run.log" 2>&1 \
  || { cat "${out}/run.log"; fail "a job with the table failed"; }
echo "PASS: ${entries} table entries, read back by MPI_Init"
