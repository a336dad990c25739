// Node topology and process binding through hwloc: how many cores this
// process may use, and pinning a rank to one of them.
//
// Owned by: runtime/. Called by: mpi/ at MPI_Init (BindToCore when
// MINIMPI_BIND_TO=core, so binding works the same under mpiexec and srun;
// NumCores to decide whether ranks oversubscribe the node).
#ifndef MINIMPI_RUNTIME_TOPOLOGY_H_
#define MINIMPI_RUNTIME_TOPOLOGY_H_

#include <string>
#include <utility>
#include <vector>

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

// The hardware the calling process runs on (MPI_Get_hw_resource_info): for
// each hwloc object type present, outermost first (Machine, Package, Die,
// NUMANode, L3Cache, L2Cache, L1Cache, Core, PU), its name as hwloc prints
// it and how many objects of it hold a hardware thread the process is bound
// to (its allowed cpuset when unbound). Empty if hwloc fails.
std::vector<std::pair<std::string, int>> HardwareResources();

}  // namespace minimpi::runtime

#endif  // MINIMPI_RUNTIME_TOPOLOGY_H_
