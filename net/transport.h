// The transport interface, shaped like InfiniBand verbs so that the
// partitioned-communication design maps 1:1 onto RC queue pairs and is still
// exercised on shared memory:
//   - registered memory regions with keys,
//   - reliable, ordered connections between any local VCI and any VCI of
//     any peer (a communicator's ranks use the same VCI index everywhere; an
//     endpoint's rank has a VCI of its own), made on first use so that
//     memory grows with the pairs that talk, not with all of them,
//   - two-sided sends into the peer's pre-posted receive buffers,
//   - RDMA write, write with a 32-bit immediate, and RDMA read,
//   - one completion queue per VCI, drained by Poll,
//   - an explicit kRetry when resources are exhausted right now (a full
//     ring, a QP's outstanding work-request limit): the caller progresses
//     and posts again; nothing is ever dropped.
//
// Threading: a transport is shared by all threads, but each VCI is used by
// one thread at a time: callers hold the VCI's lock (mpi/p2p owns it) around
// every call that names that VCI. Different VCIs are fully independent.
//
// Owned by: net/. Called by: mpi/p2p and mpi/part (mpi/ep owns VCIs).
// net/ never includes mpi/.
#ifndef MINIMPI_NET_TRANSPORT_H_
#define MINIMPI_NET_TRANSPORT_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "runtime/bootstrap.h"
#include "runtime/settings.h"

namespace minimpi::net {

// Room a transport reserves in every two-sided message for the caller's
// protocol header, on top of Settings::eager_max bytes of payload.
inline constexpr size_t kMaxHeaderBytes = 64;

// One VCI of one rank: the far end of a connection.
struct PeerVci {
  int rank = -1;  // world rank
  int vci = 0;    // a VCI index on that rank
  friend bool operator==(PeerVci a, PeerVci b) {
    return a.rank == b.rank && a.vci == b.vci;
  }
};

// The kind of link that carries messages to a rank, as MPI_T's per-VCI
// traffic counters split them (mpi/vci/outbox.h): the process itself, the
// node's shared memory, or the network (sockets or InfiniBand).
enum class Link : uint8_t { kSelf, kShm, kTcp, kIb };
inline constexpr int kNumLinks = 4;
inline const char* LinkName(Link link) {
  static constexpr const char* kNames[kNumLinks] = {"self", "shm", "tcp", "ib"};
  return kNames[static_cast<int>(link)];
}

enum class PostResult {
  kOk,     // posted; a later completion (if any) reports the end
  kRetry,  // no resources now: progress this VCI, then post again
};

// Memory the transport may read or write remotely.
struct MemoryRegion {
  void* address = nullptr;
  size_t length = 0;
  uint32_t local_key = 0;
  uint32_t remote_key = 0;
  void* transport_handle = nullptr;  // e.g. the ibv_mr
};

// Where a remote region lives, as the peer advertised it.
struct RemoteBuffer {
  uint64_t address = 0;
  uint32_t remote_key = 0;
};

// One contiguous piece of memory, local or the peer's: an entry of an I/O
// vector (an iovec for cross-memory attach, a scatter/gather entry or one
// work request for verbs).
struct IoSegment {
  uint64_t address = 0;
  size_t length = 0;
};

// A gathered copy inside this address space: the bytes of the `from`
// segments, in order, into the `to` segments, in order (both lists cover
// the same number of bytes, cut differently). What RdmaReadv comes to when
// the peer is this very process.
inline void CopySegmentsInProcess(const IoSegment* to, int to_count,
                                  const IoSegment* from, int from_count) {
  int t = 0, f = 0;
  size_t t_done = 0, f_done = 0;
  while (t < to_count && f < from_count) {
    const size_t n = std::min(to[t].length - t_done, from[f].length - f_done);
    std::memmove(reinterpret_cast<void*>(to[t].address + t_done),
                 reinterpret_cast<const void*>(from[f].address + f_done), n);
    t_done += n;
    f_done += n;
    if (t_done == to[t].length) ++t, t_done = 0;
    if (f_done == from[f].length) ++f, f_done = 0;
  }
}

enum class CompletionType : uint8_t {
  // A two-sided message from `peer` arrived; `data`/`length` are valid only
  // during the callback (they point into the receive buffer).
  kReceive,
  // A peer's RDMA write with immediate finished landing in local memory.
  kWriteImmediate,
  // A local RDMA read or write posted with `context` completed.
  kLocalDone,
};

struct Completion {
  CompletionType type = CompletionType::kReceive;
  int peer = -1;               // world rank of the other side
  int peer_vci = 0;            // its VCI (the far end of the connection)
  const void* data = nullptr;  // kReceive
  size_t length = 0;           // kReceive: bytes; kWriteImmediate: bytes
  uint32_t immediate = 0;      // kWriteImmediate
  uint64_t context = 0;        // kLocalDone: the poster's cookie
  PeerVci from() const { return {peer, peer_vci}; }
};

class CompletionHandler {
 public:
  virtual ~CompletionHandler() = default;
  // Called by Poll with the VCI's lock held; may post new work on any VCI
  // whose lock the caller holds (normally the same one).
  virtual void OnCompletion(int vci, const Completion& completion) = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;

  virtual const char* name() const = 0;
  // Which link carries messages to `rank` (any rank, this job's or, after
  // AddPeer, another's). Asked once per rank at setup, never per message.
  virtual Link LinkTo(int rank) const = 0;
  // VCIs per rank: indices 0 .. num_vcis() - 1 are valid everywhere.
  virtual int num_vcis() const = 0;
  // Largest header + payload that one Send carries to every rank
  // (at least kMaxHeaderBytes + Settings::eager_max).
  virtual size_t max_message_size() const = 0;
  // The same to one rank, where routes differ (RoutedTransport: net/tcp
  // takes larger messages than net/shm, since a round trip costs more
  // there), and the largest of them.
  virtual size_t max_message_size_to(int /*rank*/) const {
    return max_message_size();
  }
  virtual size_t largest_message_size() const { return max_message_size(); }
  // Whether RDMA to `rank` is copied by the CPU of the rank that posts it
  // (net/shm's cross-memory copies), so a transfer that both sides copy
  // half of moves up to twice as fast. Over a wire (tcp, ib) one link
  // carries both halves and splitting only adds a trip.
  virtual bool posting_cpu_copies_to(int /*rank*/) const { return false; }

  virtual absl::StatusOr<MemoryRegion> RegisterMemory(void* address,
                                                      size_t length) = 0;
  virtual void DeregisterMemory(const MemoryRegion& region) = 0;

  // Delivers header || payload as one message to `peer` (any rank, self
  // included, and any of its VCIs) on the connection between our `vci` and
  // that one. Messages on one connection arrive in the order they were sent.
  virtual PostResult Send(int vci, PeerVci peer, const void* header,
                          size_t header_length, const void* payload,
                          size_t payload_length) = 0;

  // Like Send, but the payload's `payload_length` bytes are written by
  // `write_payload` straight into the transport's buffer (a ring cell, a
  // registered bounce buffer), so data that must be packed is packed once,
  // where it travels. Not called at all when the answer is kRetry.
  virtual PostResult SendPacked(
      int vci, PeerVci peer, const void* header, size_t header_length,
      size_t payload_length,
      absl::FunctionRef<void(void* destination)> write_payload) = 0;

  // One-sided operations; each produces a kLocalDone completion carrying
  // `context` on `vci` when finished. A write with immediate additionally
  // produces a kWriteImmediate completion at `peer.vci`, after the
  // data is visible there, ordered after earlier Sends on the connection.
  virtual PostResult RdmaRead(int vci, PeerVci peer, void* local,
                              const MemoryRegion& local_region,
                              RemoteBuffer remote, size_t length,
                              uint64_t context) = 0;
  virtual PostResult RdmaWrite(int vci, PeerVci peer, const void* local,
                               const MemoryRegion& local_region,
                               RemoteBuffer remote, size_t length,
                               uint64_t context) = 0;
  virtual PostResult RdmaWriteImmediate(int vci, PeerVci peer,
                                        const void* local,
                                        const MemoryRegion& local_region,
                                        RemoteBuffer remote, size_t length,
                                        uint32_t immediate,
                                        uint64_t context) = 0;

  // A gathered RDMA read: the bytes of the peer's `remote` segments, in
  // order, into the local `local` segments, in order. Both lists cover the
  // same number of bytes, with at most max_io_segments() entries each;
  // local memory lies in `local_region`, remote memory in the region
  // `remote_key` names. One kLocalDone carrying `context` when finished.
  // This is how non-contiguous data moves in one copy.
  virtual PostResult RdmaReadv(int vci, PeerVci peer, const IoSegment* local,
                               int local_count,
                               const MemoryRegion& local_region,
                               const IoSegment* remote, int remote_count,
                               uint32_t remote_key, uint64_t context) = 0;
  // A gathered RDMA write: the bytes of the local `local` segments, in
  // order, into the peer's contiguous `remote` buffer (at most
  // max_io_segments() segments, all in `local_region`). With a non-null
  // `immediate` it is a write with immediate: the peer's `vci` gets a
  // kWriteImmediate carrying *immediate once all the bytes are visible. One
  // kLocalDone carrying `context` when finished. Partitioned communication
  // sends each transport partition with one of these.
  virtual PostResult RdmaWritev(int vci, PeerVci peer, const IoSegment* local,
                                int local_count,
                                const MemoryRegion& local_region,
                                RemoteBuffer remote, const uint32_t* immediate,
                                uint64_t context) = 0;
  // The most I/O vector entries one side of an RdmaReadv may have.
  virtual int max_io_segments() const = 0;

  // Hands up to `max_completions` completions of `vci` to `handler`;
  // returns how many it handled (0 when idle). Never blocks.
  virtual int Poll(int vci, CompletionHandler& handler,
                   int max_completions) = 0;

  // Blocking waits, shaped like a verbs completion channel (arm the CQ for
  // an event, poll it once more, then block on the channel): a thread with
  // nothing to do calls ArmDoorbell(vci), polls `vci` once more, and only
  // if that found nothing calls SleepOnDoorbell with the token it got. The
  // sleep ends when a peer's message, write or answer reaches `vci`, when a
  // thread of this process calls RingDoorbell(vci), or after `timeout_ns`.
  // A peer pays for the doorbell only while somebody is armed (one load on
  // its fast path otherwise), so spinning ranks stay free of system calls.
  // VCIs may share a doorbell (DoorbellOf): a ring then wakes the sleepers
  // of all of them, and a sleeper must poll all of them when it wakes.
  // Transports without doorbells return false from has_doorbell(); the
  // other calls then do nothing and callers must not sleep on them. The
  // token is opaque (64 bits, so that a transport made of two can carry
  // both of theirs).
  virtual bool has_doorbell() const { return false; }
  virtual int DoorbellOf(int vci) const { return vci; }
  virtual uint64_t ArmDoorbell(int /*vci*/) { return 0; }
  virtual void SleepOnDoorbell(int /*vci*/, uint64_t /*token*/,
                               int64_t /*timeout_ns*/) {}
  // Wakes whoever sleeps on `vci`'s doorbell in this process; one load when
  // nobody is armed. Any thread, holding any lock or none.
  virtual void RingDoorbell(int /*vci*/) {}
  // Wakes whoever sleeps on the doorbell of `peer`'s VCI, on this node,
  // after a change in memory both map that no message announces (a flag in
  // a collective's shared region); orders that change before its look at
  // the doorbell. Does nothing for peers it cannot reach that way.
  virtual void WakePeer(PeerVci /*peer*/) {}

  // Whether another rank of this node that is awake (not asleep on a
  // doorbell) last ran on the core this thread runs on, or may have: then
  // polling would keep that rank (quite likely the peer this thread waits
  // for) off the core, and a waiter should sleep at once. The scheduler
  // puts a woken task beside its waker, so ranks that wake each other
  // often end up sharing a core while others are free or busy elsewhere.
  // `move_away` (may be null) is set when that rank is known to run on
  // this very core and should keep it (a tie broken by rank): the caller
  // may then move to another core instead.
  virtual bool PeerMayShareCore(bool* /*move_away*/) { return false; }

  // For a transport combined with another (net/routed_transport.h): this
  // one then also rings `other`'s doorbell of a VCI whenever it gives that
  // VCI work it had none of before (a peer's first connection to it), so a
  // thread asleep on `other`'s doorbell alone, since this transport had
  // nothing for it, wakes up and looks here too. Called once, at setup.
  virtual void AlsoRingOnFirstContact(Transport* /*other*/) {}

  // False only when `vci` has never carried anything (no connection to or
  // from it, nothing posted on it), so polling it would find nothing: a
  // sweep over every VCI skips it. Any thread, without the VCI's lock.
  virtual bool MayHaveWork(int /*vci*/) const { return true; }

  // Processes of other jobs (dynamic processes: MPI_Comm_spawn,
  // MPI_Comm_accept/connect, MPI_Comm_join). DynamicAddress is what another
  // job's process needs to reach this one; AddPeer makes the process that
  // gave `address` reachable as peer `rank`, an index past this job's ranks
  // that the caller chooses (and never reuses for another process). Both
  // sides must have added each other before either sends. Transports that
  // cannot add peers after setup say why.
  virtual absl::StatusOr<std::string> DynamicAddress() {
    return absl::UnimplementedError(absl::StrCat(
        "transport ", name(), " cannot reach processes of other jobs"));
  }
  virtual absl::Status AddPeer(int /*rank*/, const std::string& /*address*/) {
    return absl::UnimplementedError(absl::StrCat(
        "transport ", name(), " cannot reach processes of other jobs"));
  }
};

// Builds the transport that Settings::transport names and connects every
// rank to every other. Collective over the job: it exchanges addresses
// through the bootstrap's Put/Commit/Fence/Get. "auto" gives each pair of
// ranks its own: net/shm inside a node, net/tcp between nodes (as the
// launcher's node map says, never the OS); "tcp" puts every pair on the
// network, "shm" refuses a job that spans nodes, "ib" needs a device.
// Under a launcher that can start or connect other jobs (mpiexec), net/shm
// reaches their processes through a net/tcp made on first use (its segments
// are laid out for the job's ranks at setup), and RoutedTransport sends
// them to its network transport.
absl::StatusOr<std::unique_ptr<Transport>> CreateTransport(
    runtime::Bootstrap& bootstrap, const runtime::Settings& settings);

// One transport MINIMPI_TRANSPORT may name. kTransports in transport.cc is
// the one list of them: CreateTransport, the settings' check and help, and
// the tests read it, so adding a transport is one entry there (plus the
// transport itself and its conformance test parameters).
struct TransportChoice {
  const char* name;
  const char* description;  // a few words, given inline in the help
  absl::StatusOr<std::unique_ptr<Transport>> (*create)(
      runtime::Bootstrap& bootstrap, const runtime::Settings& settings);
};
// Every transport, the default (auto) first.
std::span<const TransportChoice> TransportChoices();
// Their names, in the table's order.
std::vector<std::string> TransportNames();

}  // namespace minimpi::net

#endif  // MINIMPI_NET_TRANSPORT_H_
