// Partitioned communication (MPI-4 MPI_Psend_init / MPI_Precv_init /
// MPI_Pready / MPI_Parrived) over the transport's RDMA write with immediate.
//
// Protocol (control messages ride on p2p's rings, see protocol.h):
//   kPartitionedInit   Psend_init announces the send: (context, source, tag),
//                      partition count, total bytes, the sender's id.
//                      Matched with Precv_init in posting order, per
//                      (communicator, peer, tag), in a queue of its own.
//   kPartitionedClear  each MPI_Start of a matched receive: the receiver's
//                      buffer (address and key), partition count and slot.
//                      Round k's writes wait for round k's clear, so they
//                      never overwrite a round the receiver has not started.
//   kPartitionedFree   a freed send init: an unmatched one is withdrawn, so
//                      it never matches a later Precv_init.
// Data: each transport partition (a run of units, see aggregator.h) is
// named by the immediate slot (10 bits) | first unit (11) | count - 1 (11),
// and travels by the send's backend (Settings::part_backend, or the info
// key minimpi_part_backend):
//   native   one RdmaWritev with that immediate (the design this library
//            was built around: one operation per transport partition);
//   rma      a plain RDMA write into the receiver's buffer, and once it is
//            complete (the data is in place) a kPartitionedArrived message
//            carrying the immediate: a put, a flush and a signal, as Open
//            MPI's part/direct does over MPI RMA;
//   persist  two-sided kPartitionedData messages carrying the data (as
//            much as one message holds each), which the receiver copies
//            into place: what persistent point-to-point requests amount to
//            (Open MPI's part/persist, MPIPCL), with no RDMA at all;
//   auto     one of them per request, by where the peer is and how large
//            its partitions are (ChooseBackend).
// The receiver counts the bytes each arrival brings into its own
// partitions, so both sides may have different partition counts, and it
// needs no notion of the sender's backend.
//
// MPI_Pready is lock-free: one atomic exchange on the partition (to catch a
// partition marked twice) and one atomic decrement of its transport
// partition's counter, which starts at (units + 1): the receiver's clear is
// the extra one, so whoever brings it to zero, the last thread or the
// clear's arrival, posts the write. Posting needs the VCI (the transport's
// rule); a thread that finds it busy hands the write to the VCI's holder
// through a lock-free list and returns, never waits.
//
// Files: partitioned.cc (the object, Start, Free), init.cc (the init
// handshake and control messages), readiness.cc (MPI_Pready, which hands
// each ready unit to the plan's reaction, reactions.h), writes.cc (posting
// writes), arrivals.cc
// (MPI_Parrived and round completion), statistics.cc (statistics and the
// profile); partitioned_requests.h holds the request state they share.
//
// Owned by: mpi/part. Called by: the C bindings; a kind of traffic on the
// VCIs (vci::TrafficHandler), which hand it its control messages, the
// writes with immediate it receives and its writes' local completions.
#ifndef MINIMPI_MPI_PART_PARTITIONED_H_
#define MINIMPI_MPI_PART_PARTITIONED_H_

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mpi/datatype/layout.h"
#include "mpi/p2p/point_to_point.h"
#include "mpi/part/aggregator.h"
#include "mpi/part/backend_choice.h"
#include "mpi/vci/per_vci.h"
#include "mpi/vci/vci_set.h"
#include "runtime/settings.h"

namespace minimpi::part {

// What the bindings hand over for one Psend_init / Precv_init.
struct PartitionedArguments {
  // The whole buffer, as p2p describes data: contiguous `total_bytes` at
  // `data` (layout == nullptr), or `item_count` items of `layout` at `data`.
  void* data = nullptr;
  size_t total_bytes = 0;
  const datatype::Layout* layout = nullptr;
  int64_t item_count = 0;
  datatype::LayoutRef layout_hold;
  int64_t partitions = 0;
  int peer_world_rank = -1;  // -1: MPI_PROC_NULL
  int peer_vci = 0;          // the peer's VCI for this communicator
  int32_t context = 0;       // send: the receiver's p2p context; receive: ours
  int32_t source_rank = 0;   // send: our rank; receive: the sender's rank
  int32_t tag = 0;
  int vci = 0;
  std::string aggregator;    // empty: MINIMPI_PART_AGGR
  std::string backend;       // empty: MINIMPI_PART_BACKEND
  bool peer_on_node = true;  // for `auto`
  int64_t forced_transport_partitions = 0;
  int forced_channels = 0;
  uintptr_t owner = 0;  // the communicator, for errors (opaque)
};

struct PartitionedSend;
struct PartitionedReceive;

class Partitioned final : public vci::TrafficHandler,
                          public vci::Outbox::Sender {
 public:
  // Registers with `vcis` as the handler of partitioned traffic; its
  // requests and control messages go through `p2p`.
  static absl::StatusOr<std::unique_ptr<Partitioned>> Create(
      vci::VciSet& vcis, p2p::PointToPoint& p2p,
      const runtime::Settings& settings, int world_rank);
  ~Partitioned() override;

  // Never block. Errors: an unknown aggregator name, too many receives.
  absl::StatusOr<vci::Request*> NewSend(PartitionedArguments arguments);
  absl::StatusOr<vci::Request*> NewReceive(PartitionedArguments arguments);

  static bool IsPartitioned(const vci::Request* request) {
    return request->kind == vci::RequestKind::kPartitioned;
  }
  static bool IsSend(const vci::Request* request);
  static int64_t Partitions(const vci::Request* request);

  // MPI_Start of an inactive partitioned request.
  void Start(vci::Request* request);

  enum class ReadyResult { kOk, kTwice };
  // MPI_Pready of one partition of an active send (range checked by the
  // caller). Lock-free; may post a write.
  ReadyResult Ready(vci::Request* request, int64_t partition);
  // MPI_Parrived: whether the partition of an active receive arrived this
  // round; progresses when it has not.
  bool Arrived(vci::Request* request, int64_t partition);
  // MPI_Request_free of an inactive request.
  void Free(vci::Request* request);

  // vci::TrafficHandler: with the VCI's lock held.
  void OnMessageLocked(int vci, net::PeerVci peer, const std::byte* data,
                       size_t length) override;
  void OnWriteImmediateLocked(int vci, net::PeerVci peer, uint32_t immediate,
                              size_t length) override;
  void OnLocalDoneLocked(int vci, uint64_t context) override;
  bool ProgressLocked(int vci) override;
  bool MaySleepLocked(int vci) override;
  // vci::Outbox::Sender: a queued kPartitionedData message has left.
  void OnSentLocked(int vci, uint64_t word, uint32_t flags) override;

  // What a local completion's context names: a send (native, persist) or
  // one run (rma, which signals each run once its pieces are done).
  struct CompletionTarget {
    bool is_run = false;
  };

  // A write of a run of units waiting for its VCI.
  struct PendingWrite : CompletionTarget {
    PendingWrite() { is_run = true; }
    PartitionedSend* send = nullptr;
    int64_t first_unit = 0;
    int64_t units = 0;
    int64_t bytes_done = 0;  // of a run that needs several writes
    PendingWrite* next = nullptr;
    // rma: its pieces, and whether all are posted (the signal follows the
    // last one's completion). Guarded by the VCI lock.
    int pieces_posted = 0;
    int pieces_done = 0;
    bool all_posted = false;
    // The round it was posted in (PartitionedSend::round), so the end of a
    // round counts its writes without a clock.
    uint32_t round = 0;
  };
  // A send's reaction posts its runs through one (partitioned_requests.h).
  class RunPoster;

 private:
  Partitioned(vci::VciSet& vcis, p2p::PointToPoint& p2p,
              const runtime::Settings& settings, int world_rank);

  // A control message (kPartitionedInit, kPartitionedClear,
  // kPartitionedFree).
  void OnControlLocked(int vci, net::PeerVci peer,
                       const p2p::MessageHeader& header);

  struct UnexpectedInit {
    net::PeerVci peer;
    int32_t context, source, tag;
    uint64_t sender_id;
    int64_t partitions;
    uint64_t total_bytes;
  };
  // Per VCI: the matching queues and the writes waiting for the VCI (in a
  // vci::PerVci, every VCI's made at setup).
  struct VciState {
    std::deque<PartitionedReceive*> posted;           // guarded by the VCI lock
    std::deque<UnexpectedInit> unexpected;            // guarded by the VCI lock
    std::deque<PendingWrite*> refused;                // kRetry; the VCI lock
    std::atomic<PendingWrite*> handed_over{nullptr};  // lock-free stack
    // Sends whose reaction may need this VCI's progress (deferred windows
    // close there when nobody marks again). Guarded by the VCI lock.
    std::vector<PartitionedSend*> progressed_sends;
  };

  static uint64_t SendKey(const vci::Request& request);
  // The live send that SendKey named, or nullptr. Lock-free.
  PartitionedSend* FindSend(uint64_t key) const;
  void StartSendLocked(PartitionedSend& send);
  void StartReceiveLocked(PartitionedReceive& receive);
  void ApplyPlanLocked(PartitionedSend& send);
  void ApplyClearLocked(PartitionedSend& send, int held_vci);
  // The send's reaction for this round's plan, remade when its kind
  // changed. Under the send's VCI lock once the request is visible.
  void ChooseReaction(PartitionedSend& send);
  // A write of units [first, first + units): posted now on its channel VCI
  // when that VCI is free, else handed to the VCI's holder.
  void PostRun(PartitionedSend& send, int64_t first, int64_t units,
               int held_vci);
  // Posts a write; false (and nothing posted) when the transport refused.
  bool PostWriteLocked(int vci, PendingWrite& write);
  // persist: the run as kPartitionedData messages (the outbox queues what
  // the transport refuses, so this always succeeds).
  void PostMessagesLocked(int vci, PendingWrite& write);
  // Counts one piece done (unless !count: only looks); completes the
  // round after the last.
  void PieceDoneLocked(PartitionedSend& send, bool count);
  // A kPartitionedData message: its bytes into place, then counted.
  void OnDataLocked(const p2p::MessageHeader& header, const std::byte* payload,
                    size_t length);
  bool DrainLocked(int vci);
  void CompleteSendRound(PartitionedSend& send);
  void BindLocked(PartitionedReceive& receive, const UnexpectedInit& init);
  void SendClearLocked(PartitionedReceive& receive);
  void ArrivedBytes(PartitionedReceive& receive, uint64_t begin, uint64_t end);
  void PartitionArrived(PartitionedReceive& receive, int64_t partition);
  void CompleteReceiveRound(PartitionedReceive& receive);
  int ChannelVci(const PartitionedSend& send, int64_t unit) const;
  // The end of a send's round `round`: profile, statistics, adaptive.
  void RecordRound(PartitionedSend& send, uint32_t round);
  void PrintStatistics(const PartitionedSend& send);
  // The bytes of a run of `units` transport units from `first_unit`.
  static uint64_t RunBytes(const PartitionedSend& send, int64_t first_unit,
                           int64_t units);
  void ProfileLine(const std::string& line);
  const LogGPParameters& LogGP();

  vci::VciSet& vcis_;
  p2p::PointToPoint& p2p_;
  net::Transport& transport_;
  const runtime::Settings settings_;
  const int world_rank_;
  const int64_t epoch_ns_;  // profile times count from here (MPI_Init)
  AggregatorConfig config_;
  AutoBackendRule auto_rule_;
  bool loggp_ready_ = false;  // guarded by control_mutex_
  vci::PerVci<VciState> vci_states_;

  // Control path only (receive slots at init and free, the LogGP probe):
  // never taken by Pready or by a round's clear.
  std::mutex control_mutex_;
  static constexpr int kSlots = 1024;  // the immediate's 10 bits
  std::atomic<PartitionedReceive*> slots_[kSlots] = {};
  int next_slot_ = 0;  // guarded by control_mutex_

  std::mutex profile_mutex_;
  std::FILE* profile_ = nullptr;  // guarded by profile_mutex_
};

}  // namespace minimpi::part

#endif  // MINIMPI_MPI_PART_PARTITIONED_H_
