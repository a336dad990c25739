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
#include <cstdint>
#include <functional>
#include <vector>

#include "mpi/objects/comm.h"
#include "mpi/p2p/point_to_point.h"

namespace minimpi::coll {

// Every rank contributes `bytes` bytes; `gathered` receives size * bytes,
// ordered by rank.
void AllgatherBytes(p2p::PointToPoint& p2p, Communicator& comm,
                    const void* contribution, size_t bytes, void* gathered);

// Dissemination barrier: ceil(log2 size) rounds of empty messages.
void Barrier(p2p::PointToPoint& p2p, Communicator& comm);

// --- Communicator creation and topologies (issue 8).

// Rank i contributes counts[i] bytes; `gathered` receives them back to back
// in rank order (MPI_Dist_graph_create's edge exchange).
void AllgathervBytes(p2p::PointToPoint& p2p, Communicator& comm,
                     const void* contribution,
                     const std::vector<size_t>& counts, void* gathered);

// The tag of an exchange among the members of a group, from
// MPI_Comm_create_group's tag (0..MINIMPI_TAG_UB): a one-to-one map onto
// tags that no collective sequence number takes (those are 0..2^30-1) and
// that are not the wildcard (-1). So the exchange never meets a collective
// on the parent, nor an exchange with another tag among overlapping
// members.
int32_t GroupExchangeTag(int tag);

// Allgather among some members of `comm` only: `members` are their ranks in
// comm in order, this process is members[my_index], and every message
// carries `tag` (GroupExchangeTag); comm's collective sequence is not
// touched. `gathered` receives members.size() * bytes.
void AllgatherBytesAmong(p2p::PointToPoint& p2p, Communicator& comm,
                         const std::vector<int>& members, int my_index,
                         int32_t tag, const void* contribution, size_t bytes,
                         void* gathered);

// A nonblocking AllgatherBytes (comm's next collective): returns its
// request at once. `on_complete` runs as the schedule's completion work
// (Schedule::AtCompletion: VCI lock held, no p2p, no user code), and owns
// whatever must outlive the exchange; `contribution` and `gathered` must
// stay valid until it runs (MPI_Comm_idup).
vci::Request* StartAllgatherBytes(p2p::PointToPoint& p2p, Communicator& comm,
                                  const void* contribution, size_t bytes,
                                  void* gathered,
                                  std::function<void()> on_complete);

// Broadcast of `bytes` bytes at `buffer` from `root` (binomial, blocking).
void BcastBytes(p2p::PointToPoint& p2p, Communicator& comm, void* buffer,
                size_t bytes, int root);

// Swaps byte strings of any length with rank `peer` of `comm` (a rank of
// the remote group on an intercommunicator) in comm's collective context
// under `tag`, blocking; returns what the peer sent. Used by the leaders of
// intercommunicator constructions.
std::vector<std::byte> ExchangeBytes(p2p::PointToPoint& p2p, Communicator& comm,
                                     int peer, int32_t tag, const void* data,
                                     size_t bytes);

}  // namespace minimpi::coll

#endif  // MINIMPI_MPI_COLL_BASIC_H_
