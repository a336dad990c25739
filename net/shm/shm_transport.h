// The shared-memory transport: ranks on one node talk through lock-free
// rings in POSIX shared memory, and move large buffers with one copy through
// Linux cross-memory attach (process_vm_readv/writev), which stands in for
// RDMA read and write.
//
// Each rank owns one segment holding its receive rings, one per (sender,
// vci), self included; the rings of one sender are contiguous so that the
// sender maps only its own part of each peer's segment. The segment is an
// anonymous memory file (memfd) that peers open through /proc, so a crashed
// job leaves nothing behind in /dev/shm, not even one that crashed during
// MPI_Init (a named segment, unlinked once mapped, is the fallback).
//
// Owned by: net/shm. Called by: net/transport.cc (CreateTransport).
#ifndef MINIMPI_NET_SHM_SHM_TRANSPORT_H_
#define MINIMPI_NET_SHM_SHM_TRANSPORT_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
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

class ShmTransport final : public Transport {
 public:
  // Collective over the ranks of this node. Fails when some rank of the job
  // is on another node, when shared memory cannot be set up, or when
  // cross-memory attach is not permitted (the message says why).
  static absl::StatusOr<std::unique_ptr<ShmTransport>> Create(
      runtime::Bootstrap& bootstrap, const runtime::Settings& settings);

  ~ShmTransport() override;
  ShmTransport(const ShmTransport&) = delete;
  ShmTransport& operator=(const ShmTransport&) = delete;

  const char* name() const override { return "shm"; }
  int num_vcis() const override { return num_vcis_; }
  size_t max_message_size() const override { return max_message_; }

  absl::StatusOr<MemoryRegion> RegisterMemory(void* address,
                                              size_t length) override;
  void DeregisterMemory(const MemoryRegion& region) override;

  PostResult Send(int vci, int peer, const void* header, size_t header_length,
                  const void* payload, size_t payload_length) override;
  PostResult SendPacked(
      int vci, int peer, const void* header, size_t header_length,
      size_t payload_length,
      absl::FunctionRef<void(void* destination)> write_payload) override;
  PostResult RdmaReadv(int vci, int peer, const IoSegment* local,
                       int local_count, const MemoryRegion& local_region,
                       const IoSegment* remote, int remote_count,
                       uint32_t remote_key, uint64_t context) override;
  // process_vm_readv's limit (IOV_MAX) per side.
  int max_io_segments() const override { return 1024; }
  PostResult RdmaRead(int vci, int peer, void* local,
                      const MemoryRegion& local_region, RemoteBuffer remote,
                      size_t length, uint64_t context) override;
  PostResult RdmaWrite(int vci, int peer, const void* local,
                       const MemoryRegion& local_region, RemoteBuffer remote,
                       size_t length, uint64_t context) override;
  PostResult RdmaWriteImmediate(int vci, int peer, const void* local,
                                const MemoryRegion& local_region,
                                RemoteBuffer remote, size_t length,
                                uint32_t immediate, uint64_t context) override;
  PostResult RdmaWritev(int vci, int peer, const IoSegment* local,
                        int local_count, const MemoryRegion& local_region,
                        RemoteBuffer remote, const uint32_t* immediate,
                        uint64_t context) override;
  int Poll(int vci, CompletionHandler& handler, int max_completions) override;

 private:
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
    int peer = -1;
    bool in_use = false;
  };

  // Everything one VCI touches on its hot path, on its own cache lines.
  struct alignas(kCacheLineBytes) Vci {
    std::vector<RingProducer> to_peer;      // by local index of the peer
    std::vector<RingConsumer> from_sender;  // by local index of the sender
    uint32_t next_sender = 0;               // round-robin start of Poll
    LocalCompletionQueue local_done;
    PullSlot pulls[kPullCapacity];
    uint32_t pulls_in_flight = 0;
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
  void PushLocalDone(Vci& vci, int peer, uint64_t context);
  int LocalIndexOrDie(int peer, const char* operation) const;

  const int rank_;
  const int size_;
  const int num_vcis_;
  const uint32_t ring_cells_;
  const size_t max_message_;
  const size_t pull_min_;     // Settings::shm_pull_min
  const size_t ring_stride_;  // page-aligned distance between rings
  const std::vector<int> local_ranks_;
  std::vector<int> local_index_of_rank_;  // -1: not on this node
  int my_local_index_ = -1;
  std::vector<pid_t> peer_pids_;  // by local index

  std::string segment_name_;  // "memfd:<fd>" or a POSIX shm name
  bool segment_linked_ = false;
  int segment_fd_ = -1;  // the memory file, open until every peer mapped it
  Mapping own_segment_;
  std::vector<Mapping> peer_parts_;  // our sender part of each peer's segment
  std::unique_ptr<Vci[]> vcis_;

  // A word peers read at setup to prove that cross-memory attach works.
  uint64_t probe_word_ = 0;
};

}  // namespace minimpi::net::shm

#endif  // MINIMPI_NET_SHM_SHM_TRANSPORT_H_
