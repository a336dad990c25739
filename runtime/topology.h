// Node topology and process binding through hwloc: how many cores this
// process may use, and pinning a rank to one of them.
//
// Owned by: runtime/. Called by: mpi/ at MPI_Init (BindToCore when
// MINIMPI_BIND_TO=core, so binding works the same under mpiexec and srun;
// NumCores to decide whether ranks oversubscribe the node).
#ifndef MINIMPI_RUNTIME_TOPOLOGY_H_
#define MINIMPI_RUNTIME_TOPOLOGY_H_

#include "absl/status/status.h"

namespace minimpi::runtime {

// Number of physical cores this process may run on: cores with at least one
// hardware thread in the process's allowed cpuset (a cgroup or an existing
// binding shrinks it). Hyperthreads of one core count once. Falls back to the
// number of allowed hardware threads when hwloc reports no cores, and to 1 if
// hwloc fails altogether.
int NumCores();

// Binds the calling process (all its threads) to the hardware threads of
// core `local_rank % NumCores()`, counting only allowed cores, in hwloc's
// logical order.
absl::Status BindToCore(int local_rank);

// Moves the calling thread off the processor it runs on, onto another one
// it may use, and then allows it everywhere it could before (so the
// scheduler stays free to move it again). For a waiter that finds the peer
// it waits for on its own processor (see net::Transport::PeerMayShareCore):
// the scheduler put them together and, while other work keeps the machine
// busy, keeps them there. False when there is nowhere else to go (a thread
// bound to one processor) or the kernel refuses.
bool MoveOffCurrentCpu();

}  // namespace minimpi::runtime

#endif  // MINIMPI_RUNTIME_TOPOLOGY_H_
