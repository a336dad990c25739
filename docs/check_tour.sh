#!/usr/bin/env bash
# Checks that docs/tour.md names only files, functions and types that exist.
# The rules (what counts as a reference, what "defines" means) and the
# checker itself are in check_tour.py beside this file; this is the entry
# point, kept so that docs/BUILD, the tour and its readers call one name.
#
# usage: docs/check_tour.sh [--root DIR] [TOUR]
#          DIR: the tree the references are relative to (default: the
#          repository holding this script); TOUR: default DIR/docs/tour.md
#        docs/check_tour.sh --self-test
#          checks the checker: small made-up tours, each with one good and
#          one bad reference, must report exactly the bad one, and one with
#          only the good ones must pass
# Exit status: 0 all references hold; 1 some are broken (each is printed) or
# the self-test failed; 2 usage error.
#
# Needs bash and python3 (tools/install_deps.sh installs it).
set -uo pipefail

# Not resolved: under `bazel test //docs:tour_test` this script is a link in
# the test's runfiles, and the runfiles are the tree to check.
script_dir="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)"

if ! command -v python3 >/dev/null 2>&1; then
  echo "check_tour: needs python3 (tools/install_deps.sh installs it)" >&2
  exit 2
fi
exec python3 "${script_dir}/check_tour.py" "$@"
