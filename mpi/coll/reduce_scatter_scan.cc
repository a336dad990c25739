// Reduce_scatter(_block), Scan and Exscan.
//
//   reduce_scatter  reduce_then_scatter: binomial reduce of the whole vector
//   (and _block)    to rank 0, then rank 0 sends each rank its piece (every
//                   operation); ring: ring reduce-scatter, (n-1)/n of the
//                   vector per rank (commutative operations).
//   scan, exscan    linear: the prefix travels 0 -> 1 -> ... -> n - 1
//                   (n - 1 steps, least traffic); recursive_doubling: in
//                   round k rank i sends its partial result to i + 2^k
//                   (log2 n rounds).
//
// Operand order and rounds as in reductions.cc: the lower ranks' partial
// result is always `in`.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "mpi/coll/families.h"
#include "mpi/coll/reduction_steps.h"

namespace minimpi::coll {
namespace {

using reduction::AddBinomialReduce;
using reduction::AddRingReduceScatter;
using reduction::Bytes;
using reduction::Commutative;
using reduction::Input;
using reduction::MessageBytes;

// --- Reduce_scatter and Reduce_scatter_block --------------------------------

// Item offsets of every rank's piece: receive_counts for Reduce_scatter,
// `count` each for Reduce_scatter_block.
std::vector<int64_t> PieceOffsets(int n, const Arguments& arguments) {
  std::vector<int64_t> offsets(n + 1, 0);
  for (int r = 0; r < n; ++r) {
    const int64_t items = arguments.receive_counts != nullptr
                              ? arguments.receive_counts[r]
                              : arguments.count;
    offsets[r + 1] = offsets[r] + items;
  }
  return offsets;
}

std::unique_ptr<Schedule> ReduceThenScatter(Communicator& comm,
                                            const Arguments& arguments) {
  const int n = comm.size;
  const size_t extent = arguments.extent;
  const std::vector<int64_t> offsets = PieceOffsets(n, arguments);
  const int64_t total = offsets[n];
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kReduceScatter,
                                 static_cast<size_t>(total) * extent);
  // The tree rooted at rank 0 keeps rank order for any operation.
  const void* result =
      AddBinomialReduce(*schedule, Input(arguments), total, arguments, 0);
  auto piece_bytes = [&](int r) {
    return static_cast<size_t>(offsets[r + 1] - offsets[r]) * extent;
  };
  if (comm.rank == 0) {
    for (int r = 1; r < n; ++r) {
      schedule->Send(Bytes(result) + static_cast<size_t>(offsets[r]) * extent,
                     piece_bytes(r), r);
    }
    schedule->Copy(result, arguments.receive_buffer, piece_bytes(0));
  } else {
    schedule->Receive(arguments.receive_buffer, piece_bytes(comm.rank), 0);
  }
  return schedule;
}

std::unique_ptr<Schedule> RingReduceScatter(Communicator& comm,
                                            const Arguments& arguments) {
  const int n = comm.size;
  const size_t extent = arguments.extent;
  const std::vector<int64_t> offsets = PieceOffsets(n, arguments);
  const size_t total_bytes = static_cast<size_t>(offsets[n]) * extent;
  auto schedule = std::make_unique<Schedule>(
      comm, CollectiveKind::kReduceScatter, total_bytes);
  // In place, the receive buffer holds the whole vector and can be worked
  // on directly; otherwise a copy of the input is (the input is read-only).
  std::byte* vector;
  if (arguments.in_place) {
    vector = Bytes(arguments.receive_buffer);
  } else {
    vector = schedule->Scratch(total_bytes);
    schedule->Copy(arguments.send_buffer, vector, total_bytes);
    schedule->EndRound();
  }
  AddRingReduceScatter(*schedule, arguments, vector, offsets);
  schedule->Copy(
      vector + static_cast<size_t>(offsets[comm.rank]) * extent,
      arguments.receive_buffer,
      static_cast<size_t>(offsets[comm.rank + 1] - offsets[comm.rank]) *
          extent);
  return schedule;
}

const char* ChooseReduceScatter(const Communicator& comm,
                                const Arguments& arguments) {
  const std::vector<int64_t> offsets = PieceOffsets(comm.size, arguments);
  const size_t bytes =
      static_cast<size_t>(offsets[comm.size]) * arguments.extent;
  // The tree moves the whole vector log2 n times and funnels the scatter
  // through rank 0; the ring moves (n-1)/n of it per rank in n - 1 steps.
  // Below about 32 KiB the tree's fewer message latencies win.
  constexpr size_t kRingFrom = size_t{32} << 10;
  return arguments.op->commutative() && bytes >= kRingFrom
             ? "ring"
             : "reduce_then_scatter";
}

// --- Scan and Exscan --------------------------------------------------------

std::unique_ptr<Schedule> LinearScan(Communicator& comm,
                                     const Arguments& arguments) {
  const size_t bytes = MessageBytes(arguments);
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kScan, bytes);
  const int rank = comm.rank;
  void* result = arguments.receive_buffer;
  std::byte* prefix = schedule->Scratch(bytes);
  if (!arguments.in_place) {
    schedule->Copy(arguments.send_buffer, result, bytes);
  }
  if (rank > 0) schedule->Receive(prefix, bytes, rank - 1);
  schedule->EndRound();
  if (rank > 0 && arguments.count > 0) {
    schedule->Reduce(prefix, result, arguments.count, arguments.type,
                     arguments.op);
    schedule->EndRound();
  }
  if (rank + 1 < comm.size) schedule->Send(result, bytes, rank + 1);
  return schedule;
}

std::unique_ptr<Schedule> LinearExscan(Communicator& comm,
                                       const Arguments& arguments) {
  const size_t bytes = MessageBytes(arguments);
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kScan, bytes);
  const int rank = comm.rank;
  const bool last = rank + 1 == comm.size;
  const void* input = Input(arguments);
  void* result = arguments.receive_buffer;
  if (rank == 0) {
    // Rank 0's result is undefined: its receive buffer stays untouched.
    if (!last) schedule->Send(input, bytes, 1);
    return schedule;
  }
  // Prefix of ranks [0, rank) arrives straight into the result; this
  // rank's input is combined with it in scratch for the next rank. In place
  // the input lives in the result buffer, so it is saved first.
  std::byte* onward = nullptr;
  if (!last) {
    onward = schedule->Scratch(bytes);
    schedule->Copy(input, onward, bytes);
    schedule->EndRound();
  }
  schedule->Receive(result, bytes, rank - 1);
  schedule->EndRound();
  if (!last) {
    if (arguments.count > 0) {
      schedule->Reduce(result, onward, arguments.count, arguments.type,
                       arguments.op);
      schedule->EndRound();
    }
    schedule->Send(onward, bytes, rank + 1);
  }
  return schedule;
}

// Round k: rank i sends its partial (the reduction over ranks
// [i - 2^k + 1, i], clipped at 0) to i + 2^k and receives that of i - 2^k,
// which covers the range just below its own, so `in` = received keeps rank
// order.
std::unique_ptr<Schedule> RecursiveDoublingScan(Communicator& comm,
                                                const Arguments& arguments) {
  const size_t bytes = MessageBytes(arguments);
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kScan, bytes);
  const int rank = comm.rank;
  void* partial = arguments.receive_buffer;  // becomes the inclusive prefix
  std::byte* incoming = schedule->Scratch(bytes);
  if (!arguments.in_place) {
    schedule->Copy(arguments.send_buffer, partial, bytes);
    schedule->EndRound();
  }
  for (int mask = 1; mask < comm.size; mask <<= 1) {
    const bool receives = rank - mask >= 0;
    if (rank + mask < comm.size) schedule->Send(partial, bytes, rank + mask);
    if (receives) schedule->Receive(incoming, bytes, rank - mask);
    schedule->EndRound();
    if (receives && arguments.count > 0) {
      schedule->Reduce(incoming, partial, arguments.count, arguments.type,
                       arguments.op);
      schedule->EndRound();
    }
  }
  return schedule;
}

// As the scan, plus the exclusive prefix in the receive buffer: the
// reduction over [i - 2^k + 1, i - 1], grown by each received partial.
std::unique_ptr<Schedule> RecursiveDoublingExscan(Communicator& comm,
                                                  const Arguments& arguments) {
  const size_t bytes = MessageBytes(arguments);
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kScan, bytes);
  const int rank = comm.rank;
  const int n = comm.size;
  void* exclusive = arguments.receive_buffer;  // untouched on rank 0
  std::byte* partial = schedule->Scratch(bytes);
  std::byte* incoming = schedule->Scratch(bytes);
  schedule->Copy(Input(arguments), partial, bytes);
  schedule->EndRound();
  for (int mask = 1; mask < n; mask <<= 1) {
    const bool receives = rank - mask >= 0;
    if (rank + mask < n) schedule->Send(partial, bytes, rank + mask);
    if (receives) schedule->Receive(incoming, bytes, rank - mask);
    schedule->EndRound();
    if (!receives) continue;
    if (mask == 1) {
      schedule->Copy(incoming, exclusive, bytes);  // the first piece
    } else if (arguments.count > 0) {
      schedule->Reduce(incoming, exclusive, arguments.count, arguments.type,
                       arguments.op);
    }
    // The partial is needed again only if a later round sends it.
    if (rank + 2 * mask < n && arguments.count > 0) {
      schedule->Reduce(incoming, partial, arguments.count, arguments.type,
                       arguments.op);
    }
    schedule->EndRound();
  }
  return schedule;
}

const char* ChooseScan(const Communicator& comm, const Arguments& arguments) {
  // The chain's n - 1 sequential steps cost latency; recursive doubling's
  // log2 n rounds send up to twice as much per rank. For large vectors the
  // chain's single message per rank wins.
  constexpr size_t kLinearFrom = size_t{64} << 10;
  return comm.size <= 2 || MessageBytes(arguments) >= kLinearFrom
             ? "linear"
             : "recursive_doubling";
}

}  // namespace

void AddReduceScatterAndScans(std::vector<CollectiveAlgorithms>& registry) {
  const std::vector<Algorithm> reduce_scatter_algorithms = {
      {"reduce_then_scatter",
       "binomial reduce to rank 0, then rank 0 sends each piece (any "
       "operation)",
       ReduceThenScatter},
      {"ring", "ring reduce-scatter, n - 1 steps (commutative operations)",
       RingReduceScatter, Commutative}};
  registry.push_back({Collective::kReduceScatter, "reduce_scatter",
                      reduce_scatter_algorithms, ChooseReduceScatter});
  registry.push_back({Collective::kReduceScatterBlock, "reduce_scatter_block",
                      reduce_scatter_algorithms, ChooseReduceScatter});
  registry.push_back(
      {Collective::kScan,
       "scan",
       {{"linear", "the prefix travels rank to rank, n - 1 steps", LinearScan},
        {"recursive_doubling", "log2 n rounds of partials to rank + 2^k",
         RecursiveDoublingScan}},
       ChooseScan});
  registry.push_back(
      {Collective::kExscan,
       "exscan",
       {{"linear", "the prefix travels rank to rank, n - 1 steps",
         LinearExscan},
        {"recursive_doubling", "log2 n rounds of partials to rank + 2^k",
         RecursiveDoublingExscan}},
       ChooseScan});
}

}  // namespace minimpi::coll
