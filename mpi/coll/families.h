// Each family of collectives adds its algorithms to the registry
// (algorithms.cc). One function per source file keeps the registry in one
// place without static-initialisation tricks.
#ifndef MINIMPI_MPI_COLL_FAMILIES_H_
#define MINIMPI_MPI_COLL_FAMILIES_H_

#include <vector>

#include "mpi/coll/algorithms.h"

namespace minimpi::coll {

// barrier_bcast.cc: Barrier, Bcast.
void AddBarrierAndBcast(std::vector<CollectiveAlgorithms>& registry);
// reductions.cc: Reduce, Allreduce.
void AddReductions(std::vector<CollectiveAlgorithms>& registry);
// reduce_scatter_scan.cc: Reduce_scatter(_block), Scan, Exscan.
void AddReduceScatterAndScans(std::vector<CollectiveAlgorithms>& registry);
// gather_scatter.cc: Gather(v), Scatter(v).
void AddGatherScatter(std::vector<CollectiveAlgorithms>& registry);
// allgather_alltoall.cc: Allgather(v), Alltoall(v).
void AddAllgatherAlltoall(std::vector<CollectiveAlgorithms>& registry);
// node_path.cc: "shm" for the collectives the node path has (after the
// others, so the automatic rules' names are found first).
void AddNodeAlgorithm(std::vector<CollectiveAlgorithms>& registry);

}  // namespace minimpi::coll

#endif  // MINIMPI_MPI_COLL_FAMILIES_H_
