// Reduce and Allreduce (Reduce_scatter and the scans: reduce_scatter_scan.cc).
//
//   reduce          binomial: partial results climb a binomial tree in
//                   log2 n rounds. A subtree covers a contiguous range of
//                   ranks only when the tree is rooted at rank 0, so a
//                   non-commutative operation with another root reduces to
//                   rank 0 and then sends the result to the root.
//   allreduce       recursive_doubling: log2 n exchanges of the whole vector
//                   (small messages, and every non-commutative operation);
//                   rabenseifner: reduce-scatter by recursive halving, then
//                   allgather by recursive doubling, about 2x the vector per
//                   rank (medium messages); ring: ring reduce-scatter and ring
//                   allgather, the same volume in n - 1 neighbour steps that
//                   pipeline well (large messages). Both commutative only.
//                   When n is not a power of two, with p the largest one
//                   below n, the first 2 (n - p) ranks fold pairwise into p
//                   before and unfold after (recursive_doubling and
//                   rabenseifner).
//
// Operand order: Reduce(in, inout) computes in (op) inout, so the partial
// result of the LOWER ranks is always passed as `in`; that makes every
// algorithm that can serve a non-commutative operation combine in rank order.
// Steps of one round run concurrently, so a reduction of received data is
// always a round after its receive, and nothing is received into a buffer
// that a send of the same round reads.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "mpi/coll/families.h"
#include "mpi/coll/reduction_steps.h"

namespace minimpi::coll {
namespace reduction {

// Adds the steps of a binomial reduction of `count` items of every rank's
// `input` toward `tree_root`, on ranks relative to it. Returns where the
// result lies on `tree_root` (nullptr on the other ranks). The result is in
// rank order for a non-commutative operation only when tree_root == 0: then
// every subtree covers a contiguous range of ranks. `input` is only read.
const void* AddBinomialReduce(Schedule& schedule, const void* input,
                              int64_t count, const Arguments& arguments,
                              int tree_root) {
  const int n = schedule.size();
  const int me = (schedule.rank() - tree_root + n) % n;
  const size_t bytes = static_cast<size_t>(count) * arguments.extent;
  auto absolute = [&](int relative) { return (relative + tree_root) % n; };

  // Children are me + 2^k for every 2^k below my lowest set bit; the parent
  // is me with that bit cleared.
  std::vector<int> children;
  int parent = -1;
  for (int mask = 1; mask < n; mask <<= 1) {
    if (me & mask) {
      parent = me - mask;
      break;
    }
    if (me + mask < n) children.push_back(me + mask);
  }

  // Every child's message gets its own slot, so all of them can arrive in
  // any order; they are then folded in from the nearest child outward.
  std::byte* slots = schedule.Scratch(children.size() * bytes);
  for (size_t i = 0; i < children.size(); ++i) {
    schedule.Receive(slots + i * bytes, bytes, absolute(children[i]));
  }
  schedule.EndRound();
  const void* partial = input;  // covers relative ranks [me, next child)
  for (size_t i = 0; i < children.size(); ++i) {
    std::byte* child_partial = slots + i * bytes;
    if (count > 0) {
      schedule.Reduce(partial, child_partial, count, arguments.type,
                      arguments.op);
    }
    partial = child_partial;
    schedule.EndRound();
  }
  if (parent >= 0) {
    schedule.Send(partial, bytes, absolute(parent));
    schedule.EndRound();
    return nullptr;
  }
  return partial;
}

// Ring reduce-scatter over n blocks of `vector` (block b: items
// [offsets[b], offsets[b + 1])): in step s every rank sends block
// (rank - s - 1) to the right and reduces block (rank - s - 2) from the left
// into its own, so after n - 1 steps rank r holds block r fully reduced.
// Block order differs per block, so only for commutative operations.
void AddRingReduceScatter(Schedule& schedule, const Arguments& arguments,
                          std::byte* vector,
                          const std::vector<int64_t>& offsets) {
  const int n = schedule.size();
  const int rank = schedule.rank();
  const size_t extent = arguments.extent;
  int64_t largest = 0;
  for (int b = 0; b < n; ++b) {
    largest = std::max(largest, offsets[b + 1] - offsets[b]);
  }
  std::byte* incoming = schedule.Scratch(static_cast<size_t>(largest) * extent);
  const int right = (rank + 1) % n;
  const int left = (rank - 1 + n) % n;
  for (int step = 0; step < n - 1; ++step) {
    const int out_block = ((rank - step - 1) % n + n) % n;
    const int in_block = ((rank - step - 2) % n + n) % n;
    const int in_items = offsets[in_block + 1] - offsets[in_block];
    schedule.Send(
        vector + static_cast<size_t>(offsets[out_block]) * extent,
        static_cast<size_t>(offsets[out_block + 1] - offsets[out_block]) *
            extent,
        right);
    schedule.Receive(incoming, static_cast<size_t>(in_items) * extent, left);
    schedule.EndRound();
    if (in_items > 0) {
      schedule.Reduce(incoming,
                      vector + static_cast<size_t>(offsets[in_block]) * extent,
                      in_items, arguments.type, arguments.op);
    }
    schedule.EndRound();
  }
}

}  // namespace reduction

namespace {

using reduction::AddBinomialReduce;
using reduction::AddRingReduceScatter;
using reduction::Bytes;
using reduction::Commutative;
using reduction::Input;
using reduction::MessageBytes;

// Contiguous blocks of items: `count` items cut into `blocks` pieces whose
// sizes differ by at most one (the first count % blocks get one more).
class EvenBlocks {
 public:
  EvenBlocks(int64_t count, int blocks)
      : base_(count / blocks), extra_(static_cast<int>(count % blocks)) {}
  int64_t Offset(int block) const {
    return block * base_ + std::min(block, extra_);
  }
  int64_t Length(int block) const { return base_ + (block < extra_ ? 1 : 0); }
  // Items of blocks [first, first + number).
  int64_t Span(int first, int number) const {
    return Offset(first + number) - Offset(first);
  }

 private:
  int64_t base_;
  int extra_;
};

// --- Reduce ---------------------------------------------------------------

std::unique_ptr<Schedule> BinomialReduce(Communicator& comm,
                                         const Arguments& arguments) {
  const size_t bytes = MessageBytes(arguments);
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kReduce, bytes);
  const int root = arguments.root;
  const bool ordered_tree_needed = !arguments.op->commutative() && root != 0;
  const int tree_root = ordered_tree_needed ? 0 : root;
  const void* result = AddBinomialReduce(*schedule, Input(arguments),
                                         arguments.count, arguments, tree_root);
  if (tree_root != root) {
    if (comm.rank == tree_root) {
      schedule->Send(result, bytes, root);
    } else if (comm.rank == root) {
      schedule->Receive(arguments.receive_buffer, bytes, tree_root);
    }
  } else if (comm.rank == root) {
    schedule->Copy(result, arguments.receive_buffer, bytes);
  }
  return schedule;
}

const char* ChooseReduce(const Communicator&, const Arguments&) {
  return "binomial";
}

// --- Allreduce ------------------------------------------------------------

// Folding a communicator of n ranks into p = the largest power of two <= n:
// of the first 2 (n - p) ranks, each even one hands its vector to the odd
// one above it and sits out; the ranks left are renumbered 0..p-1 in rank
// order, so each new rank stands for a contiguous range of old ones.
struct PowerOfTwoFold {
  explicit PowerOfTwoFold(int n, int rank) {
    p = 1;
    while (p * 2 <= n) p *= 2;
    folded = n - p;
    if (rank < 2 * folded) {
      new_rank = rank % 2 == 1 ? rank / 2 : -1;
    } else {
      new_rank = rank - folded;
    }
  }
  int OldRank(int rank_in_p) const {
    return rank_in_p < folded ? rank_in_p * 2 + 1 : rank_in_p + folded;
  }
  int p;
  int folded;    // pairs that fold into one rank
  int new_rank;  // -1 for a rank that sits out
};

// Copies the input into the receive buffer (unless in place) and folds; on
// return the ranks in the power of two hold their range's partial result in
// the receive buffer. `scratch` holds at least the whole vector.
void AddFold(Schedule& schedule, const Arguments& arguments,
             const PowerOfTwoFold& fold, std::byte* scratch) {
  const size_t bytes = MessageBytes(arguments);
  void* vector = arguments.receive_buffer;
  if (!arguments.in_place) {
    schedule.Copy(arguments.send_buffer, vector, bytes);
    schedule.EndRound();
  }
  const int rank = schedule.rank();
  if (rank >= 2 * fold.folded) return;
  if (fold.new_rank < 0) {
    schedule.Send(vector, bytes, rank + 1);
    schedule.EndRound();
    return;
  }
  schedule.Receive(scratch, bytes, rank - 1);
  schedule.EndRound();
  if (arguments.count > 0) {
    schedule.Reduce(scratch, vector, arguments.count, arguments.type,
                    arguments.op);
  }
  schedule.EndRound();
}

// The reverse of AddFold: each odd rank of a folded pair hands the result
// to the even one.
void AddUnfold(Schedule& schedule, const Arguments& arguments,
               const PowerOfTwoFold& fold) {
  const int rank = schedule.rank();
  if (rank >= 2 * fold.folded) return;
  const size_t bytes = MessageBytes(arguments);
  if (fold.new_rank < 0) {
    schedule.Receive(arguments.receive_buffer, bytes, rank + 1);
  } else {
    schedule.Send(arguments.receive_buffer, bytes, rank - 1);
  }
  schedule.EndRound();
}

std::unique_ptr<Schedule> RecursiveDoublingAllreduce(
    Communicator& comm, const Arguments& arguments) {
  const size_t bytes = MessageBytes(arguments);
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kAllreduce, bytes);
  const PowerOfTwoFold fold(comm.size, comm.rank);
  std::byte* scratch = schedule->Scratch(bytes);
  AddFold(*schedule, arguments, fold, scratch);
  if (fold.new_rank >= 0) {
    // The partial result and the partner's alternate between the receive
    // buffer and scratch, so that the lower half's partial can always be
    // `in` without a copy.
    void* partial = arguments.receive_buffer;
    void* incoming = scratch;
    for (int mask = 1; mask < fold.p; mask <<= 1) {
      const int partner = fold.new_rank ^ mask;
      schedule->Send(partial, bytes, fold.OldRank(partner));
      schedule->Receive(incoming, bytes, fold.OldRank(partner));
      schedule->EndRound();
      if (arguments.count > 0) {
        if (partner < fold.new_rank) {
          schedule->Reduce(incoming, partial, arguments.count, arguments.type,
                           arguments.op);
        } else {
          schedule->Reduce(partial, incoming, arguments.count, arguments.type,
                           arguments.op);
          std::swap(partial, incoming);
        }
      }
      schedule->EndRound();
    }
    if (partial != arguments.receive_buffer) {
      schedule->Copy(partial, arguments.receive_buffer, bytes);
      schedule->EndRound();
    }
  }
  AddUnfold(*schedule, arguments, fold);
  return schedule;
}

std::unique_ptr<Schedule> RabenseifnerAllreduce(Communicator& comm,
                                                const Arguments& arguments) {
  const size_t bytes = MessageBytes(arguments);
  const size_t extent = arguments.extent;
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kAllreduce, bytes);
  const PowerOfTwoFold fold(comm.size, comm.rank);
  std::byte* scratch = schedule->Scratch(bytes);
  AddFold(*schedule, arguments, fold, scratch);
  if (fold.new_rank >= 0) {
    std::byte* vector = Bytes(arguments.receive_buffer);
    const EvenBlocks blocks(arguments.count, fold.p);
    auto at = [&](std::byte* base, int block) {
      return base + static_cast<size_t>(blocks.Offset(block)) * extent;
    };
    auto span_bytes = [&](int first, int number) {
      return static_cast<size_t>(blocks.Span(first, number)) * extent;
    };
    // Reduce-scatter by recursive halving: the window of blocks this rank
    // is responsible for halves each round; it keeps the half on its side
    // of the partner and sends the other. At the end it owns block new_rank.
    int low = 0;
    for (int mask = fold.p / 2; mask > 0; mask >>= 1) {
      const int partner = fold.new_rank ^ mask;
      const bool keep_upper = (fold.new_rank & mask) != 0;
      const int kept = keep_upper ? low + mask : low;
      const int given = keep_upper ? low : low + mask;
      schedule->Send(at(vector, given), span_bytes(given, mask),
                     fold.OldRank(partner));
      schedule->Receive(at(scratch, kept), span_bytes(kept, mask),
                        fold.OldRank(partner));
      schedule->EndRound();
      if (blocks.Span(kept, mask) > 0) {
        schedule->Reduce(at(scratch, kept), at(vector, kept),
                         blocks.Span(kept, mask), arguments.type, arguments.op);
      }
      schedule->EndRound();
      low = kept;
    }
    // Allgather by recursive doubling: exchange aligned groups of blocks
    // that double each round.
    for (int mask = 1; mask < fold.p; mask <<= 1) {
      const int partner = fold.new_rank ^ mask;
      const int mine = fold.new_rank & ~(mask - 1);
      const int theirs = partner & ~(mask - 1);
      schedule->Send(at(vector, mine), span_bytes(mine, mask),
                     fold.OldRank(partner));
      schedule->Receive(at(vector, theirs), span_bytes(theirs, mask),
                        fold.OldRank(partner));
      schedule->EndRound();
    }
  }
  AddUnfold(*schedule, arguments, fold);
  return schedule;
}

std::unique_ptr<Schedule> RingAllreduce(Communicator& comm,
                                        const Arguments& arguments) {
  const size_t bytes = MessageBytes(arguments);
  const size_t extent = arguments.extent;
  auto schedule =
      std::make_unique<Schedule>(comm, CollectiveKind::kAllreduce, bytes);
  const int n = comm.size;
  const int rank = comm.rank;
  std::byte* vector = Bytes(arguments.receive_buffer);
  if (!arguments.in_place) {
    schedule->Copy(arguments.send_buffer, vector, bytes);
    schedule->EndRound();
  }
  const EvenBlocks blocks(arguments.count, n);
  std::vector<int64_t> offsets(n + 1);
  for (int b = 0; b <= n; ++b) offsets[b] = blocks.Offset(b);
  AddRingReduceScatter(*schedule, arguments, vector, offsets);
  // Ring allgather: pass on in step s the block received in step s - 1.
  const int right = (rank + 1) % n;
  const int left = (rank - 1 + n) % n;
  for (int step = 0; step < n - 1; ++step) {
    const int out_block = ((rank - step) % n + n) % n;
    const int in_block = ((rank - step - 1) % n + n) % n;
    schedule->Send(vector + static_cast<size_t>(offsets[out_block]) * extent,
                   static_cast<size_t>(blocks.Length(out_block)) * extent,
                   right);
    schedule->Receive(vector + static_cast<size_t>(offsets[in_block]) * extent,
                      static_cast<size_t>(blocks.Length(in_block)) * extent,
                      left);
    schedule->EndRound();
  }
  return schedule;
}

const char* ChooseAllreduce(const Communicator&, const Arguments& arguments) {
  const size_t bytes = MessageBytes(arguments);
  // Below about 8 KiB a message costs mostly its latency, and recursive
  // doubling has the fewest rounds (log2 n). Rabenseifner sends about 2x
  // the vector instead of log2 n times it, for twice the rounds: it wins
  // once the bandwidth term dominates. Past about 512 KiB the ring's 2(n-1)
  // neighbour steps are negligible next to moving the data, and its steady
  // single-neighbour traffic keeps the shared-memory rings streaming.
  // Tunables of the algorithms, fixed here rather than settings; a user
  // forces an algorithm with MINIMPI_COLL_ALLREDUCE.
  constexpr size_t kRabenseifnerFrom = size_t{8} << 10;
  constexpr size_t kRingFrom = size_t{512} << 10;
  if (!arguments.op->commutative() || bytes < kRabenseifnerFrom) {
    return "recursive_doubling";
  }
  return bytes < kRingFrom ? "rabenseifner" : "ring";
}

}  // namespace

void AddReductions(std::vector<CollectiveAlgorithms>& registry) {
  registry.push_back(
      {Collective::kReduce,
       "reduce",
       {{"binomial",
         "binomial tree toward the root, log2 n rounds (via rank 0 for a "
         "non-commutative operation)",
         BinomialReduce}},
       ChooseReduce});
  registry.push_back(
      {Collective::kAllreduce,
       "allreduce",
       {{"recursive_doubling",
         "log2 n exchanges of the whole vector (small messages, any "
         "operation)",
         RecursiveDoublingAllreduce},
        {"rabenseifner",
         "recursive-halving reduce-scatter + recursive-doubling allgather "
         "(medium messages, commutative operations)",
         RabenseifnerAllreduce, Commutative},
        {"ring",
         "ring reduce-scatter + ring allgather (large messages, commutative "
         "operations)",
         RingAllreduce, Commutative}},
       ChooseAllreduce});
}

}  // namespace minimpi::coll
