// Sending: eager and synchronous sends, the rendezvous request (what a
// large send registers and announces), and the outgoing backlog a VCI
// keeps when the transport answers retry.
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
  if (arguments.bytes <= eager_max_ &&
      arguments.mode != SendMode::kSynchronous) {
    // The common small message: into the peer's ring and done; no request.
    Lane& vci = LaneAt(arguments.vci);
    Request* request;
    {
      std::lock_guard<std::mutex> lock(vci.mutex);
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
  Lane& vci = LaneAt(arguments.vci);
  std::lock_guard<std::mutex> lock(vci.mutex);
  Request* request = NewSendLocked(arguments, /*persistent=*/false);
  PostSendLocked(request);
  return request;
}

Request* PointToPoint::NewPersistentSend(const SendArguments& arguments) {
  Lane& vci = LaneAt(arguments.vci);
  std::lock_guard<std::mutex> lock(vci.mutex);
  return NewSendLocked(arguments, /*persistent=*/true);
}

Request* PointToPoint::NewSendLocked(const SendArguments& arguments,
                                     bool persistent) {
  Request* request = LaneAt(arguments.vci).requests.Allocate();
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
  if (arguments.bytes <= eager_max_) {
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

bool PointToPoint::TrySendLocked(int vci, net::PeerVci peer,
                                 const MessageHeader& header,
                                 const void* payload, size_t payload_length,
                                 const SendArguments* packed) {
  const Lane& v = LaneAt(vci);
  if (!v.backlogged_peers.empty()) [[unlikely]] {
    // Behind an earlier message to the same VCI: keep the order.
    const auto queue = v.outgoing.find(ConnectionKey(peer));
    if (queue != v.outgoing.end() && queue->second.head != nullptr) {
      return false;
    }
  }
  if (packed != nullptr) {
    // Non-contiguous eager data is packed once, straight into the
    // transport's buffer.
    return transport_->SendPacked(vci, peer, &header, HeaderBytes(header),
                                  packed->bytes, [packed](void* destination) {
                                    datatype::Pack(
                                        packed->buffer, packed->count,
                                        packed->layout, 0, destination,
                                        static_cast<int64_t>(packed->bytes));
                                  }) == net::PostResult::kOk;
  }
  return transport_->Send(vci, peer, &header, HeaderBytes(header), payload,
                          payload_length) == net::PostResult::kOk;
}

void PointToPoint::EnqueueLocked(int vci, net::PeerVci peer,
                                 const Lane::OutgoingMessage& message) {
  Lane& v = LaneAt(vci);
  Lane::OutgoingMessage* entry;
  if (!v.spare_outgoing.empty()) {
    entry = v.spare_outgoing.back();
    v.spare_outgoing.pop_back();
  } else {
    entry = new Lane::OutgoingMessage();
  }
  *entry = message;
  entry->next = nullptr;
  Lane::OutgoingQueue& queue = v.outgoing[ConnectionKey(peer)];
  if (queue.head == nullptr) {
    queue.head = entry;
    v.backlogged_peers.push_back(peer);
  } else {
    queue.tail->next = entry;
  }
  queue.tail = entry;
}

void PointToPoint::SendDataLocked(Request* request, const MessageHeader& header,
                                  const void* payload, size_t payload_length,
                                  bool complete_when_sent) {
  const int vci = request->send.vci;
  const net::PeerVci peer = request->send.destination();
  // Eager data of a non-contiguous send is packed from the request (a
  // rendezvous request's payload is its own description).
  const bool pack = header.type != MessageType::kRendezvousRequest &&
                    request->send.layout != nullptr;
  if (TrySendLocked(vci, peer, header, payload, payload_length,
                    pack ? &request->send : nullptr)) {
    if (complete_when_sent) Complete(request);
    return;
  }
  Lane::OutgoingMessage message;
  message.header = header;
  message.request = request;
  message.payload = payload;
  message.payload_length = payload_length;
  message.pack_from_request = pack;
  message.complete_when_sent = complete_when_sent;
  EnqueueLocked(vci, peer, message);
}

void PointToPoint::SendControlLocked(int vci, net::PeerVci peer,
                                     const MessageHeader& header) {
  if (TrySendLocked(vci, peer, header, nullptr, 0)) return;
  Lane::OutgoingMessage message;
  message.header = header;
  EnqueueLocked(vci, peer, message);
}

void PointToPoint::SendOwedControlLocked(int vci, net::PeerVci peer,
                                         const MessageHeader& header,
                                         Request* request,
                                         bool finishes_event) {
  if (TrySendLocked(vci, peer, header, nullptr, 0)) {
    SettleOwedLocked(request, finishes_event);
    return;
  }
  Lane::OutgoingMessage message;
  message.header = header;
  message.owed_by = request;
  message.owed_finishes_event = finishes_event;
  EnqueueLocked(vci, peer, message);
}

void PointToPoint::SettleOwedLocked(Request* request, bool finishes_event) {
  if (finishes_event) {
    FinishRendezvousEvent(request);
  } else {
    Complete(request);
  }
}

bool PointToPoint::RetryOutgoingLocked(int vci) {
  Lane& v = LaneAt(vci);
  bool progressed = false;
  for (size_t i = 0; i < v.backlogged_peers.size();) {
    const net::PeerVci peer = v.backlogged_peers[i];
    Lane::OutgoingQueue& queue = v.outgoing[ConnectionKey(peer)];
    while (Lane::OutgoingMessage* message = queue.head) {
      const SendArguments* packed =
          message->pack_from_request ? &message->request->send : nullptr;
      // Not TrySendLocked: this message is the head of the backlog.
      const bool sent =
          packed != nullptr
              ? transport_->SendPacked(
                    vci, peer, &message->header, HeaderBytes(message->header),
                    packed->bytes,
                    [packed](void* destination) {
                      datatype::Pack(packed->buffer, packed->count,
                                     packed->layout, 0, destination,
                                     static_cast<int64_t>(packed->bytes));
                    }) == net::PostResult::kOk
              : transport_->Send(vci, peer, &message->header,
                                 HeaderBytes(message->header), message->payload,
                                 message->payload_length) ==
                    net::PostResult::kOk;
      if (!sent) break;
      progressed = true;
      queue.head = message->next;
      Request* request = message->request;
      const bool complete = message->complete_when_sent;
      Request* owed_by = message->owed_by;
      const bool finishes_event = message->owed_finishes_event;
      v.spare_outgoing.push_back(message);
      if (complete) Complete(request);
      if (owed_by != nullptr) SettleOwedLocked(owed_by, finishes_event);
    }
    if (queue.head == nullptr) {
      queue.tail = nullptr;
      v.backlogged_peers[i] = v.backlogged_peers.back();
      v.backlogged_peers.pop_back();
    } else {
      ++i;
    }
  }
  return progressed;
}

}  // namespace minimpi::p2p
