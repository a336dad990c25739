// Completion and progress: completing, waiting for and freeing requests,
// point-to-point's turn in each progress round of a VCI (posting again
// what the transport refused, advancing schedules), and what each of its
// messages and local completions does when the VCI hands it over.
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mpi/p2p/p2p_internal.h"
#include "mpi/p2p/point_to_point.h"
#include "mpi/p2p/unexpected_events.h"

namespace minimpi::p2p {

void PointToPoint::Complete(Request* request) {
  if (Progressable* parent = request->parent) {
    // A collective's step: its schedule advances at the end of this
    // progress round (never inside the transport's poll, which may not be
    // re-entered). The schedule, not a user, retires the request.
    if (!parent->queued_for_advance && !parent->in_advance) {
      parent->queued_for_advance = true;
      vci_states_[request->vci].ready.push_back(parent);
    }
  }
  // The last touch of the request on this path: once kComplete is visible the
  // waiting thread may read the status and recycle it.
  RequestState previous = request->state.exchange(RequestState::kComplete,
                                                  std::memory_order_acq_rel);
  if (previous == RequestState::kActiveFreed) {
    // Nobody will retire it: do what Retire would. A collective's schedule
    // is deleted from inside its own last Advance, which returns at once.
    delete request->schedule;
    request->schedule = nullptr;
    request->pool->Release(request);
  }
}

void PointToPoint::ReservePolled(int vci) {
  VciState& state = vci_states_[vci];
  std::lock_guard lock(state.mutex);
  state.polled.reserve(
      state.polled_room.fetch_add(1, std::memory_order_relaxed) + 1);
}

void PointToPoint::StopPollingLocked(Progressable* work, int vci) {
  std::vector<Progressable*>& polled = vci_states_[vci].polled;
  for (size_t i = 0; i < polled.size(); ++i) {
    if (polled[i] == work) {
      polled[i] = polled.back();
      polled.pop_back();
      return;
    }
  }
}

void PointToPoint::Wait(Request* request) {
  vcis_.WaitUntil(request->vci, [request] { return IsComplete(request); });
}

void PointToPoint::Retire(Request* request) {
  if (request->persistent) {
    // A persistent collective keeps its schedule for the next start.
    request->state.store(RequestState::kInactive, std::memory_order_release);
    return;
  }
  if (request->schedule != nullptr) {
    delete request->schedule;
    request->schedule = nullptr;
  }
  request->pool->Release(request);
}

void PointToPoint::Free(Request* request) {
  // The user's handle dies now, even when the request lives on until it
  // completes.
  RequestPool::Invalidate(request);
  RequestState expected = RequestState::kActive;
  if (request->state.compare_exchange_strong(
          expected, RequestState::kActiveFreed, std::memory_order_acq_rel)) {
    return;  // released by Complete
  }
  // Inactive or already complete: nobody will retire it, so do what Retire
  // would (a completed schedule, e.g. MPI_Isendrecv's, goes too).
  delete request->schedule;
  request->schedule = nullptr;
  request->pool->Release(request);
}

bool PointToPoint::ProgressLocked(int vci) {
  VciState& state = vci_states_[vci];
  bool progressed = false;
  for (size_t i = 0; i < state.stalled_reads.size();) {
    Request* request = state.stalled_reads[i];
    if (!PumpGatheredReadLocked(request)) {
      ++i;
      continue;
    }
    request->gathered_read->stalled = false;
    state.stalled_reads[i] = state.stalled_reads.back();
    state.stalled_reads.pop_back();
    progressed = true;
  }
  while (!state.pending_copies.empty()) {
    if (TryCopyLocked(vci, state.pending_copies.front()) ==
        net::PostResult::kRetry) {
      break;
    }
    state.pending_copies.pop_front();
    progressed = true;
  }
  // Polled work, newest first: work that stops polling swaps the last
  // entry (already visited) into its place.
  // Progress only when some finished: work that merely looked is idle.
  if (!state.polled.empty()) {
    const size_t polled = state.polled.size();
    for (size_t i = polled; i-- > 0;) RunAdvance(state.polled[i], vci);
    if (state.polled.size() != polled) progressed = true;
  }
  // Advance schedules whose steps completed. Advancing may complete more
  // steps at once (eager sends), which queues them again: loop until quiet.
  // Should the VCI be polled again from inside an Advance, the inner call
  // leaves this to the outer one.
  if (!state.ready.empty() && !state.advancing) {
    state.advancing = true;
    while (!state.ready.empty()) {
      Progressable* schedule = state.ready.back();
      state.ready.pop_back();
      schedule->queued_for_advance = false;
      RunAdvance(schedule, vci);
    }
    state.advancing = false;
    progressed = true;
  }
  return progressed;
}

void PointToPoint::OnMessageLocked(int vci, net::PeerVci peer,
                                   const std::byte* data, size_t length) {
  MessageHeader header{};
  size_t header_bytes;
  if (static_cast<MessageType>(data[0]) == MessageType::kEager) {
    header_bytes = kEagerHeaderBytes;
    std::memcpy(&header, data, kEagerHeaderBytes);
    header.length = length - kEagerHeaderBytes;
  } else {
    header_bytes = sizeof(header);
    std::memcpy(&header, data, sizeof(header));
  }
  const std::byte* payload = data + header_bytes;
  switch (header.type) {
    case MessageType::kEager:
    case MessageType::kEagerSync:
    case MessageType::kRendezvousRequest:
      HandleArrival(vci, peer, header, payload, length - header_bytes);
      return;
    case MessageType::kSyncAck:
      Complete(reinterpret_cast<Request*>(header.sender_request));
      return;
    case MessageType::kRendezvousDone:
      FinishRendezvousEvent(reinterpret_cast<Request*>(header.sender_request));
      return;
    case MessageType::kClearToSend:
      StartRendezvousWriteLocked(vci, peer, header);
      return;
    case MessageType::kWriteDone:
      FinishRendezvousEvent(
          reinterpret_cast<Request*>(header.receiver_request));
      return;
    case MessageType::kCancelSend:
      HandleCancelSendLocked(vci, peer, header);
      return;
    case MessageType::kCancelAnswer:
      // Not withdrawn: the request completes (or has completed) on its
      // own, and may already be recycled, so it is not touched.
      if ((header.flags & kCancelled) != 0) {
        CompleteCancelledSendLocked(
            reinterpret_cast<Request*>(header.sender_request));
      }
      return;
    default:
      // The VCIs hand us only the types we registered.
      std::fprintf(stderr, "minimpi: corrupt message header (type %d)\n",
                   static_cast<int>(header.type));
      std::abort();
  }
}

void PointToPoint::OnLocalDoneLocked(int vci, uint64_t context) {
  // Our contexts are untagged request pointers (vci::Traffic's value 0).
  auto* request = reinterpret_cast<Request*>(context);
  if (request->kind == RequestKind::kReceive &&
      request->gathered_read != nullptr) {
    FinishGatheredReadLocked(vci, request);
    return;
  }
  if (request->kind == RequestKind::kReceive && --request->reads_left > 0) {
    FinishRendezvousEvent(request);  // more pieces to come
    return;
  }
  if (request->kind == RequestKind::kReceive) {
    // Our read is over: the sender's buffer is free as far as we go.
    SendOwedControlLocked(vci, request->rendezvous_peer,
                          MakeControl(MessageType::kRendezvousDone,
                                      request->rendezvous_sender_request),
                          request, /*finishes_event=*/true);
  } else {
    MessageHeader done{};
    done.type = MessageType::kWriteDone;
    done.receiver_request = request->receiver_request;
    SendOwedControlLocked(vci, request->send.destination(), done, request,
                          /*finishes_event=*/true);
  }
}

void PointToPoint::HandleArrival(int vci, net::PeerVci peer,
                                 const MessageHeader& header,
                                 const std::byte* payload,
                                 size_t payload_length) {
  VciState& state = vci_states_[vci];
  match::Envelope arrived{header.context, header.source, header.tag};
  const match::TrafficKind traffic{
      static_cast<match::TrafficKind::Collective>(header.collective),
      static_cast<uint32_t>(std::min<uint64_t>(header.length, UINT32_MAX)),
      header.comm_size};
  match::PostedReceive* posted = state.engine->MatchArrival(arrived, traffic);
  if (posted != nullptr) {
    auto* request = static_cast<Request*>(posted);
    if (header.type == MessageType::kRendezvousRequest) {
      StartRendezvousReadLocked(request, peer, header, payload, payload_length);
      return;
    }
    size_t delivered = std::min<size_t>(header.length, request->capacity);
    CopyIntoReceive(request, payload, delivered);
    FillStatus(request, header, delivered);
    if (header.type == MessageType::kEagerSync) {
      SendOwedControlLocked(
          vci, peer, MakeControl(MessageType::kSyncAck, header.sender_request),
          request, /*finishes_event=*/false);
    } else {
      Complete(request);
    }
    return;
  }
  // Unexpected: keep the envelope and the payload (an eager message's
  // data, or a rendezvous request's description of the sender's layout).
  const size_t kept = payload_length;
  UnexpectedRecord* record = NewRecordLocked(state, kept);
  record->arrived = arrived;
  record->traffic = traffic;
  record->header = header;
  record->source = peer;
  record->vci = vci;
  record->payload_length = kept;
  if (kept > 0) std::memcpy(record->payload(), payload, kept);
  state.engine->AddUnexpected(record);
  NoteUnexpected(unexpected_enqueued_event, *state.engine, *record);
}

}  // namespace minimpi::p2p
