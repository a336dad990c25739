// Point-to-point protocols over the transport: eager, synchronous eager and
// single-copy rendezvous; request completion.
//
// Point-to-point is one kind of traffic on the VCIs (mpi/vci): it keeps a
// VciState for each VCI (its matching engine and the RDMA copies the
// transport refused), guarded by that VCI's lock, and registers as the
// handler of its message types, so the VCIs' progress loop hands it its
// arrivals and local completions and gives it a turn to retry those copies.
// Requests, the outbox of messages waiting for the transport, waiting and
// progress belong to the VCIs.
//
// This layer speaks bytes, world ranks and matching contexts; communicators,
// datatypes and MPI error classes belong to mpi/ above it.
//
// Owned by: mpi/p2p. Called by: the C bindings, mpi/coll and mpi/part.
#ifndef MINIMPI_MPI_P2P_POINT_TO_POINT_H_
#define MINIMPI_MPI_P2P_POINT_TO_POINT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "mpi/datatype/pack.h"
#include "mpi/match/match_engine.h"
#include "mpi/p2p/protocol.h"
#include "mpi/vci/outbox.h"
#include "mpi/vci/per_vci.h"
#include "mpi/vci/request.h"
#include "mpi/vci/vci_set.h"
#include "net/transport.h"
#include "runtime/settings.h"

namespace minimpi::p2p {

// An unexpected message: the envelope, and for eager messages a copy of the
// payload right behind the record.
struct UnexpectedRecord : match::UnexpectedMessage {
  // Records for payloads up to this size are recycled per VCI, so an early
  // small message costs no allocation.
  static constexpr size_t kPooledPayloadBytes = 256;

  MessageHeader header;
  size_t payload_capacity = 0;
  size_t payload_length = 0;  // bytes kept behind the record
  net::PeerVci source;        // who sent it, from which VCI
  int vci = 0;
  uintptr_t owner = 0;  // opaque to p2p: the bindings keep the communicator
  std::byte* payload() { return reinterpret_cast<std::byte*>(this + 1); }
};

// Point-to-point's state for one VCI (in a vci::PerVci, made when the VCI
// is).
struct VciState {
  VciState(vci::Vci& vci, std::unique_ptr<match::MatchEngine> engine)
      : mutex(vci.mutex),
        engine(std::move(engine)),
        requests(*vci.requests),
        outbox(*vci.outbox) {}
  vci::VciLock& mutex;  // the VCI's lock, which guards all of this
  const std::unique_ptr<match::MatchEngine> engine;
  vci::RequestPool& requests;  // the VCI's
  // The VCI's messages the transport refused for now, in order per peer. A
  // data message names its request (whose buffer stays untouched until the
  // message has left; the word of the outbox entry), with kSentData and
  // possibly kCompleteWhenSent; a control message a request owes its peer
  // (kRendezvousDone, kWriteDone, kSyncAck) names it too, with kOwed: the
  // request finishes that step only once the message has left, so whoever
  // waits on it keeps progressing this VCI until then (an endpoint's VCI is
  // progressed by no one else).
  vci::Outbox& outbox;
  // Rendezvous reads and writes the transport refused for now. Guarded by
  // `mutex`.
  struct PendingCopy {
    vci::Request* request;
    net::PeerVci peer;
    bool write;
    void* local;
    const net::MemoryRegion* region;
    net::RemoteBuffer remote;
    size_t length;
  };
  std::deque<PendingCopy> pending_copies;
  // Gathered reads (non-contiguous rendezvous) that stopped posting for
  // want of transport resources; progress resumes them. Guarded by `mutex`.
  std::vector<vci::Request*> stalled_reads;
  // I/O vector scratch for posting gathered reads. Guarded by `mutex`.
  std::vector<datatype::Segment> local_segments, remote_segments;
  std::vector<net::IoSegment> local_io, remote_io;
  // Recycled small unexpected-message records. Guarded by `mutex`.
  std::vector<UnexpectedRecord*> spare_records;
  // Schedules whose requests completed, to advance. Guarded by `mutex`.
  std::vector<vci::Progressable*> ready;
  // Work that no message advances, advanced at every progress round until
  // it stops itself (persistent collectives on a node's shared memory),
  // and how many may be there at once: its room is reserved when such
  // work is made, so that starting it allocates nothing. Guarded by
  // `mutex` (polled_room: atomic, dropped by whoever frees the work).
  std::vector<vci::Progressable*> polled;
  std::atomic<size_t> polled_room{0};
  bool advancing = false;  // guarded by `mutex`
};

class PointToPoint final : public vci::TrafficHandler,
                           public vci::Outbox::Sender {
 public:
  // Registers with `vcis` as the handler of point-to-point traffic.
  // `world_size` sizes the matching engines' dedicated-queue budget.
  static absl::StatusOr<std::unique_ptr<PointToPoint>> Create(
      vci::VciSet* vcis, const runtime::Settings& settings, int world_size);

  ~PointToPoint() override;

  // The request a handle's parts name (see RequestPool::Lookup), or nullptr.
  // Any thread, lock-free.
  vci::Request* LookupRequest(uint32_t vci, uint32_t index,
                              uint32_t generation) const {
    const VciState* state = vci_states_.Find(vci);
    return state == nullptr ? nullptr
                            : state->requests.Lookup(index, generation);
  }
  // The request in slot `index` of `vci`'s pool, whatever its state (see
  // RequestPool::SlotAt), or nullptr.
  vci::Request* RequestSlot(uint32_t vci, uint32_t index) const {
    const VciState* state = vci_states_.Find(vci);
    return state == nullptr ? nullptr : state->requests.SlotAt(index);
  }
  // Frees an unexpected message a matched probe took and nobody received.
  void FreeProbedMessage(UnexpectedRecord* message);

  // The matching engines' statistics, one block per VCI that matched
  // anything (MINIMPI_MATCH_STATS).
  std::string MatchStatistics();

  // MPI_T. The matching engine of `vci` (its counters are read without a
  // lock), or nullptr for a VCI that does not exist (yet). Any thread.
  const match::MatchEngine* EngineAt(int vci) const {
    const VciState* state = vci_states_.Find(static_cast<uint32_t>(vci));
    return state == nullptr ? nullptr : state->engine.get();
  }
  int vci_capacity() const { return vci_states_.capacity(); }
  // Names the object (the communicator) whose traffic uses `context` on
  // `vci`, for the events raised about it. Any thread.
  void SetContextOwner(int vci, int32_t context, const void* owner);
  // The contexts' communicator is gone: forgets their owner on every VCI
  // and restarts their high-water marks at the lengths now (a later
  // communicator may take the id). Any thread.
  void ForgetContexts(int32_t point_to_point_context,
                      int32_t collective_context);
  // Restarts the high-water marks of `context` on `vci` at its lengths now
  // (an MPI_T handle reset). Any thread.
  void RestartHighWatermarks(int vci, int32_t context) const;

  // Blocking standard-mode send: returns when `buffer` may be reused. Small
  // messages complete without allocating a request.
  void Send(const vci::SendArguments& arguments);
  // Starts a send; the request completes when the buffer may be reused
  // (standard/ready) or the receive has matched (synchronous).
  vci::Request* Isend(const vci::SendArguments& arguments);
  vci::Request* Irecv(const vci::ReceiveArguments& arguments);

  vci::Request* NewPersistentSend(const vci::SendArguments& arguments);
  vci::Request* NewPersistentReceive(const vci::ReceiveArguments& arguments);
  // Starts an inactive persistent request. A persistent request created
  // complete (a PROC_NULL peer) completes again at once.
  void Start(vci::Request* request);

  // A request that is already complete with `status` (PROC_NULL operations).
  vci::Request* NewCompletedRequest(const vci::Status& status, int vci);

  // Collectives. A collective's request completes when its schedule says
  // so; the schedule is owned by the request. StartCollective creates the
  // request and calls Advance once, under one lock, to post the first steps.
  vci::Request* StartCollective(vci::Progressable* schedule, int vci) {
    return StartSchedule(schedule, vci, vci::RequestKind::kCollective);
  }
  // The same for point-to-point work built from several requests
  // (RequestKind::kCompound: MPI_Isendrecv, buffered sends).
  vci::Request* StartSchedule(vci::Progressable* schedule, int vci,
                              vci::RequestKind kind);
  // Persistent collectives: an inactive persistent request of kind
  // kCollective that owns `schedule`, built once; each RestartSchedule
  // (MPI_Start) activates it and advances the schedule once to post its
  // first steps. Completing it leaves the schedule in place (Retire turns
  // the request inactive); freeing it deletes the schedule.
  vci::Request* NewPersistentSchedule(vci::Progressable* schedule, int vci);
  void RestartSchedule(vci::Request* request);
  // For use inside Progressable::Advance (the VCI's lock is held): post a
  // step whose completion advances `parent`, and finish the collective.
  vci::Request* IsendLocked(const vci::SendArguments& arguments,
                            vci::Progressable* parent);
  vci::Request* IrecvLocked(const vci::ReceiveArguments& arguments,
                            vci::Progressable* parent);
  // Starts `schedule` as a step of `parent` (a collective made of smaller
  // collectives, such as one on an intercommunicator running one on its
  // local group): its request completes into the parent, which retires it.
  vci::Request* StartNestedLocked(vci::Progressable* schedule, int vci,
                                  vci::Progressable* parent);
  void CompleteCollectiveLocked(vci::Request* request);
  // Work advanced at every progress round of `vci` (whose waiters then
  // poll rather than sleep) from StartPollingLocked until it calls
  // StopPollingLocked inside its Advance. ReservePolled, once per such
  // work when it is made (any thread, no lock held), makes the room;
  // ReleasePolled when it is freed.
  void ReservePolled(int vci);
  void ReleasePolled(int vci) {
    vci_states_[vci].polled_room.fetch_sub(1, std::memory_order_relaxed);
  }
  void StartPollingLocked(vci::Progressable* work, int vci) {
    vci_states_[vci].polled.push_back(work);
  }
  void StopPollingLocked(vci::Progressable* work, int vci);
  // Completes a schedule's request from any thread, holding any VCI's lock
  // or none. Only for a request that is no step of another schedule (its
  // completion then touches no VCI state): a buffer flush, which the
  // buffered messages of every VCI complete.
  void CompleteUnowned(vci::Request* request);

  // Generalized requests: one active request of kind kGeneralized, and its
  // completion, which any thread may call holding no lock. It touches only
  // the request's state, so a thread waiting on it sees it at once.
  vci::Request* NewGeneralized(void* extension);
  void CompleteGeneralized(vci::Request* request) {
    request->state.store(vci::RequestState::kComplete,
                         std::memory_order_seq_cst);
    vcis_.WakeSleepers(request->vci);
  }

  // An inactive persistent request of kind kPartitioned owned by
  // `extension` (mpi/part), so that handles, Wait and Test work as for any
  // request.
  vci::Request* NewPartitionedRequest(int vci, void* extension);
  // Sends a control message (a header only), or queues it in the VCI's
  // outbox behind the peer's waiting messages; never blocks. Caller holds
  // `vci`'s lock.
  void SendControlLocked(int vci, net::PeerVci peer,
                         const MessageHeader& header);

  // Cancels a pending receive; true if it was cancelled (it then completes
  // with status.cancelled set), false if it had already matched.
  bool CancelReceive(vci::Request* request);
  // Cancels a pending send (MPI_Cancel). A message still queued here is
  // withdrawn at once; one that has left is withdrawn by the receiver if it
  // has not matched (kCancelSend): the request then completes with
  // status.cancelled set, otherwise it completes as usual. A standard-mode
  // eager send is complete once posted, and stays so.
  void CancelSend(vci::Request* request);

  // Probes: the earliest matching unexpected message. Iprobe progresses once.
  bool Iprobe(const match::Envelope& wanted, int vci, vci::Status* status);
  void Probe(const match::Envelope& wanted, int vci, vci::Status* status);
  // Matched probes take the message out of reach of every other receive.
  UnexpectedRecord* Improbe(const match::Envelope& wanted, int vci,
                            vci::Status* status);
  UnexpectedRecord* Mprobe(const match::Envelope& wanted, int vci,
                           vci::Status* status);
  // Receives a message taken by a matched probe into `receive` (buffer,
  // capacity, layout and count are used).
  vci::Request* Imrecv(UnexpectedRecord* message,
                       const vci::ReceiveArguments& receive, uintptr_t owner);

  static bool IsComplete(const vci::Request* request) {
    return request->state.load(std::memory_order_acquire) ==
           vci::RequestState::kComplete;
  }
  // Progresses until `request` completes.
  void Wait(vci::Request* request);

  // After a completed request's status was read: a persistent request turns
  // inactive, any other goes back to its pool.
  void Retire(vci::Request* request);
  // The same for requests collected together (MPI_Waitall and kin): the
  // requests go back to their pools through `batch`.
  // Inline: a Waitall of a window of messages retires each of them.
  void Retire(vci::Request* request, vci::ReleaseBatch& batch) {
    if (request->schedule == nullptr && !request->persistent) [[likely]] {
      batch.Add(request);
      return;
    }
    Retire(request);
  }
  // MPI_Request_free semantics: release now, or when it completes.
  void Free(vci::Request* request);

  // The VCIs this traffic rides on (their progress loop and waits).
  vci::VciSet& vcis() { return vcis_; }

  // vci::TrafficHandler. All but AttachVci hold the VCI's lock.
  absl::Status AttachVci(int vci, vci::Vci& state) override;
  void OnMessageLocked(int vci, net::PeerVci peer, const std::byte* data,
                       size_t length) override;
  void OnLocalDoneLocked(int vci, uint64_t context) override;
  bool ProgressLocked(int vci) override;
  bool MaySleepLocked(int vci) override {
    return vci_states_[vci].polled.empty();
  }
  // vci::Outbox::Sender: a queued message of ours left.
  void OnSentLocked(int vci, uint64_t word, uint32_t flags) override;

 private:
  PointToPoint(vci::VciSet* vcis, const runtime::Settings& settings,
               int world_size);

  // The following run with the VCI's lock held.
  vci::Request* NewSendLocked(const vci::SendArguments& arguments,
                              bool persistent);
  vci::Request* NewReceiveLocked(const vci::ReceiveArguments& arguments,
                                 bool persistent);
  void PostSendLocked(vci::Request* request);
  // Sends a data message of `request` (eager, synchronous eager, or a
  // rendezvous request), or queues it in the VCI's outbox behind the peer's
  // waiting messages. A queued
  // standard-mode eager message completes its request once it leaves.
  // Sends a control message `request` owes the peer; once it has left, the
  // request finishes a rendezvous event (`finishes_event`) or completes.
  void SendOwedControlLocked(int vci, net::PeerVci peer,
                             const MessageHeader& header, vci::Request* request,
                             bool finishes_event);
  void SettleOwedLocked(vci::Request* request, bool finishes_event);
  void SendDataLocked(vci::Request* request, const MessageHeader& header,
                      const void* payload, size_t payload_length,
                      bool complete_when_sent);
  // Posts a message unless the peer has messages waiting in the VCI's
  // outbox; false when it must wait. A non-null `packed` means the payload
  // is the packed form of those send arguments' data.
  bool TrySendLocked(int vci, net::PeerVci peer, const MessageHeader& header,
                     const void* payload, size_t payload_length,
                     const vci::SendArguments* packed = nullptr);
  // The outbox entry's flags for p2p's messages (see VciState::outbox).
  static constexpr uint32_t kSentData = 1, kCompleteWhenSent = 2, kOwed = 4,
                            kOwedFinishesEvent = 8;
  void PostReceiveLocked(vci::Request* request);
  void HandleArrival(int vci, net::PeerVci peer, const MessageHeader& header,
                     const std::byte* payload, size_t payload_length);
  UnexpectedRecord* NewRecordLocked(VciState& state, size_t payload_bytes);
  static void FreeRecordLocked(VciState& state, UnexpectedRecord* record);
  // Delivers a message the engine held as unexpected into `request`.
  void DeliverUnexpectedLocked(vci::Request* request,
                               UnexpectedRecord* message);
  void StartRendezvousReadLocked(vci::Request* request, net::PeerVci peer,
                                 const MessageHeader& header,
                                 const std::byte* payload,
                                 size_t payload_length);
  // The non-contiguous rendezvous: one gathered copy from the sender's
  // memory (as its layout describes it) into the receive buffer.
  void StartGatheredReadLocked(vci::Request* request, net::PeerVci peer,
                               const MessageHeader& header,
                               const std::byte* payload, size_t payload_length,
                               size_t delivered);
  // Posts gathered reads until done or the transport is full; false when
  // it stopped for resources.
  bool PumpGatheredReadLocked(vci::Request* request);
  // One gathered read finished; ends the rendezvous after the last.
  void FinishGatheredReadLocked(int vci, vci::Request* request);
  // Copies an eager payload into a receive (contiguous or not).
  static void CopyIntoReceive(vci::Request* request, const std::byte* payload,
                              size_t delivered);
  void StartRendezvousWriteLocked(int vci, net::PeerVci peer,
                                  const MessageHeader& clear_to_send);
  // Posts a one-sided copy, or queues it when the transport says kRetry.
  void PostCopyLocked(int vci, const VciState::PendingCopy& copy);
  // Posts a one-sided copy now; the transport's answer.
  net::PostResult TryCopyLocked(int vci, const VciState::PendingCopy& copy);
  // One rendezvous event of `request` happened; completes it after the last.
  void FinishRendezvousEvent(vci::Request* request);
  // The rendezvous request of a send: contiguous data advertises its
  // buffer; non-contiguous data its layout in the payload, or a packed
  // staging copy when the layout does not fit one message.
  void PostRendezvousRequestLocked(vci::Request* request);
  // Whether a send of `bytes` to transport rank `rank` goes eagerly (else
  // by rendezvous). The first comparison decides every small message.
  bool SendsEagerly(size_t bytes, int rank) const {
    return bytes <= eager_max_ || (bytes <= widest_eager_max_ &&
                                   bytes + net::kMaxHeaderBytes <=
                                       transport_->max_message_size_to(rank));
  }
  void Complete(vci::Request* request);
  // Completes a send whose message was withdrawn, releasing what its
  // rendezvous held.
  void CompleteCancelledSendLocked(vci::Request* request);
  // Receiver of kCancelSend: withdraws the message if it is still
  // unmatched, and answers.
  void HandleCancelSendLocked(int vci, net::PeerVci peer,
                              const MessageHeader& header);
  void RunAdvance(vci::Progressable* schedule, int vci);
  // The earliest unexpected message matching `wanted` on `vci` (after one
  // poll when `poll`), taken out of reach of every receive when `take`;
  // fills `status`. Takes the VCI's lock.
  UnexpectedRecord* FindUnexpected(const match::Envelope& wanted, int vci,
                                   bool poll, bool take, vci::Status* status);
  vci::VciSet& vcis_;
  net::Transport* const transport_;
  // Sends up to eager_max_ bytes go eagerly on every route; up to
  // widest_eager_max_ on the routes that take more (net/tcp between
  // nodes): SendsEagerly says.
  const size_t eager_max_;
  const size_t widest_eager_max_;
  const size_t split_min_;  // 0: never split a rendezvous
  // Settings::network_read_piece (0: one read).
  const size_t network_read_piece_;
  // Settings::gather_min_piece: non-contiguous rendezvous data in smaller
  // pieces (on average) is staged in a contiguous copy.
  const size_t gather_min_piece_;
  const int world_size_;
  match::MatchEngineOptions engine_options_;
  std::string engine_name_;
  // Made as the VCIs are (AttachVci). Never freed before the destructor, so
  // lock-free readers may keep a pointer.
  vci::PerVci<VciState> vci_states_;
};

// Registers the unexpected-queue events with MPI_T (unexpected_events.h).
void RegisterPointToPointToolEvents();
// The live PointToPoint, for MPI_T reads on any thread: nullptr before the
// runtime is up and once it is torn down (at process exit).
const PointToPoint* ShownToTools();

}  // namespace minimpi::p2p

#endif  // MINIMPI_MPI_P2P_POINT_TO_POINT_H_
