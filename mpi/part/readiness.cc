// Readiness: MPI_Pready marks partitions ready, lock-free; when a
// transport partition (a group of the aggregator's plan) is complete, or
// when the timer aggregators' wait for it runs out, one thread claims it
// and posts it.
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
using p2p::Request;
using p2p::RequestState;

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
  UnitReady(send, unit, /*held_vci=*/-1);
  return ReadyResult::kOk;
}

void Partitioned::UnitReady(PartitionedSend& send, int64_t unit, int held_vci) {
  const int64_t group = send.group_of_unit[unit];
  if (!send.plan.timer) {
    if (send.group_remaining[group].value.fetch_sub(
            1, std::memory_order_acq_rel) == 1) {
      PostGroup(send, group, held_vci);
    }
    return;
  }
  // The timer (Temuçin et al.): the first thread of a transport partition
  // waits up to delta for the others; then the ready runs go out and every
  // latecomer sends its own. Claims are by compare-and-swap on the unit, so
  // however the threads, the timer and the clear interleave, each unit is
  // sent exactly once. The stores and loads of unit_state, group_fired and
  // cleared are sequentially consistent: of two threads that each store one
  // flag and then read the other's, at least one sees the other's.
  send.unit_state[unit].store(1, std::memory_order_seq_cst);
  const int64_t left = send.group_remaining[group].value.fetch_sub(
                           1, std::memory_order_seq_cst) -
                       1;
  if (left == 0) {
    ClaimAndPost(send, group, held_vci);
    return;
  }
  if (send.plan.deferred_timer) {
    // Open a window if none is, then close whatever window has expired.
    const int64_t now = NowNs();
    const int64_t deadline =
        now + static_cast<int64_t>(send.plan.delta_us * 1000);
    int64_t closed = 0;
    if (send.group_deadline[group].compare_exchange_strong(
            closed, deadline, std::memory_order_seq_cst)) {
      LowerEarliestDeadline(send, deadline);
    }
    FireExpired(send, now, held_vci);
    return;
  }
  if (send.group_fired[group].load(std::memory_order_seq_cst) != 0) {
    if (send.cleared.load(std::memory_order_seq_cst)) {
      uint8_t ready = 1;
      if (send.unit_state[unit].compare_exchange_strong(ready, 2)) {
        PostRun(send, unit, 1, held_vci);
      }
    }
    return;
  }
  if (held_vci >= 0 ||
      send.group_first[group].exchange(1, std::memory_order_acq_rel) != 0) {
    return;  // someone else waits for this group
  }
  // The wait sleeps in short slices rather than spinning: the threads it
  // waits for need the cores (a node has fewer cores than threads more
  // often than not), and the thread's timer slack is cut to 1 us once, so a
  // slice is not stretched by the kernel's default 50 us.
  static thread_local bool slack_set = false;
  if (!slack_set) {
    prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
    slack_set = true;
  }
  constexpr int64_t kSliceNs = 5000;
  const int64_t deadline =
      NowNs() + static_cast<int64_t>(send.plan.delta_us * 1000);
  for (int64_t now = NowNs(); now < deadline; now = NowNs()) {
    if (send.group_remaining[group].value.load(std::memory_order_acquire) ==
        0) {
      return;  // the last thread (or the clear) sent the group
    }
    const int64_t nap = std::min(kSliceNs, deadline - now);
    const timespec pause = {0, static_cast<long>(nap)};
    nanosleep(&pause, nullptr);
  }
  send.group_fired[group].store(1, std::memory_order_seq_cst);
  if (send.cleared.load(std::memory_order_seq_cst)) {
    ClaimAndPost(send, group, held_vci);
  }
}

void Partitioned::LowerEarliestDeadline(PartitionedSend& send,
                                        int64_t deadline) {
  int64_t earliest = send.earliest_deadline.load(std::memory_order_seq_cst);
  while (deadline < earliest &&
         !send.earliest_deadline.compare_exchange_weak(
             earliest, deadline, std::memory_order_seq_cst)) {
  }
  // A window opened: a thread of ours sleeping in a wait must wake and keep
  // progressing until the window closes (MaySleepLocked says no meanwhile).
  if (earliest == INT64_MAX && deadline < earliest)
    vcis_.WakeSleepers(send.vci);
}

void Partitioned::FireExpired(PartitionedSend& send, int64_t now,
                              int held_vci) {
  if (now < send.earliest_deadline.load(std::memory_order_seq_cst) ||
      !send.cleared.load(std::memory_order_seq_cst)) {
    return;  // nothing expired, or nowhere to write yet (the clear fires)
  }
  // Recompute the earliest open window from scratch; an arrival opening
  // one meanwhile lowers it again after setting its deadline, so none is
  // lost. Closing a window is a compare-and-swap of its deadline to 0: one
  // closer sends its ready runs, and the next arrival opens a new window.
  send.earliest_deadline.store(INT64_MAX, std::memory_order_seq_cst);
  for (int64_t g = 0; g < send.plan.transport_partitions; ++g) {
    int64_t deadline = send.group_deadline[g].load(std::memory_order_seq_cst);
    if (deadline == 0) continue;
    if (deadline > now) {
      LowerEarliestDeadline(send, deadline);
      continue;
    }
    if (send.group_deadline[g].compare_exchange_strong(
            deadline, 0, std::memory_order_seq_cst)) {
      ClaimAndPost(send, g, held_vci);
    }
  }
}

void Partitioned::PostGroup(PartitionedSend& send, int64_t group,
                            int held_vci) {
  const int64_t groups = send.plan.transport_partitions;
  const int64_t begin = GroupBegin(group, send.units, groups);
  const int64_t end = GroupBegin(group + 1, send.units, groups);
  PostRun(send, begin, end - begin, held_vci);
}

void Partitioned::ClaimAndPost(PartitionedSend& send, int64_t group,
                               int held_vci) {
  const int64_t groups = send.plan.transport_partitions;
  const int64_t begin = GroupBegin(group, send.units, groups);
  const int64_t end = GroupBegin(group + 1, send.units, groups);
  int64_t run_start = -1;
  for (int64_t u = begin; u <= end; ++u) {
    bool claimed = false;
    if (u < end) {
      uint8_t ready = 1;
      claimed = send.unit_state[u].compare_exchange_strong(
          ready, 2, std::memory_order_seq_cst);
    }
    if (claimed) {
      if (run_start < 0) run_start = u;
      continue;
    }
    if (run_start >= 0) {
      PostRun(send, run_start, u - run_start, held_vci);
      run_start = -1;
    }
  }
}

}  // namespace minimpi::part
