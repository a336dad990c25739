// Collectives on intercommunicators: the schedules of intercomm.cc.
//
// Owned by: mpi/coll. Called by: Build (algorithms.cc) and the bindings.
#ifndef MINIMPI_MPI_COLL_INTERCOMM_H_
#define MINIMPI_MPI_COLL_INTERCOMM_H_

#include <memory>

#include "mpi/coll/algorithms.h"
#include "mpi/coll/schedule.h"
#include "mpi/objects/comm.h"

namespace minimpi::coll {

// False for the collectives MPI defines on intracommunicators only (scan,
// exscan).
bool DefinedOnIntercommunicators(Collective collective);

// The schedule of `collective` on the intercommunicator `comm`. Rooted
// calls take MPI_ROOT, MPI_PROC_NULL or a remote rank as the root; counts
// arrays are indexed by remote rank except Reduce_scatter's (local ranks).
std::unique_ptr<Schedule> BuildIntercomm(Collective collective,
                                         Communicator& comm,
                                         const Arguments& arguments);

}  // namespace minimpi::coll

#endif  // MINIMPI_MPI_COLL_INTERCOMM_H_
