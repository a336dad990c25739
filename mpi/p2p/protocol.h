// The wire format of point-to-point traffic, shared by every transport.
//
//   kEager             the 16-byte envelope + payload in one two-sided
//                      message (small messages then fit one cache line)
//   kEagerSync         the same, and the receiver answers kSyncAck on match
//   kRendezvousRequest header only; the receiver reads the payload straight
//                      from the sender's buffer (RDMA read / CMA single copy)
//                      and answers kRendezvousDone
//
// Non-contiguous data: eager messages carry it packed (the sender packs it
// straight into the transport's buffer, the receiver unpacks from there).
// A rendezvous request carries the sender's memory layout (SenderLayout and
// its runs) and the receiver reads every piece in place with gathered
// reads; only a layout too long for one message is packed into a staging
// copy first. Non-contiguous rendezvous messages are never split.
//
// A send may be cancelled while its message is unmatched: see kCancelSend
// below.
//
// Large messages (at least Settings::rendezvous_split_min bytes) are moved by
// both sides at once, so two cores copy instead of one: the receiver answers
// the request with kClearToSend, naming its buffer and a split point, then
// reads [0, split) while the sender writes [split, end) into the receiver's
// buffer and reports kWriteDone. The receiver still sends kRendezvousDone
// when its read is over. Each side completes after both of its events.
#ifndef MINIMPI_MPI_P2P_PROTOCOL_H_
#define MINIMPI_MPI_P2P_PROTOCOL_H_

#include <cstddef>
#include <cstdint>

#include "net/transport.h"

namespace minimpi::p2p {

enum class MessageType : uint8_t {
  kEager = 1,
  kEagerSync,
  kRendezvousRequest,
  kSyncAck,
  kRendezvousDone,
  kClearToSend,
  kWriteDone,
  kCancelSend,    // the sender withdraws an unmatched message (MPI_Cancel)
  kCancelAnswer,  // whether it was withdrawn (flags: kCancelled)
  // Partitioned communication's control messages (mpi/part owns their
  // meaning; p2p only carries them): a send init announced to the receiver,
  // the receiver's per-round clear to send, a freed send init withdrawn.
  kPartitionedInit,
  kPartitionedClear,
  kPartitionedFree,
  // Partitioned backends other than RDMA write with immediate
  // (mpi/part/partitioned.h): a transport partition's data as a two-sided
  // message (persist), and the signal that follows a plain RDMA write
  // (rma).
  kPartitionedData,
  kPartitionedArrived,
};

struct MessageHeader {
  MessageType type;
  // What a collective's message is, for the matching engine: the
  // collective (match::TrafficKind::Collective; 0 for point-to-point) and
  // the communicator size (saturating at 65535). The size of the message is
  // its length.
  uint8_t collective;
  uint16_t comm_size;
  int32_t context;  // the receiver's matching context
  int32_t source;   // the sender's rank in the communicator
  int32_t tag;
  uint64_t length;          // payload bytes of the whole message
  uint64_t sender_request;  // echoed back in kSyncAck / kRendezvousDone
  // kRendezvousRequest: where the payload lives; kClearToSend: where the
  // receiver wants it.
  uint64_t sender_address;
  uint32_t remote_key;        // key of the region at sender_address
  uint32_t flags;             // kRendezvousRequest: kSenderLayoutInPayload
  uint64_t receiver_request;  // kClearToSend, echoed back in kWriteDone
  uint64_t split_offset;      // kClearToSend: the sender writes from here
};

static_assert(sizeof(MessageHeader) <= net::kMaxHeaderBytes);

// kRendezvousRequest of non-contiguous data: the payload describes the
// sender's memory, a SenderLayout followed by its runs (relative to
// sender_address), so the receiver can read the data in one gathered copy.
inline constexpr uint32_t kSenderLayoutInPayload = 1;

struct SenderLayout {
  int64_t count;   // items
  int64_t extent;  // bytes from one item to the next
  int64_t num_runs;
  int64_t reserved;
};

// Cancelling a send (MPI_Cancel) whose message has left: kCancelSend
// repeats the message's envelope (context, source, tag) and sender_request.
// The receiver withdraws the message if it is still the earliest unmatched
// one with that envelope from that sender (it then never matches) and
// answers kCancelAnswer with kCancelled set; otherwise it answers without it
// and the send completes as usual. The sender touches its request only on a
// kCancelled answer: then nothing else can complete it.
inline constexpr uint32_t kCancelled = 1;

// kEager messages carry only the envelope: the leading fields of
// MessageHeader, up to and including `tag`. The length is the message's.
inline constexpr size_t kEagerHeaderBytes = 16;
static_assert(offsetof(MessageHeader, length) == kEagerHeaderBytes);

}  // namespace minimpi::p2p

#endif  // MINIMPI_MPI_P2P_PROTOCOL_H_
