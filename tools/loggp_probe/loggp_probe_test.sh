#!/usr/bin/env bash
# loggp_probe end to end: a short two-rank run writes a parameter file with
# the five LogGP values, and MPI_Init accepts that file as
# MINIMPI_PART_LOGGP (a second run starts with it set), while a broken file
# makes MPI_Init fail with a message naming it.
#
# Usage: loggp_probe_test.sh MPIEXEC LOGGP_PROBE
set -uo pipefail
mpiexec="$1"
probe="$2"
scratch="${TEST_TMPDIR:-$(mktemp -d)}"
guard="timeout --kill-after=5 60"
out="${scratch}/loggp.txt"

$guard "$mpiexec" -n 2 "$probe" "$out" 4096 >"${scratch}/run1.log" 2>&1 \
  || { echo "FAIL: loggp_probe exited $?"; cat "${scratch}/run1.log"; exit 1; }
for key in L o_s o_r g G; do
  grep -Eq "^${key}[[:space:]]+[0-9.eE+-]+" "$out" \
    || { echo "FAIL: no '${key} <number>' line in:"; cat "$out"; exit 1; }
done

MINIMPI_PART_LOGGP="$out" $guard "$mpiexec" -n 2 "$probe" "${scratch}/again.txt" 1024 \
  >"${scratch}/run2.log" 2>&1 \
  || { echo "FAIL: MPI_Init refused the probe's own file"; cat "${scratch}/run2.log"; exit 1; }

echo "L banana" >"${scratch}/bad.txt"
if MINIMPI_PART_LOGGP="${scratch}/bad.txt" $guard "$mpiexec" -n 2 "$probe" \
  "${scratch}/never.txt" 1024 >"${scratch}/run3.log" 2>&1; then
  echo "FAIL: a broken MINIMPI_PART_LOGGP file was accepted"; exit 1
fi
grep -q "bad.txt" "${scratch}/run3.log" \
  || { echo "FAIL: the error does not name the file:"; cat "${scratch}/run3.log"; exit 1; }
echo "PASS: loggp_probe wrote $(grep -c . "$out") lines; MPI_Init reads them"
