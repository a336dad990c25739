// Partitioned communication from many threads, in one process: the
// singleton sends to itself, so CI runs this under ThreadSanitizer (the
// multi-rank tests are not). Threads mark partitions ready in random order
// with MPI_Pready, MPI_Pready_range and MPI_Pready_list while other threads
// poll MPI_Parrived and check each partition's bytes the moment it reports
// arrived; under every aggregator, with several requests used at once by
// different threads on different communicators.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace {

constexpr const char* kAggregators[] = {"none",   "size",  "table",
                                        "ploggp", "timer", "adaptive"};

int32_t Pattern(int round, int64_t element) {
  return static_cast<int32_t>(element * 2654435761u + round * 977);
}

class PartitionedThreadsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    }
  }
};

// One pair of requests on `comm` with `tag`: `markers` threads mark the
// send's partitions (each its own share, in random order, by one of the
// three calls), `pollers` threads poll the receive's partitions and check
// them; `rounds` rounds, the receive started first or second in turn.
std::string RunPair(MPI_Comm comm, int tag, const char* aggregator,
                    int send_partitions, int receive_partitions, int64_t total,
                    int markers, int pollers, int rounds, unsigned seed) {
  std::vector<int32_t> out(total), in(total);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "minimpi_part_aggr", aggregator);
  MPI_Request send, receive;
  MPI_Psend_init(out.data(), send_partitions, total / send_partitions,
                 MPI_INT32_T, 0, tag, comm, info, &send);
  MPI_Precv_init(in.data(), receive_partitions, total / receive_partitions,
                 MPI_INT32_T, 0, tag, comm, MPI_INFO_NULL, &receive);
  MPI_Info_free(&info);

  std::atomic<bool> failed{false};
  std::string failure;  // written once, by the thread that sets `failed`
  std::barrier sync(markers + pollers + 1);
  std::vector<std::thread> threads;
  for (int t = 0; t < markers; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 random(seed * 101 + t);
      for (int round = 0; round < rounds; ++round) {
        sync.arrive_and_wait();  // started
        // This thread's block of partitions, cut into runs of 1 to 4 that
        // are marked in random order, each run by one of the three calls.
        const int begin = t * send_partitions / markers;
        const int end = (t + 1) * send_partitions / markers;
        std::vector<std::pair<int, int>> runs;  // [first, last]
        for (int p = begin; p < end;) {
          const int length =
              std::min<int>(1 + static_cast<int>(random() % 4), end - p);
          runs.push_back({p, p + length - 1});
          p += length;
        }
        std::shuffle(runs.begin(), runs.end(), random);
        for (auto [first, last] : runs) {
          switch (random() % 3) {
            case 0:
              MPI_Pready_range(first, last, send);
              break;
            case 1: {
              std::vector<int> list;
              for (int p = last; p >= first; --p) list.push_back(p);
              MPI_Pready_list(static_cast<int>(list.size()), list.data(), send);
              break;
            }
            default:
              for (int p = first; p <= last; ++p) MPI_Pready(p, send);
          }
        }
        sync.arrive_and_wait();  // all marked
      }
    });
  }
  for (int t = 0; t < pollers; ++t) {
    threads.emplace_back([&, t] {
      const int64_t each = total / receive_partitions;
      for (int round = 0; round < rounds; ++round) {
        sync.arrive_and_wait();
        std::vector<int> left;
        for (int p = t; p < receive_partitions; p += pollers) {
          left.push_back(p);
        }
        while (!left.empty() && !failed.load()) {
          for (size_t i = 0; i < left.size();) {
            int flag = 0;
            MPI_Parrived(receive, left[i], &flag);
            if (!flag) {
              ++i;
              continue;
            }
            for (int64_t e = left[i] * each; e < (left[i] + 1) * each; ++e) {
              if (in[e] != Pattern(round, e) && !failed.exchange(true)) {
                failure = std::string(aggregator) + ": partition " +
                          std::to_string(left[i]) +
                          " reported arrived in "
                          "round " +
                          std::to_string(round) + " with a wrong element " +
                          std::to_string(e);
              }
            }
            left[i] = left.back();
            left.pop_back();
          }
        }
        sync.arrive_and_wait();
      }
    });
  }
  for (int round = 0; round < rounds; ++round) {
    for (int64_t e = 0; e < total; ++e) out[e] = Pattern(round, e);
    std::fill(in.begin(), in.end(), -1);
    if (round % 2 == 0) {
      MPI_Start(&receive);
      MPI_Start(&send);
    } else {
      MPI_Request both[2] = {send, receive};
      MPI_Startall(2, both);
    }
    sync.arrive_and_wait();
    sync.arrive_and_wait();
    MPI_Request both[2] = {send, receive};
    MPI_Waitall(2, both, MPI_STATUSES_IGNORE);
    if (in != out && !failed.exchange(true)) {
      failure = std::string(aggregator) + ": round " + std::to_string(round) +
                " delivered wrong data";
    }
  }
  for (std::thread& thread : threads) thread.join();
  MPI_Request_free(&send);
  MPI_Request_free(&receive);
  return failed.load() ? failure : "";
}

TEST_F(PartitionedThreadsTest, ManyThreadsMarkAndPollUnderEveryAggregator) {
  unsigned seed = 1;
  for (const char* aggregator : kAggregators) {
    EXPECT_EQ(RunPair(MPI_COMM_WORLD, 1, aggregator, 64, 16, 64 * 32,
                      /*markers=*/8, /*pollers=*/2, /*rounds=*/6, seed++),
              "");
    EXPECT_EQ(RunPair(MPI_COMM_WORLD, 2, aggregator, 17, 33, 17 * 33 * 2,
                      /*markers=*/4, /*pollers=*/3, /*rounds=*/4, seed++),
              "");
  }
}

TEST_F(PartitionedThreadsTest, IndependentRequestsOnDuplicatedComms) {
  constexpr int kPairs = 4;
  std::vector<MPI_Comm> comms(kPairs);
  for (MPI_Comm& comm : comms) MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  std::vector<std::string> failures(kPairs);
  std::vector<std::thread> pairs;
  for (int i = 0; i < kPairs; ++i) {
    pairs.emplace_back([&, i] {
      failures[i] =
          RunPair(comms[i], 7, kAggregators[i % 6], 32, 8, 32 * 64,
                  /*markers=*/2, /*pollers=*/1, /*rounds=*/5, 100 + i);
    });
  }
  for (std::thread& pair : pairs) pair.join();
  for (int i = 0; i < kPairs; ++i) EXPECT_EQ(failures[i], "") << "pair " << i;
  for (MPI_Comm& comm : comms) MPI_Comm_free(&comm);
}

TEST_F(PartitionedThreadsTest, ReadyBeforeTheReceiveStarts) {
  std::vector<int32_t> out(1024), in(1024, 0);
  for (int i = 0; i < 1024; ++i) out[i] = i * 3;
  MPI_Request send, receive;
  MPI_Psend_init(out.data(), 8, 128, MPI_INT32_T, 0, 9, MPI_COMM_WORLD,
                 MPI_INFO_NULL, &send);
  MPI_Precv_init(in.data(), 4, 256, MPI_INT32_T, 0, 9, MPI_COMM_WORLD,
                 MPI_INFO_NULL, &receive);
  MPI_Start(&send);
  std::vector<std::thread> markers;
  for (int t = 0; t < 4; ++t) {
    markers.emplace_back([&, t] {
      MPI_Pready(2 * t, send);
      MPI_Pready(2 * t + 1, send);
    });
  }
  for (std::thread& marker : markers) marker.join();  // none blocked
  int flag = 1;
  MPI_Test(&send, &flag, MPI_STATUS_IGNORE);
  EXPECT_EQ(flag, 0) << "the send completed with no receive started";
  MPI_Start(&receive);
  MPI_Wait(&receive, MPI_STATUS_IGNORE);
  MPI_Wait(&send, MPI_STATUS_IGNORE);
  EXPECT_EQ(in, out);
  MPI_Request_free(&send);
  MPI_Request_free(&receive);
}

}  // namespace
