#!/usr/bin/env bash
# Installs every Debian package minimpi needs to build, test and benchmark.
# Idempotent: packages already present are skipped, so calling it twice is cheap.
set -euo pipefail

packages=(
  bazel-bootstrap bazel-rules-java
  g++ clang libclang-rt-14-dev
  libibverbs-dev ibverbs-providers rdma-core
  libpmix-dev libpmix2
  libhwloc-dev
  libabsl-dev libgtest-dev
  slurm-wlm munge
  mpich libmpich-dev openmpi-bin libopenmpi-dev
  # tests/buildsys: the build systems that must find an installed minimpi
  cmake pkgconf autoconf make
  python3 procps
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install_deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
