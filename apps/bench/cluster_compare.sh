#!/usr/bin/env bash
# Runs minimpi's benchmarks across the nodes of the simulated Slurm cluster
# (tools/slurm/start_cluster.sh) and prints markdown tables against Open
# MPI's TCP path on the same cluster, from one run of this script:
#   minimpi   installed with `bazel run //:install` into a temporary prefix
#             (or --prefix), compiled with its mpicc; no setting, so its
#             transport is `auto`: shared memory between ranks of one node,
#             tcp between nodes (the caller's MINIMPI_* variables, if any,
#             are passed on and listed above the tables)
#   Open MPI  Debian's mpicc.openmpi (4.1.4), with OMPI_MCA_pml=ob1
#             OMPI_MCA_btl=self,vader,tcp and OMPI_MCA_btl_tcp_if_include =
#             the cluster's subnet: TCP between nodes, vader inside one;
#             and OMPI_MCA_mpi_yield_when_idle=1 for a job of more ranks
#             than the machine has cores, as mpirun.openmpi --oversubscribe
#             sets it on one node (each simulated node claims 8 CPUs, so
#             Open MPI cannot tell; without it, 4 spinning ranks on 2 cores
#             make a 4-rank barrier take milliseconds); minimpi likewise gets
#             MINIMPI_WAIT_SPIN_US=0 MINIMPI_WAIT_YIELD_US=50 for such jobs,
#             what its auto policy picks when it sees ranks outnumber cores
#             (it takes its node's ranks from the launcher, so the simulated
#             nodes hide the sharing from it too)
# Every job is `srun -N NODES --ntasks-per-node=K --mpi=pmix` under
# SLURM_CONF=/run/minimpi-cluster/slurm.conf (Open MPI 4.1.4 starts under
# Slurm 22.05's pmix plugin directly; no mpirun, no ssh). The programs are
# the other scripts' (pingpong.c, ep_rate.c, collectives.c, partitioned.c,
# dslash.c), built with the same flags and read the same way.
#
# Tables (all ratios are oriented so that ABOVE 1 IS BETTER FOR MINIMPI:
# Open MPI's time / minimpi's time, or minimpi's rate / Open MPI's rate):
#   1  ping-pong, 2 ranks on 2 nodes: half round-trip latency (us) and
#      bandwidth (size / latency, GB/s), 8 B .. 8 MiB; ratio = Open MPI
#      latency / minimpi latency (= minimpi bandwidth / Open MPI bandwidth);
#      targets: 8 B latency at most 0.8x Open MPI's (ratio >= 1.25),
#      bandwidth from 1 MiB at least 1.5x Open MPI's (ratio >= 1.5)
#   2a message rate (ep_rate.c, M msgs/s, windows of 64 nonblocking sends),
#      processes: 1 pair (2 ranks, 1 per node) and 2 pairs (4 ranks, 2 per
#      node, every pair crossing nodes); ratio = minimpi / Open MPI
#   2b 2 pairs as 2 threads in each of 2 ranks (1 per node): threads
#      sharing the rank (MPI_COMM_WORLD, tag = pair) in minimpi and Open MPI,
#      and minimpi endpoints (MPIX_Comm_create_endpoints, one per thread);
#      ratios = endpoints / each threads column; target: at least 1.5 for
#      both
#   3  collectives, 4 ranks on 2 nodes (2 per node): latency per call (us),
#      barrier, bcast, allreduce and alltoall at a few sizes (bytes per
#      rank); ratio = Open MPI / minimpi
#   4a partitioned early bird, 2 ranks, across 2 nodes and inside one node:
#      the fraction of the data at the receiver when the laggard thread
#      becomes ready (max = the most possible); minimpi partitioned (its
#      default aggregator), persistent sends per partition in both
#      libraries; target: minimpi's early bird across nodes at least 0.9x
#      its early bird inside one node
#   4b/4c perceived bandwidth (bytes / (receiver done - last thread ready),
#      MB/s, higher is better) across nodes / inside one node: minimpi
#      partitioned, persistent, single; Open MPI persistent, single;
#      ratio = best minimpi / best Open MPI. Open MPI 4.1.4 has no
#      partitioned API (MPI 3.1: no MPI_Psend_init), so it has no
#      partitioned column. The nodes share one kernel, so partitioned.c
#      runs with --clock shared: one CLOCK_MONOTONIC dates both sides.
#   5  Dslash proxy (dslash.c), 4 ranks on 2 nodes (2 per node), T OpenMP
#      threads per rank: minimpi master, threads, endpoints, partitioned;
#      Open MPI master, threads; us per iteration: compute, pack+post,
#      wait+unpack, comm (= the two), total; ratios = Open MPI master's
#      comm (total) / the row's
# Ping-pong, message rate, collectives and Dslash take the best of R runs
# per cell (R = --reps, default 3; each program already takes the best of
# its own trials), the two libraries interleaved run by run; the
# partitioned runs report medians over their rounds and run once. A cell
# reads fail when every run of it failed (its stderr is shown as it
# happens), hang when a run of it was killed at --timeout, n/a when the
# library has no such mode, "-" when a ratio lacks a number.
#
#   usage: apps/bench/cluster_compare.sh [--quick] [--reps R]
#                                        [--tables LIST] [--threads T]
#                                        [--timeout S] [--prefix DIR]
#                                        [--raw DIR]
#     --quick    every table from tiny runs (1 rep, few sizes, few rounds):
#                checks that it all works, measures little (under a minute)
#     --reps     runs per cell for tables 1, 2, 3 and 5 (default 3; quick 1)
#     --tables   which tables, comma separated, from pingpong, rate, coll,
#                part, dslash (default all)
#     --threads  OpenMP threads per rank for Dslash (default 4)
#     --timeout  limit for one job in seconds (default 150; quick 90); a job
#                killed at it reads hang, and its case is not run again
#     --prefix   an existing minimpi installation (bin/mpicc) instead of
#                installing one
#     --raw      keep every job's output (TABLE_LIB_CASE_rN.txt/.err) and the
#                builds' logs in DIR
#   BAZEL        the bazel command (default: bazel)
# The cluster: used as it is when `srun -N 2 --mpi=pmix true` works;
# otherwise started with tools/slurm/start_cluster.sh (as root) and, if
# this script started it, stopped at the end. A job that fails while the
# cluster went away or was restarted (by someone else) is run once more
# when the cluster answers again. About 3 to 4 minutes on 2 cores
# (--quick: under a minute), plus --timeout for each case that hangs.
# The nodes are network namespaces on one kernel: across-node traffic is
# veth over a bridge, every rank shares the same cores, so the numbers say
# how the libraries' TCP paths and waiting compare, not what a real network
# gives. Exits non-zero when a build or a job failed; the tables are
# printed all the same.
set -uo pipefail

repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)"
# shellcheck disable=SC2034  # bazel: read by bench_setup.sh's install_minimpi
read -r -a bazel <<<"${BAZEL:-bazel}"
quick=0
reps=""
tables="pingpong,rate,coll,part,dslash"
threads=4
timeout_s=""
prefix=""
raw_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; shift ;;
    --reps) reps="$2"; shift 2 ;;
    --tables) tables="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --prefix) prefix="$2"; shift 2 ;;
    --raw) raw_dir="$2"; shift 2 ;;
    *) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
for t in ${tables//,/ }; do
  case "${t}" in pingpong | rate | coll | part | dslash) ;;
    *) echo "--tables: pingpong, rate, coll, part, dslash" >&2; exit 2 ;;
  esac
done
case "${reps}${threads}${timeout_s}" in *[!0-9]*) echo "--reps, --threads, --timeout: whole numbers" >&2; exit 2 ;; esac
want() { case ",${tables}," in *",$1,"*) return 0 ;; esac; return 1; }

# --- sizes of a quick and a full run -------------------------------------------
if [ "${quick}" = 1 ]; then
  : "${reps:=1}" "${timeout_s:=90}"
  pp_max=$((1 << 20)) pp_iterations=200
  rate_args=(--quick --sizes "8,4096")
  coll_max=1024 coll_sizes="8 1024"
  part_args=(--quick --partitions 8 --bytes "1K,64K,1M")
  dslash_args=(--lattice 8x8x8x16 --iters 3 --warmup 1)
else
  : "${reps:=3}" "${timeout_s:=150}"
  pp_max=$((8 << 20)) pp_iterations=2000
  rate_args=(--sizes "8,512,4096,65536")
  coll_max=$((1 << 20)) coll_sizes="8 1024 65536 1048576"
  part_args=(--partitions "8,16" --bytes 1K:16M)
  dslash_args=(--lattice 16x16x16x16 --iters 20 --warmup 2)
fi
[ "${reps}" -ge 1 ] || { echo "--reps: at least 1" >&2; exit 2; }

status=0
note() { echo "cluster_compare: $*" >&2; }
# shellcheck source=apps/bench/bench_setup.sh
source "${repo}/apps/bench/bench_setup.sh"
# shellcheck source=apps/bench/cluster_setup.sh
source "${repo}/apps/bench/cluster_setup.sh"
# The other srun calls (the header's) see the cluster too.
export SLURM_CONF="${CLUSTER_CONF}"
libs="minimpi openmpi"
# One line per job: TABLE LIB CASE REP ok|fail FILE (FILE without .txt).
manifest="${raw_dir}/manifest.txt"
: >"${manifest}"

# --- builds ------------------------------------------------------------------
# Each program with each library's compiler, with the flags its own compare
# script uses: ${work}/bin/PROGRAM_LIB.
declare -A sources=(
  [pingpong]=apps/bench/pingpong.c [ep_rate]=apps/bench/ep_rate.c
  [collectives]=apps/bench/collectives.c [partitioned]=apps/bench/partitioned.c
  [dslash]=apps/dslash/dslash.c)
declare -A cflags=(
  [pingpong]="-O2" [ep_rate]="-std=c11 -O2 -pthread" [collectives]="-O2"
  [partitioned]="-O2 -pthread" [dslash]="-std=c11 -O2 -fopenmp")
declare -A compilers=([openmpi]=mpicc.openmpi)

build() {  # build PROGRAM LIB
  local program="$1" lib="$2" cc="${compilers[$2]}"
  local log="${raw_dir}/build_${program}_${lib}.log"
  mkdir -p "${work}/bin"
  if ! command -v "${cc}" >/dev/null 2>&1; then
    note "${lib}: ${cc} not found"
    return 1
  fi
  # shellcheck disable=SC2086  # the flags are words
  if ! "${cc}" ${cflags[${program}]} -o "${work}/bin/${program}_${lib}" \
      "${repo}/${sources[${program}]}" >"${log}" 2>&1; then
    tail -n 20 "${log}" >&2
    note "${lib}: building ${program} failed"
    return 1
  fi
}

# --- jobs --------------------------------------------------------------------
# job TABLE LIB CASE REP NODES PER_NODE [VAR=VALUE...] -- PROGRAM ARGS...:
# one srun job of NODES x PER_NODE ranks running ${work}/bin/PROGRAM_LIB,
# its output in raw_dir/TABLE_LIB_CASE_rREP.txt (.err for stderr; .txt is
# renamed .failed when the job fails). Open MPI gets its TCP settings. A
# job that fails while the cluster went away or was started again (by
# someone else) is run once more once the cluster answers. Records the
# outcome in the manifest.
job() {
  local table="$1" lib="$2" case_name="$3" rep="$4" nodes="$5" per_node="$6"
  shift 6
  local -a env_vars=()
  while [ "$1" != "--" ]; do env_vars+=("$1"); shift; done
  shift
  local program="$1"; shift
  local out="${raw_dir}/${table}_${lib}_${case_name}_r${rep}"
  local -a job_env
  cluster_job_env "${lib}" $((nodes * per_node))
  if [ ! -x "${work}/bin/${program}_${lib}" ]; then
    echo "${table} ${lib} ${case_name} ${rep} fail ${out}" >>"${manifest}"
    return 1
  fi
  # A case that hung once is not run again: its later runs would only hang.
  if grep -q "^${table} ${lib} ${case_name} [0-9]* hang " "${manifest}"; then
    note "${table}: ${lib} ${case_name}: skipped (it hung before)"
    return 1
  fi
  note "${table}: ${lib} ${case_name} (run ${rep}/${reps_of_table}, ${nodes} node(s) x ${per_node})"
  local rc=0
  cluster_srun "${table}: ${lib} ${case_name}" "${out}" "${timeout_s}" \
    "${nodes}" "${per_node}" "${env_vars[@]}" "${job_env[@]}" -- \
    "${work}/bin/${program}_${lib}" "$@" || rc=$?
  if [ "${rc}" != 0 ]; then
    mv -f "${out}.txt" "${out}.failed"
    local outcome=fail
    case "${rc}" in 124 | 137) outcome=hang ;; esac
    echo "${table} ${lib} ${case_name} ${rep} ${outcome} ${out}" >>"${manifest}"
    return 1
  fi
  echo "${table} ${lib} ${case_name} ${rep} ok ${out}" >>"${manifest}"
}

# runs TABLE PROGRAM CASE_SPEC...: every case of a table, reps_of_table
# times, the libraries interleaved (minimpi, Open MPI, minimpi, ...). A
# CASE_SPEC is "LIBS|CASE|NODES|PER_NODE|ENV|ARGS": LIBS "minimpi openmpi"
# or one of them, ENV VAR=VALUE words (or nothing), ARGS the program's
# arguments (both word-split).
reps_of_table=1
runs() {
  local table="$1" program="$2" rep spec lib spec_libs case_name nodes per_node env_words args
  shift 2
  for ((rep = 1; rep <= reps_of_table; rep++)); do
    for spec in "$@"; do
      IFS='|' read -r spec_libs case_name nodes per_node env_words args <<<"${spec}"
      for lib in ${spec_libs}; do
        # shellcheck disable=SC2086  # ENV and ARGS are lists of words
        job "${table}" "${lib}" "${case_name}" "${rep}" "${nodes}" "${per_node}" \
          ${env_words} -- "${program}" ${args} || status=1
      done
    done
  done
}

# ok_jobs TABLE: "LIB CASE REP FILE" for each successful job of the table;
# failed_cases TABLE: "LIB CASE" for each case with a failed job.
ok_jobs() { awk -v t="$1" '$1 == t && $5 == "ok" { print $2, $3, $4, $6 }' "${manifest}"; }
failed_cases() { awk -v t="$1" '$1 == t && ($5 == "fail" || $5 == "hang") { print $2, $3, $5 }' "${manifest}" | sort -u; }

# Shared by the table programs: human sizes, ratios, cells.
awk_lib='
  function human(b) {
    if (b >= 1048576) return (b / 1048576) " MiB"
    if (b >= 1024) return (b / 1024) " KiB"
    return b " B"
  }
  function ratio(a, b) { return (a != "" && b != "" && a + 0 > 0 && b + 0 > 0) ? sprintf("%.2f", a / b) : "-" }
  # keep_min/keep_max KEY VALUE: the best of the reps.
  function keep_min(k, v) { if (!(k in val) || v + 0 < val[k] + 0) val[k] = v }
  function keep_max(k, v) { if (!(k in val) || v + 0 > val[k] + 0) val[k] = v }
  function get(k) { return (k in val) ? val[k] : "" }
  # A missing cell: hang when its job timed out, fail when it failed
  # every time, else n/a.
  function cell(k, fmt, lib, case_name) {
    if (k in val) return sprintf(fmt, val[k])
    return ((lib SUBSEP case_name) in failed) ? failed[lib, case_name] : "n/a"
  }
  function read_failed(file,    line, w) {
    while ((getline line < file) > 0) {
      split(line, w, " ")
      if (failed[w[1], w[2]] != "hang") failed[w[1], w[2]] = w[3]
    }
  }
'

# --- 1: ping-pong ------------------------------------------------------------
table_pingpong() {
  reps_of_table="${reps}"
  runs pingpong pingpong "${libs}|cross|2|1||${pp_max} 8 ${pp_iterations}"
  failed_cases pingpong >"${work}/failed_pingpong"
  ok_jobs pingpong | while read -r lib case_name rep file; do
    awk -v lib="${lib}" '!/^#/ && NF >= 3 { print lib, $1, $2 }' "${file}.txt"
  done | awk -v failed_file="${work}/failed_pingpong" "${awk_lib}"'
    { keep_min($1 SUBSEP $2, $3); sizes[$2 + 0] = 1 }
    function bw(l, s) { return ((l SUBSEP s) in val && val[l, s] > 0) ? sprintf("%.3f", s / val[l, s] / 1e3) : "" }
    END {
      read_failed(failed_file)
      print "### 1. Ping-pong across nodes (2 ranks, one per node)\n"
      print "Half round-trip latency in us (lower is better) and bandwidth = size / latency in GB/s (higher is better), best of the runs. Ratio = Open MPI latency / minimpi latency = minimpi bandwidth / Open MPI bandwidth: **higher is better for minimpi**. Targets: 8 B latency at most 0.8x Open MPI'"'"'s (ratio >= 1.25); bandwidth from 1 MiB at least 1.5x Open MPI'"'"'s (ratio >= 1.5).\n"
      print "| size | lat minimpi | lat Open MPI | BW minimpi | BW Open MPI | ratio | target |"
      print "|---:|---:|---:|---:|---:|---:|---|"
      for (s = 8; s <= 1073741824; s *= 2) {
        if (!(s in sizes)) continue
        r = ratio(get("openmpi" SUBSEP s), get("minimpi" SUBSEP s))
        target = ""
        if (s == 8) target = r == "-" ? "no number" : (r + 0 >= 1.25 ? "met (>= 1.25)" : "missed (< 1.25)")
        if (s >= 1048576) target = r == "-" ? "no number" : (r + 0 >= 1.5 ? "met (>= 1.5)" : "missed (< 1.5)")
        b1 = bw("minimpi", s); b2 = bw("openmpi", s)
        printf "| %s | %s | %s | %s | %s | %s | %s |\n", human(s),
          cell("minimpi" SUBSEP s, "%.2f", "minimpi", "cross"), cell("openmpi" SUBSEP s, "%.2f", "openmpi", "cross"),
          b1 == "" ? cell("minimpi" SUBSEP s, "", "minimpi", "cross") : b1,
          b2 == "" ? cell("openmpi" SUBSEP s, "", "openmpi", "cross") : b2, r, target
      }
      print ""
    }'
}

# --- 2: message rate -----------------------------------------------------------
table_rate() {
  reps_of_table="${reps}"
  local a="${rate_args[*]}"
  runs rate ep_rate \
    "${libs}|processes_p1|2|1||--mode processes --pairs 1 ${a}" \
    "${libs}|processes_p2|2|2||--mode processes --pairs 2 ${a}" \
    "${libs}|threads_p2|2|1||--mode threads --pairs 2 ${a}" \
    "minimpi|endpoints_p2|2|1||--mode endpoints --pairs 2 ${a}"
  failed_cases rate >"${work}/failed_rate"
  # minimpi provides MULTIPLE and endpoints: a mode unavailable is a fault.
  local lib case_name rep file
  while read -r lib case_name rep file; do
    if [ "${lib}" = minimpi ] && grep -q 'status=unavailable' "${file}.txt"; then
      note "rate: minimpi ${case_name}: $(grep -m1 -o 'reason=[^ ]*' "${file}.txt")"
      status=1
    fi
  done < <(ok_jobs rate)
  ok_jobs rate | while read -r lib case_name rep file; do
    awk -v lib="${lib}" -v c="${case_name}" '
      /^mode=/ && / rate=/ { for (i = 1; i <= NF; i++) if ($i ~ /^(size|rate)=/) { split($i, kv, "="); f[kv[1]] = kv[2] }
                             print lib, c, f["size"], f["rate"] }' "${file}.txt"
  done | awk -v failed_file="${work}/failed_rate" "${awk_lib}"'
    { keep_max($1 SUBSEP $2 SUBSEP $3, $4 / 1e6); sizes[$3 + 0] = 1 }
    function c(lib, k, s) { return cell(lib SUBSEP k SUBSEP s, "%.3g", lib, k) }
    function g(lib, k, s) { return get(lib SUBSEP k SUBSEP s) }
    END {
      read_failed(failed_file)
      n = 0; for (s in sizes) list[++n] = s + 0
      for (i = 2; i <= n; i++) for (j = i; j > 1 && list[j - 1] > list[j]; j--) { t = list[j]; list[j] = list[j - 1]; list[j - 1] = t }
      print "### 2a. Message rate across nodes: processes\n"
      print "M msgs/s (1e6 messages per second, all pairs together; higher is better), best of the runs. 1 pair: 2 ranks, one per node; 2 pairs: 4 ranks, 2 per node, rank i sends to rank i+2 on the other node. Ratio = minimpi / Open MPI: **higher is better for minimpi**.\n"
      print "| size | minimpi 1 pair | Open MPI 1 pair | ratio | minimpi 2 pairs | Open MPI 2 pairs | ratio |"
      print "|---:|---:|---:|---:|---:|---:|---:|"
      for (i = 1; i <= n; i++) {
        s = list[i]
        printf "| %s | %s | %s | %s | %s | %s | %s |\n", human(s),
          c("minimpi", "processes_p1", s), c("openmpi", "processes_p1", s), ratio(g("minimpi", "processes_p1", s), g("openmpi", "processes_p1", s)),
          c("minimpi", "processes_p2", s), c("openmpi", "processes_p2", s), ratio(g("minimpi", "processes_p2", s), g("openmpi", "processes_p2", s))
      }
      print "\n### 2b. Message rate across nodes: 2 threads per process\n"
      print "2 ranks, one per node, 2 threads each; thread t of rank 0 sends to thread t of rank 1. threads: the threads share the rank (MPI_COMM_WORLD, tag = pair); endpoints: minimpi MPIX_Comm_create_endpoints, one endpoint per thread. M msgs/s, best of the runs. Ratios = minimpi endpoints / the threads column: **higher is better for minimpi**. Target: endpoints at least 1.5x both threads columns.\n"
      print "| size | minimpi threads | Open MPI threads | minimpi endpoints | ep / minimpi threads | ep / Open MPI threads | target |"
      print "|---:|---:|---:|---:|---:|---:|---|"
      for (i = 1; i <= n; i++) {
        s = list[i]
        r1 = ratio(g("minimpi", "endpoints_p2", s), g("minimpi", "threads_p2", s))
        r2 = ratio(g("minimpi", "endpoints_p2", s), g("openmpi", "threads_p2", s))
        target = (r1 == "-" || r2 == "-") ? "no number" : ((r1 + 0 >= 1.5 && r2 + 0 >= 1.5) ? "met (both >= 1.5)" : "missed")
        printf "| %s | %s | %s | %s | %s | %s | %s |\n", human(s),
          c("minimpi", "threads_p2", s), c("openmpi", "threads_p2", s), c("minimpi", "endpoints_p2", s), r1, r2, target
      }
      print ""
    }'
}

# --- 3: collectives ------------------------------------------------------------
table_coll() {
  reps_of_table="${reps}"
  runs coll collectives "${libs}|4ranks|2|2||${coll_max}"
  failed_cases coll >"${work}/failed_coll"
  ok_jobs coll | while read -r lib case_name rep file; do
    awk -v lib="${lib}" '!/^#/ && NF == 3 { print lib, $1, $2, $3 }' "${file}.txt"
  done | awk -v failed_file="${work}/failed_coll" -v shown="${coll_sizes}" "${awk_lib}"'
    { keep_min($1 SUBSEP $2 SUBSEP $3, $4) }
    function c(lib, coll, s) { return cell(lib SUBSEP coll SUBSEP s, "%.1f", lib, "4ranks") }
    END {
      read_failed(failed_file)
      print "### 3. Collectives, 4 ranks on 2 nodes (2 per node)\n"
      print "Latency in us per call (lower is better), best of the runs (each the best of 3 trials); size = bytes per rank (the bcast message, the allreduce vector of doubles, one alltoall block). Ratio = Open MPI / minimpi: **higher is better for minimpi**.\n"
      print "| collective | size | minimpi | Open MPI | ratio |"
      print "|---|---:|---:|---:|---:|"
      printf "| barrier | - | %s | %s | %s |\n", c("minimpi", "barrier", 0), c("openmpi", "barrier", 0),
        ratio(get("openmpi" SUBSEP "barrier" SUBSEP 0), get("minimpi" SUBSEP "barrier" SUBSEP 0))
      nc = split("bcast allreduce alltoall", colls, " "); ns = split(shown, sz, " ")
      for (k = 1; k <= nc; k++) for (i = 1; i <= ns; i++) {
        co = colls[k]; s = sz[i]
        printf "| %s | %s | %s | %s | %s |\n", co, human(s), c("minimpi", co, s), c("openmpi", co, s),
          ratio(get("openmpi" SUBSEP co SUBSEP s), get("minimpi" SUBSEP co SUBSEP s))
      }
      print ""
    }'
}

# --- 4: partitioned ------------------------------------------------------------
table_part() {
  reps_of_table=1
  local a="${part_args[*]} --mode bandwidth,earlybird --clock shared"
  runs part partitioned \
    "minimpi|cross|2|1||${a} --variant part,persistent,single" \
    "openmpi|cross|2|1||${a} --variant persistent,single" \
    "minimpi|node|1|2||${a} --variant part,persistent,single" \
    "openmpi|node|1|2||${a} --variant persistent,single"
  failed_cases part >"${work}/failed_part"
  ok_jobs part | while read -r lib case_name rep file; do
    awk -v lib="${lib}" -v c="${case_name}" '
      /^variant=/ { delete f; for (i = 1; i <= NF; i++) { eq = index($i, "="); f[substr($i, 1, eq - 1)] = substr($i, eq + 1) }
                    print lib, c, f["variant"], f["mode"], f["partitions"], f["bytes"], f["value"], (("max" in f) ? f["max"] : "-") }' "${file}.txt"
  done | awk -v failed_file="${work}/failed_part" "${awk_lib}"'
    { k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4 SUBSEP $5 SUBSEP $6; keep_max(k, $7); if ($8 != "-") mx[$5, $6] = $8
      pts[$5, $6] = 1; parts[$5 + 0] = 1 }
    function key(lib, place, v, mode, p, b) { return lib SUBSEP place SUBSEP v SUBSEP mode SUBSEP p SUBSEP b }
    function c(lib, place, v, mode, p, b, fmt) { return cell(key(lib, place, v, mode, p, b), fmt, lib, place) }
    function g(lib, place, v, mode, p, b) { return get(key(lib, place, v, mode, p, b)) }
    function better(x, y) { return x == "" ? y : (y == "" ? x : (x + 0 > y + 0 ? x : y)) }
    function bw_table(place, title,    p, b, bm, bo) {
      print title "\n"
      print "| P | size | minimpi partitioned | minimpi persistent | minimpi single | Open MPI persistent | Open MPI single | best minimpi / best Open MPI |"
      print "|---:|---:|---:|---:|---:|---:|---:|---:|"
      for (p = 1; p <= 1024; p *= 2) for (b = 1; b <= 1073741824; b *= 2) {
        if (!((p, b) in pts) || !(p in parts)) continue
        bm = better(better(g("minimpi", place, "part", "bandwidth", p, b), g("minimpi", place, "persistent", "bandwidth", p, b)), g("minimpi", place, "single", "bandwidth", p, b))
        bo = better(g("openmpi", place, "persistent", "bandwidth", p, b), g("openmpi", place, "single", "bandwidth", p, b))
        printf "| %d | %s | %s | %s | %s | %s | %s | %s |\n", p, human(b),
          c("minimpi", place, "part", "bandwidth", p, b, "%.1f"), c("minimpi", place, "persistent", "bandwidth", p, b, "%.1f"),
          c("minimpi", place, "single", "bandwidth", p, b, "%.1f"), c("openmpi", place, "persistent", "bandwidth", p, b, "%.1f"),
          c("openmpi", place, "single", "bandwidth", p, b, "%.1f"), ratio(bm, bo)
      }
      print ""
    }
    END {
      read_failed(failed_file)
      print "### 4a. Partitioned early bird, 2 ranks: across 2 nodes and inside one node\n"
      print "Fraction of the data at the receiver when the laggard thread becomes ready (mean over the rounds; higher is better); max = the share not owned by the laggard, the most possible. P = partitions, one sender thread each; 1 ms compute per round, the laggard 10% later. minimpi partitioned = MPI_Psend_init with its default aggregator; persistent = one persistent send per partition (Open MPI 4.1.4 has no partitioned API). across / inside = minimpi partitioned across nodes / inside one node; target: at least 0.90 (the early bird across nodes as inside one).\n"
      print "| P | size | max | minimpi part across | minimpi part inside | across / inside | target | minimpi persistent across | Open MPI persistent across | Open MPI persistent inside |"
      print "|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|"
      for (p = 1; p <= 1024; p *= 2) for (b = 1; b <= 1073741824; b *= 2) {
        if (!((p, b) in pts)) continue
        r = ratio(g("minimpi", "cross", "part", "earlybird", p, b), g("minimpi", "node", "part", "earlybird", p, b))
        x = g("minimpi", "cross", "part", "earlybird", p, b); y = g("minimpi", "node", "part", "earlybird", p, b)
        # Both zero (nothing early anywhere) compares as equal.
        if (r == "-" && x != "" && y != "" && x + 0 == 0 && y + 0 == 0) r = "1.00 (both 0)"
        target = r == "-" ? "no number" : (r + 0 >= 0.9 ? "met" : "missed")
        printf "| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", p, human(b), ((p, b) in mx) ? mx[p, b] : "n/a",
          c("minimpi", "cross", "part", "earlybird", p, b, "%.3f"), c("minimpi", "node", "part", "earlybird", p, b, "%.3f"), r, target,
          c("minimpi", "cross", "persistent", "earlybird", p, b, "%.3f"), c("openmpi", "cross", "persistent", "earlybird", p, b, "%.3f"),
          c("openmpi", "node", "persistent", "earlybird", p, b, "%.3f")
      }
      print ""
      bw_table("cross", "### 4b. Partitioned perceived bandwidth across 2 nodes (MB/s)\n\nbytes / (receiver completion - the last thread'"'"'s ready stamp), median of the rounds, higher is better; the nodes share one kernel, so one CLOCK_MONOTONIC dates both sides (partitioned.c --clock shared). Ratio = the best minimpi column / the best Open MPI column: **higher is better for minimpi**.")
      bw_table("node", "### 4c. Partitioned perceived bandwidth inside one node (MB/s), for comparison\n\nThe same, both ranks on one node (minimpi: shared memory; Open MPI: vader).")
    }'
}

# --- 5: Dslash -----------------------------------------------------------------
table_dslash() {
  reps_of_table="${reps}"
  local a="${dslash_args[*]}"
  runs dslash dslash \
    "minimpi|4ranks|2|2|OMP_NUM_THREADS=${threads}|--mode all ${a}" \
    "openmpi|4ranks|2|2|OMP_NUM_THREADS=${threads}|--mode master,threads ${a}"
  failed_cases dslash >"${work}/failed_dslash"
  # Rows of the program's table: "| mode | compute | pack_post | wait_unpack
  # | comm | total |" (us per iteration, max over ranks); each (library,
  # mode) keeps the run with the lowest total.
  ok_jobs dslash | while read -r lib case_name rep file; do
    awk -v lib="${lib}" -v rep="${rep}" -F '|' '
      NF == 8 && $2 !~ /mode|---/ { gsub(/ /, "", $2); print lib, $2, rep, $3 + 0, $4 + 0, $5 + 0, $6 + 0, $7 + 0 }' "${file}.txt"
  done | awk -v failed_file="${work}/failed_dslash" -v threads="${threads}" -v lattice="${dslash_args[1]}" "${awk_lib}"'
    { k = $1 SUBSEP $2; if (!(k in best) || $8 < best[k]) { best[k] = $8; row[k] = $4 " " $5 " " $6 " " $7 " " $8 } }
    END {
      read_failed(failed_file)
      print "### 5. Dslash proxy, 4 ranks on 2 nodes (2 per node)\n"
      printf "Lattice %s, %d OpenMP threads per rank, unbound. us per iteration (each rank'"'"'s mean, then the maximum over ranks, so comm and total are maxima taken separately); of the runs, the one with the lowest total. comm = pack+post + wait+unpack. Ratios = Open MPI master'"'"'s comm (total) / the row'"'"'s: **higher is better for the row**.\n\n", lattice, threads
      print "| mode | library | compute | pack+post | wait+unpack | comm | total | Open MPI master comm / comm | Open MPI master total / total |"
      print "|---|---|---:|---:|---:|---:|---:|---:|---:|"
      split("", base)
      if (("openmpi" SUBSEP "master") in row) split(row["openmpi" SUBSEP "master"], base, " ")
      nm = split("master threads endpoints partitioned", modes, " ")
      for (m = 1; m <= nm; m++) for (l = 1; l <= 2; l++) {
        lib = l == 1 ? "minimpi" : "openmpi"; k = lib SUBSEP modes[m]
        if (!(k in row)) {
          # Open MPI runs master and threads only (no endpoints, no MPI 4).
          if (lib == "openmpi" && m > 2) continue
          if ((lib SUBSEP "4ranks") in failed) { f = failed[lib, "4ranks"]; printf "| %s | %s | %s | %s | %s | %s | %s | - | - |\n", modes[m], lib, f, f, f, f, f }
          else printf "| %s | %s | n/a | n/a | n/a | n/a | n/a | - | - |\n", modes[m], lib
          continue
        }
        split(row[k], v, " ")
        printf "| %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %s | %s |\n", modes[m], lib, v[1], v[2], v[3], v[4], v[5],
          ratio(base[4], v[4]), ratio(base[5], v[5])
      }
      print ""
    }'
}

# --- the run -------------------------------------------------------------------
if ! ensure_cluster; then
  note "no cluster: nothing can run"
  exit 1
fi
install_minimpi || { note "minimpi install failed; its cells will read fail"; status=1; }
compilers[minimpi]="${prefix}/bin/mpicc"
for program in pingpong ep_rate collectives partitioned dslash; do
  case "${program}" in
    pingpong) want pingpong || continue ;;
    ep_rate) want rate || continue ;;
    collectives) want coll || continue ;;
    partitioned) want part || continue ;;
    dslash) want dslash || continue ;;
  esac
  for lib in ${libs}; do build "${program}" "${lib}" || status=1; done
done

out="${work}/tables.md"
: >"${out}"
if want pingpong; then table_pingpong >>"${out}"; fi
if want rate; then table_rate >>"${out}"; fi
if want coll; then table_coll >>"${out}"; fi
if want part; then table_part >>"${out}"; fi
if want dslash; then table_dslash >>"${out}"; fi

# --- the tables --------------------------------------------------------------
echo "Libraries:"
for lib in ${libs}; do
  version="$(awk '$5 == "ok" { print $6 ".txt" }' "${manifest}" | grep "_${lib}_" |
    xargs -r grep -h -m1 '^# library:' 2>/dev/null | head -n 1 | sed 's/^# library: *//')"
  echo "- ${lib}: ${version:-n/a (did not run)}"
done
minimpi_vars="$(env | grep '^MINIMPI_' | tr '\n' ' ')"
echo "- minimpi settings: ${minimpi_vars:-none (transport auto: shm inside a node, tcp between nodes)}"
cluster_settings
echo "- Launch: srun --mpi=pmix under SLURM_CONF=${CLUSTER_CONF} ($(srun --version 2>/dev/null)); nodes: $(timeout 30 srun -N 2 hostname 2>/dev/null | sort | tr '\n' ' ')"
echo "- Machine: ${cores} cores, simulated nodes (network namespaces, veth over a bridge, one kernel); $([ "${quick}" = 1 ] && echo "quick run" || echo "full run"), ${reps} run(s) per cell"
echo
cat "${out}"
if grep -q -E ' (fail|hang) ' "${manifest}"; then
  echo "Failed jobs (hang: killed after ${timeout_s} s, its later runs skipped; the output under --raw, as .failed and .err):"
  awk '$5 == "fail" || $5 == "hang" { printf "- %s %s %s run %s: %s\n", $1, $2, $3, $4, $5 }' "${manifest}"
fi
exit "${status}"
