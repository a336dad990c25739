#!/usr/bin/env bash
# Lays out a minimpi installation:
#   PREFIX/bin      mpicc mpicxx mpiexec mpirun (-> mpiexec) minimpi_info
#                   loggp_probe
#   PREFIX/include  mpi.h
#   PREFIX/lib      libmpi.so
#
# Run it as   bazel run //:install -- PREFIX
# Bazel passes the built files as --name=path options (see the root BUILD)
# ahead of PREFIX. A relative PREFIX is taken relative to the directory where
# bazel was invoked. Installing again over an existing prefix replaces the
# files in place.
set -euo pipefail

usage() {
  echo "usage: bazel run //:install -- PREFIX" >&2
  exit 2
}

declare -A files=()
prefix=""
for arg in "$@"; do
  case "${arg}" in
    --*=*)
      name="${arg%%=*}"
      files["${name#--}"]="${arg#*=}"
      ;;
    -*) usage ;;
    *)
      if [ -n "${prefix}" ]; then usage; fi
      prefix="${arg}"
      ;;
  esac
done
if [ -z "${prefix}" ]; then usage; fi
for name in libmpi header mpiexec minimpi_info loggp_probe mpicc mpicxx; do
  if [ -z "${files[${name}]:-}" ]; then
    echo "install: missing --${name}=...; run this through 'bazel run //:install'" >&2
    exit 2
  fi
  if [ ! -f "${files[${name}]}" ]; then
    echo "install: ${files[${name}]} not found (was it built?)" >&2
    exit 1
  fi
done

# Under 'bazel run' the working directory is the runfiles tree; the user's
# directory is BUILD_WORKING_DIRECTORY.
case "${prefix}" in
  /*) ;;
  *) prefix="${BUILD_WORKING_DIRECTORY:-${PWD}}/${prefix}" ;;
esac
mkdir -p "${prefix}/bin" "${prefix}/include" "${prefix}/lib"
prefix="$(cd -- "${prefix}" && pwd -P)"

# 'install' writes a fresh file, so a running program or a read-only copy at
# the destination never blocks a re-install.
install -m 0755 "${files[libmpi]}" "${prefix}/lib/libmpi.so"
install -m 0644 "${files[header]}" "${prefix}/include/mpi.h"
install -m 0755 "${files[mpiexec]}" "${prefix}/bin/mpiexec"
install -m 0755 "${files[minimpi_info]}" "${prefix}/bin/minimpi_info"
install -m 0755 "${files[loggp_probe]}" "${prefix}/bin/loggp_probe"
install -m 0755 "${files[mpicc]}" "${prefix}/bin/mpicc"
install -m 0755 "${files[mpicxx]}" "${prefix}/bin/mpicxx"
# mpiexec behaves as mpirun when invoked by that name.
ln -sfn mpiexec "${prefix}/bin/mpirun"

# Bazel may link a binary against shared libraries of its own build tree;
# those do not travel with the copy, so refuse an installation that would
# only work inside the build tree.
broken=0
for file in "${prefix}/lib/libmpi.so" "${prefix}/bin/mpiexec" \
    "${prefix}/bin/minimpi_info" "${prefix}/bin/loggp_probe"; do
  if ldd "${file}" 2>&1 | grep -E "not found|_solib" >&2; then
    echo "install: ${file} needs libraries outside ${prefix}" >&2
    broken=1
  fi
done
if [ "${broken}" -ne 0 ]; then exit 1; fi

echo "minimpi installed in ${prefix}"
echo "  add it to your PATH:  export PATH=\"${prefix}/bin:\$PATH\""
