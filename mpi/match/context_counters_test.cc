// ContextCounters read by a tool thread while an engine counts under its
// lock (the VCI's), as MPI_T reads them: run under ThreadSanitizer (tag
// threaded), and the reader checks that counters only grow and that the
// levels end where the traffic leaves them. The reader also names owners
// (what mpi/ does off the VCI's lock) of contexts the writer is still
// making, so chunk creation races from both sides.
#include "mpi/match/context_counters.h"

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "mpi/match/match_engine.h"

namespace minimpi::match {
namespace {

constexpr int kContexts = 300;  // several chunks of the table

class ContextCountersThreadsTest
    : public ::testing::TestWithParam<std::string> {};

TEST_P(ContextCountersThreadsTest, ReadWhileCounting) {
  auto created = CreateMatchEngine(GetParam());
  ASSERT_TRUE(created.ok()) << created.status();
  std::unique_ptr<MatchEngine> engine = std::move(created).value();
  std::mutex lock;  // the VCI's
  std::atomic<bool> done{false};
  std::deque<UnexpectedMessage> messages;  // stable addresses
  std::deque<PostedReceive> receives;
  constexpr int kRounds = 40;

  std::thread reader([&] {
    std::vector<uint64_t> last_searches(kContexts, 0);
    int owners = 0;
    while (!done.load(std::memory_order_acquire)) {
      for (int32_t c = 0; c < kContexts; ++c) {
        if (c % 7 == 0 && owners < kContexts) {
          engine->contexts().Make(c).owner.store(&lock,
                                                 std::memory_order_release);
          ++owners;
        }
        const ContextCounters* counters = engine->contexts().Find(c);
        if (counters == nullptr) continue;
        const uint64_t searches = counters->unexpected.searches.Read();
        EXPECT_GE(searches, last_searches[c]) << "context " << c;
        last_searches[c] = searches;
        EXPECT_LE(counters->unexpected.length.Read(),
                  counters->unexpected.high_watermark.Read() + 1);
      }
      uint64_t total = 0;
      engine->contexts().ForEach([&](int32_t, const ContextCounters& counters) {
        total += counters.posted.searches.Read();
      });
      (void)engine->longest(false, false);
      (void)engine->partner_promotions();
    }
  });

  for (int round = 0; round < kRounds; ++round) {
    // Every context gets three unexpected messages from two senders, then
    // receives for them in order.
    for (int32_t c = 0; c < kContexts; ++c) {
      for (int i = 0; i < 3; ++i) {
        std::lock_guard guard(lock);
        UnexpectedMessage& m = messages.emplace_back();
        m.arrived = {c, i % 2, round * 10 + i};
        if (engine->MatchArrival(m.arrived, m.traffic) == nullptr) {
          engine->AddUnexpected(&m);
        }
      }
    }
    for (int32_t c = 0; c < kContexts; ++c) {
      for (int i = 0; i < 3; ++i) {
        std::lock_guard guard(lock);
        PostedReceive& r = receives.emplace_back();
        r.wanted = {c, i % 2, round * 10 + i};
        ASSERT_NE(engine->MatchPosted(&r), nullptr);
      }
    }
  }
  done.store(true, std::memory_order_release);
  reader.join();

  for (int32_t c = 0; c < kContexts; ++c) {
    const ContextCounters* counters = engine->contexts().Find(c);
    ASSERT_NE(counters, nullptr);
    EXPECT_EQ(counters->unexpected.length.Read(), 0u);
    EXPECT_EQ(counters->unexpected.high_watermark.Read(), 3u);
    EXPECT_EQ(counters->posted.searches.Read(), 3u * kRounds);
    EXPECT_EQ(counters->unexpected.searches.Read(), 3u * kRounds);
    EXPECT_EQ(counters->unexpected.matches.Read(), 3u * kRounds);
    EXPECT_EQ(counters->arrivals_by_kind[0].Read(), 3u * kRounds);
    EXPECT_EQ(counters->owner.load() != nullptr, c % 7 == 0);
  }
}

INSTANTIATE_TEST_SUITE_P(AllEngines, ContextCountersThreadsTest,
                         ::testing::ValuesIn(MatchEngineNames()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& ch : name) {
                             if (ch == '+') ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace minimpi::match
