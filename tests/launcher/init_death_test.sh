#!/usr/bin/env bash
# A rank that dies during MPI_Init (in its first PMIx fence, right after the
# shared-memory transport made its segment) fails the job quickly, names the
# rank, and leaves nothing behind in /dev/shm.
#
# Usage: init_death_test.sh MPIEXEC PROGRAM SHIM
set -uo pipefail

mpiexec="$1"
program="$2"
shim="$(cd "$(dirname "$3")" && pwd)/$(basename "$3")"
failed=0
# The segments of the job mpiexec (process $1) ran: the transport names
# them after the job's PMIx namespace, minimpi.<mpiexec's pid>.<random>
# (the ranks die in MPI_Init, before any collective region or window).
# Where memfd_create works the transport makes no name at all; the names
# are those of its shm_open fallback.
# Other minimpi jobs may run beside this test (the suite runs tests in
# parallel) and make and remove segments of their own meanwhile: not ours.
list_segments() {
  ls /dev/shm 2>/dev/null | grep -F "minimpi.${1}." | sort
}
pidfile="$(mktemp)"
trap 'rm -f "$pidfile"' EXIT

for ranks in 2 4; do
  for victim in 0 1; do
    # mpiexec runs as the shell that writes its pid, so that its
    # namespace, and so its segments' names, are known.
    err="$(DIE_IN_FENCE_RANK=${victim} LD_PRELOAD="${shim}" \
      timeout --kill-after=5 30 bash -c 'echo $$ >"$0"; exec "$@"' \
      "$pidfile" "$mpiexec" -n "$ranks" "$program" 2>&1 >/dev/null)"
    rc=$?
    launcher="$(cat "$pidfile")"
    left="$(list_segments "$launcher")"
    name="np${ranks} victim ${victim}"
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
      echo "FAIL: $name: the job hung"; failed=1
    elif [ "$rc" -eq 0 ]; then
      echo "FAIL: $name: the job succeeded although rank ${victim} died"; failed=1
    elif ! grep -Eq "^mpiexec: rank [0-9]+ .*exited with code" <<<"$err"; then
      # The victim's peers may fail their fence and exit first; mpiexec
      # names whichever rank it saw end first.
      echo "FAIL: $name: mpiexec named no rank:"; echo "$err"; failed=1
    elif [ -z "$launcher" ]; then
      echo "FAIL: $name: mpiexec's pid unknown"; failed=1
    elif [ -n "$left" ]; then
      echo "FAIL: $name: left in /dev/shm:"; echo "$left"; failed=1
    else
      echo "ok: $name (rc $rc, /dev/shm unchanged)"
    fi
  done
done
exit "$failed"
