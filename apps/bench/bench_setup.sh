# shellcheck shell=bash disable=SC2154  # repo, bazel, prefix, raw_dir, note: set by the caller
# Sourced by the comparison scripts (compare.sh, coll_compare.sh,
# halo_compare.sh, match_compare.sh) after they parse their options; not run on its own.
# Expects: repo, bazel (array), prefix and raw_dir (either may be empty),
# and a note function (and, for run_two_ranks_everywhere, source_file and
# bind_to). Sets: work, a scratch directory removed on exit, and
# raw_dir, which defaults to it.

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
[ -n "${raw_dir}" ] || raw_dir="${work}"
mkdir -p "${raw_dir}"

# install_minimpi: with no --prefix, installs minimpi into a temporary prefix
# (bazel run //:install) and points prefix at it. Returns non-zero, after
# showing the end of the install log, when the install fails; what that
# means is the caller's choice.
install_minimpi() {
  [ -z "${prefix}" ] || return 0
  prefix="${work}/minimpi"
  note "installing minimpi into a temporary prefix"
  if ! (cd "${repo}" && "${bazel[@]}" run //:install -- "${prefix}") \
      >"${work}/install.log" 2>&1; then
    tail -n 20 "${work}/install.log" >&2
    return 1
  fi
}

# two_rank_launcher LABEL: sets the array `launcher` to the command that
# starts a 2-rank job of LABEL's library (minimpi, mpich or openmpi), bound
# as bind_to says (the caller's own `local -a launcher`, if it has one).
# shellcheck disable=SC2034  # launcher is the caller's
two_rank_launcher() {
  case "$1" in
    # No environment for minimpi: the rpath its wrapper added must find libmpi.
    minimpi) launcher=("${prefix}/bin/mpiexec" --bind-to "${bind_to}" -n 2) ;;
    mpich) launcher=(mpirun.mpich -bind-to "${bind_to}" -n 2) ;;
    # Open MPI refuses to start as root unless told twice that it is wanted.
    openmpi) launcher=(mpirun.openmpi --allow-run-as-root --bind-to "${bind_to}" -n 2) ;;
  esac
}

# run_two_ranks_everywhere NAME ARGS...: builds source_file as NAME with
# minimpi's mpicc (from prefix), mpicc.mpich and mpicc.openmpi, and runs each
# build with 2 ranks, bound as bind_to says, passing ARGS. Each library's
# output lands in raw_dir/LABEL.txt (label minimpi, mpich or openmpi); a
# library that fails to build or run leaves that file empty, so its column
# reads n/a. Returns non-zero when any of the three failed.
run_two_ranks_everywhere() {
  local name="$1"; shift
  local failed=0 label
  _build() {  # _build LABEL COMPILER...
    local label="$1"; shift
    if ! command -v "$1" >/dev/null 2>&1; then
      note "${label}: $1 not found"
      return 1
    fi
    if ! "$@" -O2 -o "${work}/${name}_${label}" "${source_file}" \
        >"${raw_dir}/${label}.build.log" 2>&1; then
      cat "${raw_dir}/${label}.build.log" >&2
      note "${label}: build failed"
      return 1
    fi
  }
  _run() {  # _run LABEL COMMAND...: its output to raw_dir/LABEL.txt
    local label="$1"; shift
    note "running ${label}"
    if ! "$@" >"${raw_dir}/${label}.txt" 2>"${raw_dir}/${label}.err"; then
      tail -n 20 "${raw_dir}/${label}.err" >&2
      note "${label}: run failed (a data check fails the run)"
      rm -f "${raw_dir}/${label}.txt"
      return 1
    fi
  }
  # No environment for minimpi: the rpath its wrapper added must find libmpi.
  _build minimpi "${prefix}/bin/mpicc" &&
    _run minimpi "${prefix}/bin/mpiexec" --bind-to "${bind_to}" -n 2 \
      "${work}/${name}_minimpi" "$@" || failed=1
  _build mpich mpicc.mpich &&
    _run mpich mpirun.mpich -bind-to "${bind_to}" -n 2 \
      "${work}/${name}_mpich" "$@" || failed=1
  # Open MPI refuses to start as root unless told twice that it is wanted.
  _build openmpi mpicc.openmpi &&
    _run openmpi mpirun.openmpi --allow-run-as-root --bind-to "${bind_to}" \
      -n 2 "${work}/${name}_openmpi" "$@" || failed=1
  for label in minimpi mpich openmpi; do
    [ -f "${raw_dir}/${label}.txt" ] || : >"${raw_dir}/${label}.txt"
  done
  return "${failed}"
}
