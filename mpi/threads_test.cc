// MPI_THREAD_MULTIPLE through the whole library in one process: the
// singleton (no launcher) sends to itself from many threads at once, on one
// communicator and on duplicated ones, eager and rendezvous sizes, every byte
// checked. CI runs it under ThreadSanitizer, which is the point: the VCI
// locks, the request pools and the completion flags must be race-free.
#include <mpi.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace {

constexpr int kThreads = 4;

uint8_t PatternByte(int thread, int message, size_t index) {
  return static_cast<uint8_t>(thread * 31 + message * 7 + index * 13);
}

// Each thread exchanges `messages` messages with itself through `comm`,
// using its own tag so threads sharing a communicator never match each
// other's traffic.
void Exchange(MPI_Comm comm, int thread, int messages, size_t bytes,
              std::vector<std::string>* failures) {
  std::vector<uint8_t> out(bytes), in(bytes);
  for (int m = 0; m < messages; ++m) {
    for (size_t i = 0; i < bytes; ++i) out[i] = PatternByte(thread, m, i);
    std::fill(in.begin(), in.end(), 0);
    MPI_Request requests[2];
    MPI_Irecv(in.data(), static_cast<int>(bytes), MPI_BYTE, 0, thread, comm,
              &requests[0]);
    MPI_Isend(out.data(), static_cast<int>(bytes), MPI_BYTE, 0, thread, comm,
              &requests[1]);
    MPI_Status statuses[2];
    MPI_Waitall(2, requests, statuses);
    int count = -1;
    MPI_Get_count(&statuses[0], MPI_BYTE, &count);
    if (count != static_cast<int>(bytes) || statuses[0].MPI_TAG != thread ||
        in != out) {
      failures->push_back("thread " + std::to_string(thread) + " message " +
                          std::to_string(m) + " of " + std::to_string(bytes) +
                          " bytes arrived wrong");
      return;
    }
  }
}

class ThreadsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    ASSERT_EQ(provided, MPI_THREAD_MULTIPLE);
  }
  static void TearDownTestSuite() { MPI_Finalize(); }

  void RunThreads(const std::vector<MPI_Comm>& comms, int messages,
                  size_t bytes) {
    std::vector<std::vector<std::string>> failures(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back(Exchange, comms[t % comms.size()], t, messages,
                           bytes, &failures[t]);
    }
    for (auto& thread : threads) thread.join();
    for (const auto& list : failures) {
      for (const auto& failure : list) ADD_FAILURE() << failure;
    }
  }
};

TEST_F(ThreadsTest, ManyThreadsOneCommunicatorEager) {
  RunThreads({MPI_COMM_WORLD}, 500, 100);
}

TEST_F(ThreadsTest, ManyThreadsOneCommunicatorRendezvous) {
  RunThreads({MPI_COMM_WORLD}, 20, 100000);
}

TEST_F(ThreadsTest, ThreadPerDuplicatedCommunicator) {
  std::vector<MPI_Comm> comms(kThreads);
  for (auto& comm : comms) MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  RunThreads(comms, 300, 1000);
  RunThreads(comms, 10, 70000);
  for (auto& comm : comms) MPI_Comm_free(&comm);
}

TEST_F(ThreadsTest, ConcurrentWildcardReceivesGetEveryMessageOnce) {
  constexpr int kPerThread = 200;
  std::vector<int> seen(kThreads * kPerThread, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &seen] {
      for (int m = 0; m < kPerThread; ++m) {
        int value = t * kPerThread + m;
        MPI_Request request;
        MPI_Isend(&value, 1, MPI_INT, 0, 77, MPI_COMM_SELF, &request);
        int received = -1;
        MPI_Recv(&received, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                 MPI_COMM_SELF, MPI_STATUS_IGNORE);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        // Any thread may get any message; each value must arrive once.
        if (received >= 0 && received < kThreads * kPerThread) {
          __atomic_fetch_add(&seen[received], 1, __ATOMIC_RELAXED);
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int v = 0; v < kThreads * kPerThread; ++v) {
    ASSERT_EQ(seen[v], 1) << "value " << v;
  }
}

// Messages nobody receives, on a communicator other than MPI_COMM_WORLD,
// small (recycled records) and not so small: MPI_Finalize must free their
// records. The ASan build's leak checker fails this test if it does not.
TEST_F(ThreadsTest, UnreceivedMessagesDoNotLeak) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  std::vector<char> small(16, 'a'), larger(4000, 'b');
  MPI_Send(small.data(), static_cast<int>(small.size()), MPI_CHAR, 0, 1, comm);
  MPI_Send(larger.data(), static_cast<int>(larger.size()), MPI_CHAR, 0, 2,
           comm);
  int flag = 0;
  MPI_Status status;
  MPI_Iprobe(0, 2, comm, &flag, &status);
  EXPECT_TRUE(flag);
  int count = 0;
  MPI_Get_count(&status, MPI_CHAR, &count);
  EXPECT_EQ(count, 4000);
  // A received small message returns its record to the pool for reuse.
  MPI_Send(small.data(), 8, MPI_CHAR, 0, 3, comm);
  char got[8] = {};
  MPI_Recv(got, 8, MPI_CHAR, 0, 3, comm, MPI_STATUS_IGNORE);
  EXPECT_EQ(std::string(got, 8), "aaaaaaaa");
  MPI_Comm_free(&comm);
}

}  // namespace
