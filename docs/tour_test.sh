#!/usr/bin/env bash
# //docs:tour_test: the checker must catch a planted bad reference (its
# self-test), and every reference of docs/tour.md must hold. Bazel runs this
# in the test's runfiles, which hold the sources docs/BUILD lists.
set -uo pipefail
status=0
docs/check_tour.sh --self-test || status=1
docs/check_tour.sh docs/tour.md || status=1
exit "${status}"
