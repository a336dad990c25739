#include "mpi/p2p/bsend_buffer.h"

#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>

namespace minimpi::p2p {

BsendBuffer::BsendBuffer(std::byte* base, size_t size)
    : base_(base), size_(size) {
  if (size > 0) free_.emplace(0, size);
}

std::byte* BsendBuffer::Allocate(size_t bytes) {
  if (bytes > std::numeric_limits<size_t>::max() - kMessageOverhead) {
    return nullptr;
  }
  const size_t charge = bytes + kMessageOverhead;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < charge) continue;
    const size_t offset = it->first;
    if (it->second > charge) {
      free_.emplace(offset + charge, it->second - charge);
    }
    free_.erase(it);
    const uintptr_t start = reinterpret_cast<uintptr_t>(base_ + offset);
    const uintptr_t aligned =
        (start + kDataAlignment - 1) & ~uintptr_t{kDataAlignment - 1};
    std::byte* data = base_ + offset + (aligned - start);
    in_use_.emplace(data, Range{offset, charge});
    used_bytes_ += charge;
    return data;
  }
  return nullptr;
}

void BsendBuffer::Free(std::byte* data) {
  auto used = in_use_.find(data);
  if (used == in_use_.end()) {
    std::fprintf(stderr,
                 "minimpi: internal error: freeing buffered-send space that "
                 "was not allocated\n");
    std::abort();
  }
  Range range = used->second;
  in_use_.erase(used);
  used_bytes_ -= range.length;
  // Merge with the free neighbours, so the largest message that fits grows
  // back as messages leave.
  auto next = free_.lower_bound(range.offset);
  if (next != free_.end() && range.offset + range.length == next->first) {
    range.length += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto previous = std::prev(next);
    if (previous->first + previous->second == range.offset) {
      previous->second += range.length;
      return;
    }
  }
  free_.emplace(range.offset, range.length);
}

}  // namespace minimpi::p2p
