// How a thread waiting on a VCI idles: it polls, then pauses, yields or
// sleeps on the VCI's doorbell as the wait policy says, and moves off a
// core it shares with its peer when the two keep waking each other.
#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "mpi/vci/tool_variables.h"
#include "mpi/vci/vci_set.h"
#include "runtime/topology.h"

namespace minimpi::vci {
namespace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Whether another task wanted this thread's core lately. The kernel counts
// every time it took the core from this thread for someone else (an
// involuntary context switch): one since a recent look means the core is
// contended, and stays meaning it for a while. A look costs a system call
// (well under a microsecond), made once a wait at most, after 100 us of
// polling (and in an MPI_Parrived loop on one partition, every 64 polls).
// Switches since a look long ago say nothing of now: that look only starts
// the count again.
bool CoreLooksQuiet() {
  constexpr int64_t kRecentNs = 100'000'000;
  thread_local int64_t last_look_ns = 0;
  thread_local long last_switches = 0;
  thread_local int64_t contended_until_ns = 0;
  rusage usage;
  if (getrusage(RUSAGE_THREAD, &usage) != 0) return false;
  const int64_t now = NowNs();
  if (usage.ru_nivcsw != last_switches && now - last_look_ns < kRecentNs) {
    contended_until_ns = now + kRecentNs;
  }
  last_switches = usage.ru_nivcsw;
  last_look_ns = now;
  return now >= contended_until_ns;
}

}  // namespace

void VciSet::IdleAfterFruitlessPoll(int vci, const void* what, uint64_t round,
                                    absl::FunctionRef<bool()> done) {
  thread_local PollStreak streak;
  switch (streak.AfterFruitlessPoll(wait_policy_, what, round, NowNs(),
                                    CoreLooksQuiet)) {
    case PollStreak::Action::kPoll:
      return;
    case PollStreak::Action::kYield:
      // A yield with nobody else runnable returns at once.
      sched_yield();
      break;
    case PollStreak::Action::kNap:
      SleepUntilRung(
          vci, done, [] {}, PollStreak::kNapNs);
      break;
  }
  streak.Resumed(NowNs());
}

bool VciSet::IdleStep(IdleRounds& idle, int vci, absl::FunctionRef<bool()> done,
                      absl::FunctionRef<void()> before_sleep) {
  // A rank that shares this core and is awake cannot run while this thread
  // polls: if it is the peer, polling only delays the answer.
  if (idle.AtSpinStart() && has_doorbell_ &&
      wait_policy_.then != WaitPolicy::Then::kSpin) {
    // Two ranks that wake each other stay on one core while the machine is
    // busy. When that lasts (many waits in a row), the later one moves, at
    // most every few milliseconds, so the two never chase each other
    // around; a brief encounter only skips the spin.
    thread_local int shared_core_waits = 0;
    thread_local int64_t last_move_ns = 0;
    constexpr int kWaitsBeforeMoving = 32;
    constexpr int64_t kMoveIntervalNs = 5'000'000;
    bool move_away = false;
    if (transport_->PeerMayShareCore(&move_away)) {
      shared_core_waits = move_away ? shared_core_waits + 1 : 0;
      bool moved = false;
      if (wait_policy_.move_off_shared_core &&
          shared_core_waits >= kWaitsBeforeMoving) {
        const int64_t now = NowNs();
        if (now - last_move_ns > kMoveIntervalNs) {
          last_move_ns = now;
          shared_core_waits = 0;
          moved = runtime::MoveOffCurrentCpu();
        }
      }
      if (!moved) idle.SkipSpin();
    } else {
      shared_core_waits = 0;
    }
  }
  switch (idle.Idle(NowNs, CoreLooksQuiet)) {
    case IdleRounds::Action::kPoll:
      return false;
    case IdleRounds::Action::kPause:
      CpuRelax();
      return false;
    case IdleRounds::Action::kYield:
      sched_yield();
      return false;
    case IdleRounds::Action::kSleep:
      return SleepUntilRung(vci, done, before_sleep);
  }
  return false;
}

bool VciSet::SleepUntilRung(int vci, absl::FunctionRef<bool()> done,
                            absl::FunctionRef<void()> before_sleep,
                            int64_t max_sleep_ns) {
  if (!has_doorbell_) {
    sched_yield();
    return false;
  }
  before_sleep();
  // A wait on every VCI (vci < 0) sleeps on the shared VCIs' doorbell.
  const int bell = vci < 0 ? 0 : vci;
  const uint64_t token = transport_->ArmDoorbell(bell);
  // The last look, after arming: at every VCI whose arrivals ring this
  // doorbell. Whatever arrives after it rings. Only a look under each
  // VCI's lock proves there is nothing; when another thread holds one
  // (and may be about to leave without looking again), sleep briefly.
  bool verified = true;
  bool progressed = false;
  bool may_sleep = true;
  auto look = [&](int v) {
    Vci& state = At(v);
    if (!state.mutex.try_lock()) {
      verified = false;
      return;
    }
    progressed |= PollLocked(v);
    for (int i = 0; i < num_registered_; ++i) {
      const int index = registered_[i];
      if (HandlerActive(index)) {
        may_sleep &= handlers_[index]->MaySleepLocked(v);
      }
    }
    state.mutex.unlock();
  };
  if (vci >= 0 && IsEndpointVci(vci)) {
    look(vci);
    // Other VCIs this wait progresses ring other doorbells.
    if (endpoints_progress_process_) verified = false;
  } else {
    for (int v = 0; v < num_shared_; ++v) {
      if (transport_->MayHaveWork(v)) look(v);
    }
    if (vci < 0 && in_use() > num_shared_) {
      verified = false;  // endpoints' VCIs have doorbells of their own
    }
  }
  if (progressed) {
    // It may have completed another thread's request.
    transport_->RingDoorbell(bell);
    return false;
  }
  if (!may_sleep || done()) return false;
  // An unverified sleep is cut short: what it may have missed is work
  // another thread was doing anyway.
  constexpr int64_t kUnverifiedSleepNs = 50'000;
  const int64_t longest =
      max_sleep_ns >= 0 ? std::min(max_sleep_ns, wait_policy_.sleep_max_ns)
                        : wait_policy_.sleep_max_ns;
  const int64_t timeout =
      verified ? longest : std::min(longest, kUnverifiedSleepNs);
  // Counted for tools (sleeps are off the message path: a sleep costs
  // microseconds, so two clock reads and three atomic adds are noise).
  VciCounters& counters = *At(bell).counters;
  counters.sleeps.Add();
  RaiseWaiterSlept(bell);
  const int64_t asleep_since = NowNs();
  transport_->SleepOnDoorbell(bell, token, timeout);
  const int64_t slept = NowNs() - asleep_since;
  counters.asleep_ns.Add(static_cast<uint64_t>(slept));
  if (slept < timeout) counters.wakeups.Add();
  RaiseWaiterWoke(bell, slept);
  return true;
}

}  // namespace minimpi::vci
