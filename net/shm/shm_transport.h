// The shared-memory transport: ranks on one node talk through lock-free
// rings in POSIX shared memory, and move large buffers with one copy through
// Linux cross-memory attach (process_vm_readv/writev), which stands in for
// RDMA read and write.
//
// Connections: any VCI of a rank may talk to any VCI of any rank (an
// endpoint is a VCI of its own). Each connection is one ring in the
// receiver's segment, at a place fixed by (sender, sender's VCI, receiver's
// VCI), so a sender needs nobody's help to find it. The segment is sparse
// (an ftruncate'd memory file): a ring costs memory only once it is used.
// A sender's first message on a connection registers the ring in the
// receiving VCI's inbox (one atomic add in the receiver's segment), so a
// receiving VCI polls only the rings that talk to it: memory and polling
// grow with the pairs that talk, not with ranks x VCIs x VCIs.
//
// The segment is an anonymous memory file (memfd) that peers open through
// /proc, so a crashed job leaves nothing behind in /dev/shm, not even one
// that crashed during MPI_Init (a named segment, unlinked once mapped, is the
// fallback).
//
// Files: shm_segment.cc sets the segments up and tears them down,
// shm_transport.cc is the data path (rings, polling, doorbells),
// shm_cross_memory.cc the single copies; segment_layout.h is the inbox
// layout they share.
//
// Owned by: net/shm. Called by: net/transport.cc (CreateTransport).
#ifndef MINIMPI_NET_SHM_SHM_TRANSPORT_H_
#define MINIMPI_NET_SHM_SHM_TRANSPORT_H_

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "net/shm/spsc_ring.h"
#include "net/transport.h"
#include "runtime/bootstrap.h"
#include "runtime/settings.h"

namespace minimpi::net::shm {

// Completions of local one-sided operations a VCI holds until Poll hands
// them out; beyond this, posting returns kRetry (like a full send queue).
inline constexpr uint32_t kLocalCompletionCapacity = 256;
// Pulled writes (see kCellFlagPullWrite) a VCI may have outstanding; beyond
// this, posting returns kRetry.
inline constexpr uint32_t kPullCapacity = 64;

// The message of a kCellFlagWriteImmediate record: how many bytes the write
// put in place (the record's own length is its message's, as for any).
struct WriteNotice {
  uint64_t write_length = 0;
};

class ShmTransport final : public Transport {
 public:
  // Collective over the whole job (every rank calls it, so that its
  // fences match), but reaches only the ranks of this node
  // (Bootstrap::local_ranks): net/transport.cc routes the others to the
  // network. Fails when shared memory cannot be set up or cross-memory
  // attach is not permitted (the message says why).
  static absl::StatusOr<std::unique_ptr<ShmTransport>> Create(
      runtime::Bootstrap& bootstrap, const runtime::Settings& settings);

  ~ShmTransport() override;
  ShmTransport(const ShmTransport&) = delete;
  ShmTransport& operator=(const ShmTransport&) = delete;

  const char* name() const override { return "shm"; }
  // Another job's processes go through tcp (see AllowOtherJobs).
  Link LinkTo(int rank) const override {
    return rank == rank_ ? Link::kSelf : rank < size_ ? Link::kShm : Link::kTcp;
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
  PostResult RdmaReadv(int vci, PeerVci peer, const IoSegment* local,
                       int local_count, const MemoryRegion& local_region,
                       const IoSegment* remote, int remote_count,
                       uint32_t remote_key, uint64_t context) override;
  // process_vm_readv's limit (IOV_MAX) per side.
  int max_io_segments() const override { return 1024; }
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
  PostResult RdmaWritev(int vci, PeerVci peer, const IoSegment* local,
                        int local_count, const MemoryRegion& local_region,
                        RemoteBuffer remote, const uint32_t* immediate,
                        uint64_t context) override;
  int Poll(int vci, CompletionHandler& handler, int max_completions) override;

  // Doorbells: a futex word per VCI in the inbox's own line of our segment,
  // which peers ring after publishing when it is armed. The VCIs that
  // communicators share (Settings::num_vcis) share VCI 0's doorbell, since
  // a thread waiting on one of them progresses all of them; each endpoint's
  // VCI has its own, so endpoint threads never wake each other.
  bool has_doorbell() const override { return true; }
  int DoorbellOf(int vci) const override {
    return vci < shared_vcis_ ? 0 : vci;
  }
  uint64_t ArmDoorbell(int vci) override;
  void SleepOnDoorbell(int vci, uint64_t token, int64_t timeout_ns) override;
  void RingDoorbell(int vci) override;
  void WakePeer(PeerVci peer) override;
  bool MayHaveWork(int vci) const override;
  bool PeerMayShareCore(bool* move_away) override;
  // Another job's processes are reached over tcp (see AllowOtherJobs).
  bool posting_cpu_copies_to(int rank) const override { return rank < size_; }

  // Processes of other jobs (dynamic processes). The segments are laid out
  // for this job's ranks at setup, and another job's processes have no
  // place in them, so they go through a second transport (net/tcp, even on
  // this node), which `make_other_jobs` makes on first use (the first
  // DynamicAddress). Every call naming a peer past this job's ranks goes
  // there; Poll and MayHaveWork cover it once it exists, and a sleep on the
  // doorbell of a VCI that talks to another job lasts at most
  // kOtherJobsSleepSliceNs, since that traffic does not ring our futex. Until
  // then the data path pays one comparison, made on the cold side of the peer
  // checks.
  static constexpr int64_t kOtherJobsSleepSliceNs = 50'000;
  using OtherJobsFactory =
      std::function<absl::StatusOr<std::unique_ptr<Transport>>()>;
  void AllowOtherJobs(OtherJobsFactory make_other_jobs) {
    make_other_jobs_ = std::move(make_other_jobs);
  }
  absl::StatusOr<std::string> DynamicAddress() override;
  absl::Status AddPeer(int rank, const std::string& address) override;

 private:
  // The transport of other jobs' processes; only called for a rank past
  // this job's, which only AddPeer can have made reachable.
  Transport& OtherJobs(PeerVci peer, const char* operation) const;
  // Where a rank last ran and whether it sleeps on a doorbell, in its
  // segment for its peers to read (PeerMayShareCore).
  struct Presence {
    std::atomic<int32_t> cpu;  // -1: unknown (woken by a peer, not yet run)
    std::atomic<uint32_t> asleep;
  };
  // Beyond this many ranks on the node the scan costs more than it saves.
  static constexpr size_t kMaxPresenceScan = 16;
  Presence* PresenceOf(int local_index) const;
  // A fixed ring of completions produced locally (kLocalDone); only the
  // thread holding the VCI touches it.
  struct LocalCompletionQueue {
    Completion entries[kLocalCompletionCapacity];
    uint32_t head = 0;  // next to hand out
    uint32_t size = 0;
    bool full() const { return size == kLocalCompletionCapacity; }
  };

  // A pulled write in flight: the receiver sets `done` from its process.
  struct PullSlot {
    std::atomic<uint64_t> done{0};
    uint64_t context = 0;
    PeerVci peer;
    bool in_use = false;
  };

  // A ring this VCI receives on, and who sends on it.
  struct Inbound {
    RingConsumer ring;
    int rank = -1;
    int vci = 0;
  };

  // A connection to a peer's VCI: the ring, and the doorbell to ring after
  // publishing on it.
  struct Outbound {
    RingProducer ring;
    std::atomic<uint32_t>* doorbell = nullptr;
    int peer_local = -1;
  };

  // Everything one VCI touches on its hot path, on its own cache lines.
  struct alignas(kCacheLineBytes) Vci {
    // By peer local index * num_vcis_ + peer VCI; sized on first send
    // (and never again, so pointers into it stay valid).
    std::vector<Outbound> to_peer;
    // The connection ProducerFor returned last, attached, and its peer.
    PeerVci last_peer;  // rank -1: none yet
    Outbound* last_out = nullptr;
    std::vector<Inbound> from_sender;  // in the order senders registered
    uint32_t inbox_seen = 0;           // registrations taken from the inbox
    uint32_t next_sender = 0;          // round-robin start of Poll
    LocalCompletionQueue local_done;
    PullSlot pulls[kPullCapacity];
    uint32_t pulls_in_flight = 0;
    // Set once this VCI connects to a peer or posts a one-sided operation
    // (senders to it show in its inbox): until then MayHaveWork is false.
    std::atomic<bool> touched{false};
  };

  // A mapping of (part of) a shared-memory segment.
  struct Mapping {
    void* address = nullptr;
    size_t length = 0;
  };

  ShmTransport(runtime::Bootstrap& bootstrap,
               const runtime::Settings& settings);
  absl::Status Setup(runtime::Bootstrap& bootstrap);
  absl::Status CheckCrossMemoryAttach(int peer_local, uint64_t probe_address);
  // Copies `length` bytes between our `local` and the peer's `remote`
  // address; aborts the job with a message when the kernel refuses (the
  // interface has no error completion, and setup already proved CMA works).
  void CrossMemoryCopy(bool write, int peer, void* local, uint64_t remote,
                       size_t length);
  // The gathered form: `local` and `remote` cover the same bytes.
  void CrossMemoryReadv(int peer, const IoSegment* local, int local_count,
                        const IoSegment* remote, int remote_count);
  // Writes the `local` segments, in order, to the peer's `remote` address.
  void CrossMemoryWritev(int peer, const IoSegment* local, int local_count,
                         uint64_t remote);
  void PushLocalDone(Vci& vci, PeerVci peer, uint64_t context);
  int LocalIndexOrDie(PeerVci peer, const char* operation) const;
  // The connection from our `vci` to `peer`, made on first use. A VCI
  // mostly talks to the peer it talked to last (a window of sends, a
  // ping-pong): that connection is remembered, and the common send finds
  // it inline; Connect does the rest.
  Outbound& ProducerFor(int vci, PeerVci peer, const char* operation) {
    Vci& state = vcis_[vci];
    if (peer == state.last_peer) [[likely]] {
      return *state.last_out;
    }
    return Connect(vci, peer, operation);
  }
  Outbound& Connect(int vci, PeerVci peer, const char* operation);
  // A cell of `out`'s ring (RingProducer::TryReserve), or nullptr when it
  // is full; then the consumer is woken, for the wrap marker the producer
  // may have published.
  CellHeader* Reserve(Outbound& out, size_t message_bytes);
  // Publishes what was written into `out`'s reserved cell and rings the
  // peer's doorbell if somebody there sleeps.
  void Deliver(Outbound& out);
  std::atomic<uint32_t>* OwnDoorbell(int vci) const;
  // The doorbell a peer's VCI rings (its inbox says which, since VCIs may
  // share one).
  std::atomic<uint32_t>* PeerDoorbell(int peer_local, int peer_vci) const;
  // For signals that are no ring message (a pulled write's done flag).
  void RingPeerDoorbell(int peer_local, int peer_vci);
  // Rings a peer's doorbell if armed; a peer woken so is awake from now on,
  // on a core nobody knows yet.
  void WakePeer(std::atomic<uint32_t>* doorbell, int peer_local);
  // Takes the rings senders registered for `vci` since the last look.
  void TakeNewSenders(int vci);
  // Where things live in a segment (see the file comment).
  size_t InboxOffset(int vci) const { return size_t(vci) * inbox_stride_; }
  size_t RingOffset(int sender_local, int sender_vci, int receiver_vci) const {
    return rings_offset_ +
           ((size_t(sender_local) * num_vcis_ + sender_vci) * num_vcis_ +
            receiver_vci) *
               ring_stride_;
  }

  const int rank_;
  const int size_;
  const int num_vcis_;
  const int shared_vcis_;    // Settings::num_vcis: they share one doorbell
  const size_t ring_bytes_;  // Settings::shm_ring_bytes
  const size_t max_message_;
  const size_t pull_min_;     // Settings::shm_pull_min
  const size_t ring_stride_;  // page-aligned distance between rings
  size_t inbox_stride_ = 0;   // bytes of one VCI's inbox
  size_t rings_offset_ = 0;   // where the rings start in a segment
  const std::vector<int> local_ranks_;
  std::vector<int> local_index_of_rank_;  // -1: not on this node
  int my_local_index_ = -1;
  std::vector<pid_t> peer_pids_;  // by local index

  std::string segment_name_;  // "memfd:<fd>" or a POSIX shm name
  bool segment_linked_ = false;
  int segment_fd_ = -1;  // the memory file, open until every peer mapped it
  Mapping own_segment_;
  std::vector<Mapping> peer_segments_;  // by local index (ours included)
  std::unique_ptr<Vci[]> vcis_;

  // A word peers read at setup to prove that cross-memory attach works.
  uint64_t probe_word_ = 0;

  // Other jobs' processes (see AllowOtherJobs): made once, under the
  // mutex, then read without it.
  OtherJobsFactory make_other_jobs_;
  std::mutex other_jobs_mutex_;
  std::unique_ptr<Transport> other_jobs_owner_;  // guarded by the mutex
  std::atomic<Transport*> other_jobs_{nullptr};
};

}  // namespace minimpi::net::shm

#endif  // MINIMPI_NET_SHM_SHM_TRANSPORT_H_
