#!/usr/bin/env bash
# Real programs give the same results across nodes as on one: runs the Dslash
# proxy (every mode: master, threads, endpoints, partitioned, each checked
# site by site against its serial reference) with 4 ranks on this node through
# mpiexec and with 4 ranks on two nodes of the simulated cluster through
# `srun -N 2 --mpi=pmix`, and compares the checksums the two runs print, mode
# by mode, digit for digit (the lattice and the decomposition are the same,
# so the floating-point sums must be too). Then the MiniAMR-like proxy, whose
# every check is exact, across the nodes.
#
# Usage: tests/cluster/same_results.sh BIN_DIR
#   BIN_DIR  Bazel's output directory (bazel-bin) holding tests/dslash,
#            tests/miniamr_like and tools/mpiexec/mpiexec
# Needs the cluster of tools/slurm/start_cluster.sh (SLURM_CONF set).
set -euo pipefail

bin_dir="$1"
scratch="$(mktemp -d)"
trap 'rm -rf "${scratch}"' EXIT
dslash_args=(--mode all --lattice 8x8x8x16 --iters 3)

checksums() { sed -nE 's/^mode=([a-z]+) status=PASS checksum=([^ ]+) .*/\1 \2/p' "$1"; }

echo "one node: mpiexec -n 4 dslash ${dslash_args[*]}"
timeout 180 "${bin_dir}/tools/mpiexec/mpiexec" -n 4 -x OMP_NUM_THREADS=2 \
  "${bin_dir}/tests/dslash" "${dslash_args[@]}" >"${scratch}/one.txt"
echo "two nodes: srun -N 2 -n 4 dslash ${dslash_args[*]}"
OMP_NUM_THREADS=2 timeout 180 srun -N 2 -n 4 --ntasks-per-node=2 --mpi=pmix \
  --kill-on-bad-exit=1 "${bin_dir}/tests/dslash" "${dslash_args[@]}" \
  >"${scratch}/two.txt"

checksums "${scratch}/one.txt" >"${scratch}/one.sums"
checksums "${scratch}/two.txt" >"${scratch}/two.sums"
cat "${scratch}/two.sums"
[ "$(wc -l <"${scratch}/one.sums")" -eq 4 ] ||
  { echo "one-node run did not pass all 4 modes:"; cat "${scratch}/one.txt"; exit 1; }
if ! diff -u "${scratch}/one.sums" "${scratch}/two.sums"; then
  echo "Dslash checksums differ between one node and two"
  exit 1
fi
echo "dslash: the same checksums in every mode on one node and on two"

timeout 120 srun -N 2 -n 4 --ntasks-per-node=2 --mpi=pmix --kill-on-bad-exit=1 \
  "${bin_dir}/tests/miniamr_like" | tee "${scratch}/amr.txt"
grep -q "^miniamr_like: all checks passed at 4 ranks" "${scratch}/amr.txt"
