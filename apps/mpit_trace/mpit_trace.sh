#!/usr/bin/env bash
# Runs an unmodified MPI program under the MPI_T tracer: every rank gets
# libmpit_trace.so preloaded, which writes DIR/mpit_trace.<rank> at
# MPI_Finalize and a summary on stderr (tools/mpit_plot draws the files).
#
#   mpit_trace [-o DIR] [-i INTERVAL_US] [-p FRAGMENTS] [-e EVENTS] -- COMMAND...
#     -o DIR          where the trace files go (default: the current directory)
#     -i INTERVAL_US  the sampling thread's period; 0 samples only around
#                     the receive-side calls the tool wraps (default 1000)
#     -p FRAGMENTS    comma-separated name fragments of the performance
#                     variables to trace (default recvq,msgq,part_)
#     -e EVENTS       comma-separated event names (default
#                     unexp_message_enqueued,unexp_message_dequeued,partition_arrived)
#   e.g. mpit_trace -o trace -- mpiexec -n 4 ./prog
#
# The program must use a shared libmpi.so (mpicc links it so). The library
# is found beside this script (PREFIX/bin/../lib), or at MPIT_TRACE_LIB.
set -euo pipefail

usage() {
  sed -n '6,14p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

dir="${PWD}"
interval=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o) [ $# -ge 2 ] || usage; dir="$2"; shift 2 ;;
    -i) [ $# -ge 2 ] || usage; interval="$2"; shift 2 ;;
    -p) [ $# -ge 2 ] || usage; export MPIT_TRACE_PVARS="$2"; shift 2 ;;
    -e) [ $# -ge 2 ] || usage; export MPIT_TRACE_EVENTS="$2"; shift 2 ;;
    --) shift; break ;;
    -h | --help) usage ;;
    *) usage ;;
  esac
done
[ $# -gt 0 ] || usage
if [ -n "${interval}" ]; then
  case "${interval}" in
    *[!0-9]*) echo "mpit_trace: -i ${interval}: not a number of microseconds" >&2; exit 2 ;;
  esac
  export MPIT_TRACE_INTERVAL_US="${interval}"
fi

lib="${MPIT_TRACE_LIB:-$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../lib" 2>/dev/null && pwd)/libmpit_trace.so}"
if [ ! -f "${lib}" ]; then
  echo "mpit_trace: ${lib} not found (set MPIT_TRACE_LIB)" >&2
  exit 1
fi
mkdir -p "${dir}"
MPIT_TRACE_DIR="$(cd -- "${dir}" && pwd)"
export MPIT_TRACE_DIR
export LD_PRELOAD="${lib}${LD_PRELOAD:+:${LD_PRELOAD}}"
exec "$@"
