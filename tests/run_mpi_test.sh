#!/usr/bin/env bash
# Runs one multi-rank test program and judges the outcome.
#
# Usage: run_mpi_test.sh [--env=NAME=VALUE]... [--timeout=SECONDS] LAUNCHER RANKS EXPECT STDERR_REGEX PROGRAM [ARGS...]
#   LAUNCHER      launcher command, word-split, e.g. "mpiexec" or
#                 "srun --mpi=pmix --overcommit"; it gets "-n RANKS PROGRAM ARGS..."
#   EXPECT        "success": the job must exit 0;
#                 "failure": the job must exit non-zero (and not hang)
#   STDERR_REGEX  "-" for none; otherwise an extended regex that some line of
#                 the job's stderr must match (ignored when the environment
#                 sets MPI_TEST_IGNORE_STDERR=1, for other MPIs' wording)
#   --timeout     hang guard (default 120 s): a run that takes longer fails
#
# Prints the job's output, then one verdict line; exits 0 if the test passed.
set -u

timeout_s=120
# --env=NAME=VALUE (repeatable) sets a variable for the job: minimpi's
# settings reach every rank through the launcher's environment.
while [[ $# -gt 0 && $1 == --env=* ]]; do
  export "${1#--env=}"
  shift
done
# The software verbs device (net/ib/testing) may be named relative to the
# runfiles (Bazel) or to the build's output (tests/run_all.sh sets
# MPI_TEST_BIN_DIR); every rank needs the absolute path.
if [[ -n ${MINIMPI_IB_TEST_DEVICE:-} && ${MINIMPI_IB_TEST_DEVICE} != /* ]]; then
  for base in "$PWD" "${MPI_TEST_BIN_DIR:-}"; do
    if [[ -n $base && -f $base/$MINIMPI_IB_TEST_DEVICE ]]; then
      export MINIMPI_IB_TEST_DEVICE=$base/$MINIMPI_IB_TEST_DEVICE
      break
    fi
  done
fi
if [[ $# -gt 0 && $1 == --timeout=* ]]; then
  timeout_s=${1#--timeout=}
  shift
fi
if [[ $# -lt 5 ]]; then
  echo "usage: $0 [--timeout=S] LAUNCHER RANKS EXPECT STDERR_REGEX PROGRAM [ARGS...]" >&2
  exit 2
fi
launcher=$1 ranks=$2 expect=$3 stderr_regex=$4 program=$5
shift 5
case $expect in
  success | failure) ;;
  *) echo "run_mpi_test: EXPECT must be success or failure, got '$expect'" >&2; exit 2 ;;
esac

stderr_file=$(mktemp "${TEST_TMPDIR:-${TMPDIR:-/tmp}}/mpi_test_stderr.XXXXXX")
trap 'rm -f "$stderr_file"' EXIT

# shellcheck disable=SC2206  # the launcher is deliberately word-split
launch=($launcher)
echo "run_mpi_test: ${launch[*]} -n $ranks $program $* (expect $expect, limit ${timeout_s}s)"
start_ns=$(date +%s%N)
# A second signal, KILL, 5 s after TERM, in case the launcher ignores TERM.
# stderr goes to the terminal/log as it happens and to a file to match.
timeout -k 5 "$timeout_s" "${launch[@]}" -n "$ranks" "$program" "$@" \
  2> >(tee "$stderr_file" >&2)
status=$?
elapsed_ms=$((($(date +%s%N) - start_ns) / 1000000))
# Let tee finish writing the stderr copy.
wait

verdict() {
  echo "run_mpi_test: $1: $2 (exit status $status, $((elapsed_ms / 1000)).$(printf %03d $((elapsed_ms % 1000)))s)"
  [[ $1 == PASS ]] && exit 0
  exit 1
}

if [[ $status -eq 124 || ( $status -eq 137 && $elapsed_ms -ge $((timeout_s * 1000)) ) ]]; then
  verdict FAIL "no exit within ${timeout_s}s: the job hung"
fi
if [[ $expect == success ]]; then
  [[ $status -eq 0 ]] || verdict FAIL "expected success, the job failed"
  verdict PASS "job succeeded"
fi
[[ $status -ne 0 ]] || verdict FAIL "expected the job to fail, it exited 0"
if [[ $stderr_regex != - && ${MPI_TEST_IGNORE_STDERR:-0} != 1 ]]; then
  grep -Eq -- "$stderr_regex" "$stderr_file" ||
    verdict FAIL "the job failed as expected, but no stderr line matches /$stderr_regex/"
fi
verdict PASS "job failed as expected"
