// The matching engine named on the command line, used by many threads at
// once through the whole library: one VCI, so every thread shares one
// engine, and a threshold of 4, so PNP promotes partners and opens levels
// while other threads search and insert. Each thread floods its own
// communicator (a sender of its own to the engine) with unexpected messages,
// some threads far more than others, then takes them back with specific
// tags, MPI_ANY_TAG and MPI_ANY_SOURCE, checking which message each receive
// gets: MPI's order within one sender must survive every structure change.
// CI runs it under ThreadSanitizer.
#include <mpi.h>

#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace {

constexpr int kThreads = 4;

int Payload(int thread, int round, int tag) {
  return thread * 1000000 + round * 1000 + tag;
}

// Thread `thread` sends `burst` messages tagged 0..burst-1 to itself on
// `comm`, then receives them: odd tags by name from the top down, then the
// rest with wildcards, which must find them in send order.
// All threads send before any receives (`round_done`), so the shared
// queue holds every thread's messages when it reaches the threshold.
void FloodAndDrain(MPI_Comm comm, int thread, int burst, int rounds,
                   std::barrier<>* round_done,
                   std::vector<std::string>* failures) {
  auto fail = [&](const std::string& what, int round) {
    failures->push_back("thread " + std::to_string(thread) + " round " +
                        std::to_string(round) + ": " + what);
  };
  for (int round = 0; round < rounds; ++round) {
    std::vector<int> out(burst);
    std::vector<MPI_Request> sends(burst);
    for (int tag = 0; tag < burst; ++tag) {
      out[tag] = Payload(thread, round, tag);
      MPI_Isend(&out[tag], 1, MPI_INT, 0, tag, comm, &sends[tag]);
    }
    round_done->arrive_and_wait();
    for (int tag = burst - 1 - (burst % 2 == 0 ? 0 : 1); tag >= 1; tag -= 2) {
      int in = -1;
      MPI_Recv(&in, 1, MPI_INT, 0, tag, comm, MPI_STATUS_IGNORE);
      if (in != Payload(thread, round, tag)) fail("named receive", round);
    }
    for (int tag = 0; tag < burst; tag += 2) {
      int in = -1;
      MPI_Status status;
      const int source = tag % 4 == 0 ? MPI_ANY_SOURCE : 0;
      MPI_Recv(&in, 1, MPI_INT, source, MPI_ANY_TAG, comm, &status);
      if (status.MPI_TAG != tag || in != Payload(thread, round, tag)) {
        fail("wildcard receive got tag " + std::to_string(status.MPI_TAG) +
                 ", expected " + std::to_string(tag),
             round);
      }
    }
    MPI_Waitall(burst, sends.data(), MPI_STATUSES_IGNORE);
  }
}

std::string* engine_name = nullptr;

class MatchThreadsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("MINIMPI_MATCH", engine_name->c_str(), 1);
    setenv("MINIMPI_NUM_VCIS", "1", 1);
    setenv("MINIMPI_MATCH_THETA", "4", 1);
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    ASSERT_EQ(provided, MPI_THREAD_MULTIPLE);
  }
  static void TearDownTestSuite() { MPI_Finalize(); }
};

TEST_F(MatchThreadsTest, HeavyAndLightSendersKeepTheirOrder) {
  std::vector<MPI_Comm> comms(kThreads);
  for (auto& comm : comms) MPI_Comm_dup(MPI_COMM_SELF, &comm);
  std::vector<std::vector<std::string>> failures(kThreads);
  std::vector<std::thread> threads;
  std::barrier round_done(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    // Thread 0 is the heavy sender; the others send a few each round.
    const int burst = t == 0 ? 40 : 6;
    threads.emplace_back(FloodAndDrain, comms[t], t, burst, 150, &round_done,
                         &failures[t]);
  }
  for (auto& thread : threads) thread.join();
  for (const auto& list : failures) {
    for (const auto& failure : list) ADD_FAILURE() << failure;
  }
  for (auto& comm : comms) MPI_Comm_free(&comm);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s ENGINE\n", argv[0]);
    return 2;
  }
  std::string engine = argv[1];
  engine_name = &engine;
  return RUN_ALL_TESTS();
}
