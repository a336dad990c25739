#!/usr/bin/env bash
# Checks that the build systems people use find the minimpi installed in
# PREFIX the way they find MPICH or Open MPI, and build programs that really
# run on it:
#
#   cmake       find_package(MPI) with the wrappers first on PATH; builds a C
#               program against MPI::MPI_C and a C++ one against MPI::MPI_CXX
#   pkg-config  PKG_CONFIG_PATH=PREFIX/lib/pkgconfig; cc with mpi.pc, c++
#               with mpi-cxx.pc
#   autoconf    configure.ac run through autoconf, then CC=mpicc ./configure
#               (AC_CHECK_FUNC(MPI_Init) with no extra library) and make
#
# Each program must resolve libmpi.so to PREFIX/lib with no environment set
# (this machine may have Open MPI's libmpi.so in the system library
# directory) and, run by PREFIX/bin/mpiexec -n 2, report minimpi from
# MPI_Get_library_version.
#
#   usage: check_build_systems.sh PREFIX [cmake|pkg-config|autoconf]...
#          (no system named: all three)
#
# tools/test.sh runs it once per build system so each counts as one check.
set -euo pipefail

usage() {
  echo "usage: $0 PREFIX [cmake|pkg-config|autoconf]..." >&2
  exit 2
}
if [ $# -lt 1 ]; then usage; fi
# Resolved, so it compares equal to the paths the loader and wrappers report.
prefix="$(cd -- "$1" && pwd -P)"
shift
systems=("$@")
if [ ${#systems[@]} -eq 0 ]; then systems=(cmake pkg-config autoconf); fi
for system in "${systems[@]}"; do
  case "${system}" in
    cmake | pkg-config | autoconf) ;;
    *) usage ;;
  esac
done

here="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
# Two cores shared with the rest of CI.
jobs=2

# expect_minimpi BINARY LANGUAGE: BINARY uses PREFIX's libmpi.so and runs on
# two ranks under minimpi's mpiexec, with PATH the only environment.
expect_minimpi() {
  local binary="$1" language="$2" resolved output
  resolved="$(env -i PATH=/usr/bin:/bin ldd "${binary}" |
    awk '$1 == "libmpi.so" { print $3 }')"
  if [ -z "${resolved}" ] ||
      [ "$(readlink -f -- "${resolved}")" != "${prefix}/lib/libmpi.so" ]; then
    env -i PATH=/usr/bin:/bin ldd "${binary}" || true
    echo "${binary##*/}: libmpi.so resolves to '${resolved:-nothing}'," \
      "not ${prefix}/lib/libmpi.so" >&2
    return 1
  fi
  if ! output="$(env -i PATH=/usr/bin:/bin "${prefix}/bin/mpiexec" \
      --timeout 60 -n 2 "${binary}" 2>&1)"; then
    echo "${output}"
    echo "${binary##*/}: mpiexec -n 2 failed" >&2
    return 1
  fi
  echo "${output}"
  if ! grep -qF "buildsys_hello (${language}): 2 ranks, library minimpi " \
      <<<"${output}"; then
    echo "${binary##*/}: no 'buildsys_hello (${language}): 2 ranks, library minimpi' line" >&2
    return 1
  fi
}

check_cmake() {
  local build="${work}/cmake"
  # PATH finds the wrappers, as after the README's export PATH=PREFIX/bin:...
  # FindMPI interrogates them (-showme:compile, -showme:link) and checks that
  # the result links.
  PATH="${prefix}/bin:${PATH}" cmake -S "${here}" -B "${build}" \
    -DCMAKE_BUILD_TYPE=Release
  # Had FindMPI taken another MPI's wrapper, say which.
  grep -E '^MPI_(C|CXX)_(COMPILER|LIB_NAMES):|^MPI_mpi_LIBRARY:' \
    "${build}/CMakeCache.txt"
  local language compiler
  for language in C CXX; do
    compiler="$(sed -n "s/^MPI_${language}_COMPILER:[A-Z]*=//p" "${build}/CMakeCache.txt")"
    if [ -z "${compiler}" ] ||
        [ "$(cd -- "$(dirname -- "${compiler}")" && pwd -P)" != "${prefix}/bin" ]; then
      echo "cmake: FindMPI chose '${compiler}' for ${language}, not a wrapper in ${prefix}/bin" >&2
      return 1
    fi
  done
  cmake --build "${build}" -j "${jobs}"
  expect_minimpi "${build}/buildsys_hello_c" C
  expect_minimpi "${build}/buildsys_hello_cxx" C++
}

check_pkg_config() {
  export PKG_CONFIG_PATH="${prefix}/lib/pkgconfig"
  local version name
  version="$(sed -n 's/^#define MINIMPI_VERSION "\(.*\)"$/\1/p' "${prefix}/include/mpi.h")"
  for name in mpi minimpi mpi-c mpi-cxx; do
    # pkg-config falls back to the system's mpi.pc (another MPI's) when
    # PREFIX has none, so ask for the version too.
    if [ "$(pkg-config --modversion "${name}")" != "${version}" ]; then
      echo "pkg-config: ${name}.pc is not minimpi ${version}'s" >&2
      return 1
    fi
  done
  local cflags libs
  read -r -a cflags <<<"$(pkg-config --cflags mpi)"
  read -r -a libs <<<"$(pkg-config --libs mpi)"
  echo "pkg-config --cflags --libs mpi: ${cflags[*]} ${libs[*]}"
  cc -O2 "${cflags[@]}" -o "${work}/hello_c" "${here}/buildsys_hello.c" "${libs[@]}"
  expect_minimpi "${work}/hello_c" C
  read -r -a cflags <<<"$(pkg-config --cflags mpi-cxx)"
  read -r -a libs <<<"$(pkg-config --libs mpi-cxx)"
  c++ -O2 -std=c++17 "${cflags[@]}" -o "${work}/hello_cxx" \
    "${here}/buildsys_hello.cc" "${libs[@]}"
  expect_minimpi "${work}/hello_cxx" C++
}

check_autoconf() {
  local build="${work}/autoconf"
  mkdir -p "${build}"
  cp "${here}/configure.ac" "${here}/Makefile.in" "${here}/buildsys_hello.c" "${build}/"
  (
    cd "${build}"
    autoconf
    # As a user would: the wrappers on PATH, CC names one of them.
    export PATH="${prefix}/bin:${PATH}"
    if ! CC=mpicc ./configure; then
      tail -n 40 config.log
      exit 1
    fi
    make
  )
  expect_minimpi "${build}/buildsys_hello" C
}

failed=()
for system in "${systems[@]}"; do
  echo "=== ${system}"
  started=${SECONDS}
  # A subshell outside any condition, so that set -e stops the check at its
  # first failing command (bash ignores -e in a function called by "if").
  set +e
  (
    set -e
    "check_${system//-/_}"
  )
  status=$?
  set -e
  if [ "${status}" -eq 0 ]; then
    echo "=== ${system}: ok ($((SECONDS - started)) s)"
  else
    echo "=== ${system}: FAILED ($((SECONDS - started)) s)"
    failed+=("${system}")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "failed: ${failed[*]}" >&2
  exit 1
fi
