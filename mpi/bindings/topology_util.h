// What the topology bindings share: finding a communicator's topology of
// one kind, publishing a communicator with its topology, checking a rank,
// and copying a list out.
//
// Owned by: mpi/bindings. Called by: topology.cc, dist_graph.cc.
#ifndef MINIMPI_MPI_BINDINGS_TOPOLOGY_UTIL_H_
#define MINIMPI_MPI_BINDINGS_TOPOLOGY_UTIL_H_

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/str_format.h"
#include "mpi/bindings/binding_util.h"
#include "mpi/bindings/comm_util.h"
#include "mpi/bindings/error_dispatch.h"
#include "mpi/topo/topology.h"

namespace minimpi {

// The communicator's topology if it is of `kind`; MPI_ERR_TOPOLOGY
// otherwise.
template <typename Topology>
inline int CheckTopology(const char* call, MPI_Comm comm,
                         topo::TopologyKind kind, Communicator** c,
                         const Topology** topology) {
  if (int error = CheckLocalCommunicator(call, comm, c)) return error;
  const topo::Topology* held = (*c)->topology.get();
  if (held != nullptr && held->kind() == kind) {
    *topology = static_cast<const Topology*>(held);
    return MPI_SUCCESS;
  }
  const char* wanted = kind == topo::TopologyKind::kCartesian ? "Cartesian"
                       : kind == topo::TopologyKind::kGraph   ? "graph"
                                                              : "distributed "
                                                                "graph";
  return RaiseError(
      *c, call, MPI_ERR_TOPOLOGY,
      absl::StrFormat("the communicator has no %s topology", wanted));
}

// Publishes a communicator a topology constructor built (or returns
// MPI_COMM_NULL for a process left out).
inline MPI_Comm PublishWithTopology(std::unique_ptr<Communicator> comm,
                                    std::unique_ptr<topo::Topology> topology) {
  if (comm == nullptr) return MPI_COMM_NULL;
  comm->topology = std::move(topology);
  return Publish(std::move(comm))->handle;
}

inline int CheckRankIn(const char* call, Communicator* c, int rank, int size) {
  if (rank >= 0 && rank < size) return MPI_SUCCESS;
  return RaiseError(
      c, call, MPI_ERR_RANK,
      absl::StrFormat("invalid rank %d (communicator size %d)", rank, size));
}

// Copies min(room, list size) entries.
inline void CopyOut(const std::vector<int>& list, int room, int* out) {
  const int count = std::min(room, static_cast<int>(list.size()));
  if (count > 0) std::copy(list.begin(), list.begin() + count, out);
}

}  // namespace minimpi

#endif  // MINIMPI_MPI_BINDINGS_TOPOLOGY_UTIL_H_
