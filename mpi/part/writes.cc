// Posting writes: each run of units is one RDMA write with immediate on
// a channel VCI, queued when the transport answers retry and drained by
// progress; local completions, and applying the receiver's clear.
#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
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

int Partitioned::ChannelVci(const PartitionedSend& send, int64_t unit) const {
  if (send.plan.channels <= 1) return send.vci;
  const int64_t channel = send.reaction->GroupOf(unit) % send.plan.channels;
  return static_cast<int>((send.vci + channel) % send.num_vcis);
}

void Partitioned::PostRun(PartitionedSend& send, int64_t first, int64_t units,
                          int held_vci) {
  PendingWrite& write = send.writes[first];
  write.send = &send;
  write.first_unit = first;
  write.units = units;
  write.bytes_done = 0;
  write.next = nullptr;
  write.pieces_posted = 0;
  write.pieces_done = 0;
  write.all_posted = false;
  write.round = send.round.load(std::memory_order_relaxed);
  if (send.timed) {
    send.write_posted_ns[first] = NowNs();
    send.write_units[first] = units;
  }
  const int vci = ChannelVci(send, first);
  VciState& state = vci_states_[vci];
  if (vci == held_vci) {
    if (!state.refused.empty() || !PostWriteLocked(vci, write)) {
      state.refused.push_back(&write);
    }
    return;
  }
  auto& mutex = vcis_.mutex(vci);
  if (mutex.try_lock()) {
    DrainLocked(vci);
    if (!state.refused.empty() || !PostWriteLocked(vci, write)) {
      state.refused.push_back(&write);
    }
    mutex.unlock();
    return;
  }
  // The VCI is busy: hand the write to whoever progresses it next, and
  // wake a thread of ours that may have armed its doorbell and taken its
  // last look just before (the exchange is sequentially consistent, as the
  // arming is, so one of the two sees the other).
  PendingWrite* head = state.handed_over.load(std::memory_order_relaxed);
  do {
    write.next = head;
  } while (!state.handed_over.compare_exchange_weak(
      head, &write, std::memory_order_seq_cst, std::memory_order_relaxed));
  vcis_.WakeSleepers(vci);
}

bool Partitioned::PostWriteLocked(int vci, PendingWrite& write) {
  PartitionedSend& send = *write.send;
  if (send.backend == Backend::kPersist) {
    PostMessagesLocked(vci, write);
    return true;
  }
  const bool signal_after = send.backend == Backend::kRma;
  const int64_t first_partition = write.first_unit * send.per_unit;
  const int64_t end_partition = std::min(
      send.partitions, (write.first_unit + write.units) * send.per_unit);
  const uint64_t begin = uint64_t(first_partition) * send.partition_bytes;
  const uint64_t end = uint64_t(end_partition) * send.partition_bytes;
  const uint32_t immediate =
      EncodeImmediate(send.receiver_slot, write.first_unit, write.units);
  // rma: each piece's completion is the run's, which signals after the
  // last; native: the send's, which only counts.
  const uint64_t context =
      vci::TagContext(vci::Traffic::kPartitioned,
                      signal_after ? static_cast<CompletionTarget*>(&write)
                                   : static_cast<CompletionTarget*>(&send));
  const int max_segments = transport_.max_io_segments();
  net::IoSegment local[1024];
  datatype::Segment pieces[1024];
  do {
    const uint64_t offset = begin + uint64_t(write.bytes_done);
    int count = 0;
    uint64_t length = 0;
    if (send.layout == nullptr) {
      length = end - offset;
      local[0] = {reinterpret_cast<uint64_t>(send.data) + offset, length};
      count = 1;
    } else {
      datatype::SegmentCursor cursor(send.data, send.item_count, send.layout,
                                     int64_t(offset));
      count = cursor.Fill(pieces, std::min(max_segments, 1024),
                          int64_t(end - offset));
      for (int i = 0; i < count; ++i) {
        local[i] = {reinterpret_cast<uint64_t>(pieces[i].address),
                    size_t(pieces[i].length)};
        length += uint64_t(pieces[i].length);
      }
    }
    const bool last = offset + length == end;
    send.writes_posted.fetch_add(1, std::memory_order_relaxed);
    const net::PostResult result = transport_.RdmaWritev(
        vci, vci == send.vci ? send.peer : net::PeerVci{send.peer.rank, vci},
        local, count, send.region,
        net::RemoteBuffer{send.remote.address + offset, send.remote.remote_key},
        last && !signal_after ? &immediate : nullptr, context);
    if (result == net::PostResult::kRetry) {
      send.writes_posted.fetch_sub(1, std::memory_order_relaxed);
      return false;
    }
    ++write.pieces_posted;
    write.bytes_done += int64_t(length);
  } while (begin + uint64_t(write.bytes_done) < end);
  write.all_posted = true;
  send.units_posted.fetch_add(write.units, std::memory_order_acq_rel);
  return true;
}

void Partitioned::PostMessagesLocked(int vci, PendingWrite& write) {
  PartitionedSend& send = *write.send;
  const int64_t first_partition = write.first_unit * send.per_unit;
  const int64_t end_partition = std::min(
      send.partitions, (write.first_unit + write.units) * send.per_unit);
  const uint64_t begin = uint64_t(first_partition) * send.partition_bytes;
  const uint64_t end = uint64_t(end_partition) * send.partition_bytes;
  const std::byte* data = static_cast<const std::byte*>(send.data);
  if (send.layout != nullptr) {
    datatype::Pack(send.data, send.item_count, send.layout, int64_t(begin),
                   send.packed.get() + begin, int64_t(end - begin));
    data = send.packed.get();
  }
  const net::PeerVci peer =
      vci == send.vci ? send.peer : net::PeerVci{send.peer.rank, vci};
  const uint64_t room = transport_.max_message_size() - sizeof(MessageHeader);
  MessageHeader header{};
  header.type = MessageType::kPartitionedData;
  header.sender_request =
      EncodeImmediate(send.receiver_slot, write.first_unit, write.units);
  uint64_t offset = begin;
  do {  // at least one message, so a run of no bytes still arrives
    const uint64_t length = std::min(room, end - offset);
    header.sender_address = offset;
    header.length = length;
    vci::Outbox::Message message;
    message.header = &header;
    message.header_length = sizeof(header);
    message.payload = data + offset;
    message.payload_length = length;
    message.sender = this;
    message.word = reinterpret_cast<uint64_t>(&send);
    send.writes_posted.fetch_add(1, std::memory_order_relaxed);
    if (vcis_.outbox(vci).Send(transport_, vci, peer, message)) {
      // Copied out: the buffer's bytes are free again.
      send.writes_done.fetch_add(1, std::memory_order_relaxed);
    }
    offset += length;
  } while (offset < end);
  send.units_posted.fetch_add(write.units, std::memory_order_acq_rel);
  PieceDoneLocked(send, /*count=*/false);
}

void Partitioned::OnSentLocked(int, uint64_t word, uint32_t) {
  PieceDoneLocked(*reinterpret_cast<PartitionedSend*>(word), /*count=*/true);
}

bool Partitioned::DrainLocked(int vci) {
  VciState& state = vci_states_[vci];
  bool posted = false;
  while (!state.refused.empty()) {
    if (!PostWriteLocked(vci, *state.refused.front())) return posted;
    state.refused.pop_front();
    posted = true;
  }
  PendingWrite* list =
      state.handed_over.exchange(nullptr, std::memory_order_acquire);
  while (list != nullptr) {
    PendingWrite* next = list->next;
    if (!state.refused.empty() || !PostWriteLocked(vci, *list)) {
      state.refused.push_back(list);
    } else {
      posted = true;
    }
    list = next;
  }
  return posted;
}

bool Partitioned::MaySleepLocked(int vci) {
  const VciState& state = vci_states_[vci];
  if (!state.refused.empty() ||
      state.handed_over.load(std::memory_order_relaxed) != nullptr) {
    return false;
  }
  // An open deferred window closes by progress if nobody marks again.
  for (const PartitionedSend* send : state.progressed_sends) {
    if (!send->reaction->MaySleep() &&
        send->request->state.load(std::memory_order_acquire) ==
            RequestState::kActive) {
      return false;
    }
  }
  return true;
}

bool Partitioned::ProgressLocked(int vci) {
  VciState& state = vci_states_[vci];
  // Deferred windows that expired with nobody marking after them.
  if (!state.progressed_sends.empty()) {
    const int64_t now = NowNs();
    for (PartitionedSend* send : state.progressed_sends) {
      if (send->request->state.load(std::memory_order_acquire) ==
          RequestState::kActive) {
        send->reaction->OnProgress(now, vci);
      }
    }
  }
  if (state.refused.empty() &&
      state.handed_over.load(std::memory_order_relaxed) == nullptr) {
    return false;
  }
  return DrainLocked(vci);
}

void Partitioned::OnLocalDoneLocked(int vci, uint64_t context) {
  auto* target = static_cast<CompletionTarget*>(vci::UntagContext(context));
  if (!target->is_run) {
    PieceDoneLocked(*static_cast<PartitionedSend*>(target), /*count=*/true);
    return;
  }
  // rma: the run's data is in place once its last piece is done; then the
  // signal, on the connection the pieces took.
  auto& write = *static_cast<PendingWrite*>(target);
  PartitionedSend& send = *write.send;
  ++write.pieces_done;
  if (write.all_posted && write.pieces_done == write.pieces_posted) {
    MessageHeader signal{};
    signal.type = MessageType::kPartitionedArrived;
    signal.sender_request =
        EncodeImmediate(send.receiver_slot, write.first_unit, write.units);
    p2p_.SendControlLocked(
        vci, vci == send.vci ? send.peer : net::PeerVci{send.peer.rank, vci},
        signal);
  }
  PieceDoneLocked(send, /*count=*/true);
}

void Partitioned::PieceDoneLocked(PartitionedSend& send, bool count) {
  const int64_t done =
      count ? send.writes_done.fetch_add(1, std::memory_order_acq_rel) + 1
            : send.writes_done.load(std::memory_order_acquire);
  if (send.units_posted.load(std::memory_order_acquire) == send.units &&
      done == send.writes_posted.load(std::memory_order_acquire)) {
    CompleteSendRound(send);
  }
}

void Partitioned::CompleteSendRound(PartitionedSend& send) {
  send.request->state.store(RequestState::kComplete, std::memory_order_release);
}

void Partitioned::ApplyClearLocked(PartitionedSend& send, int held_vci) {
  send.reaction->OnCleared(held_vci);
}

void Partitioned::RunPoster::WindowOpened() {
  engine_.vcis_.WakeSleepers(send_.vci);
}

}  // namespace minimpi::part
