// MINIMPI_PART_LOGGP=probe: LogGP parameters measured inside one process,
// at the first partitioned init, from the operations net/shm is made of —
// without a peer, because an init must not wait for one. The loggp_probe
// tool measures the real thing between two ranks (Netgauge's PRTT method);
// this is its quick stand-in:
//   o_s, g  the cost of one small cross-memory write (process_vm_writev of
//           8 bytes into our own memory: the system call a write costs),
//   G       the per-byte cost of a 4 MiB cross-memory write,
//   L       half the round trip of a cache line between two threads (what a
//           ring cell's handoff costs),
//   o_r     the cost of reading a 64-byte ring cell and its payload pointer.
//
// Owned by: mpi/part. Called by: partitioned.cc.
#ifndef MINIMPI_MPI_PART_LOOPBACK_PROBE_H_
#define MINIMPI_MPI_PART_LOOPBACK_PROBE_H_

#include "mpi/part/model/loggp.h"

namespace minimpi::part {

LogGPParameters MeasureLoopbackLogGP();

}  // namespace minimpi::part

#endif  // MINIMPI_MPI_PART_LOOPBACK_PROBE_H_
