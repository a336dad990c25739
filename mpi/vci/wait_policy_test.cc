#include "mpi/vci/wait_policy.h"

#include <cstdlib>

#include "gtest/gtest.h"
#include "runtime/settings.h"

namespace minimpi::vci {
namespace {

using Action = IdleRounds::Action;

TEST(WaitPolicyTest, AutoSleepsAfterSpinningWhenCoresSuffice) {
  runtime::Settings settings;
  const WaitPolicy policy = WaitPolicy::Choose(settings, /*cores=*/4,
                                               /*local_ranks=*/2,
                                               /*threads_per_rank=*/2, true);
  EXPECT_EQ(policy.then, WaitPolicy::Then::kSleep);
  EXPECT_EQ(policy.spin_ns, 100'000);
  EXPECT_EQ(policy.sleep_max_ns, 1'000'000);
}

TEST(WaitPolicyTest, AutoDoesNotSpinWhenThreadsOutnumberCores) {
  runtime::Settings settings;
  EXPECT_EQ(WaitPolicy::Choose(settings, 2, 2, 2, true).quiet_spin_ns, 0);
  EXPECT_EQ(WaitPolicy::Choose(settings, 2, 2, 1, true).quiet_spin_ns,
            10'000'000);
  EXPECT_EQ(WaitPolicy::Choose(settings, 2, 2, 2, true).spin_ns, 0);
  EXPECT_EQ(WaitPolicy::Choose(settings, 2, 2, 2, true).yield_ns, 50'000);
  EXPECT_EQ(WaitPolicy::Choose(settings, 2, 2, 1, true).yield_ns, 0);
  // Nowhere to move to.
  EXPECT_FALSE(
      WaitPolicy::Choose(settings, 2, 4, 1, true).move_off_shared_core);
  EXPECT_TRUE(WaitPolicy::Choose(settings, 2, 2, 1, true).move_off_shared_core);
  EXPECT_EQ(WaitPolicy::Choose(settings, 2, 4, 1, true).spin_ns, 0);
  EXPECT_EQ(WaitPolicy::Choose(settings, 2, 2, 1, true).spin_ns, 100'000);
  // A fruitless MPI_Parrived hands the core over only where it is wanted.
  EXPECT_TRUE(WaitPolicy::Choose(settings, 2, 4, 1, true).yield_in_polls);
  EXPECT_TRUE(WaitPolicy::Choose(settings, 2, 2, 2, true).yield_in_polls);
  EXPECT_FALSE(WaitPolicy::Choose(settings, 2, 2, 1, true).yield_in_polls);
  settings.wait_policy = "spin";
  EXPECT_FALSE(WaitPolicy::Choose(settings, 2, 4, 1, true).yield_in_polls);
}

TEST(WaitPolicyTest, AutoPollsThroughOnACoreOfItsOwn) {
  runtime::Settings settings;
  const WaitPolicy bound = WaitPolicy::Choose(settings, 1, 1, 1, true,
                                              /*own_core=*/true);
  EXPECT_EQ(bound.spin_ns, 10'000'000);
  EXPECT_FALSE(bound.leave_spin_when_preempted);
  EXPECT_NE(bound.Describe().find("bound to a core of its own"),
            std::string::npos);
  // Unbound, it leaves its spin when descheduled.
  EXPECT_TRUE(
      WaitPolicy::Choose(settings, 2, 2, 1, true).leave_spin_when_preempted);
  // A spin set by hand, or the sleep policy named, is what the user asked.
  settings.wait_spin_us = 50;
  EXPECT_EQ(WaitPolicy::Choose(settings, 1, 1, 1, true, true).spin_ns, 50'000);
  settings.wait_spin_us = -1;
  settings.wait_policy = "sleep";
  EXPECT_EQ(WaitPolicy::Choose(settings, 1, 1, 1, true, true).spin_ns, 100'000);
}

TEST(WaitPolicyTest, NamedPoliciesAndSpinOverride) {
  runtime::Settings settings;
  settings.wait_policy = "spin";
  EXPECT_EQ(WaitPolicy::Choose(settings, 2, 2, 1, true).then,
            WaitPolicy::Then::kSpin);
  settings.wait_policy = "yield";
  settings.wait_spin_us = 7;
  const WaitPolicy yield = WaitPolicy::Choose(settings, 2, 8, 1, true);
  EXPECT_EQ(yield.then, WaitPolicy::Then::kYield);
  EXPECT_EQ(yield.spin_ns, 7'000);  // the setting wins over oversubscription
  settings.wait_policy = "sleep";
  // No doorbell to sleep on: yield instead, and say why.
  const WaitPolicy no_bell = WaitPolicy::Choose(settings, 2, 2, 1, false);
  EXPECT_EQ(no_bell.then, WaitPolicy::Then::kYield);
  EXPECT_NE(no_bell.Describe().find("no doorbell"), std::string::npos);
}

TEST(WaitPolicyTest, ThreadsPerRankReadsTheOuterOpenMpLevel) {
  setenv("OMP_NUM_THREADS", "6,2", 1);
  EXPECT_EQ(ThreadsPerRankFromEnvironment(), 6);
  setenv("OMP_NUM_THREADS", "junk", 1);
  EXPECT_EQ(ThreadsPerRankFromEnvironment(), 1);
  unsetenv("OMP_NUM_THREADS");
  EXPECT_EQ(ThreadsPerRankFromEnvironment(), 1);
}

// Drives IdleRounds with a clock the test moves: `step_ns` per idle round.
struct FakeClock {
  int64_t now = 1'000'000;
  int64_t operator()() const { return now; }
};

// Idle rounds, `step_ns` each, with a core that looks quiet or not, until
// the first action other than poll or pause; counts the looks at the core.
int RoundsOnCore(IdleRounds& idle, FakeClock& clock, int64_t step_ns,
                 bool quiet, int* looks, Action* left_with) {
  for (int round = 1; round < 10'000'000; ++round) {
    const Action action = idle.Idle([&] { return clock(); },
                                    [&] {
                                      ++*looks;
                                      return quiet;
                                    });
    clock.now += step_ns;
    if (action != Action::kPoll && action != Action::kPause) {
      *left_with = action;
      return round;
    }
  }
  return -1;
}

// Idle rounds until the first action other than poll or pause, on a core
// that never looks quiet.
int RoundsUntilLeavingSpin(IdleRounds& idle, FakeClock& clock, int64_t step_ns,
                           Action* left_with) {
  int looks = 0;
  return RoundsOnCore(idle, clock, step_ns, /*quiet=*/false, &looks, left_with);
}

TEST(IdleRoundsTest, SpinsForTheBudgetThenSleepsEveryRound) {
  WaitPolicy policy;
  policy.spin_ns = 10'000;
  IdleRounds idle(policy);
  FakeClock clock;
  Action action;
  // 100 ns a round: the budget lasts 100 rounds, looked at every 16th.
  const int rounds = RoundsUntilLeavingSpin(idle, clock, 100, &action);
  EXPECT_EQ(action, Action::kSleep);
  EXPECT_GE(rounds, 100);
  EXPECT_LE(rounds, 100 + IdleRounds::kRoundsPerLook);
  // Asleep it stays, round after round, until work turns up.
  EXPECT_EQ(idle.Idle([&] { return clock(); }), Action::kSleep);
  idle.Progressed();
  EXPECT_EQ(idle.Idle([&] { return clock(); }), Action::kPoll);
}

TEST(IdleRoundsTest, LeavesTheSpinAtOnceWhenDescheduled) {
  WaitPolicy policy;
  policy.spin_ns = 1'000'000'000;  // would spin a second
  IdleRounds idle(policy);
  FakeClock clock;
  for (int round = 1; round < IdleRounds::kRoundsPerLook; ++round) {
    EXPECT_NE(idle.Idle([&] { return clock(); }), Action::kSleep);
  }
  clock.now += IdleRounds::kPreemptedGapNs + 1;  // the thread did not run
  EXPECT_EQ(idle.Idle([&] { return clock(); }), Action::kSleep);

  policy.leave_spin_when_preempted = false;
  IdleRounds patient(policy);
  for (int round = 1; round < IdleRounds::kRoundsPerLook; ++round) {
    patient.Idle([&] { return clock(); });
  }
  clock.now += IdleRounds::kPreemptedGapNs + 1;
  EXPECT_NE(patient.Idle([&] { return clock(); }), Action::kSleep);
}

TEST(IdleRoundsTest, QuietCoreKeepsPollingPastTheSpin) {
  WaitPolicy policy;
  policy.spin_ns = 10'000;
  policy.quiet_spin_ns = 1'000'000;
  IdleRounds idle(policy);
  FakeClock clock;
  Action action;
  int looks = 0;
  // 100 ns a round: 10 000 rounds of quiet polling, one look at the core.
  const int rounds = RoundsOnCore(idle, clock, 100, true, &looks, &action);
  EXPECT_EQ(action, Action::kSleep);
  EXPECT_GE(rounds, 10'000);
  EXPECT_LE(rounds, 10'000 + IdleRounds::kRoundsPerLook);
  EXPECT_EQ(looks, 1);
  // The next wait looks again.
  idle.Progressed();
  looks = 0;
  RoundsOnCore(idle, clock, 100, true, &looks, &action);
  EXPECT_EQ(looks, 1);
}

TEST(IdleRoundsTest, ContendedCoreSleepsAfterTheSpin) {
  WaitPolicy policy;
  policy.spin_ns = 10'000;
  policy.quiet_spin_ns = 1'000'000;
  IdleRounds idle(policy);
  FakeClock clock;
  Action action;
  int looks = 0;
  const int rounds = RoundsOnCore(idle, clock, 100, false, &looks, &action);
  EXPECT_EQ(action, Action::kSleep);
  EXPECT_LE(rounds, 100 + IdleRounds::kRoundsPerLook);
  EXPECT_EQ(looks, 1);
}

TEST(IdleRoundsTest, QuietPollingEndsWhenDescheduled) {
  WaitPolicy policy;
  policy.spin_ns = 10'000;
  policy.quiet_spin_ns = 1'000'000'000;
  IdleRounds idle(policy);
  FakeClock clock;
  auto quiet = [] { return true; };
  // Past the spin, on a quiet core.
  for (int round = 1; round <= 20 * IdleRounds::kRoundsPerLook; ++round) {
    ASSERT_NE(idle.Idle([&] { return clock(); }, quiet), Action::kSleep);
    clock.now += 1'000;
  }
  clock.now += IdleRounds::kPreemptedGapNs + 1;
  Action action = Action::kPoll;
  for (int round = 0; round < IdleRounds::kRoundsPerLook; ++round) {
    action = idle.Idle([&] { return clock(); }, quiet);
    if (action == Action::kSleep) break;
  }
  EXPECT_EQ(action, Action::kSleep);
}

TEST(IdleRoundsTest, SkipSpinGoesStraightToSleepForOneWait) {
  WaitPolicy policy;
  policy.spin_ns = 1'000'000'000;
  IdleRounds idle(policy);
  FakeClock clock;
  EXPECT_TRUE(idle.AtSpinStart());
  idle.SkipSpin();
  EXPECT_EQ(idle.Idle([&] { return clock(); }), Action::kSleep);
  idle.Progressed();  // the next wait spins again
  EXPECT_TRUE(idle.AtSpinStart());
  EXPECT_NE(idle.Idle([&] { return clock(); }), Action::kSleep);
  EXPECT_FALSE(idle.AtSpinStart());
}

TEST(IdleRoundsTest, YieldsForItsTimeBeforeSleeping) {
  WaitPolicy policy;
  policy.spin_ns = 0;
  policy.yield_ns = 10'000;
  IdleRounds idle(policy);
  FakeClock clock;
  EXPECT_EQ(idle.Idle([&] { return clock(); }), Action::kYield);
  clock.now += 9'000;
  EXPECT_EQ(idle.Idle([&] { return clock(); }), Action::kYield);
  clock.now += 2'000;
  EXPECT_EQ(idle.Idle([&] { return clock(); }), Action::kSleep);
  EXPECT_EQ(idle.Idle([&] { return clock(); }), Action::kSleep);
}

TEST(IdleRoundsTest, NoSpinSleepsOnTheFirstIdleRound) {
  WaitPolicy policy;
  policy.spin_ns = 0;
  IdleRounds idle(policy);
  FakeClock clock;
  EXPECT_EQ(idle.Idle([&] { return clock(); }), Action::kSleep);
}

TEST(IdleRoundsTest, YieldPolicyYieldsAndSpinPolicyNeverLeaves) {
  WaitPolicy yield;
  yield.then = WaitPolicy::Then::kYield;
  yield.spin_ns = 0;
  IdleRounds yielding(yield);
  FakeClock clock;
  EXPECT_EQ(yielding.Idle([&] { return clock(); }), Action::kYield);

  WaitPolicy spin;
  spin.then = WaitPolicy::Then::kSpin;
  IdleRounds spinning(spin);
  Action action;
  EXPECT_EQ(RoundsUntilLeavingSpin(spinning, clock, 1'000'000, &action), -1);
}

// A thread polling one partition of one round, every 10 us.
struct Poller {
  PollStreak streak;
  WaitPolicy policy;
  int64_t now = 1'000'000;
  bool quiet = true;
  int looks = 0;
  PollStreak::Action Poll(const void* what, uint64_t round = 0,
                          int64_t step = 10'000) {
    now += step;
    const PollStreak::Action action =
        streak.AfterFruitlessPoll(policy, what, round, now, [&] {
          ++looks;
          return quiet;
        });
    streak.Resumed(now);
    return action;
  }
};

WaitPolicy Oversubscribed(WaitPolicy::Then then) {
  WaitPolicy policy;
  policy.then = then;
  policy.yield_in_polls = true;
  return policy;
}

TEST(PollStreakTest, OversubscribedYieldsThenNapsOnOnePartition) {
  Poller poller;
  poller.policy = Oversubscribed(WaitPolicy::Then::kSleep);
  const int partition = 0;
  // Yields from the first poll; naps once the streak is 100 us long.
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(poller.Poll(&partition), PollStreak::Action::kYield) << i;
  }
  EXPECT_EQ(poller.Poll(&partition), PollStreak::Action::kNap);
  EXPECT_EQ(poller.Poll(&partition), PollStreak::Action::kNap);
  // The counts decide: the core is never looked at.
  EXPECT_EQ(poller.looks, 0);
}

TEST(PollStreakTest, ALoopOverTwoPartitionsNeverNaps) {
  Poller poller;
  poller.policy = Oversubscribed(WaitPolicy::Then::kSleep);
  const int partitions[2] = {0, 1};
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(poller.Poll(&partitions[i % 2]), PollStreak::Action::kYield) << i;
  }
}

TEST(PollStreakTest, AGapANewRoundOrAnotherPartitionStartsAgain) {
  Poller poller;
  poller.policy = Oversubscribed(WaitPolicy::Then::kSleep);
  const int partition = 0, other = 1;
  for (int i = 0; i < 10; ++i) poller.Poll(&partition);
  // The program was away longer than the gap: a new streak.
  EXPECT_EQ(poller.Poll(&partition, 0, PollStreak::kGapNs + 1),
            PollStreak::Action::kYield);
  for (int i = 0; i < 9; ++i) poller.Poll(&partition);
  EXPECT_EQ(poller.Poll(&partition), PollStreak::Action::kNap);
  // The same partition of the next round, or another one: new streaks.
  EXPECT_EQ(poller.Poll(&partition, 1), PollStreak::Action::kYield);
  EXPECT_EQ(poller.Poll(&other, 1), PollStreak::Action::kYield);
}

TEST(PollStreakTest, TimeGivenAwayContinuesTheStreak) {
  Poller poller;
  poller.policy = Oversubscribed(WaitPolicy::Then::kSleep);
  const int partition = 0;
  EXPECT_EQ(poller.Poll(&partition), PollStreak::Action::kYield);
  // The yield lasted 50 us (another task ran): the caller comes back and
  // polls 5 us later, within the gap of its return.
  poller.now += 50'000;
  poller.streak.Resumed(poller.now);
  EXPECT_EQ(poller.Poll(&partition, 0, 5'000), PollStreak::Action::kYield);
  poller.now += 50'000;
  poller.streak.Resumed(poller.now);
  EXPECT_EQ(poller.Poll(&partition, 0, 5'000), PollStreak::Action::kNap);
}

TEST(PollStreakTest, CoresEnoughStepsAsideOnlyWhenTheCoreIsWanted) {
  Poller poller;  // yield_in_polls false: cores enough by the counts
  poller.policy.then = WaitPolicy::Then::kSleep;
  const int partition = 0;
  // A quiet core: polls on, looking at the core on the second poll of the
  // streak and then every kPollsPerLook polls.
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(poller.Poll(&partition, 0, 1'000), PollStreak::Action::kPoll)
        << i;
  }
  EXPECT_EQ(poller.looks, 2);
  // Another task wants the core: a new streak looks at once, yields, and
  // naps after 100 us.
  poller.quiet = false;
  const int other = 1;
  EXPECT_EQ(poller.Poll(&other), PollStreak::Action::kPoll);
  for (int i = 0; i < 9; ++i) {
    EXPECT_EQ(poller.Poll(&other), PollStreak::Action::kYield) << i;
  }
  EXPECT_EQ(poller.Poll(&other), PollStreak::Action::kNap);
  // Two partitions in turn never step aside there, wanted core or not.
  const int partitions[2] = {0, 1};
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(poller.Poll(&partitions[i % 2]), PollStreak::Action::kPoll) << i;
  }
}

TEST(PollStreakTest, SpinNeverStepsAsideAndYieldNeverNaps) {
  Poller spinner;
  spinner.policy = Oversubscribed(WaitPolicy::Then::kSpin);
  Poller yielder;
  yielder.policy = Oversubscribed(WaitPolicy::Then::kYield);
  const int partition = 0;
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(spinner.Poll(&partition), PollStreak::Action::kPoll) << i;
    EXPECT_EQ(yielder.Poll(&partition), PollStreak::Action::kYield) << i;
  }
}

}  // namespace
}  // namespace minimpi::vci
