// The space of the buffer a program attaches for buffered sends
// (MPI_Buffer_attach), handed out to messages and taken back as they leave.
// Pure bookkeeping over a byte range, tested alone; BufferedSends
// (buffered_sends.h) drives it.
//
// Accounting follows the standard's promise to programs: a message of n
// packed bytes takes at most n + MPI_BSEND_OVERHEAD bytes of the buffer, so
// a buffer sized as the sum of (MPI_Pack_size + MPI_BSEND_OVERHEAD) over the
// messages in flight always holds them. Here it takes exactly that: the
// range [start, start + n + kMessageOverhead), with the data at the first
// kDataAlignment boundary in it. The bookkeeping itself lives outside the
// buffer. Free ranges are kept sorted and merged with their neighbours, and
// a message goes to the first free range that holds it, since messages to
// different peers leave in any order.
//
// Not thread-safe: its owner locks.
//
// Owned by: mpi/p2p. Called by: buffered_sends.cc.
#ifndef MINIMPI_MPI_P2P_BSEND_BUFFER_H_
#define MINIMPI_MPI_P2P_BSEND_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <map>

#include "absl/container/flat_hash_map.h"

namespace minimpi::p2p {

class BsendBuffer {
 public:
  // MPI_BSEND_OVERHEAD of the standard ABI (mpi.h; checked there).
  static constexpr size_t kMessageOverhead = 512;
  // Where data starts within a message's range: enough for any type, and
  // a cache line, so copies in and out start aligned.
  static constexpr size_t kDataAlignment = 64;
  static_assert(kDataAlignment < kMessageOverhead);

  BsendBuffer(std::byte* base, size_t size);
  BsendBuffer(const BsendBuffer&) = delete;
  BsendBuffer& operator=(const BsendBuffer&) = delete;

  std::byte* base() const { return base_; }
  size_t size() const { return size_; }

  // Room for `bytes` of packed data: where to put them, or nullptr when no
  // free range holds bytes + kMessageOverhead.
  std::byte* Allocate(size_t bytes);
  // Gives back what Allocate returned.
  void Free(std::byte* data);

  // No message holds any of the buffer.
  bool empty() const { return in_use_.empty(); }
  // Bytes held by messages, overhead included (tests).
  size_t used_bytes() const { return used_bytes_; }

  // The part of the buffer a message holds, from its start (tests).
  struct Range {
    size_t offset;
    size_t length;
  };
  Range RangeOf(std::byte* data) const { return in_use_.at(data); }

 private:
  std::byte* const base_;
  const size_t size_;
  std::map<size_t, size_t> free_;  // offset -> length, no two adjacent
  absl::flat_hash_map<std::byte*, Range> in_use_;  // by data address
  size_t used_bytes_ = 0;
};

}  // namespace minimpi::p2p

#endif  // MINIMPI_MPI_P2P_BSEND_BUFFER_H_
