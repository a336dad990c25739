// The TCP transport: the whole transport interface over nonblocking sockets,
// for ranks on other nodes (and every pair when MINIMPI_TRANSPORT=tcp).
//
// Connections: a socket joins one of our VCIs to one VCI of a peer, opened
// by whichever side sends first (nonblocking connect), never all-to-all at
// setup. An initiator's first bytes are a Hello saying who it is and which
// VCI it wants; whichever VCI of the acceptor polls first accepts it (a
// process-wide epoll set, in every VCI's own set, holds the listener and
// the sockets whose hello is incomplete) and hands the socket over to the
// VCI it names. Both ends then send on it, in both directions: messages,
// writes and read requests, and the answers to the other side's. The
// acceptor adopts the socket for its own sends to that VCI unless it
// already sends on one of its own, so two ranks that connect to each other
// at once simply keep two sockets and no race needs breaking; each side
// keeps the socket it sent on first, which keeps its messages in order.
// Answers travel on the socket their request came on.
//
// Threading: each socket is touched only by the thread holding its VCI (the
// caller's lock, see net/transport.h); VCIs share nothing on the data path.
// Only accepting and handing over sockets takes a process-wide mutex, and
// the table of registered memory a reader lock.
//
// Sockets: TCP_NODELAY (small frames must not wait for acknowledgements)
// and the congestion control of Settings::tcp_congestion, reno unless told:
// a read of a large message is answered by one writev of up to 512 KiB
// after an idle moment, and under BBR (a common default) about 15% of each
// such answer was still unsent when writev returned, held back by a window
// near the measured bandwidth-delay product until acknowledgements came
// back; reno's window lets the whole answer go inside the writev, which
// made 1-8 MiB ping-pongs across the simulated nodes 2-3x faster.
//
// Progress without the owner: a NIC moves RDMA data while the target's
// threads do something else (a barrier, computing); a socket needs somebody
// to read it. So a helper thread looks at each VCI every
// MINIMPI_TCP_PROGRESS_US (a millisecond by default; 0: no thread) and,
// when the VCI's owner has not polled it since the last look, takes the
// VCI's own (recursive, otherwise uncontended) mutex with a try-lock and
// moves bytes: it lands writes and read responses, answers reads, flushes
// queues and accepts, but hands out no completion (they wait for the
// owner's Poll, and it rings the doorbell). Without it, a rank whose write
// was acknowledged could stop polling while its peer's write to it is still
// in flight, and the peer would wait forever.
//
// RDMA is emulated on the same sockets, with no staging copy: a write sends
// its header and then the user's segments (writev); the target reads the
// bytes straight into the registered memory (readv), then acknowledges,
// which produces the writer's kLocalDone. A read sends a request; the
// target answers with its registered bytes (writev), which the requester
// reads straight into place. The target's Poll does this work, so RDMA
// progresses while the target polls, as with any software RDMA.
//
// Files: tcp_transport.cc (setup, teardown, errors, memory, the helper
// thread, doorbells), tcp_send.cc (posting), tcp_receive.cc (reading and
// progress); tcp_internal.h holds what they share.
//
// Owned by: net/tcp. Called by: net/transport.cc (CreateTransport).
#ifndef MINIMPI_NET_TCP_TCP_TRANSPORT_H_
#define MINIMPI_NET_TCP_TCP_TRANSPORT_H_

#include <netinet/in.h>
#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "net/tcp/wire.h"
#include "net/transport.h"
#include "runtime/bootstrap.h"
#include "runtime/settings.h"

namespace minimpi::net::tcp {

// Collective over every rank of the job (one Put/Commit/Fence): the
// transport reaches every rank, itself included.
absl::StatusOr<std::unique_ptr<Transport>> CreateTcpTransport(
    runtime::Bootstrap& bootstrap, const runtime::Settings& settings);

// A transport for processes of other jobs only (MPI_Comm_spawn,
// MPI_Comm_accept/connect, MPI_Comm_join), beside net/shm for the job's own
// ranks: it listens, exchanges nothing, and starts its progress thread only
// when the first peer is added. Not collective.
absl::StatusOr<std::unique_ptr<Transport>> CreateTcpTransportForOtherJobs(
    runtime::Bootstrap& bootstrap, const runtime::Settings& settings);

// Peers of other jobs a process may add over its life (Transport::AddPeer).
inline constexpr int kMaxDynamicPeers = 1024;

// The IPv4 address net/tcp listens on and advertises for
// Settings::tcp_interface (an interface name or an address; empty: the
// first non-loopback interface that is up, else loopback), dotted; an error
// names MINIMPI_TCP_IF when it matches nothing. minimpi_info shows it.
absl::StatusOr<std::string> ListenAddress(const std::string& interface);

// One-sided operations a VCI may have outstanding (waiting for an
// acknowledgement or a read response); beyond this, posting returns kRetry,
// like a queue pair's work-request limit.
inline constexpr int kMaxOutstandingOps = 256;

class TcpTransport final : public Transport {
 public:
  // `exchange_addresses` false: no ranks of this job are reachable, only
  // peers added later (CreateTcpTransportForOtherJobs).
  static absl::StatusOr<std::unique_ptr<TcpTransport>> Create(
      runtime::Bootstrap& bootstrap, const runtime::Settings& settings,
      bool exchange_addresses = true);

  // Says goodbye on every connection (best effort) and closes every fd.
  ~TcpTransport() override;
  TcpTransport(const TcpTransport&) = delete;
  TcpTransport& operator=(const TcpTransport&) = delete;

  const char* name() const override { return "tcp"; }
  Link LinkTo(int rank) const override {
    return rank == rank_ ? Link::kSelf : Link::kTcp;
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
  // IOV_MAX: a read response goes out in one writev per 1024 segments.
  int max_io_segments() const override { return 1024; }
  int Poll(int vci, CompletionHandler& handler, int max_completions) override;

  // Doorbells: each VCI's sockets sit in its own epoll set; a doorbell is
  // a second epoll set holding the epoll sets of the VCIs that share it
  // (Settings::num_vcis share VCI 0's, as in net/shm; each endpoint VCI has
  // its own) and an eventfd for RingDoorbell. Sleeping waits on it and
  // consumes nothing: Poll reads the sockets.
  bool has_doorbell() const override { return true; }
  int DoorbellOf(int vci) const override {
    return vci < shared_vcis_ ? 0 : vci;
  }
  void AlsoRingOnFirstContact(Transport* other) override { also_ring_ = other; }
  uint64_t ArmDoorbell(int vci) override;
  void SleepOnDoorbell(int vci, uint64_t token, int64_t timeout_ns) override;
  void RingDoorbell(int vci) override;
  bool MayHaveWork(int vci) const override;
  bool PeerMayShareCore(bool* /*move_away*/) override { return false; }

  // Processes of other jobs: our listener as "address:port", and a peer
  // added by the same text under an index past this job's ranks.
  absl::StatusOr<std::string> DynamicAddress() override;
  absl::Status AddPeer(int rank, const std::string& address) override;

  // For tests: sockets `vci` owns (the ones it opened and the ones handed
  // to it). Only with the VCI's lock held.
  int ConnectionCountForTesting(int vci) const;
  // For tests: the congestion control of the socket `vci` sends to `peer`
  // on ("" when there is none yet). Takes the VCI's mutex, as a poll does.
  std::string CongestionControlForTesting(int vci, PeerVci peer);
  // For tests: where this rank listens.
  const sockaddr_in& listen_address() const { return addresses_[rank_]; }

 private:
  // Bytes waiting to go out on a socket, in order: either a copy the
  // transport owns (frame headers, the rest of a partly written message)
  // or the caller's memory (RDMA data, valid until its kLocalDone).
  struct OutPiece {
    std::unique_ptr<char[]> owned;
    const char* data = nullptr;
    size_t length = 0;
  };

  // What the bytes after a frame header are read into, in place.
  enum class Body : uint8_t { kNone, kWrite, kWriteImmediate, kReadResponse };

  struct Connection {
    int fd = -1;
    int vci = 0;   // ours
    PeerVci peer;  // the far end
    bool connecting = false;
    bool adopted = false;         // taken from the handoff queue by its VCI
    bool writable_armed = false;  // EPOLLOUT in the VCI's epoll set
    bool in_backlog = false;
    bool bye_received = false;
    bool closed = false;  // EOF after BYE: out of the epoll set
    absl::Time connect_deadline;

    std::deque<OutPiece> out;

    // Received bytes not parsed yet: [in_begin, in_end) of `in`.
    std::unique_ptr<char[]> in;
    size_t in_capacity = 0;
    size_t in_begin = 0;
    size_t in_end = 0;

    // The body being read in place.
    Body body = Body::kNone;
    std::vector<iovec> body_iov;  // what is left of it, from body_next
    size_t body_next = 0;
    size_t body_left = 0;
    size_t body_total = 0;
    uint32_t body_immediate = 0;
    uint64_t body_cookie = 0;

    std::unique_ptr<char[]> pack;  // SendPacked's buffer
    size_t pack_capacity = 0;
  };

  // A one-sided operation waiting for its answer.
  struct Op {
    bool in_use = false;
    uint64_t context = 0;
    PeerVci peer;
    std::vector<iovec> local;  // a read: where the response goes
  };

  // Everything one VCI owns; only the thread holding the VCI touches it,
  // except the handoff queue (under handoff_mutex) and the atomics.
  struct Vci {
    // Held by every call naming the VCI (the caller holds its own lock
    // around it, so this is uncontended) and by the progress thread.
    // Recursive: a completion handler may post on the same VCI.
    std::recursive_mutex mutex;
    std::atomic<uint64_t> polls{0};  // Poll calls, for the progress thread
    uint64_t polls_seen = 0;         // the progress thread's last look
    int epoll_fd = -1;
    std::vector<std::unique_ptr<Connection>> connections;
    // Our sockets to (rank, VCI): rank * num_vcis_ + VCI; sized on first
    // send.
    std::vector<Connection*> to_peer;
    std::vector<Connection*> backlog;  // parsed data waits in their buffers
    std::deque<Completion> pending;    // kLocalDone, kWriteImmediate
    Op ops[kMaxOutstandingOps];
    std::vector<uint32_t> free_ops;
    int connecting = 0;

    std::mutex handoff_mutex;
    // Guarded by handoff_mutex.
    std::vector<std::unique_ptr<Connection>> handoff;
    std::atomic<int> handoff_count{0};
    std::atomic<bool> touched{false};

    // The doorbell (used on the first VCI of a group only).
    int doorbell_fd = -1;  // epoll set: the group's epoll sets + eventfd
    int event_fd = -1;
    std::atomic<bool> armed{false};
    std::atomic<uint32_t> rings{0};
    std::atomic<int> sleepers{0};
  };

  // A socket accepted whose hello has not fully arrived.
  struct Unidentified {
    int fd = -1;
    Hello hello;
    size_t received = 0;
  };

  // How Poll's parsing of one connection ended.
  enum class ParseEnd { kNeedBytes, kStopped };

  TcpTransport(runtime::Bootstrap& bootstrap,
               const runtime::Settings& settings);
  absl::Status Setup(runtime::Bootstrap& bootstrap,
                     const std::string& interface, bool exchange_addresses);
  // Which added peer listens at `address`:`port` (kDynamicPeer: none).
  // With accept_mutex_ held.
  int DynamicPeerAt(uint32_t address, uint32_t port) const;
  // Gives an accepted socket whose hello named `peer_rank` to the VCI it
  // asked for. With accept_mutex_ held.
  void HandOver(int fd, const Hello& hello, int peer_rank);
  void StartProgressThread();

  // Our socket to `peer` from `vci`, connecting on first use unless the
  // peer's own socket to `vci` has arrived.
  Connection& ConnectionTo(int vci, PeerVci peer);
  // Where the socket `state` sends to `peer` on is kept (null: none yet).
  Connection*& SlotTo(Vci& state, PeerVci peer);
  // Writes what `conn` has queued; true when the queue is empty after.
  bool Flush(Connection& conn);
  // Sends `pieces` now if the queue is empty, else queues them. Returns
  // false (and sends and queues nothing) only when `retry_if_nothing` and
  // the socket took no byte; pieces that are not `copy` stay referenced.
  bool SendOrQueue(Connection& conn, const iovec* pieces, int count,
                   int copy_count, bool retry_if_nothing);
  void Enqueue(Connection& conn, const iovec* pieces, int count,
               size_t skip_bytes, int copy_count);
  void WatchWritable(Connection& conn, bool on);
  PostResult PostWrite(int vci, PeerVci peer, const IoSegment* local,
                       int local_count, RemoteBuffer remote,
                       const uint32_t* immediate, uint64_t context);

  // Whether a post on `conn` may go now (its queue is empty or drained,
  // or it is still connecting and queues a little).
  bool CanPost(Connection& conn);
  int PollLocked(int vci, CompletionHandler* handler, int max_completions);
  void ProgressLoop();
  void TakeHandoffs(Vci& state);
  void Accept();
  void OnWritable(Connection& conn);
  void OnReadable(Connection& conn, CompletionHandler& handler, int& handled,
                  int max_completions);
  ParseEnd Parse(Connection& conn, CompletionHandler& handler, int& handled,
                 int max_completions);
  void FinishBody(Connection& conn);
  void AnswerRead(Connection& conn, const FrameHeader& frame,
                  const RemoteSegment* segments);
  void CompleteOp(Connection& conn, uint64_t cookie, const char* what);
  void DrainPending(Vci& state, CompletionHandler& handler, int& handled,
                    int max_completions);
  void CheckConnectTimeouts(Vci& state);
  // Checks that [address, +length) lies in a region registered under `key`;
  // ends the job otherwise (a NIC's remote access error).
  void CheckRemoteAccess(const Connection& conn, const char* operation,
                         uint32_t key, uint64_t address, uint64_t length);

  // Ends the job with one line naming both ranks and their nodes.
  [[noreturn]] void Die(int peer, const std::string& what);
  [[noreturn]] void DieOnSocketError(const Connection& conn, int error);
  [[noreturn]] void DieOnEof(const Connection& conn);
  std::string Who(int rank) const;

  runtime::Bootstrap* const bootstrap_;
  const int rank_;
  const int size_;
  const int num_vcis_;
  const int shared_vcis_;
  const size_t max_message_;
  const int connect_timeout_ms_;
  // Settings::tcp_congestion; empty for "system" (the kernel's default).
  const std::string congestion_;
  const size_t in_capacity_;

  // Every rank's listener, then those of added peers: sized once for
  // size_ + kMaxDynamicPeers, so adding a peer never moves an entry another
  // thread reads.
  std::vector<sockaddr_in> addresses_;
  // Ranks below this are reachable: size_ plus the peers added so far.
  std::atomic<int> peer_limit_{0};
  // Added peers by listener (address << 16 | port), guarded by
  // accept_mutex_.
  absl::flat_hash_map<uint64_t, int> dynamic_by_listener_;
  // Sockets of other jobs' processes that connected before AddPeer named
  // them (they added us first), with their hellos; AddPeer hands them
  // over. Guarded by accept_mutex_.
  std::vector<Hello> parked_;
  std::vector<int> parked_fds_;
  std::once_flag progress_started_;
  int listen_fd_ = -1;
  std::unique_ptr<Vci[]> vcis_;

  // Accepting: a process-wide epoll set (in every VCI's) with the listener
  // and the sockets whose hello is incomplete.
  int accept_epoll_fd_ = -1;
  std::mutex accept_mutex_;
  // Guarded by accept_mutex_.
  absl::flat_hash_map<int, Unidentified> unidentified_;

  // Registered memory, by remote key. Keys are never reused.
  struct Region {
    uint64_t address = 0;
    uint64_t length = 0;
  };
  mutable std::shared_mutex regions_mutex_;
  // Guarded by regions_mutex_.
  absl::flat_hash_map<uint32_t, Region> regions_;
  std::atomic<uint32_t> next_key_{1};

  std::atomic<bool> stop_progress_{false};
  // RoutedTransport's node transport, rung beside our own doorbell when a
  // VCI gets its first connection (AlsoRingOnFirstContact).
  // Atomic: set after the progress thread started.
  std::atomic<Transport*> also_ring_{nullptr};
  const int progress_interval_us_;  // Settings::tcp_progress_us
  std::thread progress_thread_;
};

}  // namespace minimpi::net::tcp

#endif  // MINIMPI_NET_TCP_TCP_TRANSPORT_H_
