// Receiving: posting receives, persistent and nested requests, requests
// that complete without traffic, and delivering an unexpected message to
// the receive that matches it.
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

// Inline: Irecv's hot path, and the same file's.
inline Request* PointToPoint::NewReceiveLocked(
    const ReceiveArguments& arguments, bool persistent) {
  Request* request = vci_states_[arguments.vci].requests.Allocate();
  request->kind = RequestKind::kReceive;
  request->persistent = persistent;
  request->vci = arguments.vci;
  request->receive_buffer = arguments.buffer;
  request->capacity = arguments.capacity;
  request->receive_layout = arguments.layout;
  request->receive_count = arguments.count;
  if (arguments.layout != nullptr) {
    request->layout_hold = datatype::LayoutRef::Share(arguments.layout);
  }
  request->wanted = {arguments.context, arguments.source, arguments.tag};
  request->traffic = arguments.kind;
  return request;
}

Request* PointToPoint::Irecv(const ReceiveArguments& arguments) {
  VciState& state = vci_states_[arguments.vci];
  std::lock_guard lock(state.mutex);
  Request* request = NewReceiveLocked(arguments, /*persistent=*/false);
  // PostReceiveLocked without resetting the status: the request is fresh
  // from the pool. A receive is posted before each message of a window, so
  // this path is the receiver's share of the message rate.
  request->state.store(RequestState::kActive, std::memory_order_relaxed);
  match::UnexpectedMessage* message = state.engine->MatchPosted(request);
  if (message != nullptr) {
    auto* record = static_cast<UnexpectedRecord*>(message);
    NoteUnexpected(unexpected_dequeued_event, *state.engine, *record);
    DeliverUnexpectedLocked(request, record);
  }
  return request;
}

Request* PointToPoint::NewPersistentReceive(const ReceiveArguments& arguments) {
  VciState& state = vci_states_[arguments.vci];
  std::lock_guard lock(state.mutex);
  return NewReceiveLocked(arguments, /*persistent=*/true);
}

void PointToPoint::Start(Request* request) {
  VciState& state = vci_states_[request->vci];
  std::lock_guard lock(state.mutex);
  if (request->kind == RequestKind::kCompleted) {
    request->state.store(RequestState::kComplete, std::memory_order_release);
    return;
  }
  if (request->kind == RequestKind::kSend &&
      request->send.mode == SendMode::kBuffered) {
    // The bindings handed the data to BufferedSends already: the buffer
    // may be reused at once.
    request->status = Status{};
    request->state.store(RequestState::kComplete, std::memory_order_release);
    return;
  }
  if (request->kind == RequestKind::kReceive) {
    PostReceiveLocked(request);
  } else {
    PostSendLocked(request);
  }
}

Request* PointToPoint::StartSchedule(Progressable* schedule, int vci,
                                     RequestKind kind) {
  VciState& state = vci_states_[vci];
  std::lock_guard lock(state.mutex);
  Request* request = state.requests.Allocate();
  request->kind = kind;
  request->vci = vci;
  request->schedule = schedule;
  request->state.store(RequestState::kActive, std::memory_order_relaxed);
  schedule->request = request;
  RunAdvance(schedule, vci);  // may complete the request already
  return request;
}

Request* PointToPoint::NewPersistentSchedule(Progressable* schedule, int vci) {
  VciState& state = vci_states_[vci];
  std::lock_guard lock(state.mutex);
  Request* request = state.requests.Allocate();
  request->kind = RequestKind::kCollective;
  request->persistent = true;
  request->vci = vci;
  request->schedule = schedule;
  request->status = Status{};
  request->state.store(RequestState::kInactive, std::memory_order_release);
  schedule->request = request;
  return request;
}

void PointToPoint::RestartSchedule(Request* request) {
  VciState& state = vci_states_[request->vci];
  std::lock_guard lock(state.mutex);
  request->status = Status{};
  request->state.store(RequestState::kActive, std::memory_order_relaxed);
  RunAdvance(request->schedule, request->vci);  // may complete it already
}

Request* PointToPoint::StartNestedLocked(Progressable* schedule, int vci,
                                         Progressable* parent) {
  Request* request = vci_states_[vci].requests.Allocate();
  request->kind = RequestKind::kCollective;
  request->vci = vci;
  request->schedule = schedule;
  request->parent = parent;
  request->state.store(RequestState::kActive, std::memory_order_relaxed);
  schedule->request = request;
  RunAdvance(schedule, vci);
  return request;
}

void PointToPoint::RunAdvance(Progressable* schedule, int vci) {
  schedule->in_advance = true;
  schedule->Advance(vci);
  // Not touched after a finishing Advance: `in_advance` is cleared by the
  // schedule's own Advance before it completes its request (see Schedule).
}

Request* PointToPoint::IsendLocked(const SendArguments& arguments,
                                   Progressable* parent) {
  Request* request = NewSendLocked(arguments, /*persistent=*/false);
  request->parent = parent;
  PostSendLocked(request);
  return request;
}

Request* PointToPoint::IrecvLocked(const ReceiveArguments& arguments,
                                   Progressable* parent) {
  Request* request = NewReceiveLocked(arguments, /*persistent=*/false);
  request->parent = parent;
  PostReceiveLocked(request);
  return request;
}

void PointToPoint::CompleteCollectiveLocked(Request* request) {
  Complete(request);
}

void PointToPoint::CompleteUnowned(Request* request) {
  if (request->parent != nullptr) {
    std::fprintf(stderr,
                 "minimpi: internal error: CompleteUnowned on a step of a "
                 "schedule\n");
    std::abort();
  }
  Complete(request);
}

Request* PointToPoint::NewCompletedRequest(const Status& status, int vci) {
  VciState& state = vci_states_[vci];
  std::lock_guard lock(state.mutex);
  Request* request = state.requests.Allocate();
  request->kind = RequestKind::kCompleted;
  request->vci = vci;
  request->status = status;
  request->state.store(RequestState::kComplete, std::memory_order_release);
  return request;
}

Request* PointToPoint::NewPartitionedRequest(int vci, void* extension) {
  VciState& state = vci_states_[vci];
  std::lock_guard lock(state.mutex);
  Request* request = state.requests.Allocate();
  request->kind = RequestKind::kPartitioned;
  request->persistent = true;
  request->vci = vci;
  request->status = Status{};
  request->extension = extension;
  request->state.store(RequestState::kInactive, std::memory_order_release);
  return request;
}

Request* PointToPoint::NewGeneralized(void* extension) {
  VciState& state = vci_states_[0];
  std::lock_guard lock(state.mutex);
  Request* request = state.requests.Allocate();
  request->kind = RequestKind::kGeneralized;
  request->persistent = false;
  request->vci = 0;
  request->status = Status{};
  request->extension = extension;
  request->state.store(RequestState::kActive, std::memory_order_release);
  return request;
}

void PointToPoint::PostReceiveLocked(Request* request) {
  request->state.store(RequestState::kActive, std::memory_order_relaxed);
  request->status = Status{};
  match::MatchEngine& engine = *vci_states_[request->vci].engine;
  match::UnexpectedMessage* message = engine.MatchPosted(request);
  if (message != nullptr) {
    auto* record = static_cast<UnexpectedRecord*>(message);
    NoteUnexpected(unexpected_dequeued_event, engine, *record);
    DeliverUnexpectedLocked(request, record);
  }
}

void PointToPoint::DeliverUnexpectedLocked(Request* request,
                                           UnexpectedRecord* message) {
  const MessageHeader& header = message->header;
  if (header.type == MessageType::kRendezvousRequest) {
    StartRendezvousReadLocked(request, message->source, header,
                              message->payload(), message->payload_length);
  } else {
    size_t delivered = std::min<size_t>(header.length, request->capacity);
    CopyIntoReceive(request, message->payload(), delivered);
    FillStatus(request, header, delivered);
    if (header.type == MessageType::kEagerSync) {
      SendOwedControlLocked(
          request->vci, message->source,
          MakeControl(MessageType::kSyncAck, header.sender_request), request,
          /*finishes_event=*/false);
    } else {
      Complete(request);
    }
  }
  FreeRecordLocked(vci_states_[request->vci], message);
}

void PointToPoint::CopyIntoReceive(Request* request, const std::byte* payload,
                                   size_t delivered) {
  if (delivered == 0) return;
  if (request->receive_layout == nullptr) {
    std::memcpy(request->receive_buffer, payload, delivered);
    return;
  }
  datatype::Unpack(payload, static_cast<int64_t>(delivered),
                   request->receive_buffer, request->receive_count,
                   request->receive_layout, 0);
}

}  // namespace minimpi::p2p
