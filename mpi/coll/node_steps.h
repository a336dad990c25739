// The pieces the node path's algorithms share (node_collectives.cc: through
// the region's cells; node_direct.cc: direct copies between the ranks'
// buffers). Internal to those two files: small helpers, inline so each
// algorithm compiles as it did in one file, and the direct algorithms,
// which RunThroughRegion picks.
//
// Owned by: mpi/coll. Used by: node_collectives.cc, node_direct.cc only.
#ifndef MINIMPI_MPI_COLL_NODE_STEPS_H_
#define MINIMPI_MPI_COLL_NODE_STEPS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "mpi/coll/algorithms.h"
#include "mpi/coll/node_collectives.h"
#include "mpi/coll/node_region.h"

namespace minimpi::coll::node_internal {

using Step = uint32_t;

// memcpy for lengths that may be 0 with a null pointer (an empty buffer):
// memcpy's arguments must not be null even then.
inline void CopyBytes(void* to, const void* from, size_t bytes) {
  if (bytes != 0) std::memcpy(to, from, bytes);
}

inline uint64_t Bytes(int64_t count, size_t extent) {
  return static_cast<uint64_t>(count) * extent;
}

// Steps of `per_step` units that carry `units` (one step even for none, so
// that every rank learns every writer's count).
inline Step StepsFor(uint64_t units, uint64_t per_step) {
  return units == 0 ? 1 : static_cast<Step>((units + per_step - 1) / per_step);
}

// A block of `total` bytes cut into cells: step k carries [offset, +length).
struct Piece {
  uint64_t offset;
  uint64_t length;
};
inline Piece PieceOf(uint64_t total, size_t cell, Step step) {
  const uint64_t offset = uint64_t{step} * cell;
  return {offset,
          offset >= total ? 0 : std::min<uint64_t>(cell, total - offset)};
}

// Copies the part of `piece` (read from `from`) that lies below `limit`
// bytes of the destination block at `to`.
inline void CopyFitting(std::byte* to, uint64_t limit, Piece piece,
                        const std::byte* from) {
  if (piece.offset >= limit) return;
  CopyBytes(to + piece.offset, from,
            std::min(piece.length, limit - piece.offset));
}

// Waits for every other rank's post of `step` and says whether any of them
// contributes other than `mine` bytes to the call. Where every rank reads
// every cell (allreduce, allgather, sliced reductions), all of them see
// every count in the first step, so all find a mismatch there and leave the
// call together.
inline bool AnyCountDiffers(NodeRegion& region, Step step, uint64_t mine) {
  bool differs = false;
  for (int r = 0; r < region.size(); ++r) {
    if (r != region.rank() && region.WaitPosted(r, step) != mine) {
      differs = true;
    }
  }
  return differs;
}

// Steps that need a per-step done: a writer reuses a cell two steps later.
inline bool NeedsStepDone(Step steps) { return steps > 2; }

// An allgather's buffers as this rank sees them.
struct AllgatherBlocks {
  std::byte* receive;    // n blocks
  uint64_t block;        // bytes of a received block
  uint64_t mine;         // bytes this rank contributes
  const std::byte* own;  // where they lie
};
inline AllgatherBlocks BlocksOf(const NodeRegion& region, const Arguments& a) {
  AllgatherBlocks b;
  b.receive = static_cast<std::byte*>(a.receive_buffer);
  b.block = Bytes(a.receive_count, a.receive_extent);
  b.mine = a.in_place ? b.block : Bytes(a.send_count, a.send_extent);
  b.own = a.in_place ? b.receive + region.rank() * b.block
                     : static_cast<const std::byte*>(a.send_buffer);
  return b;
}

// Every reader copies the root's buffer; the root waits until all have.
// Not on 2 ranks: there the one reader's copy is all the work, where
// point-to-point's split rendezvous has both ranks copy half (1 MiB: 50 us
// against 127 direct).
inline bool DirectBcastFor(const NodeRegion& region, uint64_t bytes) {
  return region.size() > 2 && region.DirectFor(bytes);
}

// --- Direct copies (node_direct.cc) ------------------------------------------

// Every rank reads every other's block straight into its receive buffer.
NodeOutcome DirectAllgather(NodeRegion& region, const Arguments& a);
// Not in place: the readers would read blocks this rank is overwriting.
NodeOutcome DirectAlltoall(NodeRegion& region, const Arguments& a);
// Every reader copies the root's buffer (when DirectBcastFor).
NodeOutcome DirectBcast(NodeRegion& region, const Arguments& a);
// Reduce-scatter, then allgather, both reading the other ranks' buffers.
NodeOutcome DirectAllreduce(NodeRegion& region, const Arguments& a);

}  // namespace minimpi::coll::node_internal

#endif  // MINIMPI_MPI_COLL_NODE_STEPS_H_
