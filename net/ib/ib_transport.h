// The InfiniBand / RoCE transport: the whole transport interface on RC
// queue pairs, through the thin verbs layer (net/ib/verbs.h), so that
// everything here runs in CI over the software device.
//
// Per VCI, made when the VCI first talks (by its owner's first post, or by
// the connection manager when a peer's first Request for it arrives): one
// completion queue (on its doorbell group's completion channel), one shared
// receive queue, and a pool of registered send buffers. Per (our VCI, peer
// rank, peer VCI) that talks: one RC QP, connected on first use through
// the connection manager (connection_manager.h, connection_protocol.h),
// never all-to-all at setup, and `credits` receive buffers added to the
// VCI's shared receive queue for it (while the queue holds fewer than
// Settings::ib_receive_buffers; past that, its credits share the buffers).
//
// Data path:
//   - Send: header || payload as one SEND; inline (copied by the device at
//     post) when small enough, else copied into a registered send buffer
//     that the send's completion frees. The receive buffer is reposted as
//     soon as the handler returns, and credits go back by RDMA write
//     (connection_protocol.h): the shared receive queue never runs dry.
//   - RDMA write, write with immediate (one credit: it consumes a receive),
//     read: one work request each (gathered or split by max_sge).
//   - The send queue's outstanding-work-request limit, the VCI's completion
//     budget, the send-buffer pool and credits all answer kRetry.
//   - Errors: a completion in error, an overrun CQ or a fatal asynchronous
//     event prints one line naming the peer, its node, the operation and
//     ibv_wc_status_str, and ends the job.
//
// Threading: each VCI is used by one thread at a time (net/transport.h).
// The connection manager's thread also creates VCIs' resources and QPs and
// connects them, under the VCI's setup mutex; the owner looks connections
// up without a lock once they are connected (an acquire load), and takes
// the mutex only on first contact with a pair or QP number.
//
// Files: port_choice.cc (device, port, GID), ib_transport.cc (setup,
// teardown, errors, memory, doorbells), ib_connections.cc, ib_post.cc,
// ib_completions.cc; ib_transport_internal.h holds the VCI's state.
//
// Owned by: net/ib. Called by: net/transport.cc (CreateTransport).
#ifndef MINIMPI_NET_IB_IB_TRANSPORT_H_
#define MINIMPI_NET_IB_IB_TRANSPORT_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "net/ib/connection_manager.h"
#include "net/ib/connection_protocol.h"
#include "net/ib/registration_cache.h"
#include "net/ib/verbs.h"
#include "net/transport.h"
#include "runtime/bootstrap.h"
#include "runtime/settings.h"

namespace minimpi::net::ib {

// The verbs layer Settings names: the test device library
// (MINIMPI_IB_TEST_DEVICE) or libibverbs.
absl::StatusOr<std::unique_ptr<Verbs>> LoadVerbs(
    const runtime::Settings& settings);

// The device, port and GID a process uses, as chosen from what it found.
struct PortChoice {
  std::string device;
  uint8_t port = 0;
  bool ethernet = false;  // RoCE: address by GID
  uint16_t lid = 0;
  int gid_index = -1;  // -1: none (InfiniBand without global routes)
  ibv_gid gid = {};
  ibv_mtu mtu = IBV_MTU_1024;
};

// Picks the device (Settings::ib_device, else the first with an active
// port), the port (Settings::ib_port, else the first active one) and, for
// RoCE, the GID (Settings::ib_gid_index, else RoCE v2 with an IPv4 address,
// else RoCE v2, else the first valid entry). An error says what was
// missing and what exists.
absl::StatusOr<PortChoice> ChoosePort(Verbs& verbs,
                                      const runtime::Settings& settings);

// Collective over the job (one Put/Commit/Fence for the connection
// managers' addresses). NotFound when no device can be used.
absl::StatusOr<std::unique_ptr<Transport>> CreateIbTransport(
    runtime::Bootstrap& bootstrap, const runtime::Settings& settings);

// Whether this process could use net/ib (a device with an active port
// opens); `why` says why not. Not collective.
bool IbUsable(const runtime::Settings& settings, std::string* why);

class IbTransport final : public Transport {
 public:
  static absl::StatusOr<std::unique_ptr<IbTransport>> Create(
      runtime::Bootstrap& bootstrap, const runtime::Settings& settings,
      std::unique_ptr<Verbs> verbs);
  ~IbTransport() override;
  IbTransport(const IbTransport&) = delete;
  IbTransport& operator=(const IbTransport&) = delete;

  const char* name() const override { return "ib"; }
  Link LinkTo(int rank) const override {
    return rank == rank_ ? Link::kSelf : Link::kIb;
  }
  int num_vcis() const override { return num_vcis_; }
  size_t max_message_size() const override { return max_message_; }

  absl::StatusOr<MemoryRegion> RegisterMemory(void* address,
                                              size_t length) override;
  void DeregisterMemory(const MemoryRegion& region) override;

  PostResult Send(int vci, PeerVci peer, const void* header,
                  size_t header_length, const void* payload,
                  size_t payload_length) override;
  PostResult SendPacked(
      int vci, PeerVci peer, const void* header, size_t header_length,
      size_t payload_length,
      absl::FunctionRef<void(void* destination)> write_payload) override;
  PostResult RdmaRead(int vci, PeerVci peer, void* local,
                      const MemoryRegion& local_region, RemoteBuffer remote,
                      size_t length, uint64_t context) override;
  PostResult RdmaWrite(int vci, PeerVci peer, const void* local,
                       const MemoryRegion& local_region, RemoteBuffer remote,
                       size_t length, uint64_t context) override;
  PostResult RdmaWriteImmediate(int vci, PeerVci peer, const void* local,
                                const MemoryRegion& local_region,
                                RemoteBuffer remote, size_t length,
                                uint32_t immediate, uint64_t context) override;
  PostResult RdmaReadv(int vci, PeerVci peer, const IoSegment* local,
                       int local_count, const MemoryRegion& local_region,
                       const IoSegment* remote, int remote_count,
                       uint32_t remote_key, uint64_t context) override;
  PostResult RdmaWritev(int vci, PeerVci peer, const IoSegment* local,
                        int local_count, const MemoryRegion& local_region,
                        RemoteBuffer remote, const uint32_t* immediate,
                        uint64_t context) override;
  // Beyond max_sge a gathered transfer is split into several work requests.
  // (at most half the send queue, so one transfer always fits in it).
  int max_io_segments() const override {
    return std::max(1, send_queue_depth_ / 2);
  }
  int Poll(int vci, CompletionHandler& handler, int max_completions) override;

  // Doorbells are completion channels: the VCIs of a group (Settings::
  // num_vcis share VCI 0's, each endpoint VCI has its own) put their CQs on
  // one channel; arming requests a notification on each, sleeping polls the
  // channel's descriptor and an eventfd for RingDoorbell.
  bool has_doorbell() const override { return true; }
  int DoorbellOf(int vci) const override {
    return vci < shared_vcis_ ? 0 : vci;
  }
  void AlsoRingOnFirstContact(Transport* other) override { also_ring_ = other; }
  uint64_t ArmDoorbell(int vci) override;
  void SleepOnDoorbell(int vci, uint64_t token, int64_t timeout_ns) override;
  void RingDoorbell(int vci) override;
  bool MayHaveWork(int vci) const override;

  // For tests.
  struct Counters {
    int queue_pairs = 0;            // QPs of this VCI
    int receive_buffers = 0;        // posted in its shared receive queue
    int overcommitted = 0;          // connections that found it full
    uint64_t credit_waits = 0;      // posts answered kRetry for credits
    uint64_t queue_full_waits = 0;  // ... for a full send queue or budget
    uint64_t credit_returns = 0;    // RDMA writes returning credits
  };
  Counters CountersForTesting(int vci);
  const PortChoice& port() const { return port_; }

 private:
  struct Vci;

  struct Connection {
    int vci = 0;
    PeerVci peer;
    VerbsQp* qp = nullptr;
    uint32_t qp_num = 0;
    uint32_t psn = 0;
    // Set (release) by whoever connects the QP; the owner reads it
    // (acquire) before using anything below.
    std::atomic<PairState> state{PairState::kNone};

    // Filled before `state` becomes kConnected.
    SendCredits send_credits;
    RemoteBuffer peer_credit_word;  // where we return their credits
    // The peer RDMA-writes its running total of returned buffers here.
    std::unique_ptr<uint32_t[]> credit_word_storage;
    VerbsMr credit_word_mr;
    uint32_t granted = 0;  // buffers we gave the peer

    // Owner only.
    bool owner_synchronized = false;  // has acquired `state` after connect
    ReturnCredits return_credits;
    bool in_credit_backlog = false;
    int outstanding = 0;  // work requests posted, not completed
    uint32_t CreditsReturned() const {
      return reinterpret_cast<const std::atomic<uint32_t>*>(
                 credit_word_storage.get())
          ->load(std::memory_order_acquire);
    }
  };

  // One entry per posted send-side work request (or group of them).
  enum class OpKind : uint8_t { kSend, kCreditReturn, kUser };
  struct Op {
    OpKind kind = OpKind::kSend;
    bool in_use = false;
    const char* what = "";
    Connection* connection = nullptr;
    char* send_buffer = nullptr;  // kSend through a buffer: freed at end
    uint64_t context = 0;         // kUser
    int remaining = 0;            // work requests not completed yet
  };

  IbTransport(runtime::Bootstrap& bootstrap, const runtime::Settings& settings,
              std::unique_ptr<Verbs> verbs);
  absl::Status Setup(runtime::Bootstrap& bootstrap,
                     const runtime::Settings& settings);

  // The VCI's device resources, made on first use (any thread).
  Vci& Ready(int vci);
  // The connection to `peer` if connected (owner only, no lock); else
  // starts connecting and returns null.
  Connection* Connected(Vci& state, PeerVci peer);
  Connection* ByQpNumber(Vci& state, uint32_t qp_num);
  // Under the VCI's setup mutex: a new QP in INIT with its buffers posted.
  Connection* CreateConnectionLocked(Vci& state, PeerVci peer);
  // Under the setup mutex: RTR and RTS towards the peer `message` describes.
  void ConnectLocked(Connection& connection, const ConnectMessage& message);
  ConnectMessage Describe(const Connection& connection, ConnectType type) const;
  void OnConnectMessage(const ConnectMessage& message);
  void OnAsyncEvent(int fd);

  // Send-side bookkeeping: room for `requests` work requests on
  // `connection` and in the VCI's completion budget, and an op slot.
  Op* StartOp(Vci& state, Connection& connection, int requests, OpKind kind,
              const char* what);
  void CancelOp(Vci& state, Op* op);
  uint32_t IndexOf(const Vci& state, const Op* op) const;
  char* TakeSendBuffer(Vci& state);
  PostResult PostSendMessage(int vci, PeerVci peer, const void* header,
                             size_t header_length, const void* payload,
                             size_t payload_length,
                             absl::FunctionRef<void(void*)>* write_payload);
  // Posts `wr` (a chain) or dies on an error other than a full queue.
  bool PostOrRetry(Connection& connection, ibv_send_wr* wr, const char* what);
  void GiveBackCredits(Vci& state, Connection& connection);
  void FlushCreditBacklog(Vci& state);
  void RepostReceive(Vci& state, char* buffer);

  [[noreturn]] void Die(const std::string& what);
  [[noreturn]] void DieOnCompletion(Vci& state, const ibv_wc& wc);
  std::string Who(int rank) const;

  runtime::Bootstrap* const bootstrap_;
  const std::unique_ptr<Verbs> verbs_;
  const int rank_;
  const int size_;
  const int num_vcis_;
  const int shared_vcis_;
  const size_t max_message_;
  const int credits_;
  const int connect_timeout_ms_;
  int send_queue_depth_ = 0;
  int max_send_sge_ = 1;
  uint32_t max_inline_ = 0;
  int receive_queue_capacity_ = 0;  // per VCI
  int completion_budget_ = 0;       // send-side completions per VCI
  int cq_entries_ = 0;
  uint8_t max_read_atomic_ = 1;

  PortChoice port_;
  VerbsContext* context_ = nullptr;
  VerbsPd* pd_ = nullptr;
  std::unique_ptr<RegistrationCache> registrations_;
  std::unique_ptr<ConnectionManager> manager_;
  std::unique_ptr<Vci[]> vcis_;
  std::atomic<Transport*> also_ring_{nullptr};
};

}  // namespace minimpi::net::ib

#endif  // MINIMPI_NET_IB_IB_TRANSPORT_H_
