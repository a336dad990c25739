#include "mpi/objects/session.h"

#include <vector>

#include "gtest/gtest.h"

namespace minimpi {
namespace {

TEST(ProcessSetsTest, WorldSelfAndOnePerNode) {
  // Ranks 0, 1 and 3 on node "a", rank 2 on node "b".
  const std::vector<ProcessSet> sets =
      BuildProcessSets(/*my_rank=*/2, {0, 0, 1, 0}, {"a", "b"});
  ASSERT_EQ(sets.size(), 4u);
  EXPECT_EQ(sets[0].name, "mpi://WORLD");
  EXPECT_EQ(sets[0].world_ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(sets[1].name, "mpi://SELF");
  EXPECT_EQ(sets[1].world_ranks, (std::vector<int>{2}));
  EXPECT_EQ(sets[2].name, "mpix://node/a");
  EXPECT_EQ(sets[2].world_ranks, (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(sets[3].name, "mpix://node/b");
  EXPECT_EQ(sets[3].world_ranks, (std::vector<int>{2}));
}

TEST(ProcessSetsTest, NamesMatchWithoutRegardToCase) {
  const std::vector<ProcessSet> sets = BuildProcessSets(0, {0}, {"Node1"});
  ASSERT_NE(FindProcessSet(sets, "MPI://world"), nullptr);
  EXPECT_EQ(FindProcessSet(sets, "MPI://world")->name, "mpi://WORLD");
  EXPECT_EQ(FindProcessSet(sets, "mpi://self")->name, "mpi://SELF");
  EXPECT_EQ(FindProcessSet(sets, "MPIX://NODE/node1")->name,
            "mpix://node/Node1");
  EXPECT_EQ(FindProcessSet(sets, "mpi://WORLDS"), nullptr);
  EXPECT_EQ(FindProcessSet(sets, ""), nullptr);
}

TEST(SessionTest, StaleHandleStopsResolving) {
  auto* session = new Session(MPI_THREAD_MULTIPLE, Errhandler::Fatal());
  const uintptr_t handle = Sessions().Insert(session);
  ASSERT_NE(handle, 0u);
  EXPECT_EQ(Sessions().Lookup(handle), session);
  Sessions().Remove(handle);
  EXPECT_EQ(Sessions().Lookup(handle), nullptr);
  EXPECT_EQ(Sessions().Lookup(0x1234), nullptr);
  delete session;
}

}  // namespace
}  // namespace minimpi
