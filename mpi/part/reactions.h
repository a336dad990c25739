// Reactions: what a partitioned send does each time one of its units
// becomes ready. The aggregator's plan says how the units are grouped into
// transport partitions and which reaction decides when a group (or a run
// of its ready units) is written:
//
//   kWhenComplete    the thread that completes a group posts it: one
//                    atomic per MPI_Pready (none, size, table, ploggp)
//   kWaitingTimer    the first thread of a group waits up to delta for the
//                    others, then the ready runs go and every latecomer
//                    sends its own (timer; Temuçin et al.)
//   kDeferredWindows nobody waits: the first arrival of a group opens a
//                    window of delta; whoever marks or progresses after it
//                    closes sends the ready runs (adaptive, for bursts)
//
// So the three steps of an aggregator are: plan (Aggregator::Initial),
// react to each ready unit (the Reaction its plan names), re-plan between
// rounds (Aggregator::Replan).
//
// A reaction holds one round's readiness state and nothing else: no MPI,
// no transport. What it decides to send goes to a RunSink, so the
// reactions are unit tested with many threads against a recording sink
// (reactions_test.cc).
//
// Threads: OnUnitReady is lock-free and called by any thread, exactly once
// per unit per round. StartRound, OnCleared, OnProgress and MaySleep are
// called under the send's VCI lock (`held_vci`), never while a round's
// OnUnitReady may run for the previous round. A reaction called with a
// held VCI never waits.
//
// Owned by: mpi/part. Called by: mpi/part/readiness.cc, writes.cc.
#ifndef MINIMPI_MPI_PART_REACTIONS_H_
#define MINIMPI_MPI_PART_REACTIONS_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "mpi/part/aggregator.h"

namespace minimpi::part {

// The steady clock in nanoseconds: the reactions' waits and windows, and
// the arrival times and profile of mpi/part.
inline int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Where a reaction sends what it decided.
class RunSink {
 public:
  virtual ~RunSink() = default;
  // Write units [first_unit, first_unit + units) as one transport
  // partition. Any thread; `held_vci` is the VCI whose lock the caller
  // holds, or -1.
  virtual void PostRun(int64_t first_unit, int64_t units, int held_vci) = 0;
  // A deferred window opened: a thread sleeping on the send's VCI must wake
  // and keep progressing until it closes.
  virtual void WindowOpened() = 0;
};

class Reaction {
 public:
  // For `units` units; what it sends goes to `sink`, which outlives it.
  Reaction(int64_t units, RunSink& sink);
  virtual ~Reaction() = default;
  Reaction(const Reaction&) = delete;
  Reaction& operator=(const Reaction&) = delete;

  virtual ReactionKind kind() const = 0;

  // A round starts under `plan` (its transport_partitions groups; delta_us
  // for the timers). Nothing is sent before OnCleared.
  virtual void StartRound(const Plan& plan);
  // Unit `unit` became ready.
  virtual void OnUnitReady(int64_t unit, int held_vci) = 0;
  // The receiver's clear for this round arrived: from now on the writes
  // have somewhere to go.
  virtual void OnCleared(int held_vci) = 0;
  // Progress of the send's VCI at `now_ns` (steady clock).
  virtual void OnProgress(int64_t now_ns, int held_vci) {
    (void)now_ns;
    (void)held_vci;
  }
  // Whether a thread waiting on the send's VCI may sleep: no window open.
  virtual bool MaySleep() const { return true; }

  bool cleared() const { return cleared_.load(std::memory_order_seq_cst); }
  int64_t groups() const { return groups_; }
  // The group (transport partition) unit `unit` belongs to this round.
  int64_t GroupOf(int64_t unit) const { return group_of_unit_[unit]; }

 protected:
  struct alignas(64) PaddedCounter {
    std::atomic<int64_t> value{0};
  };

  // Takes one from group g's count (its units plus the clear); true for
  // the caller that took the last.
  bool CountDown(int64_t group) {
    return remaining_[group].value.fetch_sub(1, std::memory_order_seq_cst) == 1;
  }
  bool GroupDone(int64_t group) const {
    return remaining_[group].value.load(std::memory_order_acquire) == 0;
  }
  void PostGroup(int64_t group, int held_vci);
  int64_t GroupBeginUnit(int64_t group) const {
    return GroupBegin(group, units_, groups_);
  }

  const int64_t units_;
  RunSink& sink_;
  int64_t groups_ = 1;
  double delta_us_ = 0;
  std::vector<int32_t> group_of_unit_;
  std::unique_ptr<PaddedCounter[]> remaining_;  // per group
  // This round's clear has been applied. Sequentially consistent, with the
  // timers' unit and group flags: of two threads that each store one flag
  // and then read the other's, at least one sees the other's.
  std::atomic<bool> cleared_{false};
};

// The reaction `kind` for `units` units.
std::unique_ptr<Reaction> MakeReaction(ReactionKind kind, int64_t units,
                                       RunSink& sink);

// Its name, for profiles and statistics.
const char* ReactionName(ReactionKind kind);

}  // namespace minimpi::part

#endif  // MINIMPI_MPI_PART_REACTIONS_H_
