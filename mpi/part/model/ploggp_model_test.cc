#include "mpi/part/model/ploggp_model.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "mpi/part/model/loggp.h"

namespace minimpi::part {
namespace {

// Reference: a discrete-event simulation of the send, message by message,
// written without the closed form of PredictManyBeforeOne. Every user
// partition gets a ready time; each transport partition is ready when its
// last user partition is; the sender takes ready messages in order of
// readiness and injects each when both it and the link are free.
double SimulateManyBeforeOne(const LogGPParameters& p, int64_t user_partitions,
                             size_t partition_bytes,
                             int64_t transport_partitions, double delay_us) {
  const int64_t n = std::max<int64_t>(user_partitions, 1);
  const int64_t k = std::clamp<int64_t>(transport_partitions, 1, n);
  std::vector<double> partition_ready(n, 0.0);
  partition_ready[n - 1] = std::max(delay_us, 0.0);

  struct Message {
    double ready_us = 0;
    double bytes = 0;
  };
  std::vector<Message> messages(k);
  // Deal partitions out one at a time: group i takes n / k of them, one
  // more while i < n % k.
  int64_t next = 0;
  for (int64_t group = 0; group < k; ++group) {
    const int64_t count = n / k + (group < n % k ? 1 : 0);
    for (int64_t i = 0; i < count; ++i, ++next) {
      messages[group].ready_us =
          std::max(messages[group].ready_us, partition_ready[next]);
      messages[group].bytes += static_cast<double>(partition_bytes);
    }
  }
  EXPECT_EQ(next, n);
  // Ready order; a stable sort keeps partition order among equals.
  std::stable_sort(messages.begin(), messages.end(),
                   [](const Message& a, const Message& b) {
                     return a.ready_us < b.ready_us;
                   });
  double sender_free_us = 0;  // CPU and link both free again
  double completion_us = 0;
  for (const Message& message : messages) {
    const double wire = std::max(message.bytes - 1, 0.0) * p.gap_per_byte_us;
    const double start = std::max(message.ready_us, sender_free_us);
    sender_free_us = start + std::max(p.gap_us, p.send_overhead_us) + wire;
    const double arrival = start + p.send_overhead_us + wire + p.latency_us +
                           p.receive_overhead_us;
    completion_us = std::max(completion_us, arrival);
  }
  return completion_us;
}

LogGPParameters RandomParameters(std::mt19937& random) {
  auto uniform = [&](double low, double high) {
    return std::uniform_real_distribution<double>(low, high)(random);
  };
  LogGPParameters p;
  p.latency_us = uniform(0, 5);
  p.send_overhead_us = uniform(0, 2);
  p.receive_overhead_us = uniform(0, 2);
  p.gap_us = uniform(0, 3);
  p.gap_per_byte_us = std::pow(10, uniform(-6, -2));
  return p;
}

bool IsPowerOfTwo(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

TEST(PLogGPModelTest, MatchesEventSimulation) {
  std::mt19937 random(2024);
  for (int trial = 0; trial < 20000; ++trial) {
    const LogGPParameters p = RandomParameters(random);
    const int64_t n = std::uniform_int_distribution<int64_t>(1, 300)(random);
    const int64_t k = std::uniform_int_distribution<int64_t>(1, n)(random);
    const size_t bytes =
        trial % 10 == 0
            ? 0
            : std::uniform_int_distribution<size_t>(1, 100000)(random);
    const double delay =
        trial % 4 == 0
            ? 0
            : std::uniform_real_distribution<double>(0, 2000)(random);
    const double expected = SimulateManyBeforeOne(p, n, bytes, k, delay);
    const double predicted = PredictManyBeforeOne(p, n, bytes, k, delay);
    ASSERT_NEAR(predicted, expected, 1e-9 * expected + 1e-12)
        << "trial " << trial << ": n=" << n << " k=" << k << " bytes=" << bytes
        << " delay=" << delay;
  }
}

TEST(PLogGPModelTest, ChoiceIsTheBestPowerOfTwoBySimulation) {
  std::mt19937 random(99);
  for (int trial = 0; trial < 3000; ++trial) {
    const LogGPParameters p = RandomParameters(random);
    const int64_t n = std::uniform_int_distribution<int64_t>(1, 1000)(random);
    const size_t bytes =
        std::uniform_int_distribution<size_t>(1, 1 << 20)(random);
    const double delay =
        trial % 3 == 0
            ? 0
            : std::uniform_real_distribution<double>(0, 5000)(random);
    const PLogGPChoice choice = ChooseTransportPartitions(p, n, bytes, delay);
    SCOPED_TRACE(testing::Message()
                 << "trial " << trial << ": n=" << n << " bytes=" << bytes
                 << " delay=" << delay);
    EXPECT_TRUE(IsPowerOfTwo(choice.transport_partitions));
    EXPECT_LE(choice.transport_partitions, n);
    EXPECT_NEAR(choice.single_message_us,
                SimulateManyBeforeOne(p, n, bytes, 1, delay),
                1e-9 * choice.single_message_us);
    EXPECT_NEAR(
        choice.predicted_us,
        SimulateManyBeforeOne(p, n, bytes, choice.transport_partitions, delay),
        1e-9 * choice.predicted_us);
    // No power of two does clearly better, and every smaller one does
    // clearly worse (ties go to fewer messages).
    for (int64_t k = 1; k <= n; k *= 2) {
      const double simulated = SimulateManyBeforeOne(p, n, bytes, k, delay);
      EXPECT_GE(simulated, choice.predicted_us * (1 - 1e-9)) << "k=" << k;
      if (k < choice.transport_partitions) {
        EXPECT_GT(simulated, choice.predicted_us) << "k=" << k;
      }
    }
  }
}

TEST(PLogGPModelTest, WithoutDelayOneMessageWins) {
  // Every extra message costs max(g, o_s) and saves nothing when all data
  // is ready at once.
  LogGPParameters p = DefaultLogGP();
  p.gap_per_byte_us = 1e-7;
  for (int64_t n : {1, 2, 7, 64, 1000}) {
    for (size_t bytes : {size_t{1}, size_t{4096}, size_t{1} << 20}) {
      const PLogGPChoice choice = ChooseTransportPartitions(p, n, bytes, 0);
      EXPECT_EQ(choice.transport_partitions, 1)
          << "n=" << n << " bytes=" << bytes;
      EXPECT_EQ(choice.predicted_us, choice.single_message_us);
    }
  }
}

TEST(PLogGPModelTest, LongDelayAndMuchDataSplit) {
  // 64 partitions of 64 KiB: 4 MiB take about 420 us on the default link,
  // well inside a 2 ms delay, so all but the laggard's partition should
  // leave early.
  const LogGPParameters p = DefaultLogGP();
  const PLogGPChoice choice = ChooseTransportPartitions(p, 64, 64 * 1024, 2000);
  EXPECT_EQ(choice.transport_partitions, 64);
  EXPECT_LT(choice.predicted_us, choice.single_message_us);
  // Then only the laggard's own 64 KiB remain after the delay.
  EXPECT_NEAR(choice.predicted_us,
              2000 + p.send_overhead_us + (64 * 1024 - 1) * p.gap_per_byte_us +
                  p.latency_us + p.receive_overhead_us,
              1e-9);
}

TEST(PLogGPModelTest, ChoiceNeverExceedsUserPartitions) {
  const LogGPParameters p = DefaultLogGP();
  for (int64_t n = 1; n <= 130; ++n) {
    const PLogGPChoice choice = ChooseTransportPartitions(p, n, 1 << 16, 1e6);
    EXPECT_TRUE(IsPowerOfTwo(choice.transport_partitions)) << n;
    EXPECT_LE(choice.transport_partitions, n);
    // With this much delay more messages always help: the largest power of
    // two not above n.
    EXPECT_GT(2 * choice.transport_partitions, n) << n;
  }
  // Huge counts do not overflow the doubling.
  const int64_t huge = int64_t{1} << 62;
  const PLogGPChoice choice = ChooseTransportPartitions(p, huge + 5, 1, 0);
  EXPECT_EQ(choice.transport_partitions, 1);
}

TEST(PLogGPModelTest, ClampsArguments) {
  const LogGPParameters p = DefaultLogGP();
  EXPECT_EQ(PredictManyBeforeOne(p, 8, 100, 0, 5),
            PredictManyBeforeOne(p, 8, 100, 1, 5));
  EXPECT_EQ(PredictManyBeforeOne(p, 8, 100, 50, 5),
            PredictManyBeforeOne(p, 8, 100, 8, 5));
  EXPECT_EQ(PredictManyBeforeOne(p, 0, 100, 1, 5),
            PredictManyBeforeOne(p, 1, 100, 1, 5));
  EXPECT_EQ(PredictManyBeforeOne(p, 8, 100, 2, -3),
            PredictManyBeforeOne(p, 8, 100, 2, 0));
  const PLogGPChoice choice = ChooseTransportPartitions(p, 0, 100, 5);
  EXPECT_EQ(choice.transport_partitions, 1);
}

TEST(PLogGPModelTest, PredictionGrowsWithDelayAndData) {
  std::mt19937 random(5);
  for (int trial = 0; trial < 1000; ++trial) {
    const LogGPParameters p = RandomParameters(random);
    const int64_t n = std::uniform_int_distribution<int64_t>(1, 100)(random);
    const int64_t k = std::uniform_int_distribution<int64_t>(1, n)(random);
    const size_t bytes =
        std::uniform_int_distribution<size_t>(1, 1 << 16)(random);
    const double delay =
        std::uniform_real_distribution<double>(0, 1000)(random);
    const double base = PredictManyBeforeOne(p, n, bytes, k, delay);
    EXPECT_GE(PredictManyBeforeOne(p, n, bytes, k, delay + 10), base);
    EXPECT_GE(PredictManyBeforeOne(p, n, bytes + 1, k, delay), base);
    // Never before the laggard is ready plus one message's flight.
    EXPECT_GE(base, delay + p.send_overhead_us + p.latency_us +
                        p.receive_overhead_us);
  }
}

}  // namespace
}  // namespace minimpi::part
