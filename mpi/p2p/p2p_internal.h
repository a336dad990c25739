// Helpers the files of mpi/p2p share: headers of control messages, filling
// a receive's status from a header, the memory a buffer touches for
// registration, and the state of a gathered read (receive.cc, rendezvous.cc
// and progress.cc all reach it). Private to the p2p library.
//
// Owned by: mpi/p2p.
#ifndef MINIMPI_MPI_P2P_P2P_INTERNAL_H_
#define MINIMPI_MPI_P2P_P2P_INTERNAL_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "mpi/datatype/layout.h"
#include "mpi/datatype/pack.h"
#include "mpi/p2p/protocol.h"
#include "mpi/vci/request.h"
#include "net/transport.h"

namespace minimpi::p2p {

// Requests belong to the VCIs (mpi/vci/request.h); point-to-point fills and
// completes them everywhere in its files.
using vci::Error;
using vci::Progressable;
using vci::ReceiveArguments;
using vci::Request;
using vci::RequestKind;
using vci::RequestPool;
using vci::RequestState;
using vci::SendArguments;
using vci::SendMode;
using vci::Status;

inline MessageHeader MakeControl(MessageType type, uint64_t sender_request) {
  MessageHeader header{};
  header.type = type;
  header.sender_request = sender_request;
  return header;
}

inline void FillStatus(Request* request, const MessageHeader& header,
                       size_t delivered) {
  request->status.source = header.source;
  request->status.tag = header.tag;
  request->status.bytes = delivered;
  request->status.arrived_bytes = header.length;
  request->status.error =
      header.length > request->capacity ? Error::kTruncated : Error::kNone;
}

// The memory a (buffer, count, layout) touches, as one region to register
// for remote access: from the lowest byte of the first item to the highest
// of the last.
inline void SpanOf(const void* buffer, int64_t count,
                   const datatype::Layout* layout, size_t bytes,
                   std::byte** start, size_t* length) {
  auto* base = static_cast<std::byte*>(const_cast<void*>(buffer));
  if (layout == nullptr || count == 0) {
    *start = base;
    *length = bytes;
    return;
  }
  const auto [low, high] = layout->TouchedBytes(count);
  *start = base + low;
  *length = static_cast<size_t>(high - low);
}

// Whether a layout's pieces are too small to move one segment each: then a
// contiguous staging copy (one memcpy per piece) is far cheaper than a
// cross-memory or RDMA segment per piece.
inline bool HasSmallPieces(const datatype::Layout& layout, size_t min_piece) {
  const auto blocks = static_cast<size_t>(layout.num_blocks());
  return blocks > 0 && static_cast<size_t>(layout.size()) / blocks < min_piece;
}

inline net::MemoryRegion RegisterOrDie(net::Transport& transport,
                                       std::byte* start, size_t length,
                                       const char* what) {
  auto region = transport.RegisterMemory(start, length);
  if (!region.ok()) {
    std::fprintf(stderr, "minimpi: cannot register a %s buffer: %s\n", what,
                 std::string(region.status().message()).c_str());
    std::abort();
  }
  return *region;
}

}  // namespace minimpi::p2p

// Declared with the request (mpi/vci/request.h), which points to it; only
// point-to-point reaches inside.
namespace minimpi::vci {

// The state of one gathered read: where the next bytes come from (the
// sender's memory, walked with its layout as it described it) and go to.
struct GatheredRead {
  GatheredRead(void* receive_buffer, int64_t receive_count,
               const datatype::Layout* receive_layout, uint64_t sender_address,
               int64_t sender_count, datatype::LayoutRef sender,
               size_t delivered)
      : sender_layout(std::move(sender)),
        local(receive_buffer, receive_count, receive_layout),
        remote(reinterpret_cast<const void*>(sender_address), sender_count,
               sender_layout.get()),
        remaining(static_cast<int64_t>(delivered)) {}

  datatype::LayoutRef sender_layout;  // empty: the sender's data is contiguous
  datatype::SegmentCursor local;
  datatype::SegmentCursor remote;
  int64_t remaining;    // bytes not yet posted
  int outstanding = 0;  // posted reads not yet complete
  // Owned contiguous copy the read lands in, unpacked into the receive
  // buffer at the end; null when the read lands in place.
  std::byte* staging = nullptr;
  bool stalled = false;  // on the VCI's stalled_reads list
};

}  // namespace minimpi::vci

namespace minimpi::p2p {

using vci::GatheredRead;

}  // namespace minimpi::p2p

#endif  // MINIMPI_MPI_P2P_P2P_INTERNAL_H_
