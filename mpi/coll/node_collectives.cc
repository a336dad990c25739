// The algorithms of the node path through a NodeRegion's cells (see the
// header for what each does; the direct copies are in node_direct.cc, the
// helpers both share in node_steps.h). Every function follows the region's rules: wait until
// the cells are free before writing them, post after writing, wait for a
// post before reading, say done after reading, end the call.
#include "mpi/coll/node_collectives.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "mpi/coll/node_steps.h"

namespace minimpi::coll {
namespace {

using node_internal::AnyCountDiffers;
using node_internal::BlocksOf;
using node_internal::Bytes;
using node_internal::CopyBytes;
using node_internal::CopyFitting;
using node_internal::DirectAllgather;
using node_internal::DirectAllreduce;
using node_internal::DirectAlltoall;
using node_internal::DirectBcast;
using node_internal::DirectBcastFor;
using node_internal::NeedsStepDone;
using node_internal::Piece;
using node_internal::PieceOf;
using node_internal::Step;
using node_internal::StepsFor;

// --- Barrier ----------------------------------------------------------------

NodeOutcome Barrier(NodeRegion& region) {
  region.BeginCall(/*small=*/true);
  region.Signal(0);
  if (region.size() <= kFlatBarrierMax) {
    for (int r = 0; r < region.size(); ++r) {
      if (r != region.rank()) region.WaitPosted(r, 0);
    }
  } else if (region.rank() == 0) {
    // Rank 0 gathers the posts; its done releases everyone.
    for (int r = 1; r < region.size(); ++r) region.WaitPosted(r, 0);
    region.Done(0);
  } else {
    region.WaitDone(0, 0);
  }
  region.EndCall();
  return NodeOutcome::kDone;
}

// --- Bcast ------------------------------------------------------------------

NodeOutcome Bcast(NodeRegion& region, const Arguments& a) {
  auto* buffer = static_cast<std::byte*>(a.receive_buffer);
  const uint64_t mine = Bytes(a.count, a.extent);
  region.BeginCall(region.IsSmall(mine));
  const size_t cell = region.step_bytes();
  if (region.rank() == a.root) {
    const Step steps = StepsFor(mine, cell);
    for (Step k = 0; k < steps; ++k) {
      const Piece piece = PieceOf(mine, cell, k);
      region.WaitCellsFree(k);
      CopyBytes(region.Cell(a.root, k), buffer + piece.offset, piece.length);
      if (k + 1 < steps) {
        region.Post(k, mine);
      } else {
        region.PostLast(k, mine);
      }
    }
    return NodeOutcome::kDone;
  }
  const uint64_t sent = region.WaitPosted(a.root, 0);
  const Step steps = StepsFor(sent, cell);
  for (Step k = 0; k < steps; ++k) {
    if (k > 0) region.WaitPosted(a.root, k);
    CopyFitting(buffer, mine, PieceOf(sent, cell, k), region.Cell(a.root, k));
    if (NeedsStepDone(steps)) region.Done(k);
  }
  region.EndCall();
  return sent > mine ? NodeOutcome::kTruncated : NodeOutcome::kDone;
}

// --- Reduce, Allreduce ------------------------------------------------------

// Reduces items [first, first + items) of the n cells of `step` (counted
// from the start of the cells) into `to`, in rank order:
// to = x0 op (x1 op (... op x(n-1))). This rank's items come from `own`
// (this step's part of its input) when it is not null, else from its cell.
void ReduceCells(const NodeRegion& region, Step step, const Arguments& a,
                 uint64_t first, int items, const std::byte* own,
                 std::byte* to) {
  if (items == 0) return;
  const uint64_t offset = first * a.extent;
  const size_t bytes = static_cast<size_t>(items) * a.extent;
  const int n = region.size();
  auto items_of = [&](int r) {
    return (r == region.rank() && own != nullptr ? own : region.Cell(r, step)) +
           offset;
  };
  CopyBytes(to, items_of(n - 1), bytes);
  for (int r = n - 2; r >= 0; --r) {
    a.op->Apply(items_of(r), to, items, a.type);
  }
}

// An allreduce from this many bytes shares the work: each rank reduces a
// slice of the items into the result cell, and all copy the result out
// (below it, every rank reduces all cells itself: one step, no second round
// of flags). A reduce never slices: its root reducing everything measured
// faster (64 KiB on 2 ranks: 12 us against 14; 1 MiB on 4 ranks: 400 us
// against 560), since slices add a round of flags and a copy through the
// result cell, while only the root needs the result.
constexpr uint64_t kSliceMinBytes = 4096;

NodeOutcome Reduction(NodeRegion& region, const Arguments& a, bool all) {
  const int n = region.size();
  const int me = region.rank();
  const bool wants_result = all || me == a.root;
  const uint64_t mine = Bytes(a.count, a.extent);
  region.BeginCall(region.IsSmall(mine));
  const uint64_t per_step = std::max<size_t>(
      1, (all ? region.step_bytes() : region.reduce_step_bytes()) / a.extent);
  const uint64_t items = static_cast<uint64_t>(a.count);
  const Step chunks = StepsFor(items, per_step);
  // (A small call has no result cell: it never slices.)
  const bool sliced = all && !region.IsSmall(mine) && mine >= kSliceMinBytes &&
                      items >= uint64_t(n);
  // The root of a reduce reads its own input where it lies (others never
  // read its cell); in place, the output it writes is that input.
  const bool skips_own_cell = !all && me == a.root && !a.in_place;
  const Step steps = sliced ? 2 * chunks : chunks;
  const auto* input = static_cast<const std::byte*>(
      a.in_place ? a.receive_buffer : a.send_buffer);
  auto* output = static_cast<std::byte*>(a.receive_buffer);
  for (Step chunk = 0; chunk < chunks; ++chunk) {
    const uint64_t first = uint64_t{chunk} * per_step;
    const int count = static_cast<int>(std::min(per_step, items - first));
    const uint64_t offset = first * a.extent;
    const size_t bytes = static_cast<size_t>(count) * a.extent;
    const Step in = sliced ? 2 * chunk : chunk;
    region.WaitCellsFree(in);
    if (!skips_own_cell) CopyBytes(region.Cell(me, in), input + offset, bytes);
    if (!sliced && !wants_result && chunk + 1 == chunks) {
      // A reduce's sender reads nothing: its last post ends its call.
      region.PostLast(in, mine);
      return NodeOutcome::kDone;
    }
    region.Post(in, mine);
    const std::byte* own = a.in_place ? nullptr : input + offset;
    if (sliced || wants_result) {
      if (AnyCountDiffers(region, in, mine)) {
        region.EndCall();
        return NodeOutcome::kTruncated;
      }
    }
    if (!sliced) {
      if (wants_result) {
        ReduceCells(region, in, a, 0, count, own, output + offset);
      }
      if (NeedsStepDone(steps)) region.Done(in);
      continue;
    }
    // My slice of this chunk's items into the result cell of the next step.
    const Step out = in + 1;
    const uint64_t lo = uint64_t(count) * me / n;
    const uint64_t hi = uint64_t(count) * (me + 1) / n;
    region.WaitCellsFree(out);
    ReduceCells(region, in, a, lo, static_cast<int>(hi - lo), own,
                region.ResultCell(out) + lo * a.extent);
    region.Done(in);
    region.Post(out, mine);
    if (wants_result) {
      for (int r = 0; r < n; ++r) {
        if (r != me) region.WaitPosted(r, out);
      }
      CopyBytes(output + offset, region.ResultCell(out), bytes);
    }
    if (NeedsStepDone(steps)) region.Done(out);
  }
  region.EndCall();
  return NodeOutcome::kDone;
}

// --- Gather, Scatter, Allgather ---------------------------------------------

NodeOutcome Gather(NodeRegion& region, const Arguments& a) {
  const int n = region.size();
  const int me = region.rank();
  const uint64_t block = Bytes(a.receive_count, a.receive_extent);
  region.BeginCall(region.IsSmall(
      me == a.root ? block : Bytes(a.send_count, a.send_extent)));
  const size_t cell = region.step_bytes();
  if (me != a.root) {
    const uint64_t mine = Bytes(a.send_count, a.send_extent);
    const auto* send = static_cast<const std::byte*>(a.send_buffer);
    const Step steps = StepsFor(mine, cell);
    for (Step k = 0; k < steps; ++k) {
      const Piece piece = PieceOf(mine, cell, k);
      region.WaitCellsFree(k);
      CopyBytes(region.Cell(me, k), send + piece.offset, piece.length);
      if (k + 1 == steps) {
        region.PostLast(k, mine);
      } else {
        region.Post(k, mine);
        if (NeedsStepDone(steps)) region.Done(k);
      }
    }
    return NodeOutcome::kDone;
  }
  auto* receive = static_cast<std::byte*>(a.receive_buffer);
  if (!a.in_place) {
    CopyBytes(receive + me * block, a.send_buffer,
              std::min(block, Bytes(a.send_count, a.send_extent)));
  }
  // Each sender's count, from its first post: the steps it takes.
  Step most = 1;
  NodeOutcome outcome = NodeOutcome::kDone;
  for (int r = 0; r < n; ++r) {
    if (r == me) continue;
    const uint64_t sent = region.WaitPosted(r, 0);
    if (sent > block) outcome = NodeOutcome::kTruncated;
    most = std::max(most, StepsFor(sent, cell));
  }
  for (Step k = 0; k < most; ++k) {
    for (int r = 0; r < n; ++r) {
      if (r == me) continue;
      const uint64_t sent = region.WaitPosted(r, 0);
      if (k >= StepsFor(sent, cell)) continue;
      if (k > 0) region.WaitPosted(r, k);
      CopyFitting(receive + r * block, block, PieceOf(sent, cell, k),
                  region.Cell(r, k));
    }
    if (NeedsStepDone(most)) region.Done(k);
  }
  region.EndCall();
  return outcome;
}

// A small scatter (every block in one slot) goes through the root's slot,
// the blocks of the ranks after the root first (the root keeps none there):
// a reader then finds the post, the count and its block on the lines the
// root wrote, usually one (on 2 ranks a 64-byte block takes the header's
// line and the next, not the two after it: 0.132 us a call went to 0.117,
// medians of 5 runs).
// A larger one goes through the readers' cells, which the root fills step
// by step.
int ScatterSlotIndex(int rank, int root, int n) {
  return (rank - root - 1 + n) % n;
}

NodeOutcome SmallScatter(NodeRegion& region, const Arguments& a) {
  const int n = region.size();
  const int me = region.rank();
  if (me == a.root) {
    const uint64_t block = Bytes(a.send_count, a.send_extent);
    const auto* send = static_cast<const std::byte*>(a.send_buffer);
    region.WaitCellsFree(0);
    std::byte* slot = region.Cell(me, 0);
    for (int r = 0; r < n; ++r) {
      if (r != me) {
        CopyBytes(slot + ScatterSlotIndex(r, me, n) * block, send + r * block,
                  block);
      }
    }
    region.PostLast(0, block);
    if (!a.in_place) {
      CopyBytes(a.receive_buffer, send + me * block,
                std::min(block, Bytes(a.receive_count, a.receive_extent)));
    }
    return NodeOutcome::kDone;
  }
  const uint64_t mine = Bytes(a.receive_count, a.receive_extent);
  const uint64_t sent = region.WaitPosted(a.root, 0);
  CopyBytes(a.receive_buffer,
            region.Cell(a.root, 0) + ScatterSlotIndex(me, a.root, n) * sent,
            std::min(sent, mine));
  region.EndCall();
  return sent > mine ? NodeOutcome::kTruncated : NodeOutcome::kDone;
}

NodeOutcome Scatter(NodeRegion& region, const Arguments& a) {
  const int n = region.size();
  const int me = region.rank();
  const uint64_t block = me == a.root
                             ? Bytes(a.send_count, a.send_extent)
                             : Bytes(a.receive_count, a.receive_extent);
  region.BeginCall(region.IsSmall(block * n));
  if (region.small()) return SmallScatter(region, a);
  const size_t cell = region.step_bytes();
  if (me == a.root) {
    const auto* send = static_cast<const std::byte*>(a.send_buffer);
    const Step steps = StepsFor(block, cell);
    for (Step k = 0; k < steps; ++k) {
      const Piece piece = PieceOf(block, cell, k);
      region.WaitCellsFree(k);
      for (int r = 0; r < n; ++r) {
        if (r != me) {
          CopyBytes(region.Cell(r, k), send + r * block + piece.offset,
                    piece.length);
        }
      }
      region.Post(k, block);
      if (NeedsStepDone(steps)) region.Done(k);
    }
    if (!a.in_place) {
      CopyBytes(a.receive_buffer, send + me * block,
                std::min(block, Bytes(a.receive_count, a.receive_extent)));
    }
    region.EndCall();
    return NodeOutcome::kDone;
  }
  const uint64_t mine = block;
  auto* receive = static_cast<std::byte*>(a.receive_buffer);
  const uint64_t sent = region.WaitPosted(a.root, 0);
  const Step steps = StepsFor(sent, cell);
  for (Step k = 0; k < steps; ++k) {
    if (k > 0) region.WaitPosted(a.root, k);
    CopyFitting(receive, mine, PieceOf(sent, cell, k), region.Cell(me, k));
    if (NeedsStepDone(steps)) region.Done(k);
  }
  region.EndCall();
  return sent > mine ? NodeOutcome::kTruncated : NodeOutcome::kDone;
}

NodeOutcome Allgather(NodeRegion& region, const Arguments& a) {
  const int n = region.size();
  const int me = region.rank();
  const auto [receive, block, mine, own] = BlocksOf(region, a);
  if (!a.in_place) CopyBytes(receive + me * block, own, std::min(block, mine));
  region.BeginCall(region.IsSmall(mine));
  const size_t cell = region.step_bytes();
  const Step steps = StepsFor(mine, cell);
  NodeOutcome outcome =
      mine > block ? NodeOutcome::kTruncated : NodeOutcome::kDone;
  for (Step k = 0; k < steps; ++k) {
    const Piece piece = PieceOf(mine, cell, k);
    region.WaitCellsFree(k);
    CopyBytes(region.Cell(me, k), own + piece.offset, piece.length);
    region.Post(k, mine);
    if (AnyCountDiffers(region, k, mine)) {
      region.EndCall();
      return NodeOutcome::kTruncated;
    }
    for (int r = 0; r < n; ++r) {
      if (r != me)
        CopyFitting(receive + r * block, block, piece, region.Cell(r, k));
    }
    if (NeedsStepDone(steps)) region.Done(k);
  }
  region.EndCall();
  return outcome;
}

// --- Alltoall ---------------------------------------------------------------

// Each step's cell holds one chunk per destination (a step's bytes split n
// ways), so every reader gets data in every step and a large call pipelines
// evenly. In place works too: step k reads and writes only chunk k of each
// block.
size_t AlltoallChunk(size_t step_bytes, int ranks) {
  return step_bytes / static_cast<size_t>(ranks);
}

NodeOutcome Alltoall(NodeRegion& region, const Arguments& a) {
  const int n = region.size();
  const int me = region.rank();
  const uint64_t block = Bytes(a.receive_count, a.receive_extent);
  const uint64_t mine = a.in_place ? block : Bytes(a.send_count, a.send_extent);
  auto* receive = static_cast<std::byte*>(a.receive_buffer);
  const auto* send =
      a.in_place ? receive : static_cast<const std::byte*>(a.send_buffer);
  region.BeginCall(region.IsSmall(mine * n));
  const size_t chunk = AlltoallChunk(region.step_bytes(), n);
  if (!a.in_place) {
    CopyBytes(receive + me * block, send + me * mine, std::min(block, mine));
  }
  // Every rank reads every cell, so a writer whose count differs from the
  // others' is seen by all of them in the first step (they all leave); a
  // reader whose own block is smaller reads what fits and reports it.
  NodeOutcome outcome =
      mine > block ? NodeOutcome::kTruncated : NodeOutcome::kDone;
  const Step steps = StepsFor(mine, chunk);
  for (Step k = 0; k < steps; ++k) {
    const Piece piece = PieceOf(mine, chunk, k);
    region.WaitCellsFree(k);
    std::byte* cell = region.Cell(me, k);
    for (int r = 0; r < n; ++r) {
      if (r != me) {
        CopyBytes(cell + r * chunk, send + r * mine + piece.offset,
                  piece.length);
      }
    }
    region.Post(k, mine);
    if (AnyCountDiffers(region, k, mine)) {
      region.EndCall();
      return NodeOutcome::kTruncated;
    }
    for (int r = 0; r < n; ++r) {
      if (r != me) {
        CopyFitting(receive + r * block, block, piece,
                    region.Cell(r, k) + me * chunk);
      }
    }
    if (NeedsStepDone(steps)) region.Done(k);
  }
  region.EndCall();
  return outcome;
}

}  // namespace

bool RegionServes(const NodeRegion& region, Collective collective,
                  const Arguments& a) {
  const size_t cell = region.cell_bytes();
  auto fits = [&](uint64_t bytes) {
    return StepsFor(bytes, cell) <= NodeRegion::kMaxSteps;
  };
  switch (collective) {
    case Collective::kBarrier:
      return true;
    case Collective::kBcast:
      return DirectBcastFor(region, Bytes(a.count, a.extent)) ||
             fits(Bytes(a.count, a.extent));
    case Collective::kAllreduce:
      return a.extent > 0 && a.extent <= cell &&
             (region.DirectFor(Bytes(a.count, a.extent)) ||
              2 * StepsFor(uint64_t(a.count), cell / a.extent) <=
                  NodeRegion::kMaxSteps);
    case Collective::kReduce:
      return a.extent > 0 && a.extent <= cell &&
             StepsFor(uint64_t(a.count),
                      std::max<size_t>(
                          1, region.large_reduce_step_bytes() / a.extent)) <=
                 NodeRegion::kMaxSteps;
    case Collective::kAllgather:
      if (region.DirectFor(Bytes(a.receive_count, a.receive_extent))) {
        return true;
      }
      [[fallthrough]];
    case Collective::kGather:
      return fits(Bytes(a.receive_count, a.receive_extent)) &&
             fits(Bytes(a.send_count, a.send_extent));
    case Collective::kScatter:
      return fits(Bytes(a.send_count, a.send_extent)) &&
             fits(Bytes(a.receive_count, a.receive_extent));
    case Collective::kAlltoall: {
      // Per step, a chunk of each destination's block in a cell; a small
      // call's chunk (a slot split n ways) takes its block in one step.
      const size_t chunk = AlltoallChunk(cell, region.size());
      const uint64_t block = Bytes(a.receive_count, a.receive_extent);
      if (!a.in_place && region.DirectFor(block)) return true;
      return chunk > 0 && StepsFor(block, chunk) <= NodeRegion::kMaxSteps &&
             (a.in_place || StepsFor(Bytes(a.send_count, a.send_extent),
                                     chunk) <= NodeRegion::kMaxSteps);
    }
    default:
      return false;
  }
}

NodeOutcome RunThroughRegion(NodeRegion& region, Collective collective,
                             const Arguments& arguments) {
  switch (collective) {
    case Collective::kBarrier:
      return Barrier(region);
    case Collective::kBcast:
      if (DirectBcastFor(region, Bytes(arguments.count, arguments.extent))) {
        return DirectBcast(region, arguments);
      }
      return Bcast(region, arguments);
    case Collective::kReduce:
      return Reduction(region, arguments, /*all=*/false);
    case Collective::kAllreduce:
      if (region.DirectFor(Bytes(arguments.count, arguments.extent))) {
        return DirectAllreduce(region, arguments);
      }
      return Reduction(region, arguments, /*all=*/true);
    case Collective::kGather:
      return Gather(region, arguments);
    case Collective::kScatter:
      return Scatter(region, arguments);
    case Collective::kAllgather:
      if (region.DirectFor(
              Bytes(arguments.receive_count, arguments.receive_extent))) {
        return DirectAllgather(region, arguments);
      }
      return Allgather(region, arguments);
    case Collective::kAlltoall:
      if (!arguments.in_place &&
          region.DirectFor(
              Bytes(arguments.receive_count, arguments.receive_extent))) {
        return DirectAlltoall(region, arguments);
      }
      return Alltoall(region, arguments);
    default:
      return NodeOutcome::kNotRun;
  }
}

}  // namespace minimpi::coll
