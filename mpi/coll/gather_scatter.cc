// Gather(v) and Scatter(v): the rooted collectives that move data without
// combining it.
//
//   gather      linear: the root receives every block directly, one round.
//               binomial: each subtree collects its ranks' blocks, contiguous
//               in root-relative order, and forwards them to its parent; the
//               root rotates them into place. log2 n rounds: small blocks,
//               many ranks.
//   gatherv     linear (block sizes differ per rank, so a tree would need
//               every rank to know every count; linear needs none of that).
//   scatter     linear and binomial, the mirror images of gather's.
//   scatterv    linear.
//
// Blocks are count * extent bytes (the predefined types are contiguous).
// Every receive is posted with the size this rank expects, so counts that
// disagree between ranks surface as MPI_ERR_TRUNCATE.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

#include "mpi/coll/families.h"

namespace minimpi::coll {
namespace {

size_t Bytes(int64_t count, size_t extent) {
  return static_cast<size_t>(count) * extent;
}

// Ranks relative to the root, so a tree has the same shape for every root.
int Relative(int rank, int root, int n) { return (rank - root + n) % n; }
int Absolute(int relative, int root, int n) { return (relative + root) % n; }

// The lowest set bit of a non-root relative rank, i.e. the distance to its
// parent in the binomial tree; n for the root, whose subtree is everything.
int ParentDistance(int relative, int n) {
  if (relative == 0) return n;
  return relative & -relative;
}

// How many relative ranks the subtree rooted at `relative` covers:
// [relative, relative + SubtreeSize).
int SubtreeSize(int relative, int n) {
  return std::min(ParentDistance(relative, n), n - relative);
}

// --- Gather -----------------------------------------------------------------

// The size of one rank's block as this rank sees it: the root knows the
// receive side, everyone else only its own send side.
size_t GatherBlock(const Communicator& comm, const Arguments& arguments) {
  return comm.rank == arguments.root
             ? Bytes(arguments.receive_count, arguments.receive_extent)
             : Bytes(arguments.send_count, arguments.send_extent);
}

// The root's own block, unless MPI_IN_PLACE left it in the receive buffer.
void CopyRootBlockForGather(Schedule& schedule, const Arguments& arguments,
                            std::byte* destination, size_t block) {
  if (arguments.in_place) return;
  schedule.Copy(
      arguments.send_buffer, destination,
      std::min(block, Bytes(arguments.send_count, arguments.send_extent)));
}

std::unique_ptr<Schedule> LinearGather(Communicator& comm,
                                       const Arguments& arguments) {
  const size_t block = GatherBlock(comm, arguments);
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kGather, block);
  if (comm.rank != arguments.root) {
    schedule->Send(arguments.send_buffer, block, arguments.root);
    return schedule;
  }
  auto* receive = static_cast<std::byte*>(arguments.receive_buffer);
  for (int peer = 0; peer < comm.size; ++peer) {
    if (peer == comm.rank) continue;
    schedule->Receive(receive + peer * block, block, peer);
  }
  CopyRootBlockForGather(*schedule, arguments, receive + comm.rank * block,
                         block);
  return schedule;
}

std::unique_ptr<Schedule> BinomialGather(Communicator& comm,
                                         const Arguments& arguments) {
  const size_t block = GatherBlock(comm, arguments);
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kGather, block);
  const int n = comm.size;
  const int root = arguments.root;
  const int me = Relative(comm.rank, root, n);
  const int parent_distance = ParentDistance(me, n);
  const int subtree = SubtreeSize(me, n);

  if (me == 0) {
    // Children's subtrees land straight in the receive buffer, except the
    // one (at most) whose ranks wrap past n - 1: it goes through scratch and
    // is split in two afterwards. That split is the final rotation.
    auto* receive = static_cast<std::byte*>(arguments.receive_buffer);
    struct Wrapped {
      std::byte* scratch = nullptr;
      int first = 0;  // absolute rank of its first block
      int count = 0;
    } wrapped;
    CopyRootBlockForGather(*schedule, arguments, receive + root * block, block);
    for (int distance = 1; distance < n; distance <<= 1) {
      const int first = Absolute(distance, root, n);
      const int count = SubtreeSize(distance, n);
      if (first + count <= n) {
        schedule->Receive(receive + first * block, count * block, first);
      } else {
        wrapped = {schedule->Scratch(count * block), first, count};
        schedule->Receive(wrapped.scratch, count * block, first);
      }
    }
    if (wrapped.scratch != nullptr) {
      schedule->EndRound();
      const int tail = n - wrapped.first;  // blocks before the wrap
      schedule->Copy(wrapped.scratch, receive + wrapped.first * block,
                     tail * block);
      schedule->Copy(wrapped.scratch + tail * block, receive,
                     (wrapped.count - tail) * block);
    }
    return schedule;
  }

  const int parent = Absolute(me - parent_distance, root, n);
  if (subtree == 1) {  // a leaf sends its own block as it lies
    schedule->Send(arguments.send_buffer, block, parent);
    return schedule;
  }
  // Collect the subtree's blocks in relative order, own block first.
  std::byte* collected = schedule->Scratch(subtree * block);
  schedule->Copy(arguments.send_buffer, collected, block);
  for (int distance = 1; distance < parent_distance && me + distance < n;
       distance <<= 1) {
    schedule->Receive(collected + distance * block,
                      SubtreeSize(me + distance, n) * block,
                      Absolute(me + distance, root, n));
  }
  schedule->EndRound();
  schedule->Send(collected, subtree * block, parent);
  return schedule;
}

std::unique_ptr<Schedule> LinearGatherv(Communicator& comm,
                                        const Arguments& arguments) {
  const size_t own_bytes = Bytes(arguments.send_count, arguments.send_extent);
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kGather, own_bytes);
  if (comm.rank != arguments.root) {
    schedule->Send(arguments.send_buffer, own_bytes, arguments.root);
    return schedule;
  }
  auto* receive = static_cast<std::byte*>(arguments.receive_buffer);
  const size_t extent = arguments.receive_extent;
  for (int peer = 0; peer < comm.size; ++peer) {
    std::byte* target =
        receive + Bytes(arguments.receive_displacements[peer], extent);
    const size_t bytes = Bytes(arguments.receive_counts[peer], extent);
    if (peer != comm.rank) {
      schedule->Receive(target, bytes, peer);
    } else if (!arguments.in_place) {
      schedule->Copy(arguments.send_buffer, target, std::min(bytes, own_bytes));
    }
  }
  return schedule;
}

const char* ChooseGather(const Communicator& comm, const Arguments& arguments) {
  // The tree saves the root n - log2 n message latencies but copies each
  // block up to log2 n times: worth it while blocks are small.
  return comm.size >= 4 && GatherBlock(comm, arguments) <= 2048 ? "binomial"
                                                                : "linear";
}

const char* ChooseGatherv(const Communicator&, const Arguments&) {
  return "linear";
}

// --- Scatter ----------------------------------------------------------------

size_t ScatterBlock(const Communicator& comm, const Arguments& arguments) {
  return comm.rank == arguments.root
             ? Bytes(arguments.send_count, arguments.send_extent)
             : Bytes(arguments.receive_count, arguments.receive_extent);
}

// The root's own block, unless MPI_IN_PLACE says to leave it in the send
// buffer.
void CopyRootBlockForScatter(Schedule& schedule, const Arguments& arguments,
                             const std::byte* source, size_t block) {
  if (arguments.in_place) return;
  schedule.Copy(source, arguments.receive_buffer,
                std::min(block, Bytes(arguments.receive_count,
                                      arguments.receive_extent)));
}

std::unique_ptr<Schedule> LinearScatter(Communicator& comm,
                                        const Arguments& arguments) {
  const size_t block = ScatterBlock(comm, arguments);
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kScatter, block);
  if (comm.rank != arguments.root) {
    schedule->Receive(arguments.receive_buffer, block, arguments.root);
    return schedule;
  }
  const auto* send = static_cast<const std::byte*>(arguments.send_buffer);
  for (int peer = 0; peer < comm.size; ++peer) {
    if (peer == comm.rank) continue;
    schedule->Send(send + peer * block, block, peer);
  }
  CopyRootBlockForScatter(*schedule, arguments, send + comm.rank * block,
                          block);
  return schedule;
}

std::unique_ptr<Schedule> BinomialScatter(Communicator& comm,
                                          const Arguments& arguments) {
  const size_t block = ScatterBlock(comm, arguments);
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kScatter, block);
  const int n = comm.size;
  const int root = arguments.root;
  const int me = Relative(comm.rank, root, n);
  const int parent_distance = ParentDistance(me, n);
  const int subtree = SubtreeSize(me, n);

  if (me == 0) {
    // Each child's subtree is a contiguous run of the send buffer, except
    // the one (at most) whose ranks wrap past n - 1: it is first joined in
    // scratch (the rotation, done up front, before any send).
    const auto* send = static_cast<const std::byte*>(arguments.send_buffer);
    CopyRootBlockForScatter(*schedule, arguments, send + root * block, block);
    int highest = 1;
    while (highest * 2 < n) highest <<= 1;
    std::vector<const std::byte*> sources(highest + 1);
    for (int distance = 1; distance < n; distance <<= 1) {
      const int first = Absolute(distance, root, n);
      const int count = SubtreeSize(distance, n);
      sources[distance] = send + first * block;
      if (first + count > n) {
        std::byte* joined = schedule->Scratch(count * block);
        const int tail = n - first;  // blocks before the wrap
        schedule->Copy(send + first * block, joined, tail * block);
        schedule->Copy(send, joined + tail * block, (count - tail) * block);
        sources[distance] = joined;
      }
    }
    schedule->EndRound();
    // Largest subtree first: its branch is the deepest.
    for (int distance = highest; distance >= 1 && distance < n;
         distance >>= 1) {
      schedule->Send(sources[distance], SubtreeSize(distance, n) * block,
                     Absolute(distance, root, n));
    }
    return schedule;
  }

  const int parent = Absolute(me - parent_distance, root, n);
  if (subtree == 1) {  // a leaf receives its own block where it belongs
    schedule->Receive(arguments.receive_buffer, block, parent);
    return schedule;
  }
  // Receive the subtree's blocks in relative order, own block first, then
  // pass each child its part.
  std::byte* received = schedule->Scratch(subtree * block);
  schedule->Receive(received, subtree * block, parent);
  schedule->EndRound();
  for (int distance = parent_distance / 2; distance >= 1; distance >>= 1) {
    if (me + distance >= n) continue;
    schedule->Send(received + distance * block,
                   SubtreeSize(me + distance, n) * block,
                   Absolute(me + distance, root, n));
  }
  schedule->Copy(received, arguments.receive_buffer, block);
  return schedule;
}

std::unique_ptr<Schedule> LinearScatterv(Communicator& comm,
                                         const Arguments& arguments) {
  const size_t own_bytes =
      Bytes(arguments.receive_count, arguments.receive_extent);
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kScatter, own_bytes);
  if (comm.rank != arguments.root) {
    schedule->Receive(arguments.receive_buffer, own_bytes, arguments.root);
    return schedule;
  }
  const auto* send = static_cast<const std::byte*>(arguments.send_buffer);
  const size_t extent = arguments.send_extent;
  for (int peer = 0; peer < comm.size; ++peer) {
    const std::byte* source =
        send + Bytes(arguments.send_displacements[peer], extent);
    const size_t bytes = Bytes(arguments.send_counts[peer], extent);
    if (peer != comm.rank) {
      schedule->Send(source, bytes, peer);
    } else if (!arguments.in_place) {
      schedule->Copy(source, arguments.receive_buffer,
                     std::min(bytes, own_bytes));
    }
  }
  return schedule;
}

const char* ChooseScatter(const Communicator& comm,
                          const Arguments& arguments) {
  return comm.size >= 4 && ScatterBlock(comm, arguments) <= 2048 ? "binomial"
                                                                 : "linear";
}

const char* ChooseScatterv(const Communicator&, const Arguments&) {
  return "linear";
}

}  // namespace

void AddGatherScatter(std::vector<CollectiveAlgorithms>& registry) {
  registry.push_back(
      {Collective::kGather,
       "gather",
       {{"linear", "the root receives every block directly, one round",
         LinearGather},
        {"binomial",
         "subtrees forward their blocks up a binomial tree, log2 n rounds",
         BinomialGather}},
       ChooseGather});
  registry.push_back(
      {Collective::kGatherv,
       "gatherv",
       {{"linear", "the root receives every block directly, one round",
         LinearGatherv}},
       ChooseGatherv});
  registry.push_back(
      {Collective::kScatter,
       "scatter",
       {{"linear", "the root sends every block directly, one round",
         LinearScatter},
        {"binomial", "subtrees' blocks descend a binomial tree, log2 n rounds",
         BinomialScatter}},
       ChooseScatter});
  registry.push_back(
      {Collective::kScatterv,
       "scatterv",
       {{"linear", "the root sends every block directly, one round",
         LinearScatterv}},
       ChooseScatterv});
}

}  // namespace minimpi::coll
