#!/usr/bin/env bash
# Jobs that must fail under mpiexec, quickly and with one line naming the
# rank and the cause: a rank exits non-zero, dies of SIGSEGV, calls Abort, or
# leaves without finalizing while the others wait in a Fence; bad arguments;
# a program that cannot be executed; a job past its time limit; Ctrl-C.
#
# Usage: mpiexec_failure_test.sh MPIEXEC JOB_FAILURES BOOTSTRAP_PROBE
set -uo pipefail

mpiexec="$1"
job_failures="$2"
probe="$3"
# Hang guard, not a benchmark: a healthy launcher needs well under a second.
limit_s=30
scratch="${TEST_TMPDIR:-$(mktemp -d)}"
failed=0

fail() {
  echo "FAIL: $*" >&2
  failed=1
}

# expect_failure NAME EXPECTED_RC STDERR_REGEX -- command...
expect_failure() {
  local name="$1" expected_rc="$2" pattern="$3"
  shift 4
  local err="${scratch}/${name}.err"
  local start end rc
  start=$(date +%s)
  timeout --kill-after=5 "$limit_s" "$@" >/dev/null 2>"$err"
  rc=$?
  end=$(date +%s)
  # The guard killed it (mpiexec's own time limit also exits with 124).
  if [ $((end - start)) -ge "$limit_s" ]; then
    fail "$name: mpiexec hung (killed after ${limit_s}s)"
  elif [ "$rc" -ne "$expected_rc" ]; then
    fail "$name: exit code $rc, expected $expected_rc"
  fi
  if ! grep -Eq "$pattern" "$err"; then
    fail "$name: stderr lacks /$pattern/"
  fi
  if [ "$rc" -ne "$expected_rc" ] || ! grep -Eq "$pattern" "$err"; then
    echo "--- stderr of $name:" >&2
    cat "$err" >&2
  else
    echo "ok: $name (rc $rc, $((end - start))s)"
  fi
}

for n in 2 4 8; do
  expect_failure "exit_np${n}" 3 \
    "^mpiexec: rank 1 \(pid [0-9]+\) exited with code 3; terminating the job$" \
    -- "$mpiexec" -n "$n" "$job_failures" exit 3
  expect_failure "segv_np${n}" 139 \
    "^mpiexec: rank 1 \(pid [0-9]+\) was killed by signal 11 \(Segmentation fault\)" \
    -- "$mpiexec" -n "$n" "$job_failures" segv
  expect_failure "abort_np${n}" 5 \
    "^mpiexec: rank 1 called MPI_Abort\(errorcode 5\): job_failures asked for it$" \
    -- "$mpiexec" -n "$n" "$job_failures" abort 5
  expect_failure "no_finalize_np${n}" 1 \
    "^mpiexec: rank 1 \(pid [0-9]+\) exited without calling MPI_Finalize" \
    -- "$mpiexec" -n "$n" "$job_failures" no-finalize
done

# A job of one rank fails the same way.
expect_failure "exit_np1" 42 "rank 0 \(pid [0-9]+\) exited with code 42" \
  -- "$mpiexec" -n 1 "$job_failures" exit 42
# Abort codes wider than 8 bits still give a non-zero status.
expect_failure "abort_code_256" 1 "MPI_Abort\(errorcode 256\)" \
  -- "$mpiexec" -n 2 "$job_failures" abort 256

# Survivors that ignore SIGTERM are killed with SIGKILL.
JOB_FAILURES_IGNORE_SIGTERM=1 expect_failure "ignores_sigterm" 3 \
  "rank 1 \(pid [0-9]+\) exited with code 3" \
  -- "$mpiexec" -n 4 "$job_failures" exit 3

# Bad arguments and programs that cannot run.
expect_failure "no_count" 2 "^mpiexec: the number of ranks is required" \
  -- "$mpiexec" "$probe"
expect_failure "bad_count" 2 "^mpiexec: invalid number of ranks '0'" \
  -- "$mpiexec" -n 0 "$probe"
expect_failure "bad_bind" 2 "^mpiexec: invalid --bind-to 'socket'" \
  -- "$mpiexec" -n 1 --bind-to socket "$probe"
expect_failure "unknown_option" 2 "^mpiexec: unknown option '--frob'" \
  -- "$mpiexec" --frob -n 1 "$probe"
expect_failure "missing_program" 127 \
  "^mpiexec: cannot execute 'no-such-program-here': No such file or directory$" \
  -- "$mpiexec" -n 2 no-such-program-here
expect_failure "not_executable" 127 "^mpiexec: cannot execute '/': Is a directory$" \
  -- "$mpiexec" -n 2 /

# A job past its time limit ends with 124 and one line, whether the limit
# comes from --timeout or from MPIEXEC_TIMEOUT (as MPICH's and Open MPI's
# launchers read it, and test harnesses set it).
expect_failure "timeout_option" 124 \
  "^mpiexec: the job ran past its time limit of 1 s \(--timeout or MPIEXEC_TIMEOUT\); terminating it$" \
  -- "$mpiexec" --timeout 1 -n 2 /bin/sh -c "exec sleep 100"
MPIEXEC_TIMEOUT=1 expect_failure "timeout_environment" 124 \
  "time limit of 1 s" -- "$mpiexec" -n 3 /bin/sh -c "exec sleep 100"
expect_failure "bad_timeout" 2 "^mpiexec: invalid --timeout 'soon'" \
  -- "$mpiexec" --timeout soon -n 1 "$probe"

# Ctrl-C (SIGINT) and SIGTERM to mpiexec end the whole job.
for sig in INT TERM; do
  marker="${scratch}/sleeping_rank_${sig}"
  timeout --kill-after=5 "$limit_s" "$mpiexec" -n 3 /bin/sh -c \
    "echo \$\$ >> '$marker'; exec sleep 100" 2>"${scratch}/sig${sig}.err" &
  launcher=$!
  for _ in $(seq 100); do
    [ -f "$marker" ] && [ "$(wc -l <"$marker")" -eq 3 ] && break
    sleep 0.1
  done
  # The guard's child is mpiexec itself; signal it, not the guard.
  kill -s "$sig" "$(pgrep -P "$launcher" | head -1)"
  wait "$launcher"
  rc=$?
  expected=$((128 + $(kill -l "$sig")))
  [ "$rc" -eq "$expected" ] || fail "SIG$sig: mpiexec exit code $rc, expected $expected"
  grep -q "^mpiexec: received signal" "${scratch}/sig${sig}.err" ||
    fail "SIG$sig: no message naming the signal"
  while read -r pid; do
    if kill -0 "$pid" 2>/dev/null; then
      fail "SIG$sig: rank process $pid survived"
      kill -9 "$pid"
    fi
  done <"$marker"
  echo "ok: SIG$sig (rc $rc)"
done

if [ "$failed" -ne 0 ]; then
  echo "mpiexec_failure_test: FAILED" >&2
  exit 1
fi
echo "mpiexec_failure_test: all passed"
