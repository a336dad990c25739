// The small pure pieces of net/ib, apart so that unit tests reach them
// without a device: what two connection managers say to each other, who
// wins when two VCIs ask each other at once, the credit arithmetic that
// keeps shared receive queues from running dry, and how work-request ids
// and immediates are encoded.
//
// Owned by: net/ib. Called by: net/ib/ib_transport.cc, its tests.
#ifndef MINIMPI_NET_IB_CONNECTION_PROTOCOL_H_
#define MINIMPI_NET_IB_CONNECTION_PROTOCOL_H_

#include <arpa/inet.h>

#include <algorithm>
#include <cstdint>

#include "net/transport.h"

namespace minimpi::net::ib {

// --- Connecting -----------------------------------------------------------
//
// A connection is one RC queue pair per (our VCI, peer rank, peer VCI),
// used both ways. The VCI that first wants to talk creates its QP and sends
// a Request with everything the far side needs to connect to it (address,
// QP number, first PSN, MTU, and where to return credits); the far side's
// connection manager creates its own QP, connects it, and answers with an
// Accept carrying the same about itself. Nothing is exchanged by the whole
// job at once: only the two processes that talk.
//
// When both VCIs ask at the same time, each has a QP already; the request
// of the smaller (rank, VCI) wins: its peer connects its existing QP to it
// and accepts, and the smaller one ignores the request it received. So
// each pair ends with exactly one QP on each side.

inline constexpr uint32_t kConnectMagic = 0x6d694231;  // "miB1"

// Request: "connect to my QP". Accept: "mine is connected to yours,
// connect yours". Ready: "mine is connected too, send away" (until then
// the acceptor sends nothing: a packet reaching a QP that cannot receive
// yet is dropped and retried by the hardware only after tens of
// milliseconds).
enum class ConnectType : uint8_t { kRequest = 1, kAccept = 2, kReady = 3 };

// Sent whole over the connection managers' TCP sockets (same layout on
// both sides: every rank runs the same build).
struct ConnectMessage {
  uint32_t magic = kConnectMagic;
  ConnectType type = ConnectType::kRequest;
  uint8_t mtu = 0;   // enum ibv_mtu of the sender's port
  uint16_t lid = 0;  // InfiniBand: the sender's port LID
  int32_t from_rank = -1;
  int32_t from_vci = 0;
  int32_t to_vci = 0;
  uint32_t qp_num = 0;
  uint32_t psn = 0;      // the sender's first send PSN
  uint8_t gid[16] = {};  // RoCE (and global routes): the sender's GID
  uint8_t global = 0;    // 1: address by GID (RoCE), 0: by LID
  uint8_t padding[3] = {};
  uint32_t credits = 0;         // receive buffers the sender gives the receiver
  uint64_t credit_address = 0;  // where the receiver returns credits to
  uint32_t credit_rkey = 0;
  uint32_t padding2 = 0;
};
static_assert(sizeof(ConnectMessage) == 72, "wire layout changed");

enum class PairState : uint8_t {
  kNone,       // no QP for this pair yet
  kRequested,  // our QP exists and our Request is on its way
  kAccepted,   // we accepted theirs; waiting for their Ready
  kConnected,  // both QPs connected: usable
};

// What a connection manager does with a Request from `theirs` to `mine`.
enum class RequestAction : uint8_t {
  kCreateAndAccept,  // no QP here yet: make one, connect it, accept
  kAcceptWithOurs,   // we asked too but they win: connect ours, accept
  kIgnore,           // we win (they will accept ours), or already done
};

inline bool Precedes(PeerVci a, PeerVci b) {
  return a.rank != b.rank ? a.rank < b.rank : a.vci < b.vci;
}

inline RequestAction DecideOnRequest(PairState state, PeerVci mine,
                                     PeerVci theirs) {
  switch (state) {
    case PairState::kNone:
      return RequestAction::kCreateAndAccept;
    case PairState::kRequested:
      return Precedes(theirs, mine) ? RequestAction::kAcceptWithOurs
                                    : RequestAction::kIgnore;
    case PairState::kAccepted:
    case PairState::kConnected:
      return RequestAction::kIgnore;
  }
  return RequestAction::kIgnore;
}

// An Accept connects our QP only while we still wait for one.
inline bool ShouldConnectOnAccept(PairState state) {
  return state == PairState::kRequested;
}

// --- Credits --------------------------------------------------------------
//
// Every two-sided message and every write with immediate consumes one
// receive buffer from the target VCI's shared receive queue. Each
// connection owns `granted` of the buffers posted there; the sender may
// have that many unanswered at once. The receiver reposts a buffer as soon
// as its completion is handled and, once a quarter of the grant is owed,
// RDMA-writes its running total of returned buffers into a word of the
// sender's memory (no receive consumed, so returning credits needs no
// credit). The queue therefore never runs dry: no receiver-not-ready.
// Counters are 32-bit and wrap; only differences matter.

class SendCredits {
 public:
  SendCredits() = default;
  explicit SendCredits(uint32_t granted) : granted_(granted) {}
  // `returned`: the peer's running total of buffers given back.
  uint32_t Available(uint32_t returned) const {
    return granted_ + returned - used_;
  }
  // Takes one credit; false when none is left.
  bool Take(uint32_t returned) {
    if (Available(returned) == 0) return false;
    ++used_;
    return true;
  }
  uint32_t granted() const { return granted_; }

 private:
  uint32_t granted_ = 0;
  uint32_t used_ = 0;
};

class ReturnCredits {
 public:
  ReturnCredits() = default;
  explicit ReturnCredits(uint32_t granted)
      : threshold_(std::max<uint32_t>(1, granted / 4)) {}
  // A buffer of this connection was consumed and has been reposted.
  void Reposted() { ++owed_; }
  bool ShouldReturn() const { return owed_ >= threshold_; }
  uint32_t owed() const { return owed_; }
  // The running total to write to the sender, owed credits included.
  uint32_t TakeTotal() {
    returned_ += owed_;
    owed_ = 0;
    return returned_;
  }

 private:
  uint32_t threshold_ = 1;
  uint32_t owed_ = 0;
  uint32_t returned_ = 0;
};

// --- Work-request ids and immediates ---------------------------------------
//
// A completion in error carries only its wr_id, status and QP number (its
// opcode is undefined), so the wr_id alone says what it was: receive
// buffers are aligned addresses (low bit 0); send-side work is an index
// into the VCI's table of operations, shifted, with the low bit set.

inline uint64_t ReceiveWorkId(const void* buffer) {
  return reinterpret_cast<uint64_t>(buffer);
}
inline uint64_t OperationWorkId(uint32_t index) {
  return (uint64_t{index} << 1) | 1;
}
inline bool IsOperationWorkId(uint64_t wr_id) { return (wr_id & 1) != 0; }
inline uint32_t OperationIndex(uint64_t wr_id) {
  return static_cast<uint32_t>(wr_id >> 1);
}

// Immediates travel in network byte order (ibv_send_wr::imm_data and
// ibv_wc::imm_data are __be32): a peer of the other endianness reads the
// same number.
inline uint32_t EncodeImmediate(uint32_t immediate) { return htonl(immediate); }
inline uint32_t DecodeImmediate(uint32_t wire) { return ntohl(wire); }

}  // namespace minimpi::net::ib

#endif  // MINIMPI_NET_IB_CONNECTION_PROTOCOL_H_
