#include "mpi/vci/wait_policy.h"

#include <algorithm>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace minimpi::vci {
namespace {
// Long enough that a peer which answers at once (a ping-pong, a window of
// messages, a balanced halo exchange) is never slept on; short enough that
// a waiter whose peer is descheduled for a time slice (milliseconds) wastes
// little of its core. A sleep and wakeup cost a few microseconds each.
constexpr int64_t kSpinWhenCoresSufficeNs = 100'000;
// Ranks that outnumber cores hand the core to each other by yielding for
// this long before they sleep: among ranks of one job a yield goes to one
// that has work, and costs less than a sleep and a wakeup.
constexpr int64_t kYieldWhenOversubscribedNs = 50'000;
}  // namespace

WaitPolicy WaitPolicy::Choose(const runtime::Settings& settings, int cores,
                              int local_ranks, int threads_per_rank,
                              bool has_doorbell, bool own_core) {
  WaitPolicy policy;
  const int runnable = local_ranks * threads_per_rank;
  const bool oversubscribed = runnable > cores;
  const std::string shape = absl::StrCat(
      local_ranks, " rank", local_ranks == 1 ? "" : "s", " x ",
      threads_per_rank, " thread", threads_per_rank == 1 ? "" : "s", " on ",
      cores, " core", cores == 1 ? "" : "s");
  if (settings.wait_policy == "spin") {
    policy.then = Then::kSpin;
  } else if (settings.wait_policy == "yield") {
    policy.then = Then::kYield;
  } else {  // sleep, auto
    policy.then = has_doorbell ? Then::kSleep : Then::kYield;
  }
  // Ranks and threads outnumber cores: whoever waits is very likely keeping
  // a peer off its core, so it steps aside at once.
  policy.spin_ns = oversubscribed ? 0 : kSpinWhenCoresSufficeNs;
  // ... and hands it to them by yielding for a while before it sleeps.
  policy.yield_ns = oversubscribed ? kYieldWhenOversubscribedNs : 0;
  if (settings.wait_spin_us >= 0) {
    policy.spin_ns = int64_t{settings.wait_spin_us} * 1000;
  }
  // Polling past the spin needs a core of one's own to begin with.
  policy.quiet_spin_ns =
      oversubscribed ? 0 : int64_t{settings.wait_quiet_spin_us} * 1000;
  // A rank bound to a core of its own shares it only with tasks that are
  // not the job's: giving the core up to them gains the job nothing, and
  // coming back costs. Beside two compiler loops a sleeper's wakeup made
  // the 8-byte half round trip 3-9 us, where polling through kept 0.3 (and
  // leaving the poll when descheduled, then sleeping, 0.5-5). So it polls
  // for the whole quiet spin, busy machine or not, descheduled or not.
  const bool poll_through = own_core && !oversubscribed &&
                            settings.wait_policy == "auto" &&
                            settings.wait_spin_us < 0;
  if (poll_through) {
    policy.spin_ns = std::max(policy.spin_ns, policy.quiet_spin_ns);
    policy.leave_spin_when_preempted = false;
  }
  if (settings.wait_yield_us >= 0) {
    policy.yield_ns = int64_t{settings.wait_yield_us} * 1000;
  }
  policy.sleep_max_ns = int64_t{settings.wait_sleep_max_us} * 1000;
  // With more ranks than cores there is no free core to move to: moving
  // only churns (measured: ping-pong 3.5 us with moves, 2.1 us without).
  policy.move_off_shared_core = settings.wait_move && !oversubscribed;
  policy.yield_in_polls = oversubscribed && settings.wait_policy != "spin";
  policy.reason = absl::StrCat(
      settings.wait_policy, ", ", shape,
      settings.wait_spin_us >= 0 ? ", spin set by MINIMPI_WAIT_SPIN_US"
      : oversubscribed           ? ", oversubscribed: no spin, yield 50 us"
      : poll_through             ? ", bound to a core of its own"
                                 : "",
      !has_doorbell && policy.then == Then::kYield &&
              settings.wait_policy != "yield"
          ? ", the transport has no doorbell"
          : "");
  return policy;
}

std::string WaitPolicy::Describe() const {
  const std::string poll = absl::StrCat(
      "poll ", spin_ns / 1000, " us",
      quiet_spin_ns > spin_ns
          ? absl::StrCat(" (", quiet_spin_ns / 1000,
                         " us while no other task wanted the core lately)")
          : "");
  std::string text;
  switch (then) {
    case Then::kSpin:
      text = "poll until done, never yield or sleep";
      break;
    case Then::kYield:
      text = absl::StrCat(poll, ", then yield the core between polls");
      break;
    case Then::kSleep:
      text = absl::StrCat(
          poll, ", ",
          yield_ns > 0 ? absl::StrCat("yield ", yield_ns / 1000, " us, ") : "",
          "then sleep until a peer rings (at most ", sleep_max_ns / 1000,
          " us at a time)");
      break;
  }
  if (then != Then::kSpin && leave_spin_when_preempted) {
    absl::StrAppend(&text, "; stop polling at once when descheduled");
  }
  if (then != Then::kSpin) {
    absl::StrAppend(&text, move_off_shared_core
                               ? "; move off a core an awake rank shares"
                               : "; no polling on a core an awake rank shares");
  }
  absl::StrAppend(&text, " (", reason, ")");
  return text;
}

int ThreadsPerRankFromEnvironment() {
  const char* value = std::getenv("OMP_NUM_THREADS");
  if (value == nullptr) return 1;
  absl::string_view text(value);
  // "4,2" gives the outer level's count.
  text = text.substr(0, text.find(','));
  int threads = 0;
  if (!absl::SimpleAtoi(text, &threads) || threads < 1) return 1;
  return threads;
}

IdleRounds::Action IdleRounds::EndSpin(absl::FunctionRef<int64_t()> now) {
  if (policy_.then == WaitPolicy::Then::kSleep && policy_.yield_ns > 0) {
    phase_ = Phase::kYieldBeforeSleep;
    yield_started_ns_ = now();
    return Action::kYield;
  }
  phase_ = Phase::kAfterSpin;
  return AfterSpin();
}

bool IdleRounds::KeepSpinning(int64_t spun_ns,
                              absl::FunctionRef<bool()> core_is_quiet) {
  if (spun_ns < policy_.spin_ns) return true;
  if (spun_ns >= policy_.quiet_spin_ns) return false;
  if (quiet_ == Quiet::kUnknown) {
    quiet_ = core_is_quiet() ? Quiet::kYes : Quiet::kNo;
  }
  return quiet_ == Quiet::kYes;
}

IdleRounds::Action IdleRounds::Idle(absl::FunctionRef<int64_t()> now,
                                    absl::FunctionRef<bool()> core_is_quiet) {
  ++rounds_;
  if (phase_ == Phase::kAfterSpin) return AfterSpin();
  if (phase_ == Phase::kYieldBeforeSleep) {
    // A yield is a system call anyway: the clock costs little beside it.
    if (now() - yield_started_ns_ < policy_.yield_ns) return Action::kYield;
    phase_ = Phase::kAfterSpin;
    return Action::kSleep;
  }
  if (policy_.then == WaitPolicy::Then::kSpin) {
    // A pause costs tens of nanoseconds on recent x86: pausing every round
    // would delay noticing an arrival by that much.
    return rounds_ % 8 == 0 ? Action::kPause : Action::kPoll;
  }
  if (rounds_ == 1) {
    spin_started_ns_ = last_look_ns_ = now();
    if (policy_.spin_ns > 0 && !skip_spin_) return Action::kPoll;
  } else if (rounds_ % kRoundsPerLook != 0) {
    return rounds_ % 8 == 0 ? Action::kPause : Action::kPoll;
  } else {
    const int64_t t = now();
    const bool preempted = policy_.leave_spin_when_preempted &&
                           t - last_look_ns_ > kPreemptedGapNs;
    last_look_ns_ = t;
    if (!preempted && KeepSpinning(t - spin_started_ns_, core_is_quiet)) {
      return Action::kPause;
    }
  }
  return EndSpin(now);
}

PollStreak::Action PollStreak::AfterFruitlessPoll(
    const WaitPolicy& policy, const void* what, uint64_t round, int64_t now_ns,
    absl::FunctionRef<bool()> core_is_quiet) {
  if (policy.then == WaitPolicy::Then::kSpin) return Action::kPoll;
  const bool continues =
      now_ns - last_ns_ <= kGapNs && what == what_ && round == round_;
  if (!continues) {
    what_ = what;
    round_ = round;
    start_ns_ = now_ns;
    polls_ = 0;
  }
  last_ns_ = now_ns;
  if (!policy.yield_in_polls) {
    // Cores enough by the counts: only a thread polling one thing gives
    // its core up, and only when others want it. A yield per poll slows a
    // loop over many partitions.
    if (!continues) return Action::kPoll;
    if (polls_++ % kPollsPerLook == 0) core_wanted_ = !core_is_quiet();
    if (!core_wanted_) return Action::kPoll;
  }
  if (now_ns - start_ns_ >= kBeforeNapNs &&
      policy.then == WaitPolicy::Then::kSleep) {
    return Action::kNap;
  }
  return Action::kYield;
}

}  // namespace minimpi::vci
