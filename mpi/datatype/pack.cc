#include "mpi/datatype/pack.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>

#include "mpi/datatype/layout.h"

namespace minimpi::datatype {
namespace pack_internal {

StreamPosition::StreamPosition(const void* buffer, int64_t count,
                               const Layout* layout)
    : base(reinterpret_cast<uintptr_t>(buffer)) {
  if (count <= 0) return;  // nothing to walk: total stays 0
  if (layout == nullptr) {
    one_run = true;
    all_items = Run{0, count, 1, 0};
  } else if (layout->size() == 0) {
    return;
  } else if (std::optional<Run> run = layout->RunOfItems(count)) {
    one_run = true;
    all_items = *run;
  } else {
    layout_runs = layout->runs().data();
    layout_run_starts = layout->run_packed_starts().data();
    num_runs = static_cast<int64_t>(layout->runs().size());
    item_size = layout->size();
    item_extent = layout->extent();
    total = count * item_size;
    return;
  }
  // All items walked as one item of one run.
  num_runs = 1;
  item_size = all_items.bytes();
  all_items_starts[1] = item_size;
  total = item_size;
}

void StreamPosition::Seek(int64_t packed_offset) {
  offset = packed_offset;
  run = 0;
  block = 0;
  byte = 0;
  if (packed_offset >= total) {  // the end: nothing left to walk
    item = total == 0 ? 0 : total / item_size;
    return;
  }
  item = packed_offset / item_size;
  int64_t within = packed_offset % item_size;
  const int64_t* starts = run_starts();
  run = (std::upper_bound(starts, starts + num_runs + 1, within) - starts) - 1;
  within -= starts[run];
  const int64_t length = runs()[run].length;
  block = within / length;
  byte = within % length;
}

}  // namespace pack_internal

namespace {

using pack_internal::StreamPosition;

char* Memory(uintptr_t address) { return reinterpret_cast<char*>(address); }

// Copies `length` bytes between user memory and the packed stream: kPack
// reads the user's memory, otherwise it is written.
template <bool kPack>
void CopyBytes(uintptr_t user, char* stream, int64_t length) {
  if constexpr (kPack) {
    std::memcpy(stream, Memory(user), length);
  } else {
    std::memcpy(Memory(user), stream, length);
  }
}

// `blocks` blocks of exactly kLength bytes, `stride` apart in user memory:
// with the length a constant, each memcpy compiles to a few moves.
// Four blocks per turn: a loop of one tiny copy is bound by its own
// bookkeeping, not by the copy.
template <int64_t kLength, bool kPack>
void MoveFixedBlocks(uintptr_t user, int64_t stride, int64_t blocks,
                     char* stream) {
  int64_t i = 0;
  for (; i + 4 <= blocks; i += 4) {
    CopyBytes<kPack>(user, stream, kLength);
    CopyBytes<kPack>(user + stride, stream + kLength, kLength);
    CopyBytes<kPack>(user + 2 * stride, stream + 2 * kLength, kLength);
    CopyBytes<kPack>(user + 3 * stride, stream + 3 * kLength, kLength);
    user += 4 * stride;
    stream += 4 * kLength;
  }
  for (; i < blocks; ++i) {
    CopyBytes<kPack>(user, stream, kLength);
    user += stride;
    stream += kLength;
  }
}

// Blocks of a length in (kPiece, 2 * kPiece]: two constant-size copies of
// kPiece bytes, one from each end, overlapping in the middle. No call, no
// loop over bytes, whatever the exact length.
template <int64_t kPiece, bool kPack>
void MoveShortBlocks(uintptr_t user, int64_t stride, int64_t length,
                     int64_t blocks, char* stream) {
  const int64_t tail = length - kPiece;
  for (int64_t i = 0; i < blocks; ++i) {
    CopyBytes<kPack>(user, stream, kPiece);
    CopyBytes<kPack>(user + tail, stream + tail, kPiece);
    user += stride;
    stream += length;
  }
}

template <bool kPack>
void MoveBlocks(uintptr_t user, int64_t stride, int64_t length, int64_t blocks,
                char* stream) {
  switch (length) {
    case 1:
      return MoveFixedBlocks<1, kPack>(user, stride, blocks, stream);
    case 2:
      return MoveFixedBlocks<2, kPack>(user, stride, blocks, stream);
    case 4:
      return MoveFixedBlocks<4, kPack>(user, stride, blocks, stream);
    case 8:
      return MoveFixedBlocks<8, kPack>(user, stride, blocks, stream);
    case 16:
      return MoveFixedBlocks<16, kPack>(user, stride, blocks, stream);
    case 32:
      return MoveFixedBlocks<32, kPack>(user, stride, blocks, stream);
    case 64:
      return MoveFixedBlocks<64, kPack>(user, stride, blocks, stream);
    case 128:
      return MoveFixedBlocks<128, kPack>(user, stride, blocks, stream);
    default:
      break;
  }
  if (length < 4) {
    return MoveShortBlocks<2, kPack>(user, stride, length, blocks, stream);
  }
  if (length < 8) {
    return MoveShortBlocks<4, kPack>(user, stride, length, blocks, stream);
  }
  if (length < 16) {
    return MoveShortBlocks<8, kPack>(user, stride, length, blocks, stream);
  }
  if (length < 32) {
    return MoveShortBlocks<16, kPack>(user, stride, length, blocks, stream);
  }
  if (length < 64) {
    return MoveShortBlocks<32, kPack>(user, stride, length, blocks, stream);
  }
  if (length < 128) {
    return MoveShortBlocks<64, kPack>(user, stride, length, blocks, stream);
  }
  for (int64_t i = 0; i < blocks; ++i) {
    CopyBytes<kPack>(user, stream, length);
    user += stride;
    stream += length;
  }
}

// Moves `bytes` bytes (no more than are left) between the stream and the
// memory behind `position`, advancing it. Each turn of the loop moves
// either the rest of a block begun earlier, or as many whole blocks of the
// current run as the byte count allows, or the start of a block.
template <bool kPack>
void Move(StreamPosition& position, char* stream, int64_t bytes) {
  const Run* runs = position.runs();
  // Whole items from an item's start: only the runs' own loops, with no
  // position to keep per run (what a struct of a few members needs).
  if (position.run == 0 && position.block == 0 && position.byte == 0 &&
      bytes >= position.item_size) {
    const int64_t items = bytes / position.item_size;
    uintptr_t item_address =
        position.base + position.item * position.item_extent;
    for (int64_t i = 0; i < items; ++i) {
      for (int64_t r = 0; r < position.num_runs; ++r) {
        const Run& run = runs[r];
        MoveBlocks<kPack>(item_address + run.offset, run.stride, run.length,
                          run.count, stream);
        stream += run.length * run.count;
      }
      item_address += position.item_extent;
    }
    position.item += items;
    position.offset += items * position.item_size;
    bytes -= items * position.item_size;
  }
  while (bytes > 0) {
    const Run& run = runs[position.run];
    const uintptr_t block_address = position.base +
                                    position.item * position.item_extent +
                                    run.offset + position.block * run.stride;
    int64_t moved;
    if (position.byte != 0 || bytes < run.length) {
      moved = std::min(run.length - position.byte, bytes);
      CopyBytes<kPack>(block_address + position.byte, stream, moved);
      position.byte += moved;
      if (position.byte == run.length) {
        position.byte = 0;
        ++position.block;
      }
    } else {
      // The rest of the run, unless the byte count ends inside it (only
      // then divide: a division per run costs more than a small block).
      int64_t blocks = run.count - position.block;
      if (blocks * run.length > bytes) blocks = bytes / run.length;
      MoveBlocks<kPack>(block_address, run.stride, run.length, blocks, stream);
      moved = blocks * run.length;
      position.block += blocks;
    }
    stream += moved;
    bytes -= moved;
    position.offset += moved;
    if (position.block == run.count) {
      position.block = 0;
      if (++position.run == position.num_runs) {
        position.run = 0;
        ++position.item;
      }
    }
  }
}

bool IsContiguous(const Layout* layout, int64_t count) {
  return layout == nullptr || layout->IsContiguous(count);
}

uintptr_t DataStart(const void* buffer, const Layout* layout) {
  return reinterpret_cast<uintptr_t>(buffer) +
         (layout == nullptr ? 0 : layout->true_lb());
}

}  // namespace

int64_t Pack(const void* buffer, int64_t count, const Layout* layout,
             int64_t packed_offset, void* destination, int64_t max_bytes) {
  StreamPosition position(buffer, count, layout);
  const int64_t bytes = std::min(
      max_bytes, position.total - std::min(packed_offset, position.total));
  if (bytes <= 0) return 0;
  position.Seek(packed_offset);
  Move<true>(position, static_cast<char*>(destination), bytes);
  return bytes;
}

int64_t Unpack(const void* source, int64_t bytes, void* buffer, int64_t count,
               const Layout* layout, int64_t packed_offset) {
  StreamPosition position(buffer, count, layout);
  bytes =
      std::min(bytes, position.total - std::min(packed_offset, position.total));
  if (bytes <= 0) return 0;
  position.Seek(packed_offset);
  // The stream is only read; Move's pointer is non-const for Pack's sake.
  Move<false>(position, const_cast<char*>(static_cast<const char*>(source)),
              bytes);
  return bytes;
}

int64_t TypedCopy(const void* source, int64_t source_count,
                  const Layout* source_layout, void* destination,
                  int64_t destination_count, const Layout* destination_layout,
                  int64_t bytes) {
  bytes = std::min({bytes, PackedSize(source_count, source_layout),
                    PackedSize(destination_count, destination_layout)});
  if (bytes <= 0) return 0;
  // With one side contiguous this is a pack or an unpack.
  if (IsContiguous(destination_layout, destination_count)) {
    return Pack(source, source_count, source_layout, 0,
                Memory(DataStart(destination, destination_layout)), bytes);
  }
  if (IsContiguous(source_layout, source_count)) {
    return Unpack(Memory(DataStart(source, source_layout)), bytes, destination,
                  destination_count, destination_layout, 0);
  }
  // Otherwise walk both sides' segments in step, a batch at a time.
  constexpr int kBatch = 64;
  Segment from[kBatch];
  Segment to[kBatch];
  SegmentCursor source_cursor(source, source_count, source_layout);
  SegmentCursor destination_cursor(destination, destination_count,
                                   destination_layout);
  int64_t copied = 0;
  while (copied < bytes) {
    const SegmentPairing batch = PairSegments(source_cursor, destination_cursor,
                                              from, to, kBatch, bytes - copied);
    int i = 0;
    int j = 0;
    int64_t from_done = 0;  // bytes already copied of from[i]
    int64_t to_done = 0;    // and of to[j]
    while (i < batch.local_segments && j < batch.remote_segments) {
      const int64_t length =
          std::min(from[i].length - from_done, to[j].length - to_done);
      std::memcpy(static_cast<char*>(to[j].address) + to_done,
                  static_cast<const char*>(from[i].address) + from_done,
                  length);
      from_done += length;
      to_done += length;
      if (from_done == from[i].length) {
        ++i;
        from_done = 0;
      }
      if (to_done == to[j].length) {
        ++j;
        to_done = 0;
      }
    }
    if (batch.bytes == 0) break;  // cannot happen: both sides hold `bytes`
    copied += batch.bytes;
  }
  return copied;
}

SegmentCursor::SegmentCursor(const void* buffer, int64_t count,
                             const Layout* layout, int64_t packed_offset)
    : position_(buffer, count, layout) {
  position_.Seek(packed_offset);
}

int SegmentCursor::Fill(Segment* out, int max_segments, int64_t max_bytes) {
  StreamPosition& position = position_;
  const Run* runs = position.runs();
  int64_t budget = std::min(max_bytes, position.total - position.offset);
  int filled = 0;
  while (budget > 0) {
    const Run& run = runs[position.run];
    const uintptr_t address =
        position.base + position.item * position.item_extent + run.offset +
        position.block * run.stride + position.byte;
    const int64_t length = std::min(run.length - position.byte, budget);
    Segment* last = filled > 0 ? &out[filled - 1] : nullptr;
    if (last != nullptr &&
        reinterpret_cast<uintptr_t>(last->address) + last->length == address) {
      last->length += length;  // adjacent blocks make one segment
    } else if (filled < max_segments) {
      out[filled++] = Segment{Memory(address), length};
    } else {
      break;
    }
    budget -= length;
    position.offset += length;
    position.byte += length;
    if (position.byte < run.length) break;  // the budget ends in the block
    position.byte = 0;
    if (++position.block == run.count) {
      position.block = 0;
      if (++position.run == position.num_runs) {
        position.run = 0;
        ++position.item;
      }
    }
  }
  return filled;
}

SegmentPairing PairSegments(SegmentCursor& local, SegmentCursor& remote,
                            Segment* local_out, Segment* remote_out,
                            int max_segments, int64_t max_bytes) {
  SegmentPairing pairing;
  const int64_t local_start = local.position();
  pairing.local_segments = local.Fill(local_out, max_segments, max_bytes);
  const int64_t local_bytes = local.position() - local_start;
  const int64_t remote_start = remote.position();
  pairing.remote_segments = remote.Fill(remote_out, max_segments, local_bytes);
  pairing.bytes = remote.position() - remote_start;
  if (pairing.bytes < local_bytes) {
    // The remote side ran out of entries (or of data) first: give back the
    // local bytes it cannot match.
    local.Seek(local_start + pairing.bytes);
    int64_t kept = 0;
    int segments = 0;
    while (kept < pairing.bytes) {
      Segment& segment = local_out[segments++];
      segment.length = std::min(segment.length, pairing.bytes - kept);
      kept += segment.length;
    }
    pairing.local_segments = segments;
  }
  return pairing;
}

}  // namespace minimpi::datatype
