// Groups, communicator creation, topologies, attributes, names, hints and
// info objects used from many threads at once through the library, in one
// process (the singleton). Every result is checked; CI runs this under
// ThreadSanitizer, which is the point: the attribute stores, keyval
// registry, name and hint locks, info objects, group and info handle
// tables, and MPI_Comm_idup's completion hook must be race-free.
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace {

constexpr int kThreads = 4;
constexpr int kRounds = 60;

std::atomic<int> g_deletes{0};

int CountingDelete(MPI_Comm, int, void*, void*) {
  g_deletes.fetch_add(1, std::memory_order_relaxed);
  return MPI_SUCCESS;
}

class ObjectsThreadsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    ASSERT_EQ(provided, MPI_THREAD_MULTIPLE);
  }
  static void TearDownTestSuite() { MPI_Finalize(); }

  // Runs `body(thread, failures)` on kThreads threads and reports what
  // failed.
  template <typename Body>
  void RunThreads(Body body) {
    std::vector<std::vector<std::string>> failures(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] { body(t, &failures[t]); });
    }
    for (auto& thread : threads) thread.join();
    for (const auto& list : failures) {
      for (const auto& failure : list) ADD_FAILURE() << failure;
    }
  }
};

// Every thread on one shared communicator (its own keyvals, shared
// predefined attributes, renaming it), and on duplicates it makes with
// dup and idup (copy callbacks) of a communicator of its own (collectives
// on one communicator from two threads at once are erroneous), which it
// then frees (delete callbacks).
TEST_F(ObjectsThreadsTest, AttributesAndNamesOnSharedCommunicators) {
  MPI_Comm shared;
  ASSERT_EQ(MPI_Comm_dup(MPI_COMM_SELF, &shared), MPI_SUCCESS);
  MPI_Comm own[kThreads];
  for (MPI_Comm& comm : own) {
    ASSERT_EQ(MPI_Comm_dup(MPI_COMM_SELF, &comm), MPI_SUCCESS);
  }
  g_deletes = 0;
  RunThreads([shared, &own](int thread, std::vector<std::string>* failures) {
    int keyval;
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, CountingDelete, &keyval, nullptr);
    for (int round = 0; round < kRounds; ++round) {
      const intptr_t value = thread * 1000 + round;
      MPI_Comm_set_attr(shared, keyval, reinterpret_cast<void*>(value));
      MPI_Comm_set_attr(own[thread], keyval, reinterpret_cast<void*>(value));
      void* got = nullptr;
      int flag = 0;
      MPI_Comm_get_attr(shared, keyval, &got, &flag);
      if (!flag || reinterpret_cast<intptr_t>(got) != value) {
        failures->push_back("own attribute lost on the shared communicator");
      }
      int* tag_ub = nullptr;
      MPI_Comm_get_attr(shared, MPI_TAG_UB, &tag_ub, &flag);
      int* last = nullptr;
      MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag);
      if (!flag || *tag_ub < 32767 || *last < MPI_ERR_LASTCODE) {
        failures->push_back("predefined attribute wrong");
      }
      const std::string name = "thread " + std::to_string(thread);
      MPI_Comm_set_name(shared, name.c_str());
      char read_back[MPI_MAX_OBJECT_NAME];
      int length = 0;
      MPI_Comm_get_name(shared, read_back, &length);
      if (std::strncmp(read_back, "thread ", 7) != 0) {
        failures->push_back("torn communicator name");
      }
      MPI_Comm copy, nonblocking_copy;
      MPI_Request request;
      MPI_Comm_dup(own[thread], &copy);
      MPI_Comm_idup(own[thread], &nonblocking_copy, &request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
      for (MPI_Comm comm : {copy, nonblocking_copy}) {
        MPI_Comm_get_attr(comm, keyval, &got, &flag);
        if (!flag) failures->push_back("attribute not copied by dup/idup");
        int size = 0;
        MPI_Comm_size(comm, &size);
        if (size != 1) failures->push_back("duplicate of SELF not of size 1");
      }
      MPI_Comm_free(&copy);
      MPI_Comm_free(&nonblocking_copy);
    }
    MPI_Comm_delete_attr(shared, keyval);
    MPI_Comm_free_keyval(&keyval);
  });
  // Per thread and round: the replaced values on the shared and on its own
  // communicator (but in the first round), and the two freed copies; then
  // the final delete_attr, and the last value on its own communicator,
  // deleted when that is freed below.
  EXPECT_EQ(g_deletes.load(), kThreads * (4 * kRounds - 2 + 1));
  for (MPI_Comm& comm : own) ASSERT_EQ(MPI_Comm_free(&comm), MPI_SUCCESS);
  EXPECT_EQ(g_deletes.load(), kThreads * (4 * kRounds));
  ASSERT_EQ(MPI_Comm_free(&shared), MPI_SUCCESS);
}

// Groups, info objects and hints: handle tables and objects shared by all.
TEST_F(ObjectsThreadsTest, GroupsInfoAndHints) {
  MPI_Comm shared;
  ASSERT_EQ(MPI_Comm_dup(MPI_COMM_SELF, &shared), MPI_SUCCESS);
  MPI_Info shared_info;
  ASSERT_EQ(MPI_Info_create(&shared_info), MPI_SUCCESS);
  RunThreads([&](int thread, std::vector<std::string>* failures) {
    for (int round = 0; round < kRounds; ++round) {
      MPI_Group group, copy;
      MPI_Comm_group(shared, &group);
      const int zero = 0;
      MPI_Group_incl(group, 1, &zero, &copy);
      int result = -1;
      MPI_Group_compare(group, copy, &result);
      if (result != MPI_IDENT) failures->push_back("group compare");
      MPI_Group_free(&copy);
      MPI_Group_free(&group);

      const std::string key = "t" + std::to_string(thread);
      MPI_Info_set(shared_info, key.c_str(), std::to_string(round).c_str());
      char value[MPI_MAX_INFO_VAL];
      int flag = 0;
      MPI_Info_get(shared_info, key.c_str(), MPI_MAX_INFO_VAL - 1, value,
                   &flag);
      if (!flag || std::to_string(round) != value) {
        failures->push_back("shared info lost a value");
      }
      MPI_Info own;
      MPI_Info_dup(shared_info, &own);
      MPI_Info_set(own, "mpi_assert_no_any_tag", round % 2 ? "true" : "false");
      MPI_Comm_set_info(shared, own);
      MPI_Info used;
      MPI_Comm_get_info(shared, &used);
      MPI_Info_get(used, "mpi_assert_no_any_tag", MPI_MAX_INFO_VAL - 1, value,
                   &flag);
      if (!flag || (std::strcmp(value, "true") != 0 &&
                    std::strcmp(value, "false") != 0)) {
        failures->push_back("hint torn");
      }
      MPI_Info_free(&used);
      MPI_Info_free(&own);
    }
  });
  ASSERT_EQ(MPI_Info_free(&shared_info), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_free(&shared), MPI_SUCCESS);
}

// Communicator creation from threads: create_group with each thread's own
// tags, Cartesian grids with neighbourhood collectives, blocking and not.
TEST_F(ObjectsThreadsTest, CreationAndNeighborhoodCollectives) {
  RunThreads([](int thread, std::vector<std::string>* failures) {
    MPI_Group self_group;
    MPI_Comm_group(MPI_COMM_SELF, &self_group);
    for (int round = 0; round < kRounds / 2; ++round) {
      MPI_Comm created;
      MPI_Comm_create_group(MPI_COMM_WORLD, self_group, thread * 1000 + round,
                            &created);
      int dims[2] = {1, 1}, periods[2] = {1, 0};
      MPI_Comm cart;
      MPI_Cart_create(created, 2, dims, periods, 0, &cart);
      // Periodic dimension of size 1: its own neighbour both ways; the
      // open one: MPI_PROC_NULL both ways (those blocks stay untouched).
      int send[4] = {10, 11, 12, 13}, receive[4] = {-1, -1, -1, -1};
      MPI_Request request;
      MPI_Ineighbor_alltoall(send, 1, MPI_INT, receive, 1, MPI_INT, cart,
                             &request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
      if (receive[0] != 11 || receive[1] != 10 || receive[2] != -1 ||
          receive[3] != -1) {
        failures->push_back(
            "neighbour alltoall on a 1x1 grid: " + std::to_string(receive[0]) +
            " " + std::to_string(receive[1]) + " " +
            std::to_string(receive[2]) + " " + std::to_string(receive[3]));
      }
      int gathered[4] = {-1, -1, -1, -1}, mine = thread;
      MPI_Neighbor_allgather(&mine, 1, MPI_INT, gathered, 1, MPI_INT, cart);
      if (gathered[0] != thread || gathered[1] != thread || gathered[2] != -1) {
        failures->push_back("neighbour allgather on a 1x1 grid");
      }
      MPI_Comm_free(&cart);
      MPI_Comm_free(&created);
    }
    MPI_Group_free(&self_group);
  });
}

}  // namespace
