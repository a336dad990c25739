#include "mpi/part/reactions.h"

#include <sys/prctl.h>

#include <algorithm>
#include <climits>
#include <ctime>

namespace minimpi::part {
namespace {

// kWhenComplete: a group's counter holds its units plus the clear; whoever
// takes the last posts the whole group. One atomic per ready unit.
class WhenComplete final : public Reaction {
 public:
  using Reaction::Reaction;
  ReactionKind kind() const override { return ReactionKind::kWhenComplete; }

  void OnUnitReady(int64_t unit, int held_vci) override {
    const int64_t group = group_of_unit_[unit];
    if (CountDown(group)) PostGroup(group, held_vci);
  }

  void OnCleared(int held_vci) override {
    cleared_.store(true, std::memory_order_seq_cst);
    for (int64_t g = 0; g < groups_; ++g) {
      if (CountDown(g)) PostGroup(g, held_vci);
    }
  }
};

// What both timers share: each unit is claimed by compare-and-swap before
// it is sent, so however the threads, the timer and the clear interleave,
// each unit goes exactly once, in runs of consecutive claimed units.
class ClaimingReaction : public Reaction {
 public:
  ClaimingReaction(int64_t units, RunSink& sink)
      : Reaction(units, sink),
        unit_state_(new std::atomic<uint8_t>[std::max<int64_t>(units, 1)]) {}

  void StartRound(const Plan& plan) override {
    Reaction::StartRound(plan);
    for (int64_t u = 0; u < units_; ++u) {
      unit_state_[u].store(kNotReady, std::memory_order_relaxed);
    }
  }

 protected:
  static constexpr uint8_t kNotReady = 0, kReady = 1, kClaimed = 2;

  // Marks the unit ready, then counts it down; true when it was the last
  // of its group (the caller posts the group's unclaimed runs).
  bool MarkReady(int64_t unit) {
    unit_state_[unit].store(kReady, std::memory_order_seq_cst);
    return CountDown(group_of_unit_[unit]);
  }
  bool Claim(int64_t unit) {
    uint8_t ready = kReady;
    return unit_state_[unit].compare_exchange_strong(ready, kClaimed,
                                                     std::memory_order_seq_cst);
  }
  // Claims the ready, unclaimed units of a group and posts them in runs.
  void ClaimAndPost(int64_t group, int held_vci) {
    const int64_t begin = GroupBeginUnit(group);
    const int64_t end = GroupBeginUnit(group + 1);
    int64_t run_start = -1;
    for (int64_t u = begin; u <= end; ++u) {
      const bool claimed = u < end && Claim(u);
      if (claimed) {
        if (run_start < 0) run_start = u;
        continue;
      }
      if (run_start >= 0) {
        sink_.PostRun(run_start, u - run_start, held_vci);
        run_start = -1;
      }
    }
  }

  std::unique_ptr<std::atomic<uint8_t>[]> unit_state_;
};

// kWaitingTimer (Temuçin et al.): the first thread of a group waits up to
// delta for the others; then the ready runs go out and every latecomer
// sends its own.
class WaitingTimer final : public ClaimingReaction {
 public:
  WaitingTimer(int64_t units, RunSink& sink)
      : ClaimingReaction(units, sink),
        first_(new std::atomic<uint8_t>[std::max<int64_t>(units, 1)]),
        fired_(new std::atomic<uint8_t>[std::max<int64_t>(units, 1)]) {}
  ReactionKind kind() const override { return ReactionKind::kWaitingTimer; }

  void StartRound(const Plan& plan) override {
    ClaimingReaction::StartRound(plan);
    for (int64_t g = 0; g < groups_; ++g) {
      first_[g].store(0, std::memory_order_relaxed);
      fired_[g].store(0, std::memory_order_relaxed);
    }
  }

  void OnUnitReady(int64_t unit, int held_vci) override {
    const int64_t group = group_of_unit_[unit];
    if (MarkReady(unit)) {
      ClaimAndPost(group, held_vci);
      return;
    }
    if (fired_[group].load(std::memory_order_seq_cst) != 0) {
      // A latecomer after the wait: its own unit, once there is a receiver.
      if (cleared() && Claim(unit)) sink_.PostRun(unit, 1, held_vci);
      return;
    }
    if (held_vci >= 0 || first_[group].exchange(1, std::memory_order_acq_rel)) {
      return;  // someone else waits for this group (or we may not wait)
    }
    Wait(group);
    fired_[group].store(1, std::memory_order_seq_cst);
    if (cleared()) ClaimAndPost(group, held_vci);
  }

  void OnCleared(int held_vci) override {
    cleared_.store(true, std::memory_order_seq_cst);
    for (int64_t g = 0; g < groups_; ++g) {
      if (CountDown(g) || fired_[g].load(std::memory_order_seq_cst) != 0) {
        ClaimAndPost(g, held_vci);
      }
    }
  }

 private:
  // Until the group is complete or delta has passed. The wait sleeps in
  // short slices rather than spinning: the threads it waits for need the
  // cores (a node has fewer cores than threads more often than not), and
  // the thread's timer slack is cut to 1 us once, so a slice is not
  // stretched by the kernel's default 50 us.
  void Wait(int64_t group) const {
    static thread_local bool slack_set = false;
    if (!slack_set) {
      prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
      slack_set = true;
    }
    constexpr int64_t kSliceNs = 5000;
    const int64_t deadline = NowNs() + static_cast<int64_t>(delta_us_ * 1000);
    for (int64_t now = NowNs(); now < deadline; now = NowNs()) {
      if (GroupDone(group)) return;  // the last thread (or the clear) sent it
      const timespec pause = {
          0, static_cast<long>(std::min(kSliceNs, deadline - now))};
      nanosleep(&pause, nullptr);
    }
  }

  std::unique_ptr<std::atomic<uint8_t>[]> first_;  // a thread waits
  std::unique_ptr<std::atomic<uint8_t>[]> fired_;  // its wait is over
};

// kDeferredWindows: the first arrival of a group only sets a deadline;
// whichever MPI_Pready or progress of the send's VCI comes after it sends
// the ready runs, and the next arrival opens a new window.
class DeferredWindows final : public ClaimingReaction {
 public:
  DeferredWindows(int64_t units, RunSink& sink)
      : ClaimingReaction(units, sink),
        deadline_(new std::atomic<int64_t>[std::max<int64_t>(units, 1)]) {}
  ReactionKind kind() const override { return ReactionKind::kDeferredWindows; }

  void StartRound(const Plan& plan) override {
    ClaimingReaction::StartRound(plan);
    for (int64_t g = 0; g < groups_; ++g) {
      deadline_[g].store(kClosed, std::memory_order_relaxed);
    }
    earliest_.store(kNone, std::memory_order_relaxed);
  }

  void OnUnitReady(int64_t unit, int held_vci) override {
    const int64_t group = group_of_unit_[unit];
    if (MarkReady(unit)) {
      ClaimAndPost(group, held_vci);
      return;
    }
    // Open a window if none is, then close whatever window has expired.
    const int64_t now = NowNs();
    const int64_t deadline = now + static_cast<int64_t>(delta_us_ * 1000);
    int64_t closed = kClosed;
    if (deadline_[group].compare_exchange_strong(closed, deadline,
                                                 std::memory_order_seq_cst)) {
      LowerEarliest(deadline);
    }
    FireExpired(now, held_vci);
  }

  void OnCleared(int held_vci) override {
    cleared_.store(true, std::memory_order_seq_cst);
    for (int64_t g = 0; g < groups_; ++g) {
      if (CountDown(g)) ClaimAndPost(g, held_vci);
    }
    FireExpired(NowNs(), held_vci);
  }

  void OnProgress(int64_t now_ns, int held_vci) override {
    FireExpired(now_ns, held_vci);
  }

  bool MaySleep() const override {
    return earliest_.load(std::memory_order_seq_cst) == kNone;
  }

 private:
  static constexpr int64_t kClosed = 0;
  static constexpr int64_t kNone = INT64_MAX;

  void LowerEarliest(int64_t deadline) {
    int64_t earliest = earliest_.load(std::memory_order_seq_cst);
    while (deadline < earliest &&
           !earliest_.compare_exchange_weak(earliest, deadline,
                                            std::memory_order_seq_cst)) {
    }
    // A window opened where none was: a sleeping thread must wake and keep
    // progressing until it closes (MaySleep says no meanwhile).
    if (earliest == kNone && deadline < earliest) sink_.WindowOpened();
  }

  // Close every window whose deadline is past `now`. The earliest open
  // window is recomputed from scratch; an arrival opening one meanwhile
  // lowers it again after setting its deadline, so none is lost. Closing a
  // window is a compare-and-swap of its deadline to kClosed: one closer
  // sends its ready runs, and the next arrival opens a new window.
  void FireExpired(int64_t now, int held_vci) {
    if (now < earliest_.load(std::memory_order_seq_cst) || !cleared()) {
      return;  // nothing expired, or nowhere to write yet (the clear fires)
    }
    earliest_.store(kNone, std::memory_order_seq_cst);
    for (int64_t g = 0; g < groups_; ++g) {
      int64_t deadline = deadline_[g].load(std::memory_order_seq_cst);
      if (deadline == kClosed) continue;
      if (deadline > now) {
        LowerEarliest(deadline);
        continue;
      }
      if (deadline_[g].compare_exchange_strong(deadline, kClosed,
                                               std::memory_order_seq_cst)) {
        ClaimAndPost(g, held_vci);
      }
    }
  }

  std::unique_ptr<std::atomic<int64_t>[]> deadline_;  // per group
  std::atomic<int64_t> earliest_{kNone};
};

}  // namespace

Reaction::Reaction(int64_t units, RunSink& sink)
    : units_(units),
      sink_(sink),
      group_of_unit_(std::max<int64_t>(units, 1), 0),
      remaining_(new PaddedCounter[std::max<int64_t>(units, 1)]) {}

void Reaction::StartRound(const Plan& plan) {
  groups_ = plan.transport_partitions;
  delta_us_ = plan.delta_us;
  for (int64_t g = 0; g < groups_; ++g) {
    const int64_t begin = GroupBegin(g, units_, groups_);
    const int64_t end = GroupBegin(g + 1, units_, groups_);
    for (int64_t u = begin; u < end; ++u) {
      group_of_unit_[u] = static_cast<int32_t>(g);
    }
    // Its units and the clear.
    remaining_[g].value.store(end - begin + 1, std::memory_order_relaxed);
  }
  cleared_.store(false, std::memory_order_seq_cst);
}

void Reaction::PostGroup(int64_t group, int held_vci) {
  const int64_t begin = GroupBeginUnit(group);
  sink_.PostRun(begin, GroupBeginUnit(group + 1) - begin, held_vci);
}

std::unique_ptr<Reaction> MakeReaction(ReactionKind kind, int64_t units,
                                       RunSink& sink) {
  switch (kind) {
    case ReactionKind::kWaitingTimer:
      return std::make_unique<WaitingTimer>(units, sink);
    case ReactionKind::kDeferredWindows:
      return std::make_unique<DeferredWindows>(units, sink);
    case ReactionKind::kWhenComplete:
      break;
  }
  return std::make_unique<WhenComplete>(units, sink);
}

const char* ReactionName(ReactionKind kind) {
  switch (kind) {
    case ReactionKind::kWaitingTimer:
      return "waiting timer";
    case ReactionKind::kDeferredWindows:
      return "deferred windows";
    case ReactionKind::kWhenComplete:
      break;
  }
  return "when complete";
}

}  // namespace minimpi::part
