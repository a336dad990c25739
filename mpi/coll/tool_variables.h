// What collectives show a tool through MPI_T (mpi/tool/registry.h), per
// communicator (bound to MPI_T_BIND_MPI_COMM), one element per collective
// kind in coll::Collective's order (barrier, bcast, reduce, allreduce,
// gather, gatherv, scatter, scatterv, allgather, allgatherv, alltoall,
// alltoallv, reduce_scatter, reduce_scatter_block, scan, exscan):
//   coll_algorithm        STATE, MPI_INT with the enumeration
//                         coll_algorithms: the algorithm the last call of
//                         each kind ran ("none" before the first; "shm" is
//                         the node path, every other name a point-to-point
//                         schedule, "intercomm" an intercommunicator's);
//   coll_calls            COUNTER: calls that chose an algorithm (every
//                         blocking and nonblocking call; a persistent call
//                         at MPI_*_init, or at each start when its schedule
//                         is rebuilt then);
//   coll_node_path_calls  COUNTER: those of them that took the node path.
//
// Owned by: mpi/coll. Called by: mpi/bindings/tool_catalogue.cc (the
// registration) and the places a collective's algorithm is chosen
// (Build, RunOnNode, NodeStartedCall::For).
#ifndef MINIMPI_MPI_COLL_TOOL_VARIABLES_H_
#define MINIMPI_MPI_COLL_TOOL_VARIABLES_H_

#include "mpi/coll/algorithms.h"
#include "mpi/objects/comm.h"

namespace minimpi::coll {

void RegisterCollectiveToolVariables();

// A call on `comm` of `entry`'s collective runs `algorithm`, one of
// `entry`'s.
void NoteAlgorithm(Communicator& comm, const CollectiveAlgorithms& entry,
                   const Algorithm& algorithm);
// It runs on the node path ("shm").
void NoteNodePath(Communicator& comm, Collective collective);
// It runs an intercommunicator's schedule.
void NoteIntercomm(Communicator& comm, Collective collective);

}  // namespace minimpi::coll

#endif  // MINIMPI_MPI_COLL_TOOL_VARIABLES_H_
