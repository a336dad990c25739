// A transport for in-process unit tests: one rank that talks to itself.
// Every VCI has an inbox; a Send, or an RDMA operation's completions, go
// into the inbox of the VCI they are for and come out at its next Poll, in
// order. RDMA copies happen at once (remote addresses are this process's).
// It can refuse posts on purpose (kRetry every Nth post), so the callers'
// backlogs and retries can be tested without filling a real ring.
//
// Owned by: net/. Called by: unit tests of the layers above the transport
// (mpi/vci, mpi/p2p, mpi/part), which need a transport but no second
// process.
#ifndef MINIMPI_NET_TESTING_LOOPBACK_TRANSPORT_H_
#define MINIMPI_NET_TESTING_LOOPBACK_TRANSPORT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "net/transport.h"

namespace minimpi::net::testing {

struct LoopbackOptions {
  int num_vcis = 4;
  size_t max_message_size = 4096 + kMaxHeaderBytes;
  // When > 0, every refuse_every-th post answers kRetry and does nothing.
  int refuse_every = 0;
};

class LoopbackTransport final : public Transport {
 public:
  explicit LoopbackTransport(LoopbackOptions options = {});

  // What the tests look at.
  uint64_t posts() const { return posts_.load(); }
  uint64_t refusals() const { return refusals_.load(); }
  // Stops (0) or restarts refusing.
  void set_refuse_every(int n) { refuse_every_.store(n); }
  // Queues a completion for `vci` as if a peer had caused it.
  void Inject(int vci, const Completion& completion,
              std::vector<std::byte> data = {});

  const char* name() const override { return "loopback"; }
  // Every rank lives in this process.
  Link LinkTo(int /*rank*/) const override { return Link::kSelf; }
  int num_vcis() const override { return options_.num_vcis; }
  size_t max_message_size() const override { return options_.max_message_size; }
  absl::StatusOr<MemoryRegion> RegisterMemory(void* address,
                                              size_t length) override;
  void DeregisterMemory(const MemoryRegion&) override {}
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
  int max_io_segments() const override { return 64; }
  int Poll(int vci, CompletionHandler& handler, int max_completions) override;

 private:
  struct Entry {
    Completion completion;
    std::vector<std::byte> data;  // a message's bytes
  };
  struct Inbox {
    std::mutex mutex;
    std::deque<Entry> entries;  // guarded by mutex
  };
  // Counts a post; false when this one is refused.
  bool Accept();
  // Checks a peer: this rank, a VCI that exists.
  void CheckPeer(PeerVci peer) const;
  void Deliver(int vci, Entry entry);
  void LocalDone(int vci, uint64_t context);

  const LoopbackOptions options_;
  std::atomic<int> refuse_every_;
  std::atomic<uint64_t> posts_{0};
  std::atomic<uint64_t> refusals_{0};
  std::unique_ptr<Inbox[]> inboxes_;
};

}  // namespace minimpi::net::testing

#endif  // MINIMPI_NET_TESTING_LOOPBACK_TRANSPORT_H_
