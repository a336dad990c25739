// The node path's direct algorithms (see node_collectives.h): every rank
// posts where its data lie, and the others read them from there with one
// cross-memory copy (process_vm_readv), no cell in between. For calls from
// MINIMPI_COLL_SHM_DIRECT bytes per block; RunThroughRegion picks them.
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "mpi/coll/node_steps.h"

namespace minimpi::coll::node_internal {
namespace {

// Reads `bytes` of rank `writer`'s data at `address` into `to`. The region's
// maker checked that cross-memory reads work between its ranks; a refusal
// now (a process that changed its credentials) is not recoverable mid-call.
void ReadOrDie(const NodeRegion& region, int writer, uint64_t address, void* to,
               uint64_t bytes) {
  if (bytes == 0 || region.ReadDirect(writer, address, to, bytes)) return;
  std::fprintf(stderr,
               "minimpi: node collective: process_vm_readv of %llu bytes "
               "from the process of node rank %d failed: %s\n",
               static_cast<unsigned long long>(bytes), writer,
               std::strerror(errno));
  std::abort();
}

// A direct call: every rank posts where its data (and result) lie, and
// readers copy from there. Before posting, a rank waits until no rank is
// still in the previous call (the addresses sit on the ready line by call
// parity, where a rank two calls behind would read its own).
void BeginDirect(NodeRegion& region, const void* data, const void* result,
                 uint64_t bytes) {
  region.BeginCall(/*small=*/false);
  region.WaitCellsFree(0);
  region.PostDirect(data, result, bytes);
}

// Ends a direct call for a rank that read all it reads. A rank whose
// buffers others read leaves only once every rank has ended the call: its
// buffers are then the program's again.
void EndDirect(NodeRegion& region, bool others_read_mine) {
  region.EndCall();
  if (!others_read_mine) return;
  for (int r = 0; r < region.size(); ++r) {
    if (r != region.rank()) region.WaitDone(r, NodeRegion::kEndOfCall);
  }
}

}  // namespace

// Every rank reads every other's block straight into its receive buffer:
// one copy per block, no cell.
NodeOutcome DirectAllgather(NodeRegion& region, const Arguments& a) {
  const int n = region.size();
  const int me = region.rank();
  const auto [receive, block, mine, own] = BlocksOf(region, a);
  BeginDirect(region, own, nullptr, mine);
  if (!a.in_place) CopyBytes(receive + me * block, own, std::min(block, mine));
  bool differs = mine > block;
  for (int k = 1; k < n; ++k) {
    const int r = (me + k) % n;
    const NodeRegion::DirectPost post = region.WaitPostedDirect(r);
    differs |= post.bytes != mine;
    ReadOrDie(region, r, post.data, receive + r * block,
              std::min(post.bytes, block));
  }
  EndDirect(region, /*others_read_mine=*/true);
  return differs ? NodeOutcome::kTruncated : NodeOutcome::kDone;
}

// Not in place: the readers would read blocks this rank is overwriting.
NodeOutcome DirectAlltoall(NodeRegion& region, const Arguments& a) {
  const int n = region.size();
  const int me = region.rank();
  const uint64_t block = Bytes(a.receive_count, a.receive_extent);
  const uint64_t mine = Bytes(a.send_count, a.send_extent);
  auto* receive = static_cast<std::byte*>(a.receive_buffer);
  const auto* send = static_cast<const std::byte*>(a.send_buffer);
  BeginDirect(region, send, nullptr, mine);
  CopyBytes(receive + me * block, send + me * mine, std::min(block, mine));
  bool differs = mine > block;
  for (int k = 1; k < n; ++k) {
    const int r = (me + k) % n;
    const NodeRegion::DirectPost post = region.WaitPostedDirect(r);
    differs |= post.bytes != mine;
    ReadOrDie(region, r, post.data + me * post.bytes, receive + r * block,
              std::min(post.bytes, block));
  }
  EndDirect(region, /*others_read_mine=*/true);
  return differs ? NodeOutcome::kTruncated : NodeOutcome::kDone;
}

// Every reader copies the root's buffer; the root waits until all have
// (DirectBcastFor says when).
NodeOutcome DirectBcast(NodeRegion& region, const Arguments& a) {
  auto* buffer = static_cast<std::byte*>(a.receive_buffer);
  const uint64_t mine = Bytes(a.count, a.extent);
  const bool root = region.rank() == a.root;
  BeginDirect(region, buffer, nullptr, mine);
  NodeOutcome outcome = NodeOutcome::kDone;
  if (!root) {
    const NodeRegion::DirectPost post = region.WaitPostedDirect(a.root);
    ReadOrDie(region, a.root, post.data, buffer, std::min(post.bytes, mine));
    if (post.bytes > mine) outcome = NodeOutcome::kTruncated;
  }
  EndDirect(region, /*others_read_mine=*/root);
  return outcome;
}

// Reduce-scatter, then allgather, both reading the other ranks' buffers:
// rank r reduces slice r of the items (x0 op x1 op ... op x(n-1), in rank
// order) into its own receive buffer, reading the other inputs' slices
// through its cells; once every slice is reduced (a second post), each
// rank reads the other slices from their owners' receive buffers. Every
// rank copies about 2 (n - 1) / n of the data and combines 1 / n of it,
// where a rank that reduces everything itself combines all of it.
NodeOutcome DirectAllreduce(NodeRegion& region, const Arguments& a) {
  const int n = region.size();
  const int me = region.rank();
  const uint64_t mine = Bytes(a.count, a.extent);
  auto* output = static_cast<std::byte*>(a.receive_buffer);
  const auto* input = static_cast<const std::byte*>(
      a.in_place ? a.receive_buffer : a.send_buffer);
  BeginDirect(region, input, output, mine);
  // Every rank sees every count: all find a mismatch, and all leave.
  if (AnyCountDiffers(region, 0, mine)) {
    EndDirect(region, /*others_read_mine=*/true);
    return NodeOutcome::kTruncated;
  }
  const uint64_t items = static_cast<uint64_t>(a.count);
  auto slice_of = [&](int r) {
    return Piece{items * r / n * a.extent,
                 (items * (r + 1) / n - items * r / n) * a.extent};
  };
  // My slice, in pieces that fit a cell: the first cell takes another
  // rank's items, the second keeps my own when the output is my input.
  const Piece slice = slice_of(me);
  const uint64_t per_piece =
      std::max<uint64_t>(a.extent, region.cell_bytes() / a.extent * a.extent);
  std::byte* theirs = region.Cell(me, 0);
  std::byte* kept = region.Cell(me, 1);
  for (uint64_t done = 0; done < slice.length; done += per_piece) {
    const uint64_t offset = slice.offset + done;
    const uint64_t bytes = std::min(per_piece, slice.length - done);
    const int count = static_cast<int>(bytes / a.extent);
    std::byte* to = output + offset;
    const std::byte* own = input + offset;
    if (a.in_place && me != n - 1) {
      CopyBytes(kept, own, bytes);
      own = kept;
    }
    if (me == n - 1) {
      if (!a.in_place) CopyBytes(to, own, bytes);
    } else {
      ReadOrDie(region, n - 1, region.WaitPostedDirect(n - 1).data + offset, to,
                bytes);
    }
    for (int r = n - 2; r >= 0; --r) {
      const std::byte* x = own;
      if (r != me) {
        ReadOrDie(region, r, region.WaitPostedDirect(r).data + offset, theirs,
                  bytes);
        x = theirs;
      }
      a.op->Apply(x, to, count, a.type);
    }
  }
  // My slice is ready, and I read nobody's input any more.
  region.Signal(1);
  for (int k = 1; k < n; ++k) {
    const int r = (me + k) % n;
    region.WaitPosted(r, 1);
    const Piece theirs_slice = slice_of(r);
    ReadOrDie(region, r,
              region.WaitPostedDirect(r).result + theirs_slice.offset,
              output + theirs_slice.offset, theirs_slice.length);
  }
  EndDirect(region, /*others_read_mine=*/true);
  return NodeOutcome::kDone;
}

}  // namespace minimpi::coll::node_internal
