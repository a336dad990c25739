// Sending: eager and synchronous sends, the rendezvous request (what a
// large send registers and announces), and what point-to-point's messages
// put in the VCI's outbox when the transport answers retry (and what it
// does when they leave: OnSentLocked).
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

namespace minimpi::p2p {
namespace {

MessageHeader MakeHeader(MessageType type, const SendArguments& arguments) {
  MessageHeader header{};
  header.type = type;
  header.collective = static_cast<uint8_t>(arguments.kind.collective);
  header.comm_size = static_cast<uint16_t>(
      std::min<uint32_t>(arguments.kind.comm_size, UINT16_MAX));
  header.context = arguments.remote_context;
  header.source = arguments.source_rank;
  header.tag = arguments.tag;
  header.length = arguments.bytes;
  return header;
}

size_t HeaderBytes(const MessageHeader& header) {
  return header.type == MessageType::kEager ? kEagerHeaderBytes
                                            : sizeof(header);
}

}  // namespace

void PointToPoint::Send(const SendArguments& arguments) {
  if (SendsEagerly(arguments.bytes, arguments.destination().rank) &&
      arguments.mode != SendMode::kSynchronous) {
    // The common small message: into the peer's ring and done; no request.
    VciState& state = vci_states_[arguments.vci];
    Request* request;
    {
      std::lock_guard lock(state.mutex);
      const MessageHeader header = MakeHeader(MessageType::kEager, arguments);
      if (TrySendLocked(arguments.vci, arguments.destination(), header,
                        arguments.buffer, arguments.bytes,
                        arguments.layout != nullptr ? &arguments : nullptr)) {
        return;
      }
      // No room: the message waits in the queue with a request to wait on,
      // and this thread waits by progressing, without the VCI's lock.
      request = NewSendLocked(arguments, /*persistent=*/false);
      request->state.store(RequestState::kActive, std::memory_order_relaxed);
      SendDataLocked(request, header, request->send.buffer, request->send.bytes,
                     /*complete_when_sent=*/true);
    }
    Wait(request);
    Retire(request);
    return;
  }
  Request* request = Isend(arguments);
  Wait(request);
  Retire(request);
}

Request* PointToPoint::Isend(const SendArguments& arguments) {
  VciState& state = vci_states_[arguments.vci];
  std::lock_guard lock(state.mutex);
  if (SendsEagerly(arguments.bytes, arguments.destination().rank) &&
      arguments.mode != SendMode::kSynchronous) [[likely]] {
    // The common small message, as in Send: into the peer's ring and
    // complete. The request is fresh from the pool (empty status, no
    // parent) and nobody else has its handle yet, so completing it is one
    // store, not Complete's exchange. A complete send's arguments are never
    // read again (MPI_Cancel of a complete send does nothing), so they are
    // not copied into it: fewer stores on the path that posts a window.
    if (TrySendLocked(arguments.vci, arguments.destination(),
                      MakeHeader(MessageType::kEager, arguments),
                      arguments.buffer, arguments.bytes,
                      arguments.layout != nullptr ? &arguments : nullptr)) {
      Request* request = state.requests.Allocate();
      request->vci = arguments.vci;
      request->state.store(RequestState::kComplete, std::memory_order_release);
      return request;
    }
  }
  Request* request = NewSendLocked(arguments, /*persistent=*/false);
  PostSendLocked(request);
  return request;
}

Request* PointToPoint::NewPersistentSend(const SendArguments& arguments) {
  VciState& state = vci_states_[arguments.vci];
  std::lock_guard lock(state.mutex);
  return NewSendLocked(arguments, /*persistent=*/true);
}

Request* PointToPoint::NewSendLocked(const SendArguments& arguments,
                                     bool persistent) {
  Request* request = vci_states_[arguments.vci].requests.Allocate();
  request->kind = RequestKind::kSend;
  request->persistent = persistent;
  request->vci = arguments.vci;
  request->send = arguments;
  if (arguments.layout != nullptr) {
    request->layout_hold = datatype::LayoutRef::Share(arguments.layout);
  }
  return request;
}

void PointToPoint::PostSendLocked(Request* request) {
  const SendArguments& arguments = request->send;
  request->state.store(RequestState::kActive, std::memory_order_relaxed);
  request->status = Status{};
  request->cancel_requested = false;
  if (SendsEagerly(arguments.bytes, arguments.destination().rank)) {
    if (arguments.mode == SendMode::kSynchronous) {
      MessageHeader header = MakeHeader(MessageType::kEagerSync, arguments);
      header.sender_request = reinterpret_cast<uint64_t>(request);
      SendDataLocked(request, header, arguments.buffer, arguments.bytes,
                     /*complete_when_sent=*/false);
      return;  // completes on kSyncAck
    }
    SendDataLocked(request, MakeHeader(MessageType::kEager, arguments),
                   arguments.buffer, arguments.bytes,
                   /*complete_when_sent=*/true);
    return;
  }
  PostRendezvousRequestLocked(request);
}

void PointToPoint::PostRendezvousRequestLocked(Request* request) {
  // The receiver reads the data in one copy and answers kRendezvousDone,
  // which also makes every mode synchronous.
  const SendArguments& arguments = request->send;
  MessageHeader header = MakeHeader(MessageType::kRendezvousRequest, arguments);
  header.sender_request = reinterpret_cast<uint64_t>(request);
  const void* data = arguments.buffer;
  const datatype::Layout* layout = arguments.layout;
  const std::byte* payload = nullptr;
  size_t payload_length = 0;
  if (layout != nullptr) {
    const std::span<const datatype::Run> runs = layout->runs();
    const size_t description =
        sizeof(SenderLayout) + runs.size() * sizeof(datatype::Run);
    if (description <= eager_max_ &&
        !HasSmallPieces(*layout, gather_min_piece_)) {
      // Describe the memory: the receiver gathers the pieces in place.
      request->rendezvous_staging = new std::byte[description];
      const SenderLayout head{arguments.count, layout->extent(),
                              static_cast<int64_t>(runs.size()), 0};
      std::memcpy(request->rendezvous_staging, &head, sizeof(head));
      std::memcpy(request->rendezvous_staging + sizeof(head), runs.data(),
                  runs.size() * sizeof(datatype::Run));
      payload = request->rendezvous_staging;
      payload_length = description;
      header.flags = kSenderLayoutInPayload;
    } else {
      // Too irregular to describe in one message, or pieces so small that
      // reading them one by one costs more than packing: pack it once
      // here, and the receiver reads the packed copy.
      request->rendezvous_staging = new std::byte[arguments.bytes];
      datatype::Pack(arguments.buffer, arguments.count, layout, 0,
                     request->rendezvous_staging,
                     static_cast<int64_t>(arguments.bytes));
      data = request->rendezvous_staging;
      layout = nullptr;
    }
  }
  std::byte* start;
  size_t length;
  SpanOf(data, arguments.count, layout, arguments.bytes, &start, &length);
  request->send_region = RegisterOrDie(*transport_, start, length, "send");
  request->rendezvous_data = data;
  request->pending_events = 1;  // kRendezvousDone; a split adds the write
  header.sender_address = reinterpret_cast<uint64_t>(data);
  header.remote_key = request->send_region.remote_key;
  SendDataLocked(request, header, payload, payload_length,
                 /*complete_when_sent=*/false);
}

namespace {

// Non-contiguous eager data is packed once, straight into the transport's
// buffer, from the send's arguments.
void PackSendArguments(const void* source, void* destination) {
  const auto& send = *static_cast<const SendArguments*>(source);
  datatype::Pack(send.buffer, send.count, send.layout, 0, destination,
                 static_cast<int64_t>(send.bytes));
}

vci::Outbox::Message OutboxMessage(const MessageHeader& header,
                                   const void* payload, size_t payload_length,
                                   const SendArguments* packed) {
  vci::Outbox::Message message;
  message.header = &header;
  message.header_length = HeaderBytes(header);
  if (packed != nullptr) {
    message.pack = PackSendArguments;
    message.pack_source = packed;
    message.packed_length = packed->bytes;
  } else {
    message.payload = payload;
    message.payload_length = payload_length;
  }
  return message;
}

}  // namespace

bool PointToPoint::TrySendLocked(int vci, net::PeerVci peer,
                                 const MessageHeader& header,
                                 const void* payload, size_t payload_length,
                                 const SendArguments* packed) {
  return vci_states_[vci].outbox.TrySend(
      *transport_, vci, peer,
      OutboxMessage(header, payload, payload_length, packed));
}

void PointToPoint::SendDataLocked(Request* request, const MessageHeader& header,
                                  const void* payload, size_t payload_length,
                                  bool complete_when_sent) {
  const int vci = request->send.vci;
  // Eager data of a non-contiguous send is packed from the request (a
  // rendezvous request's payload is its own description).
  const bool pack = header.type != MessageType::kRendezvousRequest &&
                    request->send.layout != nullptr;
  vci::Outbox::Message message = OutboxMessage(header, payload, payload_length,
                                               pack ? &request->send : nullptr);
  message.sender = this;
  message.word = reinterpret_cast<uint64_t>(request);
  message.flags = kSentData | (complete_when_sent ? kCompleteWhenSent : 0);
  if (vci_states_[vci].outbox.Send(*transport_, vci,
                                   request->send.destination(), message) &&
      complete_when_sent) {
    Complete(request);
  }
}

void PointToPoint::SendControlLocked(int vci, net::PeerVci peer,
                                     const MessageHeader& header) {
  vci_states_[vci].outbox.Send(*transport_, vci, peer,
                               OutboxMessage(header, nullptr, 0, nullptr));
}

void PointToPoint::SendOwedControlLocked(int vci, net::PeerVci peer,
                                         const MessageHeader& header,
                                         Request* request,
                                         bool finishes_event) {
  vci::Outbox::Message message = OutboxMessage(header, nullptr, 0, nullptr);
  message.sender = this;
  message.word = reinterpret_cast<uint64_t>(request);
  message.flags = kOwed | (finishes_event ? kOwedFinishesEvent : 0);
  if (vci_states_[vci].outbox.Send(*transport_, vci, peer, message)) {
    SettleOwedLocked(request, finishes_event);
  }
}

void PointToPoint::SettleOwedLocked(Request* request, bool finishes_event) {
  if (finishes_event) {
    FinishRendezvousEvent(request);
  } else {
    Complete(request);
  }
}

void PointToPoint::OnSentLocked(int /*vci*/, uint64_t word, uint32_t flags) {
  auto* request = reinterpret_cast<Request*>(word);
  if ((flags & kCompleteWhenSent) != 0) Complete(request);
  if ((flags & kOwed) != 0) {
    SettleOwedLocked(request, (flags & kOwedFinishesEvent) != 0);
  }
}

}  // namespace minimpi::p2p
