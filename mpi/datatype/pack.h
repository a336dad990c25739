// Moving the data of (buffer, count, layout): packing it into a contiguous
// stream, unpacking a stream into it, copying between two layouts with no
// stream in between, and walking its memory segments for I/O vectors
// (process_vm_readv iovecs, verbs scatter/gather lists).
//
// Every function takes a `const Layout*`; a null layout means `count`
// contiguous bytes (MPI_BYTE-like data the transport already holds). The
// packed stream of (buffer, count, layout) is the data of item 0, then of
// item 1, ..., each in typemap order; `packed_offset` is a position in it,
// so a message can be moved in pieces and stop anywhere (a truncated
// receive). Addresses are computed as integers: a buffer may be
// MPI_BOTTOM with absolute displacements, or an address in another process
// (a SegmentCursor never dereferences one).
//
// The hot loop is one run at a time: a run is a count of equal blocks at a
// fixed stride, and blocks of 1..128 bytes are copied by code specialized
// for their length, so the compiler turns each copy into a few moves. No
// virtual call, no allocation, no division per block.
//
// Owned by: mpi/datatype. Called by: p2p (eager and rendezvous of
// non-contiguous data, single-copy iovecs), collectives (staging), the
// MPI_Pack/MPI_Unpack bindings, external32.cc.
#ifndef MINIMPI_MPI_DATATYPE_PACK_H_
#define MINIMPI_MPI_DATATYPE_PACK_H_

#include <cstdint>

#include "mpi/datatype/layout.h"

namespace minimpi::datatype {

// The packed size of (count, layout): count * size, or count bytes when
// layout is null.
inline int64_t PackedSize(int64_t count, const Layout* layout) {
  return layout == nullptr ? count : count * layout->size();
}

// Copies at most `max_bytes` bytes of the packed stream of
// (buffer, count, layout), starting at `packed_offset`, to `destination`.
// Returns the bytes copied: min(max_bytes, PackedSize - packed_offset).
int64_t Pack(const void* buffer, int64_t count, const Layout* layout,
             int64_t packed_offset, void* destination, int64_t max_bytes);

// Copies `bytes` bytes from `source` into the packed stream of
// (buffer, count, layout) at `packed_offset`, writing only the bytes of the
// typemap. Returns the bytes copied: min(bytes, PackedSize - packed_offset).
int64_t Unpack(const void* source, int64_t bytes, void* buffer, int64_t count,
               const Layout* layout, int64_t packed_offset);

// Copies the first `bytes` bytes of the packed stream of the source to the
// same place of the destination's packed stream, memory to memory (a
// vector into a contiguous array of its base items, a struct into another
// struct of the same signature). Returns the bytes copied: `bytes` capped
// by both packed sizes. Source and destination must not overlap.
int64_t TypedCopy(const void* source, int64_t source_count,
                  const Layout* source_layout, void* destination,
                  int64_t destination_count, const Layout* destination_layout,
                  int64_t bytes);

// One contiguous piece of memory: an iovec entry.
struct Segment {
  void* address = nullptr;
  int64_t length = 0;
};

namespace pack_internal {

// A place in the packed stream of (buffer, count, layout), and what it
// takes to find the memory behind it. Shared by the movers of pack.cc and
// SegmentCursor.
struct StreamPosition {
  StreamPosition(const void* buffer, int64_t count, const Layout* layout);
  // Moves to any packed offset in [0, total].
  void Seek(int64_t packed_offset);
  // What is walked: the layout's runs, or a single run standing for all
  // items when they continue each other (Layout::RunOfItems), or for
  // `count` bytes when there is no layout.
  const Run* runs() const { return one_run ? &all_items : layout_runs; }
  const int64_t* run_starts() const {
    return one_run ? all_items_starts : layout_run_starts;
  }

  uintptr_t base = 0;
  const Run* layout_runs = nullptr;
  const int64_t* layout_run_starts = nullptr;  // packed offset of each run
  int64_t num_runs = 0;
  int64_t item_size = 0;    // packed bytes per item walked
  int64_t item_extent = 0;  // distance between items walked
  bool one_run = false;
  Run all_items;
  int64_t all_items_starts[2] = {0, 0};
  int64_t total = 0;
  // Byte `byte` of block `block` of run `run` of item `item`; `offset` is
  // the packed offset of that byte.
  int64_t offset = 0;
  int64_t item = 0;
  int64_t run = 0;
  int64_t block = 0;
  int64_t byte = 0;
};

}  // namespace pack_internal

// Walks the memory segments of (buffer, count, layout) in packed order,
// from a packed offset, in batches the caller sizes. Adjacent blocks are
// coalesced within a batch. The layout must outlive the cursor.
class SegmentCursor {
 public:
  SegmentCursor(const void* buffer, int64_t count, const Layout* layout,
                int64_t packed_offset = 0);

  // Fills out[0..n) with the next segments, at most `max_segments` of them
  // holding at most `max_bytes` bytes together, and returns n. The last
  // segment is cut at the byte budget; the next Fill resumes inside it.
  int Fill(Segment* out, int max_segments, int64_t max_bytes);

  // Moves to any packed offset in [0, total_bytes()].
  void Seek(int64_t packed_offset) { position_.Seek(packed_offset); }

  int64_t position() const { return position_.offset; }
  int64_t total_bytes() const { return position_.total; }
  bool done() const { return position_.offset == position_.total; }

 private:
  pack_internal::StreamPosition position_;
};

// What PairSegments produced: entries on each side and the bytes each side
// covers (equal on both).
struct SegmentPairing {
  int local_segments = 0;
  int remote_segments = 0;
  int64_t bytes = 0;
};

// Fills two I/O vectors, at most `max_segments` entries each (IOV_MAX is
// 1024 for process_vm_readv), with the next segments of two cursors so that
// both cover the same number of bytes, at most `max_bytes`: one
// process_vm_readv / _writev call's worth. Both cursors advance by exactly
// that many bytes. Returns zero bytes when either cursor is done.
SegmentPairing PairSegments(SegmentCursor& local, SegmentCursor& remote,
                            Segment* local_out, Segment* remote_out,
                            int max_segments, int64_t max_bytes);

}  // namespace minimpi::datatype

#endif  // MINIMPI_MPI_DATATYPE_PACK_H_
