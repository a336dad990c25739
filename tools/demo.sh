#!/usr/bin/env bash
# Sets up this machine, builds minimpi, installs it into ./install and runs a
# 4-rank demo job; the README's first command.
#
#   1. tools/install_deps.sh                 Debian packages (idempotent)
#   2. bazel run //:install -- install       builds and installs into ./install
#   3. install/bin/mpicc apps/examples/hello_ring.c
#   4. install/bin/mpiexec -n 4 hello_ring
#
# The terminal shows each step and its result; the package manager's and
# Bazel's full output goes to log files whose paths are printed.
#
#   BAZEL   the bazel command (default: bazel), e.g. to add startup options
set -euo pipefail

repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "${repo}"
read -r -a bazel <<<"${BAZEL:-bazel}"
prefix="${repo}/install"
logs="$(mktemp -d "${TMPDIR:-/tmp}/minimpi-demo-logs.XXXXXX")"

# run_logged WHAT LOG COMMAND...: runs COMMAND with its output in LOG; on
# failure shows the end of the log and stops.
run_logged() {
  local what="$1" log="$2"
  shift 2
  if ! "$@" >"${log}" 2>&1; then
    tail -n 30 "${log}" >&2
    echo "demo: ${what} failed; full log: ${log}" >&2
    exit 1
  fi
}

echo "== installing Debian packages (skipped when present; log: ${logs}/install_deps.log)"
run_logged "installing packages" "${logs}/install_deps.log" tools/install_deps.sh
sed 's/^/   /' "${logs}/install_deps.log"

echo "== building minimpi and installing it into ${prefix} (log: ${logs}/build.log)"
run_logged "the build" "${logs}/build.log" \
  "${bazel[@]}" run --local_cpu_resources=2 --jobs=2 //:install -- "${prefix}"
grep -E "^(INFO: Elapsed time|minimpi installed)" "${logs}/build.log" | sed "s/^/   /" || true

echo "== compiling apps/examples/hello_ring.c with the installed mpicc"
mkdir -p "${prefix}/examples"
"${prefix}/bin/mpicc" -O2 -o "${prefix}/examples/hello_ring" \
  apps/examples/hello_ring.c
"${prefix}/bin/mpicc" -show -O2 -o "${prefix}/examples/hello_ring" \
  apps/examples/hello_ring.c

echo "== mpiexec -n 4 hello_ring"
"${prefix}/bin/mpiexec" -n 4 "${prefix}/examples/hello_ring"

cat <<EOM

Done. To build and run your own program:
  export PATH="${prefix}/bin:\$PATH"
  mpicc -O2 -o myprog myprog.c
  mpiexec -n 4 ./myprog
EOM
