// Readiness: MPI_Pready marks a partition ready, lock-free; when the last
// partition of a unit is marked, the unit goes to the reaction the plan
// names (reactions.h), which decides when its transport partition is
// posted.
#include <atomic>
#include <cstdint>

#include "mpi/part/partitioned.h"
#include "mpi/part/partitioned_requests.h"

namespace minimpi::part {

using vci::Request;

namespace {

// A small number naming the calling thread (for the adaptive aggregator's
// partitions-per-thread count).
uint32_t ThreadTag() {
  static std::atomic<uint32_t> next{1};
  static thread_local const uint32_t tag = next.fetch_add(1);
  return tag;
}

}  // namespace

Partitioned::ReadyResult Partitioned::Ready(Request* request,
                                            int64_t partition) {
  auto* base = static_cast<PartitionedRequestBase*>(request->extension);
  const uint32_t round = base->round.load(std::memory_order_acquire);
  if (base->proc_null) return ReadyResult::kOk;
  auto& send = *static_cast<PartitionedSend*>(base);
  if (send.ready_round[partition].exchange(round, std::memory_order_acq_rel) ==
      round) {
    return ReadyResult::kTwice;
  }
  if (send.timed) {
    send.ready_ns[partition] = NowNs();
    send.ready_thread[partition] = ThreadTag();
  }
  if (send.size_mismatch) return ReadyResult::kOk;
  const int64_t unit = partition / send.per_unit;
  if (send.per_unit > 1 &&
      send.unit_remaining[unit].fetch_sub(1, std::memory_order_acq_rel) != 1) {
    return ReadyResult::kOk;
  }
  send.reaction->OnUnitReady(unit, /*held_vci=*/-1);
  // Until the receiver's clear for this round is applied, ready units only
  // wait; the clear is most likely in the queue already (both sides started
  // at about the same time), and a program that computes after its
  // MPI_Pready calls would apply it only at its next MPI call, so no data
  // would move during the computation (Dslash: last MPI_Pready to last
  // write 3-5 ms, the whole interior). One try-locked round applies it.
  if (!send.reaction->cleared()) vcis_.TryProgress(send.vci);
  return ReadyResult::kOk;
}

}  // namespace minimpi::part
