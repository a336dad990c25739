// Neighbourhood collectives (MPI_Neighbor_* and MPI_Ineighbor_*, MPI-4.1
// section 8.6) as one-round schedules: every receive and every send of the
// call is posted at once, receives in block order, sends in the order the
// topology prescribes (topo::NeighborLists::send_order), so that a process
// that is a neighbour several times gets each block in the right place.
// MPI_PROC_NULL neighbours are skipped: nothing is sent, and their receive
// blocks are left untouched.
//
// A block is `count` items of a datatype at a byte displacement; one
// helper, BlockAt, says where a block's bytes travel from or to. Blocks of
// dense datatypes (items back to back) move as they lie; the others move
// in their packed form, staged in the schedule's scratch memory: a send
// block is packed when the schedule is built, a receive block is unpacked
// into the program's buffer when the collective completes. Both sides
// agree, because the packed form of any datatype is its type signature's
// bytes in order, which MPI requires the two sides to match.
//
// Owned by: mpi/coll. Called by: the neighbourhood bindings.
#ifndef MINIMPI_MPI_COLL_NEIGHBORHOOD_H_
#define MINIMPI_MPI_COLL_NEIGHBORHOOD_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "mpi/coll/schedule.h"
#include "mpi/objects/comm.h"
#include "mpi/objects/datatype.h"
#include "mpi/mpi.h"
#include "mpi/topo/topology.h"

namespace minimpi::coll {

// One block of a neighbourhood buffer.
struct NeighborBlock {
  MPI_Aint displacement = 0;  // bytes from the buffer's start
  int64_t count = 0;          // items
  const Datatype* type = nullptr;
};

// The exchange: send block i goes to neighbors.destinations[i], receive
// block i comes from neighbors.sources[i]. `kind` is the matching hint
// (allgather or alltoall).
std::unique_ptr<Schedule> BuildNeighborExchange(
    Communicator& comm, CollectiveKind kind,
    const topo::NeighborLists& neighbors, const void* send_buffer,
    const std::vector<NeighborBlock>& send_blocks, void* receive_buffer,
    const std::vector<NeighborBlock>& receive_blocks);

}  // namespace minimpi::coll

#endif  // MINIMPI_MPI_COLL_NEIGHBORHOOD_H_
