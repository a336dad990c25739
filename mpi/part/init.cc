// The init handshake: MPI_Psend_init and MPI_Precv_init describe and
// register their buffers; the receiver matches a send and answers each
// round with a clear that carries where to write (OnControlLocked).
#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mpi/datatype/pack.h"
#include "mpi/part/loopback_probe.h"
#include "mpi/part/model/loggp.h"
#include "mpi/part/partitioned.h"
#include "mpi/part/partitioned_requests.h"

namespace minimpi::part {

using p2p::MessageHeader;
using p2p::MessageType;
using vci::Request;
using vci::RequestState;

namespace {

void Describe(PartitionedRequestBase& base, PartitionedArguments& arguments) {
  base.proc_null = arguments.peer_world_rank < 0;
  base.peer = {arguments.peer_world_rank, arguments.peer_vci};
  base.vci = arguments.vci;
  base.context = arguments.context;
  base.source_rank = arguments.source_rank;
  base.tag = arguments.tag;
  base.partitions = arguments.partitions;
  base.total_bytes = arguments.total_bytes;
  base.partition_bytes =
      arguments.partitions > 0
          ? arguments.total_bytes / static_cast<size_t>(arguments.partitions)
          : 0;
  base.data = arguments.data;
  base.layout = arguments.layout;
  base.item_count = arguments.item_count;
  base.layout_hold = std::move(arguments.layout_hold);
}

// The memory a buffer's data touches, for registration.
std::pair<void*, size_t> Span(const PartitionedRequestBase& base) {
  if (base.layout == nullptr) return {base.data, base.total_bytes};
  const datatype::Layout& layout = *base.layout;
  if (base.item_count == 0 || layout.size() == 0) return {base.data, 0};
  const auto [low, high] = layout.TouchedBytes(base.item_count);
  return {static_cast<char*>(base.data) + low, size_t(high - low)};
}

}  // namespace

absl::StatusOr<Request*> Partitioned::NewSend(PartitionedArguments arguments) {
  absl::StatusOr<Backend> backend = BackendByName(
      arguments.backend.empty() ? settings_.part_backend : arguments.backend);
  if (!backend.ok()) return backend.status();
  AggregatorConfig config = config_;
  const std::string& name = arguments.aggregator.empty()
                                ? settings_.part_aggregator
                                : arguments.aggregator;
  if (name == "ploggp" || name == "timer" || name == "adaptive") {
    config.loggp = LogGP();
  }
  config.forced_transport_partitions = arguments.forced_transport_partitions;
  config.forced_channels = arguments.forced_channels;
  absl::StatusOr<std::unique_ptr<Aggregator>> aggregator =
      MakeAggregator(name, config);
  if (!aggregator.ok()) return aggregator.status();

  auto send = std::make_unique<PartitionedSend>();
  send->is_send = true;
  Describe(*send, arguments);
  send->aggregator = *std::move(aggregator);
  // An endpoint's request stays on its endpoint's VCI: channels spread
  // writes over the VCIs communicators share, never over other endpoints'.
  send->num_vcis = vcis_.IsEndpointVci(send->vci) ? 1 : vcis_.num_vcis();
  send->per_unit = PartitionsPerUnit(send->partitions);
  send->units = send->partitions > 0 ? UnitCount(send->partitions) : 0;
  send->input.send_partitions = send->partitions;
  send->input.receive_partitions = send->partitions;  // until it is known
  send->input.units = send->units;
  send->input.partition_bytes = send->partition_bytes;
  send->input.total_bytes = send->total_bytes;
  const int64_t n = send->partitions;
  send->ready_round.reset(new std::atomic<uint32_t>[std::max<int64_t>(n, 1)]);
  for (int64_t p = 0; p < n; ++p) send->ready_round[p].store(0);
  if (send->per_unit > 1) {
    send->unit_remaining.reset(new std::atomic<int32_t>[send->units]);
  }
  const int64_t units = std::max<int64_t>(send->units, 1);
  send->writes.reset(new PendingWrite[units]);
  send->timed = settings_.part_stats || !settings_.part_profile.empty() ||
                send->aggregator->wants_arrivals();
  if (send->timed) {
    send->ready_ns.reset(new int64_t[std::max<int64_t>(n, 1)]());
    send->ready_thread.reset(new uint32_t[std::max<int64_t>(n, 1)]());
    send->write_posted_ns.reset(new int64_t[units]());
    send->write_units.reset(new int64_t[units]());
  }
  if (send->units > 0) {
    send->plan = send->aggregator->Initial(send->input);
    send->plan.channels =
        std::max(1, std::min(send->plan.channels, send->num_vcis));
  }
  send->backend = *backend;
  if (send->backend == Backend::kAuto) {
    // By the user's partitions, the smallest transport partition any plan
    // of any aggregator may make (adaptive ones regroup them each round).
    send->backend = ChooseBackend(auto_rule_, arguments.peer_on_node,
                                  int64_t(send->partition_bytes));
  }
  if (send->backend == Backend::kPersist && send->layout != nullptr) {
    send->packed.reset(new std::byte[std::max<size_t>(send->total_bytes, 1)]);
  }
  // The first round's reaction, before any progress can look at it.
  ChooseReaction(*send);
  send->reaction->StartRound(send->plan);
  if (!send->proc_null) {
    auto [address, length] = Span(*send);
    absl::StatusOr<net::MemoryRegion> region =
        transport_.RegisterMemory(address, length);
    if (!region.ok()) return region.status();
    send->region = *region;
    send->registered = true;
  }

  PartitionedSend* raw = send.get();
  Request* request = p2p_.NewPartitionedRequest(arguments.vci, raw);
  request->owner = arguments.owner;
  raw->request = request;
  if (raw->proc_null) {
    send.release();
    return request;
  }
  raw->id = SendKey(*request);
  vcis_.AddUser(vci::Traffic::kPartitioned);
  if (raw->aggregator->wants_arrivals()) {
    // Its plan may use deferred windows: progress checks them.
    std::lock_guard lock(vcis_.mutex(raw->vci));
    vci_states_[raw->vci].progressed_sends.push_back(raw);
  }
  MessageHeader init{};
  init.type = MessageType::kPartitionedInit;
  init.context = raw->context;
  init.source = raw->source_rank;
  init.tag = raw->tag;
  init.length = raw->total_bytes;
  init.sender_request = raw->id;
  init.sender_address = static_cast<uint64_t>(raw->partitions);
  {
    std::lock_guard lock(vcis_.mutex(raw->vci));
    p2p_.SendControlLocked(raw->vci, raw->peer, init);
  }
  if (!settings_.part_profile.empty()) {
    ProfileLine(absl::StrFormat(
        "request %d send partitions %d bytes %d aggregator %s "
        "transport_partitions %d",
        raw->id, raw->partitions, raw->total_bytes, raw->aggregator->name(),
        raw->plan.transport_partitions));
  }
  send.release();
  return request;
}

absl::StatusOr<Request*> Partitioned::NewReceive(
    PartitionedArguments arguments) {
  auto receive = std::make_unique<PartitionedReceive>();
  Describe(*receive, arguments);
  const int64_t n = std::max<int64_t>(receive->partitions, 1);
  receive->remaining_bytes.reset(new std::atomic<int64_t>[n]);
  receive->arrived_round.reset(new std::atomic<uint32_t>[n]);
  for (int64_t p = 0; p < n; ++p) receive->arrived_round[p].store(0);
  PartitionedReceive* raw = receive.get();
  if (!raw->proc_null) {
    void* landing = raw->data;
    size_t length = raw->total_bytes;
    if (raw->layout != nullptr) {
      // The sender writes the packed stream; each partition is unpacked
      // into place as it completes.
      raw->staging = new std::byte[std::max<size_t>(length, 1)];
      landing = raw->staging;
    }
    absl::StatusOr<net::MemoryRegion> region =
        transport_.RegisterMemory(landing, length);
    if (!region.ok()) {
      delete[] raw->staging;
      return region.status();
    }
    raw->region = *region;
    raw->registered = true;
    std::lock_guard<std::mutex> lock(control_mutex_);
    int slot = -1;
    for (int i = 0; i < kSlots; ++i) {
      const int candidate = (next_slot_ + i) % kSlots;
      if (slots_[candidate].load(std::memory_order_relaxed) == nullptr) {
        slot = candidate;
        break;
      }
    }
    if (slot < 0) {
      transport_.DeregisterMemory(raw->region);
      delete[] raw->staging;
      return absl::ResourceExhaustedError(absl::StrCat(
          "more than ", kSlots,
          " partitioned receive requests at once (free some first)"));
    }
    next_slot_ = (slot + 1) % kSlots;
    raw->slot = static_cast<uint32_t>(slot);
    slots_[slot].store(raw, std::memory_order_release);
  }
  Request* request = p2p_.NewPartitionedRequest(arguments.vci, raw);
  request->owner = arguments.owner;
  raw->request = request;
  receive.release();
  if (raw->proc_null) return request;

  // Match an init that arrived first, else wait in the posted queue.
  std::lock_guard lock(vcis_.mutex(raw->vci));
  VciState& state = vci_states_[raw->vci];
  for (auto it = state.unexpected.begin(); it != state.unexpected.end(); ++it) {
    if (it->context == raw->context && it->source == raw->source_rank &&
        it->tag == raw->tag) {
      const UnexpectedInit init = *it;
      state.unexpected.erase(it);
      BindLocked(*raw, init);
      return request;
    }
  }
  state.posted.push_back(raw);
  return request;
}

void Partitioned::BindLocked(PartitionedReceive& receive,
                             const UnexpectedInit& init) {
  receive.matched = true;
  receive.sender_peer = init.peer;
  receive.sender_id = init.sender_id;
  receive.send_partitions = init.partitions;
  receive.send_partition_bytes =
      init.partitions > 0 ? init.total_bytes / uint64_t(init.partitions) : 0;
  receive.send_per_unit = PartitionsPerUnit(init.partitions);
  receive.send_units = init.partitions > 0 ? UnitCount(init.partitions) : 0;
  receive.size_mismatch.store(init.total_bytes != receive.total_bytes);
  // A receive that was started before its sender showed up clears now.
  if (receive.request->state.load(std::memory_order_acquire) ==
      RequestState::kActive) {
    receive.units_left.store(receive.send_units, std::memory_order_release);
    if (receive.size_mismatch) {
      CompleteReceiveRound(receive);
      SendClearLocked(receive);  // tells the sender, which fails too
    } else {
      SendClearLocked(receive);
    }
  }
}

void Partitioned::SendClearLocked(PartitionedReceive& receive) {
  MessageHeader clear{};
  clear.type = MessageType::kPartitionedClear;
  clear.sender_request = receive.sender_id;
  clear.receiver_request = receive.slot;
  clear.sender_address = reinterpret_cast<uint64_t>(
      receive.staging != nullptr ? static_cast<void*>(receive.staging)
                                 : receive.data);
  clear.remote_key = receive.region.remote_key;
  clear.length = receive.total_bytes;
  clear.split_offset = static_cast<uint64_t>(receive.partitions);
  clear.flags = receive.size_mismatch.load() ? kSizeMismatch : 0;
  p2p_.SendControlLocked(receive.vci, receive.sender_peer, clear);
}

void Partitioned::OnMessageLocked(int vci, net::PeerVci peer,
                                  const std::byte* data, size_t length) {
  // Control messages carry the whole header (p2p::SendControlLocked).
  if (length < sizeof(p2p::MessageHeader)) {
    std::fprintf(stderr, "minimpi: a partitioned control message too short\n");
    std::abort();
  }
  p2p::MessageHeader header;
  std::memcpy(&header, data, sizeof(header));
  if (header.type == MessageType::kPartitionedData) {
    OnDataLocked(header, data + sizeof(header), length - sizeof(header));
    return;
  }
  if (header.type == MessageType::kPartitionedArrived) {
    OnWriteImmediateLocked(vci, peer, uint32_t(header.sender_request), 0);
    return;
  }
  OnControlLocked(vci, peer, header);
}

void Partitioned::OnControlLocked(int vci, net::PeerVci peer,
                                  const MessageHeader& header) {
  VciState& state = vci_states_[vci];
  switch (header.type) {
    case MessageType::kPartitionedInit: {
      const UnexpectedInit init{peer,
                                header.context,
                                header.source,
                                header.tag,
                                header.sender_request,
                                static_cast<int64_t>(header.sender_address),
                                header.length};
      for (auto it = state.posted.begin(); it != state.posted.end(); ++it) {
        PartitionedReceive& receive = **it;
        if (receive.context == init.context &&
            receive.source_rank == init.source && receive.tag == init.tag) {
          state.posted.erase(it);
          BindLocked(receive, init);
          return;
        }
      }
      state.unexpected.push_back(init);
      return;
    }
    case MessageType::kPartitionedClear: {
      PartitionedSend* send = FindSend(header.sender_request);
      if (send == nullptr) return;  // freed meanwhile (erroneous program)
      if (!send->receiver_known) {
        send->receiver_known = true;
        send->receiver_slot = static_cast<uint32_t>(header.receiver_request);
        send->remote = {header.sender_address, header.remote_key};
        send->size_mismatch.store((header.flags & kSizeMismatch) != 0);
        const int64_t receive_partitions =
            static_cast<int64_t>(header.split_offset);
        if (receive_partitions != send->input.receive_partitions &&
            send->units > 0) {
          // The plan of the first round assumed as many receive partitions
          // as send partitions (the size scheme depends on them).
          send->input.receive_partitions = receive_partitions;
          send->next_plan = send->aggregator->Initial(send->input);
          send->plan_changed = true;
        }
      }
      const RequestState current =
          send->request->state.load(std::memory_order_acquire);
      if (send->size_mismatch) {
        if (current == RequestState::kActive) {
          send->request->status.error = vci::Error::kTruncated;
          CompleteSendRound(*send);
        }
        return;
      }
      // Round k's clear applies to the sender's round k: if the sender has
      // not started it yet (or is still in round k-1), it waits.
      if (current == RequestState::kActive && !send->reaction->cleared()) {
        ApplyClearLocked(*send, vci);
      } else {
        ++send->clears_waiting;
      }
      return;
    }
    case MessageType::kPartitionedFree: {
      for (auto it = state.unexpected.begin(); it != state.unexpected.end();
           ++it) {
        if (it->peer == peer && it->sender_id == header.sender_request) {
          state.unexpected.erase(it);
          return;
        }
      }
      // Matched already: a receive bound to a send that was freed without
      // ever starting goes back to the front of the queue, to match the
      // next init instead.
      if ((header.flags & 1) == 0) return;  // it had started: nothing to do
      std::lock_guard<std::mutex> lock(control_mutex_);
      for (auto& slot : slots_) {
        PartitionedReceive* receive = slot.load(std::memory_order_relaxed);
        if (receive != nullptr && receive->matched &&
            receive->sender_peer == peer &&
            receive->sender_id == header.sender_request &&
            receive->vci == vci) {
          receive->matched = false;
          state.posted.push_front(receive);
          return;
        }
      }
      return;
    }
    default:
      return;
  }
}

}  // namespace minimpi::part
