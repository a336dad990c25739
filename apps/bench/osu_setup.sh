# shellcheck shell=bash disable=SC2154,SC2034,SC2004
# (SC2154: the inputs below are the caller's; SC2034: so are the arrays and
# launch_rc these functions fill; SC2004: its associative arrays' keys.)
# OSU Micro-Benchmarks 7.2 and apps/bench/thread_rate.c built with a library's
# own wrappers and run as a user runs them, figures read back: sourced by
# osu_compare.sh and ab_compare.sh after bench_setup.sh; not run on its own.
# A library is a label (minimpi, mpich, before, ...) that keys the caller's
# associative arrays cc, cxx, mpiexec (its wrappers and launcher) and
# lib_name (its name in messages).
# Expects: repo, shared_bench, work and raw_dir; osu_tarball, bench_list,
# size_list, min_size, max_size, ranks, extra_args (OSU options),
# thread_rate_args, precision (may be empty), timeout_s, cores; the
# associative arrays built ("label bench" -> 1) and no_finalize; note and
# fail functions.

# unpack_osu: unpacks osu_tarball into work and finds, for each OSU benchmark
# of bench_list (all but thread_rate), its directory: OSU's benchmarks live in
# several (c/mpi/pt2pt/standard, c/mpi/one-sided, ...), each one's found from
# its Makefile.am. Sets osu_src, bench_dir (benchmark -> directory) and
# osu_benches; exits 2 when the tarball or a benchmark is not there.
unpack_osu() {
  tar xzf "${osu_tarball}" -C "${work}" || { note "cannot unpack ${osu_tarball}"; exit 2; }
  osu_src="$(find "${work}" -maxdepth 1 -type d -name 'osu-micro-benchmarks-*' | head -n 1)"
  [ -n "${osu_src}" ] || { note "no osu-micro-benchmarks-* folder in ${osu_tarball}"; exit 2; }
  declare -gA bench_dir=()
  osu_benches=()
  local b am d
  for b in "${bench_list[@]}"; do
    [ "${b}" != thread_rate ] || continue
    am="$(grep -l -E "^${b}_SOURCES" -r "${osu_src}/c/mpi" --include=Makefile.am | head -n 1)"
    [ -n "${am}" ] || { note "no benchmark ${b} in OSU's c/mpi"; exit 2; }
    d="${am#"${osu_src}/"}"
    bench_dir[${b}]="${d%/Makefile.am}"
    osu_benches+=("${b}")
  done
}

# build_osu LABEL: configure OSU in work/build-LABEL with LABEL's wrappers and
# make the benchmarks asked for, directory by directory.
build_osu() {
  local label="$1" d b
  local log="${raw_dir}/${label}.build.log"
  local -a dirs=() targets flags=()
  [ "${#osu_benches[@]}" -gt 0 ] || return 0
  note "building OSU with ${lib_name[${label}]}'s wrappers"
  mkdir -p "${work}/build-${label}"
  [ -z "${precision}" ] || flags=(CPPFLAGS="-DFLOAT_PRECISION=${precision}")
  if ! (cd "${work}/build-${label}" &&
      "${osu_src}/configure" CC="${cc[${label}]}" CXX="${cxx[${label}]}" "${flags[@]}") \
      >"${log}" 2>&1; then
    tail -n 20 "${log}" >&2
    fail "${label}: OSU's configure failed (${log##*/})"
    return 1
  fi
  for b in "${osu_benches[@]}"; do
    case " ${dirs[*]} " in *" ${bench_dir[${b}]} "*) ;; *) dirs+=("${bench_dir[${b}]}") ;; esac
  done
  for d in "${dirs[@]}"; do
    targets=()
    for b in "${osu_benches[@]}"; do
      [ "${bench_dir[${b}]}" != "${d}" ] || targets+=("${b}")
    done
    if ! make -C "${work}/build-${label}/${d}" -j2 "${targets[@]}" >>"${log}" 2>&1; then
      tail -n 20 "${log}" >&2
      fail "${label}: building ${targets[*]} failed (${log##*/})"
      return 1
    fi
    for b in "${targets[@]}"; do built["${label} ${b}"]=1; done
  done
}

# build_program LABEL NAME: apps/bench/NAME.c (C11, pthreads) with LABEL's
# mpicc, into work/build-LABEL/NAME.
build_program() {
  local label="$1" name="$2" log="${raw_dir}/${1}.${2}.build.log"
  mkdir -p "${work}/build-${label}"
  if ! "${cc[${label}]}" -std=c11 -O2 -pthread -o "${work}/build-${label}/${name}" \
      "${repo}/apps/bench/${name}.c" >"${log}" 2>&1; then
    tail -n 20 "${log}" >&2
    fail "${label}: building ${name} failed (${log##*/})"
    return 1
  fi
  built["${label} ${name}"]=1
}

# build_thread_rate LABEL: apps/bench/thread_rate.c with LABEL's mpicc.
build_thread_rate() { build_program "$1" thread_rate; }

# build_core_to_core: builds the shared folder's core_to_core.c, the
# machine's state, measured at the start and end of every round; c2c is
# empty when it does not build, and core_to_core then reads n/a.
build_core_to_core() {
  c2c="${work}/core_to_core"
  if ! cc -O2 -pthread "${shared_bench}/core_to_core.c" -o "${c2c}" 2>"${work}/c2c.log"; then
    note "core_to_core.c did not build; the rounds' round trip will read n/a"
    c2c=""
  fi
}
core_to_core() {
  local out=""
  [ -z "${c2c}" ] || out="$("${c2c}" 2>/dev/null | awk '/round trip/ { print $4 }')"
  echo "${out:-n/a}"
}

# timed_round ROUND ORDER COMMAND...: runs COMMAND (the round's runs) between
# two core-to-core measurements and appends the round's line to
# raw_dir/rounds.tsv: ROUND, the round trip at the start and at the end, the
# seconds, ORDER. Sets c2c_start, c2c_end and round_seconds for the round's
# heading. Its locals have names of their own: COMMAND sees them (bash's
# locals are dynamically scoped), and a caller's order or r must show through.
timed_round() {
  local timed_round_id="$1" timed_round_order="$2" timed_round_start="${SECONDS}"
  shift 2
  c2c_start="$(core_to_core)"
  "$@"
  c2c_end="$(core_to_core)"
  round_seconds=$((SECONDS - timed_round_start))
  printf '%s\t%s\t%s\t%s\t%s\n' "${timed_round_id}" "${c2c_start}" "${c2c_end}" \
    "${round_seconds}" "${timed_round_order}" >>"${raw_dir}/rounds.tsv"
}

# core_to_core_range: the lowest and the highest round trip in rounds.tsv,
# "LO-HI ns" (n/a when none was measured).
core_to_core_range() {
  awk -F'\t' '{ for (i = 2; i <= 3; i++) if ($i != "n/a") {
      if (lo == "" || $i + 0 < lo) lo = $i + 0; if (hi == "" || $i + 0 > hi) hi = $i + 0 } }
    END { if (lo != "") printf "%.0f-%.0f ns", lo, hi; else print "n/a" }' "${raw_dir}/rounds.tsv"
}

# print_list TITLE ITEM...: a blank line, TITLE and the ITEMs as a markdown
# list; without ITEMs nothing, and a non-zero return.
print_list() {
  local title="$1" item
  shift
  [ $# -gt 0 ] || return 1
  echo
  echo "${title}"
  for item in "$@"; do echo "- ${item}"; done
}

# bench_ranks BENCH: thread_rate is a pair; OSU's benchmarks take --ranks.
bench_ranks() { if [ "$1" = thread_rate ]; then echo 2; else echo "${ranks}"; fi; }

# launch LABEL BENCH OUT [VAR=VALUE...]: one run as a user would start it,
# stdout to OUT.txt, stderr to OUT.err. Fails when the launcher does or the
# program printed no figure line.
launch() {
  local label="$1" b="$2" out="$3"; shift 3
  local n exe="${work}/build-${label}/thread_rate"
  local -a launcher args
  n="$(bench_ranks "${b}")"
  launcher=("${mpiexec[${label}]}")
  # Open MPI refuses more ranks than cores unless told.
  [ "${label}" != openmpi ] || [ "${n}" -le "${cores}" ] || launcher+=(--oversubscribe)
  launcher+=(-n "${n}")
  if [ "${b}" = thread_rate ]; then
    args=("${thread_rate_args[@]}")
  else
    exe="${work}/build-${label}/${bench_dir[${b}]}/${b}"
    args=(-m "${min_size}:${max_size}" "${extra_args[@]}")
    # OSU's option for threads: 2 sender and 2 receiver threads per rank.
    [ "${b}" != osu_latency_mt ] || args+=(-t 2:2)
  fi
  # MPIEXEC_TIMEOUT: all three launchers end a job that outlives it;
  # timeout(1) is the backstop.
  local rc=0 start="${SECONDS}"
  env MPIEXEC_TIMEOUT="${timeout_s}" "$@" \
    timeout --kill-after=20 "$((timeout_s + 30))" \
    "${launcher[@]}" "${exe}" "${args[@]}" \
    >"${out}.txt" 2>"${out}.err" </dev/null || rc=$?
  # For run_one: the exit status, and whether the job ran out of time (the
  # launchers' own ends of a job that outlived MPIEXEC_TIMEOUT differ).
  launch_rc="${rc}"
  launch_timed_out=0
  if [ "${rc}" = 124 ] || [ "${rc}" = 137 ] || [ $((SECONDS - start)) -ge "${timeout_s}" ]; then
    launch_timed_out=1
  fi
  grep -q -E '^[0-9]+[[:space:]]+[0-9.]+' "${out}.txt" || return 1
  [ "${rc}" != 0 ] || return 0
  # OSU 7.2's osu_latency_mt returns from main without MPI_Finalize (its
  # omb_lat_mt_session_finalize calls nothing unless OSU runs with MPI
  # sessions), after every figure is printed. The launchers take that
  # differently: minimpi's and Open MPI's fail the job, MPICH's now and then
  # kills the other rank (exit 9). For that benchmark alone a failed exit
  # after the figures counts as run (record still wants every size's
  # figure), and the summary says which launchers complained.
  if [ "${b}" = osu_latency_mt ] && [ "${launch_timed_out}" = 0 ]; then
    no_finalize[${label}]=1
    return 0
  fi
  return 1
}

# record ROUND LABEL BENCH: appends the run's figures at the sizes asked for
# to figures.tsv: round, bench, size, library, figure, kind. The kind comes
# from the output's "# Size" header: lat (a latency in us, lower is better),
# rate (a Messages/s column, which osu_mbw_mr and thread_rate print; higher
# is better) or bw (MB/s, higher is better). A size asked for and not
# printed fails the run: a figure the tables would silently lack.
record() {
  local r="$1" label="$2" b="$3" s got
  local f="${raw_dir}/round${r}/${label}.${b}.txt"
  local -a want=("${size_list[@]}")
  [ "${b}" != thread_rate ] || want=(8)  # thread_rate measures 8 B only
  got="$(awk -v r="${r}" -v b="${b}" -v lib="${label}" -v sizes="${want[*]}" '
    BEGIN { n = split(sizes, s, " "); for (i = 1; i <= n; i++) want[s[i]] = 1; kind = "bw"; col = 2 }
    /^# Size/ {
      sub(/^# */, ""); kind = "bw"; col = 2
      if ($0 ~ /Latency|\(us\)/) kind = "lat"
      for (i = 1; i <= NF; i++) if ($i == "Messages/s") { kind = "rate"; col = i }
    }
    /^#/ { next }
    NF >= col && ($1 in want) && $col ~ /^[0-9.]+$/ {
      printf "%s\t%s\t%s\t%s\t%s\t%s\n", r, b, $1, lib, $col, kind
    }' "${f}")"
  [ -z "${got}" ] || echo "${got}" >>"${raw_dir}/figures.tsv"
  for s in "${want[@]}"; do
    awk -F'\t' -v s="${s}" '$3 == s { found = 1 } END { exit !found }' <<<"${got}" ||
      fail "round ${r}: ${lib_name[${label}]}'s ${b} printed no figure for ${s} B (round${r}/${label}.${b}.txt)"
  done
}
