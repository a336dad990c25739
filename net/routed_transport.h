// A transport for each pair of ranks: the node transport (net/shm) between
// ranks of one node, the network transport (net/tcp, later net/ib) between
// nodes, chosen once at setup from the launcher's node map and fixed for the
// job. Every call that names a peer goes to that peer's transport; Poll and
// the doorbells cover both.
//
// Memory registration: net/shm needs none (cross-memory attach reaches any
// mapped address and ignores keys), so a region is registered with the
// network transport only and its keys serve both.
//
// Waiting: a VCI that has only node traffic sleeps on net/shm's futex
// doorbell and one that has only network traffic on the network's; a VCI
// with both kinds sleeps on the network's in slices of kMixedSleepSliceNs,
// looking at shared memory between slices, since one thread cannot block on
// a futex and a socket at once. RingDoorbell rings both.
//
// Owned by: net/. Called by: net/transport.cc (CreateTransport).
#ifndef MINIMPI_NET_ROUTED_TRANSPORT_H_
#define MINIMPI_NET_ROUTED_TRANSPORT_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "net/transport.h"

namespace minimpi::net {

class RoutedTransport final : public Transport {
 public:
  // The longest a VCI with both kinds of traffic sleeps on the network
  // before it looks at shared memory again.
  static constexpr int64_t kMixedSleepSliceNs = 50'000;

  // `on_node[r]` says whether rank r shares this node (it then goes through
  // `node`, else through `network`). Both transports have the same VCIs.
  RoutedTransport(std::unique_ptr<Transport> node,
                  std::unique_ptr<Transport> network,
                  const std::vector<bool>& on_node);

  const char* name() const override { return name_.c_str(); }
  Link LinkTo(int rank) const override { return Route({rank, 0}).LinkTo(rank); }
  int num_vcis() const override { return node_->num_vcis(); }
  size_t max_message_size() const override { return max_message_size_; }
  size_t max_message_size_to(int rank) const override {
    return Route({rank, 0}).max_message_size();
  }
  bool posting_cpu_copies_to(int rank) const override {
    return Route({rank, 0}).posting_cpu_copies_to(rank);
  }
  size_t largest_message_size() const override {
    return std::max(node_->max_message_size(), network_->max_message_size());
  }

  absl::StatusOr<MemoryRegion> RegisterMemory(void* address,
                                              size_t length) override {
    return network_->RegisterMemory(address, length);
  }
  void DeregisterMemory(const MemoryRegion& region) override {
    network_->DeregisterMemory(region);
  }

  PostResult Send(int vci, PeerVci peer, const void* header,
                  size_t header_length, const void* payload,
                  size_t payload_length) override {
    return Route(peer).Send(vci, peer, header, header_length, payload,
                            payload_length);
  }
  PostResult SendPacked(
      int vci, PeerVci peer, const void* header, size_t header_length,
      size_t payload_length,
      absl::FunctionRef<void(void* destination)> write_payload) override {
    return Route(peer).SendPacked(vci, peer, header, header_length,
                                  payload_length, write_payload);
  }
  PostResult RdmaRead(int vci, PeerVci peer, void* local,
                      const MemoryRegion& local_region, RemoteBuffer remote,
                      size_t length, uint64_t context) override {
    return Route(peer).RdmaRead(vci, peer, local, local_region, remote, length,
                                context);
  }
  PostResult RdmaWrite(int vci, PeerVci peer, const void* local,
                       const MemoryRegion& local_region, RemoteBuffer remote,
                       size_t length, uint64_t context) override {
    return Route(peer).RdmaWrite(vci, peer, local, local_region, remote, length,
                                 context);
  }
  PostResult RdmaWriteImmediate(int vci, PeerVci peer, const void* local,
                                const MemoryRegion& local_region,
                                RemoteBuffer remote, size_t length,
                                uint32_t immediate, uint64_t context) override {
    return Route(peer).RdmaWriteImmediate(vci, peer, local, local_region,
                                          remote, length, immediate, context);
  }
  PostResult RdmaReadv(int vci, PeerVci peer, const IoSegment* local,
                       int local_count, const MemoryRegion& local_region,
                       const IoSegment* remote, int remote_count,
                       uint32_t remote_key, uint64_t context) override {
    return Route(peer).RdmaReadv(vci, peer, local, local_count, local_region,
                                 remote, remote_count, remote_key, context);
  }
  PostResult RdmaWritev(int vci, PeerVci peer, const IoSegment* local,
                        int local_count, const MemoryRegion& local_region,
                        RemoteBuffer remote, const uint32_t* immediate,
                        uint64_t context) override {
    return Route(peer).RdmaWritev(vci, peer, local, local_count, local_region,
                                  remote, immediate, context);
  }
  int max_io_segments() const override { return max_io_segments_; }

  int Poll(int vci, CompletionHandler& handler, int max_completions) override;

  bool has_doorbell() const override { return has_doorbell_; }
  int DoorbellOf(int vci) const override { return node_->DoorbellOf(vci); }
  uint64_t ArmDoorbell(int vci) override;
  void SleepOnDoorbell(int vci, uint64_t token, int64_t timeout_ns) override;
  void RingDoorbell(int vci) override;
  void WakePeer(PeerVci peer) override { Route(peer).WakePeer(peer); }
  bool MayHaveWork(int vci) const override {
    return node_->MayHaveWork(vci) || network_->MayHaveWork(vci);
  }
  bool PeerMayShareCore(bool* move_away) override {
    return node_->PeerMayShareCore(move_away);
  }
  // Processes of other jobs are always the network's.
  absl::StatusOr<std::string> DynamicAddress() override {
    return network_->DynamicAddress();
  }
  absl::Status AddPeer(int rank, const std::string& address) override {
    return network_->AddPeer(rank, address);
  }

 private:
  // Ranks past the job's are processes of other jobs (AddPeer).
  Transport& Route(PeerVci peer) const {
    return static_cast<size_t>(peer.rank) < route_.size() ? *route_[peer.rank]
                                                          : *network_;
  }
  // Whether `transport` may have work on any VCI that shares `vci`'s
  // doorbell (a sleeper there wakes for all of them).
  bool DoorbellMayHaveWork(const Transport& transport, int vci) const;

  std::unique_ptr<Transport> node_;
  std::unique_ptr<Transport> network_;
  std::vector<Transport*> route_;  // by world rank
  std::string name_;
  size_t max_message_size_;
  int max_io_segments_;
  bool has_doorbell_;
  // Which transport Poll asks first, per VCI, so that neither starves the
  // other when completions exceed the budget. Touched under the VCI's lock.
  std::unique_ptr<uint8_t[]> network_first_;
};

}  // namespace minimpi::net

#endif  // MINIMPI_NET_ROUTED_TRANSPORT_H_
