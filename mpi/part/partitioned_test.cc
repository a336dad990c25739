// Partitioned communication in one process, over the loopback transport: a
// rank sending to itself, layer by layer (no bindings), so the handshake,
// the writes with immediate (or the other backends' messages and plain
// writes) and the rounds run with a transport that refuses posts on
// purpose, which the shared-memory singleton never does.
// Each partition's bytes are checked the moment it is reported arrived,
// and at the end of every round against what was sent.
#include "mpi/part/partitioned.h"

#include <cstdint>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mpi/p2p/point_to_point.h"
#include "mpi/vci/vci_set.h"
#include "net/testing/loopback_transport.h"
#include "runtime/settings.h"

namespace minimpi::part {
namespace {

constexpr int32_t kContext = 9;

struct Case {
  const char* aggregator;
  int refuse_every;
  const char* backend = "native";
};

class PartitionedTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    net::testing::LoopbackOptions options;
    options.num_vcis = 2;
    options.refuse_every = GetParam().refuse_every;
    transport_ = std::make_unique<net::testing::LoopbackTransport>(options);
    runtime::Settings settings;
    settings.num_vcis = 2;
    settings.eager_max = 1024;
    settings.part_aggregator = GetParam().aggregator;
    settings.part_backend = GetParam().backend;
    vci::WaitPolicy policy;
    policy.then = vci::WaitPolicy::Then::kSpin;
    auto vcis = vci::VciSet::Create(transport_.get(), settings, policy);
    ASSERT_TRUE(vcis.ok()) << vcis.status();
    vcis_ = std::move(vcis).value();
    auto p2p = p2p::PointToPoint::Create(vcis_.get(), settings, 1);
    ASSERT_TRUE(p2p.ok()) << p2p.status();
    p2p_ = std::move(p2p).value();
    auto part = Partitioned::Create(*vcis_, *p2p_, settings, /*world_rank=*/0);
    ASSERT_TRUE(part.ok()) << part.status();
    part_ = std::move(part).value();
  }
  void TearDown() override {
    part_.reset();
    p2p_.reset();
    vcis_.reset();
  }

  // A send on VCI `vci` to a receive on the other VCI of this process.
  PartitionedArguments Arguments(void* data, size_t bytes, int64_t partitions,
                                 int vci) {
    PartitionedArguments arguments;
    arguments.data = data;
    arguments.total_bytes = bytes;
    arguments.partitions = partitions;
    arguments.peer_world_rank = 0;
    arguments.peer_vci = 1 - vci;
    arguments.context = kContext;
    arguments.source_rank = 0;
    arguments.tag = 4;
    arguments.vci = vci;
    return arguments;
  }

  std::unique_ptr<net::testing::LoopbackTransport> transport_;
  std::unique_ptr<vci::VciSet> vcis_;
  std::unique_ptr<p2p::PointToPoint> p2p_;
  std::unique_ptr<Partitioned> part_;
};

// Rounds of a send of 64 partitions into a receive of 16, partitions
// marked ready in a different random order each round.
TEST_P(PartitionedTest, RoundsDeliverEveryPartitionIntact) {
  constexpr int64_t kSendPartitions = 64, kReceivePartitions = 16;
  constexpr size_t kBytes = 64 * 1000;
  std::vector<uint8_t> out(kBytes), in(kBytes);
  absl::StatusOr<vci::Request*> send =
      part_->NewSend(Arguments(out.data(), kBytes, kSendPartitions, /*vci=*/0));
  ASSERT_TRUE(send.ok()) << send.status();
  absl::StatusOr<vci::Request*> receive = part_->NewReceive(
      Arguments(in.data(), kBytes, kReceivePartitions, /*vci=*/1));
  ASSERT_TRUE(receive.ok()) << receive.status();
  EXPECT_TRUE(Partitioned::IsSend(*send));
  EXPECT_FALSE(Partitioned::IsSend(*receive));
  EXPECT_EQ(Partitioned::Partitions(*receive), kReceivePartitions);

  std::mt19937 random(7);
  std::vector<int64_t> order(kSendPartitions);
  std::iota(order.begin(), order.end(), 0);
  for (int round = 0; round < 5; ++round) {
    for (size_t i = 0; i < kBytes; ++i) out[i] = uint8_t(i * 13 + round * 7);
    std::fill(in.begin(), in.end(), 0);
    // The receive starts first in even rounds, second in odd ones.
    if (round % 2 == 0) part_->Start(*receive);
    part_->Start(*send);
    if (round % 2 == 1) part_->Start(*receive);
    std::shuffle(order.begin(), order.end(), random);
    for (int64_t partition : order) {
      ASSERT_EQ(part_->Ready(*send, partition), Partitioned::ReadyResult::kOk);
    }
    // Marking one twice in a round is reported, and changes nothing.
    EXPECT_EQ(part_->Ready(*send, order[0]), Partitioned::ReadyResult::kTwice);
    // Each receive partition, once arrived, holds its bytes.
    const size_t per_receive = kBytes / kReceivePartitions;
    std::vector<bool> checked(kReceivePartitions, false);
    int remaining = kReceivePartitions;
    for (int spins = 0; remaining > 0 && spins < 10'000'000; ++spins) {
      for (int64_t p = 0; p < kReceivePartitions; ++p) {
        if (checked[p] || !part_->Arrived(*receive, p)) continue;
        checked[p] = true;
        --remaining;
        for (size_t b = p * per_receive; b < (p + 1) * per_receive; ++b) {
          ASSERT_EQ(in[b], out[b]) << "round " << round << " byte " << b;
        }
      }
    }
    ASSERT_EQ(remaining, 0) << "round " << round;
    p2p_->Wait(*send);
    p2p_->Wait(*receive);
    p2p_->Retire(*send);
    p2p_->Retire(*receive);
    ASSERT_EQ(in, out) << "round " << round;
  }
  part_->Free(*send);
  part_->Free(*receive);
  if (GetParam().refuse_every > 0) EXPECT_GT(transport_->refusals(), 0u);
}

// A send whose partitions are all marked ready after the receiver's clear
// came in writes them from MPI_Pready itself: a program that computes
// after its MPI_Pready calls makes no MPI call that could apply the clear
// later, and its data would not move during the computation.
TEST_P(PartitionedTest, ReadyAppliesAClearAlreadyQueued) {
  constexpr int64_t kPartitions = 4;
  constexpr size_t kBytes = 4 * 1000;
  std::vector<uint8_t> out(kBytes), in(kBytes);
  absl::StatusOr<vci::Request*> send =
      part_->NewSend(Arguments(out.data(), kBytes, kPartitions, /*vci=*/0));
  ASSERT_TRUE(send.ok()) << send.status();
  absl::StatusOr<vci::Request*> receive =
      part_->NewReceive(Arguments(in.data(), kBytes, kPartitions, /*vci=*/1));
  ASSERT_TRUE(receive.ok()) << receive.status();
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < kBytes; ++i) out[i] = uint8_t(i * 5 + round);
    part_->Start(*receive);
    part_->Start(*send);
    const uint64_t posts_before_ready = transport_->posts();
    for (int64_t p = 0; p < kPartitions; ++p) {
      ASSERT_EQ(part_->Ready(*send, p), Partitioned::ReadyResult::kOk);
    }
    // Round 0 may still be matching the two inits; after it the clear is
    // queued when the send starts, and MPI_Pready must have applied it.
    if (round > 0 && GetParam().refuse_every == 0) {
      EXPECT_GT(transport_->posts(), posts_before_ready) << "round " << round;
    }
    p2p_->Wait(*receive);
    p2p_->Wait(*send);
    p2p_->Retire(*send);
    p2p_->Retire(*receive);
    ASSERT_EQ(in, out) << "round " << round;
  }
  part_->Free(*send);
  part_->Free(*receive);
}

INSTANTIATE_TEST_SUITE_P(Aggregators, PartitionedTest,
                         ::testing::Values(
                             Case{"none", 0}, Case{"none", 3},
                             Case{"size", 2}, Case{"table", 3},
                             Case{"timer", 4}, Case{"adaptive", 5},
                             // Every aggregator over every backend.
                             Case{"none", 3, "persist"},
                             Case{"timer", 4, "persist"},
                             Case{"adaptive", 5, "persist"},
                             Case{"none", 3, "rma"}, Case{"size", 2, "rma"},
                             Case{"timer", 4, "rma"},
                             Case{"adaptive", 5, "rma"},
                             Case{"table", 3, "auto"},
                             Case{"adaptive", 0, "auto"}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.aggregator) +
                                  "_refuse_every_" +
                                  std::to_string(info.param.refuse_every) +
                                  "_" + info.param.backend;
                         });

}  // namespace
}  // namespace minimpi::part
