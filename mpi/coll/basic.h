// The few collectives the library itself needs (communicator creation,
// MPI_Barrier, MPI_Finalize), built on point-to-point in each communicator's
// collective context, so no user receive, wildcard or not, can ever match
// them. Issue 3's full collective suite replaces the algorithms; the context
// and the TrafficKind hint they hand the matching engine stay.
//
// Owned by: mpi/coll. Called by: the bindings.
#ifndef MINIMPI_MPI_COLL_BASIC_H_
#define MINIMPI_MPI_COLL_BASIC_H_

#include <cstddef>

#include "mpi/comm.h"
#include "mpi/p2p/point_to_point.h"

namespace minimpi::coll {

// Every rank contributes `bytes` bytes; `gathered` receives size * bytes,
// ordered by rank.
void AllgatherBytes(p2p::PointToPoint& p2p, Communicator& comm,
                    const void* contribution, size_t bytes, void* gathered);

// Dissemination barrier: ceil(log2 size) rounds of empty messages.
void Barrier(p2p::PointToPoint& p2p, Communicator& comm);

}  // namespace minimpi::coll

#endif  // MINIMPI_MPI_COLL_BASIC_H_
