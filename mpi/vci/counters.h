// Counters a tool reads (MPI_T performance variables, mpi/tool/registry.h)
// while the data paths keep counting, and the table that says which link
// (self, shared memory, tcp, ib) carries traffic to each rank.
//
// Why two kinds of counter: a counter written only under one lock (a VCI's)
// or by the one thread that owns its object needs no atomic
// read-modify-write, only a load and a store that a reader on another
// thread may see at any moment: OwnedCounter, a plain add on x86 that
// ThreadSanitizer accepts. A counter several threads bump without a common
// lock (waiters sleeping on one VCI) takes a relaxed fetch_add:
// SharedCounter, kept off the small-message path.
//
// Owned by: mpi/vci. Used by: the VCIs' outboxes and waits, mpi/coll and
// mpi/rma for their per-object counters.
#ifndef MINIMPI_MPI_VCI_COUNTERS_H_
#define MINIMPI_MPI_VCI_COUNTERS_H_

#include <atomic>
#include <cstdint>
#include <vector>

#include "mpi/match/context_counters.h"
#include "net/transport.h"

namespace minimpi::vci {

// Bumped by one writer at a time (under a lock, or by the owning thread).
// The matching engines' counter (mpi/match/context_counters.h) is the same
// idea; mpi/match depends on nothing of minimpi's, so the VCIs use it.
using OwnedCounter = match::OwnedCount;

class SharedCounter {
 public:
  void Add(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t Read() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

// One counter per link kind (net::Link), indexed by it.
struct LinkCounters {
  OwnedCounter by_link[net::kNumLinks];
  void Add(net::Link link, uint64_t n = 1) {
    by_link[static_cast<int>(link)].Add(n);
  }
  uint64_t Read(net::Link link) const {
    return by_link[static_cast<int>(link)].Read();
  }
};

// Which link carries traffic to each of the job's ranks, asked of the
// transport once at setup so a message costs one load to classify. Ranks
// past the table (other jobs' processes, or before it is filled) ask the
// transport.
class LinkTable {
 public:
  void Fill(const net::Transport& transport, int world_size) {
    by_rank_.resize(world_size);
    for (int rank = 0; rank < world_size; ++rank) {
      by_rank_[rank] = transport.LinkTo(rank);
    }
  }
  net::Link Of(const net::Transport& transport, int rank) const {
    if (static_cast<size_t>(rank) < by_rank_.size()) [[likely]] {
      return by_rank_[rank];
    }
    return transport.LinkTo(rank);
  }

 private:
  std::vector<net::Link> by_rank_;
};

}  // namespace minimpi::vci

#endif  // MINIMPI_MPI_VCI_COUNTERS_H_
