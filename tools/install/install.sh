#!/usr/bin/env bash
# Lays out a minimpi installation:
#   PREFIX/bin      mpicc mpicxx mpiexec mpirun (-> mpiexec) minimpi_info
#                   loggp_probe mpit_trace mpit_plot
#                   mpicc_abi mpicxx_abi (-> mpicc, mpicxx)
#   PREFIX/include  mpi.h mpi_abi.h
#   PREFIX/lib      libmpi.so libmpi_abi.so.1 libmpi_abi.so (-> .so.1)
#                   libmpit_trace.so
#   PREFIX/lib/pkgconfig  mpi.pc minimpi.pc mpi-c.pc mpi-cxx.pc
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
for name in libmpi libmpi_abi header abi_header mpiexec minimpi_info loggp_probe mpicc mpicxx \
    mpit_trace_lib mpit_trace mpit_plot; do
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
mkdir -p "${prefix}/bin" "${prefix}/include" "${prefix}/lib/pkgconfig"
prefix="$(cd -- "${prefix}" && pwd -P)"

# 'install' writes a fresh file, so a running program or a read-only copy at
# the destination never blocks a re-install.
install -m 0755 "${files[libmpi]}" "${prefix}/lib/libmpi.so"
# The MPI-5 standard ABI: its library under its soname with the link name
# linkers look for, its header, and MPICH's names for the wrappers that
# build against it (mpicc and mpicxx under these names do).
install -m 0755 "${files[libmpi_abi]}" "${prefix}/lib/libmpi_abi.so.1"
ln -sfn libmpi_abi.so.1 "${prefix}/lib/libmpi_abi.so"
install -m 0644 "${files[abi_header]}" "${prefix}/include/mpi_abi.h"
install -m 0644 "${files[header]}" "${prefix}/include/mpi.h"
install -m 0755 "${files[mpiexec]}" "${prefix}/bin/mpiexec"
install -m 0755 "${files[minimpi_info]}" "${prefix}/bin/minimpi_info"
install -m 0755 "${files[loggp_probe]}" "${prefix}/bin/loggp_probe"
install -m 0755 "${files[mpicc]}" "${prefix}/bin/mpicc"
install -m 0755 "${files[mpicxx]}" "${prefix}/bin/mpicxx"
# The MPI_T tracer: the launcher finds the library at ../lib beside itself.
install -m 0755 "${files[mpit_trace_lib]}" "${prefix}/lib/libmpit_trace.so"
install -m 0755 "${files[mpit_trace]}" "${prefix}/bin/mpit_trace"
install -m 0755 "${files[mpit_plot]}" "${prefix}/bin/mpit_plot"
ln -sfn mpicc "${prefix}/bin/mpicc_abi"
ln -sfn mpicxx "${prefix}/bin/mpicxx_abi"
# mpiexec behaves as mpirun when invoked by that name.
ln -sfn mpiexec "${prefix}/bin/mpirun"

# pkg-config files. Each finds the prefix from its own directory, as the
# wrappers find theirs, so a moved prefix keeps working. mpi.pc, mpi-c.pc and
# mpi-cxx.pc are the names distributions' MPI packages provide; minimpi.pc
# names this MPI and no other. The version comes from the installed header,
# its one source.
version="$(sed -n 's/^#define MINIMPI_VERSION "\(.*\)"$/\1/p' "${prefix}/include/mpi.h")"
if [ -z "${version}" ]; then
  echo "install: no MINIMPI_VERSION in ${files[header]}" >&2
  exit 1
fi
for name in mpi minimpi mpi-c mpi-cxx; do
  pc="${prefix}/lib/pkgconfig/${name}.pc"
  rm -f "${pc}"  # a fresh file, as 'install' writes one
  cat >"${pc}" <<EOF
prefix=\${pcfiledir}/../..
exec_prefix=\${prefix}
libdir=\${exec_prefix}/lib
includedir=\${prefix}/include

Name: minimpi
Description: MPI library for MPI+threads programs (C and C++)
Version: ${version}
Cflags: -I\${includedir}
# The rpath lets a program run with no environment set, as with mpicc.
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lmpi
EOF
  chmod 0644 "${pc}"
done

# Bazel may link a binary against shared libraries of its own build tree;
# those do not travel with the copy, so refuse an installation that would
# only work inside the build tree.
broken=0
for file in "${prefix}/lib/libmpi.so" "${prefix}/lib/libmpi_abi.so.1" \
    "${prefix}/bin/mpiexec" \
    "${prefix}/bin/minimpi_info" "${prefix}/bin/loggp_probe" \
    "${prefix}/lib/libmpit_trace.so"; do
  if ldd "${file}" 2>&1 | grep -E "not found|_solib" >&2; then
    echo "install: ${file} needs libraries outside ${prefix}" >&2
    broken=1
  fi
done
if [ "${broken}" -ne 0 ]; then exit 1; fi

echo "minimpi installed in ${prefix}"
echo "  add it to your PATH:  export PATH=\"${prefix}/bin:\$PATH\""
