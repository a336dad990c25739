// The one-sided engine alone, over the loopback transport: a window with
// two members in one process (the members are two VCIs of rank 0), so each
// member's operations travel through the transport to the other exactly
// as between processes. Checked against plain reference computations:
//   - puts and gets between vector and contiguous layouts, byte for byte,
//     with the transport refusing every 2nd, 3rd or 7th post;
//   - accumulates from several threads at once are atomic per element
//     (the totals are exact) and fetch-and-op tickets are all distinct;
//   - the lock manager never grants an exclusive lock beside another
//     holder (threads take shared and exclusive locks at random and check
//     a counter only the holders touch);
//   - a dynamic window refuses accesses outside what it attached, puts
//     and gets included (they travel as accumulates the target checks).
// Tagged threaded: CI also runs it under ThreadSanitizer.
#include "mpi/rma/one_sided.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "mpi/datatype/layout.h"
#include "mpi/vci/vci_set.h"
#include "net/testing/loopback_transport.h"
#include "runtime/settings.h"

namespace minimpi::rma {
namespace {

uint32_t HandleWord(const void* handle) {
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(handle));
}

// The engine itself sends MPI_REPLACE and MPI_NO_OP (a dynamic window's
// puts and gets), so the test's rule knows those two by their handles.
constexpr uint32_t kSum = 1;
const uint32_t kReplace = HandleWord(MPI_REPLACE);
const uint32_t kNoOp = HandleWord(MPI_NO_OP);
constexpr uint32_t kInt = 7;

// The test's own accumulate rule: sums of int32, replace, or nothing.
bool ApplyForTest(uint32_t op, uint32_t /*basic*/, const void* in,
                  void* inout, int64_t bytes) {
  if (op == kReplace) {
    std::memcpy(inout, in, bytes);
    return true;
  }
  if (op == kNoOp) return true;
  if (op != kSum) return false;
  const auto* a = static_cast<const int32_t*>(in);
  auto* b = static_cast<int32_t*>(inout);
  for (int64_t i = 0; i < bytes / 4; ++i) b[i] += a[i];
  return true;
}

class OneSidedTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    net::testing::LoopbackOptions options;
    options.num_vcis = 2;
    options.refuse_every = GetParam();
    transport_ = std::make_unique<net::testing::LoopbackTransport>(options);
    runtime::Settings settings;
    settings.num_vcis = 2;
    vci::WaitPolicy policy;
    policy.then = vci::WaitPolicy::Then::kSpin;
    auto vcis = vci::VciSet::Create(transport_.get(), settings, policy);
    ASSERT_TRUE(vcis.ok()) << vcis.status();
    vcis_ = std::move(vcis).value();
    auto engine = OneSided::Create(*vcis_, &ApplyForTest,
                                   {.progress_thread = false});
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = std::move(engine).value();
  }
  void TearDown() override {
    engine_.reset();
    vcis_.reset();
  }

  // Both members of a window over memory[0] and memory[1].
  void OpenWindow(void* memory0, void* memory1, uint64_t bytes, int disp_unit,
                  Flavor flavor = Flavor::kCreate) {
    void* memory[2] = {memory0, memory1};
    std::vector<TargetInfo> infos;
    for (int member = 0; member < 2; ++member) {
      auto window = engine_->Open(memory[member], bytes, disp_unit, flavor,
                                  member, {0, 0}, {0, 1});
      ASSERT_TRUE(window.ok()) << window.status();
      members_[member] = *window;
      infos.push_back(engine_->Describe(**window));
    }
    for (Window* member : members_) engine_->Publish(*member, infos);
  }
  void CloseWindow() {
    for (Window*& member : members_) {
      engine_->Close(member);
      member = nullptr;
    }
  }

  std::unique_ptr<net::testing::LoopbackTransport> transport_;
  std::unique_ptr<vci::VciSet> vcis_;
  std::unique_ptr<OneSided> engine_;
  Window* members_[2] = {nullptr, nullptr};
};

TEST_P(OneSidedTest, PutsAndGetsFollowBothLayouts) {
  constexpr int kInts = 4096;
  std::vector<int32_t> memory0(kInts, -1), memory1(kInts, -1);
  OpenWindow(memory0.data(), memory1.data(), kInts * 4, 4);
  const datatype::Layout* int_layout = datatype::PredefinedLayout(MPI_INT);
  // Origin: every third int of `source`; target: 1000 ints from int 17.
  datatype::LayoutRef every_third = datatype::Vector(1000, 1, 3, *int_layout);
  std::vector<int32_t> source(3000);
  std::iota(source.begin(), source.end(), 5000);
  engine_->Put(*members_[0], {source.data(), 1, every_third.get()},
               {1, 17, 1000, int_layout}, nullptr);
  engine_->WaitForOperations(*members_[0], -1);
  std::vector<int32_t> expected(kInts, -1);
  for (int i = 0; i < 1000; ++i) expected[17 + i] = source[3 * i];
  EXPECT_EQ(memory1, expected);

  // Get back with the target seen as pairs of ints two apart.
  datatype::LayoutRef pairs = datatype::Vector(250, 2, 4, *int_layout);
  std::vector<int32_t> result(500, 0);
  engine_->Get(*members_[0], {result.data(), 500, int_layout},
               {1, 17, 1, pairs.get()}, nullptr);
  engine_->WaitForOperations(*members_[0], -1);
  for (int i = 0; i < 250; ++i) {
    ASSERT_EQ(result[2 * i], expected[17 + 4 * i]) << i;
    ASSERT_EQ(result[2 * i + 1], expected[17 + 4 * i + 1]) << i;
  }
  if (GetParam() > 0) EXPECT_GT(transport_->refusals(), 0u);
  CloseWindow();
}

TEST_P(OneSidedTest, AccumulatesFromThreadsAreAtomic) {
  constexpr int kCounters = 64;
  constexpr int kThreads = 4;
  constexpr int kRounds = 200;
  std::vector<int32_t> memory0(kCounters + 1, 0), memory1(kCounters + 1, 0);
  OpenWindow(memory0.data(), memory1.data(), (kCounters + 1) * 4, 4);
  const datatype::Layout* int_layout = datatype::PredefinedLayout(MPI_INT);
  std::vector<std::vector<int32_t>> tickets(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<int32_t> ones(kCounters, 1);
      const int32_t one = 1;
      for (int round = 0; round < kRounds; ++round) {
        engine_->Accumulate(*members_[0], {ones.data(), kCounters, int_layout},
                            nullptr, {1, 0, kCounters, int_layout}, kSum, kInt,
                            nullptr);
        int32_t ticket = -1;
        Buffer result{&ticket, 1, int_layout};
        engine_->Accumulate(*members_[0], {&one, 1, int_layout}, &result,
                            {1, kCounters, 1, int_layout}, kSum, kInt,
                            nullptr);
        engine_->WaitForOperations(*members_[0], 1);
        tickets[t].push_back(ticket);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int i = 0; i < kCounters; ++i) {
    ASSERT_EQ(memory1[i], kThreads * kRounds) << "counter " << i;
  }
  std::vector<int32_t> all;
  for (const auto& list : tickets) all.insert(all.end(), list.begin(), list.end());
  std::sort(all.begin(), all.end());
  std::vector<int32_t> expected(kThreads * kRounds);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(all, expected);
  CloseWindow();
}

TEST_P(OneSidedTest, ExclusiveLocksExcludeEveryone) {
  std::vector<int32_t> memory0(4, 0), memory1(4, 0);
  OpenWindow(memory0.data(), memory1.data(), 16, 4);
  // Threads of member 0 lock member 1 at random; member 0 has one lock
  // state per target, so each thread uses the target's lock through the
  // engine directly and checks who else holds it.
  std::atomic<int> exclusive_holders{0}, shared_holders{0};
  std::atomic<bool> broken{false};
  std::mutex origin_mutex;  // one epoch per (origin, target) at a time
  // While holding the lock: nobody else may hold it exclusively, and an
  // exclusive holder is alone.
  auto hold = [&](bool exclusive) {
    if (exclusive) {
      if (exclusive_holders.fetch_add(1) != 0 || shared_holders.load() != 0) {
        broken = true;
      }
      exclusive_holders.fetch_sub(1);
    } else {
      shared_holders.fetch_add(1);
      if (exclusive_holders.load() != 0) broken = true;
      shared_holders.fetch_sub(1);
    }
  };
  // Member `origin` locks member 1 100 times, exclusively one time in
  // `one_in`.
  auto worker = [&](int origin, int seed, int one_in, std::mutex* one_epoch) {
    std::mt19937 random(seed);
    for (int i = 0; i < 100; ++i) {
      const bool exclusive = random() % one_in == 0;
      std::unique_lock<std::mutex> epoch;
      if (one_epoch != nullptr) epoch = std::unique_lock<std::mutex>(*one_epoch);
      engine_->Lock(*members_[origin], 1, exclusive);
      hold(exclusive);
      engine_->Unlock(*members_[origin], 1, exclusive);
    }
  };
  std::thread a(worker, 0, 1, 3, &origin_mutex);
  std::thread b(worker, 0, 2, 3, &origin_mutex);
  // Member 1 locks itself too, from its own VCI.
  std::thread c(worker, 1, 3, 2, nullptr);
  a.join();
  b.join();
  c.join();
  EXPECT_FALSE(broken);
  CloseWindow();
}

// What a tool reads of lock waits: a request the target queued behind
// another holder is counted once at its origin, when its grant comes; one
// granted at once is not; Lock's time waiting is counted either way.
TEST_P(OneSidedTest, QueuedLockRequestsAreCountedAtTheirOrigin) {
  std::vector<int32_t> memory0(4, 0), memory1(4, 0);
  OpenWindow(memory0.data(), memory1.data(), 16, 4);
  Window& origin = *members_[0];
  Window& target = *members_[1];
  engine_->Lock(target, 1, /*exclusive=*/true);  // granted at once
  EXPECT_EQ(target.lock_waits.Read(), 0u);
  std::thread waiter([&] {
    engine_->Lock(origin, 1, /*exclusive=*/true);
    engine_->Unlock(origin, 1, /*exclusive=*/true);
  });
  // Until the target's lock manager holds the request back.
  for (;;) {
    vcis_->TryProgress(target.vci);
    std::lock_guard lock(vcis_->mutex(target.vci));
    if (!target.lock_queue.empty()) break;
  }
  EXPECT_EQ(origin.lock_waits.Read(), 0u);
  engine_->Unlock(target, 1, /*exclusive=*/true);
  waiter.join();
  EXPECT_EQ(origin.lock_waits.Read(), 1u);
  EXPECT_EQ(target.lock_waits.Read(), 0u);
  EXPECT_GT(origin.lock_wait_ns.Read(), 0u);
  EXPECT_GT(target.lock_wait_ns.Read(), 0u);
  CloseWindow();
}

TEST_P(OneSidedTest, DynamicWindowRefusesWhatIsNotAttached) {
  OpenWindow(nullptr, nullptr, 0, 1, Flavor::kDynamic);
  std::vector<int32_t> attached(16, 0), other(16, 0);
  ASSERT_TRUE(engine_->Attach(*members_[1], attached.data(), 64));
  EXPECT_FALSE(engine_->Attach(*members_[1], attached.data() + 4, 8));
  const datatype::Layout* bytes = datatype::PredefinedLayout(MPI_BYTE);
  int32_t value = 77;
  engine_->Accumulate(
      *members_[0], {&value, 4, bytes}, nullptr,
      {1, static_cast<int64_t>(reinterpret_cast<uintptr_t>(&attached[3])), 4,
       bytes},
      kReplace, kInt, nullptr);
  engine_->Accumulate(
      *members_[0], {&value, 4, bytes}, nullptr,
      {1, static_cast<int64_t>(reinterpret_cast<uintptr_t>(&other[3])), 4,
       bytes},
      kReplace, kInt, nullptr);
  engine_->WaitForOperations(*members_[0], -1);
  EXPECT_EQ(attached[3], 77);
  EXPECT_EQ(other[3], 0);
  EXPECT_EQ(engine_->TakeRefusals(*members_[0]), 1);
  EXPECT_TRUE(engine_->Detach(*members_[1], attached.data()));
  EXPECT_FALSE(engine_->Detach(*members_[1], attached.data()));
  CloseWindow();
}

// Put and Get on a dynamic window go as accumulates of bytes, checked by
// the target against its attached memory: in range they move the data,
// outside it they are refused (an RDMA write would have landed).
TEST_P(OneSidedTest, DynamicWindowPutsAndGetsTravelAsCheckedAccumulates) {
  OpenWindow(nullptr, nullptr, 0, 1, Flavor::kDynamic);
  std::vector<int32_t> attached(8, 0), other(8, 0);
  ASSERT_TRUE(engine_->Attach(*members_[1], attached.data(), 32));
  const datatype::Layout* bytes = datatype::PredefinedLayout(MPI_BYTE);
  auto at = [](const int32_t* place) {
    return static_cast<int64_t>(reinterpret_cast<uintptr_t>(place));
  };
  int32_t values[3] = {5, 6, 7};
  engine_->Put(*members_[0], {values, 12, bytes},
               {1, at(&attached[2]), 12, bytes}, nullptr);
  engine_->WaitForOperations(*members_[0], -1);
  EXPECT_EQ(attached, (std::vector<int32_t>{0, 0, 5, 6, 7, 0, 0, 0}));
  int32_t back[4] = {-1, -1, -1, -1};
  engine_->Get(*members_[0], {back, 16, bytes},
               {1, at(&attached[1]), 16, bytes}, nullptr);
  engine_->WaitForOperations(*members_[0], -1);
  EXPECT_EQ(back[0], 0);
  EXPECT_EQ(back[1], 5);
  EXPECT_EQ(back[2], 6);
  EXPECT_EQ(back[3], 7);
  EXPECT_EQ(engine_->TakeRefusals(*members_[0]), 0);
  engine_->Put(*members_[0], {values, 12, bytes},
               {1, at(&other[2]), 12, bytes}, nullptr);
  engine_->WaitForOperations(*members_[0], -1);
  EXPECT_EQ(other, std::vector<int32_t>(8, 0));
  EXPECT_EQ(engine_->TakeRefusals(*members_[0]), 1);
  EXPECT_TRUE(engine_->Detach(*members_[1], attached.data()));
  CloseWindow();
}

INSTANTIATE_TEST_SUITE_P(Refusals, OneSidedTest,
                         ::testing::Values(0, 2, 3, 7));

}  // namespace
}  // namespace minimpi::rma
