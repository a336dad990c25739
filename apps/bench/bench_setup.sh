# shellcheck shell=bash disable=SC2154  # repo, bazel, prefix, raw_dir, note: set by the caller
# Sourced by the comparison scripts (compare.sh, coll_compare.sh,
# match_compare.sh) after they parse their options; not run on its own.
# Expects: repo, bazel (array), prefix and raw_dir (either may be empty),
# and a note function. Sets: work, a scratch directory removed on exit, and
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
