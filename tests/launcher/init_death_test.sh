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
# The library's segments. The software verbs device of the tests
# (net/ib/testing) keeps a host-wide counter file there by design, and ib
# tests running beside this one make and remove its inboxes: not ours.
list_segments() {
  ls /dev/shm 2>/dev/null | grep '^minimpi' | grep -v '^minimpi-softib-' | sort
}

for ranks in 2 4; do
  for victim in 0 1; do
    before="$(list_segments)"
    err="$(DIE_IN_FENCE_RANK=${victim} LD_PRELOAD="${shim}" \
      timeout --kill-after=5 30 "$mpiexec" -n "$ranks" "$program" 2>&1 >/dev/null)"
    rc=$?
    after="$(list_segments)"
    name="np${ranks} victim ${victim}"
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
      echo "FAIL: $name: the job hung"; failed=1
    elif [ "$rc" -eq 0 ]; then
      echo "FAIL: $name: the job succeeded although rank ${victim} died"; failed=1
    elif ! grep -Eq "^mpiexec: rank [0-9]+ .*exited with code" <<<"$err"; then
      # The victim's peers may fail their fence and exit first; mpiexec
      # names whichever rank it saw end first.
      echo "FAIL: $name: mpiexec named no rank:"; echo "$err"; failed=1
    elif [ "$before" != "$after" ]; then
      echo "FAIL: $name: left in /dev/shm:"
      comm -13 <(echo "$before") <(echo "$after"); failed=1
    else
      echo "ok: $name (rc $rc, /dev/shm unchanged)"
    fi
  done
done
exit "$failed"
