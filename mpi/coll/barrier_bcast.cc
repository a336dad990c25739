// Barrier and Bcast.
//
//   barrier  dissemination: ceil(log2 n) rounds; in round k every rank
//            signals rank + 2^k and hears from rank - 2^k.
//   bcast    binomial: the root's data descends a binomial tree in log2 n
//            rounds; scatter_allgather (van de Geijn): the root scatters n
//            pieces down the binomial tree, then a ring allgather reassembles
//            them everywhere, moving about 2x the message per rank instead of
//            log2 n times it: the better choice for large messages.
#include <algorithm>
#include <memory>

#include "mpi/coll/families.h"

namespace minimpi::coll {
namespace {

std::unique_ptr<Schedule> DisseminationBarrier(Communicator& comm,
                                               const Arguments&) {
  auto schedule = std::make_unique<Schedule>(comm, CollectiveKind::kBarrier, 0);
  const int n = comm.size;
  for (int distance = 1; distance < n; distance *= 2) {
    schedule->Send(nullptr, 0, (comm.rank + distance) % n);
    schedule->Receive(nullptr, 0, (comm.rank - distance + n) % n);
    schedule->EndRound();
  }
  return schedule;
}

// Ranks relative to the root, so the tree is the same for every root.
int Relative(int rank, int root, int n) { return (rank - root + n) % n; }
int Absolute(int relative, int root, int n) { return (relative + root) % n; }

std::unique_ptr<Schedule> BinomialBcast(Communicator& comm,
                                        const Arguments& arguments) {
  const size_t bytes = static_cast<size_t>(arguments.count) * arguments.extent;
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kBcast, bytes);
  const int n = comm.size;
  const int me = Relative(comm.rank, arguments.root, n);
  void* buffer = arguments.receive_buffer;
  // Receive from the parent: `me` with its lowest set bit cleared.
  int mask = 1;
  while (mask < n && (me & mask) == 0) mask <<= 1;
  if (me != 0) {
    schedule->Receive(buffer, bytes, Absolute(me - mask, arguments.root, n));
    schedule->EndRound();
  }
  // Then send to the children me + m for every m below that bit, the
  // largest subtree first so the deepest branch starts earliest.
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (me + mask < n) {
      schedule->Send(buffer, bytes, Absolute(me + mask, arguments.root, n));
    }
  }
  return schedule;
}

std::unique_ptr<Schedule> ScatterAllgatherBcast(Communicator& comm,
                                                const Arguments& arguments) {
  const size_t bytes = static_cast<size_t>(arguments.count) * arguments.extent;
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kBcast, bytes);
  const int n = comm.size;
  const int root = arguments.root;
  const int me = Relative(comm.rank, root, n);
  auto* buffer = static_cast<std::byte*>(arguments.receive_buffer);
  // Piece i (of relative rank i) is [i * chunk, (i + 1) * chunk) clipped.
  const size_t chunk = (bytes + n - 1) / n;
  auto begin = [&](int piece) { return std::min(bytes, piece * chunk); };
  auto span = [&](int first, int count) {  // bytes of pieces [first, +count)
    return begin(std::min(n, first + count)) - begin(first);
  };

  // Scatter: a subtree rooted at relative rank r covers pieces [r, r + 2^k).
  int mask = 1;
  while (mask < n && (me & mask) == 0) mask <<= 1;
  if (me != 0) {
    schedule->Receive(buffer + begin(me), span(me, mask),
                      Absolute(me - mask, root, n));
    schedule->EndRound();
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    const int child = me + mask;
    if (child < n) {
      schedule->Send(buffer + begin(child), span(child, mask),
                     Absolute(child, root, n));
    }
  }
  schedule->EndRound();

  // Ring allgather of the pieces: in step s, pass piece (me - s) to the
  // right and take piece (me - s - 1) from the left.
  const int right = Absolute((me + 1) % n, root, n);
  const int left = Absolute((me - 1 + n) % n, root, n);
  for (int step = 0; step < n - 1; ++step) {
    const int out_piece = (me - step + n) % n;
    const int in_piece = (me - step - 1 + n) % n;
    schedule->Send(buffer + begin(out_piece), span(out_piece, 1), right);
    schedule->Receive(buffer + begin(in_piece), span(in_piece, 1), left);
    schedule->EndRound();
  }
  return schedule;
}

const char* ChooseBarrier(const Communicator&, const Arguments&) {
  return "dissemination";
}

const char* ChooseBcast(const Communicator& comm, const Arguments& arguments) {
  const size_t bytes = static_cast<size_t>(arguments.count) * arguments.extent;
  // The pipeline of pieces pays off once the message dwarfs the n - 1
  // extra message latencies of the ring.
  return comm.size > 2 && bytes >= (size_t{256} << 10) ? "scatter_allgather"
                                                       : "binomial";
}

}  // namespace

void AddBarrierAndBcast(std::vector<CollectiveAlgorithms>& registry) {
  registry.push_back(
      {Collective::kBarrier,
       "barrier",
       {{"dissemination", "ceil(log2 n) rounds of empty messages to rank + 2^k",
         DisseminationBarrier}},
       ChooseBarrier});
  registry.push_back(
      {Collective::kBcast,
       "bcast",
       {{"binomial", "binomial tree from the root, log2 n rounds",
         BinomialBcast},
        {"scatter_allgather",
         "binomial scatter of n pieces, then a ring allgather (large "
         "messages)",
         ScatterAllgatherBcast}},
       ChooseBcast});
}

}  // namespace minimpi::coll
