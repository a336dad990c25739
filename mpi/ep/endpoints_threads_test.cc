// Endpoints in one process, under ThreadSanitizer: the singleton (no
// launcher) makes endpoints on MPI_COMM_WORLD and drives each from a thread
// of its own, all at once: point-to-point between every pair of endpoints
// (eager and rendezvous, wildcards), collectives, dup and split per handle,
// endpoints of endpoints, and freeing while others keep communicating. Every
// byte is checked. The point is the race detector: endpoints share no lock,
// queue or pool, so nothing here may race, and the VCIs endpoints take and
// give back must stay consistent.
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace {

constexpr int kEndpoints = 6;

uint8_t PatternByte(int from, int to, int tag, size_t index) {
  return static_cast<uint8_t>(from * 31 + to * 17 + tag * 7 + index * 13);
}

class Failures {
 public:
  void Add(std::string what) {
    std::lock_guard<std::mutex> lock(mutex_);
    failures_.push_back(std::move(what));
  }
  std::vector<std::string> Take() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::move(failures_);
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> failures_;
};

// Every rank of `comm` sends `bytes` to every rank (itself included) and
// receives them with MPI_ANY_SOURCE, checking source, tag, count and bytes.
// Each call needs a tag of its own: ranks run ahead into the next call.
void AllPairs(MPI_Comm comm, size_t bytes, int tag, Failures* failures) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<std::vector<uint8_t>> out(size, std::vector<uint8_t>(bytes));
  std::vector<std::vector<uint8_t>> in(size, std::vector<uint8_t>(bytes));
  std::vector<MPI_Request> requests;
  for (int peer = 0; peer < size; ++peer) {
    for (size_t i = 0; i < bytes; ++i) {
      out[peer][i] = PatternByte(rank, peer, tag, i);
    }
    requests.emplace_back();
    MPI_Isend(out[peer].data(), static_cast<int>(bytes), MPI_BYTE, peer, tag,
              comm, &requests.back());
  }
  std::vector<bool> seen(size, false);
  for (int n = 0; n < size; ++n) {
    std::vector<uint8_t> buffer(bytes);
    MPI_Status status;
    MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_BYTE, MPI_ANY_SOURCE,
             tag, comm, &status);
    int count = -1;
    MPI_Get_count(&status, MPI_BYTE, &count);
    const int from = status.MPI_SOURCE;
    bool good = from >= 0 && from < size && !seen[from] &&
                status.MPI_TAG == tag && count == static_cast<int>(bytes);
    for (size_t i = 0; good && i < bytes; ++i) {
      good = buffer[i] == PatternByte(from, rank, tag, i);
    }
    if (!good) {
      failures->Add("rank " + std::to_string(rank) + ": message " +
                    std::to_string(n) + " of " + std::to_string(bytes) +
                    " bytes from " + std::to_string(from) + " arrived wrong");
      return;
    }
    seen[from] = true;
  }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(),
              MPI_STATUSES_IGNORE);
}

void Collectives(MPI_Comm comm, Failures* failures) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int sum = -1;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm);
  if (sum != size * (size - 1) / 2) {
    failures->Add("allreduce gave " + std::to_string(sum));
  }
  std::vector<int> out(size), in(size, -1);
  for (int i = 0; i < size; ++i) out[i] = rank * 100 + i;
  MPI_Alltoall(out.data(), 1, MPI_INT, in.data(), 1, MPI_INT, comm);
  for (int i = 0; i < size; ++i) {
    if (in[i] != i * 100 + rank) {
      failures->Add("alltoall: rank " + std::to_string(rank) + " got " +
                    std::to_string(in[i]) + " from " + std::to_string(i));
      return;
    }
  }
  int root_value = rank == size - 1 ? 4242 : 0;
  MPI_Bcast(&root_value, 1, MPI_INT, size - 1, comm);
  if (root_value != 4242) failures->Add("bcast");
  MPI_Barrier(comm);
}

class EndpointsThreadsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Few endpoint VCIs, so giving them back is exercised too.
    setenv("MINIMPI_EP_VCIS", "16", 1);
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    ASSERT_EQ(provided, MPI_THREAD_MULTIPLE);
  }
  static void TearDownTestSuite() { MPI_Finalize(); }

  // Makes kEndpoints endpoints and runs body(handle index, handle) on a
  // thread per handle; each thread frees its handle at the end.
  template <typename Body>
  void OnEndpoints(Body body) {
    std::vector<MPI_Comm> handles(kEndpoints, MPI_COMM_NULL);
    ASSERT_EQ(MPIX_Comm_create_endpoints(MPI_COMM_WORLD, kEndpoints,
                                         MPI_INFO_NULL, handles.data()),
              MPI_SUCCESS);
    std::vector<std::thread> threads;
    for (int i = 0; i < kEndpoints; ++i) {
      threads.emplace_back([&, i] {
        body(i, handles[i]);
        MPI_Comm_free(&handles[i]);
      });
    }
    for (std::thread& thread : threads) thread.join();
    for (const std::string& failure : failures_.Take())
      ADD_FAILURE() << failure;
  }

  Failures failures_;
};

TEST_F(EndpointsThreadsTest, RanksFollowHandleOrder) {
  OnEndpoints([this](int index, MPI_Comm comm) {
    int rank = -1, size = -1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (rank != index || size != kEndpoints) {
      failures_.Add("handle " + std::to_string(index) + " has rank " +
                    std::to_string(rank) + " of " + std::to_string(size));
    }
  });
}

TEST_F(EndpointsThreadsTest, EveryPairExchangesAtOnce) {
  OnEndpoints([this](int, MPI_Comm comm) {
    int tag = 0;
    for (size_t bytes : {size_t{8}, size_t{4000}, size_t{100000}}) {
      AllPairs(comm, bytes, ++tag, &failures_);
    }
  });
}

TEST_F(EndpointsThreadsTest, CollectivesOverEndpoints) {
  OnEndpoints([this](int, MPI_Comm comm) {
    for (int round = 0; round < 3; ++round) Collectives(comm, &failures_);
  });
}

TEST_F(EndpointsThreadsTest, DupSplitAndNestedEndpoints) {
  OnEndpoints([this](int index, MPI_Comm comm) {
    MPI_Comm dup, half;
    MPI_Comm_dup(comm, &dup);
    AllPairs(dup, 64, 5, &failures_);
    MPI_Comm_split(comm, index % 2, -index, &half);
    int half_rank = -1, half_size = -1;
    MPI_Comm_rank(half, &half_rank);
    MPI_Comm_size(half, &half_size);
    // Keys -index: the highest index of each color is rank 0.
    const int expected = (kEndpoints - 1 - index) / 2;
    if (half_rank != expected || half_size != kEndpoints / 2) {
      failures_.Add("split: handle " + std::to_string(index) + " is rank " +
                    std::to_string(half_rank) + " of " +
                    std::to_string(half_size));
    }
    Collectives(half, &failures_);
    // Endpoints of an endpoint: one more each, driven by the same thread.
    MPI_Comm child;
    MPIX_Comm_create_endpoints(comm, 1, MPI_INFO_NULL, &child);
    int child_rank = -1;
    MPI_Comm_rank(child, &child_rank);
    if (child_rank != index) failures_.Add("nested rank");
    AllPairs(child, 3000, 9, &failures_);
    Collectives(child, &failures_);
    MPI_Comm_free(&child);
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
  });
}

TEST_F(EndpointsThreadsTest, FreeingWhileOthersCommunicate) {
  OnEndpoints([this](int index, MPI_Comm comm) {
    MPI_Comm keep;
    MPI_Comm_dup(comm, &keep);
    if (index % 2 == 1) {  // odd handles are freed at once
      MPI_Comm_free(&keep);
      return;
    }
    // Even ones keep exchanging on the dup among themselves.
    int rank, size;
    MPI_Comm_rank(keep, &rank);
    MPI_Comm_size(keep, &size);
    for (int round = 0; round < 50; ++round) {
      const int right = (rank + 2) % size, left = (rank + size - 2) % size;
      int out = rank * 1000 + round, in = -1;
      MPI_Sendrecv(&out, 1, MPI_INT, right, round, &in, 1, MPI_INT, left, round,
                   keep, MPI_STATUS_IGNORE);
      if (in != left * 1000 + round) {
        failures_.Add("ring on the dup: " + std::to_string(in));
        break;
      }
    }
    MPI_Comm_free(&keep);
  });
}

TEST_F(EndpointsThreadsTest, RunningOutOfVcisIsAnErrorAndLeaksNothing) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  std::vector<MPI_Comm> many(64, MPI_COMM_NULL);
  int error = MPIX_Comm_create_endpoints(MPI_COMM_WORLD, 64, MPI_INFO_NULL,
                                         many.data());
  int error_class = MPI_SUCCESS;
  MPI_Error_class(error, &error_class);
  EXPECT_EQ(error_class, MPI_ERR_OTHER);
  EXPECT_EQ(many[0], MPI_COMM_NULL);
  error = MPIX_Comm_create_endpoints(MPI_COMM_WORLD, -1, MPI_INFO_NULL,
                                     many.data());
  MPI_Error_class(error, &error_class);
  EXPECT_EQ(error_class, MPI_ERR_ARG);
  // Every VCI came back: all 16 can be had again, and given back again.
  ASSERT_EQ(MPIX_Comm_create_endpoints(MPI_COMM_WORLD, 16, MPI_INFO_NULL,
                                       many.data()),
            MPI_SUCCESS);
  for (int i = 0; i < 16; ++i) MPI_Comm_free(&many[i]);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

}  // namespace
