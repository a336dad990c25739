// The topology a communicator may carry (MPI-4.1 chapter 8): Cartesian,
// graph or distributed graph. A Topology answers the questions the
// neighbourhood collectives ask (who are my neighbours, in which buffer
// order, in which order to post the sends) and is copied when its
// communicator is duplicated.
//
// Owned by: mpi/topo. Called by: mpi/objects/comm.h (each Communicator owns one),
// the topology bindings and the neighbourhood collectives in mpi/coll.
#ifndef MINIMPI_MPI_TOPO_TOPOLOGY_H_
#define MINIMPI_MPI_TOPO_TOPOLOGY_H_

#include <memory>
#include <vector>

namespace minimpi::topo {

enum class TopologyKind { kCartesian, kGraph, kDistGraph };

// The neighbours of one process, as MPI-4.1 section 8.6 lays out the
// buffers of a neighbourhood collective. Entries may be MPI_PROC_NULL (the
// edge of a non-periodic grid): nothing is sent or received for that
// block, and the receive block is left untouched. A process may appear
// several times (periodic dimensions of size 1 or 2, graphs with repeated
// edges).
struct NeighborLists {
  // Block i of the receive buffer comes from sources[i].
  std::vector<int> sources;
  // Block i of the send buffer goes to destinations[i].
  std::vector<int> destinations;
  // The order in which the sends must be posted (indices into
  // destinations), receives being posted in block order. Messages between
  // one pair of processes match in posting order, so this order is what
  // pairs each block with the right block at the receiver when the same
  // process is a neighbour more than once.
  std::vector<int> send_order;
};

class Topology {
 public:
  virtual ~Topology() = default;
  virtual TopologyKind kind() const = 0;
  // A copy for a duplicated communicator (MPI_Comm_dup keeps the topology).
  virtual std::unique_ptr<Topology> Clone() const = 0;
  // The neighbours of `rank` (of the communicator this topology belongs
  // to). A distributed graph knows only its own process's neighbours and
  // ignores `rank`.
  virtual NeighborLists NeighborsOf(int rank) const = 0;
};

}  // namespace minimpi::topo

#endif  // MINIMPI_MPI_TOPO_TOPOLOGY_H_
