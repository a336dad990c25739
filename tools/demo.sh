#!/usr/bin/env bash
# Sets up this machine, builds minimpi, installs it into ./install and runs a
# 4-rank demo job; the README's first command.
#
#   1. tools/install_deps.sh                 Debian packages (idempotent)
#   2. bazel run //:install -- install       builds and installs into ./install
#   3. install/bin/mpicc apps/examples/hello_ring.c
#   4. install/bin/mpiexec -n 4 hello_ring
#
#   BAZEL   the bazel command (default: bazel), e.g. to add startup options
set -euo pipefail

repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "${repo}"
read -r -a bazel <<<"${BAZEL:-bazel}"
prefix="${repo}/install"

echo "== installing Debian packages (skipped when present)"
tools/install_deps.sh

echo "== building and installing minimpi into ${prefix}"
"${bazel[@]}" run --local_cpu_resources=2 --jobs=2 //:install -- "${prefix}"

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
