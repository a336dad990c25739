// The reactions alone: units marked by many threads in random orders, the
// clear and progress from a "VCI holder" thread, and a recording sink. The
// reference is what every reaction must do whatever the interleaving:
// nothing before the clear, each unit sent exactly once per round, runs
// inside one group, and for kWhenComplete exactly the whole groups.
// Tagged threaded: CI runs it under ThreadSanitizer too.
#include "mpi/part/reactions.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace minimpi::part {
namespace {

struct PostedRun {
  int64_t first = 0, units = 0;
};

class RecordingSink : public RunSink {
 public:
  void PostRun(int64_t first_unit, int64_t units, int) override {
    // Nothing may go before the receiver's clear.
    if (reaction == nullptr || !reaction->cleared()) early.fetch_add(1);
    std::lock_guard<std::mutex> lock(mutex);
    runs.push_back({first_unit, units});
  }
  void WindowOpened() override { windows_opened.fetch_add(1); }

  std::vector<PostedRun> Take() {
    std::lock_guard<std::mutex> lock(mutex);
    return std::exchange(runs, {});
  }
  int64_t UnitsPosted() {
    std::lock_guard<std::mutex> lock(mutex);
    int64_t total = 0;
    for (const PostedRun& run : runs) total += run.units;
    return total;
  }

  const Reaction* reaction = nullptr;
  std::atomic<int> early{0};
  std::atomic<int> windows_opened{0};
  std::mutex mutex;
  std::vector<PostedRun> runs;
};

Plan MakePlan(ReactionKind kind, int64_t groups, double delta_us) {
  Plan plan;
  plan.transport_partitions = groups;
  plan.reaction = kind;
  plan.delta_us = delta_us;
  return plan;
}

// The reference check of one round's runs.
void ExpectRound(const std::vector<PostedRun>& runs, int64_t units,
                 int64_t groups, ReactionKind kind, const Reaction& reaction) {
  std::vector<int> sent(units, 0);
  for (const PostedRun& run : runs) {
    ASSERT_GE(run.units, 1);
    ASSERT_GE(run.first, 0);
    ASSERT_LE(run.first + run.units, units);
    for (int64_t u = run.first; u < run.first + run.units; ++u) ++sent[u];
    EXPECT_EQ(reaction.GroupOf(run.first),
              reaction.GroupOf(run.first + run.units - 1))
        << "a run crosses groups";
    EXPECT_EQ(reaction.GroupOf(run.first), GroupOf(run.first, units, groups));
  }
  for (int64_t u = 0; u < units; ++u) {
    EXPECT_EQ(sent[u], 1) << "unit " << u;
  }
  if (kind == ReactionKind::kWhenComplete) {
    ASSERT_EQ(int64_t(runs.size()), groups);
    std::vector<PostedRun> sorted = runs;
    std::sort(sorted.begin(), sorted.end(),
              [](const PostedRun& a, const PostedRun& b) {
                return a.first < b.first;
              });
    for (int64_t g = 0; g < groups; ++g) {
      EXPECT_EQ(sorted[g].first, GroupBegin(g, units, groups));
      EXPECT_EQ(sorted[g].units, GroupBegin(g + 1, units, groups) -
                                     GroupBegin(g, units, groups));
    }
  }
}

class ReactionTest : public ::testing::TestWithParam<ReactionKind> {};

TEST_P(ReactionTest, NothingBeforeTheClearThenEverythingOnce) {
  RecordingSink sink;
  const int64_t units = 12;
  auto reaction = MakeReaction(GetParam(), units, sink);
  sink.reaction = reaction.get();
  EXPECT_EQ(reaction->kind(), GetParam());
  // Delta 0: a timer's first arrival does not wait.
  reaction->StartRound(MakePlan(GetParam(), 3, 0));
  for (int64_t u = 0; u < units; ++u) reaction->OnUnitReady(u, -1);
  EXPECT_TRUE(sink.Take().empty()) << "posted before the clear";
  reaction->OnCleared(0);
  reaction->OnProgress(NowNs(), 0);
  ExpectRound(sink.Take(), units, 3, GetParam(), *reaction);
  EXPECT_EQ(sink.early.load(), 0);
}

TEST_P(ReactionTest, ManyThreadsManyRounds) {
  RecordingSink sink;
  std::mt19937 random(GetParam() == ReactionKind::kWhenComplete ? 1 : 2);
  for (const int64_t units : {int64_t{1}, int64_t{7}, int64_t{64}}) {
    auto reaction = MakeReaction(GetParam(), units, sink);
    sink.reaction = reaction.get();
    std::mutex vci;  // what the VCI lock is to the engine
    for (int round = 0; round < 40; ++round) {
      const int64_t groups = 1 + int64_t(random() % units);
      const double delta_us = (round % 3) * 5.0;
      {
        std::lock_guard<std::mutex> lock(vci);
        reaction->StartRound(MakePlan(GetParam(), groups, delta_us));
      }
      std::vector<int64_t> order(units);
      for (int64_t u = 0; u < units; ++u) order[u] = u;
      std::shuffle(order.begin(), order.end(), random);
      const int threads = 1 + int(random() % 4);
      const int64_t clear_after = int64_t(random() % (units + 1));
      std::atomic<int64_t> marked{0};
      std::vector<std::thread> markers;
      for (int t = 0; t < threads; ++t) {
        markers.emplace_back([&, t] {
          for (int64_t i = t; i < units; i += threads) {
            reaction->OnUnitReady(order[i], -1);
            marked.fetch_add(1);
          }
        });
      }
      // The VCI holder: the clear after about `clear_after` marks, then
      // progress until every unit went.
      std::thread holder([&] {
        while (marked.load() < clear_after) std::this_thread::yield();
        {
          std::lock_guard<std::mutex> lock(vci);
          reaction->OnCleared(0);
        }
        // A unit never sent fails the round below rather than hanging.
        const int64_t give_up = NowNs() + int64_t(10e9);
        while (sink.UnitsPosted() < units && NowNs() < give_up) {
          std::lock_guard<std::mutex> lock(vci);
          reaction->OnProgress(NowNs(), 0);
        }
      });
      for (std::thread& marker : markers) marker.join();
      holder.join();
      {
        // A window may outlive its group (sent by its last unit), but
        // progress past every deadline closes it and sends nothing more.
        std::lock_guard<std::mutex> lock(vci);
        reaction->OnProgress(NowNs() + int64_t(delta_us * 1000) + 1, 0);
        EXPECT_TRUE(reaction->MaySleep()) << "a window stayed open";
      }
      ExpectRound(sink.Take(), units, groups, GetParam(), *reaction);
      ASSERT_EQ(sink.early.load(), 0) << "round " << round;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, ReactionTest,
    ::testing::Values(ReactionKind::kWhenComplete, ReactionKind::kWaitingTimer,
                      ReactionKind::kDeferredWindows),
    [](const ::testing::TestParamInfo<ReactionKind>& info) {
      switch (info.param) {
        case ReactionKind::kWaitingTimer:
          return "WaitingTimer";
        case ReactionKind::kDeferredWindows:
          return "DeferredWindows";
        case ReactionKind::kWhenComplete:
          break;
      }
      return "WhenComplete";
    });

TEST(WhenCompleteTest, TheLastUnitOfAGroupPostsIt) {
  RecordingSink sink;
  auto reaction = MakeReaction(ReactionKind::kWhenComplete, 4, sink);
  sink.reaction = reaction.get();
  reaction->StartRound(MakePlan(ReactionKind::kWhenComplete, 2, 0));
  reaction->OnCleared(0);
  reaction->OnUnitReady(0, -1);
  EXPECT_TRUE(sink.Take().empty());
  reaction->OnUnitReady(1, -1);
  const std::vector<PostedRun> runs = sink.Take();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].first, 0);
  EXPECT_EQ(runs[0].units, 2);
}

TEST(WaitingTimerTest, AHeldVciNeverWaitsAndLatecomersGoAlone) {
  RecordingSink sink;
  auto reaction = MakeReaction(ReactionKind::kWaitingTimer, 4, sink);
  sink.reaction = reaction.get();
  // A wait of a thousand seconds: a call that waited would hang the test.
  reaction->StartRound(MakePlan(ReactionKind::kWaitingTimer, 1, 1e9));
  reaction->OnCleared(0);
  reaction->OnUnitReady(0, /*held_vci=*/0);
  EXPECT_TRUE(sink.Take().empty());
  // Delta 0: the first thread's wait is over at once; it sends the ready
  // units, and each latecomer its own.
  reaction->StartRound(MakePlan(ReactionKind::kWaitingTimer, 1, 0));
  reaction->OnCleared(0);
  reaction->OnUnitReady(2, -1);
  reaction->OnUnitReady(0, -1);
  reaction->OnUnitReady(1, -1);
  reaction->OnUnitReady(3, -1);
  const std::vector<PostedRun> runs = sink.Take();
  ASSERT_EQ(runs.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(runs[i].units, 1);
  EXPECT_EQ(runs[0].first, 2);
  EXPECT_EQ(runs[1].first, 0);
}

TEST(DeferredWindowsTest, AWindowClosesAtItsDeadlineByProgress) {
  RecordingSink sink;
  auto reaction = MakeReaction(ReactionKind::kDeferredWindows, 8, sink);
  sink.reaction = reaction.get();
  const double delta_us = 1000;
  reaction->StartRound(MakePlan(ReactionKind::kDeferredWindows, 1, delta_us));
  reaction->OnCleared(0);
  EXPECT_TRUE(reaction->MaySleep());
  const int64_t before = NowNs();
  reaction->OnUnitReady(3, -1);
  reaction->OnUnitReady(4, -1);
  EXPECT_EQ(sink.windows_opened.load(), 1);
  EXPECT_FALSE(reaction->MaySleep()) << "an open window must keep progress";
  reaction->OnProgress(before, 0);
  EXPECT_TRUE(sink.Take().empty()) << "closed before its deadline";
  reaction->OnProgress(before + int64_t(delta_us * 1000) * 3, 0);
  const std::vector<PostedRun> runs = sink.Take();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].first, 3);
  EXPECT_EQ(runs[0].units, 2);
  EXPECT_TRUE(reaction->MaySleep());
  // The next arrival opens a new window.
  reaction->OnUnitReady(0, -1);
  EXPECT_EQ(sink.windows_opened.load(), 2);
}

}  // namespace
}  // namespace minimpi::part
