// The bytes net/tcp puts on a socket: a hello that opens every connection,
// then frames, each a fixed FrameHeader followed by `length` bytes whose
// meaning the frame's type gives. Both ends run the same build on the same
// architecture (a job is one binary), so structs travel as they are.
//
// Owned by: net/tcp. Called by: net/tcp/tcp_transport.cc and its tests.
#ifndef MINIMPI_NET_TCP_WIRE_H_
#define MINIMPI_NET_TCP_WIRE_H_

#include <cstdint>

namespace minimpi::net::tcp {

inline constexpr uint32_t kHelloMagic = 0x6d6d7063;  // "mmpc"

// The first bytes an initiator sends: who it is and which of the
// acceptor's VCIs the connection belongs to. The acceptor reads exactly
// this many bytes before handing the socket to that VCI.
struct Hello {
  uint32_t magic = kHelloMagic;
  int32_t rank = -1;       // kDynamicPeer: see listen_*
  int32_t vci = 0;         // the initiator's VCI
  int32_t target_vci = 0;  // the acceptor's VCI
  // A process of another job (MPI_Comm_spawn, accept/connect) has no rank
  // the acceptor knows: it says where it listens, which the acceptor was
  // told when it added the peer (Transport::AddPeer), and is found by that.
  uint32_t listen_address = 0;  // network order
  uint32_t listen_port = 0;     // host order
};
inline constexpr int32_t kDynamicPeer = -1;

enum class FrameType : uint32_t {
  // Either way (a socket carries both directions).
  kMessage = 1,         // `length` bytes of header || payload (a Send)
  kWrite = 2,           // `length` bytes for [address, +length) under `key`
  kWriteImmediate = 3,  // the same, then a kWriteImmediate with `immediate`
  kReadRequest = 4,     // `count` RemoteSegments under `key` follow
  // The answers, on the socket the request came on.
  kWriteAck = 5,      // the write `cookie` is in place
  kReadResponse = 6,  // `length` bytes answering the read `cookie`
  // Either way: the sender is shutting down cleanly; EOF follows.
  kBye = 7,
};

struct FrameHeader {
  FrameType type = FrameType::kMessage;
  uint32_t immediate = 0;
  uint64_t length = 0;   // bytes after this header
  uint64_t address = 0;  // kWrite*: where the bytes go
  uint64_t cookie = 0;   // kWrite*, kReadRequest: echoed by the answer
  uint32_t key = 0;      // kWrite*, kReadRequest: the remote key
  uint32_t count = 0;    // kReadRequest: segments that follow
};
static_assert(sizeof(FrameHeader) == 40);

// One piece of a read request: memory of the target to read, in order.
struct RemoteSegment {
  uint64_t address = 0;
  uint64_t length = 0;
};

}  // namespace minimpi::net::tcp

#endif  // MINIMPI_NET_TCP_WIRE_H_
