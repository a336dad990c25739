#!/usr/bin/env bash
# Runs every multi-rank test case in tests/tests.bzl, one line per run
# (PASS/FAIL), then "N passed, N failed"; exits non-zero if any failed.
#
# Usage: tests/run_all.sh MODE [CASE_REGEX]
#   MODE  srun     minimpi programs built by Bazel, launched by
#                  `srun --mpi=pmix` (a running Slurm is needed)
#         mpiexec  minimpi programs built by Bazel, launched by minimpi's mpiexec
#         openmpi  the same sources built with Debian's Open MPI (mpicc.openmpi)
#         mpich    the same sources built with Debian's MPICH (mpicc.mpich)
#         The last two cross-check the tests themselves: a test that fails
#         there is suspect, not minimpi.  Other MPIs word their fatal error
#         messages differently, so only exit statuses are checked there.
#         abi      the programs of the chosen cases built for the MPI-5
#                  standard ABI with an installation's mpicc_abi/mpicxx_abi
#                  (MINIMPI_ABI_PREFIX), each checked to need libmpi_abi.so.1
#                  and not libmpi.so, launched by that installation's mpiexec,
#                  or by srun when ABI_LAUNCHER=srun
#   CASE_REGEX  only runs whose name (e.g. ring_4) matches this extended regex
#
# Environment: BAZEL (default bazel), BAZEL_STARTUP_OPTIONS (e.g.
# --output_base=...), BAZEL_BUILD_OPTIONS (e.g. --config=asan),
# SRUN_OPTIONS (extra srun options), MPI_TEST_LOG_DIR (keeps each run's log),
# MPI_TEST_EXCLUDE (an extended regex: runs whose name matches are skipped).
#
# Across nodes (mode srun only): SRUN_NODES=K spreads each run of R ranks
# over min(K, R) nodes with `-N min(K,R) --ntasks-per-node=R/nodes` (when it
# divides; else srun's block distribution, as even: 3 ranks go 2+1), so
# with 4 ranks on 2 nodes ranks 0,1 share node1 and 2,3 share node2: some
# pairs cross nodes and some share one. It needs a cluster of at least K
# nodes: tools/slurm/start_cluster.sh, whose slurm.conf is used when
# SLURM_CONF is unset (/run/minimpi-cluster/slurm.conf).
# SRUN_ONE_NODE_CASES: an extended regex of case names that run on one node
# even then (cases that cannot span nodes by design). Empty by default:
# every case is expected to pass across nodes.
set -u -o pipefail

mode=${1:-}
filter=${2:-.}
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runner=$repo_root/tests/run_mpi_test.sh
log_dir=${MPI_TEST_LOG_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/mpi_tests.XXXXXX")}
mkdir -p "$log_dir"

bazel_build() {
  local bazel=${BAZEL:-bazel}
  # shellcheck disable=SC2086  # option lists are deliberately word-split
  (cd "$repo_root" &&
    $bazel ${BAZEL_STARTUP_OPTIONS:-} build ${BAZEL_BUILD_OPTIONS:-} \
      //tests:multirank_programs //tests:multirank_manifest //tools/mpiexec \
      //net/ib/testing:libminimpi_softib.so >&2) || {
    echo "run_all: bazel build failed" >&2
    exit 1
  }
  # shellcheck disable=SC2086
  bin_dir=$(cd "$repo_root" && $bazel ${BAZEL_STARTUP_OPTIONS:-} info ${BAZEL_BUILD_OPTIONS:-} bazel-bin)
  manifest=$bin_dir/tests/multirank_manifest.txt
  # For MINIMPI_IB_TEST_DEVICE=net/ib/testing/libminimpi_softib.so.
  export MPI_TEST_BIN_DIR=$bin_dir
  program_dir=$bin_dir/tests
}

# Builds every program with another MPI's compiler wrappers, and writes the
# manifest from tests.bzl (plain literals, so Python can read it).
other_mpi_build() {
  local cc=$1 cxx=$2 only_cases=${3:-}
  program_dir=$log_dir/programs
  manifest=$log_dir/manifest.txt
  mkdir -p "$program_dir"
  python3 - "$repo_root/tests/tests.bzl" "$manifest" "$program_dir" "$cc" "$cxx" "$only_cases" <<'PYTHON' || exit 1
import os, re, subprocess, sys
bzl, manifest, out_dir, cc, cxx, only_cases = sys.argv[1:]
scope = {}
exec(open(bzl).read(), scope)
tests_dir = os.path.dirname(bzl)
# With only_cases (a regex of run names), only the programs those runs need.
needed = {case["program"] for case in scope["MPI_TEST_CASES"]
          for ranks in case["ranks"]
          if not only_cases or re.search(only_cases, "%s_%d" % (case["name"], ranks))}
for program, spec in scope["MPI_TEST_PROGRAMS"].items():
    if program not in needed:
        continue
    # "//pkg:file" names a file another package exports (a Bazel label).
    srcs = [os.path.join(os.path.dirname(tests_dir), *s[2:].split(":", 1))
            if s.startswith("//") else os.path.join(tests_dir, s)
            for s in spec["srcs"]]
    is_c = all(s.endswith(".c") for s in srcs)
    command = ([cc, "-std=c11"] if is_c else [cxx, "-std=c++17"]) + [
        # MPICH's header makes GCC misread MPI_STATUSES_IGNORE as a
        # zero-length array: silence that one warning.
        "-O2", "-g", "-Wall", "-Wno-stringop-overflow", "-pthread", "-o", os.path.join(out_dir, program)] + srcs
    if spec.get("openmp", False):
        command.append("-fopenmp")
    if subprocess.call(command) != 0:
        sys.exit("run_all: building %s failed: %s" % (program, " ".join(command)))
with open(manifest, "w") as f:
    for case in scope["MPI_TEST_CASES"]:
        for ranks in case["ranks"]:
            f.write("\t".join(["%s_%d" % (case["name"], ranks), str(ranks),
                               case.get("expect", "success"), str(case.get("timeout", 120)),
                               case.get("stderr", "") or "-", case["program"],
                               ",".join(case.get("env", [])) or "-"]
                              + case.get("args", [])) + "\n")
PYTHON
}

case $mode in
  srun)
    bazel_build
    launcher="srun --mpi=pmix --overcommit --kill-on-bad-exit=1 ${SRUN_OPTIONS:-}"
    srun_nodes=${SRUN_NODES:-1}
    [[ $srun_nodes =~ ^[1-9][0-9]*$ ]] || { echo "run_all: SRUN_NODES must be a positive number, got '$srun_nodes'" >&2; exit 2; }
    if [[ $srun_nodes -gt 1 && -z ${SLURM_CONF:-} ]]; then
      export SLURM_CONF=/run/minimpi-cluster/slurm.conf
      [[ -f $SLURM_CONF ]] || { echo "run_all: SRUN_NODES=$srun_nodes, but no simulated cluster is up ($SLURM_CONF is missing): run tools/slurm/start_cluster.sh --nodes $srun_nodes" >&2; exit 2; }
    fi
    ;;
  mpiexec)
    bazel_build
    launcher=$bin_dir/tools/mpiexec/mpiexec
    ;;
  openmpi)
    other_mpi_build mpicc.openmpi mpicxx.openmpi
    launcher="mpirun.openmpi --allow-run-as-root --oversubscribe"
    export MPI_TEST_IGNORE_STDERR=1
    ;;
  abi)
    abi_prefix=${MINIMPI_ABI_PREFIX:-}
    [[ -x $abi_prefix/bin/mpicc_abi ]] || { echo "run_all: abi mode needs MINIMPI_ABI_PREFIX, an installation with bin/mpicc_abi (bazel run //:install -- PREFIX)" >&2; exit 2; }
    other_mpi_build "$abi_prefix/bin/mpicc_abi" "$abi_prefix/bin/mpicxx_abi" "$filter"
    # A program built for the standard ABI must need its library only.
    for program in "$program_dir"/*; do
      needed=$(readelf -d "$program" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
      if ! grep -qx libmpi_abi.so.1 <<<"$needed" || grep -qx libmpi.so <<<"$needed"; then
        echo "run_all: $program needs [$(echo $needed)], not libmpi_abi.so.1 alone" >&2
        exit 1
      fi
      echo "abi: ${program##*/} needs libmpi_abi.so.1 ($(ldd "$program" | grep -o '/[^ ]*libmpi_abi.so.1'))"
    done
    if [[ ${ABI_LAUNCHER:-mpiexec} == srun ]]; then
      launcher="srun --mpi=pmix --overcommit --kill-on-bad-exit=1 ${SRUN_OPTIONS:-}"
    else
      launcher=$abi_prefix/bin/mpiexec
    fi
    ;;
  mpich)
    other_mpi_build mpicc.mpich mpicxx.mpich
    launcher="mpirun.mpich"
    export MPI_TEST_IGNORE_STDERR=1
    ;;
  *)
    sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
    ;;
esac

passed=0
failed=0
failed_names=()
while IFS=$'\t' read -r -a fields; do
  [[ ${#fields[@]} -ge 7 ]] || continue
  name=${fields[0]} ranks=${fields[1]} expect=${fields[2]} timeout_s=${fields[3]}
  regex=${fields[4]} program=${fields[5]} env_list=${fields[6]}
  args=("${fields[@]:7}")
  [[ $name =~ $filter ]] || continue
  if [[ -n ${MPI_TEST_EXCLUDE:-} && $name =~ $MPI_TEST_EXCLUDE ]]; then continue; fi
  env_options=()
  if [[ $env_list != "-" ]]; then
    IFS=, read -r -a env_entries <<<"$env_list"
    for entry in "${env_entries[@]}"; do env_options+=("--env=$entry"); done
  fi
  log=$log_dir/$name.log
  case_launcher=$launcher
  if [[ $mode == srun && ${srun_nodes:-1} -gt 1 ]]; then
    # Spread over min(SRUN_NODES, ranks) nodes, the ranks in even blocks.
    nodes=$((ranks < srun_nodes ? ranks : srun_nodes))
    if [[ -n ${SRUN_ONE_NODE_CASES:-} && $name =~ $SRUN_ONE_NODE_CASES ]]; then nodes=1; fi
    case_launcher="$launcher -N $nodes"
    # srun warns and ignores --ntasks-per-node when it does not divide the
    # ranks; its block distribution then fills nodes as evenly (3 ranks on 2
    # nodes: 2+1, 5: 3+2, 7: 4+3; checked on the simulated cluster).
    if ((ranks % nodes == 0)); then case_launcher+=" --ntasks-per-node=$((ranks / nodes))"; fi
  fi
  if "$runner" "${env_options[@]}" --timeout="$timeout_s" "$case_launcher" "$ranks" "$expect" "$regex" \
    "$program_dir/$program" "${args[@]}" </dev/null >"$log" 2>&1; then
    passed=$((passed + 1))
    echo "PASS $name ($(tail -n 1 "$log" | grep -o '[0-9.]*s)$' | tr -d ')'))"
  else
    failed=$((failed + 1))
    failed_names+=("$name")
    echo "FAIL $name (log: $log)"
    tail -n 15 "$log" | sed 's/^/    /'
  fi
done <"$manifest"

[[ $failed -eq 0 ]] || echo "failed: ${failed_names[*]}"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 && $passed -gt 0 ]]
