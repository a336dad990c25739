// Arrivals: a write with immediate names its units; the receiver counts
// bytes per partition, so MPI_Parrived and the round's completion need no
// lock.
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
#include "mpi/part/tool_variables.h"

namespace minimpi::part {

using p2p::MessageHeader;
using p2p::MessageType;
using vci::Request;
using vci::RequestState;

namespace {

// MPI_T: the run of `units` transport units from `first_unit` arrived
// whole, filling bytes [begin, end) of the receive.
void RaisePartitionArrived(tool::Event& event,
                           const PartitionedReceive& receive,
                           int64_t first_unit, int64_t units, uint64_t begin,
                           uint64_t end) {
  PartitionArrivedPayload payload{};
  payload.transport_partition = first_unit;
  if (receive.partition_bytes == 0 || begin >= end) {
    // No bytes: the sender's partitions the run names.
    payload.first_partition = first_unit * receive.send_per_unit;
    payload.last_partition =
        std::min(receive.send_partitions,
                 (first_unit + units) * receive.send_per_unit) -
        1;
  } else {
    payload.first_partition = int64_t(begin / receive.partition_bytes);
    payload.last_partition = int64_t((end - 1) / receive.partition_bytes);
  }
  payload.round = receive.round.load(std::memory_order_relaxed);
  payload.bytes = end - begin;
  event.Raise(receive.request, &payload);
}

// Raises partition_arrived when a tool listens: one relaxed load otherwise.
inline void NotePartitionArrived(const PartitionedReceive& receive,
                                 int64_t first_unit, int64_t units,
                                 uint64_t begin, uint64_t end) {
  tool::Event* event = partition_arrived_event.load(std::memory_order_acquire);
  if (event == nullptr || !event->active()) [[likely]]
    return;
  RaisePartitionArrived(*event, receive, first_unit, units, begin, end);
}

// The bytes [begin, end) of the run a write's immediate names.
std::pair<uint64_t, uint64_t> RunSpan(const PartitionedReceive& receive,
                                      int64_t first_unit, int64_t units) {
  const int64_t first_partition = first_unit * receive.send_per_unit;
  const int64_t end_partition = std::min(
      receive.send_partitions, (first_unit + units) * receive.send_per_unit);
  return {uint64_t(first_partition) * receive.send_partition_bytes,
          uint64_t(end_partition) * receive.send_partition_bytes};
}

}  // namespace

void Partitioned::OnWriteImmediateLocked(int, net::PeerVci, uint32_t immediate,
                                         size_t) {
  PartitionedReceive* receive =
      slots_[immediate >> (2 * kUnitBits)].load(std::memory_order_acquire);
  if (receive == nullptr) return;
  const int64_t first = (immediate >> kUnitBits) & kUnitMask;
  const int64_t units = int64_t(immediate & kUnitMask) + 1;
  if (receive->total_bytes == 0) {
    NotePartitionArrived(*receive, first, units, 0, 0);
    if (receive->units_left.fetch_sub(units, std::memory_order_acq_rel) ==
        units) {
      for (int64_t p = 0; p < receive->partitions; ++p) {
        receive->arrived_round[p].store(receive->round.load(),
                                        std::memory_order_release);
      }
      CompleteReceiveRound(*receive);
    }
    return;
  }
  const auto [begin, end] = RunSpan(*receive, first, units);
  NotePartitionArrived(*receive, first, units, begin, end);
  ArrivedBytes(*receive, begin, end);
}

void Partitioned::OnDataLocked(const MessageHeader& header,
                               const std::byte* payload, size_t length) {
  const auto immediate = uint32_t(header.sender_request);
  PartitionedReceive* receive =
      slots_[immediate >> (2 * kUnitBits)].load(std::memory_order_acquire);
  if (receive == nullptr) return;
  if (receive->total_bytes == 0) {
    OnWriteImmediateLocked(receive->vci, receive->sender_peer, immediate, 0);
    return;
  }
  const uint64_t offset = header.sender_address;
  if (offset + length > receive->total_bytes) [[unlikely]] {
    std::fprintf(stderr,
                 "minimpi: internal error: partitioned data past the end of "
                 "the receive buffer (rank %d)\n",
                 world_rank_);
    std::abort();
  }
  // Into place: the staging copy of a non-contiguous buffer (unpacked
  // partition by partition as they complete), else the buffer itself.
  std::byte* base = receive->staging != nullptr
                        ? receive->staging
                        : static_cast<std::byte*>(receive->data);
  std::memcpy(base + offset, payload, length);
  // A run longer than one message arrives in pieces, in order on its VCI:
  // the last piece completes it.
  const int64_t first = (immediate >> kUnitBits) & kUnitMask;
  const int64_t units = int64_t(immediate & kUnitMask) + 1;
  const auto [begin, end] = RunSpan(*receive, first, units);
  if (offset + length == end) {
    NotePartitionArrived(*receive, first, units, begin, end);
  }
  ArrivedBytes(*receive, offset, offset + length);
}

void Partitioned::ArrivedBytes(PartitionedReceive& receive, uint64_t begin,
                               uint64_t end) {
  const uint64_t each = receive.partition_bytes;
  if (each == 0 || begin >= end) return;
  for (uint64_t p = begin / each;
       p < uint64_t(receive.partitions) && p * each < end; ++p) {
    const uint64_t low = std::max(begin, p * each);
    const uint64_t high = std::min(end, (p + 1) * each);
    const int64_t bytes = int64_t(high - low);
    const int64_t before =
        receive.remaining_bytes[p].fetch_sub(bytes, std::memory_order_acq_rel);
    if (before == bytes) {
      PartitionArrived(receive, int64_t(p));
    } else if (before < bytes) [[unlikely]] {
      // Some bytes came twice: a broken aggregator, never the program.
      std::fprintf(stderr,
                   "minimpi: internal error: partitioned receive (rank %d) "
                   "got bytes of partition %llu twice in one round\n",
                   world_rank_, static_cast<unsigned long long>(p));
      std::abort();
    }
  }
}

void Partitioned::PartitionArrived(PartitionedReceive& receive,
                                   int64_t partition) {
  if (receive.staging != nullptr) {
    const int64_t each = int64_t(receive.partition_bytes);
    datatype::Unpack(receive.staging + partition * each, each, receive.data,
                     receive.item_count, receive.layout, partition * each);
  }
  receive.arrived_round[partition].store(
      receive.round.load(std::memory_order_relaxed), std::memory_order_release);
  if (receive.partitions_left.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    CompleteReceiveRound(receive);
  }
}

void Partitioned::CompleteReceiveRound(PartitionedReceive& receive) {
  Request* request = receive.request;
  request->status.source = receive.source_rank;
  request->status.tag = receive.tag;
  if (receive.size_mismatch) {
    request->status.error = vci::Error::kTruncated;
    request->status.bytes = 0;
    request->status.arrived_bytes = 0;
  } else {
    request->status.bytes = receive.total_bytes;
    request->status.arrived_bytes = receive.total_bytes;
  }
  request->state.store(RequestState::kComplete, std::memory_order_release);
}

bool Partitioned::Arrived(Request* request, int64_t partition) {
  auto* base = static_cast<PartitionedRequestBase*>(request->extension);
  if (base->proc_null || base->partitions == 0) return true;
  auto& receive = *static_cast<PartitionedReceive*>(base);
  const uint32_t round = receive.round.load(std::memory_order_acquire);
  auto arrived = [&] {
    return receive.arrived_round[partition].load(std::memory_order_acquire) ==
               round ||
           p2p::PointToPoint::IsComplete(request);
  };
  if (arrived()) return true;
  // A loop that only calls MPI_Parrived must see the data arrive: progress
  // the request's VCI, and now and then every VCI (writes may come on
  // another channel).
  static thread_local unsigned calls = 0;
  vcis_.TryProgress(receive.vci);
  if (++calls % 8 == 0) vcis_.ProgressBeyond(receive.vci);
  if (arrived()) return true;
  // Nothing yet, and the caller will most likely ask again at once: where
  // others want this core, let them run (the rank that is to send it may
  // be one of them).
  vcis_.IdleAfterFruitlessPoll(receive.vci, &receive.arrived_round[partition],
                               round, arrived);
  return false;
}

}  // namespace minimpi::part
