// Probes (MPI_Probe, MPI_Iprobe, matched probes and MPI_Imrecv) and
// cancellation of receives and sends.
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
namespace {

void StatusFromHeader(const MessageHeader& header, Status* status) {
  status->source = header.source;
  status->tag = header.tag;
  // A probe describes the message whole: what a receive of it would hold.
  status->bytes = header.length;
  status->arrived_bytes = header.length;
  status->error = Error::kNone;
  status->cancelled = false;
}

}  // namespace

UnexpectedRecord* PointToPoint::FindUnexpected(const match::Envelope& wanted,
                                               int vci, bool poll, bool take,
                                               Status* status) {
  VciState& state = vci_states_[vci];
  std::lock_guard lock(state.mutex);
  if (poll) vcis_.PollLocked(vci);
  auto* message = static_cast<UnexpectedRecord*>(state.engine->Probe(wanted));
  if (message == nullptr) return nullptr;
  if (take) {
    state.engine->RemoveUnexpected(message);
    NoteUnexpected(unexpected_dequeued_event, *state.engine, *message);
  }
  StatusFromHeader(message->header, status);
  return message;
}

bool PointToPoint::Iprobe(const match::Envelope& wanted, int vci,
                          Status* status) {
  return FindUnexpected(wanted, vci, /*poll=*/true, /*take=*/false, status) !=
         nullptr;
}

void PointToPoint::Probe(const match::Envelope& wanted, int vci,
                         Status* status) {
  // The wait polls; done() only looks. It may be asked again after it said
  // yes: keep the first answer.
  bool found = false;
  vcis_.WaitUntil(vci, [&] {
    return found || (found = FindUnexpected(wanted, vci, /*poll=*/false,
                                            /*take=*/false, status) != nullptr);
  });
}

UnexpectedRecord* PointToPoint::Improbe(const match::Envelope& wanted, int vci,
                                        Status* status) {
  return FindUnexpected(wanted, vci, /*poll=*/true, /*take=*/true, status);
}

UnexpectedRecord* PointToPoint::Mprobe(const match::Envelope& wanted, int vci,
                                       Status* status) {
  // The wait polls; done() only looks, and never takes a second message.
  UnexpectedRecord* message = nullptr;
  vcis_.WaitUntil(vci, [&] {
    if (message == nullptr) {
      message =
          FindUnexpected(wanted, vci, /*poll=*/false, /*take=*/true, status);
    }
    return message != nullptr;
  });
  return message;
}

Request* PointToPoint::Imrecv(UnexpectedRecord* message,
                              const ReceiveArguments& receive,
                              uintptr_t owner) {
  VciState& state = vci_states_[message->vci];
  std::lock_guard lock(state.mutex);
  Request* request = state.requests.Allocate();
  request->kind = RequestKind::kReceive;
  request->vci = message->vci;
  request->receive_buffer = receive.buffer;
  request->capacity = receive.capacity;
  request->receive_layout = receive.layout;
  request->receive_count = receive.count;
  if (receive.layout != nullptr) {
    request->layout_hold = datatype::LayoutRef::Share(receive.layout);
  }
  request->owner = owner;
  request->state.store(RequestState::kActive, std::memory_order_relaxed);
  DeliverUnexpectedLocked(request, message);
  return request;
}

void PointToPoint::FreeProbedMessage(UnexpectedRecord* message) {
  VciState& state = vci_states_[message->vci];
  std::lock_guard lock(state.mutex);
  FreeRecordLocked(state, message);
}

bool PointToPoint::CancelReceive(Request* request) {
  VciState& state = vci_states_[request->vci];
  std::lock_guard lock(state.mutex);
  if (!state.engine->CancelPosted(request)) return false;
  request->status = Status{};
  request->status.cancelled = true;
  Complete(request);
  return true;
}

void PointToPoint::CancelSend(Request* request) {
  VciState& state = vci_states_[request->vci];
  std::lock_guard lock(state.mutex);
  if (IsComplete(request) || request->cancel_requested) return;
  const net::PeerVci peer = request->send.destination();
  // Still in this VCI's outbox: take it out; nobody saw it.
  if (state.outbox.Withdraw(
          peer, [this, request](const vci::Outbox::Message& message) {
            return message.sender == this &&
                   message.word == reinterpret_cast<uint64_t>(request) &&
                   (message.flags & kSentData) != 0;
          })) {
    CompleteCancelledSendLocked(request);
    return;
  }
  // The message has left: ask the receiver, behind it on the same ring.
  request->cancel_requested = true;
  MessageHeader cancel = MakeControl(MessageType::kCancelSend,
                                     reinterpret_cast<uint64_t>(request));
  cancel.context = request->send.remote_context;
  cancel.source = request->send.source_rank;
  cancel.tag = request->send.tag;
  SendControlLocked(request->send.vci, peer, cancel);
}

void PointToPoint::CompleteCancelledSendLocked(Request* request) {
  // A rendezvous (see PostSendLocked) registered its data.
  if (!SendsEagerly(request->send.bytes, request->send.destination().rank)) {
    transport_->DeregisterMemory(request->send_region);
  }
  delete[] request->rendezvous_staging;
  request->rendezvous_staging = nullptr;
  request->rendezvous_data = nullptr;
  request->pending_events = 0;
  request->status = Status{};
  request->status.cancelled = true;
  Complete(request);
}

void PointToPoint::HandleCancelSendLocked(int vci, net::PeerVci peer,
                                          const MessageHeader& header) {
  VciState& state = vci_states_[vci];
  MessageHeader answer =
      MakeControl(MessageType::kCancelAnswer, header.sender_request);
  // Messages from one sender with one envelope match in order, so the
  // message is withdrawable only while it is the earliest of them; behind
  // an earlier one it is left to complete (the standard lets a cancel fail).
  const match::Envelope wanted{header.context, header.source, header.tag};
  if (auto* record =
          static_cast<UnexpectedRecord*>(state.engine->Probe(wanted));
      record != nullptr && record->source == peer &&
      record->header.sender_request == header.sender_request) {
    state.engine->RemoveUnexpected(record);
    NoteUnexpected(unexpected_dequeued_event, *state.engine, *record);
    FreeRecordLocked(state, record);
    answer.flags = kCancelled;
  }
  SendControlLocked(vci, peer, answer);
}

}  // namespace minimpi::p2p
