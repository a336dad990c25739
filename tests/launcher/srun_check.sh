#!/usr/bin/env bash
# Checks that runtime::Bootstrap works under Slurm's PMIx plugin: runs the
# bootstrap probe with `srun --mpi=pmix` at 1, 2, 4 and 8 ranks, and checks
# that a rank calling Abort ends the step with a failure instead of a hang.
# Needs a running Slurm (tools/slurm/start_slurm.sh starts a one-node one).
#
# Usage: tests/launcher/srun_check.sh [BIN_DIR]
#   BIN_DIR  Bazel's output directory holding tests/launcher/bootstrap_probe
#            and job_failures (default: bazel-bin). Build them first:
#            bazel build //tests/launcher:bootstrap_probe //tests/launcher:job_failures
set -uo pipefail

bin_dir="${1:-bazel-bin}"
probe="${bin_dir}/tests/launcher/bootstrap_probe"
job_failures="${bin_dir}/tests/launcher/job_failures"
limit_s=60
failed=0

fail() {
  echo "srun_check: FAIL: $*" >&2
  failed=1
}

for program in "$probe" "$job_failures"; do
  [ -x "$program" ] || { echo "srun_check: error: $program not built" >&2; exit 1; }
done
if ! sinfo -h >/dev/null 2>&1; then
  echo "srun_check: error: no Slurm answers (run tools/slurm/start_slurm.sh as root)" >&2
  exit 1
fi

out="$(mktemp)"
trap 'rm -f "$out"' EXIT

for n in 1 2 4 8; do
  timeout "$limit_s" srun --mpi=pmix -n "$n" "$probe" --expect-size "$n" >"$out" 2>&1
  rc=$?
  ok_lines=$(grep -c "^bootstrap_probe rank [0-9]* of ${n} ok" "$out")
  if [ "$rc" -ne 0 ] || [ "$ok_lines" -ne "$n" ]; then
    fail "srun -n $n: exit code $rc, $ok_lines of $n ranks ok"
    cat "$out" >&2
  else
    echo "ok: srun --mpi=pmix -n $n bootstrap_probe"
  fi
done

# Abort through Slurm's PMIx server ends the step, non-zero, within the limit.
timeout "$limit_s" srun --mpi=pmix -n 4 "$job_failures" abort 3 >"$out" 2>&1
rc=$?
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
  fail "srun job with an aborting rank hung (killed after ${limit_s}s)"
  cat "$out" >&2
elif [ "$rc" -eq 0 ]; then
  fail "srun job with an aborting rank exited 0"
  cat "$out" >&2
else
  echo "ok: srun step with an aborting rank failed (exit code $rc)"
fi

if [ "$failed" -ne 0 ]; then
  echo "srun_check: FAILED" >&2
  exit 1
fi
echo "srun_check: all passed"
