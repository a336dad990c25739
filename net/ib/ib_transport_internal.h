// What the files of net/ib's transport share: buffer and access constants,
// small helpers, and the state one VCI owns (its queues, connections, send
// buffers and doorbell). Private to the ib_transport library.
//
// Owned by: net/ib.
#ifndef MINIMPI_NET_IB_IB_TRANSPORT_INTERNAL_H_
#define MINIMPI_NET_IB_IB_TRANSPORT_INTERNAL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "net/ib/ib_transport.h"
#include "net/ib/verbs.h"

namespace minimpi::net::ib {

// Registered buffers each VCI keeps for sends too large to go inline.
inline constexpr int kSendBuffers = 32;
// Gathered transfers up to this many pieces build their work requests on
// the stack: no allocation per post in the common case.
inline constexpr size_t kInlinePieces = 16;
// Sleep slices while a VCI waits for credits: returned credits arrive as
// an RDMA write, which raises no completion here.
inline constexpr int64_t kCreditWaitSliceNs = 50'000;
inline constexpr int kReceiveAccess = IBV_ACCESS_LOCAL_WRITE;
inline constexpr int kRemoteAccess =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

inline size_t RoundUp(size_t value, size_t to) {
  return (value + to - 1) / to * to;
}

struct FreeDeleter {
  void operator()(char* memory) const { std::free(memory); }
};

inline int MtuBytes(ibv_mtu mtu) { return 128 << static_cast<int>(mtu); }

// Everything one VCI owns.
struct IbTransport::Vci {
  std::mutex setup_mutex;
  std::atomic<bool> ready{false};
  VerbsCq* cq = nullptr;
  VerbsSrq* srq = nullptr;

  // Guarded by setup_mutex.
  absl::flat_hash_map<uint64_t, Connection*> by_peer;
  absl::flat_hash_map<uint32_t, Connection*> by_qp_number;
  std::vector<std::unique_ptr<Connection>> connections;
  std::vector<std::unique_ptr<char, FreeDeleter>> receive_chunks;
  std::vector<VerbsMr> receive_mrs;
  std::atomic<int> receive_buffers{0};
  int overcommitted = 0;  // connections that added fewer than their credits
  // A receive buffer's bytes are followed by its chunk's local key, so a
  // consumed buffer is reposted with no lookup.
  size_t receive_stride = 0;

  // The owner's (the thread holding the VCI), set up before `ready`.
  absl::flat_hash_map<uint64_t, Connection*> owner_by_peer;
  absl::flat_hash_map<uint32_t, Connection*> owner_by_qp_number;
  std::vector<Op> ops;
  std::vector<uint32_t> free_ops;
  int budget_used = 0;
  std::unique_ptr<char, FreeDeleter> send_pool;
  VerbsMr send_mr;
  std::vector<char*> free_send_buffers;
  std::vector<Connection*> credit_backlog;
  uint64_t credit_waits = 0;
  uint64_t queue_full_waits = 0;
  uint64_t credit_returns = 0;
  std::atomic<bool> starving{false};  // read by sleepers

  // The doorbell (on the first VCI of a group).
  std::mutex doorbell_mutex;
  std::atomic<VerbsChannel*> channel{nullptr};
  int event_fd = -1;
  std::atomic<bool> armed{false};
  std::atomic<uint32_t> rings{0};
  std::atomic<int> sleepers{0};
};

}  // namespace minimpi::net::ib

#endif  // MINIMPI_NET_IB_IB_TRANSPORT_INTERNAL_H_
