// A VCI's outbox: the messages the transport refused for now (the ring or
// send queue to that peer was full), kept per peer in send order and sent
// again by the VCI's progress. Once a peer has a message waiting, every
// later message to it waits behind, whatever kind of traffic sends it, so
// messages arrive in the order they were sent: MPI's non-overtaking rule
// for point-to-point, and the order the partitioned handshake relies on.
//
// A kind of traffic sends through Send (which tries the transport first and
// queues only what it refuses) and is told by OnSentLocked when a queued
// message of its own has left, with the two words it stored in the entry
// (point-to-point completes a request then, for instance). RDMA operations
// the transport refused need no order among themselves, so each kind keeps
// its own retry of those.
//
// It also counts what leaves (messages and payload bytes by link) and what
// the transport refused, for a tool (MPI_T, mpi/vci/tool_variables.cc):
// written under the VCI's lock, read from any thread.
//
// Threads: everything here is guarded by the VCI's lock; the counters may
// be read from any thread.
//
// Owned by: mpi/vci (one per Vci). Used by: the kinds of traffic.
#ifndef MINIMPI_MPI_VCI_OUTBOX_H_
#define MINIMPI_MPI_VCI_OUTBOX_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "mpi/vci/counters.h"
#include "net/transport.h"

namespace minimpi::vci {

class Outbox {
 public:
  // Told when a queued message of its own has left.
  class Sender {
   public:
    virtual ~Sender() = default;
    virtual void OnSentLocked(int vci, uint64_t word, uint32_t flags) = 0;
  };

  // One message: a header, and a payload that is either `payload_length`
  // bytes at `payload` (left untouched until the message leaves) or
  // `packed_length` bytes that `pack` writes straight into the transport's
  // buffer when it leaves (non-contiguous data, packed once).
  struct Message {
    const void* header = nullptr;  // copied when the message queues
    size_t header_length = 0;      // at most net::kMaxHeaderBytes
    const void* payload = nullptr;
    size_t payload_length = 0;
    void (*pack)(const void* source, void* destination) = nullptr;
    const void* pack_source = nullptr;
    size_t packed_length = 0;
    // Whom to tell once a queued copy has left (nullptr: nobody), and what
    // to tell it. Not told when the first try succeeds: Send says so.
    Sender* sender = nullptr;
    uint64_t word = 0;
    uint32_t flags = 0;
  };

  Outbox() = default;
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;
  ~Outbox();

  // Sends `message` to `peer` on `vci`, or queues a copy behind the
  // messages already waiting for that peer. True when it left now.
  bool Send(net::Transport& transport, int vci, net::PeerVci peer,
            const Message& message) {
    if (TrySend(transport, vci, peer, message)) return true;
    Enqueue(peer, message);
    return false;
  }
  // Sends `message` now unless the transport refuses it or a message to
  // `peer` is already waiting; false (nothing queued) otherwise.
  bool TrySend(net::Transport& transport, int vci, net::PeerVci peer,
               const Message& message) {
    if (!backlogged_peers_.empty() && Waiting(peer)) [[unlikely]] {
      return false;
    }
    return Post(transport, vci, peer, message);
  }
  // Queues a copy of `message` behind those waiting for `peer`.
  void Enqueue(net::PeerVci peer, const Message& message);
  // Sends what waits, in order per peer, as far as the transport takes it.
  // True when anything left.
  bool RetryLocked(net::Transport& transport, int vci);
  bool empty() const { return backlogged_peers_.empty(); }

  // What left and what waited, since the outbox was made. Messages and
  // bytes count each message once, when it leaves; bytes are payload bytes
  // (headers excluded: they differ by protocol). `refused` counts every
  // post the transport answered kRetry (a queued message may be refused
  // again by each retry); `queued` the messages put in the outbox.
  struct Counters {
    LinkCounters messages_sent;
    LinkCounters bytes_sent;
    OwnedCounter refused;
    OwnedCounter queued;
  };
  const Counters& counters() const { return counters_; }
  // Where the link of each rank is looked up (the VciSet's table); without
  // one every message asks the transport.
  void set_links(const LinkTable* links) { links_ = links; }

  // Takes out the first message waiting for `peer` that `is_it` picks (a
  // send cancelled before it left); nobody is told. True when one was
  // waiting.
  bool Withdraw(net::PeerVci peer,
                absl::FunctionRef<bool(const Message&)> is_it);

 private:
  struct Entry {
    Entry* next = nullptr;
    alignas(8) std::byte header[net::kMaxHeaderBytes];
    Message message;  // its header points into `header`
  };
  struct Queue {
    Entry* head = nullptr;
    Entry* tail = nullptr;
  };
  static uint64_t Key(net::PeerVci peer) {
    return (uint64_t(uint32_t(peer.rank)) << 32) | uint32_t(peer.vci);
  }
  // Whether a message to `peer` is waiting.
  bool Waiting(net::PeerVci peer) const;
  // One try on the transport; counts what it sent or that it was refused.
  bool Post(net::Transport& transport, int vci, net::PeerVci peer,
            const Message& message);

  // By peer; looked up only while `backlogged_peers_` is not empty, so the
  // common path never hashes.
  absl::flat_hash_map<uint64_t, Queue> queues_;
  std::vector<net::PeerVci> backlogged_peers_;  // whose queue is not empty
  std::vector<Entry*> spare_;                   // recycled entries
  const LinkTable* links_ = nullptr;
  Counters counters_;
};

}  // namespace minimpi::vci

#endif  // MINIMPI_MPI_VCI_OUTBOX_H_
