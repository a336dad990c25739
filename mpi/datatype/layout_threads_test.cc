// Layouts shared by threads: one thread's last LayoutRef may go while
// others still copy and read theirs (a nonblocking operation keeping the
// layout of a type the user already freed). Run under ThreadSanitizer in
// CI (tag "threaded").
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "mpi/datatype/layout.h"
#include "mpi/datatype/pack.h"
#include "mpi/mpi.h"

namespace minimpi::datatype {
namespace {

TEST(LayoutThreadsTest, ReferencesComeAndGoFromManyThreads) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 2000;
  for (int round = 0; round < 20; ++round) {
    LayoutRef shared = Vector(8, 1, 2, *PredefinedLayout(MPI_INT));
    std::vector<LayoutRef> handed(kThreads, shared);
    shared = LayoutRef();  // the "user" frees the type
    std::atomic<int64_t> packed{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        LayoutRef mine = std::move(handed[t]);
        int memory[16] = {};
        int out[8];
        for (int i = 0; i < kRounds; ++i) {
          LayoutRef copy = mine;  // retained and released concurrently
          packed += Pack(memory, 1, copy.get(), 0, out, sizeof(out));
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    EXPECT_EQ(packed.load(), int64_t{kThreads} * kRounds * 32);
  }
  // Predefined layouts are shared by every thread without counting.
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < kRounds; ++i) {
        LayoutRef integer = Predefined(MPI_INT);
        EXPECT_EQ(integer->size(), 4);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
}

}  // namespace
}  // namespace minimpi::datatype
