#include "mpi/vci/request.h"

#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace minimpi::vci {
namespace {

TEST(RequestPoolTest, AllocatesDistinctResetRequests) {
  RequestPool pool;
  std::set<Request*> seen;
  for (int i = 0; i < 200; ++i) {
    Request* request = pool.Allocate();
    EXPECT_TRUE(seen.insert(request).second);
    EXPECT_EQ(request->pool, &pool);
    EXPECT_EQ(request->state.load(), RequestState::kInactive);
    request->status.bytes = 99;
  }
  for (Request* request : seen) pool.Release(request);
  // Released requests come back (after any never-used ones), reset.
  int reused = 0;
  for (int i = 0; i < 400; ++i) {
    Request* again = pool.Allocate();
    if (seen.count(again)) {
      ++reused;
      EXPECT_EQ(again->status.bytes, 0u);
    }
  }
  EXPECT_EQ(reused, 200);
}

// Requests are allocated under a lock by one thread and released from many
// (the threads that waited on them); nothing may be lost or handed out twice.
TEST(RequestPoolTest, ConcurrentReleaseLosesNothing) {
  RequestPool pool;
  constexpr int kThreads = 4;
  constexpr int kPerThread = 5000;
  std::mutex allocate_lock;
  std::vector<std::thread> threads;
  std::atomic<int> live{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        Request* request;
        {
          std::lock_guard<std::mutex> lock(allocate_lock);
          request = pool.Allocate();
        }
        // Ownership check: a request handed out twice would see this flip.
        EXPECT_EQ(request->send.bytes, 0u);
        request->send.bytes = 1;
        live.fetch_add(1);
        live.fetch_sub(1);
        pool.Release(request);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(live.load(), 0);
}

TEST(CommonVciTest, TheVciOfEveryActiveRequestOrMinusOne) {
  RequestPool pool;
  Request* a = pool.Allocate();
  Request* b = pool.Allocate();
  Request* inactive = pool.Allocate();
  a->vci = 2;
  b->vci = 2;
  inactive->vci = 5;
  a->state.store(RequestState::kActive);
  b->state.store(RequestState::kComplete);  // done, not yet collected
  // An inactive persistent request and a null one do not count.
  std::vector<Request*> requests = {a, nullptr, inactive, b};
  EXPECT_EQ(CommonVci(requests), 2);
  b->vci = 3;
  EXPECT_EQ(CommonVci(requests), -1);
  EXPECT_EQ(CommonVci(std::vector<Request*>{inactive, nullptr}), -1);
  EXPECT_EQ(CommonVci({}), -1);
  for (Request* request : {a, b, inactive}) pool.Release(request);
}

}  // namespace
}  // namespace minimpi::vci
