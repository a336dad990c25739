// The node path's algorithms against a reference: threads play the ranks
// of one region (the same code a library run maps into processes), run the
// same random series of collectives (sizes that cross cells, so steps reuse
// cells by parity; every root; in place or not), and every rank checks its
// result against what the collective means, computed directly from every
// rank's inputs. Reductions use a non-commutative operation too (2x2 matrix
// products), so a result in the wrong rank order fails. Counts that
// disagree must leave every rank returning, with truncation where a reader
// got less than was sent, and the region still in step for the next call.
#include "mpi/coll/node_collectives.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "mpi/objects/op.h"

namespace minimpi::coll {
namespace {

class SpinWaiter final : public NodeWaiter {
 public:
  void Wait(absl::FunctionRef<bool()> reached,
            absl::FunctionRef<void()> before_sleep) override {
    before_sleep();  // it never sleeps, but posts still see a slow rank
    while (!reached()) sched_yield();
  }
  void Wake(int) override { wakes.fetch_add(1, std::memory_order_relaxed); }
  std::atomic<int> wakes{0};
};

// A rank that sleeps until a post wakes it, as a library rank may in the
// VCI's wait. A wake it misses (the post's flag came, its Wake did not:
// the post and the waiter each missed the other's store) shows as a sleep
// that times out with the flag already there.
class SleepingWaiter final : public NodeWaiter {
 public:
  explicit SleepingWaiter(const std::vector<SleepingWaiter*>* ranks)
      : ranks_(ranks) {}
  void Wait(absl::FunctionRef<bool()> reached,
            absl::FunctionRef<void()> before_sleep) override {
    before_sleep();
    std::unique_lock lock(mutex_);
    auto woken = [this] { return woken_; };
    while (!reached()) {
      // A flag that is there after a long sleep, with no wake even after
      // a grace period (a posting thread descheduled between its flag and
      // its Wake on a loaded machine), is a missed wake.
      if (!woken_condition_.wait_for(lock, std::chrono::milliseconds(200),
                                     woken) &&
          reached() &&
          !woken_condition_.wait_for(lock, std::chrono::seconds(5), woken)) {
        missed_wakes.fetch_add(1, std::memory_order_relaxed);
      }
      woken_ = false;
    }
  }
  void Wake(int rank) override {
    SleepingWaiter& sleeper = *(*ranks_)[rank];
    {
      std::lock_guard lock(sleeper.mutex_);
      sleeper.woken_ = true;
    }
    sleeper.woken_condition_.notify_one();
  }
  // Every wait may sleep (no polling first), so that posts and sleepers
  // cross as often as they can.
  bool PollFirst() const override { return false; }
  std::atomic<int> missed_wakes{0};

 private:
  const std::vector<SleepingWaiter*>* const ranks_;
  std::mutex mutex_;
  std::condition_variable woken_condition_;
  bool woken_ = false;
};

enum class Waiting { kSpin, kSleep };

// One shared region and a view of it per rank.
class Node {
 public:
  // `direct_min`: allgather and alltoall blocks from this size copy
  // directly (threads of one process read their own memory through
  // process_vm_readv, as ranks read each other's); 0: never.
  Node(int ranks, size_t cell, size_t slot, size_t direct_min = 0,
       Waiting waiting = Waiting::kSpin, bool asymmetric_fence = false)
      : bytes_(NodeRegion::BytesFor(ranks, cell, slot)) {
    memory_ = std::aligned_alloc(64, (bytes_ + 63) / 64 * 64);
    std::memset(memory_, 0, bytes_);
    waiters_.resize(ranks);
    for (int r = 0; r < ranks; ++r) {
      if (waiting == Waiting::kSleep) {
        auto sleeper = std::make_unique<SleepingWaiter>(&sleepers_);
        sleepers_.push_back(sleeper.get());
        waiters_[r] = std::move(sleeper);
      } else {
        waiters_[r] = std::make_unique<SpinWaiter>();
      }
      regions_.emplace_back(memory_, ranks, r, cell, slot, waiters_[r].get());
    }
    for (NodeRegion& region : regions_) {
      region.Attach();
      region.set_direct_min(direct_min);
      region.set_asymmetric_fence(asymmetric_fence);
      // With direct copies, reduces also take steps of half a cell.
      if (direct_min != 0) region.set_reduce_step_bytes(cell / 2);
    }
  }
  ~Node() { std::free(memory_); }
  NodeRegion& region(int rank) { return regions_[rank]; }
  int missed_wakes() const {
    int missed = 0;
    for (const SleepingWaiter* sleeper : sleepers_) {
      missed += sleeper->missed_wakes.load();
    }
    return missed;
  }

  // Runs body(rank) on one thread per rank.
  template <typename Body>
  void Run(Body body) {
    std::vector<std::thread> threads;
    for (int r = 0; r < static_cast<int>(regions_.size()); ++r) {
      threads.emplace_back([&body, r] { body(r); });
    }
    for (std::thread& thread : threads) thread.join();
  }

 private:
  size_t bytes_;
  void* memory_;
  std::vector<std::unique_ptr<NodeWaiter>> waiters_;
  std::vector<SleepingWaiter*> sleepers_;
  std::vector<NodeRegion> regions_;
};

// Items that are 2x2 matrices of wrapping 32-bit integers (16 bytes each):
// associative, not commutative.
void MatrixProduct(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<const uint32_t*>(in);
  auto* b = static_cast<uint32_t*>(inout);
  for (int m = 0; m < 4 * *len; m += 4) {
    const uint32_t r0 = a[m] * b[m] + a[m + 1] * b[m + 2];
    const uint32_t r1 = a[m] * b[m + 1] + a[m + 1] * b[m + 3];
    const uint32_t r2 = a[m + 2] * b[m] + a[m + 3] * b[m + 2];
    const uint32_t r3 = a[m + 2] * b[m + 1] + a[m + 3] * b[m + 3];
    b[m] = r0, b[m + 1] = r1, b[m + 2] = r2, b[m + 3] = r3;
  }
}

uint32_t Input(int call, int rank, int index) {
  return static_cast<uint32_t>(call * 7919 + rank * 104729 + index * 31 + 1);
}

struct Call {
  Collective collective;
  int root;
  int count;  // items (uint32) per rank or per block
  bool in_place;
  bool matrix;  // the non-commutative reduction
};

std::vector<Call> RandomCalls(int ranks, size_t cell, int number,
                              unsigned seed) {
  std::mt19937 random(seed);
  const Collective kinds[] = {Collective::kBarrier,   Collective::kBcast,
                              Collective::kReduce,    Collective::kAllreduce,
                              Collective::kGather,    Collective::kScatter,
                              Collective::kAllgather, Collective::kAlltoall};
  // Up to five cells' worth, and often tiny or empty.
  const int most = static_cast<int>(5 * cell / 4);
  std::vector<Call> calls;
  for (int i = 0; i < number; ++i) {
    Call call;
    call.collective = kinds[random() % std::size(kinds)];
    call.root = static_cast<int>(random() % ranks);
    switch (random() % 4) {
      case 0:
        call.count = static_cast<int>(random() % 4);
        break;
      case 1:
        call.count = static_cast<int>(random() % 64);
        break;
      default:
        call.count = static_cast<int>(random() % most);
        break;
    }
    call.in_place = random() % 3 == 0;
    call.matrix = random() % 2 == 0;
    if (call.matrix) call.count = call.count / 4 * 4;
    calls.push_back(call);
  }
  return calls;
}

// Runs `call` as rank `me` and checks the result against the reference.
void RunAndCheck(NodeRegion& region, const Call& call, int number,
                 const Op* sum, const Op* matrix) {
  const int n = region.size();
  const int me = region.rank();
  const int count = call.count;
  Arguments a;
  a.root = call.root;
  a.type = MPI_UINT32_T;
  a.extent = 4;
  a.count = count;
  a.send_type = a.receive_type = MPI_UINT32_T;
  a.send_extent = a.receive_extent = 4;
  std::vector<uint32_t> send, receive;
  auto fill = [&](std::vector<uint32_t>& v, int items, int rank, int base) {
    v.resize(items);
    for (int i = 0; i < items; ++i) v[i] = Input(number, rank, base + i);
  };
  const uint32_t kUntouched = 0xdeadbeef;
  switch (call.collective) {
    case Collective::kBarrier:
      ASSERT_EQ(RunThroughRegion(region, call.collective, a),
                NodeOutcome::kDone);
      return;
    case Collective::kBcast: {
      receive.assign(count + 1, kUntouched);
      if (me == call.root)
        fill(receive, count, me, 0), receive.push_back(kUntouched);
      a.receive_buffer = receive.data();
      ASSERT_EQ(RunThroughRegion(region, call.collective, a),
                NodeOutcome::kDone);
      for (int i = 0; i < count; ++i) {
        ASSERT_EQ(receive[i], Input(number, call.root, i)) << "bcast " << i;
      }
      ASSERT_EQ(receive[count], kUntouched);
      return;
    }
    case Collective::kReduce:
    case Collective::kAllreduce: {
      const bool all = call.collective == Collective::kAllreduce;
      a.op = call.matrix ? matrix : sum;
      if (call.matrix) {  // items of four words
        a.extent = 16;
        a.count = count / 4;
      }
      fill(send, count, me, 0);
      receive.assign(count, kUntouched);
      if (call.in_place && (all || me == call.root)) {
        a.in_place = true;
        receive = send;
      } else {
        a.send_buffer = send.data();
      }
      a.receive_buffer = receive.data();
      ASSERT_EQ(RunThroughRegion(region, call.collective, a),
                NodeOutcome::kDone);
      if (!all && me != call.root) return;
      // Reference: x0 op x1 op ... op x(n-1), folded from the right.
      std::vector<uint32_t> expected(count), x(count);
      for (int i = 0; i < count; ++i) expected[i] = Input(number, n - 1, i);
      for (int r = n - 2; r >= 0; --r) {
        for (int i = 0; i < count; ++i) x[i] = Input(number, r, i);
        int items = count / 4;
        MPI_Datatype type = MPI_UINT32_T;
        if (call.matrix) {
          MatrixProduct(x.data(), expected.data(), &items, &type);
        } else {
          for (int i = 0; i < count; ++i) expected[i] += x[i];
        }
      }
      ASSERT_EQ(receive, expected) << (all ? "allreduce" : "reduce");
      return;
    }
    case Collective::kGather: {
      a.send_count = a.receive_count = count;
      fill(send, count, me, 0);
      a.send_buffer = send.data();
      if (me == call.root) {
        receive.assign(static_cast<size_t>(count) * n, kUntouched);
        if (call.in_place) {
          a.in_place = true;
          a.send_buffer = nullptr;
          std::copy(send.begin(), send.end(), receive.begin() + me * count);
        }
      }
      a.receive_buffer = receive.data();
      ASSERT_EQ(RunThroughRegion(region, call.collective, a),
                NodeOutcome::kDone);
      if (me != call.root) return;
      for (int r = 0; r < n; ++r) {
        for (int i = 0; i < count; ++i) {
          ASSERT_EQ(receive[r * count + i], Input(number, r, i)) << "gather";
        }
      }
      return;
    }
    case Collective::kScatter: {
      a.send_count = a.receive_count = count;
      if (me == call.root) {
        send.resize(static_cast<size_t>(count) * n);
        for (int r = 0; r < n; ++r) {
          for (int i = 0; i < count; ++i) {
            send[r * count + i] = Input(number, r, i);
          }
        }
        a.send_buffer = send.data();
      }
      receive.assign(count + 1, kUntouched);
      a.receive_buffer = receive.data();
      if (me == call.root && call.in_place) {
        a.in_place = true;
        a.receive_buffer = nullptr;
      }
      ASSERT_EQ(RunThroughRegion(region, call.collective, a),
                NodeOutcome::kDone);
      if (me == call.root && call.in_place) return;
      for (int i = 0; i < count; ++i) {
        ASSERT_EQ(receive[i], Input(number, me, i)) << "scatter";
      }
      ASSERT_EQ(receive[count], kUntouched);
      return;
    }
    case Collective::kAllgather: {
      a.send_count = a.receive_count = count;
      receive.assign(static_cast<size_t>(count) * n, kUntouched);
      fill(send, count, me, 0);
      if (call.in_place) {
        a.in_place = true;
        std::copy(send.begin(), send.end(), receive.begin() + me * count);
      } else {
        a.send_buffer = send.data();
      }
      a.receive_buffer = receive.data();
      ASSERT_EQ(RunThroughRegion(region, call.collective, a),
                NodeOutcome::kDone);
      for (int r = 0; r < n; ++r) {
        for (int i = 0; i < count; ++i) {
          ASSERT_EQ(receive[r * count + i], Input(number, r, i)) << "allgather";
        }
      }
      return;
    }
    case Collective::kAlltoall: {
      // Block r of rank s's input carries Input(number, s, r * count + i).
      a.send_count = a.receive_count = count;
      const size_t all = static_cast<size_t>(count) * n;
      fill(send, static_cast<int>(all), me, 0);
      receive.assign(all + 1, kUntouched);
      if (call.in_place) {
        a.in_place = true;
        std::copy(send.begin(), send.end(), receive.begin());
      } else {
        a.send_buffer = send.data();
      }
      a.receive_buffer = receive.data();
      ASSERT_EQ(RunThroughRegion(region, call.collective, a),
                NodeOutcome::kDone);
      for (int r = 0; r < n; ++r) {
        for (int i = 0; i < count; ++i) {
          ASSERT_EQ(receive[r * count + i], Input(number, r, me * count + i))
              << "alltoall from " << r << " item " << i;
        }
      }
      ASSERT_EQ(receive[all], kUntouched);
      return;
    }
    default:
      FAIL() << "not a node collective";
  }
}

// Every rank runs `calls` in order, checking each result.
void RunAllAndCheck(Node& node, const std::vector<Call>& calls, const Op* sum,
                    const Op* matrix) {
  node.Run([&](int rank) {
    for (size_t i = 0; i < calls.size(); ++i) {
      RunAndCheck(node.region(rank), calls[i], static_cast<int>(i), sum,
                  matrix);
      if (testing::Test::HasFatalFailure()) {
        ADD_FAILURE() << "rank " << rank << ", call " << i;
        std::abort();  // the other ranks would wait for this one forever
      }
    }
  });
}

class NodeCollectivesTest
    : public testing::TestWithParam<std::tuple<int, size_t, size_t, size_t>> {};

TEST_P(NodeCollectivesTest, MatchesTheReference) {
  const auto [ranks, cell, slot, direct_min] = GetParam();
  const Op* sum = LookupPredefinedOp(MPI_SUM);
  ASSERT_NE(sum, nullptr);
  Op* matrix = NewUserOp(&MatrixProduct, /*commutative=*/false);
  const std::vector<Call> calls =
      RandomCalls(ranks, cell, 300, 1234u + ranks * 17 + cell);
  Node node(ranks, cell, slot, direct_min);
  RunAllAndCheck(node, calls, sum, matrix);
  matrix->Release();
}

INSTANTIATE_TEST_SUITE_P(
    RanksAndCells, NodeCollectivesTest,
    testing::Combine(testing::Values(2, 3, 4, 7),
                     testing::Values(size_t{64}, size_t{256}, size_t{4096}),
                     // No slots; slots for the tiny calls; for most calls.
                     testing::Values(size_t{0}, size_t{16}, size_t{1024}),
                     // No direct copies; direct from 64 bytes per block.
                     testing::Values(size_t{0}, size_t{64})));

// Ranks that sleep in every wait and are woken only by posts: every post
// must wake every rank that may be asleep, with the fence on the posting
// side (false) and with the asymmetric fence (true: posts skip it, the
// sleeper runs membarrier). Small calls (slots) post most often.
class NodeCollectivesSleepers : public testing::TestWithParam<bool> {};

TEST_P(NodeCollectivesSleepers, EveryPostWakesItsSleepers) {
  const bool asymmetric_fence = GetParam();
  if (asymmetric_fence && !NodeRegion::CanUseAsymmetricFence()) {
    GTEST_SKIP() << "the kernel refuses membarrier's global expedited command";
  }
  const Op* sum = LookupPredefinedOp(MPI_SUM);
  ASSERT_NE(sum, nullptr);
  Op* matrix = NewUserOp(&MatrixProduct, /*commutative=*/false);
  for (int ranks : {2, 3}) {
    constexpr size_t kCell = 256;
    const std::vector<Call> calls =
        RandomCalls(ranks, kCell, 1500, 77u + ranks);
    Node node(ranks, kCell, /*slot=*/64, /*direct_min=*/0, Waiting::kSleep,
              asymmetric_fence);
    RunAllAndCheck(node, calls, sum, matrix);
    EXPECT_EQ(node.missed_wakes(), 0) << ranks << " ranks";
  }
  matrix->Release();
  // Barriers post and wait on both sides at once, where the stores cross.
  Node node(2, 64, 16, /*direct_min=*/0, Waiting::kSleep, asymmetric_fence);
  node.Run([&](int rank) {
    for (int i = 0; i < 100000; ++i) {
      RunThroughRegion(node.region(rank), Collective::kBarrier, {});
    }
  });
  EXPECT_EQ(node.missed_wakes(), 0) << "barriers";
}

INSTANTIATE_TEST_SUITE_P(Fences, NodeCollectivesSleepers, testing::Bool());

// Barriers above the flat limit take the gather-and-release form.
TEST(NodeCollectivesBarrier, ManyRanksNobodyLeavesEarly) {
  constexpr int kRanks = 20;
  Node node(kRanks, 64, 16);
  std::atomic<int> arrived{0};
  std::atomic<bool> early{false};
  node.Run([&](int rank) {
    for (int round = 1; round <= 50; ++round) {
      arrived.fetch_add(1);
      EXPECT_EQ(RunThroughRegion(node.region(rank), Collective::kBarrier, {}),
                NodeOutcome::kDone);
      if (arrived.load() < round * kRanks) early = true;
      // A second barrier so nobody counts the next round before all have
      // checked this one.
      RunThroughRegion(node.region(rank), Collective::kBarrier, {});
    }
  });
  EXPECT_FALSE(early);
}

// A root runs up to kSlots small calls ahead of its readers; a barrier
// then reuses the slot of the call kSlots back while a late reader may
// still read it: the reader must still get that call's count and data.
TEST(NodeCollectivesSlots, BarrierLeavesALateReadersSlotAlone) {
  constexpr int kRanks = 3;
  constexpr int kBcasts = NodeRegion::kSlots;
  Node node(kRanks, 256, 64);
  node.Run([&](int rank) {
    NodeRegion& region = node.region(rank);
    for (int round = 0; round < 200; ++round) {
      if (rank != 0) {
        // Readers come late, so the root is ahead when it reaches the
        // barrier.
        for (int i = 0; i < 200; ++i) sched_yield();
      }
      for (int b = 0; b < kBcasts; ++b) {
        uint32_t value[3] = {0, 0, 0};
        if (rank == 0) {
          for (int i = 0; i < 3; ++i) value[i] = Input(round, b, i);
        }
        Arguments a;
        a.root = 0;
        a.count = 3;
        a.type = MPI_UINT32_T;
        a.extent = 4;
        a.receive_buffer = value;
        ASSERT_EQ(RunThroughRegion(region, Collective::kBcast, a),
                  NodeOutcome::kDone);
        for (int i = 0; i < 3; ++i) {
          ASSERT_EQ(value[i], Input(round, b, i))
              << "rank " << rank << " round " << round << " bcast " << b;
        }
      }
      ASSERT_EQ(RunThroughRegion(region, Collective::kBarrier, {}),
                NodeOutcome::kDone);
    }
  });
}

// Counts that disagree: nobody hangs, nobody writes past its buffer, the
// ranks that can tell report truncation, and the next call is in step.
class NodeCollectivesMismatch
    : public testing::TestWithParam<std::tuple<size_t, size_t>> {};

TEST_P(NodeCollectivesMismatch, EveryRankReturnsAndStaysInStep) {
  constexpr int kRanks = 4;
  constexpr size_t kCell = 64;
  const auto [slot, direct_min] = GetParam();
  Node node(kRanks, kCell, slot, direct_min);
  const Op* sum = LookupPredefinedOp(MPI_SUM);
  node.Run([&](int rank) {
    NodeRegion& region = node.region(rank);
    // Bcast: the root sends 100 items (several cells), the others expect 3.
    std::vector<uint32_t> buffer(101, 7);
    if (rank == 0) {
      for (int i = 0; i < 100; ++i) buffer[i] = 1000 + i;
    }
    Arguments bcast;
    bcast.root = 0;
    bcast.count = rank == 0 ? 100 : 3;
    bcast.type = MPI_UINT32_T;
    bcast.extent = 4;
    bcast.receive_buffer = buffer.data();
    const NodeOutcome outcome =
        RunThroughRegion(region, Collective::kBcast, bcast);
    if (rank == 0) {
      EXPECT_EQ(outcome, NodeOutcome::kDone);
    } else {
      EXPECT_EQ(outcome, NodeOutcome::kTruncated);
      for (int i = 0; i < 3; ++i) EXPECT_EQ(buffer[i], 1000u + i);
      for (int i = 3; i < 101; ++i) EXPECT_EQ(buffer[i], 7u) << i;
    }
    // Allreduce: rank 1 passes 50 items, the others 2: all report it.
    std::vector<uint32_t> in(50, 1), out(51, 9);
    Arguments reduce;
    reduce.count = rank == 1 ? 50 : 2;
    reduce.type = MPI_UINT32_T;
    reduce.extent = 4;
    reduce.op = sum;
    reduce.send_buffer = in.data();
    reduce.receive_buffer = out.data();
    EXPECT_EQ(RunThroughRegion(region, Collective::kAllreduce, reduce),
              NodeOutcome::kTruncated);
    EXPECT_EQ(out[50], 9u);
    // Allgather: rank 2 sends 40 items, the others 1.
    std::vector<uint32_t> mine(40, rank), all(kRanks * 40, 5);
    Arguments gather;
    gather.send_count = rank == 2 ? 40 : 1;
    gather.receive_count = 1;
    gather.send_type = gather.receive_type = MPI_UINT32_T;
    gather.send_extent = gather.receive_extent = 4;
    gather.send_buffer = mine.data();
    gather.receive_buffer = all.data();
    EXPECT_EQ(RunThroughRegion(region, Collective::kAllgather, gather),
              NodeOutcome::kTruncated);
    for (size_t i = kRanks; i < all.size(); ++i) EXPECT_EQ(all[i], 5u);
    // Alltoall: rank 3 sends blocks of 30 items, the others of 1: all
    // report it, and nobody writes past its blocks of 1.
    std::vector<uint32_t> out_blocks(kRanks * 30, rank), in_blocks(kRanks, 6);
    Arguments exchange = gather;
    exchange.send_count = rank == 3 ? 30 : 1;
    exchange.receive_count = 1;
    exchange.send_buffer = out_blocks.data();
    exchange.receive_buffer = in_blocks.data();
    EXPECT_EQ(RunThroughRegion(region, Collective::kAlltoall, exchange),
              NodeOutcome::kTruncated);
    // Still in step: a correct allreduce.
    reduce.count = 3;
    EXPECT_EQ(RunThroughRegion(region, Collective::kAllreduce, reduce),
              NodeOutcome::kDone);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(out[i], uint32_t{kRanks});
  });
}

INSTANTIATE_TEST_SUITE_P(
    CellsAndSlots, NodeCollectivesMismatch,
    // Through the cells (many steps each), through slots (one step), and
    // allgather and alltoall reading directly.
    testing::Values(std::make_tuple(size_t{0}, size_t{0}),
                    std::make_tuple(size_t{1024}, size_t{0}),
                    std::make_tuple(size_t{0}, size_t{1})));

}  // namespace
}  // namespace minimpi::coll
