// The rendezvous protocol's receive side: single-copy reads (or the
// sender's writes) of a large message, staged copies, and gathered reads
// for non-contiguous data.
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

void PointToPoint::StartRendezvousReadLocked(Request* request,
                                             net::PeerVci peer,
                                             const MessageHeader& header,
                                             const std::byte* payload,
                                             size_t payload_length) {
  size_t delivered = std::min<size_t>(header.length, request->capacity);
  FillStatus(request, header, delivered);
  request->rendezvous_peer = peer;
  request->rendezvous_sender_request = header.sender_request;
  if (delivered == 0) {
    SendOwedControlLocked(
        request->vci, peer,
        MakeControl(MessageType::kRendezvousDone, header.sender_request),
        request, /*finishes_event=*/false);
    return;
  }
  if ((header.flags & kSenderLayoutInPayload) != 0 ||
      request->receive_layout != nullptr) {
    StartGatheredReadLocked(request, peer, header, payload, payload_length,
                            delivered);
    return;
  }
  auto region = transport_->RegisterMemory(request->receive_buffer, delivered);
  if (!region.ok()) {
    std::fprintf(stderr, "minimpi: cannot register a receive buffer: %s\n",
                 std::string(region.status().message()).c_str());
    std::abort();
  }
  request->receive_region = *region;
  size_t read_length = delivered;
  request->pending_events = 1;  // our read
  // Inside a node both CPUs copy, so both take half; over a network one
  // link carries everything.
  const bool cpus_copy = transport_->posting_cpu_copies_to(peer.rank);
  if (split_min_ > 0 && delivered >= split_min_ && cpus_copy) {
    // Page-aligned split: the sender's half starts on a page boundary.
    constexpr size_t kPage = 4096;
    read_length = std::max(kPage, (delivered / 2) & ~(kPage - 1));
    request->pending_events = 2;  // our read and the sender's write
    MessageHeader clear{};
    clear.type = MessageType::kClearToSend;
    clear.length = delivered;
    clear.sender_request = header.sender_request;
    clear.receiver_request = reinterpret_cast<uint64_t>(request);
    clear.sender_address = reinterpret_cast<uint64_t>(request->receive_buffer);
    clear.remote_key = region->remote_key;
    clear.split_offset = read_length;
    // Before our own read, so the sender copies while we do.
    SendControlLocked(request->vci, peer, clear);
  }
  // Over a network, a large read goes as pieces posted at once
  // (Settings::network_read_piece), answered back to back.
  const size_t piece = cpus_copy || network_read_piece_ == 0
                           ? read_length
                           : std::min(read_length, network_read_piece_);
  request->reads_left = static_cast<int>((read_length + piece - 1) / piece);
  request->pending_events += request->reads_left - 1;
  for (size_t offset = 0; offset < read_length; offset += piece) {
    PostCopyLocked(
        request->vci,
        {request, peer, /*write=*/false,
         static_cast<std::byte*>(request->receive_buffer) + offset,
         &request->receive_region,
         net::RemoteBuffer{header.sender_address + offset, header.remote_key},
         std::min(piece, read_length - offset)});
  }
}

void PointToPoint::StartRendezvousWriteLocked(
    int vci, net::PeerVci peer, const MessageHeader& clear_to_send) {
  auto* request = reinterpret_cast<Request*>(clear_to_send.sender_request);
  request->receiver_request = clear_to_send.receiver_request;
  ++request->pending_events;  // our write
  const uint64_t offset = clear_to_send.split_offset;
  // The data the receiver was told about: the send buffer, or the packed
  // staging copy of a non-contiguous one.
  PostCopyLocked(
      vci,
      {request, peer, /*write=*/true,
       const_cast<std::byte*>(
           static_cast<const std::byte*>(request->rendezvous_data) + offset),
       &request->send_region,
       net::RemoteBuffer{clear_to_send.sender_address + offset,
                         clear_to_send.remote_key},
       clear_to_send.length - offset});
}

net::PostResult PointToPoint::TryCopyLocked(int vci,
                                            const VciState::PendingCopy& copy) {
  const uint64_t context = reinterpret_cast<uint64_t>(copy.request);
  return copy.write
             ? transport_->RdmaWrite(vci, copy.peer, copy.local, *copy.region,
                                     copy.remote, copy.length, context)
             : transport_->RdmaRead(vci, copy.peer, copy.local, *copy.region,
                                    copy.remote, copy.length, context);
}

void PointToPoint::PostCopyLocked(int vci, const VciState::PendingCopy& copy) {
  VciState& state = vci_states_[vci];
  // Keep order behind copies already waiting for resources.
  if (state.pending_copies.empty() &&
      TryCopyLocked(vci, copy) == net::PostResult::kOk) {
    return;
  }
  state.pending_copies.push_back(copy);
}

void PointToPoint::FinishRendezvousEvent(Request* request) {
  if (--request->pending_events > 0) return;
  if (request->kind == RequestKind::kSend) {
    transport_->DeregisterMemory(request->send_region);
    delete[] request->rendezvous_staging;
    request->rendezvous_staging = nullptr;
  } else {
    transport_->DeregisterMemory(request->receive_region);
  }
  Complete(request);
}

// --- Gathered reads (non-contiguous rendezvous) ----------------------------

void PointToPoint::StartGatheredReadLocked(Request* request, net::PeerVci peer,
                                           const MessageHeader& header,
                                           const std::byte* payload,
                                           size_t payload_length,
                                           size_t delivered) {
  datatype::LayoutRef sender_layout;
  int64_t sender_count = static_cast<int64_t>(header.length);
  if ((header.flags & kSenderLayoutInPayload) != 0) {
    SenderLayout head;
    if (payload_length < sizeof(head)) {
      std::fprintf(stderr, "minimpi: corrupt rendezvous request\n");
      std::abort();
    }
    std::memcpy(&head, payload, sizeof(head));
    std::vector<datatype::Run> runs(head.num_runs);
    if (payload_length < sizeof(head) + runs.size() * sizeof(datatype::Run)) {
      std::fprintf(stderr, "minimpi: corrupt rendezvous layout\n");
      std::abort();
    }
    std::memcpy(runs.data(), payload + sizeof(head),
                runs.size() * sizeof(datatype::Run));
    sender_layout = datatype::RunsOnly(runs, head.extent);
    sender_count = head.count;
  }
  // Small receive pieces: read into a contiguous staging copy and unpack
  // it when the read is over (FinishGatheredReadLocked).
  std::byte* staging = nullptr;
  if (request->receive_layout != nullptr &&
      HasSmallPieces(*request->receive_layout, gather_min_piece_)) {
    staging = new std::byte[delivered];
  }
  std::byte* start;
  size_t length;
  if (staging != nullptr) {
    start = staging;
    length = delivered;
  } else {
    SpanOf(request->receive_buffer, request->receive_count,
           request->receive_layout, delivered, &start, &length);
  }
  request->receive_region =
      RegisterOrDie(*transport_, start, length, "receive");
  // A cursor over contiguous memory counts bytes.
  const int64_t receive_count = staging != nullptr
                                    ? static_cast<int64_t>(delivered)
                                : request->receive_layout != nullptr
                                    ? request->receive_count
                                    : static_cast<int64_t>(request->capacity);
  request->gathered_read = new GatheredRead(
      staging != nullptr ? staging : request->receive_buffer, receive_count,
      staging != nullptr ? nullptr : request->receive_layout,
      header.sender_address, sender_count, std::move(sender_layout), delivered);
  request->gathered_read->staging = staging;
  request->rendezvous_remote_key = header.remote_key;
  request->pending_events = 1;  // the gathered read is over
  if (!PumpGatheredReadLocked(request)) {
    request->gathered_read->stalled = true;
    vci_states_[request->vci].stalled_reads.push_back(request);
  }
}

bool PointToPoint::PumpGatheredReadLocked(Request* request) {
  GatheredRead& read = *request->gathered_read;
  VciState& state = vci_states_[request->vci];
  const int max_segments = std::min(transport_->max_io_segments(), 1024);
  state.local_segments.resize(max_segments);
  state.remote_segments.resize(max_segments);
  state.local_io.resize(max_segments);
  state.remote_io.resize(max_segments);
  // One post moves at most this much, so a huge message is several posts
  // whose completions keep progress moving.
  constexpr int64_t kBytesPerPost = int64_t{16} << 20;
  while (read.remaining > 0) {
    const int64_t local_position = read.local.position();
    const int64_t remote_position = read.remote.position();
    const datatype::SegmentPairing pairing = datatype::PairSegments(
        read.local, read.remote, state.local_segments.data(),
        state.remote_segments.data(), max_segments,
        std::min(read.remaining, kBytesPerPost));
    if (pairing.bytes == 0) {
      // Both sides hold at least `remaining` more bytes by construction.
      std::fprintf(stderr,
                   "minimpi: internal error: a gathered read ran out of "
                   "segments with %lld bytes to go\n",
                   static_cast<long long>(read.remaining));
      std::abort();
    }
    for (int i = 0; i < pairing.local_segments; ++i) {
      state.local_io[i] = {
          reinterpret_cast<uint64_t>(state.local_segments[i].address),
          static_cast<size_t>(state.local_segments[i].length)};
    }
    for (int i = 0; i < pairing.remote_segments; ++i) {
      state.remote_io[i] = {
          reinterpret_cast<uint64_t>(state.remote_segments[i].address),
          static_cast<size_t>(state.remote_segments[i].length)};
    }
    const net::PostResult result = transport_->RdmaReadv(
        request->vci, request->rendezvous_peer, state.local_io.data(),
        pairing.local_segments, request->receive_region, state.remote_io.data(),
        pairing.remote_segments, request->rendezvous_remote_key,
        reinterpret_cast<uint64_t>(request));
    if (result == net::PostResult::kRetry) {
      // Not posted: rewind, and let progress try again.
      read.local.Seek(local_position);
      read.remote.Seek(remote_position);
      return false;
    }
    read.remaining -= pairing.bytes;
    ++read.outstanding;
  }
  return true;
}

void PointToPoint::FinishGatheredReadLocked(int vci, Request* request) {
  GatheredRead& read = *request->gathered_read;
  --read.outstanding;
  if (read.remaining > 0 || read.outstanding > 0) return;
  if (read.staging != nullptr) {
    datatype::Unpack(read.staging, static_cast<int64_t>(request->status.bytes),
                     request->receive_buffer, request->receive_count,
                     request->receive_layout, 0);
    // The staging copy was the registered region: give it back before the
    // memory goes (FinishRendezvousEvent then has nothing left to release).
    transport_->DeregisterMemory(request->receive_region);
    request->receive_region = {};
    delete[] read.staging;
  }
  delete request->gathered_read;
  request->gathered_read = nullptr;
  SendOwedControlLocked(vci, request->rendezvous_peer,
                        MakeControl(MessageType::kRendezvousDone,
                                    request->rendezvous_sender_request),
                        request, /*finishes_event=*/true);
}

}  // namespace minimpi::p2p
