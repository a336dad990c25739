#include "mpi/part/aggregator.h"

#include <cstdio>
#include <fstream>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "mpi/part/model/ploggp_model.h"

namespace minimpi::part {
namespace {

AggregatorConfig TestConfig() {
  AggregatorConfig config;
  config.loggp = DefaultLogGP();
  config.max_channels = 4;
  return config;
}

PlanInput Input(int64_t send, int64_t receive, size_t partition_bytes) {
  PlanInput input;
  input.send_partitions = send;
  input.receive_partitions = receive;
  input.units = UnitCount(send);
  input.partition_bytes = partition_bytes;
  input.total_bytes = partition_bytes * size_t(send);
  return input;
}

// Every unit lies in exactly one group, groups are contiguous, non-empty
// and in order: what the receiver relies on to count each partition once.
void ExpectPartition(int64_t units, int64_t groups) {
  ASSERT_GE(groups, 1);
  ASSERT_LE(groups, units);
  std::vector<int> seen(units, 0);
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t begin = GroupBegin(g, units, groups);
    const int64_t end = GroupBegin(g + 1, units, groups);
    ASSERT_LT(begin, end) << "empty group " << g;
    for (int64_t u = begin; u < end; ++u) {
      ++seen[u];
      ASSERT_EQ(GroupOf(u, units, groups), g) << "unit " << u;
    }
  }
  for (int64_t u = 0; u < units; ++u) ASSERT_EQ(seen[u], 1) << "unit " << u;
}

TEST(UnitsTest, ImmediateLimitsHold) {
  for (int64_t partitions :
       {1, 2, 2047, 2048, 2049, 4096, 65535, 65536, 70000, 1000000}) {
    const int64_t per_unit = PartitionsPerUnit(partitions);
    const int64_t units = UnitCount(partitions);
    EXPECT_LE(units, kMaxUnits) << partitions;
    EXPECT_GE(units * per_unit, partitions) << partitions;
    EXPECT_LT((units - 1) * per_unit, partitions) << partitions;
  }
}

TEST(UnitsTest, GroupsPartitionUnitsExactlyOnce) {
  std::mt19937 random(7);
  for (int trial = 0; trial < 2000; ++trial) {
    const int64_t units = 1 + random() % 2048;
    const int64_t groups = 1 + random() % units;
    ExpectPartition(units, groups);
  }
}

TEST(AggregatorTest, EverySchemeGivesAValidPlanForRandomInputs) {
  std::mt19937 random(11);
  for (const AggregatorChoice& choice : AggregatorChoices()) {
    const std::string name = choice.name;
    absl::StatusOr<std::unique_ptr<Aggregator>> aggregator =
        MakeAggregator(name, TestConfig());
    ASSERT_TRUE(aggregator.ok()) << name;
    for (int trial = 0; trial < 300; ++trial) {
      const int64_t send = 1 + random() % (trial % 10 == 0 ? 100000 : 300);
      const int64_t receive = 1 + random() % 300;
      const size_t bytes = size_t(1) << (random() % 21);
      const PlanInput input = Input(send, receive, bytes);
      const Plan plan = (*aggregator)->Initial(input);
      ExpectPartition(input.units, plan.transport_partitions);
      EXPECT_GE(plan.channels, 1);
      EXPECT_LE(plan.channels, 4);
      EXPECT_FALSE(plan.reason.empty());
      EXPECT_EQ(plan.timed(), name == "timer" || name == "adaptive");
    }
  }
}

TEST(AggregatorTest, NoneSendsEachPartitionAlone) {
  auto none = *MakeAggregator("none", TestConfig());
  EXPECT_EQ(none->Initial(Input(16, 4, 1024)).transport_partitions, 16);
  // Beyond kMaxUnits, one write per unit.
  EXPECT_EQ(none->Initial(Input(70000, 7, 4)).transport_partitions,
            UnitCount(70000));
}

// MPICH's scheme, written the obvious way: the message count is the
// largest divisor of gcd(send, receive) whose messages are not smaller than
// the threshold (or gcd itself when the messages already are).
int64_t ReferenceSizePlan(int64_t send, int64_t receive, size_t total,
                          size_t threshold) {
  const int64_t base = std::gcd(send, receive);
  const size_t message = total / size_t(base);
  if (message == 0) return 1;
  if (message >= threshold) return base;
  const int64_t merge_wanted = int64_t(threshold / message);
  for (int64_t merge = std::min(merge_wanted, base); merge >= 1; --merge) {
    if (base % merge == 0) return base / merge;
  }
  return base;
}

TEST(AggregatorTest, SizeMatchesReference) {
  std::mt19937 random(5);
  for (size_t threshold : {size_t{1024}, size_t{65536}}) {
    AggregatorConfig config = TestConfig();
    config.aggregation_size = threshold;
    auto size = *MakeAggregator("size", config);
    for (int trial = 0; trial < 1000; ++trial) {
      const int64_t send = 1 + random() % 200;
      const int64_t receive = 1 + random() % 200;
      const size_t bytes = 1 + random() % 100000;
      const PlanInput input = Input(send, receive, bytes);
      EXPECT_EQ(size->Initial(input).transport_partitions,
                std::min(input.units,
                         ReferenceSizePlan(send, receive, input.total_bytes,
                                           threshold)))
          << send << " " << receive << " " << bytes;
    }
  }
}

TEST(AggregatorTest, TableTakesNearestEntryBelow) {
  AggregatorConfig config = TestConfig();
  config.table = {{8, 1024, 2, 1}, {8, 65536, 8, 2}, {32, 1024, 4, 1}};
  auto table = *MakeAggregator("table", config);
  EXPECT_EQ(table->Initial(Input(8, 8, 2048)).transport_partitions, 2);
  const Plan big = table->Initial(Input(8, 8, 1 << 20));
  EXPECT_EQ(big.transport_partitions, 8);
  EXPECT_EQ(big.channels, 2);
  // 64 partitions: the 32-partition entry's ratio (4/32) carries over.
  EXPECT_EQ(table->Initial(Input(64, 64, 4096)).transport_partitions, 8);
  // Below every entry: one write per partition.
  EXPECT_EQ(table->Initial(Input(4, 4, 16)).transport_partitions, 4);
}

TEST(AggregatorTest, TableFileRoundTripAndErrors) {
  const std::string path = ::testing::TempDir() + "/part_table.txt";
  {
    std::ofstream out(path);
    out << "# made by a test\n8 1024 2 1\n\n32 4096 4 2  # trailing\n";
  }
  absl::StatusOr<std::vector<TableEntry>> table = ReadTuningTable(path);
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->size(), 2u);
  EXPECT_EQ((*table)[1].channels, 2);
  {
    std::ofstream out(path);
    out << "8 1024 two 1\n";
  }
  table = ReadTuningTable(path);
  ASSERT_FALSE(table.ok());
  EXPECT_NE(table.status().message().find(":1:"), std::string::npos);
  EXPECT_FALSE(ReadTuningTable(path + ".missing").ok());
}

// Reference: every power of two up to the partition count; the fewest
// transport partitions whose prediction is within the slack of the best.
template <typename Predict>
std::pair<int64_t, double> ReferenceChoice(int64_t n, double slack,
                                           Predict predict) {
  double best = 1e300;
  for (int64_t k = 1; k <= n; k *= 2) best = std::min(best, predict(k));
  for (int64_t k = 1; k <= n; k *= 2) {
    if (predict(k) <= best * (1 + slack)) return {k, predict(k)};
  }
  return {-1, 0};
}

TEST(AggregatorTest, PLogGPAndTimerMatchReferenceSearch) {
  std::mt19937 random(3);
  for (int trial = 0; trial < 300; ++trial) {
    AggregatorConfig config = TestConfig();
    config.delay_us = double(random() % 500);
    config.delta_us = double(random() % 100);
    config.slack = (random() % 3) * 0.1;
    const int64_t send = 1 + random() % 256;
    const size_t bytes = size_t(1) << (random() % 20);
    auto ploggp = *MakeAggregator("ploggp", config);
    const Plan plan = ploggp->Initial(Input(send, send, bytes));
    const auto [k, predicted] =
        ReferenceChoice(send, config.slack, [&](int64_t k) {
          return PredictManyBeforeOne(config.loggp, send, bytes, k,
                                      config.delay_us);
        });
    EXPECT_EQ(plan.transport_partitions, k)
        << send << " partitions of " << bytes << " delay " << config.delay_us;
    EXPECT_NEAR(plan.predicted_us, predicted, 1e-9);

    auto timer = *MakeAggregator("timer", config);
    const Plan timed = timer->Initial(Input(send, send, bytes));
    const auto [tk, tpredicted] =
        ReferenceChoice(send, config.slack, [&](int64_t k) {
          return PredictTimerManyBeforeOne(config.loggp, send, bytes, k,
                                           config.delay_us, config.delta_us);
        });
    EXPECT_EQ(timed.transport_partitions, tk);
    EXPECT_NEAR(timed.predicted_us, tpredicted, 1e-9);
    EXPECT_EQ(timed.reaction, ReactionKind::kWaitingTimer);
    EXPECT_EQ(timed.delta_us, config.delta_us);
  }
}

// The timer splits the laggard's group in two messages: when the link is
// busy anyway that costs one message's overhead, never more.
TEST(AggregatorTest, TimerCostsAtMostOneMessageOverhead) {
  std::mt19937 random(13);
  const LogGPParameters loggp = DefaultLogGP();
  for (int trial = 0; trial < 2000; ++trial) {
    const int64_t n = 1 + random() % 200;
    const int64_t k = 1 + random() % n;
    const size_t bytes = 1 + random() % 100000;
    const double delay = random() % 1000;
    const double delta = random() % 50;
    EXPECT_LE(PredictTimerManyBeforeOne(loggp, n, bytes, k, delay, delta),
              PredictManyBeforeOne(loggp, n, bytes, k, delay) +
                  std::max(loggp.gap_us, loggp.send_overhead_us) + 1e-9)
        << n << " " << k << " " << bytes << " " << delay << " " << delta;
  }
}

TEST(AggregatorTest, TimerMergesThePunctualPartitionsWhenTheLaggardIsLate) {
  // 16 partitions of 64 KiB, a laggard 100 us late: the timer sends the
  // punctual ones in few writes and the laggard alone, so fewer transport
  // partitions cost (almost) nothing.
  AggregatorConfig config = TestConfig();
  config.delay_us = 100;
  config.delta_us = 20;
  auto timer = *MakeAggregator("timer", config);
  const int64_t with_timer =
      timer->Initial(Input(16, 16, 65536)).transport_partitions;
  EXPECT_LE(with_timer, 2);
  // Without the timer the laggard's whole group waits for it, so the model
  // splits finer.
  auto ploggp = *MakeAggregator("ploggp", config);
  EXPECT_GT(ploggp->Initial(Input(16, 16, 65536)).transport_partitions,
            with_timer);
}

TEST(AggregatorTest, InfoKeysFixThePlan) {
  AggregatorConfig config = TestConfig();
  config.forced_transport_partitions = 3;
  config.forced_channels = 2;
  auto forced = *MakeAggregator("ploggp", config);
  const Plan plan = forced->Initial(Input(16, 16, 4096));
  EXPECT_EQ(plan.transport_partitions, 3);
  EXPECT_EQ(plan.channels, 2);
}

TEST(AggregatorTest, UnknownNameIsAnError) {
  absl::StatusOr<std::unique_ptr<Aggregator>> bad =
      MakeAggregator("fastest", TestConfig());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "unknown aggregator 'fastest' (expected " +
                                        absl::StrJoin(AggregatorNames(), ", ") +
                                        ")");
}

// Every entry of the table makes an aggregator of its name and describes
// it (mpi/instance/choice_lists_test.cc checks the names are unique and that
// the settings take them).
TEST(AggregatorTest, EveryTableEntryMakesItsAggregator) {
  for (const AggregatorChoice& choice : AggregatorChoices()) {
    EXPECT_STREQ(AggregatorDescription(choice.name), choice.description);
    absl::StatusOr<std::unique_ptr<Aggregator>> aggregator =
        MakeAggregator(choice.name, TestConfig());
    ASSERT_TRUE(aggregator.ok()) << aggregator.status();
    EXPECT_STREQ((*aggregator)->name(), choice.name);
  }
}

TEST(ArrivalSpreadTest, FindsTheLaggard) {
  // 15 punctual threads within 10 us, one laggard 500 us later.
  std::vector<double> ready;
  for (int i = 0; i < 15; ++i) ready.push_back(100 + i * 10.0 / 14);
  ready.push_back(610);
  const ArrivalSpread spread = MeasureArrivalSpread(ready);
  EXPECT_EQ(spread.laggards, 1);
  EXPECT_NEAR(spread.non_laggard_spread_us, 10, 1e-9);
  EXPECT_NEAR(spread.laggard_delay_us, 500, 1e-9);
}

TEST(ArrivalSpreadTest, NoLaggardWhenArrivalsAreEven) {
  std::vector<double> ready;
  for (int i = 0; i < 16; ++i) ready.push_back(50.0 + i);
  const ArrivalSpread spread = MeasureArrivalSpread(ready);
  EXPECT_EQ(spread.laggards, 0);
  EXPECT_NEAR(spread.non_laggard_spread_us, 15, 1e-9);
  EXPECT_EQ(spread.laggard_delay_us, 0);
}

TEST(AdaptiveTest, DeltaFollowsMeasuredSpread) {
  auto adaptive = *MakeAggregator("adaptive", TestConfig());
  ASSERT_TRUE(adaptive->wants_arrivals());
  const PlanInput input = Input(16, 16, 65536);
  Plan plan = adaptive->Initial(input);
  std::vector<double> ready;
  for (int i = 0; i < 15; ++i) ready.push_back(100 + i * 2.0);  // spread 28
  ready.push_back(1100);                                        // laggard
  for (int round = 0; round < 8; ++round) {
    plan = adaptive->Replan(input, plan, ready);
  }
  EXPECT_EQ(plan.reaction, ReactionKind::kWaitingTimer);
  EXPECT_NEAR(plan.delta_us, 1.25 * 28 + 1, 0.5);
  ExpectPartition(input.units, plan.transport_partitions);
}

TEST(AdaptiveTest, SpreadOutArrivalsGetOneWriteEachAndNoTimer) {
  // A wavefront: partition i ready at 100 i us, no punctual cluster.
  auto adaptive = *MakeAggregator("adaptive", TestConfig());
  const PlanInput input = Input(16, 16, 65536);
  Plan plan = adaptive->Initial(input);
  std::vector<double> ready;
  for (int i = 0; i < 16; ++i) ready.push_back(100.0 * i);
  for (int round = 0; round < 3; ++round) {
    plan = adaptive->Replan(input, plan, ready);
  }
  EXPECT_EQ(plan.reaction, ReactionKind::kWhenComplete);
  EXPECT_EQ(plan.transport_partitions, 16);
}

TEST(AdaptiveTest, BurstsGetADeferredTimer) {
  // 16 threads marking 8 partitions each back to back, threads 10 us apart:
  // no laggard, arrivals close together, so windows that nobody waits in.
  auto adaptive = *MakeAggregator("adaptive", TestConfig());
  const PlanInput input = Input(128, 128, 8);
  Plan plan = adaptive->Initial(input);
  std::vector<double> ready;
  for (int thread = 0; thread < 16; ++thread) {
    for (int p = 0; p < 8; ++p) ready.push_back(1000 + 10.0 * thread + 0.2 * p);
  }
  for (int round = 0; round < 3; ++round) {
    plan = adaptive->Replan(input, plan, ready, /*most_by_one_thread=*/8);
  }
  EXPECT_TRUE(plan.timed());
  EXPECT_EQ(plan.reaction, ReactionKind::kDeferredWindows);
  EXPECT_EQ(plan.transport_partitions, 1);
  EXPECT_NEAR(plan.delta_us, 4 * MedianGap(ready) + 0.5, 1e-9);
  EXPECT_NEAR(MedianGap(ready), 0.2, 1e-9);
  // One partition per thread: the first arrival waits out the window.
  plan = adaptive->Replan(input, plan, ready, /*most_by_one_thread=*/1);
  EXPECT_TRUE(plan.timed());
  EXPECT_EQ(plan.reaction, ReactionKind::kWaitingTimer);
}

}  // namespace
}  // namespace minimpi::part
