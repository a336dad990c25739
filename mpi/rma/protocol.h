// The messages of one-sided communication. Puts and gets need none: they
// are RDMA writes and reads on the window's registered memory, so the
// target's CPU takes no part. Accumulates, compare-and-swap, passive-target
// locks and general active target's notices are messages to the window's
// VCI at the target, applied there by whoever progresses it, one at a time
// under that VCI's lock: which is what makes an accumulate atomic per
// element against every other accumulate on the window.
//
// Owned by: mpi/rma.
#ifndef MINIMPI_MPI_RMA_PROTOCOL_H_
#define MINIMPI_MPI_RMA_PROTOCOL_H_

#include <cstdint>

namespace minimpi::rma {

// First bytes of the messages one-sided communication owns (point-to-point
// and partitioned communication use 1..12; mpi/p2p/protocol.h).
enum class MessageType : uint8_t {
  kAccumulate = 32,   // apply `op` to target memory; reply if asked
  kCompareSwap,       // payload: compare value, then the new value
  kReply,             // an accumulate's or swap's answer (old data or none)
  kLockRequest,       // flags: kExclusive or not
  kLockGranted,
  kUnlock,            // flags: kExclusive or not
  kPost,              // general active target: the target exposes
  kComplete,          // the origin's access epoch to the target ended
  kUnlocked,          // the lock is released (so nothing of the epoch is
                      // left in flight when MPI_Win_unlock returns)
};

inline constexpr uint8_t kExclusive = 1;
inline constexpr uint8_t kWantsResult = 2;  // reply carries the old data
inline constexpr uint8_t kRefused = 4;  // reply: outside the target's memory
inline constexpr uint8_t kQueued = 8;   // kLockGranted: the request waited

struct Header {
  MessageType type;
  uint8_t flags = 0;
  uint16_t unused = 0;
  int32_t window = 0;       // the receiver's window id
  int32_t from_rank = 0;    // the sender's rank in the window's group
  uint32_t op = 0;          // kAccumulate: the predefined MPI_Op's handle
  uint32_t basic = 0;       // the predefined element type's handle
  uint32_t unused2 = 0;
  uint64_t offset = 0;      // bytes from the target window's base
  uint64_t length = 0;      // bytes of target memory
  uint64_t cookie = 0;      // the origin's operation, echoed by kReply
  uint64_t result_offset = 0;  // where the reply's data goes (packed bytes)
};
static_assert(sizeof(Header) <= 64);

}  // namespace minimpi::rma

#endif  // MINIMPI_MPI_RMA_PROTOCOL_H_
